"""`streamscope export` of a WebSocket session (issue 31): every format does something true
with it. A recording copies the session's lines, masked; `session` writes it as JSON turn
by turn; sse and chunks write one turn's stream (`--turn`); pytest writes a module that
plays the session back to the openai SDK's own WebSocket client; `--minimal` keeps the
turns and frames that carry the findings, still a session."""

from __future__ import annotations

import ast
import base64
import json
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchmarks.gen import write_realtime_websocket, write_responses_websocket
from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.export.fixtures import export
from streamscope.export.session import open_view, read, select
from streamscope.export.session_minimal import joined, minimize_session
from streamscope.inputs import open_input
from streamscope.recording import RecordingIndex
from streamscope.recording.format import bytes_of

from . import responses_stream as rs
from .test_export_hostile import HOSTILE_NAMES
from .ws_session import codex_turns, create, data_of, write_session

# Text a recorded id or name can hold that a generated module must not take as code, nor
# a terminal as a command (test_export_hostile.py's, in one value).
HOSTILE = (
    'x"""+__import__("os").system("touch PWNED")+"""</script>\x1b]0;pwned\x07\\N{BULLET}{source}'
)
KEY = "sk-proj-Zq8Xw3Vt6Rb9Nm2Lk5Jh1Gf4Dc7Sa0PoIuYtReWq"


def run_cli(*args: str):
    return CliRunner().invoke(main, list(args))


def lines_of(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def calls_of(path: Path) -> list[list[tuple[str, str, str]]]:
    """Each stream's calls (id, name, arguments) as inspect reads them."""
    return [[(c.id, c.name, c.arguments) for c in s.tool_calls] for s in analyze(path).streams]


@pytest.fixture
def codex(tmp_path):
    return write_session(tmp_path / "codex.jsonl", codex_turns())


def three_turns() -> list[tuple[str, bytes]]:
    """An answer, a function call, then a turn that continues the call's response without
    its output: the finding (tool-result-missing) is in turns 2 and 3 alone."""
    out = [("client", create(model=rs.MODEL, input=rs.QUESTION))]
    out += [("server", d) for d in data_of(rs.answer_events())]
    out.append(("client", create(model=rs.MODEL, input=rs.QUESTION, tools=rs.TOOLS)))
    out += [("server", d) for d in data_of(rs.function_call_events())]
    go_on = [{"role": "user", "content": "go on"}]
    out.append(
        ("client", create(model=rs.MODEL, previous_response_id=rs.RESPONSE_IDS[0], input=go_on))
    )
    out += [("server", d) for d in data_of(rs.answer_events(rs.RESPONSE_IDS[0]))]
    return out


def odd_client_turns() -> list[tuple[str, bytes]]:
    """Codex's two turns, the client sending between them what no turn holds: no JSON, a
    JSON array, an object of a type the SDK does not know with a 70-bit integer."""
    out = codex_turns()
    second = [i for i, m in enumerate(out) if m[0] == "client"][1]
    odd = {"type": "response.steer", "weird": {"a": [1, 2.5, None, True]}, "n": 2**70}
    odd["input"] = [{"type": "input_text", "text": HOSTILE}]
    out[second:second] = [
        ("client", b"not json"),
        ("client", b"[1, 2]"),
        ("client", json.dumps(odd).encode()),
    ]
    return out


# A key holding a lone surrogate, as a provider sends it (the JSON escape): pydantic's
# to_dict() cannot write an event holding it (UnicodeEncodeError); the module reads it
# off the model (dialects/sdk_dict.py). Set in the item a call's events carry.
SURROGATE_KEY = b'"\\ud800x":1'
CALL_ITEM = b'"type":"function_call"'


def surrogate_keyed(data: bytes) -> bytes:
    """A server message's JSON with SURROGATE_KEY in its call item, if it has one."""
    return data.replace(CALL_ITEM, CALL_ITEM + b"," + SURROGATE_KEY, 1)


def surrogate_turns() -> list[tuple[str, bytes]]:
    """Codex's two turns, each call item of the server's messages holding the key."""
    return [(s, surrogate_keyed(d) if s == "server" else d) for s, d in codex_turns()]


def hostile_turns(hostile: str = HOSTILE) -> list[tuple[str, bytes]]:
    """Codex's two turns, the call's id and name holding `hostile`."""
    escaped = json.dumps(hostile)[1:-1].encode()
    out = []
    for sender, data in codex_turns():
        data = data.replace(rs.CALL_ID.encode(), b"call_" + escaped)
        out.append((sender, data.replace(b"get_weather", b"get_" + escaped)))
    return out


# -- recording ------------------------------------------------------------------------------


def test_a_recording_copies_the_sessions_lines(codex, tmp_path):
    out = tmp_path / "out.jsonl"
    result = run_cli("export", str(codex), "--format", "recording", "-o", str(out))
    assert result.exit_code == 0, result.output
    source, written = lines_of(codex), lines_of(out)
    t0 = source[1]["t_ns"]  # the handshake: times are written from it
    recorded = [d for d in source if d["type"] == "message"]
    copied = [d for d in written if d["type"] == "message"]
    assert [
        (d["from"], d["opcode"], d["fin"], d.get("data"), d.get("data_b64")) for d in copied
    ] == [(d["from"], d["opcode"], d["fin"], d.get("data"), d.get("data_b64")) for d in recorded]
    assert [d["t_ns"] for d in copied] == [d["t_ns"] - t0 for d in recorded]
    assert [d["type"] for d in written] == ["header", "request", "response"] + ["message"] * len(
        recorded
    ) + ["end"]
    assert written[-1]["reason"] == "complete"
    assert calls_of(out) == calls_of(codex)
    assert analyze(out).compared == 1 and analyze(out).contract == []


def test_a_recording_keeps_a_fragmented_message_as_its_frames(tmp_path):
    msgs = codex_turns()
    whole = msgs[1][1]
    msgs[1:2] = [("server", whole[:10], 1, False), ("server", whole[10:], 0, True)]
    source = write_session(tmp_path / "s.jsonl", msgs)
    for extra in ([], ["--turn", "1"]):  # a turn alone keeps its frames as recorded too
        out = tmp_path / f"out{len(extra)}.jsonl"
        assert (
            run_cli(
                "export", str(source), "--format", "recording", *extra, "-o", str(out)
            ).exit_code
            == 0
        )
        frames = [(d["opcode"], d["fin"]) for d in lines_of(out) if d["type"] == "message"]
        assert frames[1:3] == [("text", False), ("continuation", True)]
        assert calls_of(out)[0] == calls_of(source)[0]


def test_turn_k_alone_is_a_session_of_that_turn(codex, tmp_path):
    out = tmp_path / "turn2.jsonl"
    assert (
        run_cli(
            "export", str(codex), "--turn", "2", "--format", "recording", "-o", str(out)
        ).exit_code
        == 0
    )
    a = analyze(out)
    [stream] = a.streams
    assert stream.turn == 1 and stream.content == rs.ANSWER and stream.ended == "done"
    # the response it continues is not in the file: said, not checked
    assert [f.kind for f in a.contract] == ["continuation-missing"]
    sent = [
        orjson.loads(d["data"])
        for d in lines_of(out)
        if d["type"] == "message" and d["from"] == "client" and d["opcode"] == "text"
    ]
    assert [m.get("previous_response_id") for m in sent] == [rs.RESPONSE_IDS[0]]


# -- one turn's stream ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["sse", "chunks"])
def test_a_one_stream_format_asks_which_turn(codex, fmt):
    result = run_cli("export", str(codex), "--format", fmt)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert "turns 1-2" in result.output and "--turn" in result.output


@pytest.mark.parametrize("fmt, suffix", [("sse", "sse"), ("chunks", "chunks.jsonl")])
def test_a_turn_is_written_as_the_stream_it_is(codex, tmp_path, fmt, suffix):
    for turn in (1, 2):
        out = tmp_path / f"turn{turn}.{suffix}"
        result = run_cli("export", str(codex), "--turn", str(turn), "--format", fmt, "-o", str(out))
        assert result.exit_code == 0, result.output
        [stream] = analyze(out).streams
        assert stream.dialect == "openai-responses" and stream.ended == "done"
        assert [(c.id, c.name, c.arguments) for c in stream.tool_calls] == calls_of(codex)[turn - 1]
    if fmt == "sse":  # the Responses API's own SSE events: named
        assert (tmp_path / "turn1.sse").read_bytes().startswith(b"event: response.created\ndata: {")


def test_frames_of_a_turn(codex):
    done = export(str(codex), "sse", frames="3-5", turn=1)
    assert (done.frames_in, done.frames_out) == (3, 3)
    assert [e.split(b"\n")[0] for e in done.data.split(b"\n\n") if e] == [
        b"event: response.output_item.added",
        b"event: response.function_call_arguments.delta",
        b"event: response.function_call_arguments.delta",
    ]


@pytest.mark.parametrize(
    "args, said",
    [
        (["--turn", "3"], "has turns 1-2, not turn 3"),
        (["--frames", "1-2", "--format", "recording"], "--frames picks frames of one stream"),
        (["--turn", "1", "--frames", "1-40"], "the stream has frames 1-11"),
    ],
)
def test_a_session_refuses_what_it_cannot_write_in_one_line(codex, args, said):
    result = run_cli("export", str(codex), *args)
    assert result.exit_code == 2 and said in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, said",
    [
        (
            ["--turn", "1"],
            "--turn picks a turn of a WebSocket session; exchange 1 is an HTTP stream",
        ),
        (["--format", "session"], "--format session writes a WebSocket session"),
    ],
)
def test_an_http_stream_has_no_session_to_write(args, said):
    root = Path(__file__).resolve().parent.parent
    result = run_cli("export", str(root / "recordings" / "openai.jsonl"), *args)
    assert result.exit_code == 2 and said in result.output and result.output.count("\n") == 1


# -- the session fixture ---------------------------------------------------------------------


def test_the_session_fixture_holds_each_turns_messages_times_and_calls(codex):
    doc = orjson.loads(export(str(codex), "session").data)
    assert (doc["format"], doc["version"], doc["dialect"]) == (
        "streamscope-session",
        1,
        "openai-responses",
    )
    assert [t["turn"] for t in doc["turns"]] == [1, 2]
    recorded = [d for d in lines_of(codex) if d["type"] == "message" and d["opcode"] == "text"]
    t0 = lines_of(codex)[1]["t_ns"]
    written = [m for t in doc["turns"] for m in t["messages"]]
    assert [(m["from"], m["t_ns"], m["data"]) for m in written] == [
        (d["from"], d["t_ns"] - t0, d["data"]) for d in recorded
    ]
    assert [m["seq"] for m in written] == list(range(1, len(written) + 1))
    first = doc["turns"][0]
    assert [m["from"] for m in first["messages"]][:2] == ["client", "server"]
    assert json.loads(first["messages"][0]["data"])["type"] == "response.create"
    assert (first["ended"], first["final"]) == (True, "response.completed")
    # the calls are streamscope's robust reading of each turn
    assert [
        [(c["call_id"], c["name"], c["arguments"]) for c in t["calls"]] for t in doc["turns"]
    ] == calls_of(codex)
    assert [(c["from"], c["code"]) for c in doc["closes"]] == [("client", 1000), ("server", 1000)]
    assert doc["contract"] == [] and doc["outside"] == [] and doc["end"]["reason"] == "complete"


def test_the_session_fixture_names_the_contracts_finding(tmp_path):
    source = write_session(tmp_path / "s.jsonl", codex_turns(answer_call=False))
    doc = orjson.loads(export(str(source), "session").data)
    [f] = doc["contract"]
    assert (f["kind"], f["severity"], f["turn"]) == ("tool-result-missing", "error", 2)


# -- --minimal ------------------------------------------------------------------------------


def test_minimal_keeps_the_turns_and_frames_that_carry_the_finding(tmp_path):
    source = write_session(tmp_path / "s.jsonl", three_turns())
    assert [f.kind for f in analyze(source).contract] == ["tool-result-missing"]
    out = tmp_path / "min.jsonl"
    result = run_cli("export", str(source), "--minimal", "--format", "recording", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "3 turns, 35 frames -> 2 turns," in result.output
    a = analyze(out)
    assert [f.kind for f in a.contract] == ["tool-result-missing"]  # the finding holds
    assert len(a.streams) == 2 and all(s.ended == "done" for s in a.streams)
    assert sum(s.frames for s in a.streams) < 23
    assert [c.id for c in a.streams[0].tool_calls] == [rs.CALL_ID]
    # still a session: each turn opened by its response.create, ended by its final event
    messages = [d for d in lines_of(out) if d["type"] == "message" and d["opcode"] == "text"]
    opened = [orjson.loads(d["data"]) for d in messages if d["from"] == "client"]
    assert [m["type"] for m in opened] == ["response.create"] * 2
    assert opened[1]["previous_response_id"] == rs.RESPONSE_IDS[0]
    events = [orjson.loads(d["data"]).get("type") for d in messages if d["from"] == "server"]
    assert events.count("response.completed") == 2 and events[-1] == "response.completed"
    # the fixture numbers its own turns, and says which they were
    doc = orjson.loads(export(str(source), "session", minimal=True).data)
    assert [(t["turn"], t["recorded_turn"]) for t in doc["turns"]] == [(1, 2), (2, 3)]
    assert [f["turn"] for f in doc["contract"]] == [2]


def test_minimal_on_a_session_that_shows_nothing_keeps_one_turn(codex):
    done = export(str(codex), "recording", minimal=True)
    assert (done.turns_in, done.turns_out) == (2, 1) and done.frames_out < done.frames_in


def test_minimal_is_bounded_and_what_it_writes_is_still_the_session(tmp_path):
    source = write_session(tmp_path / "s.jsonl", three_turns())
    with open_input(str(source), check=True) as src:
        view = open_view(src, src.exchange(1))
        entries = select(view, None)
        target = joined(view.reading.results, view.reading.findings)
        for budget in (1, 5, 40):
            got = minimize_session(view, entries, max_runs=budget)
            reading = read(view, got)
            assert joined(reading.results, reading.findings) == target


def test_minimal_of_one_turns_stream(codex):
    done = export(str(codex), "sse", turn=1, minimal=True)
    assert done.frames_out < done.frames_in == 11
    assert b"event: response.completed" in done.data  # the client's end of a Responses stream


def _kinds_and_clients(path: Path) -> list[tuple]:
    """Each stream's warning and error kinds and the clients that differ (True) or raise
    (None)."""
    out = []
    for s in analyze(path).streams:
        clients = [(k, s.differs(k)) for k in s.strategies if k != "robust"]
        out.append(
            (
                sorted({a.kind for a in s.anomalies if a.severity != "info"}),
                sorted((k, d) for k, d in clients if d is not False),
            )
        )
    return out


@pytest.mark.parametrize("write", [write_responses_websocket, write_realtime_websocket])
def test_minimal_of_a_long_session_keeps_the_cut_call_alone(write, tmp_path):
    """40 calls, the middle one cut short: its final event states every call again, so
    no prefix or suffix passed and ddmin ran for half a minute; the calls no finding is
    on now go whole, each with its entry in the final output."""
    source = tmp_path / "s.jsonl"
    write(str(source), 40)
    out = tmp_path / "min.jsonl"
    out.write_bytes(export(str(source), "recording", minimal=True).data)
    assert _kinds_and_clients(out) == _kinds_and_clients(source) != [([], [])]
    (stream,) = analyze(out).streams
    assert stream.frames <= 4 and [c.id for c in stream.tool_calls] == ["call_20"]
    sent = {line["data"] for line in lines_of(source) if line["type"] == "message"}
    final = orjson.loads([d["data"] for d in lines_of(out) if d["type"] == "message"][-1])
    (entry,) = final["response"]["output"]  # the kept call's, as the stream sent it
    assert any(orjson.dumps(entry).decode() in data for data in sent)
    done = export(str(source), "sse", turn=1, minimal=True)  # one turn's stream
    assert done.frames_out <= 4 and b"fc_20" in done.data and b"fc_19" not in done.data


# -- bad input ------------------------------------------------------------------------------


@pytest.fixture
def cut(tmp_path):
    """A session the client's end cut in the middle of its first response."""
    return write_session(
        tmp_path / "cut.jsonl", codex_turns()[:5], reason="client-closed", close=False
    )


def test_a_session_cut_mid_turn_exports_as_far_as_it_went(cut, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run_cli("export", str(cut), "--format", "recording", "-o", str(out)).exit_code == 0
    assert lines_of(out)[-1]["reason"] == "client-closed"
    [s] = analyze(out).streams
    assert s.ended == "client-closed"
    doc = orjson.loads(export(str(cut), "session").data)
    [turn] = doc["turns"]
    assert (turn["ended"], turn["final"], len(turn["messages"])) == (False, None, 5)
    assert turn["anomalies"] == sorted({a.kind for a in s.anomalies if a.severity != "info"})
    module = export(str(cut), "pytest").data.decode()
    compile(module, "test_cut.py", "exec")
    assert "turn 1: args-invalid-json" in module


def test_a_turn_with_no_final_event_is_a_turn_unfinished(tmp_path):
    msgs = codex_turns()
    last = max(i for i, m in enumerate(msgs[:13]) if m[0] == "server")  # turn 1's completed
    assert b"response.completed" in msgs[last][1]
    del msgs[last]
    source = write_session(tmp_path / "s.jsonl", msgs)
    doc = orjson.loads(export(str(source), "session").data)
    assert [(t["turn"], t["ended"], t["final"]) for t in doc["turns"]] == [
        (1, False, None),
        (2, True, "response.completed"),
    ]
    # the turn's call is still read (from its output_item.done)
    assert doc["turns"][0]["calls"][0]["call_id"] == rs.CALL_ID
    assert export(str(source), "sse", turn=1).frames_out == 10


def test_frames_the_framing_found_broken_stay_in_their_turn(tmp_path):
    msgs = codex_turns()
    msgs.insert(3, ("server", b"odd", 3, True))  # a reserved opcode
    msgs.insert(5, ("server", b"\xff\xfe", 2, True))  # binary, no UTF-8
    msgs.append(("server", b'{"type":"response.created"', 1, False))  # cut by the end
    source = write_session(tmp_path / "s.jsonl", msgs, reason="upstream-error", close=False)
    doc = orjson.loads(export(str(source), "session").data)
    assert doc["outside"] == []
    first = doc["turns"][0]["messages"]
    assert [m.get("opcode", "text") for m in first[2:5]] == ["text", 3, "text"]
    assert first[3]["invalid"] == "opcode 3 is reserved (RFC 6455 5.2)"
    assert [m.get("data_b64") for m in first if m.get("opcode") == "binary"] == ["//4="]
    assert doc["turns"][2]["messages"][0]["complete"] is False
    # --minimal drops the clean turn and keeps the broken frames as recorded
    out = tmp_path / "min.jsonl"
    out.write_bytes(export(str(source), "recording", minimal=True).data)
    kinds = lambda a: {x.kind for s in a.streams for x in s.anomalies if x.severity != "info"}  # noqa: E731
    assert kinds(analyze(out)) == kinds(analyze(source))
    assert len(analyze(out).streams) == 2
    module = export(str(source), "pytest").data.decode()
    assert "2 recorded messages are not played back" in module


def test_minimal_keeps_a_text_frame_that_is_not_utf8_as_received(tmp_path):
    # a text message whose bytes are not UTF-8 (RFC 6455 says they must be): inspect
    # finds invalid-utf8, and so must the minimal session, on the same bytes; the turn
    # is shrunk as any other (it stayed whole, every frame as recorded)
    msgs = codex_turns()
    k = next(i for i, (_, d) in enumerate(msgs) if b"function_call_arguments.delta" in d)
    bad = msgs[k][1].replace(b'"delta":"', b'"delta":"\xff', 1)
    msgs[k] = ("server", bad)
    source = write_session(tmp_path / "s.jsonl", msgs)
    kinds = lambda a: [sorted(x.kind for x in s.anomalies) for s in a.streams]  # noqa: E731
    assert "invalid-utf8" in kinds(analyze(source))[0]
    out = tmp_path / "min.jsonl"
    done = export(str(source), "recording", minimal=True)
    out.write_bytes(done.data)
    assert kinds(analyze(out)) == kinds(analyze(source))[:1]  # the call's turn alone
    assert done.frames_out < 11  # (the turn's frames as recorded)
    sent = [
        bytes_of(d.get("data"), d.get("data_b64"))
        for d in lines_of(out)
        if d["type"] == "message" and d["from"] == "server"
    ]
    assert bad in sent  # its bytes as received, never U+FFFD in their place
    assert not any("\ufffd".encode() in m for m in sent)
    doc = orjson.loads(export(str(source), "session", minimal=True).data)
    frames = [m for t in doc["turns"] for m in t["messages"] if m["from"] == "server"]
    assert [base64.b64decode(m["data_b64"]) for m in frames if "data_b64" in m] == [bad]


def test_a_recording_line_that_is_no_message_is_one_line(codex, tmp_path):
    lines = codex.read_bytes().splitlines()
    lines[5] = lines[5].replace(b'"from":"server"', b'"from":"upstream"')
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    result = run_cli("export", str(bad), "--format", "session")
    assert result.exit_code == 2 and "line 6" in result.output and "'from'" in result.output
    assert result.output.count("\n") == 1


@pytest.mark.parametrize("opcode", [[1], {"a": 1}, True, 16, "TEXT"])
def test_a_message_line_whose_opcode_is_none_is_one_line(codex, tmp_path, opcode):
    lines = lines_of(codex)
    lines[4]["opcode"] = opcode
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    result = run_cli("export", str(bad), "--format", "session")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "line 5" in result.output and "field 'opcode' is not an opcode name" in result.output


def test_a_realtime_session_in_every_format(tmp_path):
    from .dialects.realtime.sessions import tool_loop, write

    source = write(tmp_path / "realtime.jsonl", tool_loop())
    doc = orjson.loads(export(str(source), "session").data)
    assert doc["dialect"] == "openai-realtime" and len(doc["turns"]) == 2
    assert [c["call_id"] for c in doc["turns"][0]["calls"]] == ["call_1"]
    # the client's setup and question are the first turn's, before its response
    sent = [
        json.loads(m["data"])["type"] for m in doc["turns"][0]["messages"] if m["from"] == "client"
    ]
    assert sent[:3] == ["session.update", "conversation.item.create", "response.create"]
    out = tmp_path / "out.jsonl"
    out.write_bytes(export(str(source), "recording").data)
    assert calls_of(out) == calls_of(source)
    assert export(str(source), "sse", turn=1).data.startswith(b"event: ")


def test_a_session_whose_dialect_has_no_websocket_client_has_no_pytest_module(tmp_path):
    # chat chunks over a socket no dialect claims: read as one turn, which no SDK replays
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "hi"}}],
    }
    source = write_session(
        tmp_path / "s.jsonl",
        [("client", b'{"hello":1}'), ("server", orjson.dumps(chunk))],
        url="https://example.com/ws",
    )
    result = run_cli("export", str(source), "--format", "pytest")
    assert (
        result.exit_code == 2 and "no WebSocket client a pytest module can drive" in result.output
    )
    assert result.output.count("\n") == 1
    assert run_cli("export", str(source), "--format", "session").exit_code == 0


def test_credentials_the_handshake_carried_are_masked_in_every_format(tmp_path):
    msgs = codex_turns()
    msgs[0] = (
        "client",
        create(model=rs.MODEL, input=rs.QUESTION, tools=rs.TOOLS, metadata={"key": KEY}),
    )
    delta = next(i for i, m in enumerate(msgs) if b"output_text.delta" in m[1])
    event = orjson.loads(msgs[delta][1])
    event["delta"] = f"your key is {KEY}"
    data = orjson.dumps(event)
    half = data.index(KEY.encode()) + 10  # the key split over two frames
    msgs[delta : delta + 1] = [("server", data[:half], 1, False), ("server", data[half:], 0, True)]
    source = write_session(tmp_path / "s.jsonl", msgs)
    lines = lines_of(source)
    lines[1]["headers"] = [
        ["authorization", f"Bearer {KEY}"] if h[0] == "authorization" else h
        for h in lines[1]["headers"]
    ]
    source.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))  # as --no-redact records
    for fmt, extra in [
        ("recording", []),
        ("session", []),
        ("pytest", []),
        ("sse", ["--turn", "2"]),
        ("recording", ["--minimal"]),
    ]:
        done = export(
            str(source), fmt, minimal="--minimal" in extra, turn=2 if "--turn" in extra else None
        )
        assert KEY.encode() not in done.data and KEY[8:30].encode() not in done.data, (fmt, extra)
        assert b"[REDACTED" in done.data
    whole = tmp_path / "out.jsonl"
    whole.write_bytes(export(str(source), "recording").data)
    said = [d.get("masked", 0) for d in lines_of(whole) if d["type"] == "message"]
    assert sum(said) == 2  # the client's message, and the server's where the key began
    assert export(str(source), "session").masked == 2
    assert export(str(source), "sse", turn=2).masked == 1
    result = run_cli("export", str(source), "--turn", "2")
    assert "1 value masked" in result.stderr


# (a lone surrogate is no JSON text: the reading itself refuses it, as RFC 8259 asks)
IN_JSON = {k: v for k, v in HOSTILE_NAMES.items() if k != "not-utf8"}


@pytest.mark.parametrize("hostile", [HOSTILE, *IN_JSON.values()], ids=["all", *IN_JSON])
def test_a_hostile_id_and_name_are_only_data_in_the_module(tmp_path, hostile):
    source = write_session(tmp_path / "s.jsonl", hostile_turns(hostile))
    [[(call_id, name, _)], []] = calls_of(source)
    assert hostile in call_id and hostile in name
    text = export(str(source), "pytest").data.decode()
    tree = ast.parse(text)
    assert "\x1b" not in text and "\x07" not in text  # nothing a terminal acts on
    assert hostile not in (ast.get_docstring(tree) or "")
    # the module is its docstring, imports, two literals, the accumulator and the test
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "Import", "ImportFrom", "Assign", "FunctionDef"}
    ns: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id in ("SESSION", "EXPECTED"):  # type: ignore[attr-defined]
            ns[node.targets[0].id] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
    assert [c["call_id"] for c in ns["EXPECTED"][1]] == [call_id]
    assert [c["name"] for c in ns["EXPECTED"][1]] == [name]
    sent = [d for _, _, d in ns["SESSION"]]
    recorded = [
        d["data"] for d in lines_of(source) if d["type"] == "message" and d["opcode"] == "text"
    ]
    assert sent == recorded
    doc = json.loads(export(str(source), "session").data)
    assert doc["turns"][0]["calls"][0]["name"] == name


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
@pytest.mark.parametrize("name", list(HOSTILE_NAMES.values()), ids=list(HOSTILE_NAMES))
def test_a_hostile_file_name_is_only_the_modules_docstring(tmp_path, name):
    source = write_session(tmp_path / name, codex_turns())
    text = export(str(source), "pytest").data.decode()
    tree = ast.parse(text)
    assert str(source) in (ast.get_docstring(tree) or "")
    assert [type(n).__name__ for n in tree.body[:2]] == ["Expr", "Import"]


def test_the_module_imports_only_what_a_user_has(codex):
    tree = ast.parse(export(str(codex), "pytest").data.decode())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    # the standard library's json and threading, and what `pip install "openai[realtime]"
    # pytest` installs
    assert imported == {"json", "threading", "openai", "pytest", "websockets"}


# -- the module, run ------------------------------------------------------------------------


# Each session's module, exported in its own folder, then all run by one pytest (one
# interpreter: importing the SDK's WebSocket client costs seconds a process).
MODULES = {
    "codex": (lambda p: write_session(p, codex_turns()), []),
    "minimal": (lambda p: write_session(p, codex_turns(answer_call=False)), ["--minimal"]),
    "cut": (lambda p: write_session(p, codex_turns()[:5], reason="client-closed", close=False), []),
    "hostile": (lambda p: write_session(p, hostile_turns()), []),
    "one-turn": (lambda p: write_session(p, three_turns()), ["--turn", "2"]),
    "odd-client-messages": (lambda p: write_session(p, odd_client_turns()), []),
    "surrogate-key": (lambda p: write_session(p, surrogate_turns()), []),
}


def _session(make, args):
    def write(module) -> None:
        source = make(module.parent / "session.jsonl")
        result = run_cli("export", str(source), "--format", "pytest", *args, "-o", str(module))
        assert result.exit_code == 0, result.output

    return write


def _realtime(answer: bool):
    def make(module) -> None:
        from .dialects.realtime.sessions import tool_loop, write

        source = write(module.parent / "realtime.jsonl", tool_loop(outputs=None if answer else []))
        module.write_bytes(export(str(source), "pytest", minimal=not answer).data)

    return make


def _realtime_surrogate(module) -> None:
    """The Realtime tool loop, each call item of the server's messages holding the key."""
    from .dialects.realtime.events import data
    from .dialects.realtime.sessions import tool_loop, write

    pairs = [(s, surrogate_keyed(data(e)).decode() if s == "server" else e) for s, e in tool_loop()]
    module.write_bytes(export(str(write(module.parent / "realtime.jsonl", pairs)), "pytest").data)


def _sdk_fails(module) -> None:
    msgs = codex_turns()
    msgs.insert(3, ("server", b"not json"))  # the SDK's recv raises on it; robust reads past it
    source = write_session(module.parent / "s.jsonl", msgs)
    module.write_bytes(export(str(source), "pytest").data)


def sessions(together) -> dict:
    """Every session module below, run together."""
    writers = {name: _session(make, args) for name, (make, args) in MODULES.items()}
    writers["realtime-tool-loop"] = _realtime(True)
    writers["realtime-output-missing"] = _realtime(False)
    writers["realtime-surrogate-key"] = _realtime_surrogate
    writers["sdk-fails"] = _sdk_fails
    return together.run("sessions", writers)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODULES))
def test_the_exported_modules_pass_through_the_sdks_websocket_client(together, name):
    ran = sessions(together)
    text = ran[name].module.read_text()
    assert "client.beta.responses.connect(" in text and "NOTE" not in text
    assert ran[name].green, ran[name].text
    assert not (ran[name].module.parent / "PWNED").exists()
    assert not (ran[name].module.parent.parent / "PWNED").exists()


@pytest.mark.slow
@pytest.mark.parametrize("answer", [True, False], ids=["tool-loop", "output-missing"])
def test_a_realtime_sessions_module_passes_through_client_realtime_connect(together, answer):
    ran = sessions(together)["realtime-tool-loop" if answer else "realtime-output-missing"]
    text = ran.module.read_text()
    assert "client.realtime.connect(model='gpt-realtime', " in text and "NOTE" not in text
    if not answer:
        assert "the session's contract: tool-result-missing" in text
    assert ran.green, ran.text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["surrogate-key", "realtime-surrogate-key"])
def test_an_event_holding_a_key_pydantic_cannot_write_is_read_off_the_model(together, name):
    ran = sessions(together)[name]
    assert SURROGATE_KEY.decode().replace("\\", "\\\\") in ran.module.read_text()  # as sent
    assert ran.green, ran.text  # no UnicodeEncodeError from the SDK's to_dict()


@pytest.mark.slow
def test_a_module_the_sdk_fails_on_says_so_and_fails(together):
    ran = sessions(together)["sdk-fails"]
    assert "is no JSON: the SDK raises on it" in ran.module.read_text()
    # (its replay fixture raises: each test errors in its setup)
    assert not ran.passed and ran.failed + ran.errors > 0, ran.text
    assert "JSONDecodeError" in ran.text


def test_the_recording_reader_reads_the_export(codex, tmp_path):
    """(The export is a recording the index opens, every line checked.)"""
    out = tmp_path / "out.jsonl"
    out.write_bytes(export(str(codex), "recording", minimal=True).data)
    with RecordingIndex.open(str(out), check=True) as index:
        assert len(list(index.messages(1))) == sum(
            1 for d in lines_of(out) if d["type"] == "message"
        )
