"""The round-trip contract (seed sections 0 and 3), checked across a recording's exchanges.

The assembled calls of a stream must come back unchanged in the next request's
assistant message, and every tool result must answer one of its ids, after it. A custom
(freeform) call's input is free text, compared exactly and never parsed.

Each dialect reads a request into a `Conversation` (its own words for a result and the
field that names the call it answers); the check below is the same for every dialect.
Findings are typed: the exchange, the request message and the call id they are about.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field, replace
from typing import Protocol

from ..text import cut, quote
from .anomalies import ERROR, INFO, WARNING, Kind
from .calls import Call, signature_bytes
from .history import Entry, History, SentCall, Tool, Words, function_or_custom, tail
from .pairing import Continuation, Head, Pairing, Thread, pair, thread
from .record import record

# kind -> Kind (severity, meaning, why that severity): the one registry every check refers to.
KINDS: dict[str, Kind] = {
    "tool-call-id-substituted": Kind(
        ERROR,
        "the assistant message sends back another id than the stream assembled",
        "the provider links a result to its call by the id the model sent: with another id the link breaks, and the API rejects the request or the model reads the result as answering nothing",
    ),
    "tool-call-id-filled": Kind(
        INFO,
        "the model sent no call id and the client filled one in, the same on the call sent "
        "back and on the result that answers it",
        "the API documents the id as optional and the client's to fill (the rule of each "
        "dialect is in the anomaly reference), so the link holds and the provider answers "
        "with the tool's result; an id the model sent that comes back as another, or a "
        "filled id its result does not name, is tool-call-id-substituted",
    ),
    "tool-call-name-changed": Kind(
        ERROR,
        "the name sent back differs from the assembled one",
        "the history says the model called another tool than it did, and the result answers a call it never made",
    ),
    "tool-call-arguments-invalid": Kind(
        ERROR,
        "the arguments sent back do not parse",
        "the history holds a call no one can parse: providers that check it reject the request, and the model reads a broken call",
    ),
    "tool-call-dropped": Kind(
        ERROR,
        "an assembled call is missing from the assistant message sent back",
        "the model's call is gone from the history: its result answers nothing (providers reject that), or the model never learns the call ran",
    ),
    "tool-result-id-mismatch": Kind(
        ERROR,
        "a tool message's tool_call_id matches no id of the assistant message before it",
        "the result answers no call: providers reject the request (OpenAI and Anthropic answer 400), or the model never sees the result",
    ),
    "tool-result-missing": Kind(
        ERROR,
        "an assistant tool call has no tool message answering it",
        "the call goes unanswered: OpenAI and Anthropic reject a history where a tool call has no result (400), others let the model go on without it",
    ),
    "tool-result-before-assistant": Kind(
        ERROR,
        "a tool message comes before the assistant message it answers",
        "a result before its call answers nothing: providers reject the order, or the model reads a result to a call not yet made",
    ),
    "tool-result-repeated": Kind(
        ERROR,
        "a call is answered by more than one tool result (the tool ran more than once)",
        "the tool ran more than once, or the model reads two answers to one call",
    ),
    # Beyond the contract's table (new kinds may be added):
    "tool-call-arguments-changed": Kind(
        ERROR,
        "arguments that parsed as streamed go back as other JSON",
        "the history says the model asked for other arguments than it did",
    ),
    "tool-call-arguments-repaired": Kind(
        WARNING,
        "arguments that did not parse go back repaired (check what the repair changed)",
        "the history parses now, but the repair may have changed what the model meant: a trap of clients that repair before sending back",
    ),
    "tool-call-input-changed": Kind(
        ERROR,
        "a custom call's input goes back as other text than was streamed",
        "the history says the model wrote other input than it did",
    ),
    "tool-call-type-changed": Kind(
        ERROR,
        "a call goes back as another type (a custom call as a function, or the reverse)",
        "a custom call sent back as a function (or the reverse) is another call than the model made: providers reject it, or the model misreads its own turn",
    ),
    # Pairing (core/pairing.py): a stream whose calls could not be checked, and why
    "continuation-missing": Kind(
        INFO,
        "no request continues the stream's conversation, though later requests send calls "
        "back: its calls were not checked",
        "nothing was found wrong: no request could be told to continue the stream, so its calls were not checked, and the entry says so rather than pass them",
    ),
    "continuation-ambiguous": Kind(
        INFO,
        "several requests continue the stream's history with different answers and the "
        "calls do not tell which is its own: its calls were not checked",
        "nothing was found wrong: the request that continues the stream could not be told, so its calls were not checked, and the entry says so rather than guess",
    ),
    # A request that cannot be read (the analysis driver files it, for any exchange)
    "request-undecodable": Kind(
        WARNING,
        "the request body cannot be decoded as its Content-Encoding says (bad data, a "
        "coding streamscope does not decode, a body cut short, or one that decodes past "
        "64 MiB); the message names the coding",
        "the upstream may have read it, and nothing says the conversation is wrong; but "
        "its model, tools and history are not read, so the calls it may carry back are "
        "not checked against it",
    ),
    # The dialects' own (the contract's dialect section):
    "thought-signature-dropped": Kind(
        ERROR,
        "a Gemini call goes back without the thoughtSignature it was streamed with",
        'Gemini rejects a function call sent back without its thoughtSignature (400 "Function call is missing a thought_signature")',
    ),
}


# The kinds that say a stream's calls were not checked (pairing's); every other info says
# the contract held, with a note (tool-call-id-filled).
UNCHECKED = frozenset({"continuation-missing", "continuation-ambiguous"})
# The finding about a request that could not be read at all: the contract is not broken
# by it, but not checked against it (record's summary says so)
UNREAD = "request-undecodable"


@record(slots=True)
class Finding:
    exchange: int
    kind: str
    message: str
    severity: str = "error"
    stream: int | None = None  # the exchange whose stream assembled the calls, if any
    # Where in the request it points: the message's index in the request body, and the
    # call id it is about (as sent back, or as assembled for a dropped call).
    at_message: int | None = None
    call: object = None
    conversation: int | None = None  # its conversation, named by its first exchange
    # In a WebSocket session: the turn whose request it is about, and the turn whose
    # stream assembled the calls (None: not in a session)
    turn: int | None = None
    stream_turn: int | None = None

    def to_json(self) -> dict[str, str | int]:
        out: dict[str, str | int] = {
            "exchange": self.exchange,
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
        }
        if self.stream is not None:  # the stream whose calls it is about
            out["stream"] = self.stream
        if self.conversation is not None:
            out["conversation"] = self.conversation
        if self.turn is not None:
            out["turn"] = self.turn
        if self.stream_turn is not None:
            out["stream_turn"] = self.stream_turn
        return out


@record(slots=True)
class Conversation:
    """The parts of one request's history the contract needs, one entry per message (a
    message that answers several calls gives an entry per result)."""

    exchange: int
    # per entry: ("assistant", [SentCall...]) / ("tool", the id it answers) / (role, None)
    messages: list[tuple[str, object]] = field(default_factory=list)
    # per entry, its message's index in the request (None: the calls of the stored
    # response `previous` names, which the request continues without sending them)
    at: list[int | None] = field(default_factory=list)
    words: Words = Words()
    kind_of: Callable[[object], object] = function_or_custom
    previous: str | None = None  # History.previous
    client_ids: bool = False  # History.client_ids
    stored: str | None = None  # History.stored
    thread: Thread | None = None  # what pairing knows of it (None: not read from a History)
    # the results the request ends with, and the entry they start at (history.tail): what
    # core/results.py shows of the calls the request answers
    tail: tuple[int, list[Entry]] = (0, [])
    error_field: str | None = None  # History.error_field
    # the tools it declares, nested ones too, without their descriptions (what inspect
    # lists; a long session declares the same long descriptions in every request)
    tools: list[Tool] = field(default_factory=list)

    @classmethod
    def of(cls, exchange: int, history: History) -> Conversation:
        out = cls(exchange, words=history.words, kind_of=history.kind_of)
        out.previous = history.previous
        out.client_ids = history.client_ids
        out.stored = history.stored
        out.error_field = history.error_field
        out.tools = [replace(t, description=None) for t in history.tools]
        starts: list[int] = []  # the entry each turn starts at
        entries = history.entries()
        out.tail = tail(entries)
        for k, e in enumerate(entries):
            if e.turn == len(starts):
                starts.append(k)
            out.messages.append((e.role, e.value))
            out.at.append(e.at)
        out.thread = thread(history, starts, len(out.messages))
        return out

    def call_turns(self, first: int, end: int) -> list[int]:
        """The entries in [first, end) that send calls back (an assistant message that is
        text alone, as the Responses API's `message` item before a call, sends none)."""
        return [
            k
            for k in range(first, end)
            if self.messages[k][0] == "assistant" and isinstance(self.messages[k][1], list)
        ]

    def calls_at(self, entry: int) -> list[SentCall]:
        """The calls of an assistant entry (its value is always the list of them)."""
        value = self.messages[entry][1]
        assert isinstance(value, list)
        return value

    def results_after(self, entry: int) -> list[object] | None:
        """What the run of results starting at `entry` answers (None: the request ends
        before any result, with nothing yet to answer the calls)."""
        out: list[object] = []
        while entry < len(self.messages) and self.messages[entry][0] == "tool":
            out.append(self.messages[entry][1])
            entry += 1
        return None if not out and entry == len(self.messages) else out

    def sends_calls(self) -> bool:
        return any(role == "assistant" and calls for role, calls in self.messages)

    def assistant_turns(self) -> list[int]:
        return [i for i, (role, calls) in enumerate(self.messages) if role == "assistant" and calls]

    def index(self, entry: int) -> int | None:
        """The request message an entry stands for (None: the stored response's calls)."""
        return self.at[entry]

    def where(self, entry: int) -> str:
        at = self.at[entry]
        return f"{self.words.turn} {at}" if at is not None else f"response {quote(self.previous)}"

    def continued(self, made: Mapping[str, list[Call]]) -> Conversation:
        """With the calls of the response `previous` names (as its stream assembled them:
        the server keeps them as they were made) as an assistant entry first; with a
        ("previous", id) entry instead when the recording does not hold that response,
        whose outputs cannot be checked."""
        if self.previous is None:
            if self.stored is None:
                return self
            # what the stored conversation holds is not in the recording's request:
            # results that answer it cannot be checked
            return replace(
                self, messages=[("previous", self.stored), *self.messages], at=[None, *self.at]
            )
        calls = made.get(self.previous)
        entry: tuple[str, object] = (
            ("previous", self.previous)
            if calls is None
            else ("assistant", [SentCall(c.id, c.name, c.arguments, c.type) for c in calls])
        )
        return replace(self, messages=[entry, *self.messages], at=[None, *self.at])


def _value(arguments: object) -> object:
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def parses(arguments: object) -> bool:
    """Whether arguments sent back parse as JSON (text only: any other value does not)."""
    if not isinstance(arguments, str):
        return False
    try:
        json.loads(arguments)
    except (ValueError, RecursionError):  # nested past Python's limit: no client parses it
        return False
    return True


@record(slots=True)
class ContractResult:
    findings: list[Finding]
    compared: int  # streams whose calls a later request carried back, and were compared
    # each exchange's conversation, named by its first exchange (pairing.Pairing)
    conversation: dict[int, int] = field(default_factory=dict)
    # stream -> the request that continues it, and where its answer is in it; stream ->
    # the request that continues its stored response (pairing.Pairing)
    continued: dict[int, Continuation] = field(default_factory=dict)
    by_previous: dict[int, int] = field(default_factory=dict)


def check(
    streams: list[tuple[int, list[Call]]],
    requests: list[Conversation],
    responses: Mapping[str, int] | None = None,
    answered: Iterable[int] | None = None,
    unread: Mapping[int, str] | None = None,
) -> ContractResult:
    """`streams`: (exchange, robust calls) of every stream, in exchange order; `requests`:
    every request's history (its stream's own too), in exchange order; `responses`: a
    stream's response id -> its exchange, for requests that continue a stored response;
    `answered`: exchanges besides the streams whose answer a later request may continue
    (successful non-stream exchanges); `unread`: the requests whose body could not be
    decoded, by exchange, each with why (streamscope.core.codings: the coding named)."""
    findings: list[Finding] = []
    made = dict(streams)
    by_ex = {r.exchange: r for r in requests}
    responses = responses or {}
    stored = {rid: made[ex] for rid, ex in responses.items() if ex in made}
    requests = [r.continued(stored) for r in requests]
    seen: set[tuple[object, ...]] = set()

    def add(
        exchange: int, kind: str, message: str, *key: object, at: int | None, call: object
    ) -> None:
        # an id sent as an array or object is keyed by its JSON (it has no hash)
        key = tuple(k if _hashable(k) or isinstance(k, tuple) else quote(k) for k in key)
        if (kind, *key) not in seen:  # later requests repeat the history: report once
            seen.add((kind, *key))
            stream = key[0] if key and isinstance(key[0], int) else None
            findings.append(Finding(exchange, kind, message, KINDS[kind][0], stream, at, call))

    paired = _pair(streams, by_ex, responses, answered)
    conv = paired.conversation
    compared = 0
    for exchange, calls in streams:
        if not calls:
            continue
        nxt = paired.continued.get(exchange)
        if nxt is not None:
            req = by_ex[nxt.exchange]
            turns = req.call_turns(nxt.first, nxt.end)
            sent = [c for k in turns for c in req.calls_at(k) if c.assembled]
            name = conv.get(exchange, exchange)
            results = req.results_after(nxt.end)
            at = turns[0] if turns else nxt.first
            _compare(exchange, req, at, calls, sent, results, add, name)
            compared += 1
        elif exchange in paired.by_previous:
            compared += 1  # its calls stay on the server: only the results can differ
    _unpaired(streams, requests, paired)
    for note in paired.notes:  # said on the stream whose calls were not checked
        findings.append(Finding(note.stream, note.kind, note.message, INFO, note.stream))
    for req in requests:
        _results(req, add, conv.get(req.exchange, req.exchange))
    for exchange, why in (unread or {}).items():  # no history: nothing of it was checked
        add(
            exchange, "request-undecodable", why, "request", exchange, at=None, call=None
        )  # (UNREAD)
    for f in findings:
        f.conversation = conv.get(f.stream if f.stream is not None else f.exchange)
    findings.sort(key=lambda f: f.exchange)
    return ContractResult(findings, compared, conv, paired.continued, paired.by_previous)


class _Add(Protocol):
    """`check`'s reporter: a finding of `kind`, once per (kind, *key)."""

    def __call__(
        self, exchange: int, kind: str, message: str, *key: object, at: int | None, call: object
    ) -> None: ...


def _pair(
    streams: list[tuple[int, list[Call]]],
    requests: Mapping[int, Conversation],
    responses: Mapping[str, int],
    answered: Iterable[int] | None,
) -> Pairing:
    threads = {ex: r.thread for ex, r in requests.items() if r.thread is not None}

    def sent(ex: int, head: Head) -> list[SentCall]:
        """The calls request `ex` sends back in the answer at `head` (asked only where
        several requests sent one history)."""
        req = requests[ex]
        turns = req.call_turns(head.first, head.end)
        return [c for k in turns for c in req.calls_at(k) if c.assembled]

    previous = {ex: r.previous for ex, r in requests.items() if r.previous is not None}
    return pair(
        threads,
        sorted({ex for ex, _ in streams} | set(answered or ())),
        dict(streams),
        sent,
        previous,
        responses,
    )


def _retries(requests: list[Conversation], paired: Pairing) -> dict[bytes, list[int]]:
    """Per history, the exchanges that sent it and were continued, in order."""
    out: dict[bytes, list[int]] = {}
    for r in requests:
        if r.thread is not None and r.exchange in paired.continued:
            out.setdefault(r.thread.whole, []).append(r.exchange)
    return out


def _unpaired(
    streams: list[tuple[int, list[Call]]], requests: list[Conversation], paired: Pairing
) -> None:
    """An info finding for each stream with calls that no request continues, when later
    requests do send calls back (a recording that simply ends there says nothing)."""
    noted = {n.stream for n in paired.notes}
    threads = {r.exchange: r.thread for r in requests if r.thread is not None}
    retries = _retries(requests, paired)
    senders = sorted(r.exchange for r in requests if r.sends_calls())
    carried: dict[str, list[int]] = {}  # a call id -> the requests that send it back
    for r in requests:
        for role, calls in r.messages:
            if role == "assistant" and isinstance(calls, list):
                for c in calls:
                    if isinstance(c.id, str) and c.id:
                        carried.setdefault(c.id, []).append(r.exchange)
    for ex, calls in streams:
        if not calls or ex in paired.continued or ex in paired.by_previous or ex in noted:
            continue
        if not senders or senders[-1] <= ex:
            continue
        back = sorted(
            {
                (r, c.id)
                for c in calls
                if isinstance(c.id, str) and c.id
                for r in carried.get(c.id, ())
                if r > ex
            }
        )
        mine = threads.get(ex)
        again = (
            next((r for r in retries.get(mine.whole, ()) if r > ex), None)
            if mine is not None
            else None
        )
        if again is not None:
            message = (
                f"exchange {ex}: exchange {again} sent the same request again and its answer "
                "is the one the conversation continues (a retry): this stream's calls were "
                "not sent back"
            )
        elif back:
            sender, cid = back[0]
            message = (
                f"exchange {ex}: exchange {sender} sends call id {quote(cid)} back, but its history "
                f"does not begin with exchange {ex}'s request (the client changed or cut the "
                "earlier messages), so it continues another history: not compared"
            )
        else:
            message = (
                f"exchange {ex}: no later request continues this stream's conversation (its "
                "request's history followed by the answer): its calls were not checked"
            )
        paired.add(ex, "continuation-missing", message)


def _compare(
    stream_ex: int,
    req: Conversation,
    turn: int,
    calls: list[Call],
    sent: list[SentCall],
    results: list[object] | None,
    add: _Add,
    conversation: int,
) -> None:
    """`results`: what the results after the calls answer (None: none follow yet)."""
    req_ex, at = req.exchange, req.index(turn)
    where = f"exchange {req_ex} sends back the calls of exchange {stream_ex}"
    if conversation != stream_ex:
        where += f" (the conversation begun at exchange {conversation})"
    for call, back in zip(calls, match(calls, sent), strict=True):
        label = f"call {quote(call.name)} (id {quote(call.id)})"
        # every finding on this call: keyed by it, pointing at what went back for it
        keys = (stream_ex, call.id, call.first_frame, call.index)
        about_it = call.id if back is None else about(back)
        if back is None:
            add(
                req_ex,
                "tool-call-dropped",
                f"{where}: {label} is missing from {req.words.sent_all}",
                *keys,
                at=at,
                call=about_it,
            )
            continue
        if back.id != call.id and _filled(req, call, back, sent, results):
            add(
                req_ex,
                "tool-call-id-filled",
                f"{where}: the model sent no id for {label}; the client gave it id "
                f"{quote(back.id)}, "
                + (
                    f"and its {req.words.result} names the same id"
                    if results is not None
                    else f"and no {req.words.result} is sent yet"
                )
                + " (the API leaves the id to the client): the link holds",
                *keys,
                at=at,
                call=about_it,
            )
        elif back.id != call.id:
            twice = sum(1 for s in sent if s.id == back.id) > 1
            unlinked = (
                f"{where}: the model sent no id for {label}; the client gave it id "
                f"{quote(back.id)}, "
                + (
                    "which it gave another call too"
                    if twice
                    else f"which no {req.words.result} after it names"
                )
                + ": the results are not linked to the calls"
            )
            linked = not twice and results is not None and back.id in results
            add(
                req_ex,
                "tool-call-id-substituted",
                unlinked
                if req.client_ids and call.id in ("", None) and back.id not in ("", None)
                else f"{where}: the stream assembled id {quote(call.id)}, {req.words.sent} "
                f"carries {quote(back.id)}"
                + (
                    # the client replaced the id on both sides: the request holds together,
                    # but the id is not the model's (what a provider or a trace matches on)
                    f", and its {req.words.result} names {quote(back.id)} too: the result "
                    "is linked to the call in this request, but not by the id the model made"
                    if linked
                    else "; the model cannot match results to calls"
                ),
                *keys,
                at=at,
                call=about_it,
            )
        if back.name != call.name:
            add(
                req_ex,
                "tool-call-name-changed",
                f"{where}: the stream assembled name {quote(call.name)}, {req.words.sent} carries {quote(back.name)}",
                *keys,
                at=at,
                call=about_it,
            )
        if call.signature is not None and not same_signature(call.signature, back.signature):
            said = (
                "without it"
                if back.signature is None
                else f"with another one ({cut(quote(back.signature), 30)})"
            )
            add(
                req_ex,
                "thought-signature-dropped",
                f"{where}: {label} was streamed with thoughtSignature "
                f"{cut(quote(call.signature), 30)} and goes back {said}: Gemini answers 400 "
                '("Function call is missing a thought_signature")',
                *keys,
                at=at,
                call=about_it,
            )
        custom = req.kind_of(call.type) == "custom"
        if req.kind_of(call.type) != req.kind_of(back.type):
            add(
                req_ex,
                "tool-call-type-changed",
                f"{where}: {label} was streamed as a {req.kind_of(call.type)} call "
                f"and goes back with type {quote(back.type)}",
                *keys,
                at=at,
                call=about_it,
            )
        if custom:  # free text: compared as sent, never parsed
            if back.arguments != call.arguments:
                add(
                    req_ex,
                    "tool-call-input-changed",
                    f"{where}: custom {label} was streamed with input {cut(quote(call.arguments), 50)} "
                    f"and goes back with {cut(quote(back.arguments), 50)}",
                    *keys,
                    at=at,
                    call=about_it,
                )
            continue
        if not parses(back.arguments):
            add(
                req_ex,
                "tool-call-arguments-invalid",
                f"{where}: {label} goes back with arguments that do not parse "
                f"({cut(quote(back.arguments), 60)}); the provider may reject the request",
                *keys,
                at=at,
                call=about_it,
            )
        elif back.arguments != call.arguments:
            if not isinstance(call.arguments, str) or parses(call.arguments):
                if _value(back.arguments) != _value(call.arguments):
                    add(
                        req_ex,
                        "tool-call-arguments-changed",
                        f"{where}: {label} was streamed with arguments {cut(quote(call.arguments), 50)} "
                        f"and goes back with {cut(quote(back.arguments), 50)}",
                        *keys,
                        at=at,
                        call=about_it,
                    )
            else:
                add(
                    req_ex,
                    "tool-call-arguments-repaired",
                    f"{where}: {label} was streamed with arguments that do not parse "
                    f"({cut(quote(call.arguments), 50)}) and goes back repaired as "
                    f"{cut(quote(back.arguments), 50)}: check the repair kept their meaning",
                    *keys,
                    at=at,
                    call=about_it,
                )


def match(calls: list[Call], sent: list[SentCall]) -> list[SentCall | None]:
    """Which call sent back is each streamed call (None: dropped). By id first (a
    reordered message is not a substitution): each call takes the first sent call with its
    id not taken yet; the calls left take what is left, in order."""
    by_id: dict[str, deque[int]] = {}
    for k, s in enumerate(sent):
        if isinstance(s.id, str):
            by_id.setdefault(s.id, deque()).append(k)
    taken = [False] * len(sent)
    hits: list[int | None] = []
    for call in calls:
        queue = by_id.get(call.id) if isinstance(call.id, str) and call.id else None
        hit = queue.popleft() if queue else None
        if hit is not None:
            taken[hit] = True
        hits.append(hit)
    rest = (k for k in range(len(sent)) if not taken[k])
    out: list[SentCall | None] = []
    for hit in hits:
        pick = hit if hit is not None else next(rest, None)
        out.append(sent[pick] if pick is not None else None)
    return out


def _filled(
    req: Conversation,
    call: Call,
    back: SentCall,
    sent: list[SentCall],
    results: list[object] | None,
) -> bool:
    """Did the client fill in an id the model did not send, where its dialect says that is
    the client's to do (History.client_ids), and keep it: one call's id alone, named by
    the result that answers it (or no result sent yet)? An id the model sent and the
    client replaced is never this."""
    if not req.client_ids or call.id not in ("", None):
        return False
    if not (isinstance(back.id, str) and back.id):
        return False
    if sum(1 for s in sent if s.id == back.id) != 1:  # two calls, one id: results are unlinked
        return False
    return results is None or back.id in results


def same_signature(streamed: object, sent: object) -> bool:
    """Is `sent` the thoughtSignature `streamed`? The API reads it as bytes, so base64 and
    base64url spellings of the same bytes are the same signature."""
    if streamed == sent:
        return True
    if not (isinstance(streamed, str) and isinstance(sent, str)):
        return False
    mine = signature_bytes(streamed)
    return isinstance(mine, bytes) and mine == signature_bytes(sent)


def about(sent: SentCall) -> object:
    """What a finding on a call sent back points at (Finding.call): its id, or ("name",
    its name) when it went back with no id, so id-less calls are told apart."""
    return sent.id if sent.id not in ("", None) else ("name", sent.name)


def _hashable(value: object) -> bool:
    return isinstance(value, (str, int, float, bool, type(None)))


def _sent_after(msgs: list[tuple[str, object]], i: int) -> Iterator[SentCall]:
    """The sent calls of the assistant messages after message `i` (rare shapes only)."""
    for role, value in msgs[i + 1 :]:
        if role == "assistant" and isinstance(value, list):
            yield from value


def _results(req: Conversation, add: _Add, conversation: int) -> None:
    """The results of one request; `conversation` keys its findings (the same history in
    another conversation is another finding)."""
    msgs, words, at = req.messages, req.words, req.index
    # the last assistant message that carries each (hashable) id: "is it answered later?"
    # is one lookup, not a scan of every later message
    last_with: dict[object, int] = {}
    for i, (role, value) in enumerate(msgs):
        if role == "assistant" and isinstance(value, list):
            for s in value:
                for key in s.answered_by():
                    if _hashable(key):
                        last_with[key] = i
    ids: list[object] = []
    id_set: set[object] = set()
    j = -1  # the assistant message (or other) the tool results at hand follow
    unknown = False
    for i, (role, value) in enumerate(msgs):
        if role != "tool":
            continue
        if i == 0 or msgs[i - 1][0] != "tool":  # the first of a run of results
            j = i - 1
            before = msgs[j][1] if j >= 0 and msgs[j][0] == "assistant" else None
            ids = [s.answered_by()[0] for s in before] if isinstance(before, list) else []
            keys = [k for s in before for k in s.answered_by()] if isinstance(before, list) else []
            id_set = {x for x in keys if _hashable(x)}
            unknown = j >= 0 and msgs[j][0] == "previous"
        if unknown:  # they answer a stored response the recording does not hold
            continue
        if (value in id_set) if _hashable(value) else (value in ids):
            continue
        if _hashable(value):  # (a list or object id never equals a scalar)
            later = last_with.get(value, -1) > i
        else:
            later = any(value in s.answered_by() for s in _sent_after(msgs, i))
        if later:
            add(
                req.exchange,
                "tool-result-before-assistant",
                f"exchange {req.exchange}: {req.where(i)} (tool result for {quote(value)}) comes before "
                f"{words.sent_all} that made the call",
                "order",
                conversation,
                value,
                at=at(i),
                call=value,
            )
        else:
            add(
                req.exchange,
                "tool-result-id-mismatch",
                f"exchange {req.exchange}: {req.where(i)} answers {words.result_id} {quote(value)}, no id of "
                f"{words.sent_all} before it ({', '.join(quote(x) for x in ids) or 'it has none'})",
                "id",
                conversation,
                value,
                tuple(map(str, ids)),
                at=at(i),
                call=value,
            )
    for i, (role, value) in enumerate(msgs):
        if role != "assistant" or not isinstance(value, list):
            continue
        answered: set[object] = set()
        odd: list[object] = []  # tool_call_ids sent as arrays or objects: compared by equality
        k = i + 1
        while k < len(msgs) and msgs[k][0] == "tool":
            (answered.add if _hashable(msgs[k][1]) else odd.append)(msgs[k][1])
            k += 1
        if k == len(msgs) and k == i + 1:
            continue  # the request ends with the assistant message itself: nothing to answer yet
        for s in value:
            if not s.needs_result:
                continue
            keys = s.answered_by()
            if not any((k in answered) if _hashable(k) else (k in odd) for k in keys):
                add(
                    req.exchange,
                    "tool-result-missing",
                    f"exchange {req.exchange}: call {quote(s.name)} (id {quote(s.id)}) in {req.where(i)} has no "
                    f"{words.result} answering it",
                    "missing",
                    conversation,
                    keys[0],
                    at(i),
                    at=at(i),
                    call=s.id,
                )
