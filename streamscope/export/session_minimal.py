"""`--minimal` on a WebSocket session: the fewest turns, and in each the fewest frames and
fields, on which the session shows the same findings.

A session's signature is its turns' signatures joined (core/minimal.py: the warning and
error kinds, the clients whose calls differ from robust's, those that raise) with the
warning and error kinds of its contract. First whole turns go (ddmin over turns; a turn
takes its client messages with it); then each kept turn's frames and fields are shrunk by
export's search over the dialect's Shape (minimize_events.py), every candidate judged on
the whole session. A candidate is a session the dialect reads into the same turns: each
turn keeps the client message that opened it and, where it ended, its final event (read
alone, it splits as one turn, ended as before, every frame its own). A turn holding a
message the framing found broken keeps its frames as recorded. A long turn is searched
as a long stream is (minimize_events: the output items no finding is on go whole, and
each search is bounded by a few analyses' work). The budget is core/minimal's MAX_RUNS
engine passes over the whole search: when it is spent, the smallest session found so
far is written.
"""

from __future__ import annotations

import copy
import dataclasses

from ..analysis.driver import read_turn
from ..core.anomalies import SERIOUS
from ..core.calls import Call
from ..core.contract import Finding
from ..core.engine import StreamResult, value_key
from ..core.frames import sent_bytes
from ..core.minimal import (
    MAX_RUNS,
    Exhausted,
    Signature,
    clients,
    ddmin,
    held,
    kinds,
)
from ..core.record import record
from ..dialects import session_turns
from ..dialects.base import Turn
from ..framing.session import WsMessage
from .minimize_events import Pair, minimize_events
from .session import Entry, View, read

# what a candidate that is not the same session's turns shows: never the target
_NOT_THE_SAME = Signature(frozenset({"(not the same turns)"}), frozenset(), frozenset())


@record(slots=True)
class _Part:
    """One turn of the session being shrunk: its client messages before its first frame
    (the one that opened it first), its frames as recorded, its client messages after,
    and its frames as they stand (event name, data)."""

    label: int
    head: list[Entry]
    server: list[Entry]
    tail: list[Entry]
    ended: bool
    shrink: bool  # its frames may be written anew (each a whole text message)
    pairs: list[Pair]
    changed: bool = False


def joined(results: list[StreamResult], findings: list[Finding]) -> Signature:
    """A session's signature: its turns' joined, and its contract's kinds."""
    found: set[str] = set()
    differs: set[str] = set()
    raises: set[tuple[str, str]] = set()
    for r in results:
        found |= kinds(r.anomalies)
        key = value_key if r.by_value else Call.key
        others = {k: v for k, v in r.strategies.items() if k != "robust"}
        d, x = clients(r.tool_calls, others, key)
        differs |= d
        raises |= x
    found |= {f"contract:{f.kind}" for f in findings if f.severity in SERIOUS}
    return Signature(frozenset(found), frozenset(differs), frozenset(raises))


class _Search:
    def __init__(self, view: View, entries: list[Entry], keep_fields: bool, max_runs: int):
        self.view, self.keep_fields, self.max_runs = view, keep_fields, max_runs
        self.runs = 0
        self.info = copy.copy(view.exchange.info)
        self.cache: dict[tuple, tuple[Turn, StreamResult] | None] = {}
        self.closes = [e for e in entries if e.message.opcode == "close"]
        self.parts: list[_Part] = []
        by_label: dict[int, list[Entry]] = {}
        for e in entries:
            if e.turn is not None and not e.control:
                by_label.setdefault(e.turn, []).append(e)
        reading = read(view, entries)
        ended = {reading.label(t): t.ended for t in reading.turns}
        for label, mine in by_label.items():
            server = [e for e in mine if e.message.sender == "server"]
            first = mine.index(server[0]) if server else len(mine)
            head = [e for e in mine[:first] if e.message.sender == "client"]
            tail = [e for e in mine[first:] if e.message.sender == "client"]
            frames = [_text(e) for e in server]
            shrink = all(f is not None for f in frames)
            pairs: list[Pair] = [(None, f if f is not None else "") for f in frames]
            self.parts.append(
                _Part(label, head, server, tail, ended.get(label, False), shrink, pairs)
            )

    def messages(self, part: _Part, pairs: list[Pair]) -> list[WsMessage]:
        """The part's messages, with these frames."""
        head = [e.message for e in part.head]
        return head + self.frames(part, pairs) + [e.message for e in part.tail]

    def frames(self, part: _Part, pairs: list[Pair]) -> list[WsMessage]:
        if pairs is part.pairs and not part.changed:
            return [e.message for e in part.server]
        times = [e.message.t_ns for e in part.server]  # (frames only go: as many times)
        return [
            WsMessage("server", "text", sent_bytes(data), times[k])  # (bytes as received)
            for k, (_, data) in enumerate(pairs)
        ]

    def turn(self, part: _Part, pairs: list[Pair], last: bool) -> tuple[Turn, StreamResult] | None:
        """The part read alone, with these frames (None: it reads as other turns)."""
        key = (part.label, tuple(d for _, d in pairs), last and not part.ended)
        if key in self.cache:
            return self.cache[key]
        view = self.view
        turns = session_turns(view.told, self.messages(part, pairs), view.start_ns)
        got: tuple[Turn, StreamResult] | None = None
        if len(turns) == 1 and turns[0].ended == part.ended and len(turns[0].frames) == len(pairs):
            if self.runs >= self.max_runs:
                raise Exhausted
            self.runs += 1
            t = turns[0]
            result = read_turn(
                self.info, t, last, view.end_reason, view.end_error, self.info.status, marks=False
            )
            got = (t, result)
        self.cache[key] = got
        return got

    def signature(self, chosen: list[tuple[_Part, list[Pair]]]) -> Signature:
        turns: list[Turn] = []
        results: list[StreamResult] = []
        for i, (part, pairs) in enumerate(chosen):
            got = self.turn(part, pairs, i == len(chosen) - 1)
            if got is None:
                return _NOT_THE_SAME
            t, r = got
            turns.append(dataclasses.replace(t, turn=i + 1))
            results.append(r)
        findings: list[Finding] = []
        contract = self.view.told.session_contract
        if contract is not None:
            findings, _ = contract(self.view.number, turns, results, {})
        return joined(results, findings)

    def of(self, parts: list[_Part]) -> Signature:
        return self.signature([(p, p.pairs) for p in parts])

    def entries(self, parts: list[_Part]) -> list[Entry]:
        out: list[Entry] = []
        for p in parts:
            out += p.head
            if p.changed:
                out += [Entry(m, None, p.label) for m in self.frames(p, p.pairs)]
            else:
                out += p.server
            out += p.tail
        return out + self.closes


def _text(e: Entry) -> str | None:
    """A frame's data as sent (core.frames.as_sent: bytes that are not UTF-8 kept, so
    `invalid-utf8` is too), where the frame can be written anew (None: not)."""
    m = e.message
    if m.opcode != "text" or m.invalid is not None or not m.complete:
        return None
    return m.data.decode("utf-8", "surrogateescape")


def minimize_session(
    view: View,
    entries: list[Entry],
    keep_fields: bool = False,
    max_runs: int = MAX_RUNS,
    keep_calls: bool = False,
) -> list[Entry]:
    """The smallest session found with the same signature as `entries` (the session, or
    a selection of its turns). `keep_calls`: each kept turn's calls stay as robust read
    them in the session (a module that asserts them): its fragments are joined, never
    dropped."""
    search = _Search(view, entries, keep_fields, max_runs)
    parts = search.parts
    if not parts:
        return entries
    try:
        target = search.of(parts)
    except Exhausted:
        return entries
    best = list(parts)

    def same(chosen: list[_Part]) -> bool:
        nonlocal best
        ok = bool(chosen) and search.of(chosen) == target
        if ok and len(chosen) < len(best):
            best = list(chosen)
        return ok

    kept = parts[:1]
    if target != joined([], []):  # a session that shows nothing keeps its first turn
        try:
            kept = ddmin(parts, same)
        except Exhausted:
            kept = best
    turns_only = search.entries(kept)
    shape = view.told.shape
    if shape is not None:
        for part in kept:
            if not part.shrink or search.runs >= max_runs:
                continue

            def judged(pairs: list[Pair], part: _Part = part) -> Signature:
                mark = part.changed
                part.changed = True  # (frames other than those recorded: written anew)
                try:
                    found = search.signature([(p, pairs if p is part else p.pairs) for p in kept])
                    if keep_calls and found is not _NOT_THE_SAME:
                        got = search.turn(part, pairs, part is kept[-1])
                        assert got is not None  # (else the signature says not the same)
                        key = value_key if got[1].by_value else Call.key
                        found = dataclasses.replace(found, calls=held(got[1].tool_calls, key))
                    return found
                finally:
                    part.changed = mark

            try:
                pairs = minimize_events(
                    part.pairs,
                    view.told,
                    shape,
                    keep_fields=keep_fields,
                    max_runs=max(max_runs - search.runs, 1),
                    signature=judged,
                )
            except Exhausted:
                break
            if pairs != part.pairs:
                part.pairs, part.changed = pairs, True
    out = search.entries(kept)
    # what is written is read again whole: the same turns, the same findings, or less
    # is shrunk
    for candidate in (out, turns_only):
        reading = read(view, candidate)
        if len(reading.turns) == len(kept) and joined(reading.results, reading.findings) == target:
            return candidate
    return entries
