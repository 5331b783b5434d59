"""A small HTTP/1.1 client for the recorder's upstream side, built on asyncio streams.

Why not httpx: it hands the body over one HTTP chunk at a time, parsing each through
h11, which costs the proxy more per event than the client it serves spends. Here every
socket read is de-framed (chunked or content-length) in one pass and handed on whole,
which is also exactly what a recording line is: one upstream read.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# Hop-by-hop headers (RFC 9110 7.6.1): each hop's own business, never passed on.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authenticate",
        "proxy-authorization",
    }
)
_READ = 1 << 16
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


class ChunkedDecoder:
    """Incremental `Transfer-Encoding: chunked` decoder: bytes in, body bytes out."""

    __slots__ = ("buf", "left", "done", "state")

    def __init__(self) -> None:
        self.buf = b""
        self.left = 0  # bytes of the current chunk still to come
        self.state = "size"  # size | data | crlf | trailer
        self.done = False

    def feed(self, data: bytes) -> bytes:
        buf = self.buf + data if self.buf else data
        out = []
        pos, n = 0, len(buf)
        while pos < n and not self.done:
            if self.state == "data":
                take = min(self.left, n - pos)
                out.append(buf[pos : pos + take])
                pos += take
                self.left -= take
                if self.left == 0:
                    self.state = "crlf"
            elif self.state == "crlf":
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
                if self.state == "trailer":
                    if not line:
                        self.done = True
                    continue
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise UpstreamError(f"malformed chunk size {line[:20]!r}") from None
                if size == 0:
                    self.state = "trailer"
                else:
                    self.left, self.state = size, "data"
        self.buf = buf[pos:]
        return b"".join(out)


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def close(self) -> None:
        self.writer.close()


@dataclass
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

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            try:
                import certifi  # what httpx and the openai SDK trust

                self._ssl = ssl.create_default_context(cafile=certifi.where())
            except ImportError:
                self._ssl = ssl.create_default_context()
        return self._ssl

    async def _connect(self) -> _Connection:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    self.host,
                    self.port,
                    ssl=self._context() if self.https else None,
                    server_hostname=self.host if self.https else None,
                ),
                self.connect_timeout,
            )
        except asyncio.TimeoutError:
            raise UpstreamTimeout(f"connecting to {self.netloc} timed out") from None
        except OSError as e:
            raise UpstreamError(f"cannot connect to {self.netloc}: {e.strerror or e}") from None
        return _Connection(reader, writer)

    async def read(self, conn: _Connection) -> bytes:
        try:
            if self.timeout is None:
                return await conn.reader.read(_READ)
            return await asyncio.wait_for(conn.reader.read(_READ), self.timeout)
        except asyncio.TimeoutError:
            conn.close()
            raise UpstreamTimeout(f"no upstream read within {self.timeout:g} s") from None
        except OSError as e:
            conn.close()
            raise UpstreamError(f"reading from {self.netloc}: {e.strerror or e}") from None

    def release(self, conn: _Connection) -> None:
        if len(self.idle) < 32 and not conn.reader.at_eof():
            self.idle.append(conn)
        else:
            conn.close()

    async def request(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> UpstreamResponse:
        head = [f"{method} {target} HTTP/1.1", f"Host: {self.netloc}"]
        head += [f"{k}: {v}" for k, v in headers if k.lower() not in _OWN]
        if body or method not in ("GET", "HEAD", "DELETE", "OPTIONS"):
            head.append(f"Content-Length: {len(body)}")
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        # A kept-alive connection the upstream has meanwhile closed fails on first use:
        # retry once on a fresh one (the request was not received).
        for attempt in (0, 1):
            reused = bool(self.idle) and attempt == 0
            conn = self.idle.pop() if reused else await self._connect()
            try:
                conn.writer.write(raw)
                await conn.writer.drain()
                return await self._head(conn, method)
            except UpstreamError as e:
                if reused and "closed" in str(e):
                    continue
                raise
            except OSError as e:
                conn.close()
                if reused:
                    continue
                raise UpstreamError(f"sending to {self.netloc}: {e.strerror or e}") from None
        raise UpstreamError(f"cannot reach {self.netloc}")  # pragma: no cover

    async def _head(self, conn: _Connection, method: str) -> UpstreamResponse:
        buf = b""
        while True:
            data = await self.read(conn)
            if not data:
                conn.close()
                raise UpstreamError("the upstream closed the connection before responding")
            buf += data
            end = buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(buf) > _HEAD_LIMIT:
                conn.close()
                raise UpstreamError("the upstream's response head is too large")
        lines = buf[:end].decode("latin-1").split("\r\n")
        try:
            version, code = lines[0].split(" ", 2)[:2]
            status = int(code)
        except ValueError:
            conn.close()
            raise UpstreamError(f"not an HTTP response: {lines[0][:40]!r}") from None
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        names = {k.lower(): v for k, v in headers}
        reusable = version == "HTTP/1.1" and names.get("connection", "").lower() != "close"
        first = buf[end + 4 :]
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            framing, left = "none", 0
        elif "chunked" in names.get("transfer-encoding", "").lower():
            framing, left = "chunked", 0
        elif "content-length" in names:
            framing, left = "length", int(names["content-length"] or 0)
            if left == 0:
                framing = "none"
        else:
            framing, left, reusable = "close", 0, False
        return UpstreamResponse(status, headers, self, conn, framing, left, first, reusable)

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle.clear()
