"""OpenAI Chat Completions: `choices[].delta.tool_calls[]` keyed by `index`."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..base import Dialect, Terms, later
from ..versions import installed
from .wire import ENDPOINTS, claims_request, final_event, response_facts

# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "guarded", "naive", "openai-sdk", "openai-docs", "by-id")


def _claims_body(body: object) -> bool:
    """Shapes only Chat Completions bodies have: a tool as `{"function": ...}`, a message
    of role tool or developer, an assistant message's `tool_calls`."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "function" in t for t in tools):
        return True
    return any(
        isinstance(m, dict) and (m.get("role") in ("tool", "developer") or "tool_calls" in m)
        for m in body["messages"]
    )


def _minimize(frames: list[str], tools: list[Any] | None = None, **options: Any) -> list[str]:
    """Its own `--minimal` search (minimize.py), loaded only when it runs."""
    from .minimize import minimize

    return minimize(frames, tools, **options)


def _claims_event(payload: object, event: str | None) -> bool:
    return isinstance(payload, dict) and (
        "choices" in payload or payload.get("object") == "chat.completion.chunk"
    )


CHAT = Dialect(
    name="chat-completions",
    title="Chat Completions",
    engine=later(f"{__name__}.engine", "StreamEngine"),
    strategies=STRATEGY_NAMES,
    sdk="openai-sdk",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("index", "choice", "finish_reason", ("c", "idx")),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=later(f"{__name__}.oracle", "run_real_sdk"),
    sdk_version=partial(installed, "openai"),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    minimize=_minimize,
    final_event=final_event,
    endpoints=ENDPOINTS,
    noun="chat completion",
    response_facts=response_facts,
)
