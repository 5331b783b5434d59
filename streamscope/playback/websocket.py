"""`serve` answering a WebSocket upgrade: a recorded session played back to a live client.

uvicorn hands each upgrade request over raw (http/websocket.py); `SessionPlayer` checks
the handshake (http/ws_handshake.py: a bad one is refused with an HTTP error in the
client's API's shape), picks the recorded session of that path (playback/sessions.py),
answers `101` at the recorded delay, and then, on one connection:

- sends the recorded greeting (what the server sent before the client spoke);
- reads the client's frames (masked, as RFC 6455 requires; no extension was agreed, so
  none is compressed), reassembles its messages, and gives each the recorded answer
  `Play.choose` picks, frame by frame, each at its recorded delay after the message
  arrived, divided by the speed (0: no waiting). Answers are sent one after another, in
  the order their messages came;
- answers a ping with its pong at once;
- answers a message nothing recorded answers with the dialect's `error` event
  (`Dialect.session_play`; the session stays open) and one line on the log;
- closes as recorded: the server's recorded close frame where the recording has it (the
  client then has CLOSE_WAIT seconds to answer before the connection is closed), the
  recorded answer to the client's close (or its own code echoed), or, where the recorded
  server's side ended with no close frame, the connection ended after the last answer.

A client that breaks the protocol (an unmasked frame, RSV bits, a bad UTF-8 text, a
fragmented control frame) gets a close frame 1002 or 1007 naming it; a message over
MAX_MESSAGE bytes a 1009. A client that goes away stops its replay at once. Every wait
is bounded but the client's own silence (an idle session is normal).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import orjson

from ..core import jsonio
from ..dialects import DEFAULT, claimant, of_client
from ..framing.session import Reassembler, WsMessage
from ..framing.websocket import encode
from ..framing.ws_wire import MAX_FRAME, WireParser
from ..http import ws_handshake
from ..http.websocket import Upgraded
from ..recording.format import OPCODES
from ..text import cut, plural, visible
from .library import Pace, error_body
from .sessions import OPEN, Choice, Out, Play, Script, Sessions

NAME = "streamscope serve"
MAX_MESSAGE = MAX_FRAME  # a client message held whole before it is answered
CLOSE_WAIT = 5.0  # seconds the client has to answer the server's close frame
_TEXT, _CLOSE, _PING, _PONG = 1, 8, 9, 10


class SessionPlayer:
    """The handler `LoopbackServer(upgrade=...)` runs for each upgraded connection."""

    def __init__(
        self,
        sessions: Sessions,
        speed: float = 0.0,
        strict: bool = False,
        log: Callable[[str], None] | None = None,
    ) -> None:
        Pace(speed)  # checks it
        self.sessions = sessions
        self.speed = speed
        self.strict = strict
        self.log = log
        self.played: list[Script | None] = []  # per handshake: the session played (None: refused)

    def say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    async def __call__(self, conn: Upgraded) -> None:
        start = time.monotonic()
        path = conn.target.partition("?")[0]
        try:
            script = self._accept(conn, path)
            if script is None:
                return
            if not await _wait(conn, Pace(self.speed, start).wait(script.head_s)):
                return  # the client left before its 101
            offered = ws_handshake.offered_protocols(conn.headers)
            protocol = script.protocol if script.protocol in offered else None
            conn.write(ws_handshake.switching(conn.headers, script.headers, protocol))
            await _Live(self, conn, script).run()
        except Exception as e:  # never a traceback: one line, and the connection closed
            self.say(f"GET {cut(visible(path), 80)} (WebSocket): stopped: {type(e).__name__}: {e}")

    def _accept(self, conn: Upgraded, path: str) -> Script | None:
        """The session that answers this handshake, or None (refused, with an answer)."""
        speaks = claimant(path, None) or of_client(k for k, _ in conn.headers) or DEFAULT
        shown = cut(visible(path), 80)
        wrong = ws_handshake.problem(conn.method, conn.headers)
        if wrong is not None:
            status, why = wrong
            extra = [("sec-websocket-version", ws_handshake.VERSION)] if status == 426 else []
            body = error_body(NAME, "invalid_handshake", why, speaks, status)
            conn.write(ws_handshake.refusal(status, body, extra))
            self.say(f"{cut(visible(conn.method), 20)} {shown} (WebSocket) -> {status}: {why}")
            self.played.append(None)
            return None
        script = self.sessions.select(conn.target)
        self.played.append(script)
        if script is None:
            held = ", ".join(self.sessions.paths()) or "none"
            why = f"no recorded WebSocket session on {path} (the files hold sessions on: {held})"
            body = error_body(NAME, "not_found", why, speaks, 404)
            conn.write(ws_handshake.refusal(404, body))
            self.say(f"GET {shown} (WebSocket) -> 404")
            return None
        self.say(f"GET {shown} (WebSocket) -> {script.label} ({plural(script.turns, 'turn')})")
        return script


async def _wait(conn: Upgraded, delay: float) -> bool:
    """Wait `delay` seconds unless the client leaves first (then False)."""
    if delay > 0:
        gone = asyncio.ensure_future(conn.wait_closed())
        try:
            await asyncio.wait({gone}, timeout=delay)
        finally:
            gone.cancel()
    return not conn.closed


class _Live:
    """One connection being played: the client's side read here, the answers sent by a
    task of their own, in order."""

    def __init__(self, player: SessionPlayer, conn: Upgraded, script: Script) -> None:
        self.player, self.conn, self.script = player, conn, script
        self.play = Play(script, player.strict)
        self.queue: asyncio.Queue[tuple[list[Out], int, float, bool]] = asyncio.Queue()
        self.closed_sent = False  # the server's close frame went
        self.messages = 0  # client data messages read
        self.errors = 0
        self.ended = ""  # how the session ended, in words

    def say(self, line: str) -> None:
        self.player.say(f"{self.script.label}: {line}")

    async def run(self) -> None:
        script = self.script
        self.queue.put_nowait(
            (script.greeting, script.t0_ns, time.monotonic(), script.drop_greeting)
        )
        sender = asyncio.ensure_future(self._send())
        stopping = False
        try:
            await self._read()
        except asyncio.CancelledError:
            stopping = True  # the server is stopping: the client is told so
            raise
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
            if stopping and not self.closed_sent:
                self.conn.write(encode(_CLOSE, ws_handshake.close_payload(1001, "serve stopped")))
                self.ended = "the server stopped"
            self.conn.close()
            self.say(f"session ended: {self.ended or 'closed'}")

    # -- sending

    async def _send(self) -> None:
        conn, script = self.conn, self.script
        try:
            while True:
                answer, t0, arrival, drop = await self.queue.get()
                pace = Pace(self.player.speed, arrival)
                for out in answer:
                    if self.closed_sent:
                        break
                    # sleep(0) at least: a client that left is noticed between frames
                    await asyncio.sleep(pace.wait((out.t_ns - t0) / 1e9))
                    conn.write(encode(out.opcode, script.payload(out), out.fin))
                    if out.opcode == _CLOSE:
                        self._sent_close()
                    await conn.drain()
                if drop and not self.closed_sent:
                    self.ended = (
                        "the recorded server's side ended with no close frame: so did this one"
                    )
                    conn.close()
                    return
        except Exception as e:  # a recording line that cannot be read any more
            self.ended = f"stopped sending: {type(e).__name__}: {e}"
            conn.close()

    def _sent_close(self) -> None:
        self.closed_sent = True
        asyncio.get_running_loop().call_later(CLOSE_WAIT, self.conn.close)

    def _queue(self, answer: list[Out], t0: int, drop: bool = False) -> None:
        self.queue.put_nowait((answer, t0, time.monotonic(), drop))

    def _fail(self, code: int, why: str) -> None:
        """The client broke the protocol: a close frame naming it, then the end."""
        if not self.closed_sent:
            self.conn.write(encode(_CLOSE, ws_handshake.close_payload(code, why)))
            self.closed_sent = True
        self.ended = f"the client broke the protocol ({code}): {why}"

    # -- reading

    async def _read(self) -> None:
        conn = self.conn
        parser = WireParser(client=True)
        joiner = Reassembler()
        size = 0  # bytes of the client's message being reassembled
        while True:
            data = await conn.read()
            if not data:
                if not self.ended:
                    self.ended = "the client went away with no close frame" + (
                        f" after {plural(self.messages, 'message')}" if self.messages else ""
                    )
                return
            for f in parser.feed(data):
                if f.problem is not None:
                    self._fail(1002, f.problem)
                    return
                if f.opcode in (0, 1, 2):
                    size += len(f.payload)
                    if size > MAX_MESSAGE:
                        self._fail(1009, f"a message over {MAX_MESSAGE} bytes")
                        return
                    if f.fin:
                        size = 0
                opcode = OPCODES.get(f.opcode, f.opcode)
                for m in joiner.feed("client", opcode, f.fin, f.payload, 0):
                    if m.invalid is not None:
                        self._fail(1002, m.invalid)
                        return
                    if not self._message(m):
                        return
            if parser.dead is not None:
                self._fail(1009, f"a frame over {MAX_FRAME} bytes (or of no possible length)")
                return
            await conn.drain()  # a client that does not read what it asked for is not read

    def _message(self, m: WsMessage) -> bool:
        """Answer one client message; False: the session is over."""
        conn = self.conn
        if m.opcode == "ping":
            if not self.closed_sent:
                conn.write(encode(_PONG, m.data))
            return True
        if m.opcode == "pong":
            return True
        if m.opcode == "close":
            self._closed_by_client(m)
            return False
        if m.opcode == "text":
            try:
                m.data.decode("utf-8")
            except UnicodeDecodeError:
                self._fail(1007, "a text message that is not UTF-8")
                return False
        if self.closed_sent:
            return True  # after the server's close, what the client sends is not answered
        self.messages += 1
        choice = self.play.choose(str(m.opcode), m.data)
        if choice.error is not None:
            self._error(m, choice)
            return True
        step = choice.step
        assert step is not None
        if step.kind == OPEN:
            self.say(f"{step.key} -> {step.what} ({choice.how})")
        if step.answer or step.drop:
            self._queue(step.answer, step.t_ns, step.drop)
        return True

    def _error(self, m: WsMessage, choice: Choice) -> None:
        self.errors += 1
        asked = None
        if m.opcode == "text":
            with contextlib.suppress(orjson.JSONDecodeError):
                asked = jsonio.loads(m.data)
        message = f"{NAME}: no recorded message answers this one: {choice.error}"
        event = self.script.rules.error_event(message, asked, self.errors)
        self._queue([Out(0, _TEXT, True, 0, event)], 0)
        self.say(f"client message {self.messages}: {choice.error}: answered with an error event")

    def _closed_by_client(self, m: WsMessage) -> None:
        """The client's close: answered as recorded (the close the server sent after the
        recorded client's), else with the client's own code; then the end."""
        code = m.close[0] if m.close is not None else None
        self.ended = f"closed by the client ({'no code' if code is None else code})"
        if self.closed_sent:
            return  # the close handshake is complete
        step = self.play.close()
        recorded = [o for o in step.answer if o.opcode == _CLOSE] if step is not None else []
        if recorded:
            payload = self.script.payload(recorded[0])
        else:
            payload = m.data if ws_handshake.close_problem(m.data) is None else b""
        self.conn.write(encode(_CLOSE, payload))
        self.closed_sent = True


__all__ = ["SessionPlayer"]
