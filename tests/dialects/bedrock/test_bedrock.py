"""Bedrock Converse read end to end: the reading (text blocks without a start, calls keyed
by contentBlockIndex, no-argument tools, server tools, exceptions), every anomaly kind of
the dialect, the clients, bad input, the request claims and facts, the final-event watch,
the contract, the CLI on saved bodies and the sample."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.core.history import Tool
from streamscope.dialects import ANOMALY_KINDS as KINDS
from streamscope.dialects import DIALECTS, claimant, of_frames, of_request, request_facts
from streamscope.dialects.bedrock import wire
from streamscope.dialects.bedrock.engine import BedrockEngine, plain_fragment
from streamscope.dialects.bedrock.summary import summarize
from streamscope.framing.aws_eventstream import EventStreamDecoder, encode
from streamscope.framing.sse import SseDecoder
from streamscope.recording import RecordingWriter

from ..anthropic.test_anthropic import CHAT_ONLY
from .events import (
    WEATHER,
    WEATHER_TOOLS,
    Raw,
    body,
    calls,
    end,
    event,
    exception,
    frames,
    inp,
    kinds,
    metadata,
    run,
    start,
    stop,
    text,
    think,
    tool,
)

SAMPLES = Path(__file__).parents[3] / "recordings"
BEDROCK = DIALECTS["bedrock-converse"]

# The sample's trap: text block 0 (no start), toolUse block 1, then text block 2 (no start).
AFTER = [
    start(),
    text(0, "Let me look that up."),
    stop(0),
    tool(1),
    inp(1, '{"city": "Paris"}'),
    stop(1),
    text(2, "Checking now."),
    stop(2),
    end("tool_use"),
    metadata(),
]
TWO = [
    start(),
    tool(0, "tooluse_a", "get_weather"),
    tool(1, "tooluse_b", "get_time"),
    inp(0, '{"city":'),
    inp(1, '{"tz": "CET"}'),
    inp(0, ' "Paris"}'),
    stop(0),
    stop(1),
    end("tool_use"),
    metadata(),
]
_CUT_STOP = [e for k, e in enumerate(WEATHER) if k != 8]

# kind -> (events that trigger it, events like them that must not, run() arguments)
CASES: dict[str, tuple[list | None, list | None, dict]] = {
    "tool-delta-without-start": (
        [start(), inp(0, '{"a": 1}'), stop(0), end("end_turn")],
        WEATHER,
        {},
    ),
    "text-after-tool-start": (AFTER, WEATHER, {}),
    "block-type-changed": (
        [start(), text(0, "Hi"), inp(0, "{}"), stop(0), end("end_turn"), metadata()],
        WEATHER,
        {},
    ),
    "tool-input-empty": (
        [start(), tool(0, name="get_time"), inp(0, ""), stop(0), end(), metadata()],
        WEATHER,
        {},
    ),
    "tool-use-without-calls": (
        [start(), text(0, "Sure."), stop(0), end("tool_use"), metadata()],
        [start(), text(0, "Sure."), stop(0), end("end_turn"), metadata()],
        {},
    ),
    "server-tool-use": (
        [
            start(),
            tool(0, "srvtoolu_1", "web_search", "server_tool_use"),
            inp(0, '{"query": "Paris weather"}'),
            stop(0),
            end("end_turn"),
            metadata(),
        ],
        WEATHER,
        {},
    ),
    "event-after-stop": ([*WEATHER, text(2, "more")], WEATHER, {}),
    "block-stop-missing": (_CUT_STOP, WEATHER, {}),
    "block-index-reused": (
        [start(), tool(0), inp(0, "{}"), tool(0, "tooluse_b", "get_time"), inp(0, "{}"), stop(0)]
        + [end(), metadata()],
        TWO,
        {},
    ),
    "message-stop-missing": (WEATHER[:9], WEATHER, {}),
    "stop-reason-mismatch": ([*WEATHER[:9], end("end_turn"), metadata()], WEATHER, {}),
    "provider-error": ([*WEATHER[:3], exception()], WEATHER, {}),
    "chunk-invalid-json": (
        [*WEATHER[:3], Raw("contentBlockDelta", b"{not json"), *WEATHER[3:]],
        WEATHER,
        {},
    ),
    "event-schema-violation": (
        [start(), event("contentBlockDelta", {"delta": {"text": "x"}}), *WEATHER[1:]],
        WEATHER,
        {},
    ),
    "event-unknown": ([start(), event("somethingNew", {}), *WEATHER[1:]], WEATHER, {}),
    "interleaved": (TWO, WEATHER, {}),
    "id-reused": (
        [start(), tool(0), inp(0, "{}"), stop(0), tool(1), inp(1, "{}"), stop(1), end()]
        + [metadata()],
        TWO,
        {},
    ),
    "id-missing": (
        [start(), tool(0, tid=None), inp(0, "{}"), stop(0), end(), metadata()],
        WEATHER,
        {},
    ),
    "name-missing": (
        [start(), tool(0, name=""), inp(0, "{}"), stop(0), end(), metadata()],
        WEATHER,
        {},
    ),
    "name-undeclared": (
        [start(), tool(0, name="get_news"), inp(0, "{}"), stop(0), end(), metadata()],
        WEATHER,
        {"tools": WEATHER_TOOLS},
    ),
    "args-invalid-json": (
        [start(), tool(0), inp(0, '{"city": "Par'), stop(0), end(), metadata()],
        WEATHER,
        {},
    ),
    "args-empty": ([start(), tool(0)], WEATHER[:9], {}),
    "tool-call-in-content": (
        [start(), text(0, '{"name": "get_weather", "arguments": {}}'), stop(0), end("end_turn")],
        [start(), text(0, "Sunny."), stop(0), end("end_turn")],
        {},
    ),
    "stream-truncated": (WEATHER, WEATHER, {"end_reason": "upstream-error"}),
}
QUIET_EXTRA = {"stream-truncated": {}}
# Kinds in other dialects' words: never on a Bedrock Converse stream.
NOT_HERE = frozenset(CHAT_ONLY - {"id-changed", "id-missing"}) | {
    "block-start-input-nonempty",
    "partial-json-empty",
    "block-delta-without-start",
    "message-start-repeated",
    "event-name-missing",
    "args-done-only",
    "args-done-mismatch",
    "delta-unknown-item",
    "items-interleaved",
    "sequence-disorder",
    "thought-signature",
    "parallel-in-one-chunk",
    "call-before-done",
    "done-line-missing",
}


def test_every_own_kind_is_registered_and_has_a_case():
    own = BEDROCK.kinds
    assert own and set(own) <= set(KINDS) and set(own) <= set(CASES)


# -- the reading ----------------------------------------------------------------------------


def test_text_without_a_start_and_a_call_keyed_by_its_index():
    result = run(WEATHER, WEATHER_TOOLS)
    assert calls(result) == [(0, 1, "tooluse_a1", "get_weather", "toolUse", '{"city": "Paris"}')]
    assert result.dialect == "bedrock-converse" and result.ended == "done"
    assert result.finish_reason == "tool_use" and result.content == "Let me check the weather."
    assert [a.kind for a in result.anomalies] == []
    for name in ("strands", "last-start", "stop-on-end-turn"):
        assert result.differs(name) is False, name
    assert result.differs("start-only")  # every call with {}
    (sdk,) = result.strategies["strands"]
    assert sdk.arguments == '{"city":"Paris"}'  # the parsed input, written back compact


def test_last_start_glues_the_next_text_block_onto_the_call():
    result = run(AFTER)
    assert calls(result)[0][5] == '{"city": "Paris"}'
    assert result.content == "Let me look that up.Checking now."
    (glued,) = result.strategies["last-start"]
    assert glued.arguments == '{"city": "Paris"}Checking now.'
    assert result.differs("last-start") and not result.differs("strands")
    (found,) = [a for a in result.anomalies if a.kind == "text-after-tool-start"]
    assert found.frame == 7 and found.index == 2


def test_an_empty_start_opens_a_block_its_first_delta_types():
    """`"start": {}` names no type: text deltas after it are that block's text (no
    block-type-changed, no "starts null"); a toolUse delta there carries no id or name."""
    empty = event("contentBlockStart", {"contentBlockIndex": 0, "start": {}})
    result = run([start(), empty, text(0, "Hello"), stop(0), end("end_turn"), metadata()])
    assert result.content == "Hello" and not result.anomalies
    result = run([start(), empty, inp(0, '{"a": 1}'), stop(0), end("end_turn"), metadata()])
    (found,) = [a for a in result.anomalies if a.kind == "tool-delta-without-start"]
    assert "named no toolUse" in found.message and not result.tool_calls


def test_a_tool_without_arguments_reads_as_an_empty_object_and_says_so():
    for events in (
        [start(), tool(0, name="get_time"), inp(0, ""), stop(0), end(), metadata()],
        [start(), tool(0, name="get_time"), stop(0), end(), metadata()],  # no delta at all
    ):
        result = run(events)
        assert [c.arguments for c in result.tool_calls] == ["{}"]
        assert "tool-input-empty" in kinds(result) and "args-empty" not in kinds(result)
        assert not result.differs("strands")


def test_an_open_tool_block_at_the_end_keeps_what_came_and_says_it_is_cut():
    result = run(_CUT_STOP)
    assert calls(result)[0][5] == '{"city": "Paris"}'
    assert "block-stop-missing" in kinds(result)
    # strands builds a toolUse only at contentBlockStop: it runs nothing
    assert result.strategies["strands"] == []


def test_parallel_calls_keep_their_own_input_strands_merges_them():
    result = run(TWO)
    assert [(c.index, c.id, c.arguments) for c in result.tool_calls] == [
        (0, "tooluse_a", '{"city": "Paris"}'),
        (1, "tooluse_b", '{"tz": "CET"}'),
    ]
    # one current tool use: the second start replaces the first, whose fragments it gets
    (merged,) = result.strategies["strands"]
    assert merged.id == "tooluse_b" and merged.arguments == "{}"  # the glued text fails json
    (last,) = [c for c in result.strategies["last-start"] if c.id == "tooluse_b"]
    assert last.arguments == '{"city":{"tz": "CET"} "Paris"}'


def test_a_second_start_at_one_index_keeps_both_calls():
    events = CASES["block-index-reused"][0]
    result = run(events)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("tooluse_a1", "get_weather", "{}"),
        ("tooluse_b", "get_time", "{}"),
    ]


def test_end_turn_with_calls_is_a_mismatch_the_trusting_client_drops():
    result = run(CASES["stop-reason-mismatch"][0])
    assert result.strategies["stop-on-end-turn"] == []
    assert len(result.strategies["strands"]) == 1  # strands overrides end_turn to tool_use


def test_a_server_tool_use_is_no_call_the_client_answers():
    result = run(CASES["server-tool-use"][0], WEATHER_TOOLS)
    (call,) = result.tool_calls
    assert call.type == "server_tool_use" and call.name == "web_search"
    # not declared in toolConfig (Bedrock's own), and end_turn is right for it
    assert not {"name-undeclared", "stop-reason-mismatch"} & kinds(result)
    (sdk,) = result.strategies["strands"]
    assert sdk.type == "toolUse" and result.differs("strands")  # strands would run it


def test_server_tool_result_blocks_are_no_calls():
    events = [
        start(),
        tool(0, "srvtoolu_1", "web_search", "server_tool_use"),
        inp(0, '{"query": "x"}'),
        stop(0),
        event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolResult": {"toolUseId": "srvtoolu_1"}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "Sunny"}]}},
        ),
        stop(1),
        text(2, "It is sunny."),
        stop(2),
        end("end_turn"),
        metadata(),
    ]
    result = run(events)
    assert [c.id for c in result.tool_calls] == ["srvtoolu_1"]
    assert result.content == "It is sunny."
    assert kinds(result) == {"server-tool-use"}


def test_reasoning_is_the_reasoning_and_a_signature_says_nothing():
    events = [
        start(),
        think(0, "The user wants"),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}},
        ),
        stop(0),
        text(1, "Sunny."),
        stop(1),
        end("end_turn"),
        metadata(),
    ]
    result = run(events)
    assert (result.reasoning_content, result.content) == ("The user wants", "Sunny.")
    assert kinds(result) == set()


def test_an_exception_mid_stream_ends_it_with_its_type_and_message():
    result = run([*WEATHER[:5], exception("modelStreamErrorException", "The model failed")])
    assert result.ended == "error" and "message-stop-missing" not in kinds(result)
    (error,) = [a for a in result.anomalies if a.kind == "provider-error"]
    assert "modelStreamErrorException" in error.message and "The model failed" in error.message
    sdk = result.strategies["strands"]
    assert sdk.error == (
        "EventStreamError: An error occurred (modelStreamErrorException) when calling the "
        "ConverseStream operation: The model failed"
    )
    assert sdk.frame == 6


def test_a_bad_crc_is_a_finding_at_its_frame_and_the_rest_reads_on():
    bad = Raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"x"}}', crc=False)
    result = run([*WEATHER[:3], bad, *WEATHER[3:]])
    (found,) = [a for a in result.anomalies if a.kind == "frame-invalid"]
    assert found.frame == 4 and "CRC" in found.message
    assert calls(result) == calls(run(WEATHER)) and result.content == "Let me check the weather."


def test_bytes_that_are_not_utf8_are_named():
    bad = Raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"\xff"}}')
    result = run([*WEATHER[:3], bad, *WEATHER[3:]])
    assert "invalid-utf8" in kinds(result) and calls(result) == calls(run(WEATHER))


def test_the_fast_path_reading_names_input_deltas_only():
    assert plain_fragment(inp(1, '{"a"')[1]) == (1, '{"a"')
    assert plain_fragment(text(0, "hi")[1]) is None
    assert plain_fragment({"contentBlockIndex": True, "delta": {"toolUse": {"input": ""}}}) is None


def test_each_frame_reads_in_one_line():
    lines = [summarize(f) for f in frames([*WEATHER, exception()])]
    assert lines[:5] == [
        "messageStart assistant",
        'b0 text+"Let me check "',
        'b0 text+"the weather."',
        "b0 stop",
        'b1 start toolUse id="tooluse_a1" name="get_weather"',
    ]
    assert lines[-3:] == [
        "messageStop tool_use",
        "metadata 53 tokens out",
        'throttlingException "Too many requests"',
    ]


def test_a_chunk_log_of_what_botocore_yields_reads_alike():
    decoder = SseDecoder()
    logged = b"".join(
        b"data: " + json.dumps({name: body_}).encode() + b"\n\n" for name, body_ in WEATHER
    )
    found = decoder.feed(logged, 0)
    assert of_frames(found) == "bedrock-converse"
    engine = BedrockEngine()
    for frame in found:
        engine.feed(frame)
    assert calls(engine.finish(expect_done=False)) == calls(run(WEATHER))


# -- the wire -------------------------------------------------------------------------------

_BODY = {"messages": [{"role": "user", "content": [{"text": "Weather?"}]}]}


@pytest.mark.parametrize(
    ("url", "model", "stream"),
    [
        ("/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse-stream", None, True),
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4"
            "-20250514-v1%3A0/converse",
            "us.anthropic.claude-sonnet-4-20250514-v1:0",
            False,
        ),
        (
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.amazon"
            ".nova-pro-v1%3A0/converse-stream",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-pro-v1:0",
            True,
        ),
        (
            "/gateway/model/arn:aws:bedrock:x:1:application-inference-profile/ab12/converse",
            None,
            False,
        ),
    ],
)
def test_requests_it_claims_and_their_facts(url, model, stream):
    assert claimant(url, _BODY) is BEDROCK
    facts = request_facts(BEDROCK, url, {**_BODY, "toolConfig": {"tools": WEATHER_TOOLS}})
    assert facts.stream is stream and facts.tools == WEATHER_TOOLS
    assert facts.model == (model or url.split("/model/", 1)[1].rsplit("/converse", 1)[0])


@pytest.mark.parametrize(
    "url",
    [
        "/v1/chat/completions",
        "/v1/messages",
        "/model/anthropic.claude-v2/invoke-with-response-stream",
        "/model/anthropic.claude-v2/invoke",
        "/api/chat",
        "/v1beta/models/gemini-2.0-flash:streamGenerateContent",
        "/converse",
    ],
)
def test_requests_it_does_not_claim(url):
    assert claimant(url, _BODY) is not BEDROCK


def test_a_converse_body_to_another_path_looks_like_it():
    sent = {
        "messages": [
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}],
            }
        ]
    }
    assert of_request("/proxy/chat", sent) == "bedrock-converse"
    assert of_request("/proxy/chat", {"messages": [], "inferenceConfig": {"maxTokens": 9}}) == (
        "bedrock-converse"
    )
    assert not wire.claims_body({"messages": [{"role": "user", "content": "hi"}]})


def test_the_error_document_is_bedrocks():
    assert orjson.loads(wire.error_document(429, "ThrottlingException", "slow down")) == {
        "message": "slow down"
    }


def test_the_final_event_watch_sees_metadata_whole_across_any_cut():
    data = body(WEATHER)
    for size in (1, 7, 13, 64, len(data)):
        watch = wire.final_event("/model/m/converse-stream", "aws-eventstream")
        for at in range(0, len(data), size):
            assert not watch.relayed  # (metadata is the last message)
            watch.seen(data[at : at + size])
        assert watch.relayed, size
    watch = wire.final_event("/model/m/converse-stream", "aws-eventstream")
    watch.seen(body(WEATHER[:-1]))
    assert not watch.relayed
    watch.seen(body(WEATHER[-1:])[:-1])  # its last CRC byte still to come
    assert not watch.relayed


# -- the contract ---------------------------------------------------------------------------


def _recording(tmp_path: Path, back: dict) -> Path:
    """Two exchanges: the WEATHER stream, then the request carrying `back` (the toolUse
    block sent back) and a toolResult for tooluse_a1."""
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream"
    first = {**_BODY, "toolConfig": {"tools": WEATHER_TOOLS}}
    second = {
        **first,
        "messages": [
            *_BODY["messages"],
            {"role": "assistant", "content": [{"text": "Let me check the weather."}, back]},
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "tooluse_a1", "content": [{"text": "Sunny"}]}}
                ],
            },
        ],
    }
    path = tmp_path / "bedrock.jsonl"
    head = [("content-type", "application/json")]
    streamed = [("content-type", "application/vnd.amazon.eventstream")]
    with RecordingWriter(path, overwrite=True) as w:
        for n, (sent, reply) in enumerate(((first, body(WEATHER)), (second, body(AFTER[-2:])))):
            ex = w.new_exchange()
            w.request(ex, "POST", url, head, json.dumps(sent).encode(), t_ns=n * 10**9)
            w.response(ex, 200, streamed, t_ns=n * 10**9 + 10)
            w.chunk(ex, reply, t_ns=n * 10**9 + 20)
            w.end(ex, "complete", t_ns=n * 10**9 + 30)
    return path


def _contract(path: Path) -> list[str]:
    report = orjson.loads(CliRunner().invoke(main, ["inspect", str(path), "--json"]).output)
    return [c["kind"] for c in report["contract"]]


def test_the_call_sent_back_unchanged_and_answered_keeps_the_contract(tmp_path):
    use = {
        "toolUse": {"toolUseId": "tooluse_a1", "name": "get_weather", "input": {"city": "Paris"}}
    }
    assert _contract(_recording(tmp_path, use)) == []


def test_a_call_sent_back_with_its_input_dropped_breaks_it(tmp_path):
    use = {"toolUse": {"toolUseId": "tooluse_a1", "name": "get_weather", "input": {}}}
    assert _contract(_recording(tmp_path, use)) == ["tool-call-arguments-changed"]
    use = {"toolUse": {"toolUseId": "tooluse_9", "name": "get_weather", "input": {"city": "Paris"}}}
    found = _contract(_recording(tmp_path, use))
    assert "tool-call-id-substituted" in found or "tool-call-dropped" in found


# -- the laws -------------------------------------------------------------------------------

_index = st.integers(0, 3)
_events = st.one_of(
    st.just(start()),
    st.builds(
        tool,
        _index,
        st.sampled_from(["tooluse_a", "tooluse_b", ""]),
        st.sampled_from(["get_weather", "get_time", ""]),
        st.sampled_from([None, "server_tool_use"]),
    ),
    st.builds(inp, _index, st.sampled_from(["", "{", '"city": "Paris"', "}", "{}", '{"a": 1}'])),
    st.builds(text, _index, st.text(max_size=6)),
    st.builds(think, _index, st.text(max_size=6)),
    st.builds(stop, _index),
    st.builds(end, st.sampled_from(["tool_use", "end_turn", "max_tokens"])),
    st.just(metadata()),
    st.just(exception()),
    st.sampled_from(
        [
            Raw("contentBlockDelta", b"{not json"),
            Raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"x"}}', crc=False),
            Raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{}}'),
            Raw("somethingNew", b"{}"),
            Raw("contentBlockStart", b"[1]"),
        ]
    ),
)
streams = st.lists(_events, max_size=10)


@settings(max_examples=150, deadline=None)
@given(streams)
def test_no_stream_makes_the_engine_raise_and_none_reads_as_another_dialect(events):
    result = run(events)
    assert not NOT_HERE & kinds(result)
    assert result.dialect == "bedrock-converse"


# -- the CLI and the sample -----------------------------------------------------------------


@pytest.mark.slow
def test_inspect_reads_a_saved_event_stream_body(tmp_path):
    path = tmp_path / "converse.bin"
    path.write_bytes(body(AFTER))
    out = CliRunner().invoke(main, ["inspect", str(path), "--json"])
    assert out.exit_code == 0, out.output
    (stream,) = orjson.loads(out.output)["streams"]
    assert stream["dialect"] == "bedrock-converse" and stream["framing"] == "aws-eventstream"
    assert stream["strategies"]["last-start"]["differs"] is True
    assert [a["kind"] for a in stream["anomalies"]] == ["text-after-tool-start"]


@pytest.mark.slow
def test_the_sample_shows_the_text_without_start_trap():
    path = SAMPLES / "bedrock-text-without-start.jsonl"
    result = analyze(str(path))
    stream, answer = result.streams
    assert stream.dialect == "bedrock-converse" and stream.ended == "done"
    assert answer.content == "It is 14 °C in Paris." and result.contract == []
    assert [c.arguments for c in stream.tool_calls] == ['{"city": "Paris"}']
    assert "text-after-tool-start" in kinds(stream)
    assert stream.differs("last-start") and not stream.differs("strands")


def test_history_reads_tool_uses_back_and_server_tools_need_no_result():
    h = BEDROCK.history(
        {
            "system": [{"text": "Be brief."}],
            "toolConfig": {"tools": WEATHER_TOOLS},
            "messages": [
                {"role": "user", "content": [{"text": "Weather?"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"text": "Checking."},
                        {
                            "toolUse": {
                                "toolUseId": "t1",
                                "name": "get_weather",
                                "input": {"city": "Paris"},
                            }
                        },
                        {
                            "toolUse": {
                                "toolUseId": "s1",
                                "name": "web_search",
                                "input": {},
                                "type": "server_tool_use",
                            }
                        },
                    ],
                },
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": []}}]},
            ],
        }
    )
    assert h is not None and h.tools == [Tool("get_weather")]
    sent = h.turns[1].calls
    assert [(s.id, s.name, s.arguments, s.type, s.needs_result) for s in sent] == [
        ("t1", "get_weather", '{"city":"Paris"}', "toolUse", True),
        ("s1", "web_search", "{}", "server_tool_use", False),
    ]
    assert h.turns[1].content == [{"text": "Checking."}]
    assert [r.answers for r in h.turns[2].results] == ["t1"]
    assert h.kind_of("server_tool_use") != h.kind_of(None) == h.kind_of("toolUse")


def test_its_events_tell_its_dialect_and_no_other_dialect_claims_them():
    assert of_frames(frames(WEATHER)) == "bedrock-converse"
    for frame in frames([*WEATHER, exception()]):
        others = [d.name for d in DIALECTS.values() if d is not BEDROCK]
        assert not [n for n in others if DIALECTS[n].claims_event(frame.payload, frame.event)]


def _nova_invoke(events: list) -> list:
    """Amazon Nova through InvokeModelWithResponseStream: each event in a `chunk` message,
    written as boto3 yields it (`{"contentBlockDelta": {...}}`), Bedrock's own keys beside
    the guarded and the last ones."""
    body = b""
    for k, (name, payload) in enumerate(events):
        inner: dict = {name: {key: v for key, v in payload.items() if key != "p"}}
        if k == len(events) - 1:
            inner["amazon-bedrock-invocationMetrics"] = {"inputTokenCount": 9}
        elif name == "contentBlockDelta":
            inner["amazon-bedrock-guardrailAction"] = "NONE"
        chunk = {"bytes": base64.b64encode(json.dumps(inner).encode()).decode()}
        headers = [(":event-type", 7, "chunk"), (":content-type", 7, "application/json")]
        body += encode([*headers, (":message-type", 7, "event")], json.dumps(chunk).encode())
    return EventStreamDecoder().feed(body)


def test_nova_through_invoke_reads_as_converse_and_its_request_is_claimed():
    path = "/model/amazon.nova-lite-v1%3A0/invoke-with-response-stream"
    nova = {"schemaVersion": "messages-v1", "messages": [], "inferenceConfig": {}}
    told = claimant(path, nova)
    assert told is not None and told.name == "bedrock-converse"
    assert request_facts(told, path, nova).stream is True
    # Claude's body names its anthropic_version; Llama's holds no Converse key
    claude = claimant(path, {"messages": [], "anthropic_version": "bedrock-2023-05-31"})
    assert claude is not None and claude.name == "anthropic-messages"
    assert claimant(path, {"prompt": "hi", "max_gen_len": 9}) is None
    frames = _nova_invoke(WEATHER)
    assert of_frames(frames) == "bedrock-converse"
    engine = BedrockEngine()
    for frame in frames:
        engine.feed(frame)
    result = engine.finish()
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        (c.id, c.name, c.arguments) for c in run(WEATHER).tool_calls
    ]
    assert result.tool_calls and not kinds(result) - kinds(run(WEATHER))
