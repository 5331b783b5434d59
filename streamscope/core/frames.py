"""Frames: the dispatched events of one stream, the unit every face steps through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson


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


@dataclass(slots=True)
class Frame:
    """One dispatched SSE event (or one line of a chunks-JSONL log).

    number: 1-based position in the stream.
    data: the event's data, exactly as decoded (multi-line data joined with "\\n").
    payload: the parsed JSON, or INVALID when `data` is not JSON.
    time_ns: when the read that completed this event arrived (offset from the request), if known.
    first_read / last_read: indexes of the reads this event's bytes came from.
    start / end: byte offsets of the event in the stream body (end exclusive).
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

    @property
    def is_done(self) -> bool:
        return self.payload is INVALID and self.data.strip() == "[DONE]"

    @property
    def is_json(self) -> bool:
        return self.payload is not INVALID


def parse_payload(data: str) -> object:
    """Parse an event's data as JSON; INVALID when it is not."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return INVALID
