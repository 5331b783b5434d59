"""Custom (freeform) tool calls: `custom: {name, input}` read like a function call, the
input as free text, through every strategy, the schema check, the contract and the faces."""

from __future__ import annotations

import orjson
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.calls import StrategyError
from streamscope.core.contract import check
from streamscope.core.events import APPEND, FieldEvent
from streamscope.dialects.chat.appendix_a import FINISH, chunk
from streamscope.dialects.chat.engine import StreamEngine
from streamscope.dialects.chat.reference import accumulate
from streamscope.dialects.chat.schema import chunk_violation

from ...helpers import (
    CUSTOM_BESIDE_FUNCTION,
    SQL,
    WEATHER_ARGS,
    chat_conversation,
    custom_delta,
    frames_of,
    kinds,
    run,
    sse_body,
    tool_def,
)

ARGS, STREAM, custom = WEATHER_ARGS, CUSTOM_BESIDE_FUNCTION, custom_delta

RIGHT = [
    ("call_c", "custom", "run_sql", SQL),
    ("call_f", "function", "get_weather", ARGS),
]
TOOLS = [{"type": "custom", "custom": {"name": "run_sql"}}, tool_def("get_weather")]


def test_every_reading_strategy_assembles_the_custom_call_beside_the_function():
    got = run(STREAM, TOOLS)
    assert [(c.id, c.type, c.name, c.arguments) for c in got.tool_calls] == RIGHT
    for name in ("guarded", "naive", "openai-docs", "by-id"):
        assert not got.differs(name), name
    # a valid stream: nothing to warn about, no schema finding, nothing repaired
    assert [a.kind for a in got.anomalies if a.severity != "info"] == []
    assert got.repairs == [None, None]


def test_openai_sdk_reports_what_the_real_package_raises():
    err = run(STREAM).strategies["openai-sdk"]
    # openai 3.63's snapshot holds the call as a function tool call with a `custom` extra,
    # and get_final_completion() reads `tool_call.custom.name` on that dict
    assert err == StrategyError("AttributeError: 'dict' object has no attribute 'name'", 7)


def test_custom_input_is_never_json_checked_or_repaired():
    empty = [
        chunk(
            {"tool_calls": [custom(0, id="c", type="custom", custom={"name": "n", "input": ""})]}
        ),
        FINISH,
    ]
    quiet = {"args-invalid-json", "args-empty", "args-resent", "args-cumulative"}
    assert not kinds(run(empty)) & quiet
    # text that would look re-sent or cumulative as JSON is just appended
    twice = [
        chunk(
            {"tool_calls": [custom(0, id="c", type="custom", custom={"name": "n", "input": "{}"})]}
        ),
        chunk({"tool_calls": [custom(0, custom={"input": "{}"})]}),
        chunk({"tool_calls": [custom(0, custom={"input": "{}x"})]}),
        FINISH,
    ]
    got = run(twice)
    assert got.tool_calls[0].arguments == "{}{}{}x" and got.repairs == [None]
    assert not kinds(got) & quiet


def test_a_delta_with_neither_function_nor_custom_is_still_named():
    bare = [chunk({"tool_calls": [custom(0, id="c", type="custom")]}), FINISH]
    assert {"function-missing", "name-missing"} <= kinds(run(bare))
    assert "function-missing" not in kinds(run(STREAM))


def test_schema_accepts_a_valid_custom_delta_and_names_a_broken_one():
    for payload in STREAM:
        assert chunk_violation(payload) is None
    bad = chunk({"tool_calls": [custom(0, type="custom", custom={"input": 5})]})
    assert chunk_violation(bad) == (
        "choices[0].delta.tool_calls[0].custom.input is a JSON number, not a string"
    )
    other = chunk({"tool_calls": [custom(0, type="mcp")]})
    assert 'not "function" or "custom"' in chunk_violation(other)


def test_an_undeclared_custom_tool_is_named():
    assert "name-undeclared" not in kinds(run(STREAM, TOOLS))
    assert "name-undeclared" in kinds(run(STREAM, [tool_def("get_weather")]))


def test_the_exported_accumulator_reads_custom_input_as_text():
    assert [(c["id"], c["name"], c["arguments"]) for c in accumulate(STREAM)] == [
        (i, n, a) for i, _, n, a in RIGHT
    ]


def test_the_frame_detail_says_input_for_a_custom_call():
    engine = StreamEngine(1, collect_events=True)
    engine_events: list[FieldEvent] = []
    for frame in frames_of(STREAM):
        engine_events += engine.feed(frame) or []
    appended = [e for e in engine_events if e.op == APPEND]
    assert appended[0].describe() == 'index 0: input += "SELECT name FROM users"'
    assert appended[-1].describe() == f"index 1: arguments += {orjson.dumps(ARGS).decode()}"
    assert FieldEvent(1, APPEND, 0, 0).describe().startswith("index 0: arguments +=")


def test_inspect_shows_custom_calls(tmp_path):
    path = tmp_path / "custom.sse"
    path.write_bytes(sse_body(STREAM))
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", str(path), "--json"]).output)
    (stream,) = doc["streams"]
    assert [(c["id"], c["type"], c["name"], c["arguments"]) for c in stream["tool_calls"]] == RIGHT
    assert [c["repair"] for c in stream["tool_calls"]] == [None, None]
    assert stream["anomalies"] == []
    text = CliRunner().invoke(main, ["inspect", str(path)]).output
    row = next(line for line in text.splitlines() if '"call_c"' in line)
    assert '"custom"' in row and '"run_sql"' in row and "SELECT name FROM users" in row


def _assistant(*tool_calls: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": list(tool_calls)}


def _custom_back(id: str, input: str) -> dict:
    return {"id": id, "type": "custom", "custom": {"name": "run_sql", "input": input}}


def _function_back(id: str) -> dict:
    return {"id": id, "type": "function", "function": {"name": "get_weather", "arguments": ARGS}}


def _findings(messages: list) -> list[str]:
    calls = run(STREAM).tool_calls
    asked = chat_conversation(1, {"messages": messages[:1]})  # the stream's own request
    conv = chat_conversation(2, {"messages": messages})
    return [f.kind for f in check([(1, calls)], [asked, conv]).findings]


def _result(id: str) -> dict:
    return {"role": "tool", "tool_call_id": id, "content": "ok"}


USER = {"role": "user", "content": "go"}


def test_the_contract_follows_a_custom_call_into_the_next_request():
    good = [USER, _assistant(_custom_back("call_c", SQL), _function_back("call_f"))]
    assert _findings([*good, _result("call_c"), _result("call_f")]) == []
    # a substituted id, other input, a dropped call, a call sent back as a function
    assert _findings(
        [
            USER,
            _assistant(_custom_back("uuid-1", SQL), _function_back("call_f")),
            _result("uuid-1"),
            _result("call_f"),
        ]
    ) == ["tool-call-id-substituted"]
    assert _findings(
        [
            USER,
            _assistant(_custom_back("call_c", SQL + "}"), _function_back("call_f")),
            _result("call_c"),
            _result("call_f"),
        ]
    ) == ["tool-call-input-changed"]
    assert _findings([USER, _assistant(_function_back("call_f")), _result("call_f")]) == [
        "tool-call-dropped"
    ]
    as_function = {
        "id": "call_c",
        "type": "function",
        "function": {"name": "run_sql", "arguments": SQL},
    }
    assert "tool-call-type-changed" in _findings(
        [
            USER,
            _assistant(as_function, _function_back("call_f")),
            _result("call_c"),
            _result("call_f"),
        ]
    )
    # the tool results answer the custom call like any other
    assert _findings([*good, _result("call_f")]) == ["tool-result-missing"]


def test_a_custom_tools_declaration_is_named_in_the_request_tools():
    # {"type": "custom", "custom": {"name": ...}}: inspect said "request tools (2): null,
    # "read_file"" and the replay's request showed the custom tool unnamed
    from streamscope.dialects.chat.history import history

    body = {
        "messages": [],
        "tools": [
            {"type": "custom", "custom": {"name": "run_shell", "description": "one command"}},
            {"type": "function", "function": {"name": "read_file", "parameters": {}}},
        ],
    }
    got = history(body)
    assert got is not None
    assert [(t.name, t.description) for t in got.tools] == [
        ("run_shell", "one command"),
        ("read_file", None),
    ]
