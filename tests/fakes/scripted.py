"""The base of the fake provider APIs the real-agent tests run an agent against: the
standard library's HTTP server on 127.0.0.1, an ephemeral port, in a thread (HTTP/1.1
keep-alive; a stream is a chunked body, each event one flushed chunk, as providers
stream). A subclass says how to answer (`answer`); every request is kept, in order:

    with FakeGeminiApi() as fake:
        fake.url        # http://127.0.0.1:PORT
        fake.received   # every request (`Received`)
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str  # with its query
    headers: dict[str, str]  # names in lower case
    body: bytes  # as it came (Content-Encoding not undone)

    def json(self) -> Any:
        """The body as JSON, its Content-Encoding undone (None: no JSON body)."""
        body = self.body
        coding = self.headers.get("content-encoding", "")
        if coding == "gzip":
            body = gzip.decompress(body)
        elif coding == "deflate":
            body = zlib.decompress(body)
        try:
            return json.loads(body)
        except ValueError:
            return None


@dataclass
class Answer:
    status: int
    content_type: str
    pieces: list[bytes]  # each one chunk of the body, flushed


def sse(events: list[Any], done: bool = False, crlf: bool = False) -> list[bytes]:
    """`data: JSON` events, one piece each (`done`: Chat Completions' `[DONE]` after)."""
    end = b"\r\n\r\n" if crlf else b"\n\n"
    pieces = [b"data: " + json.dumps(e).encode() + end for e in events]
    return pieces + ([b"data: [DONE]" + end] if done else [])


def as_json(status: int, body: Any) -> Answer:
    return Answer(status, "application/json", [json.dumps(body).encode()])


class ScriptedUpstream:
    """A fake provider API (module docstring); `answer` is the subclass's."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Received(self.command, self.path, headers, body)
                with fake._lock:
                    fake.received.append(request)
                fake._send(self, fake.answer(request))

            do_GET = do_POST = do_HEAD = _any  # noqa: N815 - the standard library's names

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, request: Received) -> Answer:
        raise NotImplementedError

    def __enter__(self) -> ScriptedUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, answer: Answer) -> None:
        handler.send_response(answer.status)
        handler.send_header("Content-Type", answer.content_type)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        if handler.command == "HEAD":
            return  # no body
        for piece in answer.pieces:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
