"""Why `openai-sdk` raises where the request declares a strict tool: openai-python's stream
helper parses a strict tool's arguments (dialects/chat/strict.py), and inspect, its JSON and
the replay say so in one line beside the exception."""

from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.calls import StrategyError
from streamscope.dialects.chat.oracle import sdk_result
from tests.helpers import frames_of, tool_def

URL = "https://api.openai.com/v1/chat/completions"


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _args(text: str, opener: bool = False) -> dict:
    call: dict = {"index": 0, "function": {"arguments": text}}
    if opener:
        call.update(id="call_1", type="function")
        call["function"]["name"] = "get_weather"
    return _chunk({"tool_calls": [call]})


# arguments cut short: `{"city": "Par`, then finish_reason tool_calls
CUT = [_args("", opener=True), _args('{"city": "Par'), _chunk({}, "tool_calls")]


def _recording(path, chunks: list, strict: bool) -> str:
    body = {"model": "gpt-test", "stream": True, "messages": [{"role": "user", "content": "?"}]}
    body["tools"] = [tool_def("get_weather", strict=strict)]
    records = [
        {"type": "header", "schema_version": 2, "tool": "streamscope", "tool_version": "0",
         "created": "2026-12-01T00:00:00Z", "argv": []},
        {"type": "request", "exchange": 1, "t_ns": 1, "method": "POST", "url": URL,
         "headers": [["content-type", "application/json"]], "body": json.dumps(body)},
        {"type": "response", "exchange": 1, "t_ns": 2, "status": 200,
         "headers": [["content-type", "text/event-stream"]]},
        *({"type": "chunk", "exchange": 1, "t_ns": 3 + i,
           "data": "data: " + orjson.dumps(c).decode() + "\n\n"} for i, c in enumerate(chunks)),
        {"type": "chunk", "exchange": 1, "t_ns": 90, "data": "data: [DONE]\n\n"},
        {"type": "end", "exchange": 1, "t_ns": 91, "reason": "complete", "error": None},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.fixture(scope="module")
def strict_file(tmp_path_factory) -> str:
    return _recording(tmp_path_factory.mktemp("strict") / "strict.jsonl", CUT, strict=True)


@pytest.mark.slow  # the real openai package answers (the emulation hands strict tools to it)
def test_inspect_says_why_the_sdk_raises_on_a_strict_tool(strict_file):
    done = CliRunner().invoke(main, ["inspect", strict_file])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("openai-sdk"))
    assert "raises JSONDecodeError: Unterminated string" in lines[at]
    assert "at frame 3" in lines[at]
    why = lines[at + 1].strip()
    assert why.startswith("why: `get_weather` is declared strict, so openai-python's stream")
    assert "json.loads when the call ends" in why and "not JSON" in why

    doc = json.loads(CliRunner().invoke(main, ["inspect", "--json", strict_file]).output)
    sdk = doc["streams"][0]["strategies"]["openai-sdk"]
    assert sdk["frame"] == 3 and sdk["error"].startswith("JSONDecodeError")
    assert sdk["why"] == why.removeprefix("why: ")


@pytest.mark.slow
def test_the_same_bytes_with_a_tool_that_is_not_strict_build_the_call(tmp_path):
    plain = _recording(tmp_path / "plain.jsonl", CUT, strict=False)
    doc = json.loads(CliRunner().invoke(main, ["inspect", "--json", plain]).output)
    sdk = doc["streams"][0]["strategies"]["openai-sdk"]
    assert "error" not in sdk and sdk["tool_calls"][0]["arguments"] == '{"city": "Par'


@pytest.mark.slow
@pytest.mark.parametrize(
    ("chunks", "error", "why"),
    [
        # text that cannot begin JSON: jiter's partial parse at the delta
        (
            [_args("", opener=True), _args("city=Paris"), _chunk({}, "tool_calls")],
            "ValueError",
            "parses its arguments at every delta (jiter, partial mode)",
        ),
        # no arguments at all: json.loads("") when the call ends (the emulation's own path)
        ([_args("", opener=True), _chunk({}, "tool_calls")], "JSONDecodeError", "json.loads"),
        # cut by max_tokens: the helper raises at the finish itself
        (
            [_args("", opener=True), _args('{"city": "Paris"}'), _chunk({}, "length")],
            "LengthFinishReasonError",
            "raises at finish_reason length rather than return calls",
        ),
    ],
)
def test_each_way_the_helper_raises_on_a_strict_tool_is_explained(chunks, error, why):
    got = sdk_result(frames_of([*chunks, "[DONE]"]), [tool_def("get_weather", strict=True)])
    assert isinstance(got, StrategyError) and got.error.startswith(error)
    assert got.why is not None and why in got.why
    # a raise a strict tool does not explain says nothing more than its exception
    other = sdk_result(frames_of([*chunks, "[DONE]"]), [tool_def("get_weather")])
    assert not isinstance(other, StrategyError) or other.why is None


def test_the_replays_strategy_line_puts_the_why_first():
    from streamscope.tui.widgets.strategy_label import strategy_label

    why = "`get_weather` is declared strict, so openai-python's stream helper parses"
    line = strategy_label("openai-sdk", StrategyError("JSONDecodeError: x", 3, why), 5).plain
    assert line.startswith(f"openai-sdk raised at frame 3: {why}")
    assert line.endswith("(JSONDecodeError: x)")
    assert "\n" not in line
    plain = strategy_label("openai-sdk", StrategyError("IndexError: y", 4), 5).plain
    assert plain == "openai-sdk: raised IndexError: y at frame 4"
