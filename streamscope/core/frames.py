"""Frames: the events of one stream as its framing delivered them (streamscope/framing/),
the unit every face steps through, and how a framing says its body ended early."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from .jsonio import REFUSED, exact, reread
from .record import record


class Sentinel:
    """A named marker that survives copy and deepcopy (engine snapshots copy state)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def __copy__(self) -> Sentinel:
        return self

    def __deepcopy__(self, memo: dict[Any, Any]) -> Sentinel:
        return self


# Marker for a payload that is not JSON (the frame still counts).
INVALID = Sentinel("not JSON")
# A hint the caller did not compute (the engine works it out from the payload itself).
NOT_READ = Sentinel("not read")
# What `invalid-utf8` says of a frame with `bad_utf8`, in every dialect and framing.
BAD_UTF8 = (
    "the frame's bytes are not valid UTF-8; the bad bytes read as U+FFFD, as SSE decoding"
    " requires and streamscope reads every framing"
)


@record(frozen=True, slots=True)
class FrameHeader:
    """One typed header a binary framing carries beside the payload (the AWS event
    stream's `:event-type`...): its name, its wire type ("string", "int32", "bool"...)
    and its value as that type reads (bytes stay bytes)."""

    name: str
    type: str
    value: object


@record(slots=True)
class Frame:
    """One event of the stream, as its framing delivered it: an SSE event, an NDJSON
    line, a JSON array's element, an AWS event stream message, a WebSocket message.

    number: 1-based position in the stream.
    data: the event's data, exactly as decoded (multi-line SSE data joined with "\\n").
    payload: the parsed JSON, or INVALID when `data` is not JSON.
    time_ns: when the read that completed this event arrived (offset from the request), if known.
    event: its name where the framing gives one (SSE `event:`, `:event-type`).
    first_read / last_read: indexes of the reads this event's bytes came from.
    start / end: byte offsets of the event in the stream body (end exclusive).
    invalid: what the framing found wrong with the frame's bytes (`frame-invalid`: a bad
    CRC, an impossible length, an element that is not JSON), None when nothing; such a
    frame's payload is never an object (INVALID or the JSON value read), so no dialect
    reads it as an event.
    headers: the typed headers of a binary framing (empty for text framings).
    raw: with bad_utf8, the data's bytes as sent (None otherwise): `--minimal` keeps them.
    """

    number: int
    data: str
    payload: object
    time_ns: int | None = None
    event: str | None = None
    first_read: int = 0
    last_read: int = 0
    start: int = 0
    end: int = 0
    bad_utf8: bool = False  # the data had bytes that are not UTF-8 (read as U+FFFD)
    invalid: str | None = None
    headers: tuple[FrameHeader, ...] = ()
    raw: bytes | None = None

    @property
    def is_done(self) -> bool:
        return self.payload is INVALID and self.data.strip() == "[DONE]"

    @property
    def is_json(self) -> bool:
        return self.payload is not INVALID


def named_by_type(frame: Frame) -> Frame:
    """A chunk log's frame (no SSE name) as the SSE event the API sends it in: named by
    its payload's `type` (a copy; the frame as it is when it has a name, or no type)."""
    if frame.event is None and isinstance(frame.payload, dict):
        kind = frame.payload.get("type")
        if isinstance(kind, str):  # (built field by field: six times copy.copy's speed, and
            # a --minimal search names every frame of every candidate it judges)
            f = frame
            return Frame(
                f.number, f.data, f.payload, f.time_ns, kind, f.first_read, f.last_read,
                f.start, f.end, f.bad_utf8, f.invalid, f.headers, f.raw,
            )  # fmt: skip
    return frame


# -- a frame's data as sent, where its bytes are not UTF-8 (what --minimal searches) --


def as_sent(frame: Frame) -> str:
    """The frame's data as sent: where its bytes are not UTF-8 (bad_utf8), a str holding
    them, each byte that is no UTF-8 as a lone surrogate (Python's surrogateescape);
    else its data. `--minimal` searches and writes these, never the U+FFFD reading."""
    return frame.data if frame.raw is None else frame.raw.decode("utf-8", "surrogateescape")


def read_sent(data: str) -> tuple[str, bool]:
    """A data as sent (`as_sent`) as its framing reads it: its text, each byte that is no
    UTF-8 read as U+FFFD, and whether it had such bytes."""
    if data.isascii():
        return data, False
    try:
        data.encode("utf-8")
    except UnicodeEncodeError:
        return sent_bytes(data).decode("utf-8", "replace"), True
    return data, False


def sent_bytes(data: str) -> bytes:
    """The bytes of a data as sent (`as_sent`): UTF-8, the bytes that are not as they
    were (a lone surrogate no byte stands for, as UTF-8 writes it: surrogatepass)."""
    try:
        return data.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return data.encode("utf-8", "surrogatepass")


def sent_frame(
    number: int,
    data: str,
    payload: object = None,
    event: str | None = None,
    headers: tuple[FrameHeader, ...] = (),
) -> Frame:
    """Frame `number` of a stream whose data is as sent (`as_sent`), read as its framing
    reads it; `payload`: parse_payload of that reading, when the caller has it."""
    text, bad = read_sent(data)
    if payload is None:
        payload = parse_payload(text)
    raw = sent_bytes(data) if bad else None
    return Frame(number, text, payload, event=event, bad_utf8=bad, headers=headers, raw=raw)


def parse_payload(data: str) -> object:
    """Parse an event's data as JSON (as Python's json reads it, but for what JSON forbids:
    core/jsonio.py); INVALID when it is not. orjson is called here, not through
    jsonio.loads: a frame is parsed on every framing's hot path."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as refused:
        refusal = str(refused)
    return refused_payload(data, refusal)


def refused_payload(data: str, refusal: str) -> object:
    """What `parse_payload` gives for `data` that orjson refused, saying `refusal`."""
    value = reread(data, refusal)
    return INVALID if value is REFUSED else value


# orjson reads an integer past 64 bits as the nearest float (one of 2**63 or more); no
# count or index is sent as so large a float.
_ROUNDED = float(2**63)


def rounded(value: object) -> bool:
    """`value` (read off a payload) is a float orjson may have rounded an integer past 64
    bits to: an index or a count the rules judge is read again exactly (`exactly`)."""
    return type(value) is float and abs(value) >= _ROUNDED


def exactly(frame: Frame) -> Frame:
    """`frame`, its payload read again by the stdlib (jsonio.exact), where a number the
    rules judge is `rounded`: as sent it is an integer, which every client reads as one,
    not a number that is no integer. The frame as it is when nothing reads otherwise.
    Only for such a frame: the second reading costs about 3x orjson's."""
    value = exact(frame.data)
    return frame if value is REFUSED else replace(frame, payload=value)


@record(slots=True)
class Truncation:
    """The body ended inside an event (an SSE event, a line, an element, a message): it
    was never dispatched (WHATWG discards it; every framing does the same)."""

    offset: int  # byte offset where the unfinished event began
    pending: str  # its text as received, for the report

    def describe(self) -> str:
        text = self.pending if len(self.pending) <= 60 else self.pending[:57] + "..."
        return (
            f"the body ended inside an event at byte {self.offset}: {text!r} was never terminated"
        )
