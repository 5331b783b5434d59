"""The framings streamscope reads, one module each, and how a stream's is told.

A framing turns a body's bytes into frames, one event each, incrementally: it is fed the
reads as they came (`feed`), then told the body is over (`flush` gives the frames only
the end completes, `finish` why the body ended early, if it did), and it copies cheaply
(the replay's snapshots). A stream's framing is told once, where the stream is opened:
from the response's content type and the framing its request asked for (the dialect
knows which requests stream in which framing), or, for a saved body, from its first
bytes; it travels with the stream by name, as the dialect does. This module is the one
place a framing's content type is spelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from ..core.frames import Frame, Truncation
from ..core.record import record
from . import aws_eventstream, json_array, ndjson, sse
from .aws_eventstream import EventStreamDecoder, prelude_ok
from .json_array import JsonArrayDecoder
from .ndjson import LineDecoder
from .sse import SseDecoder, looks_like_sse, plain_datas
from .websocket import WebSocketDecoder


class Framing(Protocol):
    """One stream's framing, being read."""

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        """The frames the read `data` (arriving at `time_ns`) completes."""
        ...

    def flush(self) -> list[Frame]:
        """The body is over: the frames only its end completes (call once, before finish)."""
        ...

    def finish(self) -> Truncation | None:
        """The body is over: why its last bytes are no frame, if they are not."""
        ...

    def copy(self) -> Framing:
        """An independent framing in the same state (cheap: a replay snapshot)."""
        ...


@record(frozen=True, slots=True)
class FramingRecord:
    """What streamscope knows of one framing."""

    name: str  # as `inspect --json` says it: "sse", "json-array"
    title: str  # in words: "Server-Sent Events"
    # the response content types it comes in (the first is what a server writes)
    content_types: tuple[str, ...]
    # the content type alone tells it (application/json does not: it is a stream only
    # where the request asked for one)
    typed: bool
    # do a body's first bytes (past blank space) look like it? (a saved body file)
    sniff: Callable[[bytes], bool]
    new: Callable[[], Framing]  # a framing at the start of a body
    # the datas of a whole body in the plain form nearly every server writes, in a few
    # passes in C (None: not that form; read the frames) — None: the framing has none
    plain: Callable[[bytes], list[str] | None] | None = None
    # the body a server writes for these frames (their data; a binary framing's headers
    # too, where they came with some), one read a frame (and its end, when the body was
    # whole, as the callable says once they are written): how `serve` answers in a
    # framing its recording was not in, and export writes frames anew (None: it writes
    # none)
    write: Callable[[Iterable[Frame], Callable[[], bool]], Iterator[bytes]] | None = None


def _never(head: bytes) -> bool:
    return False


FRAMINGS: dict[str, FramingRecord] = {
    r.name: r
    for r in (
        FramingRecord(
            "sse",
            "Server-Sent Events",
            ("text/event-stream",),
            True,
            looks_like_sse,
            SseDecoder,
            plain_datas,
            sse.write,
        ),
        FramingRecord(
            "ndjson",
            "JSON lines",
            ("application/x-ndjson", "application/jsonl", "application/x-jsonlines"),
            True,
            lambda head: head[:1] == b"{",
            LineDecoder,
            write=ndjson.write,
        ),
        FramingRecord(
            "json-array",
            "a JSON array",
            ("application/json",),
            False,
            lambda head: head[:1] == b"[",
            JsonArrayDecoder,
            write=json_array.write,
        ),
        FramingRecord(
            "aws-eventstream",
            "the AWS event stream",
            ("application/vnd.amazon.eventstream",),
            True,
            prelude_ok,
            EventStreamDecoder,
            write=aws_eventstream.write,
        ),
        # told by the HTTP/1.1 101 upgrade (upgrade()), never by bytes
        FramingRecord("websocket", "WebSocket messages", (), False, _never, WebSocketDecoder),
    )
}
SSE = "sse"  # the framing of a stream nothing else tells (every dialect's first)
# Sniffed in this order: the binary framing first (its prelude CRC is a sure sign).
_SNIFF_ORDER = ("aws-eventstream", "sse", "json-array", "ndjson")


def framing(name: str) -> FramingRecord:
    """The framing named `name`; ValueError naming those there are when none is."""
    try:
        return FRAMINGS[name]
    except KeyError:
        raise ValueError(
            f"there is no framing {name!r} (framings: {', '.join(FRAMINGS)})"
        ) from None


def new(name: str | None) -> Framing:
    """A framing named `name` (SSE when None) at the start of a body."""
    return framing(name or SSE).new()


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def of_response(
    status: int | None, headers: Sequence[tuple[str, str]], asked: str | None
) -> str | None:
    """The framing a response's body streams in, None when it is no stream: told by its
    content type (`asked`, the framing its request asked for, where the type alone does
    not tell: a JSON body), by a 101 upgrade to WebSocket, else `asked` when the
    response has no content type."""
    upgrade = next((v for k, v in headers if k.lower() == "upgrade"), "")
    if status == 101 and upgrade.strip().lower() == "websocket":
        return "websocket"
    content_type = next((v for k, v in headers if k.lower() == "content-type"), None)
    if content_type is None:
        return asked
    media = _media_type(content_type)
    for r in FRAMINGS.values():
        if r.typed and media in r.content_types:
            return r.name
    if asked is not None and media in FRAMINGS[asked].content_types:
        # an untyped framing streams only a successful body (an error is a document)
        return asked if status is None or status < 400 else None
    return None


def of_bytes(head: bytes) -> str | None:
    """The framing a saved body's first bytes show (leading blank space skipped), None
    when none fits."""
    head = head.lstrip(b" \t\r\n")
    for name in _SNIFF_ORDER:
        if FRAMINGS[name].sniff(head):
            return name
    return None


def content_type(name: str | None) -> str:
    """The content type a server writes for a body in framing `name` (SSE when None)."""
    types = framing(name or SSE).content_types
    return types[0] if types else "application/octet-stream"


def writes(name: str | None) -> bool:
    """Whether a body can be written in framing `name` (`rewrite`)."""
    return name in FRAMINGS and FRAMINGS[name].write is not None


def rewrite(
    name: str, frames: Iterable[Frame], whole: Callable[[], bool]
) -> Iterator[tuple[bytes, int | None]]:
    """A stream's frames as a body in framing `name` (one that `writes`): (bytes, the
    time of the read that completed the frame) a frame, the end's with the last time;
    `whole()`, asked once the frames are written: the stream ended whole (an array is
    then closed)."""
    write = FRAMINGS[name].write
    assert write is not None
    times: list[int | None] = [None]

    def timed() -> Iterator[Frame]:
        for frame in frames:
            times[0] = frame.time_ns
            yield frame

    for data in write(timed(), whole):
        yield data, times[0]


def is_stream_type(value: str) -> bool:
    """Whether a content type alone says the body is a stream (SSE, NDJSON, ...)."""
    media = _media_type(value)
    return any(r.typed and media in r.content_types for r in FRAMINGS.values())


__all__ = [
    "FRAMINGS",
    "SSE",
    "Framing",
    "FramingRecord",
    "content_type",
    "framing",
    "is_stream_type",
    "new",
    "rewrite",
    "writes",
    "of_bytes",
    "of_response",
]
