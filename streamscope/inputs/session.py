"""A recorded WebSocket session opened for random access (the replay, export, serve):
its messages reassembled from the `message` lines, and its turns, each a stream whose
reads are its server messages (one frame each)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.frames import Frame, Truncation
from ..dialects import dialect, session_turns
from ..dialects.base import Turn
from ..framing.session import Reassembler, WsMessage
from ..recording.format import Message
from .reads import Reads


@dataclass(slots=True)
class Session:
    """Every message of the session, client and server, in order, and its turns."""

    messages: list[WsMessage]
    turns: list[Turn]


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
    return Session(messages, session_turns(dialect(told), messages, start_ns))


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
