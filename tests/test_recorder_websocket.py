"""The recorder relays a WebSocket upgrade untouched and records each frame: the
handshake, messages both ways (fragmented, compressed, control), the close, and what
breaks the protocol, with a true end reason. The upstream is a `websockets` server on
127.0.0.1; the client the `websockets` package (as the openai SDK's realtime and
Responses clients use it) or raw frames where a test needs a broken one."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import socket
import struct
import threading
import time
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

    def __init__(
        self, handler: Callable, compression: str | None = "deflate", ssl: object = None
    ) -> None:
        self.handler, self.compression, self.ssl = handler, compression, ssl
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
        async with serve(
            one, "127.0.0.1", 0, compression=self.compression, max_size=None, ssl=self.ssl
        ) as s:
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


def test_a_session_is_relayed_and_recorded_frame_by_frame(tmp_path, capfd):
    with Upstream_(echo_twice) as up, recorder(tmp_path, up.url) as (server, path):

        async def client() -> list:
            got: list = []
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
                # permessage-deflate, as websockets offers it by default: agreed end to end
                got.append(ws.response.headers.get("Sec-WebSocket-Extensions"))
                await ws.close(1000, "bye")
            return got

        got = run(client())
    assert got[0] == '{"type":"response.create","model":"m"}'
    assert json.loads(got[1])["key"] == KEY  # the client is given every byte, unmasked
    assert up.seen[0] == ['{"type":"response.create","model":"m"}', b"\x00\x01binary"]
    assert up.headers[0]["openai-beta"] == "responses_websockets=2026-02-06"
    assert "permessage-deflate" in up.headers[0]["sec-websocket-extensions"]
    assert got[4].startswith("permessage-deflate")  # the upstream's answer, relayed as it was
    assert up.headers[0]["host"] == f"127.0.0.1:{up.port}"  # Host is the upstream's
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
    echoed = next(m for m in ms if m["opcode"] == "close" and m["from"] == "server")
    assert payload(echoed)[:2] == struct.pack(">H", 1000)
    raw = Path(path).read_bytes()
    assert KEY.encode() not in raw  # echoed in a message: masked like a body's
    assert sum(m.get("masked", 0) for m in ms) == 2  # once in each echo, said on its frame
    # permessage-deflate: the frames inflated for reading (the peers' bytes were not)
    assert [payload(m) for m in ms if m["from"] == "client"][
        0
    ] == b'{"type":"response.create","model":"m"}'
    assert any(m.get("compressed") for m in ms)
    assert ls[-1]["type"] == "end" and ls[-1]["reason"] == "complete" and not ls[-1]["error"]
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert "Traceback" not in capfd.readouterr().err


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


async def handshake_answer(port: int):
    """The answer other than `101` a client's handshake through the recorder got."""
    try:
        async with connect(f"ws://127.0.0.1:{port}/v1/responses", open_timeout=10):
            raise AssertionError("the handshake succeeded")
    except websockets.exceptions.InvalidStatus as e:
        return e.response


async def handshake_status(port: int) -> int:
    return (await handshake_answer(port)).status_code


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
            answer = run(handshake_answer(server.port))
    finally:
        httpd.shutdown()
    assert answer.status_code == 404 and answer.body == b'{"error":{"message":"Not found"}}'
    ls = lines(path)
    assert [d["type"] for d in ls] == ["request", "response", "chunk", "end"]
    assert ls[1]["status"] == 404
    assert dict(ls[1]["headers"])["Content-Type"] == "application/json"
    assert payload(ls[2]) == b'{"error":{"message":"Not found"}}'
    assert (ls[-1]["reason"], ls[-1]["error"]) == ("complete", None)


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
    early[s.fileno()] = head.partition(b"\r\n\r\n")[2]
    return s


early: dict[int, bytes] = {}  # by socket: what came after the 101 in its read


def wait_end(path: str) -> dict:
    """The session's end line, once written (20 s at most)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(path, "rb") as f:
            ends = [line for line in f if line.startswith(b'{"type":"end"')]
        if ends and ends[-1].endswith(b"\n"):
            return json.loads(ends[-1])
        time.sleep(0.05)
    raise AssertionError("no end line")


async def quiet(ws, seen) -> None:
    async for m in ws:
        seen.append(m)


def test_an_unmasked_client_frame_is_named_and_the_session_ends_truly(tmp_path, capfd):
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
    assert end["reason"] == "upstream-error"  # a peer broke the protocol
    assert "client: frame 1 (text) at byte 0: the client sent an unmasked frame" in end["error"]
    # recorded as far as it went: the frame, the upstream's close (1002: protocol error)
    said = [(m["from"], m["opcode"]) for m in messages(path)]
    assert said == [("client", "text"), ("server", "close")]
    assert payload(messages(path)[1])[:2] == struct.pack(">H", 1002)
    assert "Traceback" not in capfd.readouterr().err


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
    assert end["reason"] == "upstream-error"
    assert "client: frame 1 at byte 0 gives a length of over 2^63" in end["error"]


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_20_mb_client_message_passes_uncompressed_and_is_recorded_whole(tmp_path):
    big = os.urandom(20 << 20)  # nothing to deflate: the frame is 20 MB on the wire too

    async def took(ws, seen) -> None:
        got = await ws.recv()
        await ws.send(str(len(got)))

    with (
        Upstream_(took, compression=None) as up,
        recorder(tmp_path, up.url) as (server, path),
    ):

        async def client() -> str:
            async with connect(
                f"ws://127.0.0.1:{server.port}/v1/realtime", max_size=None, compression=None
            ) as ws:
                await ws.send(big)
                return await ws.recv()

        assert run(client()) == str(20 << 20)
        end = wait_end(path)
    [sent] = [m for m in messages(path) if m["from"] == "client" and m["opcode"] == "binary"]
    assert payload(sent) == big and "compressed" not in sent
    assert (end["reason"], end["error"]) == ("complete", None)


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
        answer = run(handshake_answer(server.port))
    srv.close()
    assert answer.status_code == 502 and b"streamscope: upstream unreachable" in answer.body
    ls = lines(path)
    assert ls[0]["type"] == "request" and ls[1]["status"] == 502
    assert ls[-1]["reason"] == "upstream-error"
    assert "not an HTTP/1.x response: 'SPLAT'" in ls[-1]["error"]


def test_stopping_the_recorder_ends_an_open_session_as_recorder_stopped(tmp_path):
    with Upstream_(quiet, compression=None) as up:
        path = str(tmp_path / "rec.jsonl")
        with RecordingWriter(path) as writer:
            server = ProxyServer(Upstream.parse(up.url), writer, timeout=10)
            server.start()
            s = raw_handshake(server.port)
            s.sendall(encode(1, b"{}", mask=b"abcd"))
            time.sleep(0.2)
            server.stop("streamscope stopped (test)")
            s.close()
    end = [d for d in lines(path) if d["type"] == "end"]
    assert [e["reason"] for e in end] == ["recorder-stopped"]


# -- a raw upstream, for what no websockets server sends


class RawUpstream:
    """Answers one upgrade with a `101` (no extension), then runs `script(sock)` on the
    connection; what came after the handshake is kept in `got`."""

    def __init__(self, script: Callable[[socket.socket], None]) -> None:
        self.script = script
        self.got = b""
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen()
        self.port = self.srv.getsockname()[1]
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        c, _ = self.srv.accept()
        c.settimeout(10)
        with c:
            head = b""
            while b"\r\n\r\n" not in head:
                head += c.recv(4096)
            head, _, self.got = head.partition(b"\r\n\r\n")
            key = next(
                line.split(b":", 1)[1].strip()
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key:")
            )
            accept = base64.b64encode(
                hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()
            )
            c.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
            )
            self.script(c)
            with contextlib.suppress(OSError):
                while data := c.recv(65536):
                    self.got += data

    def __enter__(self) -> RawUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(10)
        self.srv.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def read_all(s: socket.socket) -> bytes:
    """What the relay sent this client until it closed (bounded by the socket's timeout)."""
    got = early.pop(s.fileno(), b"")
    with contextlib.suppress(OSError):
        while data := s.recv(65536):
            got += data
    return got


MASK = b"\x01\x02\x03\x04"


def test_the_bytes_are_relayed_unchanged_both_ways(tmp_path):
    # frames of every kind, one split over writes, two in one write: what each peer sent
    # is what the other got, byte for byte
    from_server = (
        encode(1, b'{"type":"a"}', fin=False)
        + encode(9, b"p")
        + encode(0, b', "x"}')
        + encode(2, bytes(range(256)) * 300)
        + encode(8, struct.pack(">H", 1000) + b"done")
    )
    from_client = encode(1, b'{"type":"response.create"}', mask=MASK) + encode(
        8, struct.pack(">H", 1000), mask=MASK
    )
    upstream_got = []

    def script(c: socket.socket) -> None:
        c.sendall(from_server[:7])
        time.sleep(0.05)
        c.sendall(from_server[7:])
        got = b""
        while len(got) < len(from_client):
            got += c.recv(65536)
        upstream_got.append(got)
        c.shutdown(socket.SHUT_WR)

    with RawUpstream(script) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        got = early.pop(s.fileno())
        while len(got) < len(from_server):
            got += s.recv(65536)
        s.sendall(from_client)
        got += read_all(s)
        s.close()
        end = wait_end(path)
    assert got == from_server and upstream_got == [from_client]
    ms = messages(path)
    assert [(m["from"], m["opcode"], m["fin"]) for m in ms] == [
        ("server", "text", False),
        ("server", "ping", True),
        ("server", "continuation", True),
        ("server", "binary", True),
        ("server", "close", True),
        ("client", "text", True),
        ("client", "close", True),
    ]
    assert payload(ms[3]) == bytes(range(256)) * 300
    client = [payload(m) for m in ms if m["from"] == "client"]
    assert client == [b'{"type":"response.create"}', struct.pack(">H", 1000)]  # unmasked
    assert (end["reason"], end["error"]) == ("complete", None)


@pytest.mark.parametrize("side", ["client", "server"])
def test_a_reserved_opcode_is_recorded_as_its_number_and_named(tmp_path, capfd, side):
    frame = encode(3, b"what is this", mask=MASK if side == "client" else None)

    def script(c: socket.socket) -> None:
        if side == "server":
            c.sendall(frame)
        time.sleep(0.2)
        c.shutdown(socket.SHUT_WR)

    with RawUpstream(script) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        if side == "client":
            s.sendall(frame)
        got = read_all(s)
        s.close()
        end = wait_end(path)
    if side == "server":
        assert got == frame  # relayed all the same
    else:
        assert up.got == frame
    [m] = messages(path)
    assert (m["from"], m["opcode"], payload(m)) == (side, 3, b"what is this")
    assert end["reason"] == "upstream-error"
    assert f"{side}: frame 1 (opcode 3) at byte 0: opcode 3 is reserved" in end["error"]
    assert "Traceback" not in capfd.readouterr().err


def test_an_impossible_length_from_the_server_is_named(tmp_path, capfd):
    bad = bytes([0x82, 0x7F]) + struct.pack(">Q", (1 << 63) + 5) + b"junk"

    def script(c: socket.socket) -> None:
        c.sendall(encode(1, b'{"type":"first"}') + bad)
        time.sleep(0.2)
        c.shutdown(socket.SHUT_WR)

    with RawUpstream(script) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        got = read_all(s)
        s.close()
        end = wait_end(path)
    assert got.endswith(bad)
    assert [payload(m) for m in messages(path)] == [b'{"type":"first"}']  # as far as it went
    assert end["reason"] == "upstream-error"
    assert "server: frame 2 at byte 18 gives a length of over 2^63" in end["error"]
    assert "Traceback" not in capfd.readouterr().err


def test_a_message_cut_by_the_servers_close_is_said(tmp_path):
    def script(c: socket.socket) -> None:
        c.sendall(encode(1, b'{"type":"response.output_text.delta","del', fin=False))
        c.sendall(encode(8, struct.pack(">H", 1011) + b"overloaded"))
        got = b""
        while len(got) < 8:  # the client's close, masked: 6 bytes of head, 2 of code
            got += c.recv(64)
        c.shutdown(socket.SHUT_WR)

    with RawUpstream(script) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        s.settimeout(10)
        got = early.pop(s.fileno(), b"")
        while b"overloaded" not in got:
            got += s.recv(4096)
        s.sendall(encode(8, struct.pack(">H", 1011), mask=MASK))
        read_all(s)
        s.close()
        end = wait_end(path)
    ms = messages(path)
    assert [(m["from"], m["opcode"], m["fin"]) for m in ms] == [
        ("server", "text", False),
        ("server", "close", True),
        ("client", "close", True),
    ]
    assert end["reason"] == "complete"  # the close handshake was made
    assert end["error"] == (
        "server: the text message begun at frame 1 never got its final frame (the close came first)"
    )


def test_a_message_cut_by_the_clients_close_is_said(tmp_path):
    with Upstream_(quiet, compression=None) as up, recorder(tmp_path, up.url) as (server, path):
        s = raw_handshake(server.port)
        s.sendall(encode(1, b'{"type":"response.create"', fin=False, mask=MASK))
        s.sendall(encode(8, struct.pack(">H", 1000), mask=MASK))
        s.settimeout(10)
        read_all(s)
        s.close()
        end = wait_end(path)
    said = [(m["from"], m["opcode"]) for m in messages(path)]
    assert said[:2] == [("client", "text"), ("client", "close")]
    assert "client: the text message begun at frame 1 never got its final frame" in end["error"]
    assert end["reason"] == "complete", end


def test_an_upstream_that_closes_before_answering_is_a_502(tmp_path, capfd):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def hang_up() -> None:
        c, _ = srv.accept()
        c.recv(4096)
        c.close()

    threading.Thread(target=hang_up, daemon=True).start()
    with recorder(tmp_path, f"http://127.0.0.1:{srv.getsockname()[1]}") as (server, path):
        answer = run(handshake_answer(server.port))
    srv.close()
    assert answer.status_code == 502
    ls = lines(path)
    assert [d["type"] for d in ls] == ["request", "response", "chunk", "end"]
    assert ls[-1]["reason"] == "upstream-error"
    assert "closed the connection before answering the upgrade" in ls[-1]["error"]
    assert "Traceback" not in capfd.readouterr().err


def test_a_secret_split_over_two_frames_of_a_message_is_masked_in_both(tmp_path):
    async def split(ws, seen) -> None:
        await ws.recv()
        await ws.send(iter(['{"type":"echo","key":"' + KEY[:12], KEY[12:] + '"}']))
        await ws.send("after")

    with Upstream_(split, compression=None) as up, recorder(tmp_path, up.url) as (server, path):

        async def client() -> list:
            headers = {"Authorization": f"Bearer {KEY}"}
            url = f"ws://127.0.0.1:{server.port}/v1/responses"
            async with connect(url, additional_headers=headers) as ws:
                await ws.send("hi")
                return [await ws.recv(), await ws.recv()]

        got = run(client())
    assert KEY in got[0]  # the client is given every byte
    raw = Path(path).read_bytes()
    assert KEY[:12].encode() not in raw and KEY[12:].encode() not in raw
    ms = [m for m in messages(path) if m["from"] == "server" and m["opcode"] != "close"]
    assert [m["opcode"] for m in ms] == ["text", "continuation", "continuation", "text"]
    assert payload(ms[0]).endswith(b'"key":"[REDACTED***')
    assert sum(m.get("masked", 0) for m in ms) == 1
    assert payload(ms[-1]) == b"after"  # the frames keep their order and their bytes


def test_a_side_mount_routes_the_upgrade_to_its_upstream(tmp_path):
    with Upstream_(echo_twice, compression=None) as up, Upstream_(quiet) as other:
        path = str(tmp_path / "rec.jsonl")
        with RecordingWriter(path) as writer:
            server = ProxyServer(
                Upstream.parse(other.url + "/v1"),
                writer,
                timeout=10,
                sides={"anthropic": Upstream.parse(up.url + "/gateway")},
            )
            server.start()
            try:
                base = server.base_url_of("anthropic")
                assert base is not None

                async def client() -> str:
                    async with connect(base.replace("http", "ws", 1) + "/v1/realtime") as ws:
                        await ws.send("hello")
                        return await ws.recv()

                assert run(client()) == "hello"
            finally:
                server.stop()
    assert up.seen == [["hello"]] and other.seen == []
    [request] = [d for d in lines(path) if d["type"] == "request"]
    assert request["url"] == up.url + "/gateway/v1/realtime"


def test_a_tls_upstream_is_reached_with_the_trusted_roots(tmp_path, monkeypatch):
    import ssl

    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the roots the recorder trusts
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with (
        Upstream_(echo_twice, ssl=context) as up,
        recorder(tmp_path, f"https://localhost:{up.port}") as (server, path),
    ):

        async def client() -> str:
            async with connect(f"ws://127.0.0.1:{server.port}/v1/responses") as ws:
                await ws.send("over tls")
                return await ws.recv()

        assert run(client()) == "over tls"
    assert up.seen == [["over tls"]]
    ls = lines(path)
    assert ls[0]["url"] == f"https://localhost:{up.port}/v1/responses"
    assert ls[1]["status"] == 101 and ls[-1]["reason"] == "complete"


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for localhost, its own issuer, and its key (PEM files)."""
    import datetime

    crypto = pytest.importorskip("cryptography")
    del crypto
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_an_upstream_that_ignores_the_upgrade_is_relayed_as_it_streams(tmp_path):
    # a plain HTTP server answering the handshake's GET with a chunked body, slowly: the
    # client gets the head and the first read before the upstream has sent the rest
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    go_on = threading.Event()

    def answer() -> None:
        c, _ = srv.accept()
        with c:
            c.recv(4096)
            c.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n8\r\ndata: 1\n\r\n"
            )
            go_on.wait(10)
            c.sendall(b"8\r\ndata: 2\n\r\n0\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    with recorder(tmp_path, f"http://127.0.0.1:{srv.getsockname()[1]}") as (server, path):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(
            b"GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        got = b""
        while b"data: 1\n" not in got:
            got += s.recv(4096)
        go_on.set()
        got += read_all(s)
        s.close()
        end = wait_end(path)
    srv.close()
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and b"connection: close" in head.lower()
    assert body == b"data: 1\ndata: 2\n"  # de-chunked, the connection's end ends it
    ls = lines(path)
    assert [payload(d) for d in ls if d["type"] == "chunk"] == [b"data: 1\n", b"data: 2\n"]
    assert (end["reason"], end["error"]) == ("complete", None)
