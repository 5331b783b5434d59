"""The `websocket` framing: the server's side of a WebSocket connection (RFC 6455), the
bytes that followed its `101 Switching Protocols`, one frame per data message.

A message is a text or binary frame and the continuation frames up to the one with FIN
set, reassembled; control frames (ping, pong) between them are not messages, the close
frame ends the stream (its code and reason are kept: `closed`). A message compressed
with permessage-deflate (RSV1 on its first frame, RFC 7692) is inflated, the window kept
from message to message as the extension's default does.

What is wrong is said at its frame (`Frame.invalid`): a masked server frame (RFC 6455
5.1 forbids it; it is unmasked and read), a continuation with no message open, a
reserved opcode, a control frame that is fragmented or too long, a message after the
close; a 64-bit length with its top bit set leaves no way to find the next frame, so its
frame is the last. A body that ends inside a frame or a message, or with no close
frame, is truncation. The client's messages are not read here.
"""

from __future__ import annotations

import copy
import struct
import zlib

from ..core.frames import INVALID, Frame, FrameHeader, Truncation, parse_payload

_CONT, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0, 1, 2, 8, 9, 10
_TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.2: what the sender removed from each message
MAX_MESSAGE = 1 << 30  # longer is no message a server sends: an impossible length


class NoClose(Truncation):
    """The body ended with no close frame (maybe inside a frame or a message)."""

    def describe(self) -> str:
        where = f": {self.pending}" if self.pending else ""
        return f"the WebSocket stream ended at byte {self.offset} with no close frame{where}"


class WebSocketDecoder:
    """Feed reads with `feed`; at the end of the body `flush`, then `finish`, once."""

    __slots__ = (
        "frames",
        "closed",
        "_parts",
        "_size",
        "_pos",
        "_reads",
        "_dead",
        "_message",
        "_opcode",
        "_deflated",
        "_start",
        "_first",
        "_frame_read",
        "_problems",
        "_inflate",
    )

    def __init__(self) -> None:
        self.frames = 0
        self.closed: tuple[int | None, str] | None = None  # the close frame's code, reason
        self._parts: list[bytes] = []  # bytes of the frame being read
        self._size = 0
        self._pos = 0  # where that frame begins in the body
        self._reads = 0
        self._dead = False
        self._message: list[bytes] | None = None  # the payloads of a message being reassembled
        self._opcode = _TEXT
        self._deflated = False
        self._start = 0  # where the message begins
        self._first = 0  # the read it begins in
        self._frame_read = 0  # the read the frame being read begins in
        self._problems: list[str] = []
        self._inflate: zlib._Decompress | None = None

    def copy(self) -> WebSocketDecoder:
        new = copy.copy(self)
        new._parts = list(self._parts)
        new._problems = list(self._problems)
        if self._message is not None:
            new._message = list(self._message)
        if self._inflate is not None:
            new._inflate = self._inflate.copy()
        return new

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        read = self._reads
        self._reads += 1
        out: list[Frame] = []
        if self._dead or not data:
            return out
        if not self._parts:
            self._frame_read = read
        self._parts.append(data)
        self._size += len(data)
        buf = b"".join(self._parts) if len(self._parts) > 1 else data
        at = 0
        while True:
            head = _head(buf, at)
            if head is None:
                break
            fin, rsv, opcode, mask, length, offset = head
            if length < 0 or length > MAX_MESSAGE:
                self._dead = True
                self._problems.append(
                    f"a frame at byte {self._pos} gives an impossible length: nothing after it "
                    "can be read"
                )
                out.append(self._emit(b"", read, time_ns, self._pos + (len(buf) - at)))
                self._parts, self._size = [], 0
                return out
            if len(buf) - at < offset + length:
                break
            payload = buf[at + offset : at + offset + length]
            if mask is not None:
                self._problems.append("the server masked a frame (RFC 6455 5.1: it never does)")
                payload = _unmask(payload, mask)
            frame_start = self._pos
            at += offset + length
            self._pos += offset + length
            got = self._take(fin, rsv, opcode, payload, frame_start, read, time_ns)
            if got is not None:
                out.append(got)
            self._frame_read = read
        rest = buf[at:] if at else buf
        self._parts, self._size = ([rest] if rest else []), len(rest)
        return out

    def _take(
        self,
        fin: bool,
        rsv: int,
        opcode: int,
        payload: bytes,
        start: int,
        read: int,
        time_ns: int | None,
    ) -> Frame | None:
        """One frame read whole: the message it ends, if it ends one."""
        if opcode >= 8:
            if not fin or len(payload) > 125:
                self._problems.append(
                    f"control frame {opcode} at byte {start} is fragmented or over 125 bytes"
                )
            if opcode == _CLOSE and self.closed is None:
                code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                self.closed = (code, payload[2:].decode("utf-8", "replace"))
            if opcode in (_CLOSE, _PING, _PONG):
                return None
            self._problems.append(f"opcode {opcode} at byte {start} is reserved")
            return self._emit(payload, read, time_ns, self._pos, start)
        if opcode not in (_CONT, _TEXT, _BINARY):
            self._problems.append(f"opcode {opcode} at byte {start} is reserved")
            return self._emit(payload, read, time_ns, self._pos, start)
        if opcode == _CONT:
            if self._message is None:
                self._problems.append(f"a continuation frame at byte {start} with no message open")
                self._message, self._opcode, self._deflated = [], _TEXT, False
                self._start, self._first = start, self._frame_read
        else:
            if self._message is not None:
                self._problems.append(
                    f"a new message at byte {start} before the last one ended (its frames "
                    "are read as one message)"
                )
            else:
                self._message, self._opcode = [], opcode
                self._deflated = bool(rsv & 4)
                self._start, self._first = start, self._frame_read
        assert self._message is not None
        self._message.append(payload)
        if not fin:
            return None
        if self.closed is not None:
            self._problems.append("the message comes after the close frame")
        data = b"".join(self._message)
        self._message = None
        if self._deflated:
            data = self._inflated(data)
        return self._emit(data, read, time_ns, self._pos)

    def _inflated(self, data: bytes) -> bytes:
        if self._inflate is None:
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            return self._inflate.decompress(data + _TAIL, MAX_MESSAGE)
        except zlib.error as e:
            self._problems.append(f"the message does not inflate (permessage-deflate): {e}")
            self._inflate = None
            return b""

    def _emit(
        self, data: bytes, read: int, time_ns: int | None, end: int, start: int | None = None
    ) -> Frame:
        try:
            text, bad = data.decode("utf-8"), False
        except UnicodeDecodeError:
            text, bad = data.decode("utf-8", "replace"), True
        problem = "; ".join(self._problems) or None
        self._problems = []
        payload = parse_payload(text) if text else INVALID
        if problem is not None and isinstance(payload, dict):
            payload = INVALID  # bytes the framing cannot vouch for are read as no event
        kind = "binary" if self._opcode == _BINARY else "text"
        self.frames += 1
        first = self._first if start is None else self._frame_read
        return Frame(
            self.frames,
            text,
            payload,
            time_ns,
            None,
            first,
            read,
            self._start if start is None else start,
            end,
            bad,
            problem,
            (FrameHeader("message", "string", kind),),
            data if bad else None,
        )

    def flush(self) -> list[Frame]:
        return []

    def finish(self) -> Truncation | None:
        if self._dead:
            return None
        if self._size:
            return NoClose(self._pos, f"{self._size} bytes of a frame arrived")
        if self._message is not None:
            return NoClose(self._start, "inside a message (no frame with FIN)")
        if self.closed is None:
            return NoClose(self._pos, "")
        return None


def _head(buf: bytes, at: int) -> tuple[bool, int, int, bytes | None, int, int] | None:
    """(FIN, RSV bits, opcode, masking key, payload length, header length) of the frame
    at `at`; None until its header has arrived; length -1 when it is impossible."""
    n = len(buf) - at
    if n < 2:
        return None
    b0, b1 = buf[at], buf[at + 1]
    length, offset = b1 & 0x7F, 2
    if length == 126:
        if n < 4:
            return None
        (length,) = struct.unpack_from(">H", buf, at + 2)
        offset = 4
    elif length == 127:
        if n < 10:
            return None
        (length,) = struct.unpack_from(">Q", buf, at + 2)
        offset = 10
        if length >> 63:
            length = -1
    mask = None
    if b1 & 0x80:
        if n < offset + 4:
            return None
        mask = buf[at + offset : at + offset + 4]
        offset += 4
    return bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0F, mask, length, offset


def _unmask(payload: bytes, mask: bytes) -> bytes:
    # one XOR of two big integers (little-endian: no byte reversal, a third faster)
    n = len(payload)
    key = int.from_bytes(mask * (n // 4) + mask[: n % 4], "little")
    return (int.from_bytes(payload, "little") ^ key).to_bytes(n, "little")


def encode(opcode: int, payload: bytes, fin: bool = True, mask: bytes | None = None) -> bytes:
    """One frame (tests, and `serve` answering in this framing)."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    bit = 0x80 if mask is not None else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", n)
    if mask is not None:
        return head + mask + _unmask(payload, mask)
    return head + payload
