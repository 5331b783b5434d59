"""Ollama's native chat on the wire (`POST /api/chat`, NDJSON), for its dialect's record.

The `ollama-chat` dialect (its package is built apart) takes these as its record's
`claims_request`, `final_event` and `error_document`; with it this module moves into
that package. Until then no registered dialect uses them.
"""

from __future__ import annotations

import re

import orjson

from .base import Watch

PATH = "/api/chat"
ENDPOINTS = (f"POST ...{PATH}",)
# A line that may be the last one: `"done":true`, as Ollama writes it (or spaced).
_DONE = re.compile(rb'"done"\s*:\s*true')
_EDGE = 16  # bytes of the line before a read kept for a marker cut across the two


def claims_request(path: str, body: object) -> bool:
    return path.endswith(PATH)


def error_document(status: int, kind: str, message: str) -> bytes:
    """Ollama's errors: `{"error": "..."}` (the ollama clients raise it as their
    ResponseError with the message)."""
    return orjson.dumps({"error": message})


def final_event(path: str) -> DoneLine:
    return DoneLine()


def _is_last(line: bytes) -> bool:
    """Whether a whole line is the stream's last: a JSON object whose own `done` is true
    (not a `done` inside a tool call's arguments)."""
    try:
        value = orjson.loads(line)
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
