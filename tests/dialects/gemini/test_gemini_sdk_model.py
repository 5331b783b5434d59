"""`parts` (sdk_model.PartsEmulation) against the real google-genai client: what its users
collect from every chunk's `function_calls`, on the same frames."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from streamscope.core.calls import StrategyError, Unmodeled
from streamscope.dialects.gemini.oracle import parts_result, run_real_genai
from streamscope.dialects.gemini.sdk_model import PartsEmulation

from .events import call, chunk, frames
from .test_gemini import CASES, FIXTURES, streams

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

pytest.importorskip("google.genai")


def _emulated(found):
    emu = PartsEmulation()
    try:
        for frame in found:
            emu.feed(frame)
    except Unmodeled:
        return None
    return emu.finish(found[-1].number if found else 0)


def _same(found) -> None:
    mine = _emulated(found)
    if mine is None:  # declined: the real client answers for it
        assert not isinstance(parts_result(found), Unmodeled)
        return
    real = run_real_genai(found)
    assert not isinstance(real, StrategyError), real
    assert [(c.id, c.name, c.arguments, c.first_frame) for c in mine] == [
        (c.id, c.name, c.arguments, c.first_frame) for c in real
    ]


@pytest.mark.parametrize("kind", sorted(k for k in CASES if CASES[k][0] is not None))
def test_every_case_collects_as_the_real_client_does(kind):
    _same(frames(CASES[kind][0], named=False))


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.sse")), ids=lambda p: p.name)
def test_the_projects_streams_collect_as_the_real_client_does(path):
    from streamscope.framing.sse import decode_body

    found, _ = decode_body(path.read_bytes())
    _same(found)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams)
def test_random_streams_collect_as_the_real_client_does(events):
    _same(frames(events, named=False))


def test_a_chunk_that_is_not_json_is_what_the_real_client_raises_on():
    got = parts_result(frames([{"candidates": []}, "{not json"], named=False))
    assert isinstance(got, StrategyError) and got.frame == 2


def test_a_key_holding_a_lone_surrogate_is_collected_as_sent():
    # (sent as its JSON escape, as json.dumps writes it; pydantic's JSON mode would write
    # it mangled, U+FFFD a byte)
    from streamscope.framing.sse import decode_body

    doc = chunk(call("get_weather", {"city": "Paris", "\ud800x": 1}))
    found, _ = decode_body(b"data: " + json.dumps(doc).encode() + b"\n\n")
    real = run_real_genai(found)
    assert not isinstance(real, StrategyError), real
    assert [c.arguments for c in real] == ['{"city":"Paris","\ud800x":1}']
    _same(found)  # and the emulation collects the same
