"""What inspect says of a stream's calls from the request that continues it: each call's
tool result (its content on a line, is_error), the tools' run time, and --full."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.recording import RecordingWriter

from . import anthropic_stream as anthropic
from . import responses_stream as responses
from .helpers import sse_body

MS = 1_000_000  # ns


def inspect(*args: str):
    result = CliRunner().invoke(main, ["inspect", *args])
    assert result.exit_code == 0, result.output
    return result.output


def write(path, url: str, turns: list[tuple[dict, list[bytes], int]]) -> str:
    """A recording of `turns`: (request body, the stream's events, when the request was
    sent, in ms); each stream's last event comes 100 ms after its request."""
    with RecordingWriter(path) as w:
        for body, events, at in turns:
            ex = w.new_exchange()
            w.request(
                ex, "POST", url, [("content-type", "application/json")], orjson.dumps(body), at * MS
            )
            w.response(ex, 200, [("content-type", "text/event-stream")], (at + 10) * MS)
            for k, e in enumerate(events):  # 5 ms apart, the last at 100 ms
                w.chunk(ex, e, (at + 100 - 5 * (len(events) - 1 - k)) * MS)
            w.end(ex, "complete", t_ns=(at + 100) * MS)
    return str(path)


# -- Anthropic: a loop of two calls, the first tool failed (is_error true) -------------

TOOL_USE = {"type": "tool_use", "id": anthropic.TOOL_ID, "name": "get_weather"}
SECOND_ID = "toolu_02SecondCallOfTheLoop00"
FAILED = 'Traceback (most recent call last):\n  File "weather.py", line 3\nTimeoutError'


def _second_call() -> list[bytes]:
    events = anthropic.tool_use_events()
    return [e.replace(anthropic.TOOL_ID.encode(), SECOND_ID.encode()) for e in events]


@pytest.fixture(scope="module")
def anthropic_loop(tmp_path_factory) -> str:
    call = {**TOOL_USE, "input": anthropic.TOOL_INPUT}
    first = [*anthropic.QUESTION, {"role": "assistant", "content": [call]}]
    failed = {"type": "tool_result", "tool_use_id": anthropic.TOOL_ID, "content": FAILED}
    failed["is_error"] = True
    second = [*first, {"role": "user", "content": [failed]}]
    again = {**call, "id": SECOND_ID}
    ok = {
        "type": "tool_result",
        "tool_use_id": SECOND_ID,
        "content": [{"type": "text", "text": "14 °C"}],
    }
    third = [*second, {"role": "assistant", "content": [again]}, {"role": "user", "content": [ok]}]
    base = {"model": anthropic.MODEL, "max_tokens": 100, "stream": True, "tools": anthropic.TOOLS}
    return write(
        tmp_path_factory.mktemp("a") / "loop.jsonl",
        "https://api.anthropic.com/v1/messages",
        [
            ({**base, "messages": anthropic.QUESTION}, anthropic.tool_use_events(), 0),
            ({**base, "messages": second}, _second_call(), 1_000),  # the tool ran 900 ms
            ({**base, "messages": third}, anthropic.answer_events(), 1_350),  # 250 ms
        ],
    )


def test_anthropic_results_say_is_error_and_the_tools_run_time(anthropic_loop):
    out = inspect(anthropic_loop)
    first, second = out.split("Tool results")[1:3]
    assert first.startswith(" sent by exchange 2 · tool run time 900 ms")
    # the traceback on one line, its line breaks shown
    assert (
        'is_error true  message 2  Traceback (most recent call last):↵  File "weather.py"' in first
    )
    assert second.startswith(" sent by exchange 3 · tool run time 250 ms")
    assert "is_error false  message 4  14 °C" in second
    assert "no error flag" not in out  # the Messages API has one


def test_anthropic_results_in_json(anthropic_loop):
    doc = orjson.loads(inspect(anthropic_loop, "--json"))
    one, two, three = doc["streams"]
    assert one["continued_by"] == {"exchange": 2, "tool_time_ms": 900.0, "timing": "recorded"}
    assert one["tool_calls"][0]["result"] == {
        "exchange": 2,
        "at_message": 2,
        "content": FAILED,  # whole, as sent
        "is_error": True,
        "error_field": "is_error",
    }
    assert two["tool_calls"][0]["result"]["content"] == [{"type": "text", "text": "14 °C"}]
    assert two["tool_calls"][0]["result"]["is_error"] is False  # not sent: the API's default
    assert three["continued_by"] is None and three["tool_calls"] == []
    assert [t["name"] for t in one["request_tools"]] == ["get_weather"]


# -- the Responses API: function_call_output by call_id, no error flag --------------------


@pytest.fixture(scope="module")
def responses_loop(tmp_path_factory) -> str:
    base = {"model": responses.MODEL, "stream": True, "tools": responses.TOOLS}
    return write(
        tmp_path_factory.mktemp("r") / "loop.jsonl",
        "https://api.openai.com/v1/responses",
        [
            ({**base, "input": responses.QUESTION}, responses.function_call_events(), 0),
            ({**base, "input": responses.follow_up()}, responses.answer_events(), 1_512),
        ],
    )


def test_responses_results_name_their_input_item_and_have_no_error_flag(responses_loop):
    out = inspect(responses_loop)
    assert "Tool results sent by exchange 2 · tool run time 1,412 ms" in out
    assert '1 "get_weather"  is_error none  input item 2  14 °C, partly cloudy' in out
    assert "(is_error none: this API's tool results carry no error flag)" in out
    doc = orjson.loads(inspect(responses_loop, "--json"))
    result = doc["streams"][0]["tool_calls"][0]["result"]
    assert result == {
        "exchange": 2,
        "at_message": 2,
        "content": responses.OUTPUT,
        "is_error": None,
        "error_field": None,
    }


def test_full_shows_content_parts_as_the_one_line_view_does_whole(tmp_path, anthropic_loop):
    """A result given as text parts (the Responses API's input_text, Anthropic's text
    blocks) is their text in --full too, not the parts' JSON; its lines indented."""
    parts = [{"type": "input_text", "text": "14 °C\npartly cloudy"}]
    base = {"model": responses.MODEL, "stream": True, "tools": responses.TOOLS}
    given = responses.follow_up()
    given[-1] = {**given[-1], "output": parts}
    path = write(
        tmp_path / "parts.jsonl",
        "https://api.openai.com/v1/responses",
        [
            ({**base, "input": responses.QUESTION}, responses.function_call_events(), 0),
            ({**base, "input": given}, responses.answer_events(), 300),
        ],
    )
    assert "input item 2  14 °C↵partly cloudy" in inspect(path)
    lines = inspect(path, "--full").splitlines()
    k = next(i for i, line in enumerate(lines) if '1 "get_weather"  is_error none' in line)
    assert lines[k + 1 : k + 3] == [" " * 7 + "14 °C", " " * 7 + "partly cloudy"]
    assert "input_text" not in "\n".join(lines)
    full = inspect(anthropic_loop, "--full")
    second = full.split("Tool results")[2].splitlines()
    assert second[1].endswith("is_error false  message 4") and second[2] == " " * 7 + "14 °C"


def test_a_request_that_continues_a_stored_response_sends_its_results_first(tmp_path):
    output = {"type": "function_call_output", "call_id": responses.CALL_ID, "output": "done"}
    base = {"model": responses.MODEL, "stream": True, "tools": responses.TOOLS}
    path = write(
        tmp_path / "previous.jsonl",
        "https://api.openai.com/v1/responses",
        [
            ({**base, "input": responses.QUESTION}, responses.function_call_events(), 0),
            (
                {**base, "previous_response_id": responses.RESPONSE_IDS[0], "input": [output]},
                responses.answer_events(responses.RESPONSE_IDS[0]),
                300,
            ),
        ],
    )
    doc = orjson.loads(inspect(path, "--json"))
    (call,) = doc["streams"][0]["tool_calls"]
    assert doc["streams"][0]["continued_by"]["exchange"] == 2
    assert call["result"]["content"] == "done" and call["result"]["at_message"] == 0


# -- Chat Completions: tool messages; control characters, a result not at the end --------


def _chat_stream(cid: str, args: str) -> list[bytes]:
    call = {
        "index": 0,
        "id": cid,
        "type": "function",
        "function": {"name": "run", "arguments": args},
    }
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return [sse_body(chunks)]


def _chat_answer() -> list[bytes]:
    return [
        sse_body([{"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}])
    ]


LONG_ARGS = '{"cmd": "' + "x" * 120 + '"}'
LONG_RESULT = "line one\n" + "y" * 150 + "\n\x1b[2Jlast line"


@pytest.fixture(scope="module")
def chat_loop(tmp_path_factory) -> str:
    user = {"role": "user", "content": "go"}
    sent = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "run", "arguments": LONG_ARGS},
            }
        ],
    }
    tool = {"role": "tool", "tool_call_id": "call_1", "content": LONG_RESULT}
    # the client adds a message after the result: the result run is not the request's end
    nudge = {"role": "user", "content": "and then?"}
    base = {"model": "gpt-4o", "stream": True}
    return write(
        tmp_path_factory.mktemp("c") / "loop.jsonl",
        "https://api.openai.com/v1/chat/completions",
        [
            ({**base, "messages": [user]}, _chat_stream("call_1", LONG_ARGS), 0),
            ({**base, "messages": [user, sent, tool, nudge]}, _chat_answer(), 700),
        ],
    )


def test_chat_results_are_one_safe_line_read_again_where_the_request_goes_on(chat_loop):
    out = inspect(chat_loop)
    line = next(k for k in out.splitlines() if '1 "run"  is_error none  message 2' in k)
    assert "line one↵yyyy" in line and line.endswith("…")
    assert "\x1b" not in out  # recorded text reaches the terminal made visible
    assert "tool run time 600 ms" in out
    assert LONG_ARGS not in out  # the table cuts the arguments


def test_full_prints_arguments_and_results_whole(chat_loop):
    def xs(out: str) -> int:  # the x of the arguments in the tool calls table
        table = out.split("Tool calls", 1)[1].split("Tool results", 1)[0]
        return table.count("x") - table.count("index")

    out = inspect(chat_loop, "--full")
    assert xs(inspect(chat_loop)) < 120 == xs(out)
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if '1 "run"  is_error none  message 2' in line)
    assert [s.strip() for s in lines[k + 1 : k + 4]] == ["line one", "y" * 150, "\\x1b[2Jlast line"]


def test_results_line_up_in_columns_as_printed(tmp_path):
    """The rows of one block start each column at one terminal column, measured on what
    is printed: a wide name takes two columns a character, a control character its
    visible escape, a bracket itself (never the markup escape written for it)."""
    from streamscope.console import cell_len

    names = ["天気", "a\x1bb", "[bold]x", "get_local_time"]
    calls = [
        {"index": k, "id": f"call_{k}", "type": "function", "function": {"name": n}}
        for k, n in enumerate(names)
    ]
    for c in calls:
        c["function"]["arguments"] = "{}"
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": calls}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    user = {"role": "user", "content": "go"}
    sent = {"role": "assistant", "tool_calls": calls}
    results = [
        {"role": "tool", "tool_call_id": f"call_{k}", "content": f"out {k}"} for k in range(4)
    ]
    # the results are messages 8 to 11: "message 10" is wider than "message 9"
    earlier = [{"role": "user", "content": str(k)} for k in range(6)]
    messages = [user, *earlier, sent, *results]
    base = {"model": "gpt-4o", "stream": True}
    path = write(
        tmp_path / "wide.jsonl",
        "https://api.openai.com/v1/chat/completions",
        [
            ({**base, "messages": [user, *earlier]}, [sse_body(chunks)], 0),
            ({**base, "messages": messages}, _chat_answer(), 700),
        ],
    )
    block = inspect(path).split("Tool results", 1)[1].splitlines()[1:5]
    assert [line.split()[0] for line in block] == ["1", "2", "3", "4"], block
    assert '"a\\u001bb"' in block[1] and '"[bold]x"' in block[2] and "\x1b" not in "".join(block)

    def column(line: str, word: str) -> int:  # where `word` starts, in terminal columns
        return cell_len(line[: line.index(word)])

    for word in ("is_error", "message", "out "):
        assert len({column(line, word) for line in block}) == 1, (word, block)
    assert column(block[0], "is_error") == column(block[3], '"get_local_time"') + 18


# -- inputs without requests or times ----------------------------------------------------


def test_a_saved_body_says_results_and_run_time_are_unknown(tmp_path):
    path = tmp_path / "body.sse"
    path.write_bytes(b"".join(_chat_stream("call_1", "{}")))
    out = inspect(str(path))
    assert (
        "Tool results: none (the input holds the stream only, no request after it); tool run time unknown"
        in out
    )
    (stream,) = orjson.loads(inspect(str(path), "--json"))["streams"]
    assert "continued_by" not in stream and "result" not in stream["tool_calls"][0]


def test_a_har_says_its_run_time_is_approximate():
    from pathlib import Path

    har = Path(__file__).parent / "fixtures" / "har" / "mitmproxy-three.har"
    assert "tool run time ~444 ms (HAR times are approximate)" in inspect(str(har))
    doc = orjson.loads(inspect(str(har), "--json"))
    assert doc["streams"][0]["continued_by"]["timing"] == "approximate"


# -- a request's tools: Codex's additional_tools item, namespaces nested -------------------

CODEX_TOOLS = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [
        {
            "type": "namespace",
            "name": "functions",
            "tools": [
                {"type": "custom", "name": "exec", "description": "Runs JavaScript"},
                {"type": "function", "name": "exec_command"},
            ],
        },
        {"type": "web_search"},
    ],
}


def test_nested_tools_are_listed_as_the_requests_tools(tmp_path):
    body = {
        "model": "gpt-5.1-codex",
        "stream": True,
        "tools": [],
        "input": [CODEX_TOOLS, *responses.QUESTION],
    }
    path = write(
        tmp_path / "codex.jsonl",
        "https://api.openai.com/v1/responses",
        [(body, responses.answer_events(), 0)],
    )
    out = inspect(path)
    assert (
        'request tools (3, in 1 namespace): "functions" namespace (input item 0) '
        '["exec", "exec_command"], "web_search" (input item 0)'
    ) in out
    (stream,) = orjson.loads(inspect(path, "--json"))["streams"]
    assert stream["request_tools"][:3] == [
        {"name": "functions", "namespace": True, "within": [], "input_item": 0},
        {"name": "exec", "namespace": False, "within": ["functions"], "input_item": 0},
        {"name": "exec_command", "namespace": False, "within": ["functions"], "input_item": 0},
    ]


def test_the_replay_lists_nested_tools_under_their_namespace():
    from streamscope.dialects import dialect
    from streamscope.tui.conversation import conversation

    body = {"tools": [{"type": "function", "name": "shell"}], "input": [CODEX_TOOLS]}
    shown = conversation(dialect("openai-responses").history(body), [], {}).plain
    assert (
        "Tools (4, in 1 namespace)\n"
        '  "shell"\n'
        '  "functions" namespace (in input item 0)\n'
        '    "exec"  Runs JavaScript\n'
        '    "exec_command"\n'
        '  "web_search" (in input item 0)\n'
    ) in shown


def test_a_call_no_result_answers_says_so():
    from pathlib import Path

    sample = Path(__file__).parents[1] / "recordings" / "anthropic-buggy-agent.jsonl"
    out = inspect(str(sample))
    assert '1 "get_weather"  no result answers it' in out
    assert "no error flag" not in out  # the Messages API has one; no result said none


def test_a_flag_field_of_another_name_says_what_it_held():
    """Bedrock's status and Gemini's response.error, absent or sent, in words: a false
    read from a field not sent does not look like a field that said false."""
    from pathlib import Path

    from streamscope.core.results import flag
    from streamscope.dialects import dialect

    samples = Path(__file__).parents[1] / "recordings"
    out = inspect(str(samples / "bedrock-text-without-start.jsonl"))
    assert '"get_weather"  is_error false (no status sent)  message 2' in out
    out = inspect(str(samples / "gemini-parallel-signature.jsonl"))
    # (padded to "get_weather"'s width in the row above)
    assert '"get_time"     is_error false (no error in response)  content 2' in out
    results = {"toolUseId": "t1", "content": [], "status": "error"}
    body = {"messages": [{"role": "user", "content": [{"toolResult": results}]}]}
    history = dialect("bedrock-converse").history(body)
    assert history is not None
    (got,) = history.turns[0].results
    assert flag(got.error, history.error_field, got.error_said) == 'is_error true (status "error")'
    parts = [{"functionResponse": {"name": "f", "response": {"error": "timeout"}}}]
    history = dialect("gemini").history({"contents": [{"role": "user", "parts": parts}]})
    assert history is not None
    (got,) = history.turns[0].results
    assert flag(got.error, history.error_field, got.error_said) == (
        "is_error true (error in response)"
    )


@pytest.mark.parametrize(("called", "undeclared"), [("exec_command", False), ("rm_rf", True)])
def test_a_tool_a_namespace_declares_is_declared(tmp_path, called, undeclared):
    events = [
        e.replace(b'"get_weather"', f'"{called}"'.encode())
        for e in responses.function_call_events()
    ]
    body = {"model": "gpt-5.1-codex", "stream": True, "input": responses.QUESTION}
    body["tools"] = [CODEX_TOOLS["tools"][0]]  # the namespace, in the request's own tools
    path = write(tmp_path / "ns.jsonl", "https://api.openai.com/v1/responses", [(body, events, 0)])
    (stream,) = orjson.loads(inspect(path, "--json"))["streams"]
    assert stream["tool_calls"][0]["name"] == called
    assert ("name-undeclared" in [a["kind"] for a in stream["anomalies"]]) is undeclared


def test_the_replay_says_what_the_flag_field_held_across_the_child_boundary():
    """The replay's panel reads the analysis as JSON (summarize_in_child): the words of
    Bedrock's absent status come through."""
    from pathlib import Path

    from streamscope.analysis.driver import ExchangeSummary, summarize_exchanges
    from streamscope.core.calls import Call
    from streamscope.tui.widgets.tool_results import results_panel

    sample = Path(__file__).parents[1] / "recordings" / "bedrock-text-without-start.jsonl"
    row = next(r for r in summarize_exchanges(str(sample)) if r.answer is not None)
    again = ExchangeSummary.from_json(orjson.loads(orjson.dumps(row.to_json())))
    shown = results_panel([Call(0, "t1", "get_weather", "{}")], again.answer).plain
    assert "is_error false (no status sent)  message 2" in shown
    assert "no error flag" not in shown
