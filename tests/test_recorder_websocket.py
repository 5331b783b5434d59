"""The recorder relays a WebSocket upgrade untouched and records each frame: the
handshake, messages both ways (fragmented, compressed, control), the close, and what
breaks the protocol, with a true end reason. The upstream is a `websockets` server on
127.0.0.1; the client the `websockets` package (as the openai SDK's realtime and
Responses clients use it) or raw frames where a test needs a broken one."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import connect  # noqa: E402
from websockets.asyncio.server import serve  # noqa: E402

from streamscope.analysis import analyze  # noqa: E402
from streamscope.framing.websocket import encode  # noqa: E402
from streamscope.record.proxy import ProxyServer, Upstream  # noqa: E402
from streamscope.recording import RecordingWriter  # noqa: E402

KEY = "sk-proj-wsTESTKEY0123456789abcdefghij"


class Upstream_:
    """A websockets server in a thread of its own: `handler(ws)` per connection; what
    it received is kept, per connection, in `seen`."""

    def __init__(self, handler: Callable, compression: str | None = "deflate") -> None:
        self.handler, self.compression = handler, compression
        self.seen: list[list[str | bytes]] = []
        self.headers: list[dict[str, str]] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._main())

    async def _main(self) -> None:
        async def one(ws) -> None:
            self.headers.append(dict(ws.request.headers))
            self.seen.append([])
            await self.handler(ws, self.seen[-1])

        self.stop = self.loop.create_future()
        async with serve(one, "127.0.0.1", 0, compression=self.compression, max_size=None) as s:
            self.port = s.sockets[0].getsockname()[1]
            self.ready.set()
            await self.stop

    def __enter__(self) -> Upstream_:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.stop.set_result, None)
        self.thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def echo_twice(ws, seen) -> None:
    async for message in ws:
        seen.append(message)
        await ws.send(message)
        await ws.send(json.dumps({"type": "echo", "key": KEY}))


@contextmanager
def recorder(tmp_path, upstream_url: str) -> Iterator[tuple[ProxyServer, str]]:
    path = str(tmp_path / "rec.jsonl")
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse(upstream_url), writer, timeout=10)
        server.start()
        try:
            yield server, path
        finally:
            server.stop()


def lines(path: str) -> list[dict]:
    with open(path, "rb") as f:
        return [json.loads(line) for line in f if line.endswith(b"\n")][1:]


def messages(path: str) -> list[dict]:
    return [d for d in lines(path) if d["type"] == "message"]


def payload(d: dict) -> bytes:
    return d["data"].encode() if "data" in d else base64.b64decode(d["data_b64"])


def run(coro) -> object:
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_a_session_is_relayed_and_recorded_frame_by_frame(tmp_path):
    with Upstream_(echo_twice) as up, recorder(tmp_path, up.url) as (server, path):

        async def client() -> list:
            got = []
            headers = {
                "Authorization": f"Bearer {KEY}",
                "OpenAI-Beta": "responses_websockets=2026-02-06",
            }
            async with connect(
                f"ws://127.0.0.1:{server.port}/v1/responses", additional_headers=headers
            ) as ws:
                await ws.send('{"type":"response.create","model":"m"}')
                got += [await ws.recv(), await ws.recv()]
                await ws.send(b"\x00\x01binary")
                got += [await ws.recv(), await ws.recv()]
                await ws.ping(b"are you there")
                await ws.close(1000, "bye")
            return got

        got = run(client())
    assert got[0] == '{"type":"response.create","model":"m"}'
    assert json.loads(got[1])["key"] == KEY  # the client is given every byte, unmasked
    assert up.seen[0] == ['{"type":"response.create","model":"m"}', b"\x00\x01binary"]
    assert up.headers[0]["openai-beta"] == "responses_websockets=2026-02-06"
    ls = lines(path)
    request, response = ls[0], ls[1]
    assert (request["method"], response["status"]) == ("GET", 101)
    assert dict(request["headers"])["authorization"] == "Bearer [REDACTED]"
    ms = messages(path)
    said = [(m["from"], m["opcode"]) for m in ms]
    assert said[:3] == [("client", "text"), ("server", "text"), ("server", "text")]
    assert ("client", "binary") in said and ("client", "ping") in said
    assert ("server", "pong") in said
    assert ("client", "close") in said and ("server", "close") in said
    close = next(m for m in ms if m["opcode"] == "close" and m["from"] == "client")
    assert struct.unpack(">H", payload(close)[:2])[0] == 1000 and payload(close)[2:] == b"bye"
    raw = Path(path).read_bytes()
    assert KEY.encode() not in raw  # echoed in a message: masked like a body's
    assert any(m.get("compressed") for m in ms)  # permessage-deflate, inflated for reading
    assert ls[-1]["type"] == "end" and ls[-1]["reason"] == "complete"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


def test_without_compression_the_frames_are_plain(tmp_path):
    with (
        Upstream_(echo_twice, compression=None) as up,
        recorder(tmp_path, up.url) as (server, path),
    ):

        async def client() -> None:
            async with connect(f"ws://127.0.0.1:{server.port}/v1/realtime", compression=None) as ws:
                await ws.send("hello")
                await ws.recv()
                await ws.recv()

        run(client())
    ms = messages(path)
    assert not any(m.get("compressed") for m in ms)
    assert [payload(m) for m in ms if m["opcode"] == "text"][0] == b"hello"


def test_a_fragmented_message_keeps_its_frames_and_reads_whole(tmp_path):
    async def fragments(ws, seen) -> None:
        await ws.recv()
        await ws.send(iter(['{"type":"response.', 'created","response":{"id":"resp_1"}}']))

    with Upstream_(fragments, compression=None) as up, recorder(tmp_path, up.url) as (server, path):

        async def client() -> str:
            async with connect(f"ws://127.0.0.1:{server.port}/v1/responses") as ws:
                await ws.send('{"type":"response.create"}')
                return await ws.recv()

        got = run(client())
    assert json.loads(got)["type"] == "response.created"
    frames = [m for m in messages(path) if m["from"] == "server" and m["opcode"] != "close"]
    # websockets ends a fragmented message with an empty frame of its own
    assert [(m["opcode"], m["fin"]) for m in frames] == [
        ("text", False),
        ("continuation", False),
        ("continuation", True),
    ]
    [stream] = analyze(path).streams
    assert stream.turn == 1 and stream.frames == 1 and stream.response_id == "resp_1"


async def handshake_status(port: int) -> int:
    """The status a client's handshake through the recorder got."""
    try:
        async with connect(f"ws://127.0.0.1:{port}/v1/responses"):
            return 101
    except websockets.exceptions.InvalidStatus as e:
        return e.response.status_code


def test_a_non_101_answer_is_recorded_as_an_http_exchange(tmp_path):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class NotHere(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"error":{"message":"Not found"}}'
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), NotHere)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        with recorder(tmp_path, url) as (server, path):
            assert run(handshake_status(server.port)) == 404
    finally:
        httpd.shutdown()
    ls = lines(path)
    assert ls[1]["status"] == 404
    assert b"Not found" in b"".join(payload(d) for d in ls if d["type"] == "chunk")
    assert ls[-1]["reason"] == "complete"


def raw_handshake(port: int, path: str = "/v1/responses") -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head
    return s


def wait_end(path: str) -> dict:
    import time

    for _ in range(200):
        ends = [d for d in lines(path) if d["type"] == "end"]
        if ends:
            return ends[-1]
        time.sleep(0.05)
    raise AssertionError("no end line")


async def quiet(ws, seen) -> None:
    async for m in ws:
        seen.append(m)


def test_an_unmasked_client_frame_is_named_and_the_session_ends_truly(tmp_path):
    with Upstream_(quiet, compression=None) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        s.sendall(encode(1, b'{"type":"hello"}'))  # no mask: RFC 6455 5.1 forbids it
        s.settimeout(10)
        with pytest.raises(OSError):  # the upstream fails the connection (1002), then closes
            while s.recv(4096):
                pass
            raise OSError
        s.close()
        end = wait_end(path)
    assert "unmasked" in (end["error"] or "")
    assert end["reason"] in ("complete", "upstream-error", "client-closed")


def test_a_client_that_vanishes_mid_message_is_client_closed(tmp_path):
    with Upstream_(quiet, compression=None) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        frame = encode(1, b'{"type":"response.create"}', fin=False, mask=b"abcd")
        s.sendall(frame[:-5])  # cut inside the frame
        s.close()
        end = wait_end(path)
    assert end["reason"] == "client-closed"
    assert "never completed" in end["error"]


def test_an_impossible_length_stops_recording_that_side_and_says_so(tmp_path):
    with Upstream_(quiet, compression=None) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        s.sendall(bytes([0x81, 0xFF]) + struct.pack(">Q", 1 << 63) + b"abcd")
        s.close()
        end = wait_end(path)
    assert "over 2^63" in end["error"]


def test_a_20_mb_message_is_relayed_and_recorded_whole(tmp_path):
    big = "x" * (20 << 20)

    async def send_big(ws, seen) -> None:
        await ws.recv()
        await ws.send(json.dumps({"type": "big", "text": big}))
        await ws.close()

    with Upstream_(send_big) as up, recorder(tmp_path, up.url) as (server, path):

        async def client() -> int:
            async with connect(f"ws://127.0.0.1:{server.port}/v1/responses", max_size=None) as ws:
                await ws.send("go")
                return len(await ws.recv())

        assert run(client()) > 20 << 20
        end = wait_end(path)
    frames = [m for m in messages(path) if m["from"] == "server" and m["opcode"] == "text"]
    assert sum(len(payload(m)) for m in frames) > 20 << 20
    assert end["reason"] == "complete"


def test_a_broken_upstream_handshake_is_a_502_in_the_apis_words(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def garbage() -> None:
        c, _ = srv.accept()
        c.recv(4096)
        c.sendall(b"SPLAT\r\n\r\n")
        c.close()

    threading.Thread(target=garbage, daemon=True).start()
    url = f"http://127.0.0.1:{srv.getsockname()[1]}"
    with recorder(tmp_path, url) as (server, path):
        assert run(handshake_status(server.port)) == 502
    srv.close()
    ls = lines(path)
    assert ls[-1]["reason"] == "upstream-error"


def test_stopping_the_recorder_ends_an_open_session_as_recorder_stopped(tmp_path):
    with Upstream_(quiet, compression=None) as up:
        path = str(tmp_path / "rec.jsonl")
        with RecordingWriter(path) as writer:
            server = ProxyServer(Upstream.parse(up.url), writer, timeout=10)
            server.start()
            s = raw_handshake(server.port)
            s.sendall(encode(1, b"{}", mask=b"abcd"))
            import time

            time.sleep(0.2)
            server.stop("streamscope stopped (test)")
            s.close()
    end = [d for d in lines(path) if d["type"] == "end"]
    assert [e["reason"] for e in end] == ["recorder-stopped"]
