"""Gemini's wire: its methods (`...:streamGenerateContent`, `...:generateContent`), the
facts its paths hold (the model, whether a stream is asked for), its end (no final event:
the event naming `finishReason`) and its error document (google.rpc's)."""

from __future__ import annotations

import re
from dataclasses import field

import orjson

from ...core.record import record
from ...framing.json_array import ArrayClose
from ..base import RequestFacts, ResponseFacts, Watch, body_facts

# Its methods, as the last part of a path: `.../models/{model}:streamGenerateContent`
# (AI Studio) or `.../publishers/google/models/{model}:generateContent` (Vertex AI).
STREAM, CONTENT = ":streamGenerateContent", ":generateContent"
ENDPOINTS = (f"POST ...{STREAM}", f"POST ...{CONTENT}")
# The headers every Google API client sends (the SDKs' telemetry, and the API key).
CLIENT_HEADERS = frozenset({"x-goog-api-client", "x-goog-api-key"})
# google.rpc.Code's names for the HTTP statuses streamscope answers with.
STATUS = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    502: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def method(path: str) -> str | None:
    """STREAM or CONTENT when a request path (its query left off) calls Gemini's content
    generation, else None."""
    path = path.rstrip("/")
    if path.endswith(STREAM):
        return STREAM
    return CONTENT if path.endswith(CONTENT) else None


def claims_request(path: str, body: object) -> bool:
    return method(path) is not None


def model(path: str) -> str | None:
    """The model a path names: its last segment before the method, `gemini-2.5-flash` in
    `/v1beta/models/gemini-2.5-flash:streamGenerateContent`; else None."""
    if "/models/" not in path:
        return None
    name = path.rsplit("/models/", 1)[1].split(":", 1)[0]
    return name if name and "/" not in name else None


def facts(path: str, body: object) -> RequestFacts:
    """The model is the path's (a body's own `model` first), the stream is asked for by
    the method; the tools are the body's."""
    told = body_facts(path, body)
    return RequestFacts(
        told.model or model(path),
        method(path) == STREAM if method(path) else told.stream,
        told.tools,
        told.response_format,
    )


def unserved(stream: bool) -> str:
    asked, held = (STREAM, CONTENT)[:: 1 if stream else -1]
    return f"the request calls {asked} and the files hold only {held} responses"


def error_document(status: int, kind: str, message: str) -> bytes:
    """Google's documents name the status (404: NOT_FOUND), not the error type."""
    code = STATUS.get(status, "UNKNOWN")
    return orjson.dumps({"error": {"code": status, "message": message, "status": code}})


_FINISH = b'"finishReason"'
# The end of an SSE event: an empty line, after LF or CRLF lines (Google sends CRLF).
_EVENT_END = re.compile(rb"\r?\n\r?\n")
_FINISH_EDGE = len(_FINISH) - 1


def final_event(path: str, framing: str | None = None) -> Watch:
    """A stream's (`:streamGenerateContent`) ends at the event naming `finishReason` (SSE,
    asked with `alt=sse`) or at its JSON array's closing `]` (`framing` "json-array"); any
    other response's at its body's end."""
    if method(path) != STREAM:
        return Watch()
    return ArrayEnd() if framing == "json-array" else FinishReason()


@record(slots=True)
class FinishReason(Watch):
    """Whether a Gemini stream (`alt=sse`) was relayed to its end: once an event whose data names
    `"finishReason"` is whole, its empty line included. Gemini sends no final event: the
    candidate's last chunk carries its finish reason, and the body ends after it.

    Every event is looked at (the name may stand in any of them, and only the stream's
    last holds it), in the bytes of one read and a few kept from the read before, so a
    name or an empty line cut across two reads is found. `_named`: the event under way
    (not yet ended) names it. A body streamed as a JSON array (no `alt=sse`) is ArrayEnd's.
    """

    _named: bool = False

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        buf = self._tail + data  # _tail: at most the last few bytes of the event under way
        start = 0
        for end in _EVENT_END.finditer(buf):
            if self._named or _FINISH in buf[start : end.start()]:
                self.relayed = True
                return
            start = end.end()
        rest = buf[start:]
        self._named = self._named or _FINISH in rest
        self._tail = rest[-_FINISH_EDGE:] if len(rest) > _FINISH_EDGE else rest


@record(slots=True)
class ArrayEnd(Watch):
    """Whether a Gemini stream asked without `alt=sse` (one JSON array) was relayed to its
    end: once the array's closing `]` was (its client reads no further)."""

    _close: ArrayClose = field(default_factory=ArrayClose)

    def seen(self, data: bytes) -> None:
        if not self.relayed and self._close.closed(data):
            self.relayed = True


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """A chunk's `responseId`, `modelVersion` and `usageMetadata` (output tokens with the
    thoughts')."""
    output = ("candidatesTokenCount", "thoughtsTokenCount")
    facts.read(
        payload, "responseId", "modelVersion", "usageMetadata", ("promptTokenCount",), output
    )
