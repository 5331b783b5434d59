"""OpenAI Chat Completions: `choices[].delta.tool_calls[]` keyed by `index`."""

from __future__ import annotations

from typing import Any

from ..base import Dialect, Terms
from .engine import STRATEGY_NAMES, StreamEngine, plain_fragment
from .fixture import FIXTURE
from .history import IDS, history
from .oracle import openai_version, run_real_sdk
from .summary import plain_summary, summarize
from .wire import ENDPOINTS, claims_request, final_event, response_facts


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
    engine=StreamEngine,
    strategies=STRATEGY_NAMES,
    sdk="openai-sdk",
    plain=plain_fragment,
    plain_summary=plain_summary,
    summarize=summarize,
    history=history,
    ids=IDS,
    terms=Terms("index", "choice", "finish_reason", ("c", "idx")),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=run_real_sdk,
    sdk_version=openai_version,
    fixture=FIXTURE,
    minimize=_minimize,
    final_event=final_event,
    endpoints=ENDPOINTS,
    noun="chat completion",
    response_facts=response_facts,
)
