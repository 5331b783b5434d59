"""Which request continues which stream: the conversation a stream belongs to.

A stream is continued by the request whose history begins with that stream's own request
(its system prompt and every message, compared by value), followed by the assistant turn
(the answer sent back) and then results. That holds whatever ran in between in time, so
interleaved conversations (an evaluation batch, agents behind one proxy) are never
compared with one another. Each dialect gives the same shape: a `History` with its raw
entries (`items`) and its turns.

Several answered requests can share one history (the same prompt in many conversations,
a retried request): their continuations are told apart by the calls they carry back, then
by elimination; what stays ambiguous is said, never guessed. A request that continues a
stored response (`previous_response_id`) names it: it is paired by that id.

Cost: every entry of every request is fingerprinted once (a hash of its canonical JSON),
and lookups are by hash: linear in the size of the requests.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

try:  # hashlib's own import loads OpenSSL for every other algorithm: 5 ms of each start
    from _blake2 import blake2b
except ImportError:  # an interpreter without CPython's module
    from hashlib import blake2b

from . import jsonio
from .calls import Call
from .history import History, SentCall
from .record import record

# Turns that are not the model's: a window (the answer sent back) ends at one of them, or
# at a turn its dialect says the client added on its own side (Turn.client)
NOT_MODEL = frozenset({"user", "system", "developer", "tool", "function"})


DIGEST = 16  # bytes of a fingerprint


def _digest(*parts: bytes) -> bytes:
    h = blake2b(digest_size=DIGEST)
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.digest()


def _canonical(value: object) -> bytes:
    """The entry's JSON with sorted keys: the same value gives the same bytes however the
    client ordered its keys or spaced its JSON. Anthropic's `cache_control` marks are left
    out: agents move the breakpoint to the newest message on every request, which
    changes no message."""
    out = _dumps(value)
    if b'"cache_control"' in out:
        out = _dumps(_uncached(value))
    return out


def _dumps(value: object) -> bytes:
    # (what orjson cannot write, an integer past 64 bits, a lone surrogate, deep nesting,
    # the stdlib writes)
    return jsonio.dumps(value, sort_keys=True)


def _uncached(value: object) -> object:
    """`value` without `cache_control` keys in a message or its content blocks."""
    if isinstance(value, dict):
        return {k: _uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_uncached(v) for v in value]
    return value


@record(frozen=True, slots=True)
class Head:
    """Where a request's history could continue an earlier request's: an answer sent back
    (a run of the model's turns, up to the next user turn or result)."""

    prefix: bytes  # the digest of the history before it (system prompt, entries)
    window: bytes  # the digest of the answer's entries
    first: int  # the Conversation entry where the answer starts
    end: int  # the Conversation entry after it


@record(slots=True)
class Thread:
    """A request's history as pairing sees it."""

    whole: bytes  # the digest of the whole history: what a continuation begins with
    heads: list[Head] = field(default_factory=list)
    # the digests of the history before each entry, one after the other (DIGEST bytes
    # each, the last is `whole`): one bytes object, not a list of them (long sessions)
    chain: bytes = b""

    def before(self, k: int) -> bytes:
        """The digest of the history before entry `k`."""
        return self.chain[k * DIGEST : (k + 1) * DIGEST]

    def __len__(self) -> int:
        return len(self.chain) // DIGEST


def thread(history: History, entry_of_turn: Sequence[int], entries: int) -> Thread:
    """`entry_of_turn[t]`: the Conversation entry turn t starts at; `entries`: how many."""
    seed = _canonical([history.system if history.system_carried else None, history.previous])
    prints = [_canonical(item) for item in history.items]
    chain = [_digest(seed)]
    for p in prints:
        chain.append(_digest(chain[-1], p))
    out = Thread(chain[-1], chain=b"".join(chain))
    turns = history.turns

    def stops(t: int) -> bool:
        turn = turns[t]
        return bool(turn.results) or turn.client or turn.role in NOT_MODEL

    def raw(t: int) -> int:
        items = turns[t].items
        return items[0] if items else t

    t = 0
    while t < len(turns):  # each run of the model's turns (t never lands inside one)
        if stops(t):
            t += 1
            continue
        u = t + 1
        while u < len(turns) and not stops(u):
            u += 1
        start, stop = raw(t), raw(u) if u < len(turns) else len(prints)
        if 0 <= start <= stop <= len(prints):
            window = _digest(*prints[start:stop])
            end = entry_of_turn[u] if u < len(turns) else entries
            out.heads.append(Head(chain[start], window, entry_of_turn[t], end))
        t = u
    return out


@record(slots=True)
class Continuation:
    """Request `exchange` continues the stream: its answer is entries [first, end)."""

    exchange: int
    first: int
    end: int


@record(slots=True)
class Note:
    """What pairing says about a stream it could not pair (an info finding)."""

    stream: int
    kind: str  # continuation-missing / continuation-ambiguous
    message: str


@record(slots=True)
class Pairing:
    continued: dict[int, Continuation] = field(default_factory=dict)  # stream -> request
    by_previous: dict[int, int] = field(default_factory=dict)  # stream -> request naming it
    notes: list[Note] = field(default_factory=list)
    conversation: dict[int, int] = field(default_factory=dict)  # exchange -> its first

    def add(self, stream: int, kind: str, message: str) -> None:
        self.notes.append(Note(stream, kind, message))


@record(slots=True)
class _Group:
    """The requests that send the same answer after one history."""

    window: bytes
    requests: list[tuple[int, Head]]  # (exchange, head), in exchange order

    @property
    def first(self) -> int:
        return self.requests[0][0]


def _has_ids(calls: Sequence[Call] | Sequence[SentCall]) -> bool:
    return any(isinstance(c.id, str) and c.id for c in calls)


def _signature(calls: Sequence[Call] | Sequence[SentCall], ids: bool) -> tuple[Any, ...]:
    """What tells whose answer a request sends back: the calls' ids, or their names and
    arguments where the stream's calls have no id (the ids sent back are then the
    client's own, where its API leaves them to it), order aside."""
    if ids:
        return tuple(sorted(repr(c.id) for c in calls))
    return tuple(sorted(repr((c.name, c.arguments)) for c in calls))


def pair(
    threads: Mapping[int, Thread],
    answered: Sequence[int],
    streams: Mapping[int, list[Call]],
    sent: Callable[[int, Head], list[SentCall]],
    previous: Mapping[int, str],
    response_ids: Mapping[str, int],
) -> Pairing:
    """`threads`: every request's, by exchange; `answered`: the exchanges whose request got
    an answer a later request could continue (streams, successful bodies); `streams`: the
    calls each stream assembled; `sent(exchange, head)`: the calls of the answer at that
    head; `previous`: request -> the stored response it continues; `response_ids`:
    a stream's response id -> its exchange."""
    out = Pairing()
    for request, rid in previous.items():
        stream = response_ids.get(rid)
        if stream is not None and stream < request:
            out.by_previous.setdefault(stream, request)
    groups: dict[bytes, dict[bytes, _Group]] = {}  # prefix -> window -> group
    for ex in sorted(threads):
        for head in threads[ex].heads:
            by_window = groups.get(head.prefix)
            if by_window is None:
                by_window = groups[head.prefix] = {}
            group = by_window.get(head.window)
            if group is None:
                group = by_window[head.window] = _Group(head.window, [])
            group.requests.append((ex, head))
    asked: dict[bytes, list[int]] = {}  # a history -> the answered exchanges that sent it
    for ex in sorted(answered):
        if ex in threads:
            asked.setdefault(threads[ex].whole, []).append(ex)
    for whole, exchanges in asked.items():
        _bucket(exchanges, list(groups.get(whole, {}).values()), streams, sent, out)
    _conversations(threads, out)
    return out


def _after(group: _Group, ex: int) -> tuple[int, Head] | None:
    """The group's first request after exchange `ex` (they are in exchange order)."""
    k = bisect.bisect_right(group.requests, ex, key=lambda x: x[0])
    return group.requests[k] if k < len(group.requests) else None


def _bucket(
    exchanges: list[int],
    groups: list[_Group],
    streams: Mapping[int, list[Call]],
    sent: Callable[[int, Head], list[SentCall]],
    out: Pairing,
) -> None:
    """Pair the exchanges that sent one history with the answers sent after it."""

    def take(ex: int, choice: list[tuple[int, Head]]) -> None:
        r, h = min(choice, key=lambda x: x[0])
        out.continued[ex] = Continuation(r, h.first, h.end)

    if len(exchanges) == 1:  # every answer after its history is its own
        ex = exchanges[0]
        choice = [x for g in groups if (x := _after(g, ex)) is not None]
        if choice:
            take(ex, choice)
        return
    # several exchanges asked the same: the calls sent back say whose answer is whose
    claimed: set[int] = set()
    left = list(exchanges)
    for ex in exchanges:
        calls = streams.get(ex)
        if not calls:
            continue
        ids = _has_ids(calls)
        mine = _signature(calls, ids)
        hits = [
            k
            for k, g in enumerate(groups)
            if k not in claimed
            and (x := _after(g, ex)) is not None
            and _signature(sent(*x), ids) == mine
        ]
        if len(hits) == 1:
            claimed.add(hits[0])
            left.remove(ex)
            take(ex, [x for x in [_after(groups[hits[0]], ex)] if x is not None])
    rest = [g for k, g in enumerate(groups) if k not in claimed]
    if len(left) == 1:  # the one left is the only one the other answers can continue
        ex = left[0]
        choice = [x for g in rest if (x := _after(g, ex)) is not None]
        if choice:
            take(ex, choice)
        return
    for ex in left:
        answers = sorted(x[0] for g in rest if (x := _after(g, ex)) is not None)
        if streams.get(ex) and answers:
            others = [e for e in left if e != ex]
            out.add(
                ex,
                "continuation-ambiguous",
                f"exchange {ex}: exchanges {_list(others)} sent the same history, and "
                f"exchanges {_list(answers)} continue it with different answers; the calls "
                "sent back do not tell which is this stream's, so its calls were not "
                "compared with any",
            )


def _list(numbers: Sequence[int]) -> str:
    return ", ".join(map(str, numbers))


def _conversations(threads: Mapping[int, Thread], out: Pairing) -> None:
    """Each exchange's conversation, named by its first exchange: a request that continues
    a stream is in that stream's conversation; else one whose history begins with exactly
    one earlier request's whole history (a text answer, then the next question) is in
    that request's."""
    parent = {c.exchange: s for s, c in out.continued.items()}
    for s, r in out.by_previous.items():
        parent.setdefault(r, s)
    sent: dict[bytes, list[int]] = {}
    for ex in sorted(threads):
        t = threads[ex]
        if ex not in parent:
            for k in range(len(t) - 2, 0, -1):  # the longest earlier history it extends
                digest = t.before(k)
                earlier = sent.get(digest)
                if earlier:
                    if len(earlier) == 1:  # several: another conversation may own it
                        parent[ex] = earlier[0]
                    break
        sent.setdefault(t.whole, []).append(ex)
    for ex in sorted(threads.keys() | parent.keys()):
        up = parent.get(ex)
        out.conversation[ex] = out.conversation.get(up, up) if up is not None else ex
