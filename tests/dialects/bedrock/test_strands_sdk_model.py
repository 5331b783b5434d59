"""The `strands` emulation against the real strands-agents fold on the same bytes.

Each stream is written as event stream messages; the real side reads them with botocore's
own EventStream (the bedrock-runtime model's ConverseStream shape: what boto3 yields to
strands' BedrockModel) and folds them with `strands.event_loop.streaming.process_stream`;
the emulation reads the frames streamscope's framing cut. Both must build the same calls
(toolUseId, name, type, input) or raise the same error at the same frame.
"""

from __future__ import annotations

import importlib.metadata

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.core.calls import StrategyError, Unmodeled
from streamscope.core.frames import Frame, parse_payload
from streamscope.dialects.bedrock.oracle import (
    botocore_events,
    run_real_strands,
    strands_result,
    stream_shape,
)
from streamscope.dialects.bedrock.sdk_model import SHAPES, StrandsEmulation
from streamscope.dialects.versions import VERIFIED

from .events import (
    Raw,
    end,
    event,
    exception,
    frames,
    inp,
    metadata,
    start,
    stop,
    text,
    think,
    tool,
)
from .test_bedrock import AFTER, CASES, TWO, WEATHER

pytest.importorskip("strands")
pytestmark = pytest.mark.slow


def emulated(events):
    emu = StrandsEmulation()
    found = frames(events)
    for frame in found:
        emu.feed(frame)
    return emu.finish(found[-1].number if found else 0)


def same(events) -> bool:
    """Whether the emulation answers as the real fold does (False: it declined)."""
    try:
        mine = emulated(events)
    except Unmodeled:
        return False
    real = run_real_strands(frames(events))
    if isinstance(real, StrategyError) or isinstance(mine, StrategyError):
        assert (mine.error, mine.frame) == (real.error, real.frame)  # type: ignore[union-attr]
    else:
        assert [c.key() for c in mine] == [c.key() for c in real]
    return True


def test_the_verified_release_is_installed():
    assert importlib.metadata.version("strands-agents") == VERIFIED["strands-agents"]


def test_the_emulations_shapes_are_botocores():
    """Every event and member the emulation parses is the model's, in the model's order."""
    shape = stream_shape()

    def walk(mine, theirs, where):
        if isinstance(mine, dict):
            assert theirs.type_name == "structure" and not theirs.is_tagged_union, where
            assert list(mine) == list(theirs.members), where
            for k, v in mine.items():
                walk(v, theirs.members[k], f"{where}.{k}")
        elif isinstance(mine, tuple) and mine[0] == "union":
            assert theirs.is_tagged_union and list(mine[1]) == list(theirs.members), where
            for k, v in mine[1].items():
                walk(v, theirs.members[k], f"{where}.{k}")
        elif isinstance(mine, tuple):
            assert theirs.type_name == "list", where
            walk(mine[1], theirs.member, f"{where}[]")
        elif mine == "b":
            assert theirs.type_name == "blob", where
        elif mine == "d":
            assert theirs.is_document_type, where
        elif mine == "s":
            assert theirs.type_name in ("string", "integer", "long", "boolean", "double"), where

    assert set(SHAPES) == set(shape.members)
    for name, mine in SHAPES.items():
        walk(mine, shape.members[name], name)


@pytest.mark.parametrize(
    "events",
    [
        WEATHER,
        AFTER,
        TWO,
        *(case[0] for case in CASES.values() if case[0] is not None),
        [
            start(),
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x", "p": "ab"}}),
        ],
        [start(), event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"video": {}}})],
        [start(), event("contentBlockStart", {"contentBlockIndex": 0, "start": {}})],
        [start(), event("contentBlockStart", {"contentBlockIndex": 0})],
        [event("messageStart", {})],
        [tool(0), inp(0, "  "), stop(0)],
        [tool(0, tid=None), inp(0, "{}"), stop(0)],
        [tool(0), inp(0, "[1, 2]"), stop(0)],
        [tool(0), inp(0, '{"x": NaN}'), stop(0)],
        [inp(0, '{"a": 1}'), stop(0)],
        [start(), exception("validationException", "bad input")],
        [start(), Raw("accessDeniedException", b'{"message": "no"}', "exception")],
        [start(), Raw("messageStop", b"not json"), metadata()],
        [start(), Raw("contentBlockStop", b""), end()],
    ],
)
def test_the_emulation_builds_what_strands_builds(events):
    assert same(events)


_index = st.integers(0, 2)
_input = st.sampled_from(["", " ", "{", '"city": "Paris"', "}", "{}", '{"a": 1}', "[", "]"])
_events = st.one_of(
    st.just(start()),
    st.builds(
        tool,
        _index,
        st.sampled_from(["tooluse_a", "tooluse_b", ""]),
        st.sampled_from(["get_weather", "get_time", ""]),
        st.sampled_from([None, "server_tool_use"]),
    ),
    st.builds(inp, _index, _input),
    st.builds(text, _index, st.text(max_size=5)),
    st.builds(think, _index, st.text(max_size=5)),
    st.builds(stop, _index),
    st.builds(end, st.sampled_from(["tool_use", "end_turn", "max_tokens"])),
    st.just(metadata()),
    st.just(exception()),
    st.sampled_from(
        [
            Raw("contentBlockDelta", b"{not json"),
            Raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{}}'),
            Raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"toolUse":{}}}'),
            Raw("contentBlockStart", b'{"contentBlockIndex":1,"start":{"image":{"format":"png"}}}'),
            Raw("somethingNew", b"{}"),
        ]
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_events, max_size=12))
def test_on_random_streams_the_emulation_builds_what_strands_builds(events):
    same(events)


def test_where_the_emulation_declines_the_real_fold_answers():
    events = [
        tool(0),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": 7}}}),
        stop(0),
    ]
    with pytest.raises(Unmodeled):
        emulated(events)
    got = strands_result(frames(events))
    assert isinstance(got, StrategyError) and got.error.startswith("TypeError")


@pytest.mark.parametrize("events", [WEATHER, TWO, AFTER], ids=["weather", "two", "after"])
def test_a_chunk_log_of_what_boto3_yields_builds_what_strands_builds(events):
    # each line of a chunk log is an event boto3 yielded (`{"contentBlockStart": ...}`,
    # no headers): the emulation declined them all and showed 0 calls where strands
    # builds the stream's calls
    _, yielded = botocore_events(frames(events))
    log = [
        Frame(n, data, parse_payload(data))
        for n, data in enumerate((orjson.dumps(e).decode() for e in yielded), 1)
    ]
    emu = StrandsEmulation()
    for frame in log:
        emu.feed(frame)
    mine = emu.finish(len(log))
    real = run_real_strands(frames(events))
    assert not isinstance(real, StrategyError) and real
    assert [c.key() for c in mine] == [c.key() for c in real]  # type: ignore[union-attr]
