"""What the session screen lists, computed without Textual: every message of a WebSocket
session in order, client and server, each with the response (turn) it belongs to and,
for a server message, the frame it is in that response's stream.

A dialect splits a session into turns (streamscope.dialects.session_turns): a turn keeps
the client messages sent while it ran as they are, and its server messages as frames
made from them. A frame is found again among the messages by its text, in order: the
frames of a turn are its server messages in the order they came, and a message is one
turn's at most. The client message that opened a turn is the one at the turn's start
whose JSON is the turn's request. Whatever no turn holds (a close, a ping, an event
before the first response) is listed between the responses.

Every string shown comes from the recording: it goes through `visible`, `quote` or
`word` (streamscope.text) before it reaches a row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import orjson

from ..core import jsonio
from ..core.frames import Frame
from ..core.record import record
from ..dialects.base import Turn
from ..framing.session import WsMessage, frame_of
from ..text import param, quote, visible

CONTROL = ("close", "ping", "pong")


@record(slots=True)
class Row:
    """One line of the list: a response's heading (`message` None, `turn` its index in
    the session's turns), the heading of the messages between responses (both None),
    or a message (`message` its index; `turn` and `frame`: where it is in a response)."""

    message: int | None
    turn: int | None = None
    frame: int | None = None  # the message's frame in its turn's stream (server messages)
    again: bool = False  # a heading of a response whose messages were listed before


@record(frozen=True, slots=True)
class Shown:
    """A message as a row shows it, each field safe to print."""

    sender: str  # "client" or "server"
    opcode: str
    kind: str  # the JSON's "type", or "" (a control message, not JSON)
    summary: str
    bad: str | None  # what was wrong with its frames (a reserved opcode, cut by the end)


def _json(data: bytes) -> object:
    try:
        return jsonio.loads(data)
    except orjson.JSONDecodeError:
        return None


def owners(messages: Sequence[WsMessage], turns: Sequence[Turn]) -> list[tuple[int, int] | None]:
    """Per message: (its turn's index in `turns`, its frame number; 0 for a client
    message), or None when no turn holds it."""
    owned: list[tuple[int, int] | None] = [None] * len(messages)
    where = {id(m): i for i, m in enumerate(messages)}
    texts: dict[int, str] = {}  # a server message's text, as its frame holds it

    def text(i: int) -> str:
        if i not in texts:
            texts[i] = messages[i].data.decode("utf-8", "replace")
        return texts[i]

    servers = [
        i for i, m in enumerate(messages) if m.sender == "server" and m.opcode not in CONTROL
    ]
    free = 0  # servers[:free] are all owned: each turn looks from there on
    for k, t in enumerate(turns):
        for m in t.client:
            i = where.get(id(m))
            if i is not None and owned[i] is None:
                owned[i] = (k, 0)
        if t.request is not None:
            _opener(messages, t, k, owned)
        while free < len(servers) and owned[servers[free]] is not None:
            free += 1
        at = free
        for frame in t.frames:
            j = at
            while j < len(servers) and (
                owned[servers[j]] is not None or text(servers[j]) != frame.data
            ):
                j += 1
            if j == len(servers):
                break  # not found after the last one: this turn's other frames neither
            owned[servers[j]] = (k, frame.number)
            at = j + 1
    return owned


def _opener(
    messages: Sequence[WsMessage], t: Turn, k: int, owned: list[tuple[int, int] | None]
) -> None:
    """The client message that opened turn `t`: at its start, holding its request."""
    for i, m in enumerate(messages):
        if m.t_ns > t.start_ns:
            return
        if (
            m.t_ns == t.start_ns
            and m.sender == "client"
            and owned[i] is None
            and _json(m.data) == t.request
        ):
            owned[i] = (k, 0)
            return


def rows(owned: Sequence[tuple[int, int] | None], turns: int) -> list[Row]:
    """The list's lines: a response's heading before its messages (again, marked
    `again`, where another's came between), a heading before the messages no response
    holds that follow one, then the messages. A response none of whose messages was
    found (none should be) gets its heading at the end."""
    out: list[Row] = []
    current: int | None = None  # the turn whose messages are being listed (None: between)
    headed: set[int] = set()
    for i, o in enumerate(owned):
        k = None if o is None else o[0]
        if k != current:
            if k is not None:
                out.append(Row(None, k, again=k in headed))
                headed.add(k)
            elif out:  # (before the first response: no heading needed)
                out.append(Row(None))
            current = k
        out.append(Row(i, k, None if o is None or not o[1] else o[1]))
    out += [Row(None, k) for k in range(turns) if k not in headed]
    return out


@record(slots=True)
class Layout:
    """A session as its screen lists it: each message's place, the list's lines."""

    owned: list[tuple[int, int] | None]
    rows: list[Row]


def layout(messages: Sequence[WsMessage], turns: Sequence[Turn]) -> Layout:
    """(A pass over every message: made in a worker, not on the screen's thread.)"""
    owned = owners(messages, turns)
    return Layout(owned, rows(owned, len(turns)))


def close_words(m: WsMessage) -> str:
    close = m.close
    if close is None:
        return ""
    code, reason = close
    said = "no code" if code is None else f"code {code}"
    return said + (f" {quote(reason, 40)}" if reason else "")


def _client_summary(payload: object, data: bytes) -> str:
    """A client message in a line: its JSON object's fields (but its type), each as the
    request view shows a field (text.param) or a size; other JSON or text quoted."""
    if isinstance(payload, dict):
        bits = []
        for key, value in payload.items():
            if key == "type":
                continue
            name = visible(str(key))
            if isinstance(value, list):
                bits.append(f"{name}: {len(value)} item{'s' if len(value) != 1 else ''}")
            elif isinstance(value, dict):
                bits.append(f"{name}: {{{len(value)} field{'s' if len(value) != 1 else ''}}}")
            else:
                bits.append(param(key, value, 28))
        return " ".join(bits)
    if payload is not None:
        return quote(payload, 80)
    return quote(data.decode("utf-8", "replace"), 80)


def shown(
    m: WsMessage,
    frame: Frame | None,
    summarize: Callable[[Frame], str],
    start_ns: int,
) -> Shown:
    """How message `m` is listed; `frame`: its frame in a turn (a server message a turn
    holds), else one is made for it; `summarize`: the session's dialect's."""
    opcode = m.opcode if isinstance(m.opcode, str) else f"op {m.opcode}"
    bad = m.invalid or (None if m.complete else "cut before its last frame")
    kind, summary = "", ""
    if m.opcode == "close":
        summary = close_words(m)
    elif m.opcode in ("ping", "pong") or m.opcode == "binary" or not isinstance(m.opcode, str):
        summary = f"{len(m.data):,} bytes"
        if m.data and m.opcode in ("ping", "pong"):
            summary += f" {quote(m.data.decode('utf-8', 'replace'), 30)}"
    elif m.sender == "server":
        if frame is None:
            frame = frame_of(m, 1, start_ns, 0)
        payload = frame.payload
        kind = frame.event or ""
        summary = summarize(frame)
        if not summary and not isinstance(payload, dict):
            summary = quote(frame.data, 80)
    else:
        payload = _json(m.data) if m.opcode == "text" else None
        if isinstance(payload, dict) and isinstance(payload.get("type"), str):
            kind = payload["type"]
        summary = _client_summary(payload, m.data)
    return Shown(m.sender, visible(opcode), visible(kind), visible(summary), bad and visible(bad))
