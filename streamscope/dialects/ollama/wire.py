"""What Ollama's native chat is on the wire, for its Dialect record: which requests it
claims, its final event, its error document and the facts of a request.

`/api/chat` answers with NDJSON (one `ChatResponse` a line), ending with the line that
says `"done": true`; it streams unless the request says `"stream": false`. An error is
the document `{"error": "message"}`, as a whole response or as a line of a stream.
"""

from __future__ import annotations

import re

import orjson

from ...core import jsonio
from ..base import RequestFacts, ResponseFacts, Watch, body_facts

PATH = "/api/chat"
ENDPOINTS = (f"POST ...{PATH}",)
CONTENT_TYPE = "application/x-ndjson"
# Keys of a chat request only Ollama takes (Chat Completions has none of them).
_OWN_KEYS = ("options", "keep_alive", "format", "think")
# Keys that say a body is another dialect's.
_FOREIGN = ("input", "contents", "system", "response_format", "stream_options", "max_tokens")


def claims_request(path: str, body: object) -> bool:
    """A request to `/api/chat` (behind any prefix: a gateway's `/ollama/api/chat`)."""
    return path.endswith(PATH)


def claims_body(body: object) -> bool:
    """A body sent to a path no dialect claims: `messages` and one of Ollama's own keys,
    or a call sent back with its arguments as an object, or a tool result naming its
    tool (Chat Completions sends arguments as a string and answers by id)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    if any(key in body for key in _FOREIGN):
        return False
    if any(key in body for key in _OWN_KEYS):
        return True
    for message in body["messages"]:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and "tool_name" in message:
            return True
        for call in (
            message.get("tool_calls") or () if isinstance(message.get("tool_calls"), list) else ()
        ):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), dict):
                return True
    return False


_OTHERS = ("choices", "type", "candidates", "object")


def claims_event(payload: object, event: str | None) -> bool:
    """A `ChatResponse` line: a `message` object with a `role`, or a boolean `done` beside
    `model`, `created_at` or `message` (no other dialect's keys)."""
    if type(payload) is not dict or any(key in payload for key in _OTHERS):
        return False
    message = payload.get("message")
    if type(message) is dict and "role" in message:
        return True
    return type(payload.get("done")) is bool and any(
        key in payload for key in ("model", "created_at", "message")
    )


def facts(path: str, body: object) -> RequestFacts:
    """The body's facts, but for the stream flag: Ollama streams unless the request says
    `"stream": false`."""
    told = body_facts(path, body)
    stream = not isinstance(body, dict) or body.get("stream", True) is not False
    return RequestFacts(told.model, stream, told.tools, told.response_format)


def error_document(status: int, kind: str, message: str) -> bytes:
    """Ollama's errors: `{"error": "..."}` (the ollama clients raise it as their
    ResponseError with the message), whole or as a stream's last line."""
    return orjson.dumps({"error": message})


def final_event(path: str, framing: str | None = None) -> DoneLine:
    return DoneLine()


# A line that may be the last one: `"done":true`, as Ollama writes it (or spaced).
_DONE = re.compile(rb'"done"\s*:\s*true')
_EDGE = 16  # bytes of the line before a read kept for a marker cut across the two


def _is_last(line: bytes) -> bool:
    """Whether a whole line is the stream's last: a JSON object whose own `done` is true
    (not a `done` inside a tool call's arguments)."""
    try:
        value = jsonio.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("done") is True


class DoneLine(Watch):
    """Whether an Ollama stream's last line, the object with `"done": true`, was relayed
    whole (its `\\n` too: the clients read line by line).

    Every line of a stream says `"done":false` until the last, so a read is looked at
    only when it may hold `"done":true` (one regex search, a few bytes of the read before
    for a marker cut in two); then its whole lines are parsed. `_pieces` hold the line
    under way (joined only when a marker was seen).
    """

    __slots__ = ("_pieces", "_marked")

    def __init__(self) -> None:
        super().__init__()
        self._pieces: list[bytes] = []  # the line under way, read by read
        self._marked = False  # that line holds `"done":true` already

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        pieces = self._pieces
        edge = pieces[-1][-_EDGE:] + data[:_EDGE] if pieces else b""
        if not self._marked and _DONE.search(data) is None and _DONE.search(edge) is None:
            end = data.rfind(b"\n")
            if end < 0:
                pieces.append(data)
            else:
                self._pieces = [data[end + 1 :]] if end + 1 < len(data) else []
            return
        *whole, rest = (b"".join(pieces) + data).split(b"\n")
        self._pieces = [rest] if rest else []
        self._marked = _DONE.search(rest) is not None
        self.relayed = any(_DONE.search(line) and _is_last(line) for line in whole)


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """A line's `model`, and the final line's `prompt_eval_count` and `eval_count`."""
    facts.read(payload, "", "model", "", ("prompt_eval_count",), ("eval_count",))
