"""What differs between two files' streams, in what a user acts on (pure: no I/O).

Streams are paired by exchange number when both inputs are recordings holding the same
exchange numbers (their requests the same or not: `same_requests` says), else by request
when every stream of the shorter side has a request equal (as parsed JSON) to one of the
other's (a WebSocket session's response: the client message that opened it), else by
position.
For each pair: the dialect and framing, how it ended, the calls (id, name, arguments as
parsed JSON, so spacing and key order are no difference), the anomaly kinds added and
gone, what each client strategy builds, and the timing shape (times only where both sides
keep them: a side without is said, never a difference). The contract findings are
compared file against file (their kinds added and gone).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import field
from typing import Any

from ..core.calls import Call, StrategyError
from ..core.engine import StreamResult
from ..core.record import record
from ..core.report import call_json
from .sides import Key, Side, Timing, key

BY_EXCHANGE, BY_REQUEST, BY_POSITION = "exchange", "request", "position"

# what a client strategy builds, as the diff words it
RIGHT, WRONG, RAISES = "right", "wrong", "raises"
NOW_BREAKS, NOW_RIGHT, CHANGED = "now breaks", "now right", "changed"

# A time differs when it is over twice the other and over 50 ms apart: two recordings of
# one conversation never have the same times, so smaller changes are not a difference.
TIME_FACTOR, TIME_FLOOR_NS = 2.0, 50_000_000

SCHEMA = 1


@record(slots=True)
class Change:
    """One field that differs: its name, and its value on each side."""

    field: str
    a: object
    b: object


@record(slots=True)
class CallChange:
    """The call at `position` of the robust reading: None on the side that has none."""

    position: int
    a: Call | None
    b: Call | None
    fields: list[str]  # of id, name, type, arguments: those that differ


@record(slots=True)
class KindChange:
    kind: str
    severity: str
    message: str  # the first entry's, on the side that has it
    frame: int


@record(slots=True)
class FindingChange:
    """A contract finding one side has more of: the first such of its kind there."""

    kind: str
    severity: str
    message: str
    exchange: int


@record(slots=True)
class ClientChange:
    strategy: str
    a: str  # RIGHT, WRONG, RAISES
    b: str
    change: str  # NOW_BREAKS, NOW_RIGHT, CHANGED
    calls: list[CallChange]  # how what it builds changed, call by call
    error_a: str | None = None
    error_b: str | None = None


@record(slots=True)
class PairDiff:
    a: Key | None
    b: Key | None
    stream: list[Change] = field(default_factory=list)
    calls: list[CallChange] = field(default_factory=list)
    added: list[KindChange] = field(default_factory=list)
    gone: list[KindChange] = field(default_factory=list)
    clients: list[ClientChange] = field(default_factory=list)
    # strategies one side's dialect has and the other's has not (two dialects compared)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    timing_a: Timing | None = None
    timing_b: Timing | None = None
    timing: list[Change] = field(default_factory=list)
    # "A", "B": the sides whose frames keep no times, so no time was compared
    untimed: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return (
            self.a is not None
            and self.b is not None
            and not (self.stream or self.calls or self.added or self.gone)
            and not (self.clients or self.timing or self.only_a or self.only_b)
        )


@record(slots=True)
class Diff:
    paired_by: str
    pairs: list[PairDiff]
    contract_added: list[FindingChange]  # findings B has and A has not (by kind and count)
    contract_gone: list[FindingChange]
    # every pair's two requests are equal as parsed JSON (what pairing by exchange number
    # does not tell), and both inputs were named one exchange each (FILE#N)
    same_requests: bool = False
    named: bool = False

    @property
    def same(self) -> bool:
        return all(p.same for p in self.pairs) and not (self.contract_added or self.contract_gone)


def diff(a: Side, b: Side) -> Diff:
    paired_by, pairs = pair(a, b)
    out = [
        _pair(x, y, a.timings.get(key(x)) if x else None, b.timings.get(key(y)) if y else None)
        for x, y in pairs
    ]
    same_requests = bool(pairs) and all(
        x is not None
        and y is not None
        and (body := _body(a, x)) is not None
        and body == _body(b, y)
        for x, y in pairs
    )
    named = a.exchange is not None and b.exchange is not None
    return Diff(paired_by, out, _findings(b, a), _findings(a, b), same_requests, named)


def _findings(has: Side, lacks: Side) -> list[FindingChange]:
    # the findings `has` holds more of, kind by kind, than `lacks` (file against file:
    # a finding is about a request, which pairs of streams do not follow)
    extra = Counter(f.kind for f in has.contract)
    extra.subtract(f.kind for f in lacks.contract)
    out = []
    for f in has.contract:
        if extra[f.kind] > 0:
            extra[f.kind] -= 1
            out.append(FindingChange(f.kind, f.severity, f.message, f.exchange))
    return out


Pair = tuple[StreamResult | None, StreamResult | None]


def pair(a: Side, b: Side) -> tuple[str, list[Pair]]:
    xs, ys = a.streams, b.streams
    if a.recorded and b.recorded and [key(s) for s in xs] == [key(s) for s in ys]:
        return BY_EXCHANGE, list(zip(xs, ys, strict=True))
    by_request = _by_request(a, b)
    if by_request is not None:
        return BY_REQUEST, by_request
    n = min(len(xs), len(ys))
    rest: list[Pair] = [(x, None) for x in xs[n:]] + [(None, y) for y in ys[n:]]
    return BY_POSITION, [*zip(xs[:n], ys[:n], strict=True), *rest]


def _body(side: Side, stream: StreamResult) -> str | None:
    # the request that opened the stream (a session's response: its client message) as a
    # comparable text: its JSON with keys sorted (None: no JSON body)
    body = side.requests.get(key(stream))
    if body is None:
        return None
    try:
        return json.dumps(body, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None


def _by_request(a: Side, b: Side) -> list[Pair] | None:
    if not (a.recorded and b.recorded):
        return None
    free = list(b.streams)
    pairs: list[Pair] = []
    for x in a.streams:
        body = _body(a, x)
        match = next((y for y in free if body is not None and _body(b, y) == body), None)
        if match is not None:
            free.remove(match)
        pairs.append((x, match))
    if sum(1 for _, y in pairs if y is not None) < min(len(a.streams), len(b.streams)):
        return None  # not every stream of the shorter side found its request
    return pairs + [(None, y) for y in free]


def _pair(x: StreamResult | None, y: StreamResult | None, ta: Timing | None, tb: Timing | None):
    out = PairDiff(key(x) if x else None, key(y) if y else None, timing_a=ta, timing_b=tb)
    if x is None or y is None:
        return out
    # (the text the model wrote is what a user reads: two answers that differ are no "same")
    for name in ("dialect", "framing", "ended", "finish_reason", "content", "reasoning_content"):
        if getattr(x, name) != getattr(y, name):
            out.stream.append(Change(name, getattr(x, name), getattr(y, name)))
    out.calls = compare_calls(x.tool_calls, y.tool_calls)
    out.added, out.gone = _kinds(y, x), _kinds(x, y)
    out.clients = _clients(x, y)
    out.only_a = [n for n in x.strategies if n != "robust" and n not in y.strategies]
    out.only_b = [n for n in y.strategies if n != "robust" and n not in x.strategies]
    out.timing = _timing(ta, tb)
    if ta is not None and tb is not None:
        out.untimed = [side for side, t in (("A", ta), ("B", tb)) if not t.timed]
    return out


def _args(value: object) -> object:
    """Arguments as compared: the JSON value a string parses to (spacing and key order
    are no difference), else the value itself."""
    if isinstance(value, str):
        try:
            return ("json", _canonical(json.loads(value)))
        except (ValueError, RecursionError):
            return ("text", value)
    return ("value", _canonical(value))


def _canonical(value: object) -> object:
    if isinstance(value, dict):
        return ("{}", tuple(sorted(((str(k), _canonical(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, list):
        return ("[]", tuple(_canonical(v) for v in value))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    return value


def compare_calls(xs: list[Call], ys: list[Call]) -> list[CallChange]:
    out = []
    for i in range(max(len(xs), len(ys))):
        x = xs[i] if i < len(xs) else None
        y = ys[i] if i < len(ys) else None
        if x is None or y is None:
            out.append(CallChange(i + 1, x, y, []))
            continue
        fields = [n for n in ("id", "name", "type") if getattr(x, n) != getattr(y, n)]
        if _args(x.arguments) != _args(y.arguments):
            fields.append("arguments")
        if fields:
            out.append(CallChange(i + 1, x, y, fields))
    return out


def _kinds(has: StreamResult, lacks: StreamResult) -> list[KindChange]:
    # the kinds `has` files and `lacks` does not, each with its first entry
    theirs = {a.kind for a in lacks.anomalies}
    out: dict[str, KindChange] = {}
    for a in has.anomalies:
        if a.kind not in theirs and a.kind not in out:
            out[a.kind] = KindChange(a.kind, a.severity, a.text(), a.frame)
    return list(out.values())


def _built(stream: StreamResult, name: str) -> tuple[str, list[Call], str | None]:
    got = stream.strategies[name]
    if isinstance(got, StrategyError):
        return RAISES, [], got.error
    if not isinstance(got, list):
        return RAISES, [], f"{type(got).__name__}: {got}"
    return (WRONG if stream.differs(name) else RIGHT), got, None


def _clients(x: StreamResult, y: StreamResult) -> list[ClientChange]:
    names = [n for n in x.strategies if n != "robust" and n in y.strategies]
    out = []
    for name in names:
        sa, ca, ea = _built(x, name)
        sb, cb, eb = _built(y, name)
        calls = compare_calls(ca, cb)
        # right on both sides: it builds what robust builds (the calls' change is said once)
        if sa == sb and (sa == RIGHT or (not calls and ea == eb)):
            continue
        if sa == RIGHT:
            change = NOW_BREAKS
        elif sb == RIGHT:
            change = NOW_RIGHT
        else:
            change = CHANGED
        out.append(ClientChange(name, sa, sb, change, calls, ea, eb))
    return out


def _far(p: int | None, q: int | None) -> bool:
    if p is None or q is None:  # unknown, or no call on a side (the calls say that)
        return False
    low, high = sorted((p, q))
    return high - low > TIME_FLOOR_NS and high > TIME_FACTOR * low


def _timing(ta: Timing | None, tb: Timing | None) -> list[Change]:
    if ta is None or tb is None:
        return []
    out = []
    timed = ta.timed and tb.timed  # a side that keeps no times: no time is compared
    if timed and _far(ta.first_call_ns, tb.first_call_ns):
        out.append(Change("first_call_ns", ta.first_call_ns, tb.first_call_ns))
    if ta.fragments != tb.fragments:
        out.append(Change("fragments", ta.fragments, tb.fragments))
    if timed and _far(ta.largest_gap_ns, tb.largest_gap_ns):
        out.append(Change("largest_gap_ns", ta.largest_gap_ns, tb.largest_gap_ns))
    return out


# -- the JSON (docs/commands/diff.md says its shape)


def _key_json(k: Key | None) -> dict[str, Any] | None:
    if k is None:
        return None
    return {"exchange": k[0], **({} if k[1] is None else {"turn": k[1]})}


def _calls_json(changes: list[CallChange]) -> list[dict[str, Any]]:
    return [
        {
            "position": c.position,
            "a": call_json(c.a) if c.a is not None else None,
            "b": call_json(c.b) if c.b is not None else None,
            "fields": c.fields,
        }
        for c in changes
    ]


def _kind_json(k: KindChange) -> dict[str, Any]:
    return {"kind": k.kind, "severity": k.severity, "message": k.message, "frame": k.frame}


def _finding_json(f: FindingChange) -> dict[str, Any]:
    return {"kind": f.kind, "severity": f.severity, "message": f.message, "exchange": f.exchange}


def _timing_json(t: Timing | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "first_call_ns": t.first_call_ns,
        "fragments": t.fragments,
        "largest_gap_ns": t.largest_gap_ns,
        "frames": t.frames,
        "first_call_frame": t.first_call_frame,
        "timed": t.timed,
    }


def pair_json(p: PairDiff) -> dict[str, Any]:
    return {
        "a": _key_json(p.a),
        "b": _key_json(p.b),
        "same": p.same,
        "stream": [{"field": c.field, "a": c.a, "b": c.b} for c in p.stream],
        "calls": _calls_json(p.calls),
        "anomalies": {
            "added": [_kind_json(k) for k in p.added],
            "gone": [_kind_json(k) for k in p.gone],
        },
        "clients": [
            {
                "strategy": c.strategy,
                "a": c.a,
                "b": c.b,
                "change": c.change,
                "calls": _calls_json(c.calls),
                "error_a": c.error_a,
                "error_b": c.error_b,
            }
            for c in p.clients
        ],
        "clients_only": {"a": p.only_a, "b": p.only_b},
        "timing": {
            "a": _timing_json(p.timing_a),
            "b": _timing_json(p.timing_b),
            "differs": [c.field for c in p.timing],
            "untimed": [side.lower() for side in p.untimed],
        },
    }


def side_json(s: Side) -> dict[str, Any]:
    return {"source": s.source, "format": s.format, "exchange": s.exchange}


def diff_json(a: Side, b: Side, d: Diff) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "a": side_json(a),
        "b": side_json(b),
        "paired_by": d.paired_by,
        "same_requests": d.same_requests,
        "named": d.named,
        "same": d.same,
        "pairs": [pair_json(p) for p in d.pairs],
        "contract": {
            "added": [_finding_json(f) for f in d.contract_added],
            "gone": [_finding_json(f) for f in d.contract_gone],
        },
    }
