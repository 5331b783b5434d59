"""A stand-in for the OpenAI Responses API as codex-cli talks to it: over a WebSocket
(`GET /v1/responses`, `Upgrade: websocket`, one `{"type": "response.create", ...}` text
message per turn, the answer's events one JSON text message each, several responses on
one socket) and over HTTP (`POST /v1/responses`, the same events as named SSE events).

It answers on 127.0.0.1, an ephemeral port, in a thread (uvicorn, h11, the `websockets`
package's sans-I/O protocol, permessage-deflate offered back when the client asks):

    with FakeResponses() as fake:
        fake.base_url     # http://127.0.0.1:PORT/v1
        ...
        fake.log          # everything it received, in order (see `Received`)

The turns are scripted by `Script` (the default: `ShellThenAnswer`): a request whose
conversation holds no tool result yet gets a `function_call` to the shell tool the request
declares (codex's `exec_command`, `shell_command` or `shell`, opencode's and pi's `bash`,
in the argument shape each one takes) running `echo hello`; a request that sends that
call's output back gets a final text answer; one that declares no tools (a title asked on
the side) gets a short text. A `generate: false` request (codex's prewarm) gets an empty completed response,
as the API answers one. A later turn over the socket names the previous response by
`previous_response_id` and sends only the new items: the fake resolves the whole
conversation from the responses it gave (and says `previous_response_not_found` for an id
it never gave, as the API does).

`websocket=False` answers the upgrade with 404, as an upstream without the WebSocket
transport does (and as the recorder's proxy made every upstream look before it relayed
upgrades): codex then falls back to HTTP.

Run as a program (`python -m tests.fakes.responses_ws`, from the repository's root) it
prints its base URL on the first line of stdout, serves until SIGTERM or SIGINT, and with
`--log FILE` writes what it receives there as JSON lines (a private file: the client's
headers are in it).
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn

from streamscope.http.loopback import bind

MODEL = "gpt-5.1-codex"
COMMAND = "echo hello"
ANSWER = "The command printed: hello"
TITLE = "Echo hello"
BETA = "responses_websockets=2026-02-06"


@dataclass
class Received:
    """One thing the fake received.

    `kind`: "handshake" (a WebSocket upgrade: `headers`), "message" (a client text or
    binary message on a socket: `data`, `socket` its connection's number), "close" (the
    client's close: `data` holds code and reason) or "request" (an HTTP request: `method`,
    `path`, `headers`, `body` as received, decoded if it was zstd/gzip-encoded)."""

    kind: str
    path: str = ""
    method: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    data: str | bytes = b""
    body: bytes = b""
    socket: int = 0
    t: float = 0.0

    def json(self) -> Any:
        """The message's (or the request body's) JSON, None if it is none."""
        raw = self.data if self.kind == "message" else self.body
        try:
            return json.loads(raw)
        except (ValueError, TypeError):
            return None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "t": self.t}
        for name in ("path", "method", "headers", "socket"):
            if getattr(self, name):
                d[name] = getattr(self, name)
        if self.kind in ("message", "close"):
            d["data"] = self.data if isinstance(self.data, str) else self.data.hex()
        if self.kind == "request":
            d["body"] = self.body.decode("utf-8", "replace")
        return d


# -- the events of a response ------------------------------------------------------------


class _Response:
    """Numbers the events of one response and wraps them in its lifecycle."""

    def __init__(self, response_id: str, request: dict[str, Any]) -> None:
        self.id = response_id
        self.request = request
        self.events: list[dict[str, Any]] = []

    def body(self, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        done = status != "in_progress"
        return {
            "id": self.id,
            "object": "response",
            "created_at": 1767000000,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": self.request.get("model") or MODEL,
            "output": output,
            "parallel_tool_calls": bool(self.request.get("parallel_tool_calls", False)),
            "previous_response_id": self.request.get("previous_response_id"),
            "usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 12,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 132,
            }
            if done
            else None,
        }

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append({"type": kind, "sequence_number": len(self.events), **fields})

    def start(self) -> None:
        self.add("response.created", response=self.body("in_progress", []))
        self.add("response.in_progress", response=self.body("in_progress", []))

    def end(self, output: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.add("response.completed", response=self.body("completed", output))
        return self.events


def empty_response(response_id: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """A prewarm's answer: created, then completed with no output."""
    r = _Response(response_id, request)
    r.add("response.created", response=r.body("in_progress", []))
    return r.end([])


def call_response(
    response_id: str,
    request: dict[str, Any],
    name: str,
    arguments: str,
    call_id: str,
    custom: bool = False,
) -> list[dict[str, Any]]:
    """A response that calls `name`: a `function_call` with `arguments` (a JSON text) or,
    `custom`, a `custom_tool_call` with that `input`, sent in delta fragments."""
    kind, field, prefix = (
        ("custom_tool_call", "input", "ctc") if custom else ("function_call", "arguments", "fc")
    )
    delta = f"response.{'custom_tool_call_input' if custom else 'function_call_arguments'}"
    item_id = f"{prefix}_{response_id[5:]}"
    call = {"id": item_id, "type": kind, "status": "in_progress", field: ""}
    call |= {"call_id": call_id, "name": name}
    r = _Response(response_id, request)
    r.start()
    r.add("response.output_item.added", output_index=0, item=call)
    for i in range(0, len(arguments), 9):
        r.add(f"{delta}.delta", item_id=item_id, output_index=0, delta=arguments[i : i + 9])
    r.add(f"{delta}.done", item_id=item_id, output_index=0, **{field: arguments})
    done = {**call, "status": "completed", field: arguments}
    r.add("response.output_item.done", output_index=0, item=done)
    return r.end([done])


def text_response(response_id: str, request: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """A response that answers `text`, in output_text deltas."""
    item_id = f"msg_{response_id[5:]}"
    part = {"type": "output_text", "annotations": [], "text": ""}
    message = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
    message["content"] = []
    where = {"item_id": item_id, "output_index": 0, "content_index": 0}
    r = _Response(response_id, request)
    r.start()
    r.add("response.output_item.added", output_index=0, item=message)
    r.add("response.content_part.added", **where, part=part)
    for i in range(0, len(text), 8):
        r.add("response.output_text.delta", **where, delta=text[i : i + 8])
    r.add("response.output_text.done", **where, text=text)
    part = {**part, "text": text}
    r.add("response.content_part.done", **where, part=part)
    done = {**message, "status": "completed", "content": [part]}
    r.add("response.output_item.done", output_index=0, item=done)
    return r.end([done])


def error_event(code: str, message: str, status: int = 400) -> dict[str, Any]:
    """An error as the API sends it over the socket (codex reads `status` and `error`)."""
    error = {"type": "invalid_request_error", "code": code, "message": message}
    return {"type": "error", "status": status, "error": error}


# -- the script ------------------------------------------------------------------------


def declared_tools(conversation: list[Any], request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool the client declared: the request's `tools` and those of the
    conversation's `additional_tools` items (codex's), namespaces flattened."""
    found: list[dict[str, Any]] = []

    def walk(tools: object) -> None:
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":
                walk(tool.get("tools"))
            else:
                found.append(tool)

    walk(request.get("tools"))
    for item in conversation:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            walk(item.get("tools"))
    return found


def shell_call(tools: list[dict[str, Any]], command: str) -> tuple[str, str, bool]:
    """(tool name, its input, whether it is a custom tool) running `command` with the shell
    tool `tools` declare, in the shape that tool takes: codex's code mode `exec` (a custom
    tool whose input is JavaScript calling its nested tools), `bash` (opencode's and pi's),
    its unified exec (`exec_command`: one command line), `shell_command`, or the classic
    `shell` (argv)."""
    names = {t.get("name"): t for t in tools}
    exec_tool = names.get("exec")
    if exec_tool is not None and exec_tool.get("type") == "custom":
        script = f"text(await tools.exec_command({{ cmd: {json.dumps(command)} }}));"
        return "exec", script, True
    bash = names.get("bash")
    if bash is not None:  # opencode's and pi's: a command line, and what it does
        return "bash", json.dumps(bash_arguments(bash, command)), False
    if "exec_command" in names:
        return "exec_command", json.dumps({"cmd": command}), False
    if "shell_command" in names:
        return "shell_command", json.dumps({"command": command}), False
    return "shell", json.dumps({"command": ["bash", "-lc", command]}), False


def bash_arguments(tool: dict[str, Any], command: str) -> dict[str, Any]:
    """The arguments of a `bash` tool (opencode's, pi's) running `command`: its command,
    and a description where the tool's schema asks for one (opencode's requires it)."""
    schema = tool.get("parameters") or tool.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    arguments: dict[str, Any] = {"command": command}
    if isinstance(properties, dict) and "description" in properties:
        arguments["description"] = "Prints hello"
    return arguments


class Script:
    """What the fake answers: `answer(conversation, request, response_id)` -> the events.

    `conversation`: every input item of the conversation so far (earlier requests'
    inputs and the outputs of the responses they named, resolved through
    `previous_response_id`), then this request's own input."""

    def answer(
        self, conversation: list[Any], request: dict[str, Any], response_id: str
    ) -> list[dict[str, Any]]:
        raise NotImplementedError


class ShellThenAnswer(Script):
    """A shell call running `command` until its output comes back, then `answer`."""

    def __init__(self, command: str = COMMAND, answer: str = ANSWER) -> None:
        self.command = command
        self.text = answer
        self.calls = itertools.count(1)

    def answer(
        self, conversation: list[Any], request: dict[str, Any], response_id: str
    ) -> list[dict[str, Any]]:
        answered = any(
            isinstance(i, dict) and str(i.get("type", "")).endswith("_call_output")
            for i in conversation
        )
        if answered:
            return text_response(response_id, request, self.text)
        tools = declared_tools(conversation, request)
        if not tools:  # a title or summary asked on the side (opencode's): no call to make
            return text_response(response_id, request, TITLE)
        name, arguments, custom = shell_call(tools, self.command)
        call_id = f"call_fake{next(self.calls):04d}"
        return call_response(response_id, request, name, arguments, call_id, custom)


# -- the server ------------------------------------------------------------------------


def _decode_body(body: bytes, encoding: str) -> bytes:
    """A request body as sent, decoded when codex compressed it (zstd) or gzip'd it."""
    encoding = encoding.strip().lower()
    if encoding == "zstd":
        try:
            from compression import zstd  # type: ignore[import-not-found]
        except ImportError:
            from backports import zstd  # type: ignore[import-not-found,no-redef]
        return bytes(zstd.decompress(body))
    if encoding == "gzip":
        import gzip

        return gzip.decompress(body)
    return body


# uvicorn's sans-I/O websockets protocol (0.35 on); the legacy one before it
_WS = (
    "websockets-sansio"
    if importlib.util.find_spec("uvicorn.protocols.websockets.websockets_sansio_impl")
    else "websockets"
)


class FakeResponses:
    """The fake Responses upstream (module docstring). Thread-safe reads of `log`."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        websocket: bool = True,
        deflate: bool = True,
        port: int = 0,
        on_receive: Callable[[Received], None] | None = None,
    ) -> None:
        self.script = script or ShellThenAnswer()
        self.websocket = websocket
        self.log: list[Received] = []
        self.on_receive = on_receive
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._sockets = itertools.count(1)
        self._t0 = time.monotonic()
        # what each response said: its request's conversation and its output, so a later
        # request naming it by previous_response_id resolves to the whole conversation
        self.responses: dict[str, list[Any]] = {}
        self.sock = bind(port)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            interface="asgi3",
            http="h11",
            ws=_WS if websocket else "none",
            ws_per_message_deflate=deflate,
            log_level="critical",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self.thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- what it received

    def _note(self, item: Received) -> None:
        item.t = time.monotonic() - self._t0
        with self._lock:
            self.log.append(item)
        if self.on_receive is not None:
            self.on_receive(item)

    def received(self, kind: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.log if kind is None or r.kind == kind]

    def client_messages(self) -> list[Any]:
        """The client's WebSocket messages, parsed (the JSON of each, in order)."""
        return [r.json() for r in self.received("message")]

    # -- answering

    def _respond(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        previous = request.get("previous_response_id")
        earlier: list[Any] = []
        if previous is not None:
            with self._lock:
                known = self.responses.get(previous) if isinstance(previous, str) else None
            if known is None:
                return [
                    error_event(
                        "previous_response_not_found",
                        f"Previous response with id '{previous}' not found.",
                    )
                ]
            earlier = known
        items = request.get("input")
        conversation = earlier + (items if isinstance(items, list) else [])
        response_id = f"resp_fake{next(self._ids):04d}"
        if request.get("generate") is False:
            events = empty_response(response_id, request)
        else:
            events = self.script.answer(conversation, request, response_id)
        final = events[-1]
        if final.get("type") == "response.completed":
            output = final["response"].get("output") or []
            with self._lock:
                self.responses[response_id] = conversation + list(output)
        return events

    async def app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _http(self, scope: dict, receive: Callable, send: Callable) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"] + (
            ("?" + scope["query_string"].decode()) if scope["query_string"] else ""
        )
        try:
            decoded = _decode_body(body, headers.get("content-encoding", ""))
        except Exception:  # a body it cannot read is logged as sent
            decoded = body
        self._note(Received("request", path, scope["method"], headers, body=decoded))
        if scope["method"] == "POST" and scope["path"].rstrip("/").endswith("/responses"):
            try:
                request = json.loads(decoded)
            except ValueError:
                request = None
            if isinstance(request, dict):
                events = self._respond(request)
                if events[-1].get("type") == "error":
                    await _json(send, events[-1]["status"], {"error": events[-1]["error"]})
                    return
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")],
                    }
                )
                for e in events:
                    chunk = f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                return
            await _json(send, 400, {"error": {"message": "the body is no JSON object"}})
            return
        # codex asks for the model list; an empty one keeps its own defaults
        if scope["method"] == "GET" and scope["path"].rstrip("/").endswith("/models"):
            await _json(send, 200, {"object": "list", "data": [], "models": []})
            return
        await _json(send, 404, {"error": {"message": f"no route {scope['method']} {path}"}})

    async def _websocket(self, scope: dict, receive: Callable, send: Callable) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        number = next(self._sockets)
        self._note(Received("handshake", scope["path"], "GET", headers, socket=number))
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        if not scope["path"].rstrip("/").endswith("/responses"):
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                self._note(
                    Received("close", scope["path"], data=str(message.get("code")), socket=number)
                )
                return
            data = message.get("text")
            if data is None:
                data = message.get("bytes") or b""
            self._note(Received("message", scope["path"], data=data, socket=number))
            try:
                request = json.loads(data)
            except ValueError:
                request = None
            if not isinstance(request, dict) or request.get("type") != "response.create":
                continue  # e.g. codex's `response.processed` acknowledgements
            body = {k: v for k, v in request.items() if k != "type"}
            for e in self._respond(body):
                await send({"type": "websocket.send", "text": json.dumps(e)})

    # -- running

    def start(self) -> FakeResponses:
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake Responses upstream did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> FakeResponses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def _json(send: Callable, status: int, body: object) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": data})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.responses_ws")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="write what it receives here, as JSON lines")
    parser.add_argument("--no-websocket", action="store_true", help="answer upgrades 404")
    args = parser.parse_args(argv)
    # private, as every file streamscope's tests write: it holds the client's headers
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
    with FakeResponses(websocket=not args.no_websocket, port=args.port, on_receive=write) as fake:
        print(fake.base_url, flush=True)
        stop.wait()
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
