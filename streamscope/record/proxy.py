"""A loopback reverse proxy that relays every upstream read at once and records it.

A raw ASGI app (no framework) served by uvicorn, with a small asyncio HTTP/1.1 client
upstream (upstream.py): every upstream read is one recording line and one send to the
client. Nothing waits for the end of a body.

One port serves every upstream, one side per provider side (streamscope/providers.py).
The default side (OpenAI's) takes every path as it comes (its base URL keeps the
upstream's path prefix, as OPENAI_BASE_URL ends in `/v1`). Every other side lives under
its own mount (`/anthropic`, `/gemini`...): an SDK appends the API's path to its base URL,
so the mount, not the path, tells the sides apart; it is taken off before the request
goes upstream, and the recording names the upstream URL the request was sent to. A side
without an upstream of its own (Vertex AI's, by default) sends each request to the
origin its path names.

Each exchange's dialect is told once from its request (streamscope.dialects.claimant;
else the side's provider's first): it says what ends the stream and which error
document the client reads.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import unquote, urlsplit

from ..core.codings import request_body
from ..core.record import record
from ..dialects import DEFAULT, Dialect, FinalWatch, final_watch, speaker
from ..http.headers import forwardable
from ..http.loopback import LoopbackServer, until_disconnect
from ..http.websocket import Upgraded
from ..providers import DEFAULT_SIDE, CannotSign, Side, provider_of_side, side
from ..recording import RecordingWriter
from ..recording.redact import redact_url
from ..text import say
from .relay import error_reply, relay
from .upstream import UpstreamError, UpstreamPool, UpstreamResponse, UpstreamTimeout


@record(slots=True)
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
    def parse(cls, url: str, name: str = "upstream") -> Upstream:
        """ValueError, one line starting with `name`, for a URL that is not http(s)."""
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number in range
        except ValueError as e:
            raise ValueError(f"{name} {redact_url(url)!r}: {e}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{name} must be an http(s) URL, got {redact_url(url)!r}")
        userinfo, at, hostport = parts.netloc.rpartition("@")
        authorization = None
        if at:
            user, _, password = userinfo.partition(":")
            pair = f"{unquote(user)}:{unquote(password)}".encode()
            authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        return cls(f"{parts.scheme}://{hostport}", parts.path.rstrip("/"), authorization)


def _under(path: str, mount: str) -> bool:
    return path == mount or path.startswith(mount + "/")


def mount_for(mount: str, default_prefix: str) -> str:
    """Where a side lives: its mount (/anthropic), unless the default side's base URL is
    already there (`--upstream https://host/anthropic/v1`): then /streamscope-anthropic."""
    return f"/streamscope-{mount[1:]}" if _under(default_prefix, mount) else mount


def speaks_on(on: Side, path: str, body: bytes, header_names: Iterable[str]) -> Dialect:
    """The dialect of a request on side `on` (streamscope.dialects.speaker), else its
    provider's."""
    told = speaker(path, body, header_names)
    if told is not None:
        return told
    own = provider_of_side(on.name).speaks()
    return own[0] if own else DEFAULT


@record(slots=True)
class Route:
    """One side behind the proxy: requests under `mount` go to its upstream, the mount
    taken off (the default side's mount is "": its paths go as they came)."""

    side: Side
    mount: str
    upstream: Upstream
    pool: UpstreamPool
    regional: bool = False  # no upstream given: each request's path names its origin

    @property
    def prefix(self) -> str:
        """The path a client's base URL ends in: the mount, then the upstream's prefix."""
        return self.mount + self.upstream.prefix


class RecordingProxy:
    """The ASGI app. One exchange per request; the recording is written as things happen."""

    def __init__(
        self,
        upstream: Upstream,
        writer: RecordingWriter,
        timeout: float | None = 600.0,
        sides: Mapping[str, Upstream | None] | None = None,
    ) -> None:
        """`upstream`: the default side's; `sides`: the other sides it has, by name (None:
        the origin each request names, for a side that has that rule)."""
        self.writer = writer

        def pool(to: Upstream) -> UpstreamPool:
            # The read timeout bounds the wait for each upstream read (a stalled stream).
            return UpstreamPool(to.origin, timeout, connect_timeout=min(timeout or 30.0, 30.0))

        self._pool = pool
        self.default = Route(DEFAULT_SIDE, "", upstream, pool(upstream))
        self.mounted: list[Route] = []
        for name, to in (sides or {}).items():
            on = side(name)
            regional = to is None
            if to is None:
                if on.origin_of is None:
                    raise ValueError(f"the {name} side needs an upstream")
                try:
                    to = Upstream(on.origin_of("", {}), "")
                except ValueError:  # none before a request names it (Bedrock's region)
                    to = Upstream("", "")
            mount = mount_for(on.mount, upstream.prefix)
            self.mounted.append(Route(on, mount, to, pool(to), regional))
        self.regions: dict[str, UpstreamPool] = {}  # Vertex AI's, by origin, as they are met
        self.open: set[int] = set()  # exchanges without an `end` line yet
        self.said: set[str] = set()  # what was said on the terminal once (CannotSign)
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
                for route in self.routes:
                    route.pool.close()
                for regional in self.regions.values():
                    regional.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    @property
    def routes(self) -> list[Route]:
        """Every side: the default one, then those that have a mount of their own."""
        return [self.default, *self.mounted]

    def route(self, name: str) -> Route | None:
        """The side named `name`, if the proxy has it."""
        return next((r for r in self.routes if r.side.name == name), None)

    def route_of(self, path: str) -> Route:
        return next((r for r in self.mounted if _under(path, r.mount)), self.default)

    def upstream_of(
        self, route: Route, path: str, headers: Iterable[tuple[str, str]] = ()
    ) -> tuple[Upstream, UpstreamPool]:
        """Where a request on `route` goes (ValueError: a request naming no origin, such as
        a Vertex AI location that is no region)."""
        if not route.regional or route.side.origin_of is None:
            return route.upstream, route.pool
        origin = route.side.origin_of(path, {k.lower(): v for k, v in headers})
        pool = self.regions.get(origin)
        if pool is None:
            pool = self.regions[origin] = self._pool(Upstream(origin, ""))
        return Upstream(origin, ""), pool

    def speaks(self, route: Route, path: str, headers: list[tuple[str, str]]) -> Dialect:
        """The dialect of a request with no body on `route` (a WebSocket handshake)."""
        return speaks_on(route.side, path, b"", (k for k, _ in headers))

    async def upgrade(self, conn: Upgraded) -> None:
        """A WebSocket upgrade: relayed and recorded (relay.py)."""
        await relay(self, conn)

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
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        route = self.route_of(path)
        path = path[len(route.mount) :] or "/"
        query = scope.get("query_string") or b""
        target = path + (("?" + query.decode("latin-1")) if query else "")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        # told once, from the body as it decodes: what ends its stream, and the errors
        # the proxy answers with itself (the body is sent on as it came)
        readable = request_body(headers, bytes(body)).data
        speaks = speaks_on(route.side, path, readable, (k for k, _ in headers))
        try:
            upstream, pool = self.upstream_of(route, path, headers)
        except ValueError as e:
            # no origin to name: the URL the client sent to the proxy
            origin = route.upstream.origin or _own_origin(scope) + route.mount
            writer.request(ex, scope["method"], origin + target, headers, bytes(body))
            await self._fail(ex, send, 400, "upstream-error", "invalid_request", str(e), speaks)
            return
        url = upstream.origin + target
        basic = upstream.authorization
        if basic is not None and not any(k.lower() == "authorization" for k, _ in headers):
            headers.append(("authorization", basic))  # recorded (masked) as sent upstream
        # identity: the recording must hold the body as the client reads it, not gzip
        forward = [(k, v) for k, v in forwardable(headers) if k.lower() != "accept-encoding"]
        forward.append(("accept-encoding", "identity"))
        payload = bytes(body)
        client = forward
        if route.side.resign is not None:
            try:  # (botocore may read files, or ask an instance's metadata, for credentials)
                resigned = await asyncio.to_thread(
                    route.side.resign, scope["method"], url, forward, payload
                )
            except CannotSign as e:
                message = f"cannot sign the request for {upstream.origin}: {e}"
                if message not in self.said:  # once: a client retries
                    self.said.add(message)
                    say(f"{route.side.name} side: {message}")
                sent = pool.sent_headers(scope["method"], forward, payload)
                writer.request(ex, scope["method"], url, sent, payload)
                kind = "authentication_error"
                await self._fail(ex, send, 403, "upstream-error", kind, message, speaks)
                return
            if resigned is not None:
                forward = resigned
        # The request as it goes on the wire upstream: what the upstream was sent (the
        # client's own signature, where it was made again, masked in it all the same).
        sent = pool.sent_headers(scope["method"], forward, payload)
        writer.request(ex, scope["method"], url, sent, payload, client_headers=client)
        # Waiting for the upstream's head: a client that gives up meanwhile cancels it too.
        request = asyncio.ensure_future(pool.request(scope["method"], target, forward, payload))
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
            message = f"upstream timed out: {e}"
            await self._fail(ex, send, 504, "timeout", "upstream_timeout", message, speaks)
            return
        except UpstreamError as e:
            message = f"upstream unreachable: {e}"
            await self._fail(
                ex, send, 502, "upstream-error", "upstream_unreachable", message, speaks
            )
            return
        final = final_watch(speaks, target, readable, response.status, response.headers)
        await self._relay(ex, response, receive, send, final)

    async def _fail(
        self,
        ex: int,
        send: Callable,
        status: int,
        reason: str,
        kind: str,
        message: str,
        speaks: Dialect,
    ) -> None:
        headers, body = error_reply(speaks, status, kind, message)
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
        self,
        ex: int,
        response: UpstreamResponse,
        receive: Callable,
        send: Callable,
        final: FinalWatch,
    ) -> None:
        writer = self.writer
        headers = response.headers
        writer.response(ex, response.status, headers)
        # Recorded as received; passed on as the next hop must get it (forwardable).
        out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in forwardable(headers)]
        # None until the pump ends on its own: uvicorn cancels this task on shutdown.
        reason: str | None = None
        error: str | None = None

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
                # The SDK stops reading at its final event; the stream itself was whole.
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


def _own_origin(scope: dict) -> str:
    """The proxy's own origin, as a request to it names it."""
    host, port = scope.get("server") or ("127.0.0.1", 0)
    return f"http://{host}:{port}"


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
        sides: Mapping[str, Upstream | None] | None = None,
    ):
        self.proxy = RecordingProxy(upstream, writer, timeout, sides)
        super().__init__(self.proxy, port, sock, upgrade=self.proxy.upgrade)

    @property
    def routes(self) -> list[Route]:
        """Its sides, the default one first."""
        return self.proxy.routes

    @property
    def base_url(self) -> str:
        """What a client of the default side (OpenAI's) uses as its base URL: the
        upstream's path prefix kept."""
        return self._base_url(self.app.default)

    def base_url_of(self, name: str) -> str | None:
        """What a client of the side named `name` uses (None: the proxy has no such
        side): the mount, then the upstream's path prefix; the SDKs append the API's."""
        route = self.app.route(name)
        return None if route is None else self._base_url(route)

    def _base_url(self, route: Route) -> str:
        return f"http://127.0.0.1:{self.port}{route.prefix}"

    def stop(self, why: str | None = None) -> None:
        """Stop serving; exchanges still open get an end line saying `why` we stopped."""
        if why is not None:
            self.app.stopped_by = why
        super().stop()
        self.app.close_open()
