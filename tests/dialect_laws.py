"""The laws every dialect engine keeps, checked on random streams by each dialect's tests:
the same bytes cut anywhere read alike, a copy taken anywhere carries on as the original,
and the fast path reads as every rule does."""

from __future__ import annotations

from typing import Any

from streamscope.core.engine import StreamResult
from streamscope.core.sse import SseDecoder

from .anthropic_events import calls, frames, sse


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
