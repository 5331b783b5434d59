"""What the request that continues a stream says of its calls: the result it sends for
each call (what the tool gave back, whether it says it failed) and how long the tools ran
(from the stream's last byte to the start of that request).

The request is the one pairing found (core/pairing.py): its answer window holds the calls
sent back, and the run of results right after it answers them; a request that continues
a stored response (`previous_response_id`) sends the results first. Each streamed call is
matched to the call sent back as the contract matches them (contract.match), and takes
the first result of the run that names it, each result taken once.

A WebSocket session has no later request: its client messages carry the results
(session_answer). The first client message after a response began that sends a result
for one of its calls answers it (Codex's next `response.create`, whose `input` holds
the outputs); the calls it leaves unanswered are looked for in the messages after it,
up to the first that asks for a response after the stream's end (the Realtime API sends
each output in a `conversation.item.create` of its own, then `response.create`). The
tools' run time is from the response's last server message to that first message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any, Protocol

from ..text import quote
from .calls import Call
from .contract import match
from .history import Entry, SentCall, run_at
from .record import record

RECORDED = "recorded"  # the recorder's own clock
APPROXIMATE = "approximate"  # a HAR's times (its entries' start and timings, in ms)
UNKNOWN = "unknown"  # the input holds no times, or no request continues the stream


@record(slots=True)
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
    # a WebSocket session's: the client message that sent it (1-based among the session's
    # messages, as the replay numbers them); None: a request's
    message: int | None = None
    # what the error field said, in words (Result.error_said); None: the flag says it
    error_said: str | None = None

    def words(self) -> str:
        """Where it is, in words: "message 3", "input item 4", "client message 22, input
        item 0" ("client message 22": the message is the result, as Realtime's is)."""
        if self.message is None:
            return f"{self.word} {self.at}"
        return f"client message {self.message}" + (f", {self.word} {self.at}" if self.word else "")

    def to_json(self) -> dict[str, Any]:
        out = {
            "exchange": self.exchange,
            "at_message": self.at,
            "content": self.content,
            "is_error": self.error,
            "error_field": self.error_field,
        }
        if self.message is not None:
            out["client_message"] = self.message
        return out


@record(slots=True)
class Answer:
    """The request that continues a stream, and what it says of the stream's calls."""

    exchange: int
    results: list[CallResult | None] = field(default_factory=list)  # one per call, in order
    # from the stream's last byte to the request's start (the tools' run, and the
    # client's own work); None: the input holds no times
    gap_ns: int | None = None
    timing: str = UNKNOWN
    # a WebSocket session's: the first client message that answers (numbered as
    # CallResult.message), and the response it opens or, if it opens none, the one the
    # next message that asks for one opened (None: none did)
    message: int | None = None
    turn: int | None = None
    opens: bool = False  # the message is the request of response `turn` (Codex's)

    def to_json(self) -> dict[str, Any]:
        ms = None if self.gap_ns is None else round(self.gap_ns / 1e6, 3)
        out: dict[str, Any] = {"exchange": self.exchange}
        if self.message is not None:
            out |= {"client_message": self.message, "turn": self.turn}
        return out | {"tool_time_ms": ms, "timing": self.timing}

    def by(self) -> str:
        """Who sent the results, in words."""
        return sender(self.exchange, self.message, self.turn, self.opens)


def sender(exchange: int, message: int | None, turn: int | None, opens: bool) -> str:
    """Who sent a stream's results, in words: "exchange 4"; in a session, "exchange 1,
    client message 22 (response 3's request)", or "(before response 3)" for a message
    that asks for no response."""
    if message is None:
        return f"exchange {exchange}"
    said = f"exchange {exchange}, client message {message}"
    if turn is None:
        return said
    return said + (f" (response {turn}'s request)" if opens else f" (before response {turn})")


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
        said = r.error_said
        out.append(CallResult(exchange, at, r.content, r.error, error_field, word, None, said))
    return out


@record(slots=True)
class Carried:
    """What one client message of a WebSocket session sends for earlier calls, as its
    dialect reads it (Dialect.session_results): its entries (History.entries: calls sent
    back, results), what they are called ("": the message is its one entry), its
    dialect's error field, and whether it asks for a response."""

    entries: list[Entry]
    word: str = "input item"
    error_field: str | None = None
    opens: bool = False


@record(slots=True)
class ClientMessage:
    """A client message of a session that carries results or asks for a response."""

    number: int  # 1-based among the session's messages (control ones too)
    t_ns: int  # when it was sent, ns from the recording's start
    carried: Carried
    turn: int | None = None  # the response it opens, or the next asked for after it


def _sent_and_run(
    calls: list[Call], entries: list[Entry]
) -> tuple[list[SentCall] | None, list[Entry]]:
    """Where a message's results for `calls` are: after the calls it sends back (the
    history sent again: the last entry sending one of them back by id), else every result
    it holds (it continues the response, whose calls it does not send)."""
    ids = {c.id for c in calls if isinstance(c.id, str)}
    for k in range(len(entries) - 1, -1, -1):
        e = entries[k]
        back = e.value if e.role == "assistant" and isinstance(e.value, list) else []
        if any(isinstance(s.id, str) and s.id in ids for s in back):
            return back, run_at(entries, k + 1)
    return None, [e for e in entries if e.role == "tool"]


def session_answer(
    calls: list[Call],
    began_ns: int,
    end_ns: int,
    messages: list[ClientMessage],
    exchange: int,
) -> Answer | None:
    """The answer to a session response's `calls` (module doc): `began_ns`, when the
    response's first server message came, `end_ns` its last; `messages` the session's
    client messages in order. None: no message answers any of them."""
    got: list[CallResult | None] = [None] * len(calls)
    answer: Answer | None = None
    for m in messages:
        if m.t_ns <= began_ns:
            continue
        left = [i for i, r in enumerate(got) if r is None]
        if left and m.carried.entries:
            mine = [calls[i] for i in left]
            sent, run = _sent_and_run(mine, m.carried.entries)
            c = m.carried
            for i, r in zip(
                left, results(mine, sent, run, exchange, c.error_field, c.word), strict=True
            ):
                if r is not None:
                    r.message, got[i] = m.number, r
            if answer is None and any(got):
                gap = m.t_ns - end_ns
                opens = m.carried.opens
                answer = Answer(exchange, got, gap, RECORDED, m.number, m.turn, opens)
        if m.carried.opens and m.t_ns >= end_ns:
            break  # the client asked for the next response: it has sent what it will
    return answer


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


def flag(error: object, error_field: str | None, said: str | None = None) -> str:
    """Whether a result says its tool failed, in words: "is_error true"; for a dialect
    whose field has another name, what that field said (Result.error_said): "is_error
    false (no status sent)", 'is_error true (status "error")'; "is_error none" where the
    dialect has no such field."""
    if error_field is None:
        return "is_error none"
    shown = quote(error)
    if error_field == "is_error":
        return f"is_error {shown}"
    return f"is_error {shown} ({said if said is not None else error_field})"


NO_FLAG = "is_error none: this API's tool results carry no error flag"


class Flagged(Protocol):
    @property
    def error_field(self) -> str | None: ...


def no_flag(shown: Iterable[Flagged | None]) -> str | None:
    """The note under a stream's results that `is_error none` means its API has no such
    field: only where some result was shown so (`shown`: each call's result, None where
    none answers it)."""
    return NO_FLAG if any(r is not None and r.error_field is None for r in shown) else None
