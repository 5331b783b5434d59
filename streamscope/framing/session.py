"""A recorded WebSocket session's messages: the `message` lines of a recording (one per
frame, as each peer sent it) reassembled into messages, each direction on its own.

A data message is a text or binary frame and its continuation frames up to FIN; a
control frame (close, ping, pong) is a message of its own, between a data message's
frames or not. What breaks RFC 6455 is said on the message it concerns (`invalid`): a
continuation with no message open, a new message before the last one ended, a reserved
opcode, a fragmented or long control frame, a message after the close. Payloads are
already unmasked and inflated (the recorder did it), so nothing here decodes deflate.
"""

from __future__ import annotations

import struct
from dataclasses import field

from ..core.frames import INVALID, Frame, FrameHeader, parse_payload
from ..core.record import record

CONTROL = ("close", "ping", "pong")


@record(slots=True)
class WsMessage:
    """One message of a session: who sent it, its opcode (a name, or a reserved opcode's
    number), its payload reassembled, when its last frame came (ns from the recording's
    start), how many frames it took, and what was wrong with them (None: nothing)."""

    sender: str
    opcode: str | int
    data: bytes
    t_ns: int
    frames: int = 1
    compressed: bool = False
    invalid: str | None = None
    complete: bool = True  # False: the session ended before the frame with FIN

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    @property
    def close(self) -> tuple[int | None, str] | None:
        """A close message's code and reason (None: not a close)."""
        if self.opcode != "close":
            return None
        code = struct.unpack(">H", self.data[:2])[0] if len(self.data) >= 2 else None
        return code, self.data[2:].decode("utf-8", "replace")


@record(slots=True)
class _Open:
    opcode: str
    parts: list[bytes]
    compressed: bool
    problems: list[str] = field(default_factory=list)


class Reassembler:
    """Feed each recorded frame with `feed`; messages come out as their last frame
    arrives; `finish` gives what the session's end left half sent."""

    __slots__ = ("_open", "_closed", "_pending")

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}  # by sender: the data message being reassembled
        self._closed: set[str] = set()  # senders whose close frame came
        self._pending: dict[str, list[str]] = {}  # problems said on the next message

    def feed(
        self,
        sender: str,
        opcode: str | int,
        fin: bool,
        payload: bytes,
        t_ns: int,
        compressed: bool = False,
    ) -> list[WsMessage]:
        problems = self._pending.pop(sender, [])
        if sender in self._closed:
            problems.append(f"the {sender} sent a frame after its close frame")
        if isinstance(opcode, int):
            problems.append(f"opcode {opcode} is reserved (RFC 6455 5.2)")
            return [WsMessage(sender, opcode, payload, t_ns, 1, compressed, "; ".join(problems))]
        if opcode in CONTROL:
            if not fin or len(payload) > 125:
                problems.append("a control frame fragmented or over 125 bytes (RFC 6455 5.5)")
            if opcode == "close":
                self._closed.add(sender)
            invalid = "; ".join(problems) or None
            return [WsMessage(sender, opcode, payload, t_ns, 1, compressed, invalid)]
        out: list[WsMessage] = []
        current = self._open.get(sender)
        if opcode == "continuation":
            if current is None:
                problems.append("a continuation frame with no message open")
                current = self._open[sender] = _Open("text", [], compressed)
        else:
            if current is not None:
                current.problems.append("a new message began before this one's last frame")
                out.append(self._emit(sender, current, t_ns, complete=False))
            current = self._open[sender] = _Open(opcode, [], compressed)
        current.parts.append(payload)
        current.problems += problems
        if fin:
            out.append(self._emit(sender, current, t_ns))
        return out

    def _emit(self, sender: str, current: _Open, t_ns: int, complete: bool = True) -> WsMessage:
        del self._open[sender]
        data = b"".join(current.parts)
        invalid = "; ".join(current.problems) or None
        n = len(current.parts)
        return WsMessage(
            sender, current.opcode, data, t_ns, n, current.compressed, invalid, complete
        )

    def finish(self, t_ns: int) -> list[WsMessage]:
        """The messages the session's end cut before their last frame (`complete` False)."""
        out = []
        for sender in list(self._open):
            current = self._open[sender]
            current.problems.append("the session ended before this message's last frame")
            out.append(self._emit(sender, current, t_ns, complete=False))
        return out


def frame_of(message: WsMessage, number: int, start_ns: int, offset: int) -> Frame:
    """A server message as a stream's frame: its text, the JSON it holds, its time from
    `start_ns` (the exchange's start), its `type` as the event's name; `offset` is where
    it begins among the session's server payloads (a frame's span)."""
    text = message.data.decode("utf-8", "replace")
    bad = text.encode("utf-8", "surrogatepass") != message.data if "\ufffd" in text else False
    payload = parse_payload(text) if message.opcode == "text" else INVALID
    invalid = message.invalid
    if not message.complete and invalid is None:
        invalid = "the message was cut before its last frame"
    if invalid is not None and isinstance(payload, dict):
        payload = INVALID  # bytes the framing cannot vouch for are read as no event
    kind = payload.get("type") if isinstance(payload, dict) else None
    return Frame(
        number,
        text,
        payload,
        message.t_ns - start_ns,
        kind if isinstance(kind, str) else None,
        number - 1,
        number - 1,
        offset,
        offset + len(message.data),
        bad,
        invalid,
        (FrameHeader("message", "string", str(message.opcode)),),
        message.data if bad else None,
    )
