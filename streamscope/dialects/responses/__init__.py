"""The OpenAI Responses API: `response.output_item.added`, argument deltas, `.done`."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..base import Dialect, Terms, later
from ..versions import installed
from .kinds import KINDS
from .wire import ENDPOINTS, claims_request, final_event, response_facts

# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "openai-sdk", "deltas-only", "current-item", "strict-done")

# Fields only a Responses request has beside `input` (an embeddings request has `input` too).
_OWN = ("instructions", "previous_response_id", "stream", "tools", "reasoning", "text", "store")
# Fields the Responses API has none of, that a look-alike with `input` sends: Google's
# Interactions API (`generation_config`, `system_instruction`, snake_case as it writes them)
_FOREIGN = ("generation_config", "system_instruction", "response_modalities")


def _claims_body(body: object) -> bool:
    """A body with `input`, no `messages` (what Chat Completions and Anthropic send), a
    field of the Responses API's own and none it does not have."""
    return (
        isinstance(body, dict)
        and "input" in body
        and "messages" not in body
        and any(k in body for k in _OWN)
        and not any(k in body for k in _FOREIGN)
    )


def _claims_event(payload: object, event: str | None) -> bool:
    if isinstance(event, str) and event.startswith("response."):
        return True
    if not isinstance(payload, dict):
        return False
    if "event_id" in payload and "sequence_number" not in payload:
        return False  # a Realtime API event (openai-realtime): every one has an event_id
    kind = payload.get("type")
    if kind == "error":  # Anthropic's error event carries no sequence_number
        return "sequence_number" in payload
    return isinstance(kind, str) and kind.startswith("response.")


def _real_sdk(frames: list[Any], tools: Any, response_format: object) -> Any:
    from .oracle import responses_sdk_result

    return responses_sdk_result(frames, tools)


RESPONSES = Dialect(
    name="openai-responses",
    title="OpenAI Responses",
    engine=later(f"{__name__}.engine", "ResponsesEngine"),
    strategies=STRATEGY_NAMES,
    sdk="openai-sdk",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("output", "response", "status", ("r", "out"), item_ids=True),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=_real_sdk,
    sdk_version=partial(installed, "openai"),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    shape=later(f"{__name__}.shape", "SHAPE"),
    named_events=True,
    kinds=KINDS,
    final_event=final_event,
    match_keys=("model", "instructions", "input", "previous_response_id", "tools"),
    turns=("input", "item"),
    endpoints=ENDPOINTS,
    noun="Responses",
    session=later(f"{__name__}.session", "session"),
    session_contract=later(f"{__name__}.session", "session_contract"),
    session_results=later(f"{__name__}.session", "carried"),
    session_play=later(f"{__name__}.session", "PLAY"),
    response_facts=response_facts,
)
