"""What the OpenAI Realtime API is on the wire, for its Dialect record: which requests it
claims, the facts of a request, its error documents.

A session is a WebSocket: `GET .../v1/realtime?model=gpt-realtime` with `Upgrade:
websocket` (the beta API adds `OpenAI-Beta: realtime=v1`; Azure names the model
`deployment=`), answered `101`; then JSON text messages both ways, each an event with a
`type`. The handshake's query names the model; a client may name it again, and declares
its tools, in `session.update` (`session.model`, `session.tools`) or per response in
`response.create` (`response.tools`). A handshake the server refuses is an HTTP answer
with OpenAI's error document; an error inside the session is an `error` event.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from ..base import RequestFacts, RequestHeaders, ResponseFacts

PATH = "/realtime"
ENDPOINTS = ("GET .../realtime (a WebSocket session)",)
# The query keys that name the model: the API's, then Azure OpenAI's.
_MODEL_KEYS = ("model", "deployment")


def claims_request(path: str, body: object) -> bool:
    """The handshake of a session: `.../realtime` (`/v1/realtime`, Azure's
    `/openai/realtime`, behind any prefix), not its `.../realtime/calls` (WebRTC) or
    `.../realtime/client_secrets` (plain HTTP)."""
    return path.rstrip("/").endswith(PATH)


def _query(url: str) -> str:
    if not isinstance(url, str):
        return ""
    try:
        return urlsplit(url).query
    except ValueError:  # a recorded URL that does not parse (a bad IPv6 host)
        return url.split("?", 1)[1] if "?" in url else ""


def _model_of_query(url: str) -> str | None:
    try:
        found = parse_qs(_query(url))
    except ValueError:
        return None
    for key in _MODEL_KEYS:
        values = found.get(key)
        if values and values[0]:
            return values[0]
    return None


def _part(body: object, key: str) -> dict[str, Any]:
    value = body.get(key) if isinstance(body, dict) else None
    return value if isinstance(value, dict) else {}


def client_facts(event: object) -> tuple[str | None, list[Any] | None]:
    """(model, tools) a client event names: `session.update`'s `session.model` and
    `session.tools`, `response.create`'s `response.tools` (any JSON type may stand there:
    only a string model and a list of tools are kept)."""
    kind = event.get("type") if isinstance(event, dict) else None
    held = _part(event, "session" if kind == "session.update" else "response")
    if kind not in ("session.update", "response.create"):
        return None, None
    model, tools = held.get("model"), held.get("tools")
    return (
        model if isinstance(model, str) and kind == "session.update" else None,
        tools if isinstance(tools, list) else None,
    )


def url_facts(url: str, body: object, headers: RequestHeaders = ()) -> RequestFacts:
    """The facts of a handshake (its URL, query included: `?model=`), or of a client
    event a session's turn opened with (`body`: its model and tools, client_facts)."""
    model, tools = client_facts(body)
    return RequestFacts(_model_of_query(url) or model, None, tools, None)


def facts(path: str, body: object) -> RequestFacts:
    """The facts of a request read without its query: a client event's alone."""
    model, tools = client_facts(body)
    return RequestFacts(model, None, tools, None)


def error_event(kind: str, message: str, code: str | None = None) -> bytes:
    """The `error` event a session's server sends (openai's RealtimeErrorEvent), for a
    server playing a session back: the session stays open after it."""
    error = {"type": kind, "code": code, "message": message, "param": None, "event_id": None}
    return orjson.dumps({"type": "error", "event_id": "event_streamscope", "error": error})


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """The `response` of `response.created` and `response.done`: its id and usage."""
    response = payload.get("response") if isinstance(payload, dict) else None
    facts.read(response, "id", "", "usage", ("input_tokens",), ("output_tokens",))
