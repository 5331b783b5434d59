"""The recorder's WebSocket relay: an upgrade passed upstream and its bytes relayed both
ways untouched and at once, each frame recorded as it completes.

The handshake goes upstream with the client's headers (Connection, Upgrade and the
Sec-WebSocket-* ones kept, Host the upstream's), recorded as sent. A `101` is relayed as
its bytes came; from then on every read either way is written to the other side before
anything else, and parsed on the side (framing/ws_wire.py) into `message` lines: payloads
unmasked, inflated where permessage-deflate was agreed (the peers' own bytes stay
compressed). An answer other than `101` is an ordinary HTTP exchange, relayed whole.

The end line says what happened: `complete` when a close frame went each way, or when
the side whose connection ended first had sent or been sent one; `client-closed` /
`upstream-error` when a side's connection ended with no close frame; `upstream-error`
too when a peer broke the protocol (an unmasked client frame, a reserved opcode or bit,
an impossible length...: the end line's error names the side and the frame; the bytes
were relayed all the same); `recorder-stopped` when streamscope stopped first. What the
recording lacks (a message cut by the close, a frame too long to record, bytes of a
frame that never completed) is said in the error too. An open session has no read
timeout: a quiet socket is a normal one.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from ..framing.ws_wire import WireParser, deflate_terms
from ..http.headers import forwardable
from ..http.websocket import Upgraded
from ..http.ws_handshake import head
from .upstream import Switched, UpstreamError, UpstreamResponse, UpstreamTimeout

if TYPE_CHECKING:
    from ..dialects import Dialect
    from .proxy import RecordingProxy

_READ = 1 << 18
_LINGER = 5.0  # after one side's end, how long the other may take to end its own
_PROBLEMS = 3  # protocol problems named in the end line, at most


class _Session:
    """One relayed session's state: its exchange, what each side sent, how it ends."""

    def __init__(self, proxy: RecordingProxy, ex: int) -> None:
        self.proxy, self.ex = proxy, ex
        self.closes: set[str] = set()  # the sides whose close frame passed
        self.problems: list[str] = []  # what broke the protocol, or what was not recorded
        self.broken = False  # a peer broke the protocol
        self.ended: str | None = None  # the side whose connection ended first
        self.closes_then: set[str] = set()  # `closes` when it did

    def frames(self, sender: str, parser: WireParser, data: bytes) -> None:
        writer, ex = self.proxy.writer, self.ex
        was_dead = parser.dead
        for f in parser.feed(data):
            writer.message(ex, sender, f.opcode, f.fin, f.payload, f.compressed)
            if f.opcode == 8:
                self.closes.add(sender)
            if f.problem is not None:
                self.broken = True
                self._problem(f"{sender}: {f.problem}")
            if f.lost is not None:
                self._problem(f"{sender}: {f.lost}")
        if parser.dead is not None and was_dead is None:
            self.broken = self.broken or parser.broken
            self._problem(f"{sender}: {parser.dead}")

    def side_ended(self, side: str) -> None:
        """`side`'s connection ended (its reads gave EOF)."""
        if self.ended is None:
            self.ended, self.closes_then = side, set(self.closes)

    def _problem(self, what: str) -> None:
        if len(self.problems) < _PROBLEMS:
            self.problems.append(what)
        elif len(self.problems) == _PROBLEMS:
            self.problems.append("and more")

    def end(self, reason: str, error: str | None) -> None:
        proxy = self.proxy
        if self.ex not in proxy.open:  # (the recorder stopping wrote it already)
            return
        proxy.open.discard(self.ex)
        notes = "; ".join(self.problems)
        if notes:
            error = f"{error}; {notes}" if error else notes
        proxy.writer.end(self.ex, reason, error)


async def relay(proxy: RecordingProxy, conn: Upgraded) -> None:
    """Relay and record one upgrade request (the proxy's `upgrade` handler)."""
    writer = proxy.writer
    ex = writer.new_exchange()
    proxy.exchanges += 1
    proxy.open.add(ex)
    session = _Session(proxy, ex)
    try:
        await _relay(proxy, conn, session)
    finally:
        session.end("recorder-stopped", proxy.stopped_by)


async def _relay(proxy: RecordingProxy, conn: Upgraded, session: _Session) -> None:
    writer, ex = proxy.writer, session.ex
    path, _, query = conn.target.partition("?")
    headers = list(conn.headers)
    route = proxy.route_of(path)
    inner = path[len(route.mount) :] or "/"
    target = inner + (f"?{query}" if query else "")
    speaks = proxy.speaks(route, inner, headers)
    try:
        upstream, pool = proxy.upstream_of(route, inner, headers)
    except ValueError as e:
        writer.request(ex, conn.method, route.upstream.origin + target, headers, b"")
        _answer(conn, session, 400, "upstream-error", "invalid_request", str(e), speaks)
        return
    basic = upstream.authorization
    if basic is not None and not any(k.lower() == "authorization" for k, _ in headers):
        headers.append(("authorization", basic))
    writer.request(ex, conn.method, upstream.origin + target, pool.upgrade_headers(headers), b"")
    opening = asyncio.ensure_future(pool.upgrade(target, headers))
    gone = asyncio.ensure_future(conn.wait_closed())
    await asyncio.wait({opening, gone}, return_when=asyncio.FIRST_COMPLETED)
    gone.cancel()
    if not opening.done():
        opening.cancel()
        with contextlib.suppress(BaseException):
            await opening
        session.end("client-closed", "the client went away before the upstream answered")
        return
    try:
        answer = opening.result()
    except UpstreamTimeout as e:
        _answer(
            conn, session, 504, "timeout", "upstream_timeout", f"upstream timed out: {e}", speaks
        )
        return
    except UpstreamError as e:
        message = f"upstream unreachable: {e}"
        _answer(conn, session, 502, "upstream-error", "upstream_unreachable", message, speaks)
        return
    if isinstance(answer, UpstreamResponse):
        await _refused(conn, session, answer)
        return
    await _frames(conn, session, answer)


def _answer(
    conn: Upgraded,
    session: _Session,
    status: int,
    reason: str,
    kind: str,
    message: str,
    speaks: Dialect,
) -> None:
    """streamscope's own answer (the upstream could not be asked), as the client's API
    words an error, recorded as such."""
    writer, ex = session.proxy.writer, session.ex
    headers, body = error_reply(speaks, status, kind, message)
    writer.response(ex, status, headers)
    writer.chunk(ex, body)
    session.end(reason, message)
    conn.write(head(status, [*headers, ("connection", "close")]) + body)


def error_reply(
    speaks: Dialect, status: int, kind: str, message: str
) -> tuple[list[tuple[str, str]], bytes]:
    """streamscope's own error answer, in the shape of the client's own API (so its SDK
    shows the message): its headers and body."""
    body = speaks.error_document(status, kind, f"streamscope: {message}")
    headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
    return [*headers, *speaks.error_headers(status, kind)], body


async def _refused(conn: Upgraded, session: _Session, answer: UpstreamResponse) -> None:
    """The upstream answered the upgrade with no `101`: an HTTP exchange, relayed read by
    read as it comes (an error document, mostly; but an upstream that ignores the upgrade
    may stream), each read recorded as it came. The connection closes after it: a body
    of no known length ends with it."""
    writer, ex = session.proxy.writer, session.ex
    writer.response(ex, answer.status, answer.headers)
    kept = [*forwardable(answer.headers), ("connection", "close")]
    conn.write(head(answer.status, kept))
    try:
        async for data in answer.reads():
            conn.write(data)  # relayed first, as every read is
            writer.chunk(ex, data)
            await conn.drain()
            if conn.transport.is_closing():  # (drain returns when the client is gone)
                session.end("client-closed", "the client went away during the answer")
                return
    except UpstreamError as e:
        session.end("upstream-error", str(e))
        return
    finally:
        answer.close()
    session.end("complete", None)


async def _frames(conn: Upgraded, session: _Session, up: Switched) -> None:
    """Relay the session's bytes both ways until both sides ended (or one ended and the
    other did not follow within _LINGER)."""
    writer, ex = session.proxy.writer, session.ex
    writer.response(ex, 101, up.headers)
    conn.write(up.head)
    extensions = next((v for k, v in up.headers if k.lower() == "sec-websocket-extensions"), None)
    deflate, client_keeps, server_keeps = deflate_terms(extensions)
    from_client = WireParser(True, deflate, client_keeps)
    from_server = WireParser(False, deflate, server_keeps)

    async def client_to_upstream() -> None:
        while True:
            data = await conn.read(_READ)
            if not data:
                session.side_ended("client")
                break
            up.writer.write(data)  # relayed first: recording never delays a byte
            session.frames("client", from_client, data)
            try:
                await up.writer.drain()
            except OSError as e:  # the upstream's connection broke under our writing
                session._problem(f"writing to the upstream: {e.strerror or e}")
                session.side_ended("server")
                return
        with contextlib.suppress(OSError):
            if up.writer.can_write_eof():
                up.writer.write_eof()

    async def upstream_to_client() -> None:
        data = up.first
        while True:
            if data:
                conn.write(data)
                session.frames("server", from_server, data)
                await conn.drain()  # (returns once the client's connection is lost)
            try:
                data = await up.reader.read(_READ)
            except OSError as e:
                session._problem(f"reading from the upstream: {e.strerror or e}")
                data = b""
            if not data:
                break
        session.side_ended("server")
        conn.write_eof()

    tasks = [
        asyncio.ensure_future(client_to_upstream()),
        asyncio.ensure_future(upstream_to_client()),
    ]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        if pending:
            await asyncio.wait(pending, timeout=_LINGER)
        for task in tasks:
            if not task.done():
                task.cancel()
            elif not task.cancelled() and task.exception() is not None:
                session._problem(f"relaying: {task.exception()}")
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        up.writer.close()
    for side, parser in (("client", from_client), ("server", from_server)):
        if parser.pending():
            session._problem(f"{side}: {parser.pending()} bytes of a frame never completed")
        unfinished = parser.unfinished() if parser.dead is None else None
        if unfinished is not None:
            cut = "the close" if session.closes else "the end of the connection"
            session._problem(f"{side}: {unfinished} ({cut} came first)")
    first, closes = session.ended, session.closes_then
    if first is None:  # neither side ended: a relaying task failed (said in problems)
        session.end("upstream-error", "the relay failed")
    elif session.broken:
        session.end("upstream-error", None)
    elif closes:  # a close frame had passed (sent by one side, so read by the other)
        session.end("complete", None)
    elif first == "client":
        session.end("client-closed", "the client closed the connection with no close frame")
    else:
        session.end("upstream-error", "the upstream closed the connection with no close frame")
