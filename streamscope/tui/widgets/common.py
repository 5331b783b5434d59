"""What the widgets share: severities, their marks and styles, durations."""

from __future__ import annotations

from ...core.anomalies import KINDS, SEVERITY_ORDER
from ...core.calls import Call, StrategyError
from ...core.contract import KINDS as CONTRACT_KINDS
from ...core.sdk_model import Unmodeled
from ..model import FrameState

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


MARK = {"error": "✗", "warning": "!", "info": "i"}


def severity(kind: str) -> str | None:
    """An anomaly's or a contract finding's severity (None for a kind neither knows)."""
    known = KINDS.get(kind) or CONTRACT_KINDS.get(kind)
    return known[0] if known else None


def worst(kinds: list[str]) -> str | None:
    """The most severe severity among anomaly and contract kinds (None when there are none)."""
    levels = [s for s in map(severity, kinds) if s is not None]
    return min(levels, key=SEVERITY_ORDER.__getitem__) if levels else None


def ms(ns: int | None) -> str:
    if ns is None:
        return "—"
    return f"{ns / 1e6:,.0f}ms" if ns < 10e9 else f"{ns / 1e9:,.1f}s"


_calls: list = [None, None]  # the last state asked about, and its strategies' calls


def strategy_calls(state: FrameState) -> dict[str, list[Call] | StrategyError | Unmodeled]:
    """Every strategy's calls at `state`: computed once however many widgets show them."""
    if _calls[0] is not state:
        _calls[:] = [state, state.engine.strategy_calls()]
    return _calls[1]
