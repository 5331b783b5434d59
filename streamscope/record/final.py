"""A stream's final event: a client that leaves once it was relayed ended a `complete` stream.

Chat Completions streams end with `data: [DONE]`, Anthropic Messages streams with
`event: message_stop`, OpenAI Responses streams with `event: response.completed` (or
`response.incomplete`, `response.failed`) and no `[DONE]`, and Gemini streams
(`:streamGenerateContent?alt=sse`) have no final event at all: the body ends after the
event whose candidate carries `finishReason`. The check runs after every relayed read
(the proxy's hot path, and the in-process recorder's), so each marker is looked for in
few bytes, and an exchange looks only for its own API's: one whose request carries
`anthropic-version` (every client of the Anthropic API sends it) for `message_stop`, one
to a path ending in `/responses` (or `/responses/<id>`, a stored response streamed again)
for the Responses ends, one to `...:streamGenerateContent` for the event that names a
`finishReason`, every other one for `[DONE]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_DONE = re.compile(rb"^data: ?\[DONE\]\r?\n", re.MULTILINE)
# The field line at the start of the read's last event (re.match at its `event:`).
_MESSAGE_STOP = re.compile(rb"^event: ?message_stop\r?\n", re.MULTILINE)
# A Responses stream's final event lines, as they stand between a `\n` and the next.
_RESPONSE_ENDS = frozenset(
    b"event:" + space + b"response." + name + cr
    for space in (b"", b" ")
    for name in (b"completed", b"incomplete", b"failed")
    for cr in (b"", b"\r")
)
# Bytes kept from the read before: more than the longest final event line, `\n` included.
_EDGE = 40


def _may_end(data: bytes) -> bool:
    """`b"[DONE]" in data`, at memchr speed on the usual read: the substring search costs
    ~1 ns a byte on JSON events (their `]`s defeat its skips), a second of CPU per GB
    relayed; the `D`s of a read are few (JSON keys are lower case), so each is looked at.
    Past 64 of them the substring search takes the rest of the read."""
    find = data.find
    i = find(b"D")
    looked = 0
    while i >= 0:
        if data[i - 1 : i + 5] == b"[DONE]":
            return True
        looked += 1
        if looked > 64:
            return find(b"[DONE]", i) >= 0
        i = find(b"D", i + 1)
    return False


def _is_message_stop(data: bytes, i: int) -> bool:
    """Whether the `event:` at `i` starts the line `event: message_stop`: a slice compared
    first, so the regex (which checks where the line starts and ends) runs once a stream."""
    return b"message_stop" in data[i + 6 : i + 20] and _MESSAGE_STOP.match(data, i) is not None


@dataclass(slots=True)
class FinalEvent:
    """Whether a body's final event (SSE `data: [DONE]`), or its whole body, was relayed."""

    relayed: bool = False
    _tail: bytes = b""

    def seen(self, data: bytes) -> None:
        """Called after each relayed read; cheap unless the read may hold `[DONE]`."""
        if self.relayed:
            return
        if (_may_end(data) and _DONE.search(data)) or (
            self._tail and _DONE.search(self._tail + data[:16])  # split across two reads
        ):
            self.relayed = True
        self._tail = data[-16:]


class MessageStop(FinalEvent):
    """The same for an Anthropic Messages stream, whose final event is `event: message_stop`.

    The final event is the last of its read and every Anthropic event has an `event:`
    line, so only the read's last one is looked at, found by a search back from the end:
    a few hundred bytes, however long the read. `_tail` ends with the bytes before this
    read (the previous read itself, not a copy, unless it was shorter than the line), for
    an `event:` line cut across reads.
    """

    __slots__ = ()

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        last, i = data, data.rfind(b"event:")
        if i < 0 and self._tail:  # no line of its own: the final one may have begun before
            last = self._tail[-24:] + data[:24]
            i = last.rfind(b"event:")
        self.relayed = i >= 0 and _is_message_stop(last, i)
        self._tail = data if len(data) >= 24 else (self._tail + data)[-24:]


def _blank_line(data: bytes, start: int = 0) -> bool:
    """Whether `data` holds, from `start`, a line end followed by an empty line: the end
    of an event. `\n\r\n` is the end of `\r\n\r\n` (CRLF lines)."""
    return data.find(b"\n\n", start) >= 0 or data.find(b"\n\r\n", start) >= 0


@dataclass(slots=True)
class ResponseEnd(FinalEvent):
    """The same for an OpenAI Responses stream: relayed once its final event is whole, its
    `event: response.completed` (`.incomplete`, `.failed`) line and the empty line that
    ends it. The event carries the whole response in its data, often over several reads:
    a client that left before it had all of it did not get the stream's end.

    Only the read's last `event:` line is looked at (the final event is the stream's last
    event), found by a search back from the read's end for `\n` + `event:`: a raw `\n`
    always ends a line (JSON data holds none), so the name inside an event's JSON is never
    taken for its line, and the search goes back over the last event only. `_tail` (the
    read before, or the last `_EDGE` bytes) finds a line cut across two reads; it starts
    as `\n`, the start of the stream being the start of a line.
    """

    _tail: bytes = b"\n"
    _open: bool = False  # the final event's line was relayed, not yet the empty line after it

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        if self._open:
            self.relayed = _blank_line(self._tail[-2:] + data[:2]) or _blank_line(data)
        else:
            self._look(data)
        self._tail = data if len(data) >= _EDGE else (self._tail + data)[-_EDGE:]

    def _look(self, data: bytes) -> None:
        """Find the final event's line among this read's lines, then its end."""
        buf, i = data, data.rfind(b"\nevent:") + 1
        if not i and not (data.startswith(b"event:") and self._tail.endswith(b"\n")):
            # the read's only line may have begun in the read before
            buf = self._tail[-_EDGE:] + data[:_EDGE]
            i = buf.rfind(b"\nevent:") + 1
            if not i:
                return
        end = _final_line(buf, i)
        if end >= 0:
            self._open = True
            self.relayed = _blank_line(buf, end) or (buf is not data and _blank_line(data))


def _final_line(buf: bytes, i: int) -> int:
    """Where the line starting at `i` ends (its `\n`) if it names a final event, else -1
    (another event, or a line not finished in `buf`)."""
    end = buf.find(b"\n", i, i + _EDGE)
    return end if end >= 0 and buf[i:end] in _RESPONSE_ENDS else -1


_FINISH = b'"finishReason"'
# The end of an SSE event: an empty line, after LF or CRLF lines (Google sends CRLF).
_EVENT_END = re.compile(rb"\r?\n\r?\n")
_FINISH_EDGE = len(_FINISH) - 1


@dataclass(slots=True)
class FinishReason(FinalEvent):
    """The same for a Gemini stream (`alt=sse`): relayed once an event whose data names
    `"finishReason"` is whole, its empty line included. Gemini sends no final event: the
    candidate's last chunk carries its finish reason, and the body ends after it.

    Every event is looked at (the name may stand in any of them, and only the stream's
    last holds it), in the bytes of one read and a few kept from the read before, so a
    name or an empty line cut across two reads is found. `_named`: the event under way
    (not yet ended) names it. A body streamed as a JSON array (no `alt=sse`) has no
    empty lines: its end is the body's end.
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


def speaks_anthropic(header_names: Iterable[str]) -> bool:
    """Whether a request is to the Anthropic API: its clients all send `anthropic-version`."""
    return any(name.lower() == "anthropic-version" for name in header_names)


def speaks_responses(path: str) -> bool:
    """Whether a request path is the OpenAI Responses API's: `.../responses` (a new
    response), or `.../responses/<id>` (a stored one, streamed again with `stream=true`)."""
    parts = path.rstrip("/").rsplit("/", 2)
    return parts[-1] == "responses" or (len(parts) == 3 and parts[1] == "responses")


# Gemini's methods, as the last part of a path: `.../models/{model}:streamGenerateContent`
# (AI Studio) or `.../publishers/google/models/{model}:generateContent` (Vertex AI).
GEMINI_STREAM, GEMINI_CONTENT = ":streamGenerateContent", ":generateContent"


def gemini_method(path: str) -> str | None:
    """GEMINI_STREAM or GEMINI_CONTENT when a request path (its query left off) calls
    Gemini's content generation, else None."""
    path = path.rstrip("/")
    if path.endswith(GEMINI_STREAM):
        return GEMINI_STREAM
    return GEMINI_CONTENT if path.endswith(GEMINI_CONTENT) else None


def gemini_model(path: str) -> str:
    """The model a Gemini path names: its last segment before the method,
    `gemini-2.5-flash` in `/v1beta/models/gemini-2.5-flash:streamGenerateContent`."""
    return path.rstrip("/").rpartition("/")[2].partition(":")[0]


def final_event(header_names: Iterable[str], path: str = "") -> FinalEvent:
    """What ends the stream a request with these headers, to this path, asks for."""
    if speaks_anthropic(header_names):
        return MessageStop()
    if speaks_responses(path):
        return ResponseEnd()
    return FinishReason() if gemini_method(path) == GEMINI_STREAM else FinalEvent()
