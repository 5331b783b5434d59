"""A Realtime session's turns (one per response) and its contract across them, read from
messages as the session gives them and from recordings the way the recorder writes them."""

from __future__ import annotations

import json

import orjson
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.dialects.realtime.engine import RealtimeEngine
from streamscope.dialects.realtime.session import session, tools_in_force
from streamscope.framing.session import WsMessage

from .events import (
    TIME_TOOL,
    WEATHER_TOOL,
    call,
    client_output,
    done,
    item,
    message_item,
    messages,
    numbered,
    response,
)
from .sessions import ASK, CREATE, SESSION_UPDATE, tool_loop, write


def _types(turn_messages) -> list:
    return [json.loads(m.data)["type"] for m in turn_messages]


def _read(turn):
    engine = RealtimeEngine()
    for frame in turn.frames:
        engine.feed(frame)
    return engine.finish(end_reason="complete" if turn.ended else None)


def test_each_response_is_a_turn_with_the_client_messages_sent_before_it():
    first, second = session(messages(tool_loop()))
    assert (first.turn, second.turn) == (1, 2) and first.ended and second.ended
    assert first.request == CREATE and second.request == CREATE
    assert _types(first.client) == ["session.update", "conversation.item.create", "response.create"]
    assert _types(second.client) == ["conversation.item.create", "response.create"]
    # the server's messages before the response are read with it, before its response.created
    assert [f.event for f in first.frames[:3]] == [
        "session.created",
        "session.updated",
        "response.created",
    ]
    assert [f.number for f in first.frames] == list(range(1, len(first.frames) + 1))
    times = [f.time_ns for f in first.frames]
    assert times == sorted(times) and times[0] >= 0
    assert first.frames[-1].event == "response.done"
    assert [c.id for c in _read(first).tool_calls] == ["call_1"]


def test_a_response_the_server_began_on_its_own_has_no_request():
    pairs = [
        ("client", SESSION_UPDATE),
        ("client", ASK),
        *[("server", e) for e in response(call())],
    ]
    (turn,) = session(messages(pairs))
    assert turn.request is None and _types(turn.client) == [
        "session.update",
        "conversation.item.create",
    ]


def test_overlapping_responses_are_told_apart_by_their_response_id():
    a = response(call(0, "item_a", "call_a", rid="resp_a"), rid="resp_a")
    b = response(message_item(0, "Out of band.", "item_b", "resp_b"), rid="resp_b")
    # both begin, then their events interleave, each naming its response
    events = [
        a[0],
        b[0],
        *[e for pair in zip(a[1:], b[1:], strict=False) for e in pair],
        *a[len(b) :],
    ]
    first, second = session(messages([("server", e) for e in events]))
    assert first.ended and second.ended
    assert {f.payload.get("response_id") for f in first.frames[1:-1]} == {"resp_a"}
    assert [c.id for c in _read(first).tool_calls] == ["call_a"] and _read(first).anomalies == []
    assert _read(second).content == "Out of band." and _read(second).tool_calls == []


def test_messages_after_the_last_response_are_read_with_it_and_none_is_left_out():
    pairs = [
        *tool_loop(answer=False),
        ("server", numbered([{"type": "rate_limits.updated", "rate_limits": []}])[0]),
    ]
    (turn,) = session(messages(pairs))
    assert turn.frames[-1].event == "rate_limits.updated" and turn.ended
    assert _types(turn.client)[-1] == "conversation.item.create"  # the output after it
    assert not _read(turn).anomalies
    # a session with no response at all is one turn of everything
    (only,) = session(
        messages([("server", numbered([{"type": "session.created", "session": {}}])[0])])
    )
    assert only.request is None and not only.ended and only.frames[0].event == "session.created"
    assert _read(only).anomalies == [] and _read(only).tool_calls == []


def test_a_response_whose_response_created_never_came_is_a_turn_too():
    events = numbered([*call(), done([item(arguments='{"city": "Paris"}', status="completed")])])
    (turn,) = session(messages([("server", e) for e in events]))
    assert turn.ended and [c.id for c in _read(turn).tool_calls] == ["call_1"]


def test_control_and_binary_messages():
    pairs = messages([("server", e) for e in response(call())])
    pairs.insert(2, WsMessage("server", "ping", b"", pairs[1].t_ns))
    pairs.insert(3, WsMessage("server", "binary", b"\x00\x01", pairs[1].t_ns))
    (turn,) = session(pairs)
    assert all(f.event != "ping" for f in turn.frames)
    result = _read(turn)
    assert [c.id for c in result.tool_calls] == ["call_1"]
    assert "chunk-invalid-json" in {a.kind for a in result.anomalies}  # the binary message


# -- recordings: inspect and the contract -----------------------------------------------------


def test_a_recorded_session_lists_each_response_as_a_stream(tmp_path):
    path = write(tmp_path / "s.jsonl", tool_loop())
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(path)]).output)
    assert [(s["exchange"], s["turn"], s["dialect"], s["framing"]) for s in doc["streams"]] == [
        (1, 1, "openai-realtime", "websocket"),
        (1, 2, "openai-realtime", "websocket"),
    ]
    assert doc["streams"][0]["tool_calls"][0]["id"] == "call_1" and doc["contract"] == []
    assert analyze(path).exchanges[0].model == "gpt-realtime"  # the handshake's ?model=


def _contract(tmp_path, **kw):
    return [
        (f.kind, f.turn, f.stream_turn)
        for f in analyze(write(tmp_path / "s.jsonl", tool_loop(**kw))).contract
    ]


def test_a_call_never_answered_is_tool_result_missing(tmp_path):
    assert _contract(tmp_path, outputs=[]) == [("tool-result-missing", 2, 1)]
    # the session ends without it: the last turn is the one it is about
    assert _contract(tmp_path, outputs=[], answer=False) == [("tool-result-missing", 1, 1)]


def test_a_call_answered_twice_is_tool_result_repeated(tmp_path):
    assert _contract(tmp_path, outputs=["call_1", "call_1"]) == [("tool-result-repeated", 2, 1)]


def test_an_output_naming_no_call_is_a_mismatch_and_an_item_id_says_so(tmp_path):
    assert _contract(tmp_path, outputs=["call_9", "call_1"]) == [
        ("tool-result-id-mismatch", 2, None)
    ]
    found = analyze(write(tmp_path / "i.jsonl", tool_loop(outputs=["item_1"]))).contract
    assert [(f.kind, f.stream_turn) for f in found] == [
        ("tool-result-id-mismatch", 1),
        ("tool-result-missing", 1),
    ]
    assert "item id of call" in found[0].message and "invalid_tool_call_id" in found[0].message


def test_an_answer_sent_while_the_response_still_runs_counts(tmp_path):
    pairs = tool_loop(outputs=[])
    at = next(
        k
        for k, (s, e) in enumerate(pairs)
        if s == "server" and e.get("type") == "response.output_item.done"
    )
    pairs.insert(at + 1, ("client", client_output("call_1")))
    assert analyze(write(tmp_path / "s.jsonl", pairs)).contract == []


def test_each_clients_trap_on_a_small_session(tmp_path):
    # the server leaves response.done's output empty: response-done-only runs nothing
    pairs = [
        (
            s,
            e
            if e.get("type") != "response.done" or e["response"]["id"] != "resp_1"
            else {**e, "response": {**e["response"], "output": []}},
        )
        for s, e in tool_loop()
    ]
    first, _ = analyze(write(tmp_path / "empty.jsonl", pairs)).streams
    assert first.strategies["response-done-only"] == [] and first.differs("response-done-only")
    assert "final-output-mismatch" in {a.kind for a in first.anomalies}
    assert len(first.strategies["every-done"]) == 2  # .done and output_item.done
    assert [c.id for c in first.strategies["item-id-only"]] == ["item_1"]
    assert not first.differs("openai-sdk")


def test_a_turn_cut_by_the_session_end(tmp_path):
    pairs = tool_loop(answer=False, outputs=[])[:-3]  # the response's last events never came
    a = analyze(write(tmp_path / "cut.jsonl", pairs, reason="client-closed"))
    (stream,) = a.streams
    assert stream.ended == "client-closed"
    assert {"response-done-missing", "stream-truncated"} <= {x.kind for x in stream.anomalies}
    assert all(x.severity != "error" for x in stream.anomalies if x.cut_by_client)


def test_the_deltas_of_a_session_as_frames_keep_their_spans():
    (turn,) = session(messages([("server", e) for e in response(call())]))
    spans = [(f.start, f.end) for f in turn.frames]
    assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert turn.frames[1].event == "response.output_item.added"


def test_the_tools_each_response_was_asked_with():
    pairs = tool_loop()
    own = {"type": "response.create", "response": {"tools": [TIME_TOOL]}}
    pairs[-len(response(message_item(0, "x", "item_m2", "resp_2"), rid="resp_2")) - 1] = (
        "client",
        own,
    )
    first, second = session(messages(pairs))
    assert second.request == own
    assert tools_in_force([first, second]) == [[WEATHER_TOOL], [TIME_TOOL]]
    assert tools_in_force(session(messages(tool_loop()))) == [[WEATHER_TOOL], [WEATHER_TOOL]]
    bare = [("client", ASK), ("client", CREATE), *[("server", e) for e in response(call())]]
    assert tools_in_force(session(messages(bare))) == [None]
