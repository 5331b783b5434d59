"""How the dialect laws read a stream, and what they compare: used by tests/dialects/
test_laws.py on every registered dialect, and by a dialect's own tests where one stream of
theirs must keep a law (the fast path on a candidate index that is no integer...)."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.engine import Engine, StreamResult
from streamscope.core.frames import Frame
from streamscope.dialects import ANOMALY_KINDS as KINDS

from .anthropic.events import calls, kinds


def named_at_its_frame(result: StreamResult, kind: str, dialect: str) -> None:
    """`kind` fired on `result`, with its registered severity, one line of words and no
    Python None, at a frame of the stream."""
    assert kind in kinds(result), [a.to_json() for a in result.anomalies]
    anomaly = next(a for a in result.anomalies if a.kind == kind)
    assert anomaly.severity == KINDS[kind][0]
    assert anomaly.message and "\n" not in anomaly.message and "None" not in anomaly.message
    assert 1 <= anomaly.frame <= result.frames
    assert result.dialect == dialect


def report_shows_no_python_none(body: bytes, path) -> None:
    """`inspect`'s report on `body` exits 0 and never prints a Python None (a client's own
    exception quoted is its text)."""
    path.write_bytes(body)
    report = CliRunner().invoke(main, ["inspect", str(path)])
    assert report.exit_code == 0, report.output
    ours = [line for line in report.output.splitlines() if " raises " not in line]
    assert not [line for line in ours if "None" in line], report.output


def same(a: StreamResult, b: StreamResult, strategies: bool = True) -> None:
    assert calls(a) == calls(b)
    assert [x.to_json() for x in a.anomalies] == [x.to_json() for x in b.anomalies]
    if strategies:
        assert {k: repr(v) for k, v in a.strategies.items()} == {
            k: repr(v) for k, v in b.strategies.items()
        }


def read(
    engine: Engine, framing: Any, body: bytes, cuts: tuple[int, ...] | list[int] = ()
) -> StreamResult:
    """`body` fed to a fresh `framing()` in pieces of the sizes `cuts` (then the rest), each
    event it delivers to `engine`, and the stream finished with the framing's truncation."""
    decoder, at = framing(), 0
    for size in [*cuts, len(body)]:
        for frame in decoder.feed(body[at : at + size], 0):
            engine.feed(frame)
        at += size
    for frame in getattr(decoder, "flush", list)():  # what only the body's end completes
        engine.feed(frame)
    return engine.finish(decoder.finish())


def frames_of(framing: Any, body: bytes) -> list[Frame]:
    """The events `framing` delivers from the whole body."""
    decoder = framing()
    found = list(decoder.feed(body, 0))
    found += getattr(decoder, "flush", list)()
    decoder.finish()
    return found


def copy_carries_on(engine_class: Any, found: list[Frame], at: int) -> None:
    """A copy taken at any frame (mid-call too) and its original, then fed different
    frames in turn (the original skips one: another stream from there), each reads as a
    fresh engine fed the same frames beside it, its calls asked for or shown (sealed)
    midway or not: neither's feeding reaches the other (copies share the calls neither
    changed: copy on write)."""
    engine = engine_class()
    for frame in found[:at]:
        engine.feed(frame)
    twin = engine.copy()
    sides = []
    for fed, tail in ((twin, found[at:]), (engine, found[at + 1 :])):
        fresh = engine_class()
        for frame in found[:at]:
            fresh.feed(frame)
        sides.append((fed, tail, fresh))
    if at % 2:  # who goes first: the original (its fast path carries on past the copy) or the copy
        sides.reverse()
    for k in range(len(found) - at):
        for j, (fed, tail, fresh) in enumerate(sides):
            if k < len(tail):
                fed.feed(tail[k])
                fresh.feed(tail[k])
            if k % (3 + j) < 2:  # its calls asked for, then shown as the replay shows a frame
                assert shown(fed, sealed=k % (3 + j) == 0) == shown(fresh, sealed=False)
    for fed, _, fresh in sides:
        assert shown(fed) == shown(fresh, sealed=False)
        same(fresh.finish(), fed.finish())


def shown(engine: Engine, sealed: bool = True) -> dict[str, str]:
    """Every strategy's calls now; `sealed`: as the replay shows a frame (sealed after it:
    a change after it copies first)."""
    views = {name: repr(v) for name, v in engine.strategy_calls().items()}
    if sealed:
        engine.seal()
    return views


def fast_path_reads_alike(engine_class: Any, found: list[Frame]) -> None:
    fast, slow = engine_class(), engine_class()
    for frame in found:
        fast.feed(frame)
        slow.collect_events = True  # field events asked for: every frame through every rule
        slow.feed(frame)
    same(fast.finish(), slow.finish())
