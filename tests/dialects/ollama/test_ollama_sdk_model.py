"""`ollama-python` (sdk_model.OllamaPythonEmulation) against the real ollama client: what
its users collect from every chunk's `message.tool_calls`, on the same lines."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from streamscope.core.calls import StrategyError, Unmodeled
from streamscope.dialects.ollama.oracle import ollama_result, run_real_ollama
from streamscope.dialects.ollama.sdk_model import OllamaPythonEmulation

from .events import lines
from .test_ollama import CASES, FIXTURES, streams

pytest.importorskip("ollama")


def _emulated(found):
    emu = OllamaPythonEmulation()
    try:
        for frame in found:
            emu.feed(frame)
    except Unmodeled:
        return None
    return emu.finish(found[-1].number if found else 0)


def _key(got):
    if isinstance(got, StrategyError):
        return ("raises", got.error.split(":")[0], got.frame)
    return [(c.id, c.name, c.arguments, c.first_frame) for c in got]


def _same(found) -> None:
    mine = _emulated(found)
    if mine is None:  # declined: the real client answers for it
        assert not isinstance(ollama_result(found), Unmodeled)
        return
    real = run_real_ollama(found)
    assert _key(mine) == _key(real)
    if isinstance(mine, StrategyError):
        assert mine.error == real.error


@pytest.mark.parametrize("kind", sorted(CASES))
def test_every_case_collects_as_the_real_client_does(kind):
    _same(lines(CASES[kind][0]))


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.ndjson")), ids=lambda p: p.name)
def test_the_projects_streams_collect_as_the_real_client_does(path):
    from streamscope.framing.ndjson import LineDecoder

    decoder = LineDecoder()
    found = [f for raw in path.read_bytes().splitlines(keepends=True) for f in decoder.feed(raw, 0)]
    _same(found)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams)
def test_random_streams_collect_as_the_real_client_does(events):
    _same(lines(events))


def test_the_client_keeps_no_id_and_raises_on_an_error_line():
    found = lines(
        [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {}}}],
                },
                "done": False,
            },
            '{"error":"boom"}',
        ]
    )
    got = run_real_ollama(found)
    assert isinstance(got, StrategyError) and got.frame == 2
    assert _key(_emulated(found)) == _key(got)
    assert [c.id for c in _emulated(found[:1])] == [""]
