"""A stand-in provider for the recorder tests: uvicorn on 127.0.0.1, an ephemeral port.

POST .../chat/completions answers by the request's "model":
- a sample recording's name (recordings/NAME.jsonl): its first exchange's reads, or its
  second when the request carries tool results, with `pace` seconds between reads;
- "drop": three events, then the connection is cut mid-body;
- "stall": one event, then silence for 30 s;
- "slow": an event every 50 ms for 10 s (to see the recorder cancel it);
- "late": no answer for 10 s unless the client goes away first;
- "json": a non-streaming chat.completion;
- "conversation", "conversation-long": tests/conversation_stream.py's answers, call ids
  of each conversation's own (the long one an event every 50 ms).
POST .../messages (the Anthropic Messages API) answers any other model with
tests/anthropic_stream.py's events for the turn the request asks for, one read each, and
POST .../responses (the OpenAI Responses API) with tests/responses_stream.py's, and
POST ...:streamGenerateContent / ...:generateContent (Gemini, AI Studio's and Vertex AI's
paths) with tests/gemini_stream.py's, the model named in the path (one ending in `-cut`:
the stream is cut after gemini_stream.CUT_AFTER events); without `alt=sse`, as one JSON
array (application/json), an element a read.
With `coding` (gzip, deflate, br, zstd), every stream is sent compressed, one flushed
piece per read, with its Content-Encoding, whatever the request asked for (as a CDN may).
With `tail_pause`, a sample stream waits that long (or until the client leaves) after
its last read before ending the chunked body, as real providers do after `[DONE]`; with
`last_pause`, that long before its last read (a client that leaves meanwhile never gets
it, however loaded the machine).
Every body it sends is kept as (model, sha256, bytes) in `served`; `cancelled` counts
streams that ended because the other side went away; `auth` keeps Authorization headers,
`hosts` the Host headers, `paths` the request paths (with their query) and `bodies` the
request bodies as JSON (a compressed one decoded, as its Content-Encoding says), `raw` as
they arrived.

`RawUpstream` answers every connection with fixed bytes, for HTTP that uvicorn cannot
send (1xx interim responses, broken framing, `chunked_with_length`'s both framings),
and keeps each request's head lines in `heads`, its body in `bodies`.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import threading
import time
from urllib.parse import urlsplit

import orjson
import uvicorn

from streamscope.http.loopback import bind
from streamscope.recording import RecordingIndex

from . import anthropic_stream, conversation_stream, gemini_stream, responses_stream
from .encoded import Encoder, decode

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")


def sample_reads(name: str, turn: int) -> list[bytes]:
    with RecordingIndex.open(os.path.join(ROOT, f"{name}.jsonl")) as index:
        exchange = index.exchanges()[turn - 1]
        return [c.data_bytes for c in index.chunks(exchange)]


def event(i: int) -> bytes:
    chunk = {
        "id": "chatcmpl-up",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": f"word{i} "}, "finish_reason": None}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


async def _left(receive, seconds: float) -> bool:
    """Whether the client goes away within `seconds` (its ASGI disconnect message)."""
    try:
        message = await asyncio.wait_for(receive(), seconds)
    except asyncio.TimeoutError:
        return False
    return message["type"] == "http.disconnect"


class Upstream:
    def __init__(
        self,
        pace: float = 0.0,
        tail_pause: float = 0.0,
        last_pause: float = 0.0,
        tls: tuple[str, str] | None = None,
        coding: str | None = None,
    ) -> None:
        self.pace = pace
        self.coding = coding
        self.tail_pause = tail_pause
        self.last_pause = last_pause
        self.hosts: list[str] = []
        self.paths: list[str] = []
        self.bodies: list[dict] = []
        self.raw: list[bytes] = []  # each request body as it arrived, to the byte
        self.headers: list[dict[str, str]] = []
        self.served: list[tuple[str, str, bytes]] = []
        self.cancelled = 0
        self.auth: list[str] = []
        self.sock = bind(0)
        self.port = self.sock.getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/v1"
        certfile, keyfile = tls or (None, None)
        config = uvicorn.Config(
            self.app,
            log_level="critical",
            access_log=False,
            lifespan="off",
            interface="asgi3",
            ssl_certfile=certfile,
            ssl_keyfile=keyfile,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Upstream:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    async def app(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            m = await receive()
            body += m.get("body", b"")
            if not m.get("more_body"):
                break
        headers = dict((k.decode().lower(), v.decode()) for k, v in scope["headers"])
        self.hosts.append(headers.get("host", ""))
        query = scope.get("query_string", b"").decode()
        self.paths.append(scope["path"] + (f"?{query}" if query else ""))
        self.headers.append(headers)
        if "authorization" in headers:
            self.auth.append(headers["authorization"])
        self.raw.append(body)
        coding = headers.get("content-encoding", "")
        try:  # a compressed request is read as a server does (tests/encoded.py)
            request = orjson.loads(decode(coding, body) if coding else body) if body else {}
        except Exception:  # (zlib's, brotli's, zstd's errors): one it cannot read
            request = {"model": "json"}  # a plain answer
        self.bodies.append(request)
        path = scope["path"]
        gemini = path.endswith((":streamGenerateContent", ":generateContent"))
        # Gemini names its model in the path: .../models/{model}:streamGenerateContent
        model = path.rpartition("/")[2].partition(":")[0] if gemini else request.get("model", "")
        if model == "json" or path.endswith(":generateContent"):
            out = (
                gemini_stream.whole_response(request)
                if gemini
                else orjson.dumps({"id": "x", "object": "chat.completion", "choices": []})
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": out})
            self.served.append((model, hashlib.sha256(out).hexdigest(), out))
            return
        # "late": no answer for 10 s, unless the other side leaves first
        if model == "late" and await _left(receive, 10):
            self.cancelled += 1
            return
        array = path.endswith(":streamGenerateContent") and "alt=sse" not in query
        head = [(b"content-type", b"application/json" if array else b"text/event-stream")]
        encoder = None
        if self.coding is not None:  # whatever the request's Accept-Encoding, as CDNs do
            encoder = Encoder(self.coding)
            head.append((b"content-encoding", self.coding.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": head})
        sent = bytearray()

        async def emit(data: bytes, last: bool = False) -> None:
            if encoder is not None:  # one flushed piece per read, as a streaming server does
                data = encoder.piece(data, last)
            await send({"type": "http.response.body", "body": data, "more_body": True})
            sent.extend(data)

        try:
            if gemini and model.endswith("-cut"):
                for data in gemini_stream.events_for(request)[: gemini_stream.CUT_AFTER]:
                    await emit(data)
                    await asyncio.sleep(0.01)
                raise ConnectionResetError("upstream cut the stream")
            if model == "drop":
                for i in range(3):
                    await emit(event(i))
                    await asyncio.sleep(0.01)
                raise ConnectionResetError("upstream cut the stream")
            if model == "stall":
                await emit(event(0))
                await asyncio.sleep(30)
            elif model == "slow":
                gone = asyncio.ensure_future(receive())  # http.disconnect when the peer leaves
                for i in range(200):
                    if gone.done():
                        self.cancelled += 1
                        return
                    await emit(event(i))
                    await asyncio.sleep(0.05)
                gone.cancel()
            else:
                # a long answer comes slowly: a client that stops early leaves mid-stream
                pace = self.pace or (0.05 if model == "conversation-long" else 0.0)
                reads = gemini_stream.array_reads(request) if array else None
                reads = reads or self._events(scope["path"], request)
                for n, data in enumerate(reads, 1):
                    if pace:
                        await asyncio.sleep(pace)
                    if (
                        n == len(reads)
                        and self.last_pause
                        and await _left(receive, self.last_pause)
                    ):
                        self.cancelled += 1
                        return
                    await emit(data)
                if encoder is not None:
                    await emit(b"", last=True)
                if self.tail_pause:  # after the final event: keep the body open a while
                    await _left(receive, self.tail_pause)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (asyncio.CancelledError, OSError):
            self.cancelled += 1
            raise
        finally:
            self.served.append((model, hashlib.sha256(bytes(sent)).hexdigest(), bytes(sent)))

    def last_served(self, timeout: float = 10.0) -> bytes:
        """The body of the last answer: the server notes it after its final send, which a
        client may have read before (a test that looked at once found nothing)."""
        end = time.monotonic() + timeout
        while not self.served and time.monotonic() < end:
            time.sleep(0.01)
        return self.served[-1][2]

    @staticmethod
    def _events(path: str, request: dict) -> list[bytes]:
        """The reads that answer a stream request, by its API (its path)."""
        if path.endswith("/messages"):
            return anthropic_stream.events_for(request)
        if path.endswith("/responses"):  # the model "incomplete" or "failed" ends so
            return responses_stream.events_for(request, request.get("model", ""))
        if path.endswith(":streamGenerateContent"):
            return gemini_stream.events_for(request)
        if str(request.get("model", "")).startswith("conversation"):
            return conversation_stream.events_for(request)
        turn = 2 if any(m.get("role") == "tool" for m in request.get("messages", [])) else 1
        return sample_reads(request.get("model", ""), turn)


# A small event stream, and a whole response carrying it, for RawUpstream.
SSE = b"data: {}\n\ndata: [DONE]\n\n"
OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (
    len(SSE),
    SSE,
)


def chunked_with_length(body: bytes, length: int = 40) -> bytes:
    """A 200 event stream framed by chunked transfer coding that also says
    `Content-Length: length` (RFC 9112 6.3: the length must then be ignored), one chunk
    per event, as some gateways send it."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n" % length
    )
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    return head + b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"


class RawUpstream:
    """A socket server that reads one request per connection and sends fixed bytes.

    `answers[i]` goes to the i-th connection (the last one to any later); None closes
    the connection at once, unread, as an upstream closing an idle kept-alive one.
    """

    def __init__(self, *answers: bytes | None) -> None:
        self.answers = answers
        self.heads: list[list[str]] = []  # each request's lines, the request line first
        self.bodies: list[bytes] = []
        self.sock = bind(0)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        for i in itertools.count():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed by __exit__
                return
            answer = self.answers[min(i, len(self.answers) - 1)]
            with conn:
                if answer is not None:
                    self._read_request(conn)
                    conn.sendall(answer)

    def _read_request(self, conn) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        self.heads.append(head.decode("latin-1").split("\r\n"))
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        while len(body) < length:
            body += conn.recv(65536)
        self.bodies.append(body)

    def __enter__(self) -> RawUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


class ForwardProxy:
    """An HTTP proxy on 127.0.0.1 as HTTP(S)_PROXY names one: CONNECT tunnels and
    absolute-form requests, piped both ways. `seen` keeps each connection's first line."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.sock = bind(0)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    async def _handle(self, reader, writer) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode()
        self.seen.append(line)
        method, target, _ = line.split(" ")
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            url = urlsplit(target)
            up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port)
            origin_form = url.path + (f"?{url.query}" if url.query else "")
            up_writer.write(head.replace(target.encode(), origin_form.encode(), 1))
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    def __enter__(self) -> ForwardProxy:
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, sock=self.sock), self.loop
        ).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def shutdown() -> None:  # pipes still open are cancelled, not left pending
            self.server.close()
            tasks = asyncio.all_tasks() - {asyncio.current_task()}
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
        self.sock.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
