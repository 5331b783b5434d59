"""RFC 6455 frames from the raw bytes of one direction of a WebSocket connection, as the
recorder sees them pass: each frame whole, its payload unmasked and, under
permessage-deflate (RFC 7692), inflated frame by frame, so the recording holds what the
peer reads while the bytes relayed stay untouched.

What breaks the protocol is said (`WireFrame.problem`) and the frame still given; a
frame whose length cannot be (over `MAX_FRAME`, or 64 bits with the top bit set) leaves
no way to find the next one: the parser stops (`dead` says why) and reads nothing more.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from .websocket import _head, _unmask

_TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.2: removed by the sender from each message
# A frame the recorder holds whole before writing its line: bigger is refused (the bytes
# still pass, the direction is no longer recorded).
MAX_FRAME = 64 << 20
_INFLATE_LIMIT = 256 << 20  # what one frame may inflate to (a deflate bomb stops here)


@dataclass(slots=True)
class WireFrame:
    opcode: int
    fin: bool
    payload: bytes  # unmasked, inflated when `compressed`
    compressed: bool  # RSV1 on a data message's first frame (permessage-deflate)
    problem: str | None = None


class WireParser:
    """Feed the bytes of one direction as they pass; whole frames come out.

    `client`: the direction is the client's, whose frames must be masked (RFC 6455 5.1);
    `deflate`: permessage-deflate was agreed, `takeover` whether the sender keeps its
    window from message to message (no `*_no_context_takeover` for that side).
    """

    __slots__ = ("client", "deflate", "takeover", "dead", "offset", "_buf", "_inflate", "_in")

    def __init__(self, client: bool, deflate: bool = False, takeover: bool = True) -> None:
        self.client = client
        self.deflate = deflate
        self.takeover = takeover
        self.dead: str | None = None
        self.offset = 0  # where the next frame begins among this direction's bytes
        self._buf = b""
        self._inflate: zlib._Decompress | None = None
        self._in = False  # a compressed message is open (its continuations inflate too)

    def feed(self, data: bytes) -> list[WireFrame]:
        if self.dead is not None:
            return []
        buf = self._buf + data if self._buf else data
        out: list[WireFrame] = []
        at = 0
        while True:
            head = _head(buf, at)
            if head is None:
                break
            fin, rsv, opcode, mask, length, offset = head
            if length < 0 or length > MAX_FRAME:
                self.dead = (
                    f"a frame at byte {self.offset} gives a length of "
                    f"{'over 2^63' if length < 0 else length} bytes: nothing after it is recorded"
                )
                break
            if len(buf) - at < offset + length:
                break
            payload = buf[at + offset : at + offset + length]
            if mask is not None:
                payload = _unmask(payload, mask)
            out.append(self._frame(fin, rsv, opcode, payload, mask is not None))
            at += offset + length
            self.offset += offset + length
        self._buf = b"" if self.dead else buf[at:]
        return out

    def _frame(self, fin: bool, rsv: int, opcode: int, payload: bytes, masked: bool) -> WireFrame:
        problems = []
        if self.client and not masked:
            problems.append("the client sent an unmasked frame (RFC 6455 5.1)")
        elif not self.client and masked:
            problems.append("the server sent a masked frame (RFC 6455 5.1)")
        compressed = False
        if opcode in (1, 2):
            compressed = bool(rsv & 4) and self.deflate
            self._in = compressed
        if rsv & 4 and not (opcode in (1, 2) and self.deflate):
            problems.append(f"RSV1 set on a frame of opcode {opcode} with no extension for it")
        if rsv & 3:
            problems.append("RSV2 or RSV3 set (no extension defines them)")
        if opcode in (0, 1, 2) and self._in:
            payload, problem = self._inflated(payload, fin)
            if problem:
                problems.append(problem)
        if opcode in (0, 1, 2) and fin:
            self._in = False
        return WireFrame(opcode, fin, payload, compressed, "; ".join(problems) or None)

    def _inflated(self, payload: bytes, fin: bool) -> tuple[bytes, str | None]:
        if self._inflate is None:
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            out = self._inflate.decompress(payload + (_TAIL if fin else b""), _INFLATE_LIMIT)
        except zlib.error as e:
            self._inflate = None
            return b"", f"the frame does not inflate (permessage-deflate): {e}"
        if self._inflate.unconsumed_tail:
            self._inflate = None
            return out, f"the frame inflates to over {_INFLATE_LIMIT} bytes: the rest is not kept"
        if fin and not self.takeover:
            self._inflate = None  # no context takeover: each message starts afresh
        return out, None

    def pending(self) -> int:
        """Bytes of a frame begun but not whole."""
        return len(self._buf)


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
