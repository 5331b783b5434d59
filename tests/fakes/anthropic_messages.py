"""A stand-in for the Anthropic Messages API as a coding agent talks to it (opencode, pi):
`POST .../v1/messages` (and Claude Code's `HEAD /` probe), answered as the API streams (`event: <type>` + `data: <json>`,
`message_start`, a `ping`, the content blocks and their deltas, `message_delta`,
`message_stop`), or as one JSON message when the request does not ask to stream.

It answers on 127.0.0.1, an ephemeral port, in a thread:

    with FakeMessages() as fake:
        fake.base_url     # http://127.0.0.1:PORT (the SDKs append /v1/messages)
        fake.log          # the HTTP requests it received, in order (`Received`)

The script: a request that declares a `bash` tool (opencode's and pi's shell, Claude
Code's `Bash`) and whose
conversation holds no `tool_result` yet gets a `tool_use` of it running `echo hello`, its
input in `input_json_delta` fragments (the first one empty, as the API sends them); one
that sends a `tool_result` back gets a text answer; one that declares no tools (a title
or a summary the agent asks for on the side) gets a short text.

Run as a program (`python -m tests.fakes.anthropic_messages`, from the repository's root)
it prints its base URL on the first line of stdout, serves until SIGTERM or SIGINT, and
with `--log FILE` writes what it receives there as JSON lines (a private file).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from streamscope.http.loopback import LoopbackServer

from .responses_ws import ANSWER, COMMAND, TITLE, Received, bash_arguments

MODEL = "claude-sonnet-4-5"


def _event(kind: str, **fields: Any) -> bytes:
    data = json.dumps({"type": kind, **fields})
    return f"event: {kind}\ndata: {data}\n\n".encode()


def _message(message_id: str, model: str, content: list[Any], stop: str | None) -> dict:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 310, "output_tokens": 1 if stop is None else 24},
    }


def stream_events(message_id: str, model: str, block: dict, stop: str) -> list[bytes]:
    """A whole streamed answer holding one content block (text or tool_use), in pieces."""
    events = [_event("message_start", message=_message(message_id, model, [], None))]
    events.append(_event("ping"))
    if block["type"] == "text":
        text = block["text"]
        events.append(
            _event("content_block_start", index=0, content_block={"type": "text", "text": ""})
        )
        for i in range(0, len(text), 8):
            delta = {"type": "text_delta", "text": text[i : i + 8]}
            events.append(_event("content_block_delta", index=0, delta=delta))
    else:
        start = {**block, "input": {}}
        events.append(_event("content_block_start", index=0, content_block=start))
        whole = json.dumps(block["input"], separators=(",", ":"))
        for piece in ["", *(whole[i : i + 9] for i in range(0, len(whole), 9))]:
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(_event("content_block_delta", index=0, delta=delta))
    events.append(_event("content_block_stop", index=0))
    delta = {"stop_reason": stop, "stop_sequence": None}
    events.append(_event("message_delta", delta=delta, usage={"output_tokens": 24}))
    events.append(_event("message_stop"))
    return events


def _answered(request: dict[str, Any]) -> bool:
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return True
    return False


class FakeMessages:
    """The fake Messages upstream (module docstring). Thread-safe reads of `log`."""

    def __init__(
        self,
        *,
        command: str = COMMAND,
        answer: str = ANSWER,
        port: int = 0,
        on_receive: Callable[[Received], None] | None = None,
    ) -> None:
        self.command = command
        self.answer = answer
        self.on_receive = on_receive
        self.log: list[Received] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._t0 = time.monotonic()
        self.server = LoopbackServer(self.app, port)
        self.server.name = "fake Messages upstream"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def received(self) -> list[Received]:
        with self._lock:
            return list(self.log)

    def reply(self, request: dict[str, Any]) -> tuple[dict, str]:
        """(the answer's one content block, its stop reason) for a request."""
        tools = {t.get("name"): t for t in request.get("tools") or [] if isinstance(t, dict)}
        if _answered(request):
            return {"type": "text", "text": self.answer}, "end_turn"
        # the shell tool: opencode's and pi's `bash`, Claude Code's `Bash`
        shell = next((n for n in tools if isinstance(n, str) and n.lower() == "bash"), None)
        if shell is None:
            return {"type": "text", "text": TITLE}, "end_turn"
        n = next(self._ids)
        block = {"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": shell}
        return {**block, "input": bash_arguments(tools[shell], self.command)}, "tool_use"

    async def app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = scope["query_string"].decode("latin-1")
        path = scope["path"] + (f"?{query}" if query else "")
        item = Received("request", path, scope["method"], headers, body=body)
        item.t = time.monotonic() - self._t0
        with self._lock:
            self.log.append(item)
        if self.on_receive is not None:
            self.on_receive(item)
        if scope["method"] == "HEAD":  # Claude Code's probe of its base URL
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["method"] != "POST" or not scope["path"].endswith("/v1/messages"):
            await _json(send, 404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            error = {"type": "invalid_request_error", "message": "the body is no JSON object"}
            await _json(send, 400, {"type": "error", "error": error})
            return
        block, stop = self.reply(request)
        model = request.get("model") if isinstance(request.get("model"), str) else MODEL
        message_id = f"msg_fake{len(self.log):04d}"
        if request.get("stream") is not True:
            await _json(send, 200, _message(message_id, model, [block], stop))
            return
        start = {"type": "http.response.start", "status": 200}
        start["headers"] = [(b"content-type", b"text/event-stream; charset=utf-8")]
        await send(start)
        for chunk in stream_events(message_id, model, block, stop):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    def __enter__(self) -> FakeMessages:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


async def _json(send: Callable, status: int, body: object) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.anthropic_messages")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="write what it receives here, as JSON lines")
    args = parser.parse_args(argv)
    out = (
        os.fdopen(os.open(args.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w")
        if args.log
        else None
    )

    def write(item: Received) -> None:
        if out is not None:
            out.write(json.dumps(item.as_dict()) + "\n")
            out.flush()

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with FakeMessages(port=args.port, on_receive=write) as fake:
        print(fake.base_url, flush=True)
        stop.wait()
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
