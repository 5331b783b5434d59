"""What the widgets share: durations, the clients shown."""

from __future__ import annotations

from ..model import FrameState


def ms(ns: int | None) -> str:
    if ns is None:
        return "—"
    return f"{ns / 1e6:,.0f}ms" if ns < 10e9 else f"{ns / 1e9:,.1f}s"


def clients(state: FrameState) -> tuple[str, ...]:
    """The client strategies shown beside robust, in the stream's dialect."""
    return state.engine.strategy_names[1:]
