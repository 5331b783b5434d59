"""A recorded WebSocket session opened for random access (the replay, export, serve):
its messages reassembled from the `message` lines, and its turns, each a stream whose
reads are its server messages (one frame each)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..core.frames import Frame, Truncation
from ..core.record import record
from ..dialects import dialect, of_session, session_turns
from ..dialects.base import Turn
from ..framing.session import Reassembler, WsMessage
from ..recording.format import Message
from .reads import Reads


@record(frozen=True, slots=True)
class SessionFacts:
    """What a session's messages say of it as a whole: how many each peer sent (control
    messages included), and who closed it, with what code and reason (None: no close)."""

    client: int
    server: int
    closed_by: str | None = None
    code: int | None = None
    reason: str = ""

    def describe(self) -> str:
        """In words: "27 messages (2 from the client), closed by the client (1000)"."""
        said = f"{self.client + self.server} messages ({self.client} from the client)"
        if self.closed_by is None:
            return said + ", no close"
        code = "no code" if self.code is None else str(self.code)
        return said + f", closed by the {self.closed_by} ({code})"


def facts_of(messages: Iterable[WsMessage]) -> SessionFacts:
    counts = {"client": 0, "server": 0}
    first_close: WsMessage | None = None
    for m in messages:
        counts[m.sender] = counts.get(m.sender, 0) + 1
        if first_close is None and m.close is not None:
            first_close = m
    if first_close is None or first_close.close is None:
        return SessionFacts(counts["client"], counts["server"])
    code, reason = first_close.close
    return SessionFacts(counts["client"], counts["server"], first_close.sender, code, reason)


@record(slots=True)
class Session:
    """Every message of the session, client and server, in order, and its turns."""

    messages: list[WsMessage]
    turns: list[Turn]
    dialect: str | None = None  # told by the handshake, else by the first server messages


def turn_end(
    turn: Turn, last: bool, reason: str | None, error: str | None, status: int | None
) -> dict[str, Any]:
    """How a turn's stream ended, as `Engine.finish` takes it: a turn its final event
    ended is whole; the session's last turn ended as the session did; an earlier one
    whose final event never came has no end reason (the next turn began)."""
    return {
        "end_reason": "complete" if turn.ended else (reason if last else None),
        "end_error": error if last else None,
        "status": status,
    }


def reassemble(lines: Iterable[Message]) -> list[WsMessage]:
    """The messages the recorded frames make, in the order their last frames came."""
    joiner = Reassembler()
    out: list[WsMessage] = []
    last = 0
    for m in lines:
        last = m.t_ns
        out += joiner.feed(m.sender, m.opcode, m.fin, m.data_bytes, m.t_ns, m.compressed)
    return out + joiner.finish(last)


def read_session(told: str | None, lines: Iterable[Message], start_ns: int) -> Session:
    """The session of a handshake told `told`, from its `message` lines."""
    messages = reassemble(lines)
    told = told or of_session(messages, start_ns)
    return Session(messages, session_turns(dialect(told), messages, start_ns), told)


class _TurnFraming:
    """Each read of a turn is one message, hence one frame: the frames are made once
    (framing/session.py) and handed out in order."""

    __slots__ = ("_frames", "_next")

    def __init__(self, frames: list[Frame], at: int = 0) -> None:
        self._frames, self._next = frames, at

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        if self._next >= len(self._frames):
            return []
        self._next += 1
        return [copy.copy(self._frames[self._next - 1])]

    def flush(self) -> list[Frame]:
        return []

    def finish(self) -> Truncation | None:
        return None

    def copy(self) -> _TurnFraming:
        return _TurnFraming(self._frames, self._next)


class TurnReads(Reads):
    """One turn's server messages as reads: read i is frame i+1's text."""

    framing = "websocket"

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    def __len__(self) -> int:
        return len(self.turn.frames)

    def read(self, i: int) -> tuple[bytes, int | None]:
        frame = self.turn.frames[i]
        return frame.data.encode("utf-8", "surrogatepass"), frame.time_ns

    def decoder(self) -> _TurnFraming:
        return _TurnFraming(self.turn.frames)
