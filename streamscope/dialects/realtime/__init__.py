"""The OpenAI Realtime API: a WebSocket session (`GET .../v1/realtime?model=...`) of JSON
events, each response's calls keyed by `item_id`, their identity in `call_id`.

wire.py holds what the faces ask the record for (the handshake it claims, its facts, its
error documents); kinds.py its own anomaly kinds; session.py how a session's messages
split into turns (one response each) and the contract across them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson

from ..base import Dialect, SessionPlay, Terms, later
from ..versions import installed
from . import wire
from .kinds import KINDS
from .robust import ADDED, ARGS_DONE, CREATED, DELTA, ITEM_DONE, QUIET, RESPONSE_DONE, TEXTS

# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "openai-sdk", "every-done", "item-id-only", "response-done-only")

# The Realtime API's server events (the Responses API's streams share some of the names:
# `response.created`, the output item and argument events, `error`).
_TYPES = frozenset(
    (*QUIET, *TEXTS, CREATED, ADDED, DELTA, ARGS_DONE, ITEM_DONE, RESPONSE_DONE, "error")
)


def _claims_event(payload: object, event: str | None) -> bool:
    """A server event: a Realtime type with the `event_id` every server event carries and
    no `sequence_number` (a Responses event has one and no event_id)."""
    if type(payload) is not dict or "sequence_number" in payload:
        return False
    kind = payload.get("type")
    return isinstance(kind, str) and kind in _TYPES and isinstance(payload.get("event_id"), str)


def _play_error(message: str, asked: object, number: int) -> bytes:
    """serve's error event for a client event nothing recorded answers: the API's own,
    naming the client event it answers (`error.event_id`)."""
    event = orjson.loads(wire.error_event("invalid_request_error", message, "unmatched_message"))
    event["event_id"] = f"event_streamscope_{number}"
    asked_id = asked.get("event_id") if isinstance(asked, dict) else None
    event["error"]["event_id"] = asked_id if isinstance(asked_id, str) else None
    return orjson.dumps(event)


# serve: a response.create opens a turn, as does the server's own response.created (its
# voice detection); response.done ends it (an `error` does not: the session goes on).
PLAY = SessionPlay(
    frozenset({"response.create"}), frozenset({CREATED}), frozenset({RESPONSE_DONE}), _play_error
)


def _real_sdk(frames: list[Any], tools: Any, response_format: object) -> Any:
    from .oracle import realtime_sdk_result

    return realtime_sdk_result(frames)


REALTIME = Dialect(
    name="openai-realtime",
    title="OpenAI Realtime",
    engine=later(f"{__name__}.engine", "RealtimeEngine"),
    strategies=STRATEGY_NAMES,
    sdk="openai-sdk",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("output", "response", "status", ("r", "out"), item_ids=True),
    claims_request=wire.claims_request,
    claims_body=lambda body: False,  # its requests are WebSocket handshakes: no body
    claims_event=_claims_event,
    real_sdk=_real_sdk,
    sdk_version=partial(installed, "openai"),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    shape=later(f"{__name__}.shape", "SHAPE"),
    kinds=KINDS,
    facts=wire.facts,
    url_facts=wire.url_facts,
    match_keys=("model",),
    turns=("events", "client event"),
    # (the HTTP requests serve answers: none; it plays a session to the WebSocket
    # upgrade of its path instead, as it does Responses sessions)
    endpoints=(),
    noun="Realtime",
    framings=("websocket",),
    session=later(f"{__name__}.session", "session"),
    session_contract=later(f"{__name__}.session", "session_contract"),
    session_results=later(f"{__name__}.session", "carried"),
    session_tools=later(f"{__name__}.session", "declared"),
    session_play=PLAY,
    response_facts=wire.response_facts,
)
