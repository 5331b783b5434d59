"""`streamscope inspect`: the contract's JSON, the readable report, --strict, and bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.dialects.chat.appendix_a import FIXTURES, chunk, tc
from streamscope.recording import RecordingWriter

from .helpers import anthropic_error_sse, sse_body, tool_def

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"


def inspect(*args: str):
    return CliRunner().invoke(main, ["inspect", *args])


@pytest.fixture
def alibaba_sse(tmp_path):
    path = tmp_path / "capture.txt"  # the name says nothing: the content decides
    path.write_bytes(sse_body(FIXTURES["Q4"]))
    return path


def test_json_has_the_contract_shape(alibaba_sse):
    result = inspect(str(alibaba_sse), "--json")
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    assert doc["schema"] == 1 and doc["format"] == "sse" and doc["contract"] == []
    (stream,) = doc["streams"]
    assert stream["framing"] == "sse"
    assert set(stream) == {
        "exchange",
        "frames",
        "ended",
        "dialect",
        "framing",
        "finish_reason",
        "content",
        "reasoning_content",
        "tool_calls",
        "strategies",
        "anomalies",
    }
    assert stream["ended"] == "done" and stream["frames"] == 5
    assert stream["dialect"] == "chat-completions"
    (call,) = stream["tool_calls"]
    assert call == {
        "choice": 0,
        "index": 0,
        "id": "call_a",
        "type": "function",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "fragments": 3,
        "first_frame": 1,
        "last_frame": 3,
        "repair": None,
    }
    assert list(stream["strategies"]) == ["guarded", "naive", "openai-sdk", "openai-docs", "by-id"]
    assert stream["strategies"]["naive"]["differs"] is True
    assert stream["strategies"]["naive"]["tool_calls"][0]["id"] == ""
    assert stream["strategies"]["guarded"]["differs"] is False
    first = stream["anomalies"][0]
    assert set(first) >= {"frame", "kind", "choice", "index", "severity", "message"}
    assert {a["kind"] for a in stream["anomalies"]} >= {
        "id-empty-overwrite",
        "name-empty-overwrite",
    }


def test_text_report_says_it_in_words(alibaba_sse):
    result = inspect(str(alibaba_sse))
    assert result.exit_code == 0
    out = result.output
    assert "id-empty-overwrite" in out and "call_a" in out
    assert "naive" in out and "differs" in out
    assert "\x1b[" not in out  # no colour when not a terminal


def test_a_difference_counts_the_arguments_not_their_display(tmp_path):
    # by-id sends the fragment without an id to the latest call: arguments of 0 and 32
    # characters, whose quoted, escaped display is 2 and 42 long
    args = '{"city": "Paris", "units": "cc"}'
    path = tmp_path / "routed.sse"
    path.write_bytes(
        sse_body(
            [
                chunk({"role": "assistant", "tool_calls": [tc(0, "call_a", "f", "", "function")]}),
                chunk({"tool_calls": [tc(1, "call_b", "g", "", "function")]}),
                chunk({"tool_calls": [tc(0, args=args)]}),
                chunk({}, "tool_calls"),
            ]
        )
    )
    result = inspect(str(path))
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # (the line wraps)
    assert "by-id differs: call 1 arguments" in out
    assert "; 0 vs 32 chars)" in out and "; 32 vs 0 chars)" in out


def _events(events: list) -> bytes:
    """An SSE body of named events (`event:` is the payload's type)."""
    return b"".join(
        f"event: {e['type']}\n".encode() + b"data: " + orjson.dumps(e) + b"\n\n" for e in events
    )


def test_a_calls_frames_run_to_the_done_that_closes_it(tmp_path):
    # the item comes whole in its added (no delta); its done changes the call_id, an anomaly
    # at frame 4: the frames cell said 3-3
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get"}
    item["arguments"] = '{"a":1}'
    done = dict(item, call_id="call_b", status="completed")
    path = tmp_path / "whole.sse"
    path.write_bytes(
        _events(
            [
                {"type": "response.created", "response": resp},
                {"type": "response.in_progress", "response": resp},
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": done},
                {"type": "response.completed", "response": dict(resp, output=[done])},
            ]
        )
    )
    out = inspect(str(path)).output
    assert "3-4 (0 fragments)" in out and "frame 4    id-changed" in out
    (call,) = orjson.loads(inspect(str(path), "--json").output)["streams"][0]["tool_calls"]
    assert (call["first_frame"], call["last_frame"], call["fragments"]) == (3, 4, 0)


def test_a_call_in_one_frame_says_its_frame_not_a_range():
    # each of the two calls came whole in frame 2: the cell said "2-2 (1 fragment)"
    out = inspect(str(RECORDINGS / "gemini-parallel-signature.jsonl")).output
    rows = [line.split() for line in out.splitlines() if '"get_' in line and "fragment" in line]
    assert len(rows) == 2 and all(r[-3:] == ["2", "(1", "fragment)"] for r in rows), out
    assert "2-2" not in out
    # more frames than one: still a range
    assert "1-8 (5 fragments)" in inspect(str(RECORDINGS / "openai.jsonl")).output


def test_a_clients_multi_line_error_reads_as_a_tool_results_text_does(tmp_path):
    # an Anthropic `event: error` whose message has a line break: the SDK's message
    # showed it as \x0a; it reads as ↵ now, as a tool result's text does on one line,
    # and every other control character stays escaped
    path = anthropic_error_sse(tmp_path)
    out = inspect(str(path)).output
    (line,) = [x for x in out.splitlines() if "anthropic-sdk raises" in x]
    assert "raises APIStatusError: Overloaded↵retry\\x09later\\x1b[31m (path:" in line, out
    assert "\x1b" not in out and "\\x0a" not in out


def test_a_dash_reads_standard_input():
    command = [sys.executable, "-m", "streamscope", "inspect", "-"]
    sample = (RECORDINGS / "openai.jsonl").read_bytes()
    piped = subprocess.run(command, input=sample, capture_output=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith(b"streamscope \xc2\xb7 /dev/stdin (recording, 2 exchanges")
    # a terminal holds no stream: one line, not a wait for one
    parent, child = os.openpty()
    try:
        typed = subprocess.run(command, stdin=child, capture_output=True, timeout=60)
    finally:
        os.close(parent)
        os.close(child)
    assert typed.returncode == 2 and typed.stderr.decode().count("\n") == 1
    assert "-: standard input is a terminal: pipe a stream in" in typed.stderr.decode()


def test_a_blocks_frames_run_to_its_stop(tmp_path):
    # a tool block whose start carries its input and whose only fragment is "": the stop
    # (frame 6) is where the SDK parses it, and where `truthy` raises
    start = {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    path = tmp_path / "stop.sse"
    path.write_bytes(
        _events(
            [
                {"type": "message_start", "message": message},
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                {"type": "content_block_stop", "index": 0},
                {"type": "content_block_start", "index": 1, "content_block": start},
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": ""},
                },
                {"type": "content_block_stop", "index": 1},
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
                {"type": "message_stop"},
            ]
        )
    )
    out = " ".join(inspect(str(path)).output.split())
    assert (
        "4-6 (1 fragment)" in out
        and "raises SyntaxError: Unexpected end of JSON input at frame 6" in out
    )


@pytest.mark.parametrize(
    "sample, counts",
    [
        ("gemini-parallel-signature.jsonl", "5 info findings"),
        ("openai.jsonl", "1 info finding"),
        ("anthropic-spliced-message.jsonl", "4 errors, 2 warnings, 2 info findings"),
        ("anthropic-max-tokens.jsonl", "2 errors, 2 warnings, 1 info finding"),
        ("buggy-agent-uuid.jsonl", "1 error"),
        ("first-index-1.jsonl", "1 warning"),
    ],
)
def test_the_summary_counts_each_severity_in_english(sample, counts):
    # it said "5 infos": info is no count noun, so its findings are counted as findings
    (summary,) = [
        line
        for line in inspect(str(RECORDINGS / sample)).output.splitlines()
        if line.startswith("Summary:")
    ]
    assert summary.startswith(f"Summary: {counts}; "), summary
    assert "infos" not in summary


def test_a_session_responses_calls_are_under_the_response_its_header_names():
    # codex-websocket's call is in the session's response 2: the column said 0
    path = str(RECORDINGS / "codex-websocket.jsonl")
    out = inspect(path).output
    section = out.split("Exchange 1, response 2 ·", 1)[1].split("Exchange 1, response 3", 1)[0]
    head, row = section.split("Tool calls", 1)[1].splitlines()[1:3]
    assert head.split()[:3] == ["#", "response", "output"]
    assert row.split()[:4] == ["1", "2", "0", '"call_Zq7Xv3Kp9LmN2bRt"']
    # an HTTP stream is its exchange's one response: response 1
    out = inspect(str(RECORDINGS / "responses-interleaved.jsonl")).output
    rows = out.split("Tool calls", 1)[1].splitlines()[2:5]
    assert [r.split()[1:3] for r in rows] == [["1", "0"], ["1", "1"], ["1", "2"]]
    doc = orjson.loads(inspect(path, "--json").output)  # --json keeps the index in the stream
    (call,) = doc["streams"][1]["tool_calls"]
    assert (doc["streams"][1]["turn"], call["choice"]) == (2, 0)


def test_strict_fails_on_warnings_only(tmp_path, alibaba_sse):
    assert inspect(str(alibaba_sse), "--strict").exit_code == 1
    clean = tmp_path / "clean.sse"
    clean.write_bytes(sse_body(FIXTURES["Q0"]))
    assert inspect(str(clean), "--strict").exit_code == 0


def test_chunks_jsonl_input(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(c) for c in FIXTURES["Q10"]) + b"\n")
    doc = orjson.loads(inspect(str(path), "--json").output)
    assert doc["format"] == "chunks"
    assert doc["streams"][0]["tool_calls"][0]["arguments"] == '{"city": "Paris"}'


def test_truncated_arguments_are_repaired_two_ways(tmp_path):
    chunks = FIXTURES["Q0"][:2] + [FIXTURES["Q0"][-1]]
    path = tmp_path / "cut.sse"
    path.write_bytes(sse_body(chunks))
    call = orjson.loads(inspect(str(path), "--json").output)["streams"][0]["tool_calls"][0]
    assert call["arguments"] == '{"city": '
    # crow closes the brace, `{"city": }` still fails, so it persists "{}"
    assert call["repair"]["crow"] == {"action": "fallback-empty-object", "result": "{}"}
    assert call["repair"]["best"]["result"] == "{}"
    assert call["repair"]["best"]["changed_meaning"] is True


def _recording(path, second_request_id: str):
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        body = {
            "model": "m",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [tool_def("get_weather")],
        }
        w.request(
            ex,
            "POST",
            "http://127.0.0.1/v1/chat/completions",
            [("authorization", "Bearer sk-secret")],
            orjson.dumps(body),
        )
        w.response(ex, 200, [("content-type", "text/event-stream")])
        w.chunk(ex, sse_body(FIXTURES["Q0"]))
        w.end(ex, "complete")
        ex = w.new_exchange()
        msgs = body["messages"] + [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": second_request_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": second_request_id, "content": "15C"},
        ]
        w.request(
            ex,
            "POST",
            "http://127.0.0.1/v1/chat/completions",
            [],
            orjson.dumps({**body, "messages": msgs}),
        )
        w.response(ex, 200, [("content-type", "application/json")])
        w.chunk(ex, b'{"choices": []}')
        w.end(ex, "complete")


def test_recording_contract_flags_a_substituted_id(tmp_path):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    _recording(good, "call_a")
    _recording(bad, "3b241101-e2bb-4255-8caf-4136c566a962")
    assert orjson.loads(inspect(str(good), "--json").output)["contract"] == []
    contract = orjson.loads(inspect(str(bad), "--json").output)["contract"]
    assert [c["kind"] for c in contract] == ["tool-call-id-substituted"]
    assert contract[0]["exchange"] == 2 and contract[0]["severity"] == "error"
    assert b"sk-secret" not in bad.read_bytes()


def test_exchange_option(tmp_path):
    path = tmp_path / "r.jsonl"
    _recording(path, "call_a")
    doc = orjson.loads(inspect(str(path), "--json", "--exchange", "1").output)
    assert [s["exchange"] for s in doc["streams"]] == [1]
    result = inspect(str(path), "--exchange", "7")
    assert result.exit_code == 2 and "no exchange 7" in result.output


@pytest.mark.parametrize(
    "content, expect",
    [
        (None, "no such file"),
        (b"", "byte 0: the file is empty"),
        (b"\n\n\n", "byte 0: the file holds only blank lines"),
        (b"\xef\xbb\xbf \r\n", "byte 0: the file holds only blank lines"),
        # past the first 64 KiB the reading of blank lines goes on
        (b"\n" * 70_000, "byte 0: the file holds only blank lines"),
        (b" " * (1 << 16), "byte 0: the file holds only blank lines"),
        (b"\n" * 70_000 + b"hello\n", "line 70001 (byte 70000): not a streamscope recording"),
        (
            b'{"type": "header", "schema_version": "2", "tool": "streamscope"}\n',
            """line 1 (byte 0): the header's schema_version "2" is not an integer""",
        ),
        (
            b'{"type": "header", "schema_version": null, "tool": "streamscope"}\n',
            "line 1 (byte 0): the header's schema_version null is not an integer",
        ),
        (b"\x00\x01\x02binary", "binary"),
        (b"hello there\n", "not a streamscope recording"),
        (
            b'{"type": "header", "schema_version": 1, "tool": "streamscope", "tool_version": "0.1.0", "created": "x", "argv": null}\n{"type": "req',
            "cut-off",
        ),
        (
            b'{"type": "header", "schema_version": 1, "tool": "streamscope", "tool_version": "0.1.0", "created": "x", "argv": null}\nnot json\n{}\n',
            "line 2",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, content, expect):
    path = tmp_path / "input"
    if content is not None:
        path.write_bytes(content)
    result = inspect(str(path))
    if expect == "cut-off":  # a cut-off last line is read up to there, and said
        assert result.exit_code == 0, result.output
        assert "cut-off" in result.output
        return
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0] and str(path) in lines[0]
    assert "Traceback" not in result.output


def test_every_choice_and_a_refusal_are_shown(tmp_path):
    from streamscope.dialects.chat.appendix_a import chunk

    two = [
        {
            **chunk({"content": "a"}),
            "choices": [
                {"index": 0, "delta": {"content": "zero"}, "finish_reason": None},
                {
                    "index": 1,
                    "delta": {"refusal": "I can't help with that."},
                    "finish_reason": None,
                },
            ],
        },
        {
            **chunk({}),
            "choices": [
                {"index": 0, "delta": {}, "finish_reason": "stop"},
                {"index": 1, "delta": {}, "finish_reason": "stop"},
            ],
        },
    ]
    path = tmp_path / "n2.sse"
    path.write_bytes(sse_body(two))
    stream = orjson.loads(inspect(str(path), "--json").output)["streams"][0]
    assert stream["content"] == "zero"
    assert [c["refusal"] for c in stream["choices"]] == ["", "I can't help with that."]
    assert "choice 1 refusal" in inspect(str(path)).output
    # a choice that never finished reads as words, not Python's None
    two[1]["choices"].pop()
    path.write_bytes(sse_body(two))
    report = inspect(str(path)).output
    assert "choice 1: no finish_reason" in report and "None" not in report


def test_a_whole_chat_completion_is_refused(tmp_path):
    path = tmp_path / "completion.json"
    path.write_bytes(
        orjson.dumps({"object": "chat.completion", "choices": [{"index": 0, "message": {}}]})
    )
    result = inspect(str(path))
    assert result.exit_code == 2 and "not a stream" in result.output


def test_chunk_log_with_sse_prefixes_and_done(tmp_path):
    lines = [b"data: " + orjson.dumps(c) for c in FIXTURES["Q0"]] + [b"data: [DONE]"]
    path = tmp_path / "log.jsonl"
    path.write_bytes(orjson.dumps(FIXTURES["Q0"][0]) + b"\n" + b"\n".join(lines[1:]) + b"\n")
    doc = orjson.loads(inspect(str(path), "--json").output)
    assert doc["format"] == "chunks"
    kinds = {a["kind"] for a in doc["streams"][0]["anomalies"]}
    assert "chunk-invalid-json" not in kinds and doc["streams"][0]["ended"] == "done"


def test_different_schema_problems_are_each_named(tmp_path):
    chunks = [
        {**FIXTURES["Q0"][0], "object": "chat.completion"},
        {**FIXTURES["Q0"][1], "created": "yesterday"},
    ]
    path = tmp_path / "s.sse"
    path.write_bytes(sse_body(chunks + FIXTURES["Q0"][2:]))
    (entry,) = [
        a
        for a in orjson.loads(inspect(str(path), "--json").output)["streams"][0]["anomalies"]
        if a["kind"] == "chunk-schema-violation"
    ]
    assert "object" in entry["message"] and "created" in entry["message"] and entry["count"] == 2


def test_failed_exchanges_are_reported_and_fail_strict(tmp_path):
    path = tmp_path / "failed.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", "http://127.0.0.1/v1/chat/completions", [], b'{"model": "m"}')
        w.response(ex, 502, [("content-type", "application/json")])
        w.chunk(ex, b'{"error": {"message": "streamscope: upstream unreachable"}}')
        w.end(ex, "upstream-error", "upstream unreachable")
    result = inspect(str(path), "--strict")
    assert result.exit_code == 1
    assert "HTTP 502" in result.output and "exchange 1" in result.output
    doc = orjson.loads(inspect(str(path), "--json").output)
    assert doc["failed_exchanges"][0]["status"] == 502


def test_json_names_the_openai_version_behind_openai_sdk(alibaba_sse):
    from importlib.metadata import version

    doc = orjson.loads(inspect(str(alibaba_sse), "--json").output)
    assert doc["openai_sdk_version"] == version("openai")


@pytest.mark.parametrize(
    "sample, words",
    [("gemini-no-index.sse", "an SSE file"), ("deepseek-cumulative.chunks.jsonl", "a chunk log")],
)
def test_a_single_stream_file_is_named_with_its_article(sample, words):
    import os

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
    path = os.path.join(root, sample)
    for command in (["export", path, "--exchange", "2"], ["replay", path, "--exchange", "2"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2
        assert f"{words} holds one stream (exchange 1), not 2" in result.output, result.output


def _mixed(path) -> None:
    """A stream, a successful non-stream answer and a rate-limited one."""
    ask = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    with RecordingWriter(str(path)) as w:
        x = w.new_exchange()
        w.request(x, "POST", "https://api.openai.com/v1/chat/completions", [], ask)
        w.response(x, 200, [("content-type", "text/event-stream")])
        w.chunk(x, sse_body([{"choices": [{"index": 0, "delta": {"content": "hi"}}]}]))
        w.end(x, "complete")
        for status, body in (
            (200, b'{"choices":[{"message":{"content":"Hello there"}}]}'),
            (429, b'{"error":{"message":"Rate limit"}}'),
        ):
            x = w.new_exchange()
            w.request(x, "POST", "https://api.openai.com/v1/chat/completions", [], ask)
            w.response(x, status, [("content-type", "application/json")])
            w.chunk(x, body)
            w.end(x, "complete")


def test_every_exchange_is_in_the_report_and_each_can_be_asked_for(tmp_path):
    path = tmp_path / "mixed.jsonl"
    _mixed(path)
    report = inspect(str(path)).output
    assert "3 exchanges, 1 stream" in report
    assert "Exchange 2 · not a stream · POST /v1/chat/completions · m · HTTP 200" in report
    assert "Hello there" in report and "Rate limit" in report
    alone = inspect(str(path), "--exchange", "2").output
    assert "Hello there" in alone and "Exchange 1" not in alone and "Exchange 3" not in alone
    limited = inspect(str(path), "--exchange", "3")
    assert "HTTP 429" in limited.output and "Rate limit" in limited.output


def _calls_report(tmp_path, n: int, width: int) -> list[str]:
    """The text report of a stream of `n` calls, each with a long id, in a console of
    `width` columns writing to a pipe (as the CLI's, narrowed)."""
    import io

    from streamscope.analysis import analyze
    from streamscope.analysis.text_report import render
    from streamscope.console import Console

    chunks = [
        chunk({"tool_calls": [tc(i, f"call_{i:04d}_{'x' * 40}", "f", "{}", "function")]})
        for i in range(n)
    ]
    path = tmp_path / f"calls-{n}.sse"
    path.write_bytes(sse_body([*chunks, chunk({}, "tool_calls")]))
    out = io.StringIO()
    render(analyze(str(path)), Console(file=out, width=width))
    return out.getvalue().splitlines()


@pytest.mark.parametrize("n, folded", [(3, True), (600, False)])
def test_a_call_table_wider_than_the_console_folds_unless_it_is_long(tmp_path, n, folded):
    """A few rows fold their cells to the width; hundreds are written a row a line (the
    terminal wraps them), as folding costs about a millisecond a row."""
    lines = _calls_report(tmp_path, n, 60)
    whole = [line for line in lines if '"call_0001_' + "x" * 40 + '"' in line]
    assert (whole == []) == folded
    if not folded:
        assert len(whole) == 1 and whole[0].lstrip().startswith("2 ")


def test_a_call_table_that_fits_reads_as_columns(tmp_path):
    lines = _calls_report(tmp_path, 2, 160)
    head = next(i for i, line in enumerate(lines) if "Tool calls" in line) + 1
    assert lines[head].split() == [
        "#",
        "choice",
        "index",
        "id",
        "type",
        "name",
        "arguments",
        "frames",
    ]
    assert lines[head + 1].split()[:4] == ["1", "0", "0", '"call_0000_' + "x" * 40 + '"']
    # every row's cells start where its column's header does
    start = lines[head].index("frames")
    assert all(line[start:].startswith(("frames", "1 (", "2 (")) for line in lines[head : head + 3])


def test_an_interrupted_command_says_so_and_exits_130(monkeypatch):
    """Ctrl-C in inspect: one line naming the command and a shell's status for SIGINT
    (click said "Aborted!" and exit 1)."""
    from pathlib import Path

    import streamscope.analysis as analysis

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis, "analyze", interrupted)
    sample = Path(__file__).parent.parent / "recordings" / "openai.jsonl"
    result = CliRunner().invoke(main, ["inspect", str(sample)])
    assert result.exit_code == 130
    assert result.output.strip().splitlines() == ["streamscope: inspect interrupted"]


def test_a_stream_after_64_kib_of_blank_lines_is_read(tmp_path):
    path = tmp_path / "late.jsonl"
    chunks = (RECORDINGS / "deepseek-cumulative.chunks.jsonl").read_bytes()
    path.write_bytes(b"\n" * 70_000 + chunks)
    result = inspect(str(path))
    assert result.exit_code == 0, result.output
    assert "(chunks, 1 stream)" in result.output and "args-cumulative" in result.output


def test_an_event_that_is_no_object_names_its_json_type(tmp_path):
    # JSON's names for what came, never Python's ("a JSON NoneType", "a JSON list")
    path = tmp_path / "s.sse"
    path.write_bytes(b"data: null\n\ndata: [1]\n\ndata: [DONE]\n\n")
    out = inspect(str(path)).output
    assert "the payload is a JSON null, not an object" in out
    assert "the payload is a JSON array, not an object" in out
    assert "JSON NoneType" not in out and "JSON list" not in out  # (a client's own error may)
