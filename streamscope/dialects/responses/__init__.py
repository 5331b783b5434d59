"""The OpenAI Responses API: `response.output_item.added`, argument deltas, `.done`."""

from __future__ import annotations

from ..base import Dialect, Terms
from ..chat.oracle import openai_version
from .engine import STRATEGY_NAMES, ResponsesEngine, plain_fragment
from .fixture import FIXTURE
from .history import IDS, history
from .kinds import KINDS
from .oracle import responses_sdk_result
from .session import PLAY, carried, session, session_contract
from .shape import SHAPE
from .summary import plain_summary, summarize
from .wire import ENDPOINTS, claims_request, final_event, response_facts

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


RESPONSES = Dialect(
    name="openai-responses",
    title="OpenAI Responses",
    engine=ResponsesEngine,
    strategies=STRATEGY_NAMES,
    sdk="openai-sdk",
    plain=plain_fragment,
    plain_summary=plain_summary,
    summarize=summarize,
    history=history,
    ids=IDS,
    terms=Terms("output", "response", "status", ("r", "out"), item_ids=True),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=lambda frames, tools, response_format: responses_sdk_result(frames, tools),
    sdk_version=openai_version,
    fixture=FIXTURE,
    shape=SHAPE,
    named_events=True,
    kinds=KINDS,
    final_event=final_event,
    match_keys=("model", "instructions", "input", "previous_response_id", "tools"),
    turns=("input", "item"),
    endpoints=ENDPOINTS,
    noun="Responses",
    session=session,
    session_contract=session_contract,
    session_results=carried,
    session_play=PLAY,
    response_facts=response_facts,
)
