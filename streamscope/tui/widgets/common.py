"""What the widgets share: severities' marks and styles, durations, strategy calls."""

from __future__ import annotations

from ...core.calls import Call, StrategyError, Unmodeled
from ..model import FrameState

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


MARK = {"error": "✗", "warning": "!", "info": "i"}


def ms(ns: int | None) -> str:
    if ns is None:
        return "—"
    return f"{ns / 1e6:,.0f}ms" if ns < 10e9 else f"{ns / 1e9:,.1f}s"


def strategy_calls(state: FrameState) -> dict[str, list[Call] | StrategyError | Unmodeled]:
    """Every strategy's calls at `state`: computed once however many widgets show them."""
    return state.strategy_calls()


def clients(state: FrameState) -> tuple[str, ...]:
    """The client strategies shown beside robust, in the stream's dialect."""
    return state.engine.strategy_names[1:]
