"""`streamscope serve` answers a WebSocket upgrade and plays a recorded session back: each
client message gets the server messages recorded after it, in order, at the recorded
timing; a message nothing recorded answers gets the API's error event; the close as
recorded. Clients: the `websockets` package, the openai SDK's Responses WebSocket client
(`client.beta.responses.connect()`), and raw frames where a test needs a broken one."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import random
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

from streamscope.dialects import DIALECTS  # noqa: E402
from streamscope.framing.websocket import encode  # noqa: E402
from streamscope.framing.ws_wire import WireParser  # noqa: E402
from streamscope.playback import playback_transport  # noqa: E402
from streamscope.playback.serve import ServeServer  # noqa: E402
from streamscope.recording.format import Message, RecordingError  # noqa: E402

from . import responses_stream as rs  # noqa: E402
from .fuzzing import _serve as serve_face  # noqa: E402
from .fuzzing import mutate  # noqa: E402
from .ws_session import ACCEPT, HANDSHAKE, HEADER, codex_turns, write_session  # noqa: E402

WAIT = 10  # seconds any one step of a test may take
REALTIME_URL = "https://api.openai.com/v1/realtime?model=gpt-realtime"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@contextlib.contextmanager
def served(*paths: Path, **options) -> Iterator[tuple[ServeServer, list[str]]]:
    said: list[str] = []
    server = ServeServer([str(p) for p in paths], log=said.append, **options)
    server.start()
    try:
        yield server, said
    finally:
        server.stop()


def ws_url(server: ServeServer, path: str = "/v1/responses") -> str:
    return f"ws://127.0.0.1:{server.port}{path}"


def server_messages(messages) -> list[bytes]:
    return [m[1] for m in messages if m[0] == "server"]


async def until(ws, last: set[str]) -> list[bytes]:
    """Messages until one whose type is in `last` (that one included)."""
    got = []
    while True:
        data = await asyncio.wait_for(ws.recv(decode=False), WAIT)
        got.append(data)
        if orjson.loads(data).get("type") in last:
            return got


DONE = {"response.completed", "response.failed", "response.incomplete", "error"}


def timed_session(
    path: Path, frames, url="https://api.openai.com/v1/responses", reason: str | None = "complete"
):
    """A session recording from (ms after the 101, sender, payload[, opcode, fin]) frames;
    `reason` None: no end line (the recorder was killed)."""
    ex, t0 = 1, 1_000_000
    lines = [
        HEADER,
        {"type": "request", "exchange": ex, "t_ns": t0, "method": "GET", "url": url}
        | {"headers": HANDSHAKE, "body": ""},
        {"type": "response", "exchange": ex, "t_ns": t0 + 1000, "status": 101, "headers": ACCEPT},
    ]
    last = t0
    for f in frames:
        ms, sender, data = f[0], f[1], f[2]
        opcode, fin = (f[3], f[4]) if len(f) == 5 else (1, True)
        last = t0 + 1000 + int(ms * 1e6)
        lines.append(Message.of(ex, last, sender, opcode, fin, data).to_json())
    if reason is not None:
        lines.append(
            {"type": "end", "exchange": ex, "t_ns": last + 1000, "reason": reason, "error": None}
        )
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    return path


# -- Responses over a WebSocket (Codex's transport) -----------------------------------


def test_websockets_client_gets_each_turn_as_recorded(tmp_path):
    messages = codex_turns()
    rec = write_session(tmp_path / "codex.jsonl", messages)
    client_sent = [m[1] for m in messages if m[0] == "client"]
    with served(rec) as (server, said):

        async def client():
            async with connect(ws_url(server), max_size=None) as ws:
                first = await ws_send_and_wait(ws, client_sent[0])
                second = await ws_send_and_wait(ws, client_sent[1])
                await ws.close()
                return first, second, ws.close_code, ws.response.headers

        first, second, code, headers = run(client())
    recorded = server_messages(messages)
    assert first + second == recorded
    assert orjson.loads(first[-1])["type"] == "response.completed"
    assert orjson.loads(second[-1])["response"]["previous_response_id"] == rs.RESPONSE_IDS[0]
    assert code == 1000  # the recorded close answered the client's
    assert "sec-websocket-extensions" not in {k.lower() for k in headers}  # deflate refused
    assert any("turn 1 (matched by body)" in line for line in said)
    assert any("turn 2 (matched by body)" in line for line in said)


async def ws_send_and_wait(ws, data: bytes) -> list[bytes]:
    await ws.send(data.decode())
    return await until(ws, DONE)


@pytest.mark.slow
def test_openai_sdk_websocket_client_gets_the_recorded_events(tmp_path):
    """The real openai SDK's Responses WebSocket client: `client.beta.responses.connect()`
    (ws://.../v1/responses from the base URL), `connection.response.create(...)`, events
    parsed as it parses them."""
    messages = codex_turns()
    rec = write_session(tmp_path / "codex.jsonl", messages)
    with served(rec) as (server, said):
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
        got = []
        with client.beta.responses.connect(
            websocket_connection_options={"open_timeout": WAIT, "close_timeout": WAIT}
        ) as connection:
            for sender, data in messages:
                if sender != "client":
                    continue
                body = orjson.loads(data)
                del body["type"]
                connection.response.create(**body)
                while True:
                    event = connection.recv()
                    got.append(event)
                    if event.type in DONE:
                        break
    recorded = [orjson.loads(d) for d in server_messages(messages)]
    assert [e.to_dict() for e in got] == recorded
    assert got[-1].type == "response.completed"
    assert [line for line in said if "->" in line][1:] == [
        "codex.jsonl exchange 1: response.create -> turn 1 (matched by body)",
        "codex.jsonl exchange 1: response.create -> turn 2 (matched by body)",
    ]


def test_turns_are_matched_by_body_not_only_by_order(tmp_path):
    """The second turn asked first gets the second turn's answer: its
    previous_response_id and function_call_output tell it."""
    messages = codex_turns()
    rec = write_session(tmp_path / "codex.jsonl", messages)
    client_sent = [m[1] for m in messages if m[0] == "client"]
    with served(rec) as (server, _):

        async def client():
            async with connect(ws_url(server)) as ws:
                return await ws_send_and_wait(ws, client_sent[1])

        got = run(client())
    completed = orjson.loads(got[-1])
    assert completed["response"]["id"] == rs.RESPONSE_IDS[1]


@pytest.mark.slow
def test_the_recorded_timing_divided_by_speed(tmp_path):
    """Each message at its recorded delay after the client's, over the speed: 200 ms then
    1 s as recorded, a quarter of that at speed 4, no waiting at 0 (upper bounds loose
    for a busy machine, the lower ones exact)."""
    create = orjson.dumps({"type": "response.create", "model": "m", "input": "hi"})
    frames = [
        (10, "client", create),
        (210, "server", orjson.dumps({"type": "response.created", "response": {"id": "r"}})),
        (1010, "server", orjson.dumps({"type": "response.completed", "response": {"id": "r"}})),
    ]
    rec = timed_session(tmp_path / "timed.jsonl", frames)

    def elapsed(speed: float) -> tuple[float, float]:
        with served(rec, speed=speed) as (server, _):

            async def client():
                async with connect(ws_url(server)) as ws:
                    start = time.monotonic()
                    await ws.send(create.decode())
                    await asyncio.wait_for(ws.recv(), WAIT)
                    first = time.monotonic() - start
                    await asyncio.wait_for(ws.recv(), WAIT)
                    return first, time.monotonic() - start

            return run(client())

    first, last = elapsed(1.0)
    assert 0.2 <= first < 0.7 and 1.0 <= last < 1.8
    first, last = elapsed(4.0)
    assert 0.05 <= first < 0.5 and 0.25 <= last < 0.9
    first, last = elapsed(0)
    assert last < 0.2


# -- the Realtime API -------------------------------------------------------------------


def realtime_messages() -> list[tuple[str, bytes]]:
    """A Realtime session: session.created first, a session.update, a user item, a
    response with a call (an audio append sent while it ran), the call's output, a
    second response with text."""

    def ev(n: int, kind: str, **fields) -> bytes:
        return orjson.dumps({"type": kind, "event_id": f"event_{n:03d}", **fields})

    def response(rid: str, status: str) -> dict:
        return {"id": rid, "object": "realtime.response", "status": status, "output": []}

    call = {"id": "item_f1", "type": "function_call", "call_id": "call_rt1", "name": "get_weather"}
    output = {"type": "function_call_output", "call_id": "call_rt1", "output": '{"c":14}'}
    return [
        ("server", ev(1, "session.created", session={"id": "sess_1", "type": "realtime"})),
        (
            "client",
            orjson.dumps({"type": "session.update", "session": {"instructions": "Be brief"}}),
        ),
        ("server", ev(2, "session.updated", session={"id": "sess_1", "instructions": "Be brief"})),
        (
            "client",
            orjson.dumps(
                {
                    "type": "conversation.item.create",
                    "item": {"type": "message", "role": "user", "content": "Paris?"},
                }
            ),
        ),
        ("server", ev(3, "conversation.item.added", item={"id": "item_u1"})),
        ("client", orjson.dumps({"type": "response.create"})),
        ("server", ev(4, "response.created", response=response("resp_1", "in_progress"))),
        ("server", ev(5, "response.output_item.added", response_id="resp_1", item=call)),
        ("client", orjson.dumps({"type": "input_audio_buffer.append", "audio": "AAAA"})),
        (
            "server",
            ev(6, "response.function_call_arguments.delta", item_id="item_f1", delta='{"city"'),
        ),
        (
            "server",
            ev(7, "response.function_call_arguments.done", item_id="item_f1", arguments="{}"),
        ),
        ("server", ev(8, "response.done", response=response("resp_1", "completed"))),
        ("server", ev(9, "rate_limits.updated", rate_limits=[])),
        ("client", orjson.dumps({"type": "conversation.item.create", "item": output})),
        ("server", ev(10, "conversation.item.added", item={"id": "item_o1"})),
        ("client", orjson.dumps({"type": "response.create"})),
        ("server", ev(11, "response.created", response=response("resp_2", "in_progress"))),
        ("server", ev(12, "response.output_text.delta", response_id="resp_2", delta="14 °C")),
        ("server", ev(13, "response.done", response=response("resp_2", "completed"))),
    ]


def test_a_realtime_session_plays_back_to_websockets(tmp_path):
    messages = realtime_messages()
    rec = write_session(tmp_path / "realtime.jsonl", messages, url=REALTIME_URL)
    sent = [m[1] for m in messages if m[0] == "client"]
    with served(rec) as (server, said):

        async def client():
            got = []
            url = ws_url(server, "/v1/realtime?model=gpt-realtime")
            async with connect(url, subprotocols=None) as ws:
                got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))  # greeting
                for data in sent:
                    if b"input_audio_buffer" in data:
                        continue  # not sent live: the response must not wait for it
                    await ws.send(data.decode())
                    want = {"session.update": 1, "conversation.item.create": 1}
                    kind = orjson.loads(data)["type"]
                    if kind in want:
                        got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))
                    else:
                        got += await until(ws, {"response.done"})
                        if b"resp_1" in got[-1]:
                            got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))
                await ws.close()
                return got, ws.close_code

        got, code = run(client())
    assert got == server_messages(messages)
    assert code == 1000
    assert any("(WebSocket) -> realtime.jsonl exchange 1 (2 turns)" in line for line in said)


@pytest.mark.skipif(
    "openai-realtime" not in DIALECTS,
    reason="the openai-realtime dialect tells a Realtime session and when its turns end",
)
def test_a_realtime_answer_between_responses_waits_for_its_message(tmp_path):
    """After response.done the turn is over: the item the client sends next is answered
    when it comes, not before; the audio append recorded mid-response was not waited for."""
    messages = realtime_messages()
    rec = write_session(tmp_path / "rt.jsonl", messages, url=REALTIME_URL)
    sent = [m[1] for m in messages if m[0] == "client"]
    with served(rec) as (server, _):

        async def client():
            async with connect(ws_url(server, "/v1/realtime")) as ws:
                await asyncio.wait_for(ws.recv(), WAIT)  # session.created
                for data in sent[:3]:  # session.update, the user item, response.create
                    await ws.send(data.decode())
                got = await until(ws, {"rate_limits.updated"})
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(ws.recv(), 0.3)  # nothing until the item comes
                await ws.send(sent[4].decode())  # the call's output
                return got, await asyncio.wait_for(ws.recv(decode=False), WAIT)

        got, answer = run(client())
    assert orjson.loads(got[-2])["type"] == "response.done"
    assert answer == messages[14][1]  # conversation.item.added, for the output


# -- what the recording cannot answer ---------------------------------------------------


def test_a_message_the_recording_cannot_answer_gets_an_error_event(tmp_path):
    messages = codex_turns()
    rec = write_session(tmp_path / "codex.jsonl", messages)
    sent = [m[1] for m in messages if m[0] == "client"]
    steer = orjson.dumps({"type": "response.steer", "input": [], "previous_response_id": "x"})
    with served(rec) as (server, said):

        async def client():
            async with connect(ws_url(server)) as ws:
                answers = []
                for odd in (steer, b"not json", b'{"type": 5}'):
                    await ws.send(odd.decode())
                    answers.append(orjson.loads(await asyncio.wait_for(ws.recv(), WAIT)))
                after = await ws_send_and_wait(ws, sent[0])  # the session goes on
                return answers, after

        answers, after = run(client())
    for error in answers:
        assert error["type"] == "error" and error["status"] == 400
        assert error["error"]["code"] == "unmatched_message"
        assert error["error"]["message"].startswith("streamscope serve: no recorded message")
    assert '"response.steer"' in answers[0]["error"]["message"]
    assert after == server_messages(messages)[: len(after)]
    logged = [line for line in said if "error event" in line]
    assert len(logged) == 3
    assert logged[0] == (
        "codex.jsonl exchange 1: client message 1: the recording holds no client message "
        'of type "response.steer": answered with an error event'
    )


def test_strict_refuses_a_turn_that_differs_and_says_how(tmp_path):
    messages = codex_turns()
    rec = write_session(tmp_path / "codex.jsonl", messages)
    other = orjson.dumps({"type": "response.create", "model": rs.MODEL, "input": "other"})
    with served(rec, strict=True) as (server, said):

        async def client():
            async with connect(ws_url(server)) as ws:
                await ws.send(other.decode())
                return orjson.loads(await asyncio.wait_for(ws.recv(), WAIT))

        error = run(client())
    assert error["type"] == "error"
    message = error["error"]["message"]
    assert "input differs from codex.jsonl exchange 1 turn 1" in message
    assert '"other"' in message


@pytest.mark.skipif(
    "openai-realtime" not in DIALECTS,
    reason="the openai-realtime dialect tells a Realtime session (without it, the first "
    "server events are taken for the Responses API's)",
)
def test_a_realtime_message_nothing_answers_gets_the_realtime_error_event(tmp_path):
    rec = write_session(tmp_path / "rt.jsonl", realtime_messages(), url=REALTIME_URL)
    with served(rec) as (server, _):

        async def client():
            async with connect(ws_url(server, "/v1/realtime")) as ws:
                await asyncio.wait_for(ws.recv(), WAIT)  # session.created
                asked = {"type": "output_audio_buffer.clear", "event_id": "evt_client_7"}
                await ws.send(orjson.dumps(asked).decode())
                return orjson.loads(await asyncio.wait_for(ws.recv(), WAIT))

        error = run(client())
    assert error["type"] == "error" and isinstance(error["event_id"], str)
    assert error["error"]["event_id"] == "evt_client_7"  # the client event it answers
    assert error["error"]["type"] == "invalid_request_error"


# -- the connection's ends -------------------------------------------------------------


def test_a_client_that_leaves_mid_session_stops_its_replay(tmp_path):
    create = orjson.dumps({"type": "response.create", "model": "m", "input": "hi"})
    frames = [(0, "client", create)]
    frames += [
        (100 * k, "server", orjson.dumps({"type": "response.output_text.delta", "n": k}))
        for k in range(1, 40)
    ]
    frames.append((4000, "server", orjson.dumps({"type": "response.completed"})))
    rec = timed_session(tmp_path / "long.jsonl", frames)
    with served(rec, speed=1.0) as (server, said):

        async def leave():
            async with connect(ws_url(server)) as ws:
                await ws.send(create.decode())
                await asyncio.wait_for(ws.recv(), WAIT)
                ws.transport.abort()  # gone, with no close frame

        run(leave())
        deadline = time.monotonic() + WAIT
        while not any("session ended" in line for line in said):
            assert time.monotonic() < deadline, said
            time.sleep(0.02)
        ended = next(line for line in said if "session ended" in line)
        assert ended == (
            "long.jsonl exchange 1: session ended: the client went away with no close frame "
            "after 1 message"
        )

        async def again():  # the server serves the next client as the first
            async with connect(ws_url(server)) as ws:
                await ws.send(create.decode())
                return orjson.loads(await asyncio.wait_for(ws.recv(), WAIT))

        assert run(again())["n"] == 1


@pytest.mark.parametrize("reason", ["upstream-error", None], ids=["upstream-error", "no-end"])
def test_a_session_the_upstream_cut_is_cut_as_recorded(tmp_path, reason):
    """And one that never ended (its recorder killed): cut there too, not left open."""
    create = orjson.dumps({"type": "response.create", "model": "m", "input": "hi"})
    delta = orjson.dumps({"type": "response.output_text.delta", "delta": "half"})
    rec = timed_session(
        tmp_path / "cut.jsonl",
        [(1, "client", create), (2, "server", delta)],
        reason=reason,
    )
    with served(rec) as (server, said):

        async def client():
            async with connect(ws_url(server)) as ws:
                await ws.send(create.decode())
                got = await asyncio.wait_for(ws.recv(decode=False), WAIT)
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), WAIT)
                return got, closed.value.rcvd

        got, close_frame = run(client())
        unended = "cut.jsonl: exchange 1 never ended (no end line): served cut after its last read"
        assert server.library.notes == ([unended] if reason is None else [])
    assert got == delta
    assert close_frame is None  # no close frame: the connection ended, as the upstream's did


def test_the_servers_own_close_is_sent_as_recorded(tmp_path):
    create = orjson.dumps({"type": "response.create", "model": "m", "input": "hi"})
    done = orjson.dumps({"type": "response.completed", "response": {"id": "r"}})
    bye = struct.pack(">H", 4000) + b"idle too long"
    rec = timed_session(
        tmp_path / "bye.jsonl",
        [(1, "client", create), (2, "server", done), (3, "server", bye, 8, True)],
    )
    with served(rec) as (server, _):

        async def client():
            async with connect(ws_url(server)) as ws:
                await ws.send(create.decode())
                got = await asyncio.wait_for(ws.recv(decode=False), WAIT)
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), WAIT)
                return got, ws.close_code, ws.close_reason

        assert run(client()) == (done, 4000, "idle too long")


def test_a_session_open_when_serve_stops_is_told_so(tmp_path):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    server = ServeServer([str(rec)])
    server.start()
    try:

        async def client():
            async with connect(ws_url(server)) as ws:
                await asyncio.to_thread(server.stop)
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), WAIT)
                return ws.close_code, ws.close_reason

        assert run(client()) == (1001, "serve stopped")
        assert [s.label for s in server.player.played if s] == ["codex.jsonl exchange 1"]
    finally:
        server.stop()


def test_a_ping_gets_its_pong(tmp_path):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    with served(rec) as (server, _):

        async def client():
            async with connect(ws_url(server)) as ws:
                waiter = await ws.ping(b"are you there")
                return await asyncio.wait_for(waiter, WAIT)

        assert run(client()) is not None  # (the latency, once the pong came)


# -- handshakes -----------------------------------------------------------------------


def raw_handshake(port: int, path: str = "/v1/responses", **headers: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    fields = {
        "Host": f"127.0.0.1:{port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits",
    }
    fields.update({k.replace("_", "-"): v for k, v in headers.items()})
    head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items() if v)
    sock.sendall(head.encode() + b"\r\n")
    return sock


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        got = sock.recv(65536)
        if not got:
            break
        data += got
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def read_all(sock: socket.socket, first: bytes = b"") -> bytes:
    data = first
    with contextlib.suppress(OSError):
        while True:
            got = sock.recv(65536)
            if not got:
                break
            data += got
    return data


@pytest.mark.parametrize(
    "headers, status, says",
    [
        ({"Sec-WebSocket-Version": "8"}, 426, "Sec-WebSocket-Version must be 13"),
        ({"Sec-WebSocket-Key": "short"}, 400, "Sec-WebSocket-Key is not 16 bytes"),
        ({"Connection": "keep-alive, Upgrade", "Upgrade": "WebSocket"}, 101, None),
    ],
)
def test_a_handshake_is_checked(tmp_path, headers, status, says):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    with served(rec) as (server, _):
        sock = raw_handshake(server.port, **headers)
        head, rest = read_head(sock)
        body = read_all(sock, rest) if status != 101 else b""
        sock.close()
    assert head.startswith(f"HTTP/1.1 {status} ".encode())
    if says is not None:
        error = orjson.loads(body)["error"]
        assert says in error["message"] and error["type"] == "invalid_handshake"
    if status == 426:
        assert b"sec-websocket-version: 13" in head.lower()
    if status == 101:
        assert b"sec-websocket-extensions" not in head.lower()  # deflate offered, refused


def test_a_recorded_subprotocol_is_chosen_again_on_a_path_with_another_prefix(tmp_path):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    lines = rec.read_bytes().splitlines()
    response = orjson.loads(lines[2])
    response["headers"].append(["sec-websocket-protocol", "realtime"])
    lines[2] = orjson.dumps(response)
    rec.write_bytes(b"\n".join(lines) + b"\n")
    with served(rec) as (server, _):

        async def client(offered):
            async with connect(ws_url(server, "/responses"), subprotocols=offered) as ws:
                return ws.subprotocol

        assert run(client(["other", "realtime"])) == "realtime"
        assert run(client(None)) is None  # not offered: none chosen


def test_a_path_no_session_was_recorded_on_is_refused(tmp_path):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    with served(rec) as (server, said):
        sock = raw_handshake(server.port, "/v1/realtime")
        head, rest = read_head(sock)
        body = read_all(sock, rest)
        sock.close()
    assert head.startswith(b"HTTP/1.1 404 ")
    message = orjson.loads(body)["error"]["message"]
    assert message == (
        "streamscope serve: no recorded WebSocket session on /v1/realtime "
        "(the files hold sessions on: /v1/responses)"
    )


def frames_back(sock: socket.socket, first: bytes):
    parser = WireParser(client=False)
    return parser.feed(read_all(sock, first))


@pytest.mark.parametrize(
    "frame, code, says",
    [
        (encode(1, b'{"type":"x"}'), 1002, b"unmasked"),  # a client frame must be masked
        (bytes([0xC1, 0x80 | 2]) + b"abcd" + b"xy", 1002, b"RSV1"),  # compressed: not agreed
        (encode(1, b"\xff\xfe", mask=b"abcd"), 1007, b"UTF-8"),
        (encode(9, b"p" * 126, mask=b"abcd"), 1002, b"control frame"),
    ],
)
def test_a_client_that_breaks_the_protocol_is_closed_with_why(tmp_path, frame, code, says):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    with served(rec) as (server, said):
        sock = raw_handshake(server.port)
        head, rest = read_head(sock)
        assert head.startswith(b"HTTP/1.1 101 ")
        sock.sendall(frame)
        back = frames_back(sock, rest)
        sock.close()
    close = back[-1]
    assert close.opcode == 8
    assert struct.unpack(">H", close.payload[:2])[0] == code
    assert says in close.payload


# -- hostile recordings ----------------------------------------------------------------


@pytest.mark.slow
def test_a_huge_recorded_message_is_sent_whole(tmp_path):
    create = orjson.dumps({"type": "response.create", "model": "m", "input": "hi"})
    huge = orjson.dumps({"type": "response.output_text.delta", "delta": "x" * (20 << 20)})
    done = orjson.dumps({"type": "response.completed"})
    rec = timed_session(
        tmp_path / "huge.jsonl", [(1, "client", create), (2, "server", huge), (3, "server", done)]
    )
    with served(rec) as (server, _):

        async def client():
            async with connect(ws_url(server), max_size=None) as ws:
                return await ws_send_and_wait(ws, create)

        assert run(client()) == [huge, done]


def test_hostile_payloads_in_a_recording_never_stop_serve(tmp_path):
    """Any JSON type where a type is expected, text that is no JSON, binary and reserved
    frames, a close no peer may send, a long control frame: left out and said where they
    cannot be sent, and the session still plays."""
    create = orjson.dumps({"type": "response.create", "model": 5, "input": {"x": None}})
    frames = [
        (1, "client", b'{"type": ["not", "a", "string"]}'),
        (2, "server", b"not json at all"),
        (3, "client", b"\x00\x01binary", 2, True),
        (4, "server", b"\x02\x03", 2, True),
        (5, "server", b"reserved", 3, True),
        (6, "server", b"p" * 200, 9, True),
        (7, "client", create),
        (8, "server", b'{"type": {"nested": true}, "response": 7}'),
        (9, "server", b'{"type": "response.completed", "response": null}'),
        (10, "server", struct.pack(">H", 1005), 8, True),
        (11, "server", b'{"type": "after the close"}'),
    ]
    rec = timed_session(tmp_path / "hostile.jsonl", frames)
    with served(rec) as (server, said):
        notes = server.library.notes

        async def client():
            async with connect(ws_url(server)) as ws:
                got = []
                await ws.send('{"type": ["not", "a", "string"]}')
                got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))
                await ws.send(b"\x00\x01binary")
                got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))
                await ws.send(create.decode())
                got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))
                got.append(await asyncio.wait_for(ws.recv(decode=False), WAIT))
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), WAIT)
                return got, ws.close_code

        got, code = run(client())
    assert got == [
        b"not json at all",
        b"\x02\x03",
        b'{"type": {"nested": true}, "response": 7}',
        b'{"type": "response.completed", "response": null}',
    ]
    assert code == 1005  # a close with no code: 1005 itself is never sent
    assert len(notes) == 4, notes
    assert any("reserved opcode 3" in n for n in notes)
    assert any("over 125 bytes" in n for n in notes)
    assert any("its code 1005 is not one a peer may send" in n for n in notes)
    assert any("after its close frame" in n for n in notes)


@pytest.mark.parametrize(
    "field, value",
    [
        ("fin", "yes"),
        ("from", "proxy"),
        ("from", ["client"]),
        ("opcode", "shout"),
        ("opcode", {"text": 1}),
        ("opcode", [1]),
        ("opcode", 1.0),
        ("data", 5),
        ("t_ns", "soon"),
    ],
)
def test_a_message_line_of_the_wrong_type_is_refused_in_one_line(tmp_path, field, value):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    lines = rec.read_bytes().splitlines()
    bad = orjson.loads(lines[4])
    bad[field] = value
    lines[4] = orjson.dumps(bad)
    rec.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(RecordingError) as error:
        ServeServer([str(rec)])
    said = str(error.value)
    assert "\n" not in said and "codex.jsonl" in said and "line 5" in said


def test_the_http_transport_says_it_cannot_carry_a_websocket(tmp_path):
    rec = write_session(tmp_path / "codex.jsonl", codex_turns())
    with pytest.raises(RecordingError) as error:
        playback_transport(rec)
    assert "an HTTP transport cannot carry a WebSocket" in str(error.value)
    assert "streamscope serve" in str(error.value)


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(which=st.sampled_from(["codex", "realtime"]), seed=st.integers(0, 2**32 - 1))
def test_a_mutated_session_is_played_or_refused_in_one_line(tmp_path_factory, which, seed):
    """Truncations, splices, flipped bytes, values of the wrong type or nested deep, in a
    session's lines: serve loads it and every recorded message is asked again, or it is
    refused with one RecordingError (anything else fails the test)."""
    folder = tmp_path_factory.mktemp("ws-fuzz")
    if which == "codex":
        base = write_session(folder / "base.jsonl", codex_turns())
    else:
        base = write_session(folder / "base.jsonl", realtime_messages(), url=REALTIME_URL)
    rng = random.Random(seed)
    data = base.read_bytes()
    for _ in range(rng.randint(1, 3)):
        data = mutate(data, rng)
    path = folder / "mutated.jsonl"
    path.write_bytes(data)
    try:
        serve_face(str(path))
    except RecordingError as e:
        assert "\n" not in str(e)
