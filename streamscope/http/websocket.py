"""Taking over a connection uvicorn upgrades (`Upgrade: websocket`) as raw bytes: the
small base the recorder's relay (record/relay.py) and `serve` build on.

uvicorn hands an upgrade request to the protocol class its `Config(ws=...)` names: the
class is built with `config=, server_state=, app_state=`, given the transport
(`connection_made`), then the request head as its first bytes (`data_received`), and
made the transport's protocol. `upgrade_protocol(handler)` makes such a class: it parses
that head and runs `handler(Upgraded)`, which has the head (`raw`, and parsed) and reads
and writes the connection's bytes as they are, so the recorder relays frames untouched
and `serve` writes its own.

What this relies on in uvicorn (read in 0.54; its h11 protocol, which loopback.py names):
the head handed over is rebuilt from h11's parse, header names lowercased; uvicorn
forgets the connection at the hand-over, so the class adds itself to
`server_state.connections` (uvicorn's shutdown then calls its `shutdown()`, which cancels
the handler) and its task to `server_state.tasks`; bytes a client sent after the head
before any answer stay in h11's buffer and are not handed over (RFC 6455 4.1: a client
waits for the `101`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

_HEAD_LIMIT = 1 << 16
_HIGH = 1 << 20  # bytes buffered from the peer before its reading is paused


class Upgraded:
    """One upgraded connection: its request, and its bytes both ways."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.raw = b""  # the request head as uvicorn handed it over (its final CRLF too)
        self.method = ""
        self.target = ""
        self.headers: list[tuple[str, str]] = []  # names lowercased (uvicorn's parser did)
        self.client: tuple[str, int] | None = transport.get_extra_info("peername")
        self._buf = bytearray()
        self._got = asyncio.Event()
        self._eof = False
        self._paused = False
        self._can_write = asyncio.Event()
        self._can_write.set()
        self.lost: BaseException | None = None

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    async def read(self, n: int = 1 << 18) -> bytes:
        """Up to `n` bytes as they came; b"" once the peer closed its side."""
        while not self._buf and not self._eof:
            self._got.clear()
            await self._got.wait()
        data = bytes(self._buf[:n])
        del self._buf[:n]
        if self._paused and len(self._buf) < _HIGH:
            self._paused = False
            self.transport.resume_reading()
        return data

    async def wait_closed(self) -> None:
        """Until the peer closed its side (bytes it sent before stay readable)."""
        while not self._eof:
            self._got.clear()
            await self._got.wait()

    def write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    async def drain(self) -> None:
        """Wait while the peer is slower than what is written to it."""
        await self._can_write.wait()

    def write_eof(self) -> None:
        if not self.transport.is_closing() and self.transport.can_write_eof():
            self.transport.write_eof()

    def close(self) -> None:
        self.transport.close()

    @property
    def closed(self) -> bool:
        return self._eof

    # -- from the protocol

    def _data(self, data: bytes) -> None:
        self._buf += data
        self._got.set()
        if len(self._buf) >= _HIGH and not self._paused:
            self._paused = True
            self.transport.pause_reading()

    def _end(self, exc: BaseException | None = None) -> None:
        self._eof = True
        self.lost = exc
        self._got.set()
        self._can_write.set()


def parse_head(raw: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    """(method, target, headers) of a request head; ValueError when it is none."""
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ValueError("not an HTTP request line")
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"a header line without a colon: {line[:40]!r}")
        headers.append((name.strip(), value.strip()))
    return parts[0], parts[1], headers


Handler = Callable[[Upgraded], Awaitable[None]]


def upgrade_protocol(handler: Handler) -> type[asyncio.Protocol]:
    """The class uvicorn's `Config(ws=...)` takes, handing each upgrade to `handler`."""

    class Upgrade(asyncio.Protocol):
        def __init__(self, config: Any, server_state: Any, app_state: Any, _loop: Any = None):
            self.connections = server_state.connections
            self.tasks = server_state.tasks
            self.conn: Upgraded | None = None
            self.head = b""
            self.task: asyncio.Task[None] | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            assert isinstance(transport, asyncio.Transport)
            self.connections.add(self)
            self.conn = Upgraded(transport)

        def data_received(self, data: bytes) -> None:
            conn = self.conn
            assert conn is not None
            if self.task is not None:
                conn._data(data)
                return
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                if len(self.head) > _HEAD_LIMIT:
                    conn.close()
                return
            conn.raw = self.head[: end + 4]
            try:
                conn.method, conn.target, conn.headers = parse_head(self.head[:end])
            except ValueError:
                conn.close()
                return
            if len(self.head) > end + 4:
                conn._data(self.head[end + 4 :])
            self.task = asyncio.ensure_future(self._run(conn))
            self.tasks.add(self.task)
            self.task.add_done_callback(self.tasks.discard)

        async def _run(self, conn: Upgraded) -> None:
            try:
                await handler(conn)
            finally:
                conn.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self.connections.discard(self)
            if self.conn is not None:
                self.conn._end(exc)

        def pause_writing(self) -> None:
            if self.conn is not None:
                self.conn._can_write.clear()

        def resume_writing(self) -> None:
            if self.conn is not None:
                self.conn._can_write.set()

        def eof_received(self) -> bool:
            if self.conn is not None:
                self.conn._end()
            return True  # keep the transport open: the other way may still be talking

        def shutdown(self) -> None:
            """uvicorn stopping: the handler is cancelled (it says so), the connection
            closed with it."""
            if self.task is not None:
                self.task.cancel()
            elif self.conn is not None:
                self.conn.close()

    return Upgrade
