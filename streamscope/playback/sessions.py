"""Recorded WebSocket sessions as `serve` plays them back: which session answers a
handshake, and which recorded server frames answer each client message.

A session's `message` lines are read once, when the files are loaded, into a `Script`:

- the *greeting*: the server frames sent before the client's first message (the
  Realtime API's `session.created`);
- one `Step` per client message, in the recorded order, with the server frames that
  followed it until the next step (its *answer*). The session's dialect says which
  messages open a turn and which events begin and end one (`Dialect.session_play`;
  the Responses API's: a `response.create` opens one, its final event ends it). A
  message that opens a turn is an `OPEN` step; a turn runs from it (or from the event
  that begins one the server began) to its end. A client message sent while a turn
  runs (an audio append, a steer) is `INSIDE` it: it answers with nothing of its own,
  the turn's frames go on as recorded without waiting for it. Any other message (a
  session update, an item sent between turns) is a `MESSAGE` step answered by what
  followed it. The client's close is a `CLOSE` step: its answer holds the server's
  close. A dialect that says nothing of playing its sessions (or none told) has every
  client message a `MESSAGE` step.
- A server message is never split across two answers: its continuation frames go with
  its first frame.

Times are kept per frame against the recorded client message it answers, so a player
sends each frame at its recorded delay after the live message arrives (divided by the
speed). Payloads are not held: each frame is read from the recording when it is sent.

What of a recording cannot be sent again is said in `notes` and left out: a reserved
opcode, a control frame over 125 bytes or fragmented, a close payload no peer may send
(sent as a close with no code), anything the server sent after its close. The server's
recorded pongs are left out too: the player answers each live ping with its own pong.

Which step answers a live client message (`Play.choose`), per connection: one that
opens a turn is matched with the recorded ones the way HTTP playback matches a request
body (the dialect's `match_keys`, playback/library.py), else, unless strict, the next in
order (the one answered fewest times on this connection, earliest first); any other
message with one of the same `type` (an exact one first, `event_id` aside), in the same
order. A message nothing recorded answers gets the dialect's `error` event.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import threading
from collections.abc import Sequence
from dataclasses import field
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..core import jsonio
from ..core.record import record
from ..dialects import DIALECTS, LOOK, Dialect, of_session
from ..dialects.base import SessionPlay
from ..framing.session import Reassembler, WsMessage
from ..http.headers import HOP_BY_HOP
from ..http.ws_handshake import close_problem
from ..inputs.source import Source
from ..recording.format import Message
from ..text import quote
from .head import sendable
from .library import _ABSENT, _closeness, _explain, _same, cut_short

OPEN, MESSAGE, INSIDE, CLOSE = "open", "message", "inside", "close"
_CLOSE, _PING, _PONG = 8, 9, 10
# the 101's own headers: the live handshake's are sent instead
_HANDSHAKE = HOP_BY_HOP | {"content-length", "date"}


@record(slots=True)
class Out:
    """One server frame to send: its opcode and FIN, its payload (read from recording
    line `line` when sent; 0: `payload` holds it), when it was sent (ns, recorded)."""

    t_ns: int
    opcode: int
    fin: bool
    line: int = 0
    payload: bytes = b""


@record(slots=True)
class Step:
    """One recorded client message and the server frames that answered it."""

    number: int  # 1-based among the session's client messages
    kind: str  # OPEN, MESSAGE, INSIDE or CLOSE
    key: str  # its JSON `type`, else its opcode's name ("text", "binary")
    t_ns: int  # when it came (its last frame), recorded
    digest: bytes  # of its payload (a JSON object's without `event_id`)
    body: dict[str, Any] | None = field(default=None, repr=False)  # an opener's JSON
    turn: int | None = None  # an opener's: 1-based among the session's turns
    answer: list[Out] = field(default_factory=list, repr=False)
    drop: bool = False  # the connection ends after its answer, with no close frame

    @property
    def what(self) -> str:
        if self.turn is not None:
            return f"turn {self.turn}"
        return f"client message {self.number}"


@record(slots=True)
class Script:
    """One recorded session, ready to play."""

    source: Source = field(repr=False)
    exchange: int
    url: str  # the recorded handshake's
    dialect: Dialect | None
    head_s: float  # seconds from the handshake to its 101, recorded
    headers: list[tuple[str, str]]  # the 101's recorded headers that are sent again
    protocol: str | None  # the subprotocol the recorded 101 chose
    greeting: list[Out]
    t0_ns: int  # the 101's time: the greeting's frames count from it
    steps: list[Step]
    rules: SessionPlay  # its dialect's (NEUTRAL: none)
    drop_greeting: bool = False  # the connection ended after the greeting

    @property
    def label(self) -> str:
        return f"{os.path.basename(self.source.path)} exchange {self.exchange}"

    @property
    def path(self) -> str:
        return _path(self.url)

    @property
    def turns(self) -> int:
        return sum(1 for s in self.steps if s.kind == OPEN)

    def payload(self, out: Out) -> bytes:
        """A frame's payload, read from the recording."""
        if not out.line:
            return out.payload
        record = self.source.index().line(out.line)
        if not isinstance(record, Message):
            raise ValueError(f"{self.label}: line {out.line} is no message line")
        return record.data_bytes


def _path(url: str) -> str:
    try:
        return urlsplit(url).path or "/"
    except ValueError:
        return url.partition("?")[0]


def _target(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _parsed(opcode: str | int, data: bytes) -> object:
    if opcode != "text":
        return None
    try:
        return jsonio.loads(data)
    except orjson.JSONDecodeError:
        return None


def neutral_error(message: str, asked: object, number: int) -> bytes:
    """An error event for a session whose dialect words none: OpenAI's error shape."""
    error = {"type": "invalid_request_error", "code": "unmatched_message", "message": message}
    return orjson.dumps({"type": "error", "error": error})


# A dialect that says nothing of its sessions' turns: every client message is answered
# by what followed it.
NEUTRAL = SessionPlay(frozenset(), frozenset(), frozenset(), neutral_error)


def describe(
    opcode: str | int, data: bytes, opens: frozenset[str] = frozenset()
) -> tuple[str, bytes, dict[str, Any] | None]:
    """A client message's key (its JSON `type`, else its opcode), digest, and its JSON
    object when it opens a turn (its type is one of `opens`)."""
    body = _parsed(opcode, data)
    if isinstance(body, dict):
        kind = body.get("type")
        key = kind if isinstance(kind, str) else "text"
        kept = {k: v for k, v in body.items() if k != "event_id"}
        try:
            canonical = orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):
            canonical = data
        digest = hashlib.blake2b(canonical, digest_size=16).digest()
        return key, digest, (body if key in opens else None)
    key = opcode if isinstance(opcode, str) else "reserved"
    return key, hashlib.blake2b(data, digest_size=16).digest(), None


def script_of(source: Source, number: int, notes: list[str]) -> Script:
    """A recorded session as a Script; `notes` gets what of it cannot be sent again."""
    ex = source.exchange(number)
    index = source.index()
    request, response, end = ex.request, ex.response, ex.end
    assert response is not None
    lines = index.exchange(number).messages
    told = ex.info.dialect or _told(index, lines, response.t_ns)
    dialect = DIALECTS.get(told) if told is not None else None
    label = f"{os.path.basename(source.path)} exchange {number}"
    kept = [(k, v) for k, v in response.headers if k.lower() not in _HANDSHAKE]
    head = sendable(response.status, kept, label)  # (its status: the 101 is sent anew)
    notes += head.notes
    protocol = next(
        (v.strip() for k, v in head.headers if k.lower() == "sec-websocket-protocol"), None
    )
    headers = [(k, v) for k, v in head.headers if not k.lower().startswith("sec-websocket-")]
    t0 = response.t_ns
    script = Script(
        source,
        number,
        request.url if request is not None else "/",
        dialect,
        max(0.0, (response.t_ns - (request.t_ns if request is not None else t0)) / 1e9),
        headers,
        protocol,
        [],
        t0,
        [],
        (dialect.session_play if dialect is not None else None) or NEUTRAL,
    )
    _Builder(script, label, notes).run(lines, index)
    last = script.steps[-1] if script.steps else None
    closed = any(o.opcode == _CLOSE for s in script.steps for o in s.answer) or any(
        o.opcode == _CLOSE for o in script.greeting
    )
    if cut_short(end) is not None and not closed:  # ended with no close frame, or never
        if last is None:
            script.drop_greeting = True
        else:
            last.drop = True
    return script


def _told(index: Any, lines: Sequence[int], start_ns: int) -> str | None:
    """The dialect a session's first server messages tell (its handshake told none), read
    from no more lines than that takes."""
    joiner = Reassembler()
    first: list[WsMessage] = []
    for n in lines:
        m = index.line(n)
        if isinstance(m, Message) and m.sender == "server":
            done = joiner.feed("server", m.opcode, m.fin, m.data_bytes, m.t_ns, m.compressed)
            first += [d for d in done if d.opcode == "text"]
            if len(first) >= LOOK:
                break
    return of_session(first, start_ns)


class _Builder:
    """Walks a session's message lines once, making its greeting and steps."""

    def __init__(self, script: Script, label: str, notes: list[str]):
        self.script, self.label, self.notes, self.rules = script, label, notes, script.rules
        self.joiner = Reassembler()
        self.answer = script.greeting  # where the server's frames go now
        self.message_answer: list[Out] | None = None  # a server message's first frame's
        self.running = False  # a turn runs (its final event has not come)
        self.server_closed = False
        self.after_close = 0  # server frames after its close, left out
        self.clients = 0

    def note(self, what: str) -> None:
        self.notes.append(f"{self.label}: {what}")

    def run(self, lines: Sequence[int], index: Any) -> None:
        for n in lines:
            m = index.line(n)
            assert isinstance(m, Message)
            if m.sender == "server":
                self.server(n, m)
            else:
                self.client(m)
        if self.after_close:
            self.note(
                f"the server sent {self.after_close} frames after its close frame: not sent again"
            )

    def server(self, n: int, m: Message) -> None:
        data = m.data_bytes
        opcode = m.opcode_number
        done = self.joiner.feed("server", m.opcode, m.fin, data, m.t_ns, m.compressed)
        if self.server_closed:
            self.after_close += 1
            return
        if opcode == _PONG:
            return  # it answered a recorded ping: live pings get their own pongs
        if opcode not in (0, 1, 2, _CLOSE, _PING):
            self.note(f"the server's frame at line {n} has the reserved opcode {opcode}: not sent")
            return
        if opcode >= _CLOSE:
            if not m.fin or len(data) > 125:
                self.note(
                    f"the server's control frame at line {n} is fragmented or over 125 "
                    "bytes: not sent"
                )
                return
            if opcode == _CLOSE:
                self.server_closed = True
                why = close_problem(data)
                if why is not None:
                    self.note(
                        f"the server's close frame at line {n} cannot be sent as recorded "
                        f"({why}): sent with no code"
                    )
                    self.answer.append(Out(m.t_ns, _CLOSE, True, 0, b""))
                    return
            self.answer.append(Out(m.t_ns, opcode, True, n))
            return
        # a data frame: its message's frames stay together, with the answer its first went to
        if self.message_answer is None:
            self.message_answer = self.answer
        self.message_answer.append(Out(m.t_ns, opcode, m.fin, n))
        if m.fin:
            self.message_answer = None
        for message in done:
            body = _parsed(message.opcode, message.data)
            kind = body.get("type") if isinstance(body, dict) else None
            if not isinstance(kind, str):
                continue
            if kind in self.rules.starts:
                self.running = True
            elif kind in self.rules.ends:
                self.running = False

    def client(self, m: Message) -> None:
        for message in self.joiner.feed(
            "client", m.opcode, m.fin, m.data_bytes, m.t_ns, m.compressed
        ):
            if message.opcode in ("ping", "pong") or isinstance(message.opcode, int):
                continue  # answered by the protocol, or never sent again
            self.clients += 1
            steps = self.script.steps
            if message.opcode == "close":
                step = Step(self.clients, CLOSE, "close", message.t_ns, b"")
            else:
                key, digest, body = describe(message.opcode, message.data, self.rules.opens)
                if body is not None:
                    turn = sum(1 for s in steps if s.kind == OPEN) + 1
                    step = Step(self.clients, OPEN, key, message.t_ns, digest, body, turn)
                    self.running = True
                elif self.running:
                    steps.append(Step(self.clients, INSIDE, key, message.t_ns, digest))
                    continue
                else:
                    step = Step(self.clients, MESSAGE, key, message.t_ns, digest)
            steps.append(step)
            self.answer = step.answer


# -- choosing ------------------------------------------------------------------------


@record(frozen=True, slots=True)
class Choice:
    """What answers a live client message: a step (None: nothing, or `error`)."""

    step: Step | None
    how: str = ""  # "matched by body", "next in order", "same message", "same type"
    error: str | None = None  # why the recording cannot answer it


class _Pool:
    """Steps that may answer a message, taken fewest times first, then earliest: a heap
    of (times taken, number), its entries brought up to date as they come to the top
    (a step taken through another pool is counted in all)."""

    __slots__ = ("_heap",)

    def __init__(self, steps: list[Step]) -> None:
        self._heap = [(0, s.number, s) for s in steps]  # (in order: already a heap)

    def take(self, served: dict[int, int]) -> Step:
        heap = self._heap
        while True:
            count, number, step = heap[0]
            now = served.get(number, 0)
            if now == count:
                served[number] = count + 1
                heapq.heapreplace(heap, (count + 1, number, step))
                return step
            heapq.heapreplace(heap, (now, number, step))


class Play:
    """One live connection's replay of a script: what each client message gets."""

    def __init__(self, script: Script, strict: bool = False) -> None:
        self.script = script
        self.strict = strict
        self.served: dict[int, int] = {}  # by step number: times it answered
        self._pools: dict[object, _Pool] = {}  # by key, and by (key, digest)
        self._kinds: dict[object, list[Step]] = {}
        for step in script.steps:
            if step.kind in (MESSAGE, INSIDE):
                self._kinds.setdefault(step.key, []).append(step)
                self._kinds.setdefault((step.key, step.digest), []).append(step)

    def _take(self, pool: list[Step]) -> Step:
        step = min(pool, key=lambda s: (self.served.get(s.number, 0), s.number))
        self.served[step.number] = self.served.get(step.number, 0) + 1
        return step

    def _take_of(self, of: object) -> Step | None:
        pool = self._pools.get(of)
        if pool is None:
            steps = self._kinds.get(of)
            if not steps:
                return None
            pool = self._pools[of] = _Pool(steps)
        return pool.take(self.served)

    def close(self) -> Step | None:
        """The recorded close step (the client's close) that answers a live close."""
        pool = [s for s in self.script.steps if s.kind == CLOSE]
        return self._take(pool) if pool else None

    def choose(self, opcode: str, data: bytes) -> Choice:
        key, digest, body = describe(opcode, data, self.script.rules.opens)
        if body is not None:
            return self._opener(key, body, [s for s in self.script.steps if s.kind == OPEN])
        exact = self._take_of((key, digest))
        if exact is not None:
            return Choice(exact, "same message")
        if key in self._kinds and not self.strict:
            return Choice(self._take_of(key), "same type")
        what = (
            f"type {quote(key, 60)}" if opcode == "text" and key != "text" else f"a {key} message"
        )
        if key in self._kinds:
            return Choice(None, error=f"no recorded client message of {what} is the same as it")
        return Choice(None, error=f"the recording holds no client message of {what}")

    def _opener(self, key: str, body: dict[str, Any], openers: list[Step]) -> Choice:
        if not openers:
            return Choice(None, error=f"the recording holds no {quote(key, 60)}: no turn opened")
        dialect = self.script.dialect
        keys = dialect.match_keys if dialect is not None else ()
        pool = [
            s
            for s in openers
            if s.body is not None
            and all(_same(s.body.get(k, _ABSENT), body.get(k, _ABSENT)) for k in keys)
        ]
        told = any(k in s.body for s in pool if s.body is not None for k in keys)
        if pool:
            return Choice(self._take(pool), "matched by body" if told else "next in order")
        if not self.strict:
            return Choice(self._take(openers), "next in order")
        assert dialect is not None  # (no keys: every opener matches)
        ranked = max(openers, key=lambda s: _closeness(s.number, s.body or {}, body, dialect))
        label = f"{self.script.label} {ranked.what}"
        return Choice(None, error=_explain(label, ranked.body or {}, body, dialect))


class Sessions:
    """The recorded sessions of the files served, and which answers each handshake.

    `select` is thread-safe; each session is played once before any is played again.
    """

    def __init__(self, scripts: list[Script]) -> None:
        self.scripts = scripts
        self.served = [0] * len(scripts)
        self._lock = threading.Lock()

    @classmethod
    def of(cls, found: list[tuple[Source, int]], notes: list[str]) -> Sessions:
        return cls([script_of(source, number, notes) for source, number in found])

    def select(self, target: str) -> Script | None:
        """The session that answers a handshake to `target` (path and query): one
        recorded on the same path (either may have a prefix the other lacks: a base URL's
        path), the same query first; the one played fewest times, earliest first."""
        path = target.partition("?")[0] or "/"
        pool = [i for i, s in enumerate(self.scripts) if _same_path(s.path, path)]
        exact = [i for i in pool if _target(self.scripts[i].url) == target]
        with self._lock:
            chosen = exact or pool
            if not chosen:
                return None
            i = min(chosen, key=lambda i: (self.served[i], i))
            self.served[i] += 1
            return self.scripts[i]

    def paths(self) -> list[str]:
        return list(dict.fromkeys(s.path for s in self.scripts))


def _same_path(recorded: str, live: str) -> bool:
    a, b = recorded.rstrip("/") or "/", live.rstrip("/") or "/"
    if a == b:
        return True
    long, short = (a, b) if len(a) > len(b) else (b, a)
    return short != "/" and long.endswith(short)  # (`short` begins with its /)
