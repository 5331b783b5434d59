"""A stand-in for the Anthropic Messages API that runs Claude Code's tool loop: the first
turn with tools calls its `Bash` tool with `echo hello` (the input in `input_json_delta`
fragments, as the API streams it), the turn that sends the tool's result back is answered
in text naming what the command printed. A request without tools (Claude Code's side
calls: a quota probe, a title) is answered with a short text.

It answers on 127.0.0.1, an ephemeral port, in a thread (the standard library's HTTP
server; each event one write, unbuffered):

    with FakeAnthropic() as fake:
        fake.url        # http://127.0.0.1:PORT
        fake.received   # every request: method, path, headers, body

`HEAD /` (Claude Code's reachability probe) is answered 200, `count_tokens` with a count.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..anthropic_stream import event

MODEL = "claude-sonnet-4-5-20250929"
TOOL_ID = "toolu_01FAKEclaudeCodeBash0001"
COMMAND = "echo hello"
ANSWER = "The command printed: hello"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None


def _start(message_id: str) -> bytes:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 1},
    }
    return event("message_start", message=message)


def _end(stop_reason: str) -> list[bytes]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return [event("message_delta", delta=delta, usage={"output_tokens": 9}), event("message_stop")]


def _text(index: int, text: str) -> list[bytes]:
    half = len(text) // 2
    return [
        event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        event(
            "content_block_delta", index=index, delta={"type": "text_delta", "text": text[:half]}
        ),
        event(
            "content_block_delta", index=index, delta={"type": "text_delta", "text": text[half:]}
        ),
        event("content_block_stop", index=index),
    ]


def _results(body: Any) -> list[Any]:
    """The tool_result blocks a request's messages carry."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return [
        block
        for m in messages or []
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def events_for(body: Any, turn: int) -> list[bytes]:
    """The stream answering one request (`turn` numbers the fake's answers, for their ids)."""
    tools = body.get("tools") if isinstance(body, dict) else None
    message_id = f"msg_01FAKEclaudeCode{turn:04d}"
    if not tools:
        return [_start(message_id), *_text(0, "Hello."), *_end("end_turn")]
    if _results(body):
        return [_start(message_id), *_text(0, ANSWER), *_end("end_turn")]
    arguments = json.dumps({"command": COMMAND, "description": "Print hello"})
    pieces = ["", arguments[:13], arguments[13:31], arguments[31:]]
    block = {"type": "tool_use", "id": TOOL_ID, "name": "Bash", "input": {}}
    return [
        _start(message_id),
        *_text(0, "I'll run it."),
        event("content_block_start", index=1, content_block=block),
        *(
            event(
                "content_block_delta",
                index=1,
                delta={"type": "input_json_delta", "partial_json": p},
            )
            for p in pieces
        ),
        event("content_block_stop", index=1),
        *_end("tool_use"),
    ]


class FakeAnthropic:
    """The fake Messages API (module docstring)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:  # noqa: N802 - the standard library's name
                fake._log(self, b"")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                fake._answer(self, self.rfile.read(length))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def _log(self, handler: BaseHTTPRequestHandler, body: bytes) -> int:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.received.append(Received(handler.command, handler.path, headers, body))
            return len(self.received)

    def _answer(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        turn = self._log(handler, raw)
        path = handler.path.split("?", 1)[0]
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if path.endswith("/count_tokens"):
            self._send(handler, "application/json", [b'{"input_tokens": 120}'])
        elif path.endswith("/v1/messages") and isinstance(body, dict) and body.get("stream"):
            self._send(handler, "text/event-stream", events_for(body, turn))
        elif path.endswith("/v1/messages"):
            answer = {
                "id": f"msg_01FAKEclaudeCode{turn:04d}",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "text", "text": "Hello."}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 120, "output_tokens": 2},
            }
            self._send(handler, "application/json", [json.dumps(answer).encode()])
        else:
            error = {"type": "error", "error": {"type": "not_found_error", "message": path}}
            self._send(handler, "application/json", [json.dumps(error).encode()], 404)

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, content_type: str, pieces: list[bytes], status: int = 200
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("request-id", "req_01FAKEclaudeCodeUpstream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for piece in pieces:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
