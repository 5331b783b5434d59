"""The input layer: every file reads or fails in one clean line, on every command.

Wrong value types, deep nesting, byte order marks, long first lines and stray bytes are
fed to inspect, export, serve and the replay, as a user would meet them.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.dialects.chat.appendix_a import FIXTURES
from streamscope.inputs import CHUNKS, RECORDING, SSE, open_input
from streamscope.inputs.sniff import sniff
from streamscope.recording.format import RecordingError

from .helpers import sse_body, unsourced

ROOT = Path(__file__).resolve().parents[1]
OPENAI = ROOT / "recordings" / "openai.jsonl"
HEADER = OPENAI.read_bytes().split(b"\n", 1)[0] + b"\n"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_exit_2(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def deep(depth: int, leaf: object = 1) -> object:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


@contextlib.contextmanager
def deep_enough():
    """Let the stdlib json read and write JSON of any depth (orjson stops at 255 / 1024)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def dumps(value: object) -> str:
    with deep_enough():
        return json.dumps(value)


def loads(text: str) -> object:
    with deep_enough():
        return json.loads(text)


# -- wrong value types: one line naming the line and the field -------------------------------

# (the response line opens the exchange: a chunk line of an exchange none opened is refused)
OPENS = {"type": "response", "exchange": 1, "t_ns": 0, "status": 200, "headers": []}
CHUNK = {"type": "chunk", "exchange": 1, "t_ns": 5, "data": 'data: {"choices": []}\n\n'}
WRONG = [
    ({"data": 1}, "'data'"),
    ({"exchange": [1]}, "'exchange'"),
    ({"t_ns": "2"}, "'t_ns'"),
    ({"type": {}}, "'type'"),
]


@pytest.mark.parametrize("change, field", WRONG, ids=[w[1] for w in WRONG])
@pytest.mark.parametrize("command", ["inspect", "export"])
def test_a_wrong_value_type_is_one_line_naming_line_and_field(tmp_path, change, field, command):
    path = tmp_path / "r.jsonl"
    good = orjson.dumps(OPENS) + b"\n" + orjson.dumps(CHUNK) + b"\n"
    path.write_bytes(HEADER + good + orjson.dumps(CHUNK | change) + b"\n")
    one_line_exit_2(run(command, str(path)), str(path), "line 4", field)


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_headers_that_are_not_pairs_are_one_line(tmp_path, command):
    lines = OPENAI.read_bytes().splitlines(keepends=True)
    response = next(i for i, line in enumerate(lines) if b'"type":"response"' in line)
    d = orjson.loads(lines[response])
    d["headers"] = [[]]
    lines[response] = orjson.dumps(d) + b"\n"
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(lines))
    one_line_exit_2(run(command, str(path)), f"line {response + 1}", "'headers'")


def test_a_tool_calls_number_in_an_sse_body_exports_to_every_format(tmp_path):
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"tool_calls": 5}}],
    }
    path = tmp_path / "five.sse"
    path.write_bytes(sse_body([chunk]))
    for fmt in ("sse", "chunks", "recording", "pytest"):
        result = run("export", "--format", fmt, str(path))
        assert result.exit_code == 0, (fmt, result.output)


# -- deep nesting ------------------------------------------------------------------------


def _chunk_with_arguments(arguments: object) -> dict:
    call = {"index": 0, "id": "call_a", "type": "function"}
    call["function"] = {"name": "f", "arguments": arguments}
    delta = {"role": "assistant", "tool_calls": [call]}
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}


DEEP_STREAMS = {
    "payload 1100 levels": "data: " + dumps({"choices": deep(1100)}) + "\n\ndata: [DONE]\n\n",
    "arguments text 1100 levels": "data: "
    + dumps(_chunk_with_arguments("[" * 1100 + "]" * 1100))
    + "\n\ndata: [DONE]\n\n",
    "arguments object 300 levels": "data: "
    + dumps(_chunk_with_arguments(deep(300)))
    + "\n\ndata: [DONE]\n\n",
    "arguments object 1000 levels": "data: "
    + dumps(_chunk_with_arguments(deep(1000)))
    + "\n\ndata: [DONE]\n\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("body", DEEP_STREAMS.values(), ids=DEEP_STREAMS.keys())
def test_deep_nesting_is_read_on_every_command(tmp_path, body):
    path = tmp_path / "deep.sse"
    path.write_text(body)
    as_json = run("inspect", "--json", str(path))
    assert as_json.exit_code == 0, as_json.output
    assert len(loads(as_json.output)["streams"]) == 1  # valid JSON, whatever its depth
    assert run("inspect", str(path)).exit_code == 0
    for fmt in ("sse", "chunks", "recording"):
        assert run("export", "--format", fmt, str(path)).exit_code == 0, fmt
    assert run("export", "--minimal", str(path)).exit_code == 0
    as_pytest = run("export", "--format", "pytest", str(path))
    if as_pytest.exit_code:  # a value too deep for a Python literal: said in one line
        one_line_exit_2(as_pytest, "too deeply", "--format sse")
    else:
        compile(as_pytest.output, "exported", "exec")


def test_a_payload_past_the_parsers_limit_is_named_as_such(tmp_path):
    path = tmp_path / "deep.sse"
    path.write_text(DEEP_STREAMS["payload 1100 levels"])
    doc = orjson.loads(run("inspect", "--json", str(path)).output)
    (found,) = [a for a in doc["streams"][0]["anomalies"] if a["kind"] == "chunk-invalid-json"]
    assert "deeper than 1024 levels" in found["message"]
    sdk = doc["streams"][0]["strategies"]["openai-sdk"]
    assert sdk["error"].startswith("RecursionError")  # what the real SDK's json.loads raises


def test_redact_json_masks_a_body_it_cannot_walk():
    from streamscope.recording.redact import TOO_DEEP, redact_json_paths

    body = dumps({"messages": deep(1100, "secret")}).encode()
    assert redact_json_paths(body, ["messages.*.content"]) == TOO_DEEP
    shallow = b'{"messages":[{"role":"user","content":"secret"}]}'
    assert b"secret" not in redact_json_paths(shallow, ["messages.*.content"])


# -- sniffing by structure ------------------------------------------------------------------

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    "kind, data",
    [
        (RECORDING, OPENAI.read_bytes()),
        (SSE, sse_body(FIXTURES["Q4"])),
        (CHUNKS, b"".join(orjson.dumps(c) + b"\n" for c in FIXTURES["Q4"])),
    ],
)
def test_a_byte_order_mark_is_skipped_and_noted_for_every_kind(tmp_path, kind, data):
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    plain.write_bytes(data)
    marked.write_bytes(BOM + data)
    assert sniff(marked).kind == kind
    with_bom = orjson.loads(run("inspect", "--json", str(marked)).output)
    without = orjson.loads(run("inspect", "--json", str(plain)).output)
    assert "byte order mark" in with_bom.pop("notes")[0]
    assert unsourced(with_bom) == unsourced(without)  # the same streams, the same findings
    assert "byte order mark" in run("inspect", str(marked)).output


def test_a_chunk_log_whose_first_line_is_70_kib_is_a_chunk_log(tmp_path):
    first = dict(FIXTURES["Q1"][0])
    first["padding"] = "x" * (70 * 1024)
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in [first, *FIXTURES["Q1"][1:]]))
    assert sniff(path).kind == CHUNKS
    doc = orjson.loads(run("inspect", "--json", str(path)).output)
    assert doc["format"] == "chunks" and doc["streams"][0]["tool_calls"]


@pytest.mark.parametrize("stray", [b"\x00", b"\xff"], ids=["NUL", "invalid UTF-8"])
def test_a_stray_byte_early_in_an_sse_body_is_reported_where_it_is(tmp_path, stray):
    body = sse_body(FIXTURES["Q1"])
    events = body.split(b"\n\n")
    events[1] = events[1][:-2] + stray + events[1][-2:]  # inside the second event's JSON
    path = tmp_path / "stray.sse"
    path.write_bytes(b"\n\n".join(events))
    assert sniff(path).kind == SSE
    doc = orjson.loads(run("inspect", "--json", str(path)).output)
    stream = doc["streams"][0]
    flagged = {a["kind"]: a["frame"] for a in stream["anomalies"]}
    assert flagged.get("invalid-utf8", flagged.get("chunk-invalid-json")) == 2
    assert stream["frames"] == len(FIXTURES["Q1"]) + 1  # every other frame read, [DONE] too


def test_input_with_no_structure_is_refused_in_one_line(tmp_path):
    path = tmp_path / "junk"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    line = one_line_exit_2(run("inspect", str(path)), "binary data", "line 1")
    # its bytes as they are: it showed each byte that is no UTF-8 as �
    assert line.endswith("(it begins b'\\x89PNG')"), line  # (its first line)


# -- a broken line in the middle: each face decides -----------------------------------------


@pytest.fixture
def broken_middle(tmp_path) -> Path:
    """openai.jsonl with one line of exchange 2 cut in half: exchange 1 reads whole."""
    lines = OPENAI.read_bytes().splitlines(keepends=True)
    second = next(i for i, line in enumerate(lines) if b'"exchange":2' in line and b"chunk" in line)
    lines[second] = lines[second][: len(lines[second]) // 2] + b"\n"
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def test_inspect_and_export_stop_at_a_broken_line(broken_middle):
    for command in ("inspect", "export"):
        one_line_exit_2(run(command, str(broken_middle)), str(broken_middle), "not valid JSON")


def test_serve_refuses_a_broken_recording_before_it_serves(broken_middle):
    line = one_line_exit_2(run("serve", str(broken_middle)), str(broken_middle), "(byte")
    assert "http://" not in line  # no URL printed: nothing was served


def test_a_tolerant_source_opens_what_it_can_and_names_the_rest(broken_middle):
    with open_input(broken_middle, tolerant=True) as source:
        assert source.numbers() == [1, 2]
        (error,) = source.errors
        assert "not valid JSON" in str(error) and "line" in str(error)
        assert len(list(source.exchange(1).frames())) > 3
    with pytest.raises(RecordingError, match="not valid JSON"):
        open_input(broken_middle).numbers()


def test_a_tolerant_analysis_reads_the_streams_around_a_broken_line(broken_middle):
    from streamscope.analysis import analyze

    analysis = analyze(broken_middle, tolerant=True)  # what the replay's exchange list shows
    assert [s.exchange for s in analysis.streams] == [1]
    assert analysis.streams[0].tool_calls and len(analysis.skipped) == 1
    with pytest.raises(RecordingError, match="not valid JSON"):
        analyze(broken_middle)


def test_every_exchange_number_out_of_range_lists_the_exchanges():
    for args in (["inspect", "--exchange", "9"], ["export", "--exchange", "9"]):
        one_line_exit_2(run(*args, str(OPENAI)), "exchange 9", "1")


def test_keep_fields_needs_minimal():
    one_line_exit_2(run("export", "--keep-fields", str(OPENAI)), "--keep-fields", "--minimal")


# -- the replay following a file being written opens what it can -------------------------
# (not followed, it refuses what inspect refuses: tests/test_replay_refuses.py)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_replay_following_a_file_names_a_broken_line_and_opens_the_rest(broken_middle):
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import ExchangesScreen, StreamScreen

    from .test_tui import settle, text

    app = ReplayApp(str(broken_middle), follow=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, ExchangesScreen)
        said = text(app.screen.query_one("#errors"))
        assert "skipped 1 unreadable line" in said and "not valid JSON" in said
        await pilot.press("enter")  # exchange 1 read whole
        await settle(pilot, StreamScreen)
        assert app.screen.model.total > 3 and app.screen.model.error is None
    assert app.return_code in (0, None)


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_replay_following_a_file_shows_a_stream_up_to_a_line_it_cannot_read(tmp_path):
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import StreamScreen

    lines = OPENAI.read_bytes().splitlines(keepends=True)
    chunks = [
        i for i, line in enumerate(lines) if line.startswith(b'{"type":"chunk","exchange":1,')
    ]
    bad = chunks[3]
    d = orjson.loads(lines[bad])
    d["t_ns"] = "soon"  # the index's fast scan takes the line; reading it finds the wrong type
    lines[bad] = orjson.dumps(d) + b"\n"
    path = tmp_path / "bad-chunk.jsonl"
    path.write_bytes(b"".join(lines))
    app = ReplayApp(str(path), exchange=1, follow=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle_stream(pilot, StreamScreen)
        model = app.screen.model
        assert model.error is not None and "'t_ns'" in str(model.error)
        assert 0 < model.total < len(chunks)  # the frames before the line, and no more
        await pilot.press("end")
        await pilot.pause()
        assert any("shown up to there" in n.message for n in app._notifications)
    assert app.return_code in (0, None)


async def settle_stream(pilot, screen_type):
    from .test_tui import settle

    await settle(pilot, screen_type)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"exchange": 9}, ["there is no exchange 9", "exchanges: 1, 2"]),
        ({"frame": 999}, ["--frame 999", "the stream has frames 1-"]),
        # ReplayApp itself (as the screenshots start it, not the CLI, which refuses it
        # before the screen: tests/test_replay_refuses.py) refuses a line inspect refuses
        ({"exchange": None, "path": "bad"}, ["line 4 (byte", "field 'data' is not a string"]),
    ],
)
async def test_replay_out_of_range_says_so_in_one_line(kwargs, words, tmp_path):
    from streamscope.tui.app import ReplayApp

    path = str(OPENAI)
    if kwargs.pop("path", None):
        lines = OPENAI.read_bytes().splitlines(keepends=True)
        d = orjson.loads(lines[3])  # exchange 1's first chunk line, its data no text
        lines[3] = orjson.dumps(d | {"data": [1]}) + b"\n"
        path = str(tmp_path / "bad.jsonl")
        Path(path).write_bytes(b"".join(lines))
    app = ReplayApp(path, **({"exchange": 1} | kwargs))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if app.return_code is not None:
                break
            await pilot.pause(0.05)
    assert app.return_code == 2
    for word in words:
        assert word in app.failure, app.failure


def test_serve_on_a_busy_port_says_it_as_proxy_does():
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        serve = one_line_exit_2(run("serve", "--port", str(port), str(OPENAI)))
        proxy = one_line_exit_2(run("proxy", "--port", str(port), "--upstream", "http://x"))
    finally:
        busy.close()
    assert (
        serve
        == proxy
        == f"streamscope: cannot listen on 127.0.0.1:{port}: " + serve.split(": ")[-1]
    )


BUGGY = ROOT / "recordings" / "buggy-agent-uuid.jsonl"


@pytest.mark.parametrize("field", ["tool_call_id", "id", "name", "arguments"])
def test_ids_and_names_sent_back_as_arrays_or_objects_are_checked_not_crashed_on(tmp_path, field):
    """The contract check meets the agent's request as sent, whatever the value types."""
    out = []
    for line in BUGGY.read_bytes().splitlines(keepends=True):
        d = orjson.loads(line)
        if d.get("type") == "request" and d["exchange"] == 2:
            body = orjson.loads(d["body"])
            for m in body["messages"]:
                if field == "tool_call_id" and m.get("role") == "tool":
                    m["tool_call_id"] = [1]
                if m.get("role") == "assistant" and m.get("tool_calls"):
                    call = m["tool_calls"][0]
                    if field == "id":
                        call["id"] = {"a": 1}
                    elif field != "tool_call_id":
                        call["function"][field] = [{"x": 1}]
            d["body"] = orjson.dumps(body).decode()
            line = orjson.dumps(d) + b"\n"
        out.append(line)
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"".join(out))
    result = run("inspect", "--json", str(path))
    assert result.exit_code == 0, result.output
    kinds = {f["kind"] for f in orjson.loads(result.output)["contract"]}
    expected = {
        "tool_call_id": "tool-result-id-mismatch",
        "id": "tool-call-id-substituted",
        "name": "tool-call-name-changed",
        "arguments": "tool-call-arguments-invalid",  # not a JSON string
    }
    assert expected[field] in kinds, kinds


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_a_chunk_of_an_exchange_no_line_opened_is_one_line(tmp_path, command):
    """The first chunk of recordings/openai.jsonl edited to exchange 5: it was dropped
    unsaid, the stream's anomalies read as the provider's and every byte said kept."""
    lines = OPENAI.read_bytes().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"chunk"'))
    lines[first] = lines[first].replace(b'"exchange":1,', b'"exchange":5,', 1)
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(lines))
    said = "a chunk line of exchange 5, which has no request or response line before it"
    one_line_exit_2(run(command, str(path)), f"line {first + 1} (byte ", said)


@pytest.mark.parametrize(
    "source, said",
    [
        (OPENAI, "a gzip-compressed streamscope recording: a streamscope recording is read"),
        (ROOT / "tests/fixtures/har/mitmproxy-three.har", "a gzip-compressed HAR file: a HAR"),
        (None, "what it holds is no stream streamscope reads (it begins 'hello"),
    ],
)
@pytest.mark.parametrize("command", ["inspect", "export"])
def test_a_gzip_compressed_file_is_named_for_what_it_holds(tmp_path, source, said, command):
    """A gzip'd recording or HAR is told as one, to be read uncompressed; anything else is
    said to be no stream."""
    import gzip

    path = tmp_path / "saved.gz"
    path.write_bytes(gzip.compress(source.read_bytes() if source else b"hello\n"))
    line = one_line_exit_2(run(command, str(path)), said)
    assert "read uncompressed" in line and str(path) in line


@pytest.mark.parametrize(
    "header",
    [
        b'{"type": "header", "schema_version": 2, "tool": "streamscope", "argv": ',
        b'{"kind": "header", "version": 0, "argv": ',  # version 0's header: no schema_version
    ],
    ids=["current", "version-0"],
)
def test_a_header_nested_past_the_parsers_limit_is_said_to_be_one(tmp_path, header):
    """A header line of either version that the parser cannot read (nested 5,000 deep) is
    named as a recording's header too deep to read, not as no recording at all."""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(header + b"[" * 5000 + b"]" * 5000 + b"}\n")
    line = one_line_exit_2(run("inspect", str(path)), "JSON nested more than 1,024 levels deep")
    assert "(expected the recording header)" in line and "not a streamscope recording" not in line
