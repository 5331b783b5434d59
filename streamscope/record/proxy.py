"""A loopback reverse proxy that relays every upstream read at once and records it.

A raw ASGI app (no framework) served by uvicorn, with a small asyncio HTTP/1.1 client
upstream (upstream.py): every upstream read is one recording line and one send to the
client. Nothing waits for the end of a body.

One port serves every upstream. The OpenAI side takes every path as it comes (its base
URL keeps the upstream's path prefix, as OPENAI_BASE_URL ends in `/v1`). The Anthropic
side lives under its own mount, `/anthropic`: the anthropic SDK appends `/v1/messages` to
its base URL, so the mount, not the path, tells the two apart; it is taken off before the
request goes upstream, and the recording names the upstream URL the request was sent to.
Google's clients get two mounts the same way: `/gemini` (the Gemini API of AI Studio,
GOOGLE_GEMINI_BASE_URL) and `/vertex` (Vertex AI, GOOGLE_VERTEX_BASE_URL), whose upstream
is, unless one is given, the region each request's path names (`/locations/{l}/`).
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

from ..recording import RecordingWriter
from ..recording.redact import redact_url
from .final import FinalEvent, final_event
from .loopback import LoopbackServer, bind, until_disconnect  # noqa: F401 (bind: tests)
from .shapes import GOOGLE, OPENAI, error_document, shape_of
from .upstream import (
    UpstreamError,
    UpstreamPool,
    UpstreamResponse,
    UpstreamTimeout,
    forwardable,
)


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


def _error_body(kind: str, message: str, shape: str, status: int) -> bytes:
    """An error in the shape the client's own API uses, so its SDK shows the message."""
    return error_document(shape, status, kind, f"streamscope: {message}")


ANTHROPIC_MOUNT, GEMINI_MOUNT, VERTEX_MOUNT = "/anthropic", "/gemini", "/vertex"


def _under(path: str, mount: str) -> bool:
    return path == mount or path.startswith(mount + "/")


def mount_for(mount: str, openai_prefix: str) -> str:
    """Where a side lives: its mount (/anthropic), unless the OpenAI side's base URL is
    already there (`--upstream https://host/anthropic/v1`): then /streamscope-anthropic."""
    return f"/streamscope-{mount[1:]}" if _under(openai_prefix, mount) else mount


def anthropic_mount(openai_prefix: str) -> str:
    """Where the Anthropic side lives (mount_for)."""
    return mount_for(ANTHROPIC_MOUNT, openai_prefix)


# Vertex AI's endpoints: `global` (and a path that names no location, as express mode's
# `/v1beta1/publishers/google/models/...`) at aiplatform.googleapis.com, the multi-regions
# at their representative endpoints, every region at {location}-aiplatform.googleapis.com.
VERTEX_GLOBAL = "https://aiplatform.googleapis.com"
_MULTI_REGIONS = frozenset({"us", "eu"})
# A location is a host label here: nothing else may reach the origin.
_LOCATION = re.compile(r"[a-z][a-z0-9-]{0,62}")


def vertex_origin(path: str) -> str:
    """The Vertex AI origin for a request path, from its `/locations/{location}/` segment.
    ValueError for a location that is no region name."""
    parts = path.split("?", 1)[0].split("/")
    try:
        location = parts[parts.index("locations", 1) + 1]
    except (ValueError, IndexError):
        return VERTEX_GLOBAL
    if location == "global":
        return VERTEX_GLOBAL
    if _LOCATION.fullmatch(location) is None or location.endswith("-"):
        raise ValueError(f"location {location[:64]!r} in the path is no Vertex AI region")
    if location in _MULTI_REGIONS:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


@dataclass(frozen=True, slots=True)
class Google:
    """The recorder's Google sides: the Gemini API's upstream, and Vertex AI's (None: the
    region each request's path names, vertex_origin)."""

    gemini: Upstream
    vertex: Upstream | None = None


@dataclass(slots=True)
class Route:
    """One upstream behind the proxy: requests under `mount` go there, the mount taken off
    (the OpenAI side's mount is "": its paths go as they came)."""

    mount: str
    upstream: Upstream
    pool: UpstreamPool
    google: bool = False  # the proxy's own errors in Google's shape
    regional: bool = False  # Vertex AI's regions: the upstream is the one the path names

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
        anthropic: Upstream | None = None,
        google: Google | None = None,
    ) -> None:
        self.writer = writer

        def pool(to: Upstream) -> UpstreamPool:
            # The read timeout bounds the wait for each upstream read (a stalled stream).
            return UpstreamPool(to.origin, timeout, connect_timeout=min(timeout or 30.0, 30.0))

        self._pool = pool
        self.openai = Route("", upstream, pool(upstream))
        self.anthropic = (
            Route(anthropic_mount(upstream.prefix), anthropic, pool(anthropic))
            if anthropic is not None
            else None
        )
        self.gemini = self.vertex = None
        if google is not None:
            gemini, vertex = google.gemini, google.vertex
            self.gemini = Route(
                mount_for(GEMINI_MOUNT, upstream.prefix), gemini, pool(gemini), google=True
            )
            regional = vertex is None
            vertex = vertex or Upstream(VERTEX_GLOBAL, "")
            self.vertex = Route(
                mount_for(VERTEX_MOUNT, upstream.prefix), vertex, pool(vertex), True, regional
            )
        self.regions: dict[str, UpstreamPool] = {}  # Vertex AI's, by origin, as they are met
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
                for route in self.routes:
                    route.pool.close()
                for regional in self.regions.values():
                    regional.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    @property
    def routes(self) -> list[Route]:
        """Every side: the OpenAI one, then those that have a mount of their own."""
        return [self.openai, *self.mounted]

    @property
    def mounted(self) -> list[Route]:
        return [r for r in (self.anthropic, self.gemini, self.vertex) if r is not None]

    def _route(self, path: str) -> Route:
        return next((r for r in self.mounted if _under(path, r.mount)), self.openai)

    def _upstream(self, route: Route, path: str) -> tuple[Upstream, UpstreamPool]:
        """Where a request on `route` goes (ValueError: a Vertex AI path naming no region)."""
        if not route.regional:
            return route.upstream, route.pool
        origin = vertex_origin(path)
        pool = self.regions.get(origin)
        if pool is None:
            pool = self.regions[origin] = self._pool(Upstream(origin, ""))
        return Upstream(origin, ""), pool

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
        route = self._route(path)
        path = path[len(route.mount) :] or "/"
        query = scope.get("query_string") or b""
        target = path + (("?" + query.decode("latin-1")) if query else "")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        names = [k for k, _ in headers]
        shape = shape_of(names, path)  # of the errors the proxy answers with itself
        if route.google and shape == OPENAI:
            shape = GOOGLE
        try:
            upstream, pool = self._upstream(route, path)
        except ValueError as e:
            writer.request(
                ex, scope["method"], route.upstream.origin + target, headers, bytes(body)
            )
            await self._fail(ex, send, 400, "upstream-error", "invalid_request", str(e), shape)
            return
        url = upstream.origin + target
        basic = upstream.authorization
        if basic is not None and not any(k.lower() == "authorization" for k, _ in headers):
            headers.append(("authorization", basic))  # recorded (masked) as sent upstream
        # identity: the recording must hold the body as the client reads it, not gzip
        forward = [(k, v) for k, v in forwardable(headers) if k.lower() != "accept-encoding"]
        forward.append(("accept-encoding", "identity"))
        # The request as it goes on the wire upstream: what the upstream was sent.
        payload = bytes(body)
        sent = pool.sent_headers(scope["method"], forward, payload)
        writer.request(ex, scope["method"], url, sent, payload)
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
            await self._fail(ex, send, 504, "timeout", "upstream_timeout", message, shape)
            return
        except UpstreamError as e:
            message = f"upstream unreachable: {e}"
            await self._fail(
                ex, send, 502, "upstream-error", "upstream_unreachable", message, shape
            )
            return
        final = final_event((k for k, _ in headers), path)
        await self._relay(ex, response, receive, send, final)

    async def _fail(
        self,
        ex: int,
        send: Callable,
        status: int,
        reason: str,
        kind: str,
        message: str,
        shape: str,
    ) -> None:
        body = _error_body(kind, message, shape, status)
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
        self,
        ex: int,
        response: UpstreamResponse,
        receive: Callable,
        send: Callable,
        final: FinalEvent,
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
        anthropic: Upstream | None = None,
        google: Google | None = None,
    ):
        super().__init__(RecordingProxy(upstream, writer, timeout, anthropic, google), port, sock)

    @property
    def base_url(self) -> str:
        """What an OpenAI client uses as its base URL: the upstream's path prefix kept."""
        return f"http://127.0.0.1:{self.port}{self.app.openai.prefix}"

    @property
    def anthropic_base_url(self) -> str | None:
        """What an Anthropic client uses (None without an Anthropic upstream): the mount,
        then the upstream's path prefix."""
        return self._base_url(self.app.anthropic)

    @property
    def gemini_base_url(self) -> str | None:
        """What a Gemini API client uses (GOOGLE_GEMINI_BASE_URL; None without Google
        sides): the SDKs append `/v1beta/models/...` themselves."""
        return self._base_url(self.app.gemini)

    @property
    def vertex_base_url(self) -> str | None:
        """What a Vertex AI client uses (GOOGLE_VERTEX_BASE_URL; None without Google
        sides): the SDKs append `/v1beta1/projects/...` themselves."""
        return self._base_url(self.app.vertex)

    def _base_url(self, route: Route | None) -> str | None:
        return None if route is None else f"http://127.0.0.1:{self.port}{route.prefix}"

    def stop(self, why: str | None = None) -> None:
        """Stop serving; exchanges still open get an end line saying `why` we stopped."""
        if why is not None:
            self.app.stopped_by = why
        super().stop()
        self.app.close_open()
