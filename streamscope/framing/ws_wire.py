"""RFC 6455 frames from the raw bytes of one direction of a WebSocket connection, as the
recorder sees them pass: each frame whole, its payload unmasked and, under
permessage-deflate (RFC 7692), inflated frame by frame, so the recording holds what the
peer reads while the bytes relayed stay untouched.

What breaks the protocol is said (`WireFrame.problem`, naming the frame) and the frame
still given: a client frame not masked or a server frame masked (5.1), a reserved opcode
(5.2), a control frame fragmented or over 125 bytes (5.5), a continuation with no message
open or a new message before the last one's final frame (5.4), a frame after the close
(5.5.1), a reserved bit no extension set, a payload that does not inflate. What the
recorder could not keep (a frame inflating past `_INFLATE_LIMIT`) is `WireFrame.lost`.
A frame whose length cannot be (64 bits with the top bit set: `broken`) or is more than
the recorder holds (over `MAX_FRAME`) leaves no way to record the next one: the parser
stops (`dead` says why) and reads nothing more; the bytes still pass.
"""

from __future__ import annotations

import zlib

from ..core.record import record
from .websocket import _head, _unmask

_TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.2: removed by the sender from each message
# A frame the recorder holds whole before writing its line: bigger is refused (the bytes
# still pass, the direction is no longer recorded).
MAX_FRAME = 64 << 20
_INFLATE_LIMIT = 256 << 20  # what one frame may inflate to (a deflate bomb stops here)
_NAMES = {0: "continuation", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong"}


@record(slots=True)
class WireFrame:
    opcode: int
    fin: bool
    payload: bytes  # unmasked, inflated when `compressed`
    compressed: bool  # RSV1 on a data message's first frame (permessage-deflate)
    problem: str | None = None  # what in it breaks RFC 6455 / 7692, naming the frame
    number: int = 0  # 1-based, among this direction's frames
    offset: int = 0  # where it begins among this direction's bytes
    lost: str | None = None  # what of it the recorder could not keep


class WireParser:
    """Feed the bytes of one direction as they pass; whole frames come out.

    `client`: the direction is the client's, whose frames must be masked (RFC 6455 5.1);
    `deflate`: permessage-deflate was agreed, `takeover` whether the sender keeps its
    window from message to message (no `*_no_context_takeover` for that side).
    """

    __slots__ = (
        "client",
        "deflate",
        "takeover",
        "dead",
        "broken",
        "offset",
        "frames",
        "closed",
        "_parts",
        "_size",
        "_need",
        "_inflate",
        "_in",
        "_open",
    )

    def __init__(self, client: bool, deflate: bool = False, takeover: bool = True) -> None:
        self.client = client
        self.deflate = deflate
        self.takeover = takeover
        self.dead: str | None = None
        self.broken = False  # `dead` because the protocol was broken (not a recorder limit)
        self.offset = 0  # where the next frame begins among this direction's bytes
        self.frames = 0  # frames read whole
        self.closed = False  # a close frame came
        self._parts: list[bytes] = []  # bytes of a frame begun, not whole yet
        self._size = 0
        self._need = 0  # the bytes that frame takes, once its header is known
        self._inflate: zlib._Decompress | None = None
        self._in = False  # a compressed message is open (its continuations inflate too)
        self._open: tuple[int, int] | None = None  # the open data message: opcode, frame

    def feed(self, data: bytes) -> list[WireFrame]:
        if self.dead is not None or not data:
            return []
        if self._need and self._size + len(data) < self._need:
            # a long frame coming in many reads: kept as they are, joined once
            self._parts.append(data)
            self._size += len(data)
            return []
        buf = b"".join((*self._parts, data)) if self._parts else data
        self._parts, self._size, self._need = [], 0, 0
        out: list[WireFrame] = []
        at = 0
        while True:
            head = _head(buf, at)
            if head is None:
                break
            fin, rsv, opcode, mask, length, offset = head
            if length < 0 or length > MAX_FRAME:
                self.broken = length < 0
                said = "over 2^63 (RFC 6455 5.2)" if length < 0 else f"{length}"
                limit = "" if length < 0 else f", more than the recorder holds ({MAX_FRAME})"
                self.dead = (
                    f"frame {self.frames + 1} at byte {self.offset} gives a length of {said} "
                    f"bytes{limit}: nothing after it is recorded"
                )
                break
            if len(buf) - at < offset + length:
                self._need = offset + length
                break
            payload = buf[at + offset : at + offset + length]
            if mask is not None:
                payload = _unmask(payload, mask)
            self.frames += 1
            out.append(self._frame(fin, rsv, opcode, payload, mask is not None))
            at += offset + length
            self.offset += offset + length
        if self.dead is None and at < len(buf):
            rest = buf[at:] if at else buf
            self._parts, self._size = [rest], len(rest)
        return out

    def _frame(self, fin: bool, rsv: int, opcode: int, payload: bytes, masked: bool) -> WireFrame:
        problems = []
        number, start = self.frames, self.offset
        if self.client and not masked:
            problems.append("the client sent an unmasked frame (RFC 6455 5.1)")
        elif not self.client and masked:
            problems.append("the server sent a masked frame (RFC 6455 5.1)")
        if self.closed:
            problems.append("a frame after the close frame (RFC 6455 5.5.1)")
        if 3 <= opcode <= 7 or opcode >= 11:
            problems.append(f"opcode {opcode} is reserved (RFC 6455 5.2)")
        elif opcode >= 8:
            if not fin or len(payload) > 125:
                problems.append("a control frame fragmented or over 125 bytes (RFC 6455 5.5)")
            self.closed = self.closed or opcode == 8
        elif opcode == 0:
            if self._open is None:
                problems.append("a continuation frame with no message open (RFC 6455 5.4)")
        elif self._open is not None:
            problems.append(
                f"a new message before the final frame of the one frame {self._open[1]} "
                "began (RFC 6455 5.4)"
            )
        compressed = False
        if opcode in (1, 2):
            compressed = bool(rsv & 4) and self.deflate
            self._in = compressed
            self._open = (opcode, number)
        if rsv & 4 and not (opcode in (1, 2) and self.deflate):
            problems.append(f"RSV1 set on a frame of opcode {opcode} with no extension for it")
        if rsv & 3:
            problems.append("RSV2 or RSV3 set (no extension defines them)")
        lost = None
        if opcode in (0, 1, 2) and self._in:
            payload, problem, lost = self._inflated(payload, fin)
            if problem:
                problems.append(problem)
        if opcode in (0, 1, 2) and fin:
            self._in = False
            self._open = None
        said = "; ".join(problems)
        problem = f"frame {number} ({self.name(opcode)}) at byte {start}: {said}" if said else None
        if lost:
            lost = f"frame {number} ({self.name(opcode)}) at byte {start}: {lost}"
        return WireFrame(opcode, fin, payload, compressed, problem, number, start, lost)

    def _inflated(self, payload: bytes, fin: bool) -> tuple[bytes, str | None, str | None]:
        if self._inflate is None:
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            out = self._inflate.decompress(payload + (_TAIL if fin else b""), _INFLATE_LIMIT)
        except zlib.error as e:
            self._inflate = None
            return b"", f"the payload does not inflate (permessage-deflate): {e}", None
        if self._inflate.unconsumed_tail:
            self._inflate = None
            return out, None, f"it inflates to over {_INFLATE_LIMIT} bytes: the rest is not kept"
        if fin and not self.takeover:
            self._inflate = None  # no context takeover: each message starts afresh
        return out, None, None

    @staticmethod
    def name(opcode: int) -> str:
        return _NAMES.get(opcode, f"opcode {opcode}")

    def pending(self) -> int:
        """Bytes of a frame begun but not whole."""
        return self._size

    def unfinished(self) -> str | None:
        """The data message begun and never given its final frame, said (None: none)."""
        if self._open is None:
            return None
        opcode, number = self._open
        return f"the {self.name(opcode)} message begun at frame {number} never got its final frame"


def deflate_terms(extensions: str | None) -> tuple[bool, bool, bool]:
    """From a `101`'s Sec-WebSocket-Extensions: (permessage-deflate agreed, the client
    keeps its window, the server keeps its window)."""
    for offer in (extensions or "").split(","):
        parts = [p.strip().lower() for p in offer.split(";")]
        if parts and parts[0] == "permessage-deflate":
            names = {p.split("=", 1)[0].strip() for p in parts[1:]}
            return (
                True,
                "client_no_context_takeover" not in names,
                "server_no_context_takeover" not in names,
            )
    return False, True, True
