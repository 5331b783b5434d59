"""`diff`'s text: a Diff as lines (every recorded value through streamscope/text.py)."""

from __future__ import annotations

from ..core.calls import Call
from ..text import plural, quote, visible
from .diff import BY_EXCHANGE, BY_REQUEST, CallChange, Change, Diff, PairDiff
from .sides import Key, Side, Timing

WIDTH = 60  # a value in a line, cut


def _named(side: str, s: Side) -> str:
    return f"{side} exchange {s.exchange}" + ("" if s.response is None else f".{s.response}")


def pairing(a: Side, b: Side, d: Diff) -> str:
    """How the streams were paired, said as far as it is established."""
    if d.named:
        what = "responses" if a.response is not None and b.response is not None else "exchanges"
        named = f"the {what} you named ({_named('A', a)}, {_named('B', b)})"
        if len(d.pairs) <= 1:
            return named
        how = {BY_EXCHANGE: "number", BY_REQUEST: "request"}.get(d.paired_by, "position")
        return f"{named}, their responses paired by {how}"
    same = " (the same requests)" if d.same_requests else ""
    if d.paired_by == BY_EXCHANGE:
        return f"paired by exchange number{same}"
    if d.paired_by == BY_REQUEST:
        return "paired by request (the same requests)"
    bare = [f"{side} ({s.format})" for side, s in (("A", a), ("B", b)) if not s.recorded]
    if bare:
        holds = "holds" if len(bare) == 1 else "hold"
        return f"paired by position ({' and '.join(bare)} {holds} no requests to match)"
    numbers = [list(dict.fromkeys(s.exchange for s in side.streams)) for side in (a, b)]
    why = (
        "the same exchange numbers, other responses in their sessions"
        if numbers[0] == numbers[1]
        else "the exchange numbers differ"
    )
    return f"paired by position ({why}, and not every request is in the other)"


def _where(side: str, k: Key | None, s: Side) -> str:
    if k is None:
        return f"{side} none"
    if not s.recorded:  # an SSE body, a chunk log: one stream, no exchanges
        return f"{side}'s stream"
    return f"{side} exchange {k[0]}" + ("" if k[1] is None else f".{k[1]}")


def _ms(ns: int | None) -> str:
    return "no time" if ns is None else f"{ns / 1e6:.0f} ms"


def value(name: str, v: object) -> str:
    """A compared field's value as the report says it (a time in ms)."""
    if name.endswith("_ns"):
        return _ms(v if isinstance(v, int) else None)
    return quote(v, WIDTH)


def _call(c: Call | None) -> str:
    if c is None:
        return "none"
    return (
        f"id {quote(c.id, WIDTH)} name {quote(c.name, WIDTH)} arguments {quote(c.arguments, WIDTH)}"
    )


def _call_lines(changes: list[CallChange], indent: str) -> list[str]:
    out = []
    for c in changes:
        if c.a is None or c.b is None:
            out.append(f"{indent}call {c.position}: A {_call(c.a)}; B {_call(c.b)}")
            continue
        for name in c.fields:
            a, b = getattr(c.a, name), getattr(c.b, name)
            out.append(f"{indent}call {c.position} {name}: {quote(a, WIDTH)} -> {quote(b, WIDTH)}")
    return out


def _timing_line(t: Timing | None) -> str:
    if t is None:
        return "no times"
    if t.first_call_frame is None:
        first = "no call"
    elif t.first_call_ns is None:
        first = f"first call fragment at frame {t.first_call_frame} (no time)"
    else:
        first = f"first call fragment at frame {t.first_call_frame} ({_ms(t.first_call_ns)})"
    gap = _ms(t.largest_gap_ns) if t.timed else "no times"
    return f"{first}, fragments per call {t.fragments or 'none'}, largest gap {gap}"


# the words for a compared field, wherever a diff is said (here, the replay's diff line)
LABELS = {
    "first_call_ns": "first call fragment",
    "fragments": "fragments per call",
    "largest_gap_ns": "largest gap between frames",
    "finish_reason": "finish reason",
    "reasoning_content": "reasoning",
}


def label(name: str) -> str:
    return LABELS.get(name, name)


def _changes(changes: list[Change], indent: str) -> list[str]:
    return [
        f"{indent}{label(c.field)}: {value(c.field, c.a)} -> {value(c.field, c.b)}" for c in changes
    ]


def _untimed(sides: list[str]) -> str:
    who = " and ".join(sides)
    return f"timing not compared: {who} {'has' if len(sides) == 1 else 'have'} no frame times"


def _pair(p: PairDiff, named: list[str], a: Side, b: Side) -> list[str]:
    """`named`: the sides without times the header already named (not said again)."""
    head = f"{_where('A', p.a, a)} / {_where('B', p.b, b)}"
    if p.a is None or p.b is None:
        return [f"{head}: only in {'A' if p.b is None else 'B'}"]
    untimed = p.untimed if p.untimed != named else []
    if p.same:
        return [f"{head}: same" + (f" ({_untimed(untimed)})" if untimed else "")]
    out = [f"{head}:"]
    out += _changes(p.stream, "  ")
    if p.calls:
        out.append("  calls (robust):")
        out += _call_lines(p.calls, "    ")
    for word, kinds in (("appears", p.added), ("gone", p.gone)):
        for k in kinds:
            out.append(
                f"  anomaly {word}: {k.kind} ({k.severity}, frame {k.frame}): {visible(k.message)}"
            )
    for c in p.clients:
        said = f"  client {c.strategy}: {c.change} ({c.a} in A, {c.b} in B)"
        errors = [f"{s} raises {visible(e)}" for s, e in (("A", c.error_a), ("B", c.error_b)) if e]
        out.append(said + (f": {'; '.join(errors)}" if errors else ""))
        out += _call_lines(c.calls, "    ")
    for side, names in (("A", p.only_a), ("B", p.only_b)):
        if names:
            out.append(f"  clients only in {side}'s dialect: {', '.join(names)}")
    if p.timing:
        out.append("  timing:")
        out += _changes(p.timing, "    ")
        out.append(f"    A: {_timing_line(p.timing_a)}")
        out.append(f"    B: {_timing_line(p.timing_b)}")
    if untimed:
        out.append(f"  {_untimed(untimed)}")
    return out


def render(a: Side, b: Side, d: Diff) -> list[str]:
    pairs = plural(len(d.pairs), "stream pair")
    out = [
        f"A: {visible(a.source)} ({a.format})",
        f"B: {visible(b.source)} ({b.format})",
        f"{pairs}, {pairing(a, b, d)}",
    ]
    # a side with no times anywhere (an SSE body, a cassette) is said once, here
    both = [p.untimed for p in d.pairs if p.a is not None and p.b is not None]
    said = both[0] if both and both[0] and all(u == both[0] for u in both) else []
    if said:
        out.append(_untimed(said))
    for p in d.pairs:
        out += _pair(p, said, a, b)
    for word, side, s, found in (
        ("appears", "B", b, d.contract_added),
        ("gone", "A", a, d.contract_gone),
    ):
        for f in found:
            where = _where(side, (f.exchange, None), s)
            out.append(
                f"contract finding {word}: {f.kind} ({f.severity}, {where}): {visible(f.message)}"
            )
    out.append("same" if d.same else "differ")
    return out
