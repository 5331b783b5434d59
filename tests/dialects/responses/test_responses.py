"""The OpenAI Responses API read end to end: the reading, every anomaly kind of the
dialect, the clients, bad input, the contract across exchanges."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.core.calls import StrategyError
from streamscope.dialects.responses.engine import ResponsesEngine
from streamscope.framing.sse import decode_body

from ..anthropic.test_anthropic import CHAT_ONLY
from .events import (
    ARGS,
    WEATHER,
    WEATHER_TOOL,
    added,
    args_done,
    call,
    calls,
    completed,
    created,
    delta,
    frames,
    item,
    item_done,
    kinds,
    message_item,
    numbered,
    reasoning_item,
    response,
    run,
    sse,
)

WRAPPED = (
    '{"tool_uses": [{"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}},'
    ' {"recipient_name": "functions.get_time", "parameters": {"tz": "UTC"}}]}'
)
TWO_CALLS = [
    added(0, item()),
    added(1, item(item_id="fc_2", call_id="call_2", name="get_time")),
    delta(0, '{"city": '),
    delta(1, '{"tz": ', "fc_2"),
    delta(0, '"Paris"}'),
    delta(1, '"UTC"}', "fc_2"),
    args_done(0, '{"city": "Paris"}'),
    args_done(1, '{"tz": "UTC"}', "fc_2"),
    item_done(0, item(text='{"city": "Paris"}', status="completed")),
    item_done(1, item("function_call", "fc_2", "call_2", "get_time", '{"tz": "UTC"}', "completed")),
]
SKIPPED = [
    {**e, "sequence_number": e["sequence_number"] + (2 if k > 3 else 0)}
    for k, e in enumerate(WEATHER)
]

SENT = item(text='{"city": "Paris"}', status="completed")

# kind -> (events that trigger it, events like them that must not, run() arguments)
CASES: dict[str, tuple[list | None, list | None, dict]] = {
    "args-done-only": (response(call(parts=(), done='{"city": "Paris"}')), WEATHER, {}),
    "args-done-mismatch": (response(call(done='{"city": "Rome"}')), WEATHER, {}),
    "delta-unknown-item": (response(call(), [delta(5, "x", "fc_9")]), WEATHER, {}),
    "items-interleaved": (
        response(TWO_CALLS),
        response(call(), call(1, "fc_2", "call_2", "get_time")),
        {},
    ),
    "parallel-wrapper": (
        response(call(name="multi_tool_use.parallel", parts=(WRAPPED,))),
        WEATHER,
        {},
    ),
    "sequence-disorder": (SKIPPED, WEATHER, {}),
    "stop-reason-mismatch": (response(call(), status="incomplete"), WEATHER, {}),
    "delta-empty": (response(call(parts=("", *ARGS))), WEATHER, {}),
    "response-end-missing": (response(call(), end=False), WEATHER, {}),
    "final-output-mismatch": (numbered([created(), *call(), completed([])]), WEATHER, {}),
    "event-schema-violation": (response(call(), [delta(0, 42)]), WEATHER, {}),
    "event-unknown": (response(call(), [{"type": "session.magic"}]), WEATHER, {}),
    "id-changed": (
        response([*call()[:-1], item_done(0, {**SENT, "call_id": "call_2"})]),
        WEATHER,
        {},
    ),
    "name-changed": (
        response([*call()[:-1], item_done(0, {**SENT, "name": "get_time"})]),
        WEATHER,
        {},
    ),
    "id-missing": (response(call(call_id="")), WEATHER, {}),
    "name-missing": (response(call(name="")), WEATHER, {}),
    "id-reused": (
        response(call(), call(1, "fc_2", "call_1")),
        response(call(), call(1, "fc_2", "call_2")),
        {},
    ),
    "args-empty": (response(call(parts=(), done="")), WEATHER, {}),
    "args-invalid-json": (response(call(parts=('{"city": ', '"Par'))), WEATHER, {}),
    "args-double-encoded": (response(call(parts=('"{\\"a\\": 1}"',))), WEATHER, {}),
    "call-boundary-ambiguous": (response(call(parts=('{"a": 1}', '{"a": 2}'))), WEATHER, {}),
    "name-undeclared": (response(call(name="get_time")), WEATHER, {"tools": [WEATHER_TOOL]}),
    "provider-error": (
        [*WEATHER[:4], {"type": "error", "code": "server_error", "message": "Overloaded"}],
        WEATHER,
        {},
    ),
    "chunk-invalid-json": (response(call(), ["{not json"]), WEATHER, {}),
    "stream-truncated": (WEATHER, WEATHER, {"end_reason": "upstream-error"}),
    "tool-call-in-content": (
        response(message_item(0, '<tool_call>{"name": "get_weather"}</tool_call>')),
        response(message_item(0, "It is sunny.")),
        {},
    ),
    "invalid-utf8": (None, None, {}),  # built from bytes below
}
QUIET_EXTRA = {"stream-truncated": {}}
# Kinds of other dialects' words: never on a Responses stream.
NOT_HERE = (CHAT_ONLY - {"id-changed", "name-changed"}) | {
    "interleaved",
    "block-start-input-nonempty",
    "partial-json-empty",
    "block-delta-without-start",
    "block-stop-missing",
    "block-index-reused",
    "message-start-repeated",
    "message-stop-missing",
    "event-name-missing",
}


def test_a_well_formed_stream_says_nothing():
    result = run(WEATHER, [WEATHER_TOOL])
    assert result.anomalies == [] and result.ended == "done"
    assert not [name for name in result.strategies if result.differs(name)]


def test_invalid_utf8_is_named_where_it_is():
    body = sse(WEATHER).replace(b"Let me look.", b"Let me \xff look.")
    found, truncation = decode_body(body)
    engine = ResponsesEngine()
    for frame in found:
        engine.feed(frame)
    result = engine.finish(truncation)
    assert "invalid-utf8" in kinds(result)
    assert calls(result) == calls(run(WEATHER))


# -- the reading ----------------------------------------------------------------------------


def test_a_call_has_two_ids_and_both_are_reported(tmp_path):
    result = run(WEATHER, [WEATHER_TOOL])
    (got,) = result.tool_calls
    assert (got.index, got.id, got.item_id, got.name) == (1, "call_1", "fc_1", "get_weather")
    assert got.arguments == '{"city": "Paris"}' and got.type == "function_call"
    assert result.finish_reason == "completed" and result.content == "Let me look."
    path = tmp_path / "weather.sse"
    path.write_bytes(sse(WEATHER))
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(path)]).output)
    (stream,) = doc["streams"]
    assert stream["dialect"] == "openai-responses"
    (wire,) = stream["tool_calls"]
    assert (wire["id"], wire["item_id"]) == ("call_1", "fc_1")


def test_arguments_only_in_done_are_taken_and_deltas_only_clients_lose_them():
    result = run(response(call(parts=(), done='{"city": "Paris"}')))
    assert calls(result)[0][-1] == '{"city": "Paris"}'
    (anomaly,) = [a for a in result.anomalies if a.kind == "args-done-only"]
    assert anomaly.frame == 3  # the .done that first stated them
    assert result.strategies["deltas-only"][0].arguments == ""
    assert not isinstance(result.strategies["strict-done"], list)


def test_an_empty_done_keeps_the_deltas_and_says_so():
    result = run(response(call(done="")))
    assert result.tool_calls[0].arguments == '{"city": "Paris"}'
    (mismatch,) = [a for a in result.anomalies if a.kind == "args-done-mismatch"]
    assert "keeps the deltas" in mismatch.message


def test_a_done_that_disagrees_wins_and_strict_clients_raise():
    result = run(response(call(done='{"city": "Rome"}')))
    assert result.tool_calls[0].arguments == '{"city": "Rome"}'
    (mismatch,) = [a for a in result.anomalies if a.kind == "args-done-mismatch"]
    assert mismatch.frame == 5 and "takes the stated value" in mismatch.message
    strict = result.strategies["strict-done"]
    assert (
        isinstance(strict, StrategyError)
        and strict.error.startswith("ChatProviderError: ")
        and "Rome" in (strict.why or "")
    )
    assert strict.frame == 5
    assert result.strategies["deltas-only"][0].arguments == '{"city": "Paris"}'


def test_interleaved_items_are_kept_apart_and_current_item_clients_mix_them():
    result = run(response(TWO_CALLS))
    assert [c.arguments for c in result.tool_calls] == ['{"city": "Paris"}', '{"tz": "UTC"}']
    mixed = result.strategies["current-item"]
    assert [c.arguments for c in mixed] == ["", '{"city": {"tz": "Paris"}"UTC"}']
    assert result.differs("current-item") and not result.differs("deltas-only")


def test_the_parallel_wrapper_stays_one_call_and_names_what_it_wraps():
    result = run(response(call(name="multi_tool_use.parallel", parts=(WRAPPED,))))
    (wrapper,) = result.tool_calls
    assert wrapper.name == "multi_tool_use.parallel" and wrapper.id == "call_1"
    (anomaly,) = [a for a in result.anomalies if a.kind == "parallel-wrapper"]
    assert (
        '"functions.get_weather"' in anomaly.message and '"functions.get_time"' in anomaly.message
    )
    assert "2 calls" in anomaly.message


def test_the_parallel_wrapper_is_named_in_chat_completions_too():
    from ...helpers import run as chat_run

    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "multi_tool_use.parallel", "arguments": WRAPPED},
                        }
                    ]
                },
            }
        ]
    }
    assert "parallel-wrapper" in {a.kind for a in chat_run([chunk]).anomalies}


def test_a_custom_tool_calls_input_is_free_text():
    code = "print('hi')\n"
    result = run(response(call(kind="custom_tool_call", name="run", parts=("print(", "'hi')\n"))))
    (got,) = result.tool_calls
    assert (got.type, got.arguments) == ("custom_tool_call", code)
    assert "args-invalid-json" not in kinds(result) and result.anomalies == []


def test_a_reasoning_item_first_and_obfuscation_padding_change_nothing():
    padded = [
        {**e, "obfuscation": "aXk"} if e.get("type", "").endswith(".delta") else e
        for e in response(reasoning_item(0), call(1))
    ]
    result = run(padded)
    assert calls(result) == [(0, 1, "call_1", "get_weather", "function_call", '{"city": "Paris"}')]
    assert result.anomalies == []


def test_a_delta_follows_its_item_id_when_the_output_index_disagrees():
    events = response(
        [added(0, item()), added(1, item(item_id="fc_2", call_id="call_2"))], end=False
    )
    events = numbered([*events, delta(1, '{"a": 1}', "fc_1")])
    result = run(events, expect_done=False)
    assert [c.arguments for c in result.tool_calls] == ['{"a": 1}', ""]
    assert "event-schema-violation" in kinds(result)


def test_a_call_only_the_final_output_holds_is_a_call():
    whole = item(text='{"city": "Paris"}', status="completed")
    result = run(numbered([created(), completed([whole])]))
    assert calls(result) == [(0, 0, "call_1", "get_weather", "function_call", '{"city": "Paris"}')]
    assert "args-done-only" in kinds(result)


def test_a_failed_response_is_an_error():
    failed = completed([], status="failed")
    failed["response"]["error"] = {"code": "server_error", "message": "the model crashed"}
    result = run(numbered([created(), *call(), failed]))
    assert result.ended == "error" and result.finish_reason == "failed"
    (error,) = [a for a in result.anomalies if a.kind == "provider-error"]
    assert "the model crashed" in error.message


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "response.function_call_arguments.delta", "output_index": "1", "delta": "x"},
        {"type": "response.function_call_arguments.delta", "output_index": 1.5, "delta": "x"},
        {"type": "response.function_call_arguments.delta", "output_index": True, "delta": "x"},
        {"type": "response.function_call_arguments.delta", "output_index": -1, "delta": "x"},
        {"type": "response.function_call_arguments.delta", "delta": "x"},
        {"type": "response.function_call_arguments.delta", "item_id": ["fc_1"], "delta": "x"},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": None},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1"},
        {"type": "response.function_call_arguments.delta", "item_id": "msg_1", "delta": "x"},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": 5},
        {"type": "response.custom_tool_call_input.done", "item_id": "zz", "input": "x"},
        {"type": "response.output_item.added", "output_index": 3, "item": None},
        {"type": "response.output_item.added", "output_index": [3], "item": {}},
        {
            "type": "response.output_item.added",
            "output_index": 3,
            "item": {"type": "function_call", "call_id": 7, "name": ["x"]},
        },
        {"type": "response.output_item.added", "output_index": 1, "item": {"type": {"a": 1}}},
        {"type": "response.output_item.done", "output_index": {"a": 1}, "item": {}},
        {"type": "response.completed", "response": {"output": "nope", "status": 3}},
        {"type": "response.completed", "response": [1]},
        {"type": "response.failed", "response": {"error": "x"}},
        {"type": "error"},
        {"type": "totally_new_event"},
        {"type": None},
        {},
        [1, 2],
        "null",
        "[DONE]",
        '{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\\ud800"}',
    ],
)
def test_bad_input_is_an_anomaly_never_a_traceback(bad, tmp_path):
    events = [*WEATHER[:6], bad, *WEATHER[6:]]
    result = run(events)
    assert result.tool_calls  # the rest is still read
    assert kinds(result), "the bad event is named"
    path = tmp_path / "bad.sse"
    path.write_bytes(sse(events))
    for args in (["inspect", str(path)], ["inspect", "--json", str(path)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0 and out.exception is None, out.output


# -- random streams: the invariants -------------------------------------------------------

_ids = st.sampled_from(["fc_1", "fc_2", "msg_1", "nope"])
_fragment = st.sampled_from(
    ["", "{", '"a"', ":", " 1", "}", "[", "]", ",", '"\\u00e9"', "tru", "e"]
)
_kind = st.sampled_from(
    ["function_call", "custom_tool_call", "message", "reasoning", "web_search_call"]
)
_event = st.one_of(
    st.builds(
        lambda i, k, iid, cid, name: added(i, item(k, iid, cid, name)),
        st.integers(0, 3),
        _kind,
        _ids,
        st.sampled_from(["call_1", "call_2", ""]),
        st.sampled_from(["get_weather", "", "multi_tool_use.parallel"]),
    ),
    st.builds(delta, st.integers(0, 3), _fragment, _ids, st.booleans()),
    st.builds(
        args_done, st.integers(0, 3), st.sampled_from(["", '{"a": 1}', "{"]), _ids, st.booleans()
    ),
    st.builds(
        lambda i, iid, text: item_done(i, item(item_id=iid, text=text, status="completed")),
        st.integers(0, 3),
        _ids,
        st.sampled_from(["", '{"a": 1}']),
    ),
    st.builds(
        lambda text: {
            "type": "response.output_text.delta",
            "output_index": 0,
            "item_id": "msg_1",
            "delta": text,
        },
        st.sampled_from(["", "hi", '"name": "f", "arguments"']),
    ),
    st.builds(
        lambda status, text: completed([item(text=text, status="completed")], status),
        st.sampled_from(["completed", "incomplete", "failed"]),
        st.sampled_from(["", '{"a": 1}']),
    ),
    st.just(created()),
    st.just({"type": "error", "message": "boom"}),
    st.just("{not json"),
    st.just({"type": "new_event"}),
)
streams = st.builds(
    lambda events, seq: numbered(events) if seq else events,
    st.lists(_event, max_size=30),
    st.booleans(),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(streams)
def test_the_exported_accumulator_reads_as_robust_does(events):
    from streamscope.dialects.responses import reference
    from streamscope.dialects.responses.fixture import FIXTURE

    pairs = [(f.event, f.data) for f in frames(events)]
    served = FIXTURE.served(pairs)
    engine = ResponsesEngine()
    for frame in frames([orjson.loads(data) for _, data in served]):
        engine.feed(frame)
    expected = [FIXTURE.expected(c) for c in engine.finish(expect_done=False).tool_calls]
    scope: dict = {}
    exec(reference.source(), scope)
    assert scope["accumulate"](FIXTURE.events(served)) == expected


# -- the dialect, told; the contract across exchanges ------------------------------------


def test_the_dialect_is_told_by_content_never_by_name(tmp_path):
    path = tmp_path / "anthropic.txt"  # the name lies
    path.write_bytes(sse(WEATHER))
    assert analyze(path).streams[0].dialect == "openai-responses"
    log = tmp_path / "stream.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in WEATHER))
    (stream,) = analyze(log).streams
    assert stream.dialect == "openai-responses" and len(stream.tool_calls) == 1


def _recording(path, url: str, bodies: list[dict], streams: list[list]) -> None:
    from streamscope.recording import RecordingWriter

    with RecordingWriter(str(path)) as w:
        for body, events in zip(bodies, streams, strict=True):
            x = w.new_exchange()
            w.request(x, "POST", url, [], orjson.dumps(body))
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, sse(events))
            w.end(x, "complete")


QUESTION = [{"role": "user", "content": "weather?"}]
ANSWER = response(message_item(0, "Sunny."), rid="resp_2")


def _output(call_id: str = "call_1") -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": "sunny"}


@pytest.mark.parametrize(
    "second, found",
    [
        ({"input": [*QUESTION, SENT, _output()]}, set()),
        (
            {"input": [*QUESTION, SENT, _output("call_9")]},
            {"tool-result-id-mismatch", "tool-result-missing"},
        ),
        (
            {"input": [*QUESTION, {**SENT, "call_id": "call_x"}, _output("call_x")]},
            {"tool-call-id-substituted"},
        ),
        (
            {"input": [*QUESTION, {**SENT, "arguments": '{"city": "Rome"}'}, _output()]},
            {"tool-call-arguments-changed"},
        ),
        (
            {"input": [*QUESTION, SENT, {"role": "user", "content": "and?"}]},
            {"tool-result-missing"},
        ),
        ({"previous_response_id": "resp_1", "input": [_output()]}, set()),
        (
            {"previous_response_id": "resp_1", "input": [_output("call_9")]},
            {"tool-result-id-mismatch", "tool-result-missing"},
        ),
        ({"previous_response_id": "resp_unknown", "input": [_output("call_9")]}, set()),
    ],
)
def test_each_call_id_is_answered_by_a_function_call_output(tmp_path, second, found):
    path = tmp_path / "agent.jsonl"
    first = {"model": "m", "input": QUESTION, "stream": True}
    _recording(
        path,
        "https://api.openai.com/v1/responses",
        [first, {"model": "m", "stream": True, **second}],
        [WEATHER, ANSWER],
    )
    doc = analyze(path)
    assert {s.dialect for s in doc.streams} == {"openai-responses"}
    assert {f.kind for f in doc.contract} == found, [f.message for f in doc.contract]
    for f in doc.contract:
        assert "None" not in f.message
        if f.kind == "tool-result-id-mismatch":
            assert "call_id" in f.message
        if f.kind == "tool-result-missing":
            assert "function_call_output" in f.message
            assert ("previous_response_id" in second) == ('response "resp_1"' in f.message)


def test_a_gateway_path_is_told_by_the_body(tmp_path):
    path = tmp_path / "gateway.jsonl"
    first = {"model": "m", "input": QUESTION, "stream": True}
    second = {"model": "m", "stream": True, "input": [*QUESTION, SENT, _output("call_9")]}
    _recording(path, "https://gateway.example/api/llm", [first, second], [WEATHER, ANSWER])
    doc = analyze(path)
    assert {s.dialect for s in doc.streams} == {"openai-responses"}
    (mismatch,) = [f for f in doc.contract if f.kind == "tool-result-id-mismatch"]
    assert mismatch.at_message == 2


# -- the projects' own recorded streams ---------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "responses"
WRAPPER = (
    '{"tool_uses":[{"recipient_name":"functions.weather","parameters":{"location":'
    '"San Francisco"}},{"recipient_name":"functions.cityAttractions","parameters":'
    '{"city":"Rome"}}]}'
)
# file -> (robust's calls as (output, call_id, item_id, name, arguments), the traps each
# shows: kind -> the frame it is named at); see fixtures/responses/README.md.
EXPECTED: dict[str, tuple[list[tuple], dict[str, int]]] = {
    "pydantic-ai-gpt-4o-function-call.sse": (
        [
            (
                0,
                "call_HQHdUC4vy1PBrZTJ85nBHmeQ",
                "fc_0e9d73f2a1a362c000697ccca32a988194b336865ac70890e1",
                "get_capital",
                '{"country":"France"}',
            )
        ],
        {},
    ),
    "pydantic-ai-gpt-5-custom-tool-call.sse": (
        [
            (
                1,
                "call_2GHkSm2Jm0n7vgXsQEryfGmL",
                "ctc_0e3f1d7b90a3b1d70069580db5e9d08191a1bd569bc6a4ce56",
                "execute_sql",
                "SELECT * FROM users LIMIT 5;",
            )
        ],
        {},
    ),
    "vercel-ai-gpt-5.1-function-call-obfuscation.sse": (
        [
            (
                0,
                "call_2FQdm3Br7Qb35YUBSkDR7kue",
                "fc_0775572d10a16b66006a8d8528e8a887d2a32ef76463d40c98",
                "get_weather",
                '{"city":"Beijing"}',
            )
        ],
        {},
    ),
    "vercel-ai-azure-tool-call-obfuscation.sse": (
        [
            (
                0,
                "call_H5DxLSFnsGhiROnUiDHmgyc8",
                "fc_04041325ab8ae30400698c51c5468c8197a395f18875a5339f",
                "weather",
                '{"location":"San Francisco"}',
            )
        ],
        {},
    ),
    "vercel-ai-gpt-5.2-reasoning-then-function-call.sse": (
        [
            (
                1,
                "call_LUBOONF2cY8HDQdBwiEQ9fk1",
                "fc_0039ff4ed0aeca1e016ac948b5165087d2963a44253b4bccbb",
                "lookupCode",
                "{}",
            )
        ],
        {},
    ),
    "vercel-ai-custom-tool.sse": (
        [
            (
                0,
                "call_custom_sql_001",
                "ct_abc123def456",
                "write_sql",
                "SELECT * FROM users WHERE age > 25",
            )
        ],
        {},
    ),
    "vercel-ai-custom-text-tool-index-gap.sse": (
        [
            (
                1,
                "call_g8yRNFvYwhYY5Eb3rGIAxf8l",
                "ctc_0bbd8ccbe12a7c9b006a61f8e3d35c8192a57844f5fbd26f2d",
                "setHtml",
                "<main><h1>Streaming custom tool input</h1>"
                "<p>This must arrive progressively.</p></main>",
            )
        ],
        {"sequence-disorder": 2},
    ),
    "vercel-ai-parallel-wrapper-issue-19067.sse": (
        [(0, "call_parallel", "fc_parallel", "parallel", WRAPPER)],
        {"parallel-wrapper": 5, "final-output-mismatch": 6},  # (5: the item's done)
    ),
    "vercel-ai-parallel-wrapper-truncated-json.sse": (
        [(0, "call_parallel", "fc_parallel", "parallel", WRAPPER)],
        {"parallel-wrapper": 5, "chunk-invalid-json": 1, "response-end-missing": 6},
    ),
    "vercel-ai-compatible-tool-call-no-arguments-done.sse": (
        [
            (
                0,
                "call_weather_sf",
                "fc_call_001",
                "getWeather",
                '{"location":"San Francisco","unit":"celsius"}',
            )
        ],
        {"event-schema-violation": 14},  # response.completed has no id
    ),
    "vercel-ai-inline-tool-calls-call-id-mismatch.sse": (
        [
            (
                0,
                "call_pgjcAI4ZegMkP6bsAV7sfrJA",
                "fc_67cb13a838088190be08eb3927c87501",
                "currentLocation",
                "{}",
            ),
            (
                1,
                "call_X2PAkDJInno9VVnNkDrfhboW",
                "fc_67cb13a858f081908a600343fa040f47",
                "weather",
                '{"location":"Rome"}',
            ),
        ],
        {"id-changed": 6},
    ),
    # the message's id changes at its output_item.done, the response's at the end
    "vercel-ai-inline-incomplete-text.sse": ([], {"event-schema-violation": 8}),
    "vercel-ai-error-event-then-failed.sse": ([], {"provider-error": 3}),
    "vercel-ai-error-event-only.sse": ([], {"provider-error": 1}),
    "vercel-ai-response-failed-only.sse": ([], {"provider-error": 2}),
    # a tool search the client runs: its call_id changes at its output_item.done
    "vercel-ai-client-tool-search.sse": ([], {"id-changed": 4}),
    # Copilot's gateway: a new response id at in_progress (and again at completed), a new
    # item id at each output_item.done (outputs 0 and 1: one entry, at the first)
    "vercel-ai-github-copilot-id-rotation.sse": ([], {"event-schema-violation": 2}),
}


def test_every_recorded_stream_has_its_expectation():
    assert set(EXPECTED) == {p.name for p in FIXTURES.glob("*.sse")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_projects_recorded_streams(name):
    (stream,) = analyze(FIXTURES / name).streams
    assert stream.dialect == "openai-responses"
    assert not NOT_HERE & kinds(stream)
    want, traps = EXPECTED[name]
    assert [(c.index, c.id, c.item_id, c.name, c.arguments) for c in stream.tool_calls] == want
    named: dict[str, int] = {}  # each kind at its first frame
    for a in stream.anomalies:
        if a.severity != "info":
            named.setdefault(a.kind, a.frame)
    assert named == traps, [a.to_json() for a in stream.anomalies]
    # a chunk log of the same events reads the same
    log = FIXTURES / name.replace(".sse", ".jsonl")
    if log.exists():
        (again,) = analyze(log).streams
        assert calls(again) == calls(stream) and again.dialect == "openai-responses"


def test_items_the_client_adds_without_a_role_are_its_own_turn():
    from streamscope.dialects.responses.history import history

    h = history(
        {
            "input": [
                {"role": "user", "content": "run echo hello"},
                {"type": "configuration_update", "reasoning": {"effort": "medium"}},
                {"type": "reasoning", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                {"type": "computer_call_output", "call_id": "c0", "output": {}},
            ]
        }
    )
    assert h is not None
    # the user's side: the user's message and what the client adds after it; the model's:
    # its reasoning and its call
    assert [(t.role, t.client) for t in h.turns] == [
        ("user", False),
        ("configuration_update", True),
        ("reasoning", False),
        ("function_call", False),
        ("computer_call_output", True),
    ]


def test_codex_over_http_continues_its_request_after_its_configuration_update(tmp_path):
    # Codex's default model path: a configuration_update after the user's message, and
    # each turn the whole history again, the first request byte for byte a prefix
    path = tmp_path / "codex.jsonl"
    config = {"type": "configuration_update", "reasoning": {"effort": "medium"}}
    asked = [*QUESTION, config]
    bodies = [{"model": "m", "stream": True, "input": items} for items in (asked, [*asked, SENT])]
    bodies[1]["input"].append(_output())
    _recording(path, "https://api.openai.com/v1/responses", bodies, [WEATHER, ANSWER])
    doc = analyze(path)
    assert doc.contract == [], [f.message for f in doc.contract]
    # and a call sent back changed is still found there
    bodies[1]["input"][-2:] = [{**SENT, "call_id": "call_x"}, _output("call_x")]
    changed = tmp_path / "changed.jsonl"
    _recording(changed, "https://api.openai.com/v1/responses", bodies, [WEATHER, ANSWER])
    assert [f.kind for f in analyze(changed).contract] == ["tool-call-id-substituted"]


# -- identities that change: where the openai SDK raises, robust names it ---------------------

SEARCH = {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_1", "arguments": {}}


def _search(execution: str | None, done_call_id: str = "call_2") -> list[dict]:
    what = {**SEARCH, **({"execution": execution} if execution else {})}
    done = {**what, "call_id": done_call_id, "arguments": {"goal": "weather"}}
    return response([added(0, what), item_done(0, done)])


@pytest.mark.parametrize(
    ("execution", "kind", "severity"),
    [("client", "id-changed", "error"), ("server", "event-schema-violation", "warning")],
)
def test_a_tool_search_whose_call_id_changes(execution, kind, severity):
    # a tool search is no call robust reads, but one the client runs is answered by its
    # call_id: two of them are a changed call id; on a search the server runs, a field
    # that does not fit. Both at the output_item.done (frame 3), where the SDK raises.
    result = run(_search(execution))
    assert result.tool_calls == []
    (found,) = [a for a in result.anomalies if a.severity != "info"]
    assert (found.kind, found.severity, found.frame, found.index) == (kind, severity, 3, 0)
    assert '"call_2"' in found.message and '"call_1"' in found.message
    assert ("tool_search_output" in found.message) == (execution == "client")
    assert not [a for a in run(_search(execution, "call_1")).anomalies if a.severity != "info"]


@pytest.mark.parametrize("kind", ["response.in_progress", "response.queued", "response.created"])
def test_a_lifecycle_event_with_another_response_id_is_named_where_it_comes(kind):
    # GitHub Copilot's gateway sends each lifecycle event with a new response id: named at
    # the first that changes it (frame 2), once for the stream; robust keeps the first
    rotated = {"type": kind, "response": {"id": "resp_2", "status": "in_progress", "output": []}}
    events = response(message_item(0))
    events.insert(1, rotated)
    result = run(numbered(events))
    (found,) = [a for a in result.anomalies if a.severity != "info"]
    assert (found.kind, found.frame, found.count) == ("event-schema-violation", 2, 1)
    assert f'{kind} carries response id "resp_2"' in found.message
    assert 'response.created said "resp_1"' in found.message
    assert result.response_id == "resp_1"
    # the end says yet another: the same entry, counted
    events[-1] = completed(events[-1]["response"]["output"], rid="resp_3")
    (again,) = [a for a in run(numbered(events)).anomalies if a.severity != "info"]
    assert (again.frame, again.count) == (2, 2)
    # the same id again says nothing
    events = response(message_item(0))
    events.insert(1, {**rotated, "response": {**rotated["response"], "id": "resp_1"}})
    assert not [a for a in run(numbered(events)).anomalies if a.severity != "info"]
    # a first event with no id is the snapshot's too: the SDK raises at the next with one
    events = response(message_item(0))
    del events[0]["response"]["id"]
    events.insert(1, rotated)
    (none,) = [a for a in run(numbered(events)).anomalies if a.severity != "info"]
    assert none.frame == 2 and "where response.created carried none" in none.message


def test_a_call_whose_item_ids_rotate_is_read_whole():
    # GitHub Copilot's gateway gives every event of an item a new item id: robust finds the
    # deltas by output_index, and the final output's call by its call_id, as the SDK knows
    # a call; the changed ids are named where they change
    events = [
        created(),
        {"type": "response.in_progress", "response": {"id": "resp_2", "output": []}},
        added(0, item(item_id="fc_a")),
        delta(0, '{"city": ', "fc_b"),
        delta(0, '"Paris"}', "fc_c"),
        args_done(0, '{"city": "Paris"}', "fc_d"),
        item_done(0, item(item_id="fc_e", text='{"city": "Paris"}', status="completed")),
        completed(
            [item(item_id="fc_f", text='{"city": "Paris"}', status="completed")], rid="resp_3"
        ),
    ]
    result = run(numbered(events))
    assert calls(result) == [(0, 0, "call_1", "get_weather", "function_call", '{"city": "Paris"}')]
    found = {a.kind: (a.frame, a.count) for a in result.anomalies if a.severity != "info"}
    assert found == {"event-schema-violation": (2, 2), "id-changed": (7, 2)}


def test_the_sdk_is_said_to_raise_at_a_call_id_change_only_where_it_does():
    # the openai SDK checks an item's identity at its output_item.done, never against the
    # final output: a change only the final output makes is robust's finding alone
    at_done = response([*call()[:-1], item_done(0, {**SENT, "call_id": "call_2"})])
    (found,) = [a for a in run(at_done).anomalies if a.kind == "id-changed"]
    assert "(the openai SDK raises)" in found.message
    final = response(call())
    final[-1] = completed([{**SENT, "call_id": "call_2"}])
    (found,) = [a for a in run(numbered(final)).anomalies if a.kind == "id-changed"]
    assert "SDK raises" not in found.message and "response.completed's output" in found.message
