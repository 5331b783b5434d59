"""Ollama's native chat read end to end: the reading (calls before and in the done line,
several in a line, exact arguments), every anomaly kind of the dialect, the clients, bad
input, the request claims, the contract, the CLI on saved bodies and the sample."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.dialects import ANOMALY_KINDS as KINDS
from streamscope.dialects import DIALECTS, of_request
from streamscope.dialects.ollama import wire

from .events import OLDER, WEATHER, WEATHER_TOOL, body, call, calls, final, kinds, line, run

FIXTURES = Path(__file__).parents[2] / "fixtures" / "ollama"
SAMPLES = Path(__file__).parents[3] / "recordings"

# kind -> (lines that trigger it, lines like them that must not, run() arguments)
CASES: dict[str, tuple[list, list, dict]] = {
    "call-before-done": (WEATHER, OLDER, {}),
    "args-string": ([line("", call(args='{"city":"Paris"}')), final()], WEATHER, {}),
    "id-missing": (OLDER, WEATHER, {}),
    "name-missing": ([line("", call(name="")), final()], WEATHER, {}),
    "name-undeclared": (
        [line("", call("get_news", id="c")), final()],
        WEATHER,
        {"tools": WEATHER_TOOL},
    ),
    "done-line-missing": (WEATHER[:2], WEATHER, {}),
    "done-reason-stop-with-calls": (WEATHER, [line("Sunny."), final()], {}),
    "stop-reason-mismatch": ([*WEATHER[:2], final("length")], WEATHER, {}),
    "line-after-done": ([*WEATHER, line("more")], WEATHER, {}),
    "role-repeated": ([line("Sunny."), final()], [final()], {}),
    "provider-error": ([WEATHER[0], {"error": "model 'x' not found"}], WEATHER, {}),
    "chunk-invalid-json": ([WEATHER[0], "{not json", *WEATHER[1:]], WEATHER, {}),
    "event-schema-violation": ([line("", {"function": "get_weather"}), final()], WEATHER, {}),
    "tool-call-in-content": (
        [line('{"name": "get_weather", "arguments": {"city": "Paris"}}'), final()],
        [line("Sunny."), final()],
        {},
    ),
    "args-empty": ([line("", {"function": {"name": "f"}}), final()], WEATHER, {}),
    "stream-truncated": (WEATHER, WEATHER, {"end_reason": "upstream-error"}),
}
QUIET_EXTRA = {"stream-truncated": {}}


def test_every_own_kind_is_registered_and_tested():
    own = DIALECTS["ollama-chat"].kinds
    assert own and set(own) <= set(KINDS) and set(own) <= set(CASES)


# -- the reading ----------------------------------------------------------------------------


def test_a_call_before_done_keeps_its_id_and_the_object_as_sent():
    result = run(WEATHER, WEATHER_TOOL)
    assert calls(result) == [(0, 0, "call_a1", "get_weather", "function", '{"city":"Paris"}')]
    assert result.dialect == "ollama-chat" and result.ended == "done"
    assert result.finish_reason == "stop" and result.content == "Let me look."
    assert result.strategies["stop-at-done"] == []
    # the ollama package keeps no id: its users send the call back without the one sent
    (sdk,) = result.strategies["ollama-python"]
    assert result.differs("ollama-python") and (sdk.id, sdk.arguments) == ("", '{"city":"Paris"}')


def test_a_call_in_the_done_line_is_read_and_no_id_is_invented():
    result = run(OLDER)
    assert calls(result) == [(0, 0, "", "get_weather", "function", '{"city":"Paris"}')]
    assert not result.differs("stop-at-done") and "call-before-done" not in kinds(result)


def test_two_calls_of_one_name_without_ids_in_one_line_stay_two():
    events = [line("", call(args={"city": "Paris"}), call(args={"city": "Lyon"})), final()]
    result = run(events)
    assert [(c.index, c.id, c.arguments) for c in result.tool_calls] == [
        (0, "", '{"city":"Paris"}'),
        (1, "", '{"city":"Lyon"}'),
    ]
    (merged,) = result.strategies["by-name"]
    assert merged.arguments == '{"city":"Lyon"}'
    assert result.strategies["content-only"] == []


def test_calls_across_lines_are_keyed_by_their_order_not_function_index():
    events = [line("", call("a", {}, index=0)), line("", call("b", {}, index=0)), final()]
    assert [(c.index, c.name) for c in run(events).tool_calls] == [(0, "a"), (1, "b")]


def test_arguments_are_never_reparsed_keys_order_and_big_numbers_kept():
    text = (
        '{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":'
        '{"name":"f","arguments":{"z": 123456789012345678901234567890, "a": "12345678901234567890123456",'
        ' "f": 1.50e3, "e": "\\u00e9", "dup": 1, "dup": 2}}}]},"done":false}'
    )
    (got,) = run([text, final()]).tool_calls
    assert got.arguments == (
        '{"z":123456789012345678901234567890,"a":"12345678901234567890123456",'
        '"f":1.50e3,"e":"é","dup":1,"dup":2}'
    )


def test_a_number_past_a_double_is_valid_json_and_read():
    text = '{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"x":1e400}}}]},"done":false}'
    result = run([text, final()])
    assert [c.arguments for c in result.tool_calls] == ['{"x":1e400}']
    assert "chunk-invalid-json" not in kinds(result)


def test_thinking_is_the_reasoning_and_counters_do_not_disturb():
    events = [line("", thinking="The user"), line("Hi", thinking=""), final()]
    result = run(events)
    assert (result.reasoning_content, result.content) == ("The user", "Hi")


def test_an_error_line_ends_the_stream_as_the_client_raises():
    result = run([WEATHER[0], {"error": "model runner has unexpectedly stopped"}])
    assert result.ended == "error" and "done-line-missing" not in kinds(result)
    sdk = result.strategies["ollama-python"]
    assert sdk.error == "ResponseError: model runner has unexpectedly stopped (status code: -1)"


# -- the laws -------------------------------------------------------------------------------

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_entries = st.builds(
    lambda name, args, fid: call(name, args) if fid is None else call(name, args, id=fid),
    st.sampled_from(["get_weather", "get_time", ""]),
    st.dictionaries(st.text(max_size=4), _values, max_size=3) | _values,
    st.none() | st.sampled_from(["c1", "c2", ""]),
)
_lines = st.one_of(
    st.builds(line, st.text(max_size=8)),
    st.builds(lambda cs: line("", *cs), st.lists(_entries, min_size=1, max_size=3)),
    st.builds(lambda cs: final("stop", *cs), st.lists(_entries, max_size=2)),
    st.sampled_from(["{not json", "[1]", '{"error":"boom"}', '{"done":"yes"}', "{}"]),
)
streams = st.lists(_lines, max_size=8)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"message": "x", "done": False},
        {"message": {"role": "assistant", "tool_calls": {}}, "done": False},
        {
            "message": {"role": "assistant", "tool_calls": [1, None, {"function": []}]},
            "done": False,
        },
        {"message": {"role": "assistant", "content": 5, "thinking": []}, "done": False},
        line("", {"id": 7, "function": {"name": 3, "arguments": [1]}}),
        {"done": 1, "model": "m"},
        {"done": True, "done_reason": 4, "model": "m"},
        {},
        [1, 2],
        "null",
        '"text"',
        '{"message":{"role":"assistant","tool_calls":[{"function":{"name":"\\ud800","arguments":{"\\ud800":1}}}]},"done":false}',
        '{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":'
        + "[" * 3000
        + "]" * 3000
        + "}}]}}",
    ],
)
def test_bad_input_is_an_anomaly_never_a_traceback(bad, tmp_path):
    events = [WEATHER[1], bad, WEATHER[2]]
    result = run(events)
    assert result.tool_calls  # the rest is still read
    assert kinds(result) - {"call-before-done", "done-reason-stop-with-calls", "role-repeated"}
    path = tmp_path / "bad.jsonl"
    path.write_bytes(body([WEATHER[0], *events]))
    for args in (["inspect", str(path)], ["inspect", "--json", str(path)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0 and out.exception is None, out.output


def test_a_line_cut_in_the_middle_is_a_truncation(tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_bytes(body(WEATHER[:2]) + b'{"model":"m","message":{"role":"assis')
    result = analyze(path).streams[0]
    assert result.ended == "truncated" and "stream-truncated" in kinds(result)
    assert [c.name for c in result.tool_calls] == ["get_weather"]


# -- the requests ---------------------------------------------------------------------------


def test_requests_are_claimed_by_path_and_by_body_never_a_chat_completions_one():
    assert of_request("http://127.0.0.1:11434/api/chat", {}) == "ollama-chat"
    assert of_request("https://gw.example/ollama/api/chat", None) == "ollama-chat"
    msgs = [{"role": "user", "content": "hi"}]
    for key, value in (("options", {}), ("keep_alive", "5m"), ("format", "json"), ("think", True)):
        assert of_request("http://gw/x", {"messages": msgs, key: value}) == "ollama-chat"
    assert (
        of_request("http://gw/x", {"model": "gpt", "messages": msgs, "stream": True})
        != "ollama-chat"
    )
    chat_call = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    assert not wire.claims_body({"messages": [*msgs, chat_call], "response_format": {}})
    assert not wire.claims_body({"messages": [*msgs, chat_call]})
    ollama_call = {
        "role": "assistant",
        "tool_calls": [{"function": {"name": "f", "arguments": {}}}],
    }
    assert wire.claims_body({"messages": [*msgs, ollama_call]})


def test_the_wire_functions():
    watch = wire.final_event("/api/chat")
    watch.seen(b'{"message":{"role":"assistant","content":"x"},"done":false}\n')
    assert not watch.relayed
    watch.seen(b'{"message":{"role":"assistant","content":""},"done":true}\n')
    assert watch.relayed
    assert orjson.loads(wire.error_document(404, "not_found", "boom")) == {"error": "boom"}
    facts = wire.facts("/api/chat", {"model": "qwen3", "messages": [], "tools": WEATHER_TOOL})
    assert facts.stream is True and facts.model == "qwen3" and facts.tools == WEATHER_TOOL
    assert wire.facts("/api/chat", {"stream": False}).stream is False


def test_the_contract_calls_back_by_value_and_results_by_name_or_id():
    h = DIALECTS["ollama-chat"].history(
        {
            "messages": [
                {"role": "user", "content": "weather?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                        {"id": "c2", "function": {"name": "get_time", "arguments": {}}},
                    ],
                },
                {"role": "tool", "tool_name": "get_weather", "content": "sunny"},
                {"role": "tool", "tool_call_id": "c2", "tool_name": "get_time", "content": "noon"},
            ]
        }
    )
    assert h is not None
    sent = h.turns[1].calls
    assert [(s.id, s.name, s.arguments, s.answered_by()) for s in sent] == [
        ("", "get_weather", '{"city":"Paris"}', ("get_weather",)),
        ("c2", "get_time", "{}", ("c2", "get_time")),
    ]
    assert [r.answers for t in h.turns for r in t.results] == ["get_weather", "c2"]


# -- the projects' streams and the sample ---------------------------------------------------


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.ndjson")), ids=lambda p: p.name)
def test_the_projects_streams_read_as_they_assemble_them(path):
    result = analyze(path).streams[0]
    want = json.loads((FIXTURES / "expected.json").read_text())[path.name]
    assert result.dialect == "ollama-chat"
    assert [
        {"id": c.id, "name": c.name, "arguments": c.arguments} for c in result.tool_calls
    ] == want
    if not want:
        assert "tool-call-in-content" in kinds(result)


def test_the_sample_reads_two_calls_of_one_name():
    out = CliRunner().invoke(
        main, ["inspect", "--json", str(SAMPLES / "ollama-native-two-calls.ndjson")]
    )
    assert out.exit_code == 0, out.output
    (stream,) = orjson.loads(out.output)["streams"]
    assert stream["dialect"] == "ollama-chat"
    assert [(c["name"], c["id"], c["arguments"]) for c in stream["tool_calls"]] == [
        ("get_weather", "", '{"city":"Paris"}'),
        ("get_weather", "", '{"city":"Lyon"}'),
    ]


def test_the_exported_pytest_module_passes_through_the_real_client(tmp_path):
    pytest.importorskip("ollama")
    import os
    import subprocess
    import sys

    module = tmp_path / "test_exported.py"
    sample = str(SAMPLES / "ollama-native-two-calls.ndjson")
    out = CliRunner().invoke(main, ["export", sample, "--format", "pytest", "-o", str(module)])
    assert out.exit_code == 0, out.output
    assert "NOTE" not in module.read_text()
    run_ = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            str(module),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # it needs no plugin
    )
    assert run_.returncode == 0, run_.stdout


@pytest.mark.parametrize("fmt", ["sse", "recording"])
def test_a_minimal_export_is_written_in_the_streams_own_framing(tmp_path, fmt):
    """`--minimal` writes NDJSON lines an Ollama client reads (no `data:` events)."""
    out = tmp_path / f"minimal.{fmt}"
    done = CliRunner().invoke(
        main,
        ["export", str(SAMPLES / "ollama-two-calls.jsonl"), "--minimal", "--format", fmt]
        + ["-o", str(out)],
    )
    assert done.exit_code == 0, done.output
    assert b"data:" not in out.read_bytes()
    doc = json.loads(CliRunner().invoke(main, ["inspect", "--json", str(out)]).stdout)
    (stream,) = doc["streams"]
    assert (stream["dialect"], stream["framing"]) == ("ollama-chat", "ndjson")
    assert [c["arguments"] for c in stream["tool_calls"]] == ['{"city":"Paris"}', '{"city":"Lyon"}']


def test_an_id_the_client_fills_in_where_ollama_sent_none_keeps_the_link():
    from streamscope.core.calls import Call
    from streamscope.core.contract import Conversation, check

    read = DIALECTS["ollama-chat"].history
    asked = [{"role": "user", "content": "weather?"}]

    def back(call_id: str, result_id: str) -> Conversation:
        sent = {"id": call_id, "function": {"name": "get_weather", "arguments": {"city": "P"}}}
        answer = {"role": "tool", "tool_call_id": result_id, "content": "sunny"}
        answer["tool_name"] = "get_weather"
        messages = [*asked, {"role": "assistant", "tool_calls": [sent]}, answer]
        return Conversation.of(2, read({"messages": messages}))

    def found(made_id: str, call_id: str, result_id: str) -> list[tuple[str, str]]:
        made = [Call(0, 0, made_id, "function", "get_weather", '{"city":"P"}', 1, 1, 1)]
        first = Conversation.of(1, read({"messages": asked}))
        return [
            (f.kind, f.severity)
            for f in check([(1, made)], [first, back(call_id, result_id)]).findings
        ]

    assert found("", "call_0", "call_0") == [("tool-call-id-filled", "info")]
    # an id the server sent, replaced by the client's: the model's id is lost
    assert found("call_srv", "call_0", "call_0") == [("tool-call-id-substituted", "error")]
