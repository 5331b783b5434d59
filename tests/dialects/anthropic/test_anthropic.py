"""Anthropic Messages read end to end: the reading, every anomaly kind of the dialect, the
clients, bad input, and the streams of the anthropic SDK's and vercel/ai's own tests."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.core.calls import StrategyError, Unmodeled
from streamscope.dialects.anthropic.engine import AnthropicEngine
from streamscope.framing.sse import decode_body

from .events import (
    MESSAGE_STOP,
    PING,
    WEATHER,
    WEATHER_TOOL,
    block_stop,
    calls,
    frames,
    json_delta,
    kinds,
    message,
    message_delta,
    message_start,
    run,
    sse,
    text_block,
    text_delta,
    text_start,
    tool_call,
    tool_start,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "anthropic"
# A tool block whose start carries no input at all, so "" is all its arguments hold.
NO_INPUT = {
    "type": "content_block_start",
    "index": 0,
    "content_block": {"type": "tool_use", "id": "toolu_a", "name": "get_weather"},
}

# kind -> (events that trigger it, events like them that must not, run() arguments)
CASES: dict[str, tuple[list, list, dict]] = {
    "block-start-input-nonempty": (
        message([tool_start(0, input={"city": "Paris"}), json_delta(0, '{"city": "Rome"}')]),
        message([tool_start(0, input={"city": "Paris"}), json_delta(0, ""), block_stop(0)]),
        {},
    ),
    "partial-json-empty": (WEATHER, message(tool_call(parts=('{"city": "Paris"}',))), {}),
    "block-delta-without-start": (
        message(tool_call(), [json_delta(3, '{"a": 1}')]),
        WEATHER,
        {},
    ),
    "block-stop-missing": (
        message(tool_call()[:-1], stop="max_tokens"),
        message(tool_call(), stop="max_tokens"),
        {},
    ),
    "block-index-reused": (
        message(tool_call(1), tool_call(1, "toolu_b")),
        message(tool_call(1), tool_call(2, "toolu_b")),
        {},
    ),
    "message-start-repeated": (
        [message_start("msg_1"), *tool_call()[:2], *message(tool_call(), mid="msg_2")],
        [*message(tool_call(), mid="msg_1"), *message(tool_call(), mid="msg_2")],
        {},
    ),
    "stop-reason-mismatch": (message(tool_call(), stop="end_turn"), WEATHER, {}),
    "message-stop-missing": (WEATHER[:-1], WEATHER, {}),
    "event-name-missing": (WEATHER, WEATHER, {"named": False}),
    "event-schema-violation": (
        message(tool_call(), [json_delta(1, 42)]),
        WEATHER,
        {},
    ),
    "event-unknown": (
        message(tool_call(), [{"type": "content_block_magic", "index": 1}]),
        WEATHER,
        {},
    ),
    "id-missing": (message(tool_call(tid="")), WEATHER, {}),
    "name-missing": (message(tool_call(name="")), WEATHER, {}),
    "id-reused": (
        message(tool_call(1), tool_call(2)),
        message(tool_call(1), tool_call(2, "toolu_b")),
        {},
    ),
    "interleaved": (
        message(
            [tool_start(1), tool_start(2, "toolu_b")],
            [json_delta(1, '{"a":'), json_delta(2, '{"b":'), json_delta(1, "1}")],
            [json_delta(2, "2}"), block_stop(1), block_stop(2)],
        ),
        message(tool_call(1), tool_call(2, "toolu_b")),
        {},
    ),
    "args-empty": (message([NO_INPUT, json_delta(0, ""), block_stop(0)]), WEATHER, {}),
    "args-invalid-json": (message(tool_call(parts=('{"city": ', "Par"))), WEATHER, {}),
    "args-double-encoded": (message(tool_call(parts=('"{\\"a\\": 1}"',))), WEATHER, {}),
    "call-boundary-ambiguous": (message(tool_call(parts=('{"a": 1}', '{"a": 2}'))), WEATHER, {}),
    "name-undeclared": (message(tool_call(name="get_time")), WEATHER, {"tools": [WEATHER_TOOL]}),
    "provider-error": (
        [
            *WEATHER[:4],
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ],
        WEATHER,
        {},
    ),
    "chunk-invalid-json": (message(tool_call(), ["{not json"]), WEATHER, {}),
    "stream-truncated": (WEATHER, WEATHER, {"end_reason": "upstream-error"}),
    "tool-call-in-content": (
        message(text_block(0, '<tool_call>{"name": "get_weather"}</tool_call>'), stop="end_turn"),
        message(text_block(0, "It is sunny."), stop="end_turn"),
        {},
    ),
    "invalid-utf8": (None, None, {}),  # built from bytes below
}
QUIET_EXTRA = {"event-name-missing": {}, "stream-truncated": {}}
# Kinds that name Chat Completions fields: never on an Anthropic stream.
CHAT_ONLY = {
    "id-empty-overwrite",
    "name-empty-overwrite",
    "type-empty-or-null",
    "id-repeated",
    "name-repeated",
    "id-changed",
    "name-fragmented",
    "name-changed",
    "type-missing",
    "function-missing",
    "index-missing",
    "index-invalid",
    "index-gap",
    "index-reused",
    "index-moved",
    "same-index-twice-in-chunk",
    "args-opener-nonempty",
    "args-not-string",
    "args-resent",
    "args-cumulative",
    "role-repeated",
    "delta-after-finish",
    "finish-repeated",
    "finish-reason-mismatch",
    "finish-reason-missing",
    "done-missing",
    "chunk-schema-violation",
}


def test_invalid_utf8_is_named_where_it_is():
    body = sse(WEATHER).replace(b"Let me look.", b"Let me \xff look.")
    found, truncation = decode_body(body)
    engine = AnthropicEngine()
    for frame in found:
        engine.feed(frame)
    result = engine.finish(truncation)
    assert "invalid-utf8" in kinds(result)
    assert calls(result) == calls(run(WEATHER))


def test_the_reading_of_a_tool_call():
    result = run(WEATHER, [WEATHER_TOOL])
    assert calls(result) == [(0, 1, "toolu_a", "get_weather", "tool_use", '{"city": "Paris"}')]
    assert result.ended == "done" and result.finish_reason == "tool_use"
    assert result.content == "Let me look."
    assert kinds(result) == {"partial-json-empty"}  # the API's usual first fragment
    strategies = result.strategies
    assert list(strategies) == ["robust", "anthropic-sdk", "start-concat", "last-block", "truthy"]
    assert strategies["start-concat"][0].arguments == '{}{"city": "Paris"}'
    assert result.differs("start-concat") and not result.differs("last-block")
    assert not result.differs("truthy")


def test_a_no_argument_tool_is_its_start_input_and_truthy_clients_fail():
    result = run(message(tool_call(parts=("",))))
    assert calls(result)[0][-1] == "{}"
    assert "args-empty" not in kinds(result)
    got = result.strategies["truthy"]
    assert isinstance(got, StrategyError) and "Unexpected end of JSON input" in got.error
    assert not result.differs("start-concat")  # {} alone: nothing glued


def test_a_server_tool_whose_start_carries_the_whole_input():
    start = tool_start(0, "srvtoolu_1", "web_search", "server_tool_use", input={"query": "x"})
    result = run(message([start, block_stop(0)], stop="end_turn"))
    assert calls(result) == [(0, 0, "srvtoolu_1", "web_search", "server_tool_use", '{"query":"x"}')]
    assert "stop-reason-mismatch" not in kinds(result)  # a server tool needs no tool_use stop
    assert "name-undeclared" not in kinds(run(message([start, block_stop(0)]), [WEATHER_TOOL]))


def test_fragments_go_to_the_block_their_index_names():
    events = message(
        [tool_start(1), tool_start(2, "toolu_b", "get_time")],
        [json_delta(1, '{"a":'), json_delta(2, '{"b":'), json_delta(1, "1}"), json_delta(2, "2}")],
        [block_stop(1), block_stop(2)],
    )
    result = run(events)
    assert [c[-1] for c in calls(result)] == ['{"a":1}', '{"b":2}']
    last = result.strategies["last-block"]
    assert [c.arguments for c in last] == ["{}", '{"a":{"b":1}2}']  # everything to the last block
    assert result.differs("last-block")


def test_a_spliced_message_start_begins_a_new_message():
    events = [
        message_start("msg_first"),
        tool_start(1, "toolu_first"),
        json_delta(1, '{"v":"Spark'),
    ]
    events += message(tool_call(1, "toolu_second", parts=('{"v":"Sparkle"}',)), mid="msg_second")
    result = run(events)
    assert calls(result) == [
        (0, 1, "toolu_first", "get_weather", "tool_use", '{"v":"Spark'),
        (1, 1, "toolu_second", "get_weather", "tool_use", '{"v":"Sparkle"}'),
    ]
    found = kinds(result)
    assert {"message-start-repeated", "block-stop-missing", "args-invalid-json"} <= found
    assert [c.finish_reason for c in result.choices] == [None, "tool_use"]


def test_a_repeated_message_start_with_the_same_id_is_one_message():
    events = [message_start("msg_1"), *message(tool_call(), mid="msg_1")]
    result = run(events)
    assert len(result.choices) == 1 and len(result.tool_calls) == 1
    assert "message-start-repeated" in kinds(result)


def test_blocks_a_message_start_carries_whole_are_calls():
    content = [{"type": "tool_use", "id": "toolu_w", "name": "roll", "input": {"p": 1}}]
    events = [message_start("msg_1", content=content, stop_reason="tool_use"), MESSAGE_STOP]
    result = run(events)
    assert calls(result) == [(0, 0, "toolu_w", "roll", "tool_use", '{"p":1}')]
    assert not kinds(result) and result.finish_reason == "tool_use"


def test_text_and_thinking_interleave_with_tools_and_pings():
    events = [
        message_start(),
        text_start(0, "thinking"),
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hm"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "s"},
        },
        block_stop(0),
        PING,
        *tool_call(1),
        text_start(2),
        text_delta(2, "Done."),
        block_stop(2),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    result = run(events)
    assert result.reasoning_content == "hm" and result.content == "Done."
    assert kinds(result) == {"partial-json-empty"}


def test_a_compaction_blocks_delta_is_no_unknown_event():
    """The beta API's context compaction streams its summary as compaction_delta."""
    compaction = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "compaction"},
    }
    summary = {"type": "compaction_delta", "content": "Earlier, the user asked..."}
    events = [
        message_start(),
        compaction,
        {"type": "content_block_delta", "index": 0, "delta": summary},
    ]
    result = run([*events, block_stop(0), *tool_call(1), message_delta("tool_use"), MESSAGE_STOP])
    assert kinds(result) == {"partial-json-empty"} and len(result.tool_calls) == 1


@pytest.mark.parametrize(
    "bad",
    [
        {
            "type": "content_block_delta",
            "index": "1",
            "delta": {"type": "input_json_delta", "partial_json": "x"},
        },
        {
            "type": "content_block_delta",
            "index": 1.5,
            "delta": {"type": "input_json_delta", "partial_json": "x"},
        },
        {
            "type": "content_block_delta",
            "index": True,
            "delta": {"type": "input_json_delta", "partial_json": "x"},
        },
        {
            "type": "content_block_delta",
            "index": -1,
            "delta": {"type": "input_json_delta", "partial_json": "x"},
        },
        {"type": "content_block_delta", "delta": {"type": "input_json_delta", "partial_json": "x"}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": None},
        },
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta"}},
        {"type": "content_block_delta", "index": 1, "delta": "text"},
        {"type": "content_block_delta", "index": 1},
        {"type": "content_block_delta", "index": 9, "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_start", "index": 1, "content_block": None},
        {"type": "content_block_start", "index": [1]},
        {"type": "content_block_stop", "index": {"a": 1}},
        {"type": "totally_new_event"},
        {"type": None},
        {},
        [1, 2],
        "null",
        "[DONE]",
        '{"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\\ud800"}}',
    ],
)
def test_bad_input_is_an_anomaly_never_a_traceback(bad, tmp_path):
    events = [*WEATHER[:6], bad, *WEATHER[6:]]
    result = run(events)
    assert result.tool_calls  # the rest is still read
    assert kinds(result) - {"partial-json-empty"}, "the bad event is named"
    path = tmp_path / "bad.sse"
    path.write_bytes(sse(events))
    from click.testing import CliRunner

    from streamscope.cli import main

    for args in (["inspect", str(path)], ["inspect", "--json", str(path)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0 and out.exception is None, out.output


# -- random streams: the invariants -------------------------------------------------------

_fragment = st.sampled_from(
    ["", "{", '"a"', ":", " 1", "}", "[", "]", ",", '"\\u00e9"', "tru", "e"]
)
_event = st.one_of(
    st.builds(message_start, st.sampled_from(["m1", "m2"])),
    st.builds(
        tool_start,
        st.integers(0, 3),
        st.sampled_from(["toolu_a", "toolu_b", ""]),
        st.sampled_from(["get_weather", "", "x"]),
        st.sampled_from(["tool_use", "server_tool_use", "mcp_tool_use"]),
    ),
    st.builds(text_start, st.integers(0, 3), st.sampled_from(["text", "thinking"])),
    st.builds(json_delta, st.integers(0, 3), _fragment),
    st.builds(
        text_delta, st.integers(0, 3), st.sampled_from(["", "hi", '"name": "f", "arguments"'])
    ),
    st.builds(block_stop, st.integers(0, 3)),
    st.builds(message_delta, st.sampled_from(["tool_use", "end_turn", "max_tokens", None])),
    st.just(MESSAGE_STOP),
    st.just(PING),
    st.just({"type": "error", "error": {"message": "boom"}}),
    st.just("{not json"),
    st.just({"type": "new_event"}),
)
streams = st.lists(_event, max_size=30)


def test_a_shape_the_sdk_emulation_meets_late_is_unmodeled_where_it_is_looked_at():
    """The emulation reads tool input deltas when asked: a number too long for it is met
    then, and the strategy says Unmodeled there, as it would have at the frame."""
    engine = AnthropicEngine()
    for frame in frames(message(tool_call(0, parts=("[" + "1" * 4100,)))):
        engine.feed(frame)
    assert isinstance(engine.strategy_calls()["anthropic-sdk"], Unmodeled)
    assert isinstance(engine.others_at_end()["anthropic-sdk"], Unmodeled)


# -- the projects' own recorded streams ---------------------------------------------------

# file -> (robust's calls, the trap each shows, named at its frame); see fixtures/anthropic.
EXPECTED = {
    "anthropic-sdk-python-tool-use.sse": (
        [
            (
                0,
                1,
                "toolu_01NRLabsLyVHZPKxbKvkfSMn",
                "get_weather",
                "tool_use",
                '{"location": "Paris"}',
            )
        ],
        {"partial-json-empty": 8},
    ),
    "anthropic-sdk-python-tool-use-invalid-json.sse": (
        [
            (
                0,
                1,
                "toolu_01NRLabsLyVHZPKxbKvkfSMn",
                "get_weather",
                "tool_use",
                '{"location": "Paris", "unit": celsius}',
            )
        ],
        {"args-invalid-json": 13},  # the block's stop, where the call ends
    ),
    "anthropic-sdk-python-incomplete-partial-json.sse": (None, {"block-stop-missing": 0}),
    "anthropic-sdk-python-server-tool-use.sse": (
        [
            (
                0,
                1,
                "srvtoolu_01WebSearch",
                "web_search",
                "server_tool_use",
                '{"query": "weather in Paris"}',
            )
        ],
        {},
    ),
    "anthropic-sdk-python-server-tool-result.sse": (
        [
            (0, 0, "svu_web_001", "web_search", "server_tool_use", "{}"),
            (0, 1, "tu_client_001", "ask_internal_tool", "tool_use", '{"query":"test"}'),
        ],
        {},
    ),
    "vercel-ai-tool-no-args.sse": (
        [(0, 1, "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "tool_use", "{}")],
        {"partial-json-empty": 10},
    ),
    "vercel-ai-text-then-tool-use.sse": (
        [
            (
                0,
                1,
                "toolu_01Ni1uw4HXYxUhc4iFMqx7yY",
                "get_weather",
                "tool_use",
                '{"city": "San Francisco"}',
            )
        ],
        {},
    ),
    "vercel-ai-spliced-message-start.sse": (
        [
            (0, 1, "toolu_first", "test-tool", "tool_use", '{"value":"Spark'),
            (1, 1, "toolu_second", "test-tool", "tool_use", '{"value":"Sparkle Day"}'),
        ],
        {"message-start-repeated": 8, "block-stop-missing": 0},
    ),
    "vercel-ai-mcp-tool-use.sse": (
        [
            (
                0,
                0,
                "mcptoolu_017CuqaJcXe5ZHJjaz3KS1AT",
                "echo",
                "mcp_tool_use",
                '{"message": "hello world"}',
            )
        ],
        {},
    ),
    "vercel-ai-code-execution-empty-first-delta.sse": (
        [
            (
                0,
                0,
                "srvtoolu_empty_first_delta",
                "text_editor_code_execution",
                "server_tool_use",
                '"command":"view","path":"/tmp/a.txt"}',
            )
        ],
        {"args-invalid-json": 0},
    ),
    "vercel-ai-message-start-prepopulated-content.sse": (
        [(0, 2, "toolu_followup", "lookup_customer", "tool_use", '{"id":"customer_123"}')],
        {},
    ),
}


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.sse")))
def test_the_projects_recorded_streams(name):
    (stream,) = analyze(FIXTURES / name).streams
    assert stream.dialect == "anthropic-messages"
    assert not CHAT_ONLY & kinds(stream)
    want, traps = EXPECTED.get(name, (None, {}))
    if want is not None:
        assert calls(stream) == want
    for kind, frame in traps.items():
        found = [a for a in stream.anomalies if a.kind == kind]
        assert found, f"{name}: {kind} not named"
        if frame:
            assert found[0].frame == frame
    # a chunk log of the same events reads the same
    log = FIXTURES / name.replace(".sse", ".jsonl")
    if log.exists():
        (again,) = analyze(log).streams
        assert calls(again) == calls(stream) and again.dialect == "anthropic-messages"


def test_the_program_calling_stream_holds_every_call_of_its_fifteen_messages():
    (stream,) = analyze(FIXTURES / "vercel-ai-programmatic-tool-calling.sse").streams
    assert len(stream.choices) == 15
    rolls = [c for c in stream.tool_calls if c.name == "rollDie"]
    assert len(rolls) == 14 and rolls[0].arguments == '{"player":"player1"}'
    assert "message-start-repeated" not in kinds(stream)


def test_the_dialect_is_told_by_content_never_by_name(tmp_path):
    path = tmp_path / "openai-chat.txt"  # the name lies
    path.write_bytes(sse(WEATHER))
    doc = analyze(path)
    assert doc.streams[0].dialect == "anthropic-messages"
    log = tmp_path / "stream.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in WEATHER))
    assert analyze(log).streams[0].dialect == "anthropic-messages"


@pytest.mark.parametrize(
    "events, words",
    [(["garbage", "more garbage"], "neither the request nor the first events")],
)
def test_a_stream_no_dialect_reads_says_so(events, words, tmp_path):
    path = tmp_path / "stream.sse"
    path.write_bytes(sse(events, named=False))
    (stream,) = analyze(path).streams
    assert stream.dialect == "chat-completions"
    (unknown,) = [a for a in stream.anomalies if a.kind == "dialect-unknown"]
    assert words in unknown.message and unknown.severity == "info"


def _recording(path, url: str, first: dict, second: dict, stream: list) -> None:
    """Two Anthropic exchanges: `first` streams `stream`, `second` sends its call back."""
    from streamscope.recording import RecordingWriter

    with RecordingWriter(str(path)) as w:
        for body, events in ((first, stream), (second, message(text_block(), stop="end_turn"))):
            x = w.new_exchange()
            w.request(x, "POST", url, [], orjson.dumps(body))
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, sse(events))
            w.end(x, "complete")


QUESTION = [{"role": "user", "content": "weather?"}]
SENT_BACK = [
    *QUESTION,
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}}
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_b", "content": "x"}],
    },
]


@pytest.mark.parametrize(
    "url, extra",
    [
        ("https://gateway.example/api/llm", {"system": "be brief"}),  # the body tells
        ("https://gateway.example/api/llm", {}),  # only the stream's events tell
        ("https://api.anthropic.com/v1/messages", {}),  # the path tells
    ],
)
def test_the_contract_reads_a_request_in_the_dialect_its_exchange_speaks(tmp_path, url, extra):
    path = tmp_path / "gateway.jsonl"
    first = {"model": "m", "max_tokens": 9, "messages": QUESTION, **extra}
    _recording(path, url, first, {**first, "messages": SENT_BACK}, WEATHER)
    doc = analyze(path)
    assert {s.dialect for s in doc.streams} == {"anthropic-messages"}
    kinds = {f.kind for f in doc.contract}
    # the tool_result answers another id: read as Anthropic blocks, not as chat messages
    assert kinds == {"tool-result-id-mismatch", "tool-result-missing"}
    (mismatch,) = [f for f in doc.contract if f.kind == "tool-result-id-mismatch"]
    assert "tool_use_id" in mismatch.message and mismatch.at_message == 2


# Where the anthropic SDK (2.17) builds other calls than the stream carried, or raises, on
# the projects' recorded streams (see tests/fixtures/anthropic/README.md); everywhere
# else its calls are robust's.
SDK_WRONG = {
    "anthropic-sdk-python-incomplete-partial-json.sse",  # its partial parse drops the cut line
    "vercel-ai-code-execution-empty-first-delta.sse",  # input "command", a string
    "vercel-ai-mcp-tool-use.sse",  # mcp_tool_use keeps its start's {}
    "vercel-ai-programmatic-tool-calling.sse",  # 13 calls of later messages lost
    "vercel-ai-spliced-message-start.sse",  # {"value": "Spark{"} and {}
}
SDK_RAISES = {
    "anthropic-sdk-python-tool-use-invalid-json.sse": "ValueError",
    "vercel-ai-duplicate-message-start-minimal.sse": "AttributeError",
}


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.sse")))
def test_robust_builds_what_the_sdk_builds_where_the_sdk_is_right(name):
    (stream,) = analyze(FIXTURES / name).streams
    got = stream.strategies["anthropic-sdk"]
    if name in SDK_RAISES:
        assert isinstance(got, StrategyError) and got.error.startswith(SDK_RAISES[name])
    else:
        assert stream.differs("anthropic-sdk") is (name in SDK_WRONG)


# An MCP tool call, as the API streams it to the beta client (mcp_tool_use's input in
# fragments): BetaMessageStream builds its input, MessageStream keeps its start's {}
MCP_CALL = message(
    [
        tool_start(0, "mcptoolu_1", "ask_question", "mcp_tool_use", server_name="deepwiki"),
        json_delta(0, ""),
        json_delta(0, '{"repoName": '),
        json_delta(0, '"pydantic/pydantic-ai"}'),
        block_stop(0),
    ],
    stop="end_turn",
)


def _one_exchange(path, url: str, headers: list, events: list) -> None:
    from streamscope.recording import RecordingWriter

    body = {"model": "m", "max_tokens": 9, "messages": QUESTION, "stream": True}
    with RecordingWriter(str(path)) as w:
        x = w.new_exchange()
        w.request(x, "POST", url, headers, orjson.dumps(body))
        w.response(x, 200, [("content-type", "text/event-stream")])
        w.chunk(x, sse(events))
        w.end(x, "complete")


@pytest.mark.parametrize(
    "url, headers, beta",
    [
        # client.beta.messages.stream(...): the ?beta=true query, its betas as the header
        (
            "https://api.anthropic.com/v1/messages?beta=true",
            [("anthropic-beta", "mcp-client-2025-04-04")],
            True,
        ),
        ("https://gateway.example/anthropic/v1/messages?beta=true", [], True),
        # client.messages.stream(..., extra_headers={"anthropic-beta": ...}): MessageStream
        (
            "https://api.anthropic.com/v1/messages",
            [("anthropic-beta", "mcp-client-2025-04-04")],
            False,
        ),
        ("https://api.anthropic.com/v1/messages?beta=false", [], False),
    ],
)
def test_the_sdk_strategy_is_the_beta_stream_where_the_request_went_to_the_beta_api(
    tmp_path, url, headers, beta
):
    path = tmp_path / "mcp.jsonl"
    _one_exchange(path, url, headers, MCP_CALL)
    (stream,) = analyze(path).streams
    (call,) = stream.tool_calls
    assert (call.type, call.arguments) == ("mcp_tool_use", '{"repoName": "pydantic/pydantic-ai"}')
    (sdk,) = stream.strategies["anthropic-sdk"]  # type: ignore[misc]
    assert sdk.arguments == ('{"repoName":"pydantic/pydantic-ai"}' if beta else "{}")
    assert stream.differs("anthropic-sdk") is not beta


def test_a_bare_stream_is_read_as_the_plain_client_reads_it(tmp_path):
    # no request: nothing says beta, and anthropic-sdk stands for MessageStream
    path = tmp_path / "mcp.sse"
    path.write_bytes(sse(MCP_CALL))
    (stream,) = analyze(path).streams
    (sdk,) = stream.strategies["anthropic-sdk"]  # type: ignore[misc]
    assert sdk.arguments == "{}" and stream.differs("anthropic-sdk")


def test_the_fine_grained_beta_is_answered_by_the_real_beta_stream(tmp_path):
    # trailing-strings tool input is not modelled: the real BetaMessageStream answers, with
    # the request's header (a cut string is kept: {"repoName": "pyd"})
    cut = [e for e in MCP_CALL if e.get("type") not in ("message_delta", "message_stop")]
    cut[-2] = json_delta(0, '"pyd')  # (the stream stops inside a string)
    cut.pop()
    path = tmp_path / "fine.jsonl"
    url = "https://api.anthropic.com/v1/messages?beta=true"
    _one_exchange(path, url, [("anthropic-beta", "fine-grained-tool-streaming-2025-05-14")], cut)
    (stream,) = analyze(path).streams
    (sdk,) = stream.strategies["anthropic-sdk"]  # type: ignore[misc]
    assert sdk.arguments == '{"repoName":"pyd"}'
