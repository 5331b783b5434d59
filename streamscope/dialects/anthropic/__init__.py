"""Anthropic Messages: `content_block_start` / `input_json_delta` / `content_block_stop`."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..base import Dialect, Terms, later
from ..versions import installed
from .kinds import KINDS
from .robust import EVENTS
from .wire import (
    CLIENT_HEADERS,
    ENDPOINTS,
    EVENTSTREAM,
    answer_facts,
    claims_request,
    error_document,
    facts,
    final_event,
    framing_of,
    response_facts,
    sdk_exchange,
    url_facts,
)

# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "anthropic-sdk", "start-concat", "last-block", "truthy")

# Events that only this dialect sends (`ping` and `error` are too common a name to tell).
_TELLING = tuple(e for e in EVENTS if e not in ("ping", "error"))


def _claims_body(body: object) -> bool:
    """Shapes only Anthropic Messages bodies have: a top-level `system` or
    `anthropic_version`, a tool with an `input_schema`, a tool_use or tool_result block."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    if "system" in body or "anthropic_version" in body:
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    return any(
        isinstance(m, dict)
        and isinstance(m.get("content"), list)
        and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
            for b in m["content"]
        )
        for m in body["messages"]
    )


def _claims_event(payload: object, event: str | None) -> bool:
    if event in _TELLING:
        return True
    return isinstance(payload, dict) and payload.get("type") in _TELLING


def _real_sdk(frames: list[Any], tools: object, response_format: object) -> Any:
    from .oracle import anthropic_sdk_result

    # the exchange as the SDK's client saw it (wire.url_facts, wire.answer_facts)
    return anthropic_sdk_result(frames, sdk_exchange(response_format))


ANTHROPIC = Dialect(
    name="anthropic-messages",
    title="Anthropic Messages",
    engine=later(f"{__name__}.engine", "AnthropicEngine"),
    strategies=STRATEGY_NAMES,
    sdk="anthropic-sdk",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("block", "message", "stop_reason", ("m", "blk")),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=_real_sdk,
    sdk_package="anthropic",
    sdk_version=partial(installed, "anthropic"),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    shape=later(f"{__name__}.shape", "SHAPE"),
    named_events=True,
    chunk_names=True,
    kinds=KINDS,
    client_headers=CLIENT_HEADERS,
    final_event=final_event,
    error_document=error_document,
    facts=facts,
    url_facts=url_facts,
    answer_facts=answer_facts,
    match_keys=("model", "system", "messages", "tools"),
    endpoints=ENDPOINTS,
    framings=("sse", EVENTSTREAM),
    framing_of=framing_of,
    fixtures={
        EVENTSTREAM: later(f"{__name__}.bedrock_fixture", "FIXTURE")
    },  # Claude on Bedrock, read by AnthropicBedrock
    response_facts=response_facts,
)
