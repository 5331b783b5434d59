"""A small HTTP/1.1 client for the recorder's upstream side, built on asyncio streams.

Why not httpx: it hands the body over one HTTP chunk at a time, parsing each through
h11, which costs the proxy more per event than the client it serves spends. Here every
socket read is de-framed (chunked or content-length) in one pass and handed on whole,
which is also exactly what a recording line is: one upstream read. The head is parsed
strictly (interim 1xx responses skipped, malformed framing an UpstreamError), and the
environment is honoured as httpx honours it: HTTP_PROXY / HTTPS_PROXY / NO_PROXY (CONNECT
through the proxy for https) and SSL_CERT_FILE / SSL_CERT_DIR (else certifi's roots,
which httpx and the openai SDK trust).
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import socket
import ssl
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import field
from urllib.parse import unquote, urlsplit

import certifi

from ..core.record import record

# Up to 256 KiB a read (the size asyncio's transport reads at once): a fast stream is
# relayed in fewer, bigger reads, and each read costs a recording line, a send to the
# client and a wake-up; a slow one still gets each event as it comes.
_READ = 1 << 18
_HEAD_LIMIT = 1 << 16
# Set by the proxy itself (or hop-by-hop): never copied from the client's request.
_OWN = {
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "upgrade",
    "expect",
}


class UpstreamError(Exception):
    """The upstream could not be reached, or broke the protocol or the connection."""


class UpstreamTimeout(UpstreamError):
    """No byte arrived from the upstream within the read timeout."""


class UpstreamClosed(UpstreamError):
    """The connection was closed or reset before any byte of a response: on a kept-alive
    connection, the upstream had closed it meanwhile and the request can be retried."""


_STATUS_LINE = re.compile(r"HTTP/1\.[01] (\d{3})(?: .*)?")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")


# A size line between two chunks, as the fast path splits on it: CRLF (the end of the
# previous chunk's data), hex digits, CRLF. No extensions: those take the exact loop.
_BETWEEN = re.compile(rb"\r\n([0-9A-Fa-f]{1,16})\r\n")


_SIZES: dict[bytes, int] = {}  # hex size line -> size, as the fast path has met them


def _size(digits: bytes) -> int:
    """The value of 1-16 hex digits (as _BETWEEN matched them), remembered."""
    if len(_SIZES) >= 4096:
        _SIZES.clear()
    value = _SIZES[digits] = int(digits, 16)
    return value


class ChunkedDecoder:
    """Incremental `Transfer-Encoding: chunked` decoder: bytes in, body bytes out.

    A read holds hundreds of small chunks (one per SSE event), and a Python step per chunk
    cost the proxy more than the client it serves spends. So the chunks between two size
    lines are found by one regex split and kept only when every piece is as long as its
    size line says: then the split is exactly what the chunk-by-chunk loop would decode.
    Anything else (extensions, a split inside data, the last chunk of a read, the end)
    goes through the exact loop.
    """

    __slots__ = ("buf", "left", "done", "state", "error", "fast")

    def __init__(self, fast: bool = True) -> None:
        self.buf = b""
        self.left = 0  # bytes of the current chunk still to come
        self.state = "size"  # size | data | crlf | trailer
        self.done = False
        self.error: UpstreamError | None = None  # malformed framing: nothing more is decoded
        self.fast = fast  # False: chunk by chunk only (the tests' reference)

    def feed(self, data: bytes) -> bytes:
        """The body bytes in `data`. On malformed framing, `error` is set and the bytes
        before it are still returned: the client got them too, so they are recorded."""
        out: list[bytes] = []
        if self.error is None:
            try:
                self._feed(data, out)
            except UpstreamError as e:
                self.error = e
        return b"".join(out)

    def _feed(self, data: bytes, out: list[bytes]) -> None:
        buf = self.buf + data if self.buf else data
        pos, n = 0, len(buf)
        fast = self.fast
        while pos < n and not self.done:
            state = self.state
            if fast and (state == "crlf" or state == "size") and n - pos > 256:
                # The rest of the read, as the split sees it: starting with a CRLF.
                rest = buf[pos:] if state == "crlf" else b"\r\n" + buf[pos:]
                last = self._split(rest, out)
                if last is not None:
                    buf, pos, n = last, 0, len(last)
                    continue
                fast = False  # not this read: the exact loop takes it from here
            if state == "data":
                take = min(self.left, n - pos)
                out.append(buf[pos : pos + take])
                pos += take
                self.left -= take
                if self.left == 0:
                    self.state = "crlf"
            elif state == "crlf":
                if n - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise UpstreamError("malformed chunked body (no CRLF after a chunk)")
                pos += 2
                self.state = "size"
            else:  # size line, or trailer lines after the last chunk
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    if n - pos > 4096:
                        raise UpstreamError("malformed chunked body (size line too long)")
                    break
                line = buf[pos:end]
                pos = end + 2
                if state == "trailer":
                    if not line:
                        self.done = True
                    continue
                digits = line.split(b";", 1)[0].strip(b" \t")
                if not _HEX.fullmatch(digits):  # int(x, 16) would take "-1", "0x1", "1_0"
                    raise UpstreamError(f"malformed chunk size {line[:20]!r}")
                size = int(digits, 16)
                if size == 0:
                    self.state = "trailer"
                else:
                    self.left, self.state = size, "data"
        self.buf = buf[pos:]

    def _split(self, rest: bytes, out: list[bytes]) -> bytes | None:
        """Decode the whole chunks of `rest` (which starts at a CRLF before a size line)
        in one split; the last chunk's bytes are returned for the exact loop, with the
        state set after its size line. None, with nothing done, when the split is not
        exactly the chunk-by-chunk decoding."""
        parts = _BETWEEN.split(rest)  # ["", size, data, size, data, ..., size, data]
        if len(parts) < 5 or parts[0]:
            return None
        datas = parts[2:-2:2]
        lengths = list(map(len, datas))
        try:  # a few distinct sizes recur: a dict lookup is cheaper than int() per chunk
            sizes = list(map(_SIZES.__getitem__, parts[1:-2:2]))
        except KeyError:
            sizes = list(map(_size, parts[1:-2:2]))
        if 0 in lengths or lengths != sizes:  # a zero size ends the body: exact loop
            return None
        out.append(b"".join(datas))
        size = int(parts[-2], 16)
        if size == 0:
            self.state = "trailer"
        else:
            self.left, self.state = size, "data"
        return parts[-1]


@record
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def close(self) -> None:
        self.writer.close()


@record
class UpstreamResponse:
    status: int
    headers: list[tuple[str, str]]
    _pool: UpstreamPool
    _conn: _Connection
    _framing: str  # chunked | length | close | none
    _left: int = 0
    _first: bytes = b""  # body bytes that came with the head
    _reusable: bool = True
    _finished: bool = field(default=False)

    async def reads(self) -> AsyncIterator[bytes]:
        """The body, one item per upstream socket read (de-framed, never empty)."""
        conn, pool = self._conn, self._pool
        decoder = ChunkedDecoder() if self._framing == "chunked" else None
        left = self._left
        pending = self._first
        if self._framing == "none":
            self._done()
            return
        while True:
            if pending:
                data, pending = pending, b""
            else:
                data = await pool.read(conn)
                if not data:
                    if self._framing == "close":
                        self._reusable = False
                        self._done()
                        return
                    raise UpstreamError("the upstream closed the connection mid-body")
            if decoder is not None:
                body = decoder.feed(data)
                if body:
                    yield body
                if decoder.error is not None:  # close() then drops the connection
                    raise decoder.error
                if decoder.done:
                    self._done()
                    return
            elif self._framing == "length":
                body = data[:left]
                left -= len(body)
                if body:
                    yield body
                if left <= 0:
                    self._done()
                    return
            else:
                yield data

    def _done(self) -> None:
        self._finished = True
        if self._reusable:
            self._pool.release(self._conn)
        else:
            self._conn.close()

    def close(self) -> None:
        """Drop the connection unless the body was read to its end (a cancelled request)."""
        if not self._finished:
            self._finished = True
            self._conn.close()


@record
class Switched:
    """An upstream that answered an upgrade with `101 Switching Protocols`: its head as
    parsed and as its bytes came, the bytes that followed it in the same read, and the
    connection, now the session's (never pooled)."""

    headers: list[tuple[str, str]]
    head: bytes
    first: bytes
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter


# Hop-by-hop headers an upgrade does not pass on (Connection and Upgrade it does).
_NOT_UPGRADED = {"host", "content-length", "transfer-encoding", "keep-alive", "te", "trailer"}


class UpstreamPool:
    """Keep-alive connections to one origin (http or https)."""

    def __init__(
        self, origin: str, timeout: float | None = 600.0, connect_timeout: float = 30.0
    ) -> None:
        parts = urlsplit(origin)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.https else 80)
        self.netloc = parts.netloc
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.idle: list[_Connection] = []
        self._ssl: ssl.SSLContext | None = None
        self._route_error: str | None = None  # a proxy URL we cannot use: said per request
        try:
            self.route = _Route.of(parts.scheme, self.host, self.port)
        except UpstreamError as e:
            self.route, self._route_error = _Route(self.host, self.port), str(e)

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            try:
                self._ssl = _ssl_context()
            except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
                raise UpstreamError(f"cannot load the CA certificates: {e}") from None
        return self._ssl

    async def _connect(self) -> _Connection:
        route = self.route
        where = f"the proxy {route.via}" if route.via else self.netloc
        if self._route_error is not None:
            raise UpstreamError(self._route_error)
        context = self._context() if self.https else None
        try:
            if route.tunnel:
                opening = self._tunnel(context)
            else:
                opening = asyncio.open_connection(
                    route.host,
                    route.port,
                    ssl=context,
                    server_hostname=self.host if self.https else None,
                    limit=_READ,
                )
            reader, writer = await asyncio.wait_for(opening, self.connect_timeout)
        except asyncio.TimeoutError:
            raise UpstreamTimeout(f"connecting to {where} timed out") from None
        except OSError as e:
            raise UpstreamError(f"cannot connect to {where}: {e.strerror or e}") from None
        return _Connection(reader, writer)

    async def _tunnel(
        self, context: ssl.SSLContext | None
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """CONNECT through the proxy, then TLS to the origin inside the tunnel."""
        loop = asyncio.get_running_loop()
        route = self.route
        (family, kind, proto, _, address), *_ = await loop.getaddrinfo(
            route.host, route.port, type=socket.SOCK_STREAM
        )
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, address)
            head = [f"CONNECT {self.host}:{self.port} HTTP/1.1", f"Host: {self.host}:{self.port}"]
            if route.proxy_auth:
                head.append(f"Proxy-Authorization: {route.proxy_auth}")
            await loop.sock_sendall(sock, ("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            answer = b""
            while b"\r\n\r\n" not in answer:  # the proxy says nothing more until TLS starts
                data = await loop.sock_recv(sock, 4096)
                if not data or len(answer) > _HEAD_LIMIT:
                    raise UpstreamError(f"the proxy {route.via} closed the CONNECT tunnel")
                answer += data
            status, _ = _parse_head(answer[: answer.index(b"\r\n\r\n")])
            if status != 200:
                raise UpstreamError(f"the proxy {route.via} refused CONNECT: HTTP {status}")
            return await asyncio.open_connection(
                sock=sock, ssl=context, server_hostname=self.host, limit=_READ
            )
        except BaseException:
            sock.close()
            raise

    async def read(self, conn: _Connection) -> bytes:
        # The read timeout is a timer that cancels this task, not asyncio.wait_for: that
        # wraps every read in a new task, which cost more than the read (28 us against
        # 3 us a read, and a long stream makes thousands of reads).
        timer, expired = None, False
        if self.timeout is not None:
            task = asyncio.current_task()
            assert task is not None

            def expire() -> None:
                nonlocal expired
                expired = True
                task.cancel()

            timer = asyncio.get_running_loop().call_later(self.timeout, expire)
        try:
            return await conn.reader.read(_READ)
        except asyncio.CancelledError:
            if not expired:
                raise
            if hasattr(task, "uncancel"):  # 3.11+: the cancel was ours, and is handled
                task.uncancel()
            conn.close()
            raise UpstreamTimeout(f"no upstream read within {self.timeout:g} s") from None
        except ConnectionResetError as e:
            conn.close()
            raise UpstreamClosed(f"reading from {self.netloc}: {e.strerror or e}") from None
        except OSError as e:
            conn.close()
            raise UpstreamError(f"reading from {self.netloc}: {e.strerror or e}") from None
        finally:
            if timer is not None:
                timer.cancel()

    def release(self, conn: _Connection) -> None:
        if len(self.idle) < 32 and not conn.reader.at_eof():
            self.idle.append(conn)
        else:
            conn.close()

    def sent_headers(
        self, method: str, headers: list[tuple[str, str]], body: bytes
    ) -> list[tuple[str, str]]:
        """The headers `request` sends the origin for these, in order: Host, then the
        given ones but those it frames itself, then the body's Content-Length."""
        sent = [("Host", self.netloc)]
        sent += [(k, v) for k, v in headers if k.lower() not in _OWN]
        if body or method not in ("GET", "HEAD", "DELETE", "OPTIONS"):
            sent.append(("Content-Length", str(len(body))))
        return sent

    async def request(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> UpstreamResponse:
        if self.route.absolute:  # plain http through a proxy: the absolute URL
            target = f"http://{self.netloc}{target}"
        head = [f"{method} {target} HTTP/1.1"]
        head += [f"{k}: {v}" for k, v in self.sent_headers(method, headers, body)]
        if self.route.absolute and self.route.proxy_auth:  # for the proxy, not the origin
            head.append(f"Proxy-Authorization: {self.route.proxy_auth}")
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        # A kept-alive connection the upstream has meanwhile closed fails on first use,
        # before any byte of a response: retry once on a fresh one (nothing was answered).
        for attempt in (0, 1):
            reused = bool(self.idle) and attempt == 0
            conn = self.idle.pop() if reused else await self._connect()
            try:
                conn.writer.write(raw)
                await conn.writer.drain()
            except OSError as e:
                conn.close()
                if reused:
                    continue
                raise UpstreamError(f"sending to {self.netloc}: {e.strerror or e}") from None
            try:
                return await self._head(conn, method)
            except UpstreamClosed:
                if reused:
                    continue
                raise
        raise UpstreamError(f"cannot reach {self.netloc}")  # pragma: no cover

    def upgrade_headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The headers `upgrade` sends the origin: Host, then the client's but the
        hop-by-hop ones (Connection and Upgrade are the request, and go)."""
        out = [("Host", self.netloc)]
        return out + [
            (k, v)
            for k, v in headers
            if k.lower() not in _NOT_UPGRADED and not k.lower().startswith("proxy-")
        ]

    async def upgrade(
        self, target: str, headers: list[tuple[str, str]]
    ) -> Switched | UpstreamResponse:
        """A WebSocket handshake (GET with `Upgrade: websocket`) on a connection of its
        own: Switched when the origin took it, else its answer as an ordinary response."""
        if self.route.absolute:
            target = f"http://{self.netloc}{target}"
        head = [f"GET {target} HTTP/1.1", *(f"{k}: {v}" for k, v in self.upgrade_headers(headers))]
        if self.route.absolute and self.route.proxy_auth:
            head.append(f"Proxy-Authorization: {self.route.proxy_auth}")
        conn = await self._connect()
        try:
            conn.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            await conn.writer.drain()
            buf = b""
            while True:
                end = buf.find(b"\r\n\r\n")
                if end >= 0:
                    status, parsed = _parse_head(buf[:end])
                    if status == 101:
                        raw, rest = buf[: end + 4], buf[end + 4 :]
                        return Switched(parsed, raw, rest, conn.reader, conn.writer)
                    if status >= 200:
                        framing, left, _ = _framing("GET", status, parsed)
                        first = buf[end + 4 :]
                        return UpstreamResponse(
                            status, parsed, self, conn, framing, left, first, False
                        )
                    buf = buf[end + 4 :]  # an interim answer: the real one follows
                    continue
                if len(buf) > _HEAD_LIMIT:
                    raise UpstreamError("the upstream's response head is too large")
                data = await self.read(conn)
                if not data:
                    what = "mid-head" if buf else "before answering the upgrade"
                    raise UpstreamError(f"the upstream closed the connection {what}")
                buf += data
        except OSError as e:
            conn.close()
            raise UpstreamError(f"sending to {self.netloc}: {e.strerror or e}") from None
        except BaseException:
            conn.close()
            raise

    async def _head(self, conn: _Connection, method: str) -> UpstreamResponse:
        try:
            status, headers, first = await self._final_head(conn)
            framing, left, reusable = _framing(method, status, headers)
        except UpstreamError:
            conn.close()
            raise
        return UpstreamResponse(status, headers, self, conn, framing, left, first, reusable)

    async def _final_head(self, conn: _Connection) -> tuple[int, list[tuple[str, str]], bytes]:
        """The status, headers and first body bytes of the final response (1xx skipped)."""
        buf = b""
        answered = False  # any byte of a response: a later close is not retriable
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > _HEAD_LIMIT:
                    raise UpstreamError("the upstream's response head is too large")
                try:
                    data = await self.read(conn)
                except UpstreamClosed as e:
                    if answered:
                        raise UpstreamError(str(e)) from None
                    raise
                if not data:
                    if answered:
                        raise UpstreamError("the upstream closed the connection mid-head")
                    raise UpstreamClosed("the upstream closed the connection before responding")
                buf += data
                answered = True
                continue
            status, headers = _parse_head(buf[:end])
            buf = buf[end + 4 :]
            if status == 101:
                raise UpstreamError("the upstream switched protocols (101), unasked")
            if status >= 200:
                return status, headers, buf
            # 100 Continue, 103 Early Hints: interim, the real response follows

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle.clear()


def _parse_head(raw: bytes) -> tuple[int, list[tuple[str, str]]]:
    lines = raw.decode("latin-1").split("\r\n")
    status = _STATUS_LINE.fullmatch(lines[0])
    if status is None:
        raise UpstreamError(f"not an HTTP/1.x response: {lines[0][:40]!r}")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):  # incl. obsolete folded lines
            raise UpstreamError(f"malformed header line {line[:40]!r}")
        headers.append((name, value.strip(" \t")))
    return int(status.group(1)), headers


def _framing(method: str, status: int, headers: list[tuple[str, str]]) -> tuple[str, int, bool]:
    """(chunked | length | close | none, content length, reusable) per RFC 9112 6.3."""
    names: dict[str, list[str]] = {}
    for k, v in headers:
        names.setdefault(k.lower(), []).extend(x.strip() for x in v.split(","))
    reusable = "close" not in (x.lower() for x in names.get("connection", []))
    codings = [x.lower() for x in names.get("transfer-encoding", []) if x]
    lengths = set(names.get("content-length", []))
    if method == "HEAD" or status in (204, 304):
        return "none", 0, reusable
    if codings:
        if codings[-1] != "chunked":
            return "close", 0, False  # read to the end of the connection
        return "chunked", 0, reusable and not lengths  # both given: do not trust the connection
    if lengths:
        if len(lengths) != 1 or not next(iter(lengths)).isdigit():
            shown = ", ".join(sorted(lengths))
            raise UpstreamError(f"malformed Content-Length {shown[:40]!r}")
        left = int(next(iter(lengths)))
        return ("length" if left else "none"), left, reusable
    return "close", 0, False


@record(frozen=True, slots=True)
class _Route:
    """How to reach an origin: directly, or through an HTTP proxy from the environment."""

    host: str  # where the TCP connection goes
    port: int
    via: str | None = None  # the proxy's host:port, for messages
    tunnel: bool = False  # https through the proxy: CONNECT, then TLS inside
    absolute: bool = False  # http through the proxy: absolute-form request targets
    proxy_auth: str | None = None  # Basic credentials from the proxy URL

    @classmethod
    def of(cls, scheme: str, host: str, port: int) -> _Route:
        proxies = urllib.request.getproxies_environment()  # *_PROXY, either case
        proxy = proxies.get(scheme) or proxies.get("all")
        if not proxy or urllib.request.proxy_bypass_environment(host, proxies):
            return cls(host, port)
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if parts.scheme != "http" or not parts.hostname:
            raise UpstreamError(f"{scheme}_proxy must be an http:// proxy URL")
        auth = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            auth = "Basic " + base64.b64encode(pair).decode("ascii")
        via = f"{parts.hostname}:{parts.port or 80}"
        https = scheme == "https"
        return cls(parts.hostname, parts.port or 80, via, https, not https, auth)


def _ssl_context() -> ssl.SSLContext:
    """SSL_CERT_FILE / SSL_CERT_DIR when set (as httpx and OpenSSL read them), else certifi."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile or None, capath=capath or None)
    return ssl.create_default_context(cafile=certifi.where())
