"""A recorded WebSocket session read as its streams: Codex's Responses over WebSocket
(one stream per `response.create`), its contract across turns, the faces that list it."""

from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.scan.rows import analyze_file

from . import responses_stream as rs
from .ws_session import codex_turns, write_session


def run_cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def session(tmp_path):
    return write_session(tmp_path / "codex.jsonl", codex_turns())


def test_each_response_create_is_a_stream_of_its_own(session):
    a = analyze(session)
    assert [(s.exchange, s.turn, s.framing, s.dialect) for s in a.streams] == [
        (1, 1, "websocket", "openai-responses"),
        (1, 2, "websocket", "openai-responses"),
    ]
    first, second = a.streams
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        (rs.CALL_ID, "get_weather", rs.ARGUMENTS)
    ]
    assert second.content == rs.ANSWER and not second.tool_calls
    assert first.response_id == rs.RESPONSE_IDS[0]
    assert all(s.ended == "done" and not s.anomalies for s in a.streams)
    assert a.contract == [] and a.compared == 1  # previous_response_id resolved, call answered
    assert a.exchanges[0].model == rs.MODEL  # from the first response.create


def test_a_turn_that_does_not_answer_the_call_breaks_the_contract(tmp_path):
    a = analyze(write_session(tmp_path / "s.jsonl", codex_turns(answer_call=False)))
    [f] = a.contract
    assert (f.kind, f.severity, f.exchange, f.turn, f.stream_turn) == (
        "tool-result-missing",
        "error",
        1,
        2,
        1,
    )
    assert rs.CALL_ID in f.message


def test_a_previous_response_id_the_recording_does_not_hold_is_said(tmp_path):
    msgs = codex_turns()
    second = [i for i, m in enumerate(msgs) if m[0] == "client"][1]
    a = analyze(write_session(tmp_path / "s.jsonl", msgs[second:]))
    [f] = a.contract
    assert (f.kind, f.severity, f.turn) == ("continuation-missing", "info", 1)
    assert rs.RESPONSE_IDS[0] in f.message


def test_a_session_cut_mid_response_ends_that_stream_unfinished(tmp_path):
    msgs = codex_turns()[:5]  # response.create, then four events of the first response
    a = analyze(write_session(tmp_path / "s.jsonl", msgs, reason="client-closed", close=False))
    [s] = a.streams
    assert s.turn == 1 and s.ended == "client-closed"


def test_a_fragmented_message_is_one_event(tmp_path):
    msgs = codex_turns()
    whole = msgs[1][1]
    msgs[1:2] = [("server", whole[:10], 1, False), ("server", whole[10:], 0, True)]
    a = analyze(write_session(tmp_path / "s.jsonl", msgs))
    assert [len(s.tool_calls) for s in a.streams] == [1, 0]
    assert not any(x.kind == "frame-invalid" for s in a.streams for x in s.anomalies)


def test_a_continuation_with_nothing_open_is_a_frame_finding(tmp_path):
    msgs = codex_turns()
    msgs.insert(2, ("server", b'{"type":"response.in_progress"}', 0, True))
    a = analyze(write_session(tmp_path / "s.jsonl", msgs))
    kinds = [x.kind for x in a.streams[0].anomalies]
    assert "frame-invalid" in kinds


def test_inspect_lists_the_session_with_its_responses(session):
    out = run_cli("inspect", str(session))
    assert out.exit_code == 0
    assert "Exchange 1, response 1" in out.output and "Exchange 1, response 2" in out.output
    assert "in WebSocket messages" in out.output
    doc = orjson.loads(run_cli("inspect", "--json", str(session)).output)
    assert [(s["exchange"], s["turn"], s["framing"]) for s in doc["streams"]] == [
        (1, 1, "websocket"),
        (1, 2, "websocket"),
    ]


def test_inspect_strict_fails_on_a_session_contract_break(tmp_path):
    path = write_session(tmp_path / "s.jsonl", codex_turns(answer_call=False))
    out = run_cli("inspect", "--strict", str(path))
    assert out.exit_code == 1
    doc = orjson.loads(run_cli("inspect", "--json", str(path)).output)
    assert doc["contract"][0]["turn"] == 2 and doc["contract"][0]["stream_turn"] == 1


def test_scan_gives_a_row_per_stream(session):
    rows = analyze_file(session)
    assert [(r.exchange, r.turn, r.calls) for r in rows.exchanges] == [(1, 1, 1), (1, 2, 0)]
    assert [(c.exchange, c.turn, c.id) for c in rows.calls] == [(1, 1, rs.CALL_ID)]


def test_a_session_whose_path_no_dialect_claims_is_told_by_its_messages(tmp_path):
    msgs = codex_turns()
    path = write_session(tmp_path / "s.jsonl", msgs, url="https://example.com/ws/stream")
    a = analyze(path)  # no dialect claims the path: the server's messages tell
    assert [(s.dialect, s.turn, len(s.tool_calls)) for s in a.streams] == [
        ("openai-responses", 1, 1),
        ("openai-responses", 2, 0),
    ]
    from streamscope.inputs import open_input

    with open_input(path) as source:
        opened = source.exchange(1).session()
        assert opened is not None and opened.dialect == "openai-responses"


def test_a_session_opens_for_random_access_with_its_turns_as_streams(session):
    from streamscope.inputs import open_input
    from streamscope.inputs.session import TurnReads

    with open_input(session) as source:
        opened = source.exchange(1).session()
        assert opened is not None
        senders = [m.sender for m in opened.messages if m.opcode == "text"]
        assert senders.count("client") == 2 and senders[0] == "client"
        assert [t.turn for t in opened.turns] == [1, 2]
        reads = TurnReads(opened.turns[0])
        frames = list(reads.frames())
        assert [f.number for f in frames] == list(range(1, len(reads) + 1))
        assert frames[0].event == "response.created"
        # a copied decoder resumes where it was (the replay's snapshots)
        decoder = reads.decoder()
        decoder.feed(b"", None)
        assert decoder.copy().feed(b"", None)[0].number == 2


def test_the_text_report_names_the_session_once_then_its_responses(session):
    out = run_cli("inspect", str(session)).output
    line = next(x for x in out.splitlines() if "WebSocket session" in x)
    assert "2 responses" in line and "closed by the client (1000)" in line
    assert out.count("GET /v1/responses") == 1  # the responses do not repeat the handshake


def test_a_session_that_opened_no_response_is_still_listed(tmp_path):
    path = write_session(tmp_path / "s.jsonl", [])
    out = run_cli("inspect", str(path))
    assert out.exit_code == 0
    assert "WebSocket session" in out.output and "no response" in out.output
