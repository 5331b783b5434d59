"""A loopback reverse proxy that relays every upstream read at once and records it.

A raw ASGI app (no framework) served by uvicorn, with a small asyncio HTTP/1.1 client
upstream (upstream.py): every upstream read is one recording line and one send to the
client. Nothing waits for the end of a body.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import orjson

from ..recording import RecordingWriter
from ..recording.redact import redact_url
from .loopback import LoopbackServer, bind, until_disconnect  # noqa: F401 (bind: tests)
from .upstream import HOP_BY_HOP, UpstreamError, UpstreamPool, UpstreamResponse, UpstreamTimeout


@dataclass(slots=True)
class Upstream:
    """Where requests go: scheme://host[:port] plus the path prefix the client keeps.

    Userinfo (`user:password@`) never stays in the origin, which is recorded, logged and
    sent as `Host`: like curl and httpx, it becomes `Authorization: Basic`, sent when the
    client sends no Authorization of its own.
    """

    origin: str
    prefix: str
    authorization: str | None = None

    @classmethod
    def parse(cls, url: str) -> Upstream:
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number in range
        except ValueError as e:
            raise ValueError(f"upstream {redact_url(url)!r}: {e}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must be an http(s) URL, got {redact_url(url)!r}")
        userinfo, at, hostport = parts.netloc.rpartition("@")
        authorization = None
        if at:
            user, _, password = userinfo.partition(":")
            pair = f"{unquote(user)}:{unquote(password)}".encode()
            authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        return cls(f"{parts.scheme}://{hostport}", parts.path.rstrip("/"), authorization)


_DONE = re.compile(rb"^data: ?\[DONE\]\r?\n", re.MULTILINE)


def _may_end(data: bytes) -> bool:
    """`b"[DONE]" in data`, at memchr speed on the usual read: the substring search costs
    ~1 ns a byte on JSON events (their `]`s defeat its skips), a second of CPU per GB
    relayed; the `D`s of a read are few (JSON keys are lower case), so each is looked at.
    Past 64 of them the substring search takes the rest of the read."""
    find = data.find
    i = find(b"D")
    looked = 0
    while i >= 0:
        if data[i - 1 : i + 5] == b"[DONE]":
            return True
        looked += 1
        if looked > 64:
            return find(b"[DONE]", i) >= 0
        i = find(b"D", i + 1)
    return False


@dataclass(slots=True)
class FinalEvent:
    """Whether a body's final event (SSE `data: [DONE]`), or its whole body, was relayed."""

    relayed: bool = False
    _tail: bytes = b""

    def seen(self, data: bytes) -> None:
        """Called after each relayed read; cheap unless the read may hold `[DONE]`."""
        if self.relayed:
            return
        if (_may_end(data) and _DONE.search(data)) or (
            self._tail and _DONE.search(self._tail + data[:16])  # split across two reads
        ):
            self.relayed = True
        self._tail = data[-16:]


def _error_body(kind: str, message: str) -> bytes:
    return orjson.dumps(
        {"error": {"message": f"streamscope: {message}", "type": kind, "code": None}}
    )


class RecordingProxy:
    """The ASGI app. One exchange per request; the recording is written as things happen."""

    def __init__(
        self, upstream: Upstream, writer: RecordingWriter, timeout: float | None = 600.0
    ) -> None:
        self.upstream = upstream
        self.writer = writer
        # The read timeout bounds the wait for each upstream read (a stalled stream).
        self.pool = UpstreamPool(
            upstream.origin, timeout, connect_timeout=min(timeout or 30.0, 30.0)
        )
        self.open: set[int] = set()  # exchanges without an `end` line yet
        self.exchanges = 0
        # The `error` of an exchange cut by streamscope stopping; the stopper names why.
        self.stopped_by = "streamscope stopped"

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        await self._exchange(scope, receive, send)

    async def _lifespan(self, receive: Callable, send: Callable) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.pool.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _exchange(self, scope: dict, receive: Callable, send: Callable) -> None:
        writer = self.writer
        ex = writer.new_exchange()
        self.exchanges += 1
        self.open.add(ex)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                writer.end(
                    ex, "client-closed", "the client closed before sending its whole request"
                )
                self.open.discard(ex)
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string") or b""
        target = path.decode("latin-1") + (("?" + query.decode("latin-1")) if query else "")
        url = self.upstream.origin + target
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        basic = self.upstream.authorization
        if basic is not None and not any(k.lower() == "authorization" for k, _ in headers):
            headers.append(("authorization", basic))  # recorded (masked) as sent upstream
        writer.request(ex, scope["method"], url, headers, bytes(body))
        forward = [
            (k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "host"
        ]
        # identity: the recording must hold the body as the client reads it, not gzip
        forward = [(k, v) for k, v in forward if k.lower() != "accept-encoding"]
        forward.append(("accept-encoding", "identity"))
        # Waiting for the upstream's head: a client that gives up meanwhile cancels it too.
        request = asyncio.ensure_future(
            self.pool.request(scope["method"], target, forward, bytes(body))
        )
        gone, _ = await until_disconnect(asyncio.shield(request), receive)
        if gone:
            request.cancel()
            with contextlib.suppress(BaseException):
                (await request).close()
            writer.end(ex, "client-closed", "the client went away before the upstream answered")
            self.open.discard(ex)
            return
        try:
            response = request.result()
        except UpstreamTimeout as e:
            await self._fail(
                ex, send, 504, "timeout", "upstream_timeout", f"upstream timed out: {e}"
            )
            return
        except UpstreamError as e:
            await self._fail(
                ex,
                send,
                502,
                "upstream-error",
                "upstream_unreachable",
                f"upstream unreachable: {e}",
            )
            return
        await self._relay(ex, response, receive, send)

    async def _fail(
        self, ex: int, send: Callable, status: int, reason: str, kind: str, message: str
    ) -> None:
        body = _error_body(kind, message)
        headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
        self.writer.response(ex, status, headers)
        self.writer.chunk(ex, body)
        self.writer.end(ex, reason, message)
        self.open.discard(ex)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(k.encode(), v.encode()) for k, v in headers],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _relay(
        self, ex: int, response: UpstreamResponse, receive: Callable, send: Callable
    ) -> None:
        writer = self.writer
        headers = response.headers
        writer.response(ex, response.status, headers)
        out = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in headers
            if k.lower() not in HOP_BY_HOP
        ]
        # None until the pump ends on its own: uvicorn cancels this task on shutdown.
        reason: str | None = None
        error: str | None = None
        final = FinalEvent()

        async def pump() -> None:
            await send({"type": "http.response.start", "status": response.status, "headers": out})
            chunk_line = writer.chunk
            seen = final.seen
            async for data in response.reads():  # one item per upstream read
                # recorded first: the recording holds every byte the client was given
                chunk_line(ex, data)
                await send({"type": "http.response.body", "body": data, "more_body": True})
                seen(data)
            final.relayed = True  # the whole body, whatever its kind
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        try:
            gone, exc = await until_disconnect(pump(), receive)
            left = gone or (exc is not None and not isinstance(exc, UpstreamError))
            if left and final.relayed:
                # The SDK stops reading at data: [DONE]; the stream itself was whole.
                reason, error = "complete", "the client closed after the final event"
            elif gone:
                reason, error = "client-closed", "the client disconnected mid-response"
            elif isinstance(exc, UpstreamTimeout):
                reason, error = "timeout", str(exc)
            elif isinstance(exc, UpstreamError):
                reason, error = "upstream-error", str(exc)
            elif exc is not None:  # sending to the client failed: it went away
                reason, error = "client-closed", f"{type(exc).__name__}: {exc}"
            else:
                reason, error = "complete", None
        finally:
            response.close()  # an unfinished upstream request is cancelled with its connection
            if reason is None:
                reason, error = "recorder-stopped", self.stopped_by
            writer.end(ex, reason, error)
            self.open.discard(ex)
        if reason in ("upstream-error", "timeout"):
            # Let the client see the connection fail, as it would without us.
            raise ConnectionAbortedError(error)

    def close_open(self) -> None:
        """Write a `recorder-stopped` end line for every exchange still open (on shutdown)."""
        for ex in sorted(self.open):
            self.writer.end(ex, "recorder-stopped", self.stopped_by)
        self.open.clear()


class ProxyServer(LoopbackServer):
    """The recording proxy on 127.0.0.1."""

    name = "proxy"

    def __init__(
        self,
        upstream: Upstream,
        writer: RecordingWriter,
        port: int = 0,
        timeout: float | None = 600.0,
        sock: socket.socket | None = None,
    ):
        super().__init__(RecordingProxy(upstream, writer, timeout), port, sock)

    @property
    def base_url(self) -> str:
        """What a client uses as its base URL: the upstream's path prefix kept."""
        return f"http://127.0.0.1:{self.port}{self.app.upstream.prefix}"

    def stop(self, why: str | None = None) -> None:
        """Stop serving; exchanges still open get an end line saying `why` we stopped."""
        if why is not None:
            self.app.stopped_by = why
        super().stop()
        self.app.close_open()
