"""`diff`'s text: a Diff as lines (every recorded value through streamscope/text.py)."""

from __future__ import annotations

from ..core.calls import Call
from ..text import plural, quote, visible
from .diff import BY_EXCHANGE, BY_REQUEST, CallChange, Change, Diff, PairDiff
from .sides import Key, Side, Timing

WIDTH = 60  # a value in a line, cut

PAIRED = {
    BY_EXCHANGE: "paired by exchange (both recordings hold the same streams)",
    BY_REQUEST: "paired by request (the same request bodies)",
}


def _where(k: Key | None) -> str:
    if k is None:
        return "none"
    return f"exchange {k[0]}" + ("" if k[1] is None else f".{k[1]}")


def _ms(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.0f} ms"


def _value(name: str, value: object) -> str:
    if name.endswith("_ns"):
        return _ms(value if isinstance(value, int) else None)
    return quote(value, WIDTH)


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
    return (
        f"first call fragment at {_ms(t.first_call_ns)}, fragments per call "
        f"{t.fragments or '-'}, largest gap {_ms(t.largest_gap_ns)}"
    )


LABELS = {
    "first_call_ns": "first call fragment",
    "fragments": "fragments per call",
    "largest_gap_ns": "largest gap between frames",
    "finish_reason": "finish reason",
    "reasoning_content": "reasoning",
}


def _changes(changes: list[Change], indent: str) -> list[str]:
    return [
        f"{indent}{LABELS.get(c.field, c.field)}: {_value(c.field, c.a)} -> {_value(c.field, c.b)}"
        for c in changes
    ]


def _pair(p: PairDiff) -> list[str]:
    head = f"A {_where(p.a)} / B {_where(p.b)}"
    if p.a is None or p.b is None:
        return [f"{head}: only in {'A' if p.b is None else 'B'}"]
    if p.same:
        return [f"{head}: same"]
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
    return out


def render(a: Side, b: Side, d: Diff) -> list[str]:
    pairs = plural(len(d.pairs), "stream pair")
    how = PAIRED.get(d.paired_by, "paired by position (no exchanges or requests to match)")
    out = [
        f"A: {visible(a.source)} ({a.format})",
        f"B: {visible(b.source)} ({b.format})",
        f"{pairs}, {how}",
    ]
    for p in d.pairs:
        out += _pair(p)
    for word, side, found in (("appears", "B", d.contract_added), ("gone", "A", d.contract_gone)):
        for f in found:
            out.append(
                f"contract finding {word}: {f.kind} ({f.severity}, {side} exchange {f.exchange}): "
                + visible(f.message)
            )
    out.append("same" if d.same else "differ")
    return out
