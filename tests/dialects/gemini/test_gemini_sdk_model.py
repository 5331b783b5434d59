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


def _users_args(body: bytes) -> list[str]:
    """`json.dumps(fc.args or {})`, compact, of every call a user of the real google-genai
    collects from the SSE body: what the `parts` client stands for."""
    import httpx2
    from google import genai
    from google.genai import types

    def handler(request):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = genai.Client(
        api_key="x",
        http_options=types.HttpOptions(
            base_url="http://streamscope.invalid",
            httpx_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        ),
    )
    stream = client.models.generate_content_stream(model="m", contents="-")
    calls = [fc for chunk in stream for fc in chunk.function_calls or []]
    return [json.dumps(fc.args or {}, ensure_ascii=False, separators=(",", ":")) for fc in calls]


def test_nan_and_infinity_in_args_are_collected_as_the_sdk_holds_them():
    # (JSON has no NaN, but the SDK's json.loads reads it, and a user's json.dumps(fc.args)
    # writes it back as NaN; pydantic's JSON-mode dump of the call writes null)
    from streamscope.framing.sse import decode_body

    args = {"a": float("nan"), "b": float("inf"), "c": -float("inf"), "d": [1, 0.5], "e": "x"}
    body = b"data: " + json.dumps(chunk(call("get_weather", args))).encode() + b"\n\n"
    want = _users_args(body)
    assert want == ['{"a":NaN,"b":Infinity,"c":-Infinity,"d":[1,0.5],"e":"x"}']
    found, _ = decode_body(body)
    got = parts_result(found)
    assert not isinstance(got, (StrategyError, Unmodeled)), got
    assert [c.arguments for c in got] == want
