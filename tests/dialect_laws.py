"""The laws every dialect engine keeps, checked on random streams by each dialect's tests:
the same bytes cut anywhere read alike, a copy taken anywhere carries on as the original,
and the fast path reads as every rule does."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.anomalies import KINDS
from streamscope.core.engine import StreamResult
from streamscope.framing.sse import SseDecoder

from .anthropic_events import calls, frames, kinds, sse


def named_at_its_frame(result: StreamResult, kind: str, dialect: str) -> None:
    """`kind` fired on `result`, with its registered severity, one line of words and no
    Python None, at a frame of the stream."""
    assert kind in kinds(result), [a.to_json() for a in result.anomalies]
    anomaly = next(a for a in result.anomalies if a.kind == kind)
    assert anomaly.severity == KINDS[kind][0]
    assert anomaly.message and "\n" not in anomaly.message and "None" not in anomaly.message
    assert 1 <= anomaly.frame <= result.frames
    assert result.dialect == dialect


def reports_show_no_python_none(cases: dict, path) -> None:
    """`inspect`'s report on every case's events (those run with no extra arguments)
    never prints a Python None (a client's own exception quoted is its text)."""
    for kind, (events, _, extra) in cases.items():
        if events is None or extra:
            continue
        path.write_bytes(sse(events))
        report = CliRunner().invoke(main, ["inspect", str(path)])
        assert report.exit_code == 0, report.output
        ours = [line for line in report.output.splitlines() if " raises " not in line]
        assert not [line for line in ours if "None" in line], (kind, report.output)


def same(a: StreamResult, b: StreamResult, strategies: bool = True) -> None:
    assert calls(a) == calls(b)
    assert [x.to_json() for x in a.anomalies] == [x.to_json() for x in b.anomalies]
    if strategies:
        assert {k: repr(v) for k, v in a.strategies.items()} == {
            k: repr(v) for k, v in b.strategies.items()
        }


def rechunked(engine_class: type, events: list[Any], cuts: list[int], named: bool) -> StreamResult:
    """The stream's bytes fed in pieces of the sizes `cuts` (then the rest); `same` as the
    whole body read at once."""
    body = sse(events, named)
    decoder, engine, at = SseDecoder(), engine_class(), 0
    for size in [*cuts, len(body)]:
        for frame in decoder.feed(body[at : at + size], 0):
            engine.feed(frame)
        at += size
    return engine.finish(decoder.finish())


def copy_carries_on(engine_class: type, events: list[Any], at: int) -> None:
    found = frames(events)
    engine = engine_class()
    for frame in found[:at]:
        engine.feed(frame)
    twin = engine.copy()
    for frame in found[at:]:
        engine.feed(frame)
        twin.feed(frame)
    same(engine.finish(), twin.finish())


def fast_path_reads_alike(engine_class: type, events: list[Any]) -> None:
    fast, slow = engine_class(), engine_class()
    for frame in frames(events):
        fast.feed(frame)
        slow.collect_events = True  # field events asked for: every frame through every rule
        slow.feed(frame)
    same(fast.finish(), slow.finish())
