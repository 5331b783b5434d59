"""What the request that continues a stream says of its calls: the result it sends for
each call (what the tool gave back, whether it says it failed) and how long the tools ran
(from the stream's last byte to the start of that request).

The request is the one pairing found (core/pairing.py): its answer window holds the calls
sent back, and the run of results right after it answers them; a request that continues
a stored response (`previous_response_id`) sends the results first. Each streamed call is
matched to the call sent back as the contract matches them (contract.match), and takes
the first result of the run that names it, each result taken once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..text import quote
from .calls import Call
from .contract import match
from .history import Entry, SentCall

RECORDED = "recorded"  # the recorder's own clock
APPROXIMATE = "approximate"  # a HAR's times (its entries' start and timings, in ms)
UNKNOWN = "unknown"  # the input holds no times, or no request continues the stream


@dataclass(slots=True)
class CallResult:
    """The result a later request sent for one call of a stream."""

    exchange: int  # the request that sent it
    at: int  # its entry in that request (a message, an input item)
    content: object  # as sent
    # whether it says the tool failed, in its dialect's field (History.error_field: as
    # sent, the API's default where absent); None: the dialect has no such field
    error: object
    error_field: str | None
    word: str = "message"  # what the request's entries are, in its dialect (Words.turn)

    def words(self) -> str:
        """Where it is, in words: "message 3", "input item 4"."""
        return f"{self.word} {self.at}"

    def to_json(self) -> dict[str, Any]:
        return {
            "exchange": self.exchange,
            "at_message": self.at,
            "content": self.content,
            "is_error": self.error,
            "error_field": self.error_field,
        }


@dataclass(slots=True)
class Answer:
    """The request that continues a stream, and what it says of the stream's calls."""

    exchange: int
    results: list[CallResult | None] = field(default_factory=list)  # one per call, in order
    # from the stream's last byte to the request's start (the tools' run, and the
    # client's own work); None: the input holds no times
    gap_ns: int | None = None
    timing: str = UNKNOWN

    def to_json(self) -> dict[str, Any]:
        ms = None if self.gap_ns is None else round(self.gap_ns / 1e6, 3)
        return {"exchange": self.exchange, "tool_time_ms": ms, "timing": self.timing}


def results(
    calls: list[Call],
    sent: list[SentCall] | None,
    run: list[Entry],
    exchange: int,
    error_field: str | None,
    word: str = "message",
) -> list[CallResult | None]:
    """Each call's result in request `exchange`: `sent`, the calls it sends back in the
    answer the results follow (None: it continues the stored response that made the
    calls, whose calls are the stream's own); `run`, the results after them."""
    if sent is None:
        sent = [SentCall(c.id, c.name, c.arguments, c.type) for c in calls]
    taken = [False] * len(run)
    out: list[CallResult | None] = []
    for call, back in zip(calls, match(calls, sent), strict=True):
        keys = back.answered_by() if back is not None else (call.id,)
        hit = next(
            (j for j, e in enumerate(run) if not taken[j] and any(e.value == x for x in keys)),
            None,
        )
        if hit is None:
            out.append(None)
            continue
        taken[hit] = True
        e = run[hit]
        assert e.result is not None  # (a "tool" entry is a result's)
        r = e.result
        at = r.item if r.item is not None else e.at
        out.append(CallResult(exchange, at, r.content, r.error, error_field, word))
    return out


def ran(gap_ns: int | None, timing: str) -> str:
    """The tools' run time in words, as every face says it."""
    if gap_ns is None or timing == UNKNOWN:
        return "tool run time unknown (the input holds no times)"
    ms = gap_ns / 1e6
    said = f"{abs(ms):,.0f} ms" if abs(ms) >= 10 else f"{abs(ms):,.1f} ms"
    if gap_ns < 0:  # the client did not wait for the stream's end
        return f"sent {said} before the stream's last byte"
    if timing == APPROXIMATE:
        return f"tool run time ~{said} (HAR times are approximate)"
    return f"tool run time {said}"


def flag(error: object, error_field: str | None) -> str:
    """Whether a result says its tool failed, in words: "is_error true", "is_error false
    (status)" for a dialect whose field has another name, "is_error none" where the
    dialect has no such field."""
    if error_field is None:
        return "is_error none"
    said = quote(error)
    return f"is_error {said}" + ("" if error_field == "is_error" else f" ({error_field})")


NO_FLAG = "is_error none: this API's tool results carry no error flag"
