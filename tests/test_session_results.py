"""What a WebSocket session's client messages sent for each response's calls: the result
(which client message, which input item), and the tools' run time (from the response's
last server message to that client message), in inspect, --json and the replay."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.calls import Call
from streamscope.core.history import Entry, Result
from streamscope.core.results import Carried, ClientMessage, session_answer
from streamscope.tui.app import ReplayApp
from streamscope.tui.screens import StreamScreen
from streamscope.tui.widgets import FrameDetail

from . import responses_stream as rs
from .dialects.realtime import sessions as realtime
from .dialects.realtime.events import call, client_output, message_item, response
from .session_samples import codex_after_http
from .test_tui import settle, text
from .test_tui_session import analysed
from .ws_session import create, data_of, write_session

MS = 1_000_000  # ns
SAMPLES = Path(__file__).resolve().parent.parent / "recordings"


def inspect(*args: str) -> str:
    result = CliRunner().invoke(main, ["inspect", *args])
    assert result.exit_code == 0, result.output
    return result.output


def streams(path: str) -> list[dict]:
    return orjson.loads(inspect("--json", path))["streams"]


def codex(path: Path, second_input: list, previous: bool = True, run_ms: int = 750) -> str:
    """Codex's two responses on one socket, at explicit times: response 1's events 5 ms
    apart from 10 ms, then, `run_ms` after its last, the response.create of response 2
    (its `input`: `second_input`), whose events follow 5 ms apart."""
    first = data_of(rs.function_call_events())
    msgs = [("client", create(model=rs.MODEL, input=rs.QUESTION, tools=rs.TOOLS))]
    times = [5 * MS]
    msgs += [("server", d) for d in first]
    times += [(10 + 5 * k) * MS for k in range(len(first))]
    more = {"previous_response_id": rs.RESPONSE_IDS[0]} if previous else {}
    msgs.append(("client", create(model=rs.MODEL, input=second_input, tools=rs.TOOLS, **more)))
    times.append(times[-1] + run_ms * MS)
    second = data_of(rs.answer_events(rs.RESPONSE_IDS[0] if previous else None))
    msgs += [("server", d) for d in second]
    times += [times[-1] + 5 * (k + 1) * MS for k in range(len(second))]
    return str(write_session(path, msgs, times=times))


OUTPUT = {"type": "function_call_output", "call_id": rs.CALL_ID, "output": rs.OUTPUT}
# the second response.create: after the handshake's nothing, response.create 1, the events
ASKED_AT = 2 + len(data_of(rs.function_call_events()))


@pytest.fixture(scope="module")
def codex_loop(tmp_path_factory) -> str:
    return codex(tmp_path_factory.mktemp("c") / "codex.jsonl", [OUTPUT])


def test_a_codex_response_shows_the_result_the_next_response_create_sent(codex_loop):
    out = inspect(codex_loop)
    said = out.split("Tool results", 1)[1]
    where = f"exchange 1, client message {ASKED_AT} (response 2's request)"
    assert said.startswith(f" sent by {where} · tool run time 750 ms\n")
    row = said.splitlines()[1].split()
    assert row[:6] == ["1", '"get_weather"', "is_error", "none", "client", "message"]
    assert " ".join(row[6:]) == f"{ASKED_AT}, input item 0 {rs.OUTPUT}"
    assert out.count("Tool results") == 1  # response 2 made no call


def test_a_codex_responses_result_in_json(codex_loop):
    first, second = streams(codex_loop)
    assert first["continued_by"] == {
        "exchange": 1,
        "client_message": ASKED_AT,
        "turn": 2,
        "tool_time_ms": 750.0,
        "timing": "recorded",
    }
    assert first["tool_calls"][0]["result"] == {
        "exchange": 1,
        "at_message": 0,
        "content": rs.OUTPUT,
        "is_error": None,
        "error_field": None,
        "client_message": ASKED_AT,
    }
    assert second["continued_by"] is None and second["tool_calls"] == []


def test_a_response_create_that_sends_the_history_again_answers_after_the_call(tmp_path):
    path = codex(tmp_path / "again.jsonl", rs.follow_up(), previous=False, run_ms=40)
    first = streams(path)[0]
    assert first["continued_by"]["tool_time_ms"] == 40.0
    got = first["tool_calls"][0]["result"]
    assert (got["at_message"], got["content"]) == (2, rs.OUTPUT)  # after the call sent back


def test_a_response_create_without_the_output_answers_nothing(tmp_path):
    path = codex(tmp_path / "dropped.jsonl", [{"role": "user", "content": "go on"}])
    out = inspect(path)
    assert (
        "Tool results: none (no later client message of the session answers these calls); "
        "tool run time unknown"
    ) in out
    first = streams(path)[0]
    assert first["continued_by"] is None and first["tool_calls"][0]["result"] is None


def _two_calls() -> list[dict]:
    return response(call(0), call(1, "item_2", "call_2", "get_time", ('{"tz": ', '"UTC"}')))


def _realtime(path: Path, gaps: tuple[int, int]) -> str:
    """A Realtime session: two calls, then each output `gaps` ms after response.done (a
    negative gap: sent before it), then response.create and the answer, 1 ms apart."""
    two = _two_calls()
    pairs = [("client", realtime.SESSION_UPDATE), ("client", realtime.ASK)]
    pairs += [("client", realtime.CREATE), *(("server", e) for e in two)]
    times = [k * MS for k in range(1, len(pairs) + 1)]
    done = times[-1]
    outputs = [("client", client_output("call_1", "18 C")), ("client", client_output("call_2"))]
    pairs += outputs
    times += [done + g * MS for g in gaps]
    answer = response(message_item(0, "18 degrees at noon.", "item_m2", "resp_2"), rid="resp_2")
    pairs += [("client", realtime.CREATE), *(("server", e) for e in answer)]
    times += [max(times) + k * MS for k in range(1, len(answer) + 2)]
    order = sorted(range(len(pairs)), key=lambda i: times[i])  # (an output before done)
    return str(realtime.write(path, [pairs[i] for i in order], times=[times[i] for i in order]))


def test_realtime_outputs_are_each_their_own_client_message(tmp_path):
    path = _realtime(tmp_path / "rt.jsonl", (40, 90))
    first = streams(path)[0]
    n = 3 + len(_two_calls())  # session.update, the question, response.create, response 1
    assert first["continued_by"] == {
        "exchange": 1,
        "client_message": n + 1,
        "turn": 2,
        "tool_time_ms": 40.0,
        "timing": "recorded",
    }
    got = [c["result"] for c in first["tool_calls"]]
    assert [(r["client_message"], r["content"]) for r in got] == [
        (n + 1, "18 C"),
        (n + 2, '{"temp": 18}'),
    ]
    out = inspect(path)
    assert f"client message {n + 1} (before response 2) · tool run time 40 ms" in out
    assert f'"get_time"     is_error none  client message {n + 2}  {{"temp": 18}}' in out


def test_an_output_sent_before_the_response_ended_says_so(tmp_path):
    first = streams(_realtime(tmp_path / "early.jsonl", (-5, 30)))[0]
    assert first["continued_by"]["tool_time_ms"] == -5.0
    assert all(c["result"] is not None for c in first["tool_calls"])


# -- the samples --------------------------------------------------------------------------


def _messages(path: Path) -> list[dict]:
    """The sample's messages, one frame each (as the samples are written), in order."""
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return [d for d in lines if d["type"] == "message"]


def _gap_ms(path: Path, number: int, end: str) -> float:
    """From the last response's final event (`end`) before client message `number` to it,
    in ms (a session event after the response, as Realtime's rate_limits.updated, is not
    the response's)."""
    msgs = _messages(path)[:number]
    last = next(m for m in reversed(msgs) if m["from"] == "server" and f'"{end}"' in m["data"])
    return round((msgs[-1]["t_ns"] - last["t_ns"]) / 1e6, 3)


def test_the_codex_sample_shows_the_shells_output_and_run_time():
    path = SAMPLES / "codex-websocket.jsonl"
    warm, called, answered = streams(str(path))
    assert warm["continued_by"] is None and answered["continued_by"] is None
    by = called["continued_by"]
    asked = orjson.loads(_messages(path)[by["client_message"] - 1]["data"])
    assert asked["type"] == "response.create" and by["turn"] == 3
    assert asked["input"][0]["call_id"] == called["tool_calls"][0]["id"]
    assert called["tool_calls"][0]["result"]["content"] == "README.md\npyproject.toml\nsrc\n"
    assert by["tool_time_ms"] == _gap_ms(path, by["client_message"], "response.completed") > 0


def test_the_realtime_sample_shows_both_outputs():
    path = SAMPLES / "realtime-two-calls.jsonl"
    called, answered = streams(str(path))
    by = called["continued_by"]
    assert by["turn"] == 2 and answered["continued_by"] is None
    msgs = _messages(path)
    for c in called["tool_calls"]:
        sent = orjson.loads(msgs[c["result"]["client_message"] - 1]["data"])
        assert sent["type"] == "conversation.item.create"
        assert sent["item"]["call_id"] == c["id"]
        assert sent["item"]["output"] == c["result"]["content"]
    assert by["client_message"] == called["tool_calls"][0]["result"]["client_message"]
    assert by["tool_time_ms"] == _gap_ms(path, by["client_message"], "response.done") > 0


# -- the replay ---------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_session_responses_last_frame_shows_its_tool_results(tmp_path):
    path = codex_after_http(tmp_path)  # exchange 3: Codex's session, its call answered
    app = ReplayApp(str(path), exchange=3, response=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, StreamScreen)
        await analysed(pilot)
        await pilot.press("end")
        await pilot.pause()
        detail = " ".join(text(app.screen.query_one(FrameDetail)).split())
        assert f"Tool results sent by exchange 3, client message {ASKED_AT}" in detail
        assert "(response 2's request) tool run time 1.0 ms" in detail
        assert f'"get_weather" is_error none client message {ASKED_AT}, input item 0' in detail
        assert rs.OUTPUT in detail


# -- the rule itself (core/results.session_answer), at explicit times ---------------------


def _output(number: int, t_ms: int, *call_ids: object, opens: bool = False) -> ClientMessage:
    entries = [
        Entry(0, "tool", cid, k, Result(cid, f"out {cid}")) for k, cid in enumerate(call_ids)
    ]
    return ClientMessage(number, t_ms * MS, Carried(entries, "", None, opens))


CALLS = [Call(0, 0, "call_a", "function", "a"), Call(0, 1, "call_b", "function", "b")]


def test_only_messages_after_the_response_began_and_before_the_next_one_asked_answer():
    messages = [
        _output(1, 5, "call_a"),  # before the response began (10 ms): another's
        _output(3, 140, "call_b"),  # 40 ms after its end (100 ms)
        _output(4, 150, opens=True),  # the next response asked for: the client is done
        _output(6, 170, "call_a"),  # too late: not this response's answer
    ]
    answer = session_answer(CALLS, 10 * MS, 100 * MS, messages, 7)
    assert answer is not None
    assert (answer.exchange, answer.message, answer.gap_ns) == (7, 3, 40 * MS)
    assert answer.results[0] is None
    got = answer.results[1]
    assert got is not None and (got.message, got.content, got.words()) == (
        3,
        "out call_b",
        "client message 3",
    )
    assert session_answer(CALLS, 10 * MS, 100 * MS, messages[2:], 7) is None


def test_an_object_for_a_call_id_is_a_finding_and_control_characters_stay_inert(tmp_path):
    output = [{"type": "input_text", "text": "\x1b[31mred\x1b[0m\nline 2"}]
    sent = [
        {"type": "function_call_output", "call_id": rs.CALL_ID, "output": output},
        {"type": "function_call_output", "call_id": {"x": 1}, "output": None},
        {"type": "function_call", "call_id": [1], "name": {}, "arguments": "{}"},
    ]
    out = inspect(codex(tmp_path / "hostile.jsonl", sent))
    assert "\x1b" not in out
    assert "client message" in out and "\\x1b[31mred\\x1b[0m↵line 2" in out
    assert 'tool-result-id-mismatch  response 2 sends a function_call_output for {"x": 1}' in out


# -- the tools in force for a session's response ------------------------------------------


def test_a_session_response_lists_its_requests_tools():
    """Codex's response.create `tools`; Realtime's session.update, which opens no
    response: in text and JSON alike, as an HTTP request's."""
    for name, tools in [
        ("codex-websocket.jsonl", ["shell"]),
        ("realtime-two-calls.jsonl", ["get_weather", "get_local_time"]),
    ]:
        path = str(SAMPLES / name)
        out = inspect(path)
        shown = ", ".join(f'"{t}"' for t in tools)
        heads = out.split("\nExchange 1, response ")[1:]
        assert heads and all(f"request tools ({len(tools)}): {shown}\n" in h for h in heads)
        for s in streams(path):
            assert [t["name"] for t in s["request_tools"]] == tools


def test_a_codex_sessions_additional_tools_are_its_namespaces(tmp_path):
    from .test_tool_results import CODEX_TOOLS

    msgs = [("client", create(model=rs.MODEL, input=[CODEX_TOOLS, *rs.QUESTION], tools=[]))]
    msgs += [("server", d) for d in data_of(rs.answer_events())]
    path = str(write_session(tmp_path / "ns.jsonl", msgs))
    assert (
        'request tools (3, in 1 namespace): "functions" namespace (input item 0) '
        '["exec", "exec_command"], "web_search" (input item 0)'
    ) in inspect(path)
    (s,) = streams(path)
    assert [(t["name"], t["within"]) for t in s["request_tools"]] == [
        ("functions", []),
        ("exec", ["functions"]),
        ("exec_command", ["functions"]),
        ("web_search", []),
    ]
