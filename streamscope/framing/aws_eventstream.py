"""The `aws-eventstream` framing: the AWS event stream (Bedrock's and every boto3
streaming call's), binary messages one after another.

A message: a 12-byte prelude (total length, headers length, both big-endian uint32, and
the CRC32 of those 8 bytes), typed headers, the payload, and the CRC32 of everything
before it. Read incrementally across reads; each message is one frame: its event is the
`:event-type` header (an exception's `:exception-type`, an error's `:error-code`), its
data the payload as text, its payload that text parsed as JSON, its headers typed.

What is wrong is said at its frame (`Frame.invalid`): a message whose CRC does not
match, or whose headers do not read, is still a frame; a prelude whose CRC does not
match, or that gives an impossible length, leaves no way to find the next message, so
its frame is the last (the bytes after it are not read). A body that ends inside a
message is truncation.
"""

from __future__ import annotations

import copy
import struct
import uuid
import zlib

from ..core.frames import INVALID, Frame, FrameHeader, Truncation, parse_payload

PRELUDE = 12
_MIN = PRELUDE + 4  # a message with no headers and no payload
# botocore's limits (eventstream.py): larger is no message a service sends
MAX_HEADERS = 128 * 1024
MAX_PAYLOAD = 16 * 1024 * 1024
_INT = {2: (">b", 1, "byte"), 3: (">h", 2, "short"), 4: (">i", 4, "integer"), 5: (">q", 8, "long")}


def prelude_ok(head: bytes) -> bool:
    """Whether `head` opens with an event stream prelude whose CRC matches."""
    if len(head) < PRELUDE:
        return False
    total, headers, crc = struct.unpack_from(">III", head)
    return zlib.crc32(head[:8]) == crc and total >= _MIN and headers <= total - _MIN


class CutMessage(Truncation):
    """The body ended inside a message."""

    def describe(self) -> str:
        return (
            f"the body ended inside an event stream message at byte {self.offset}: {self.pending}"
        )


class EventStreamDecoder:
    """Feed reads with `feed`; at the end of the body `flush`, then `finish`, once."""

    __slots__ = ("frames", "_parts", "_size", "_pos", "_first", "_reads", "_dead", "_need")

    def __init__(self) -> None:
        self.frames = 0
        self._parts: list[bytes] = []  # bytes of the message being read
        self._size = 0
        self._pos = 0  # where that message begins in the body
        self._first = 0  # the read it begins in
        self._reads = 0
        self._dead = False  # a prelude could not be trusted: nothing after it is read
        self._need = PRELUDE  # bytes the message needs before it can be read further

    def copy(self) -> EventStreamDecoder:
        new = copy.copy(self)
        new._parts = list(self._parts)
        return new

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        read = self._reads
        self._reads += 1
        if self._dead or not data:
            return []
        if not self._parts:
            self._first = read
        self._parts.append(data)
        self._size += len(data)
        out: list[Frame] = []
        if self._size < self._need:
            return out
        buf = b"".join(self._parts) if len(self._parts) > 1 else data
        at = 0
        while len(buf) - at >= self._need:
            if self._need == PRELUDE:
                total, problem = _prelude(buf, at)
                if problem is not None:
                    self._dead = True
                    out.append(self._frame(buf[at : at + PRELUDE], read, time_ns, problem))
                    self._parts, self._size = [], 0
                    return out
                self._need = total
                continue
            total = self._need
            out.append(self._message(buf[at : at + total], read, time_ns))
            at += total
            self._pos += total
            self._need, self._first = PRELUDE, read
        rest = buf[at:] if at else buf
        self._parts, self._size = ([rest] if rest else []), len(rest)
        return out

    def _message(self, msg: bytes, read: int, time_ns: int | None) -> Frame:
        headers_length = struct.unpack_from(">I", msg, 4)[0]
        problems = []
        (crc,) = struct.unpack_from(">I", msg, len(msg) - 4)
        if zlib.crc32(msg[:-4]) != crc:
            problems.append(
                f"its message CRC does not match (0x{crc:08x} sent, "
                f"0x{zlib.crc32(msg[:-4]):08x} computed)"
            )
        headers, bad_header = _headers(msg[PRELUDE : PRELUDE + headers_length])
        if bad_header:
            problems.append(bad_header)
        payload = msg[PRELUDE + headers_length : -4]
        return self._frame(payload, read, time_ns, "; ".join(problems) or None, headers, len(msg))

    def _frame(
        self,
        payload: bytes,
        read: int,
        time_ns: int | None,
        problem: str | None,
        headers: tuple[FrameHeader, ...] = (),
        length: int | None = None,
    ) -> Frame:
        try:
            text, bad = payload.decode("utf-8"), False
        except UnicodeDecodeError:
            text, bad = payload.decode("utf-8", "replace"), True
        value = parse_payload(text) if text else INVALID
        if problem is not None and isinstance(value, dict):
            value = INVALID  # bytes the framing cannot vouch for are read as no event
        self.frames += 1
        start = self._pos
        end = start + (length if length is not None else len(payload))
        return Frame(
            self.frames,
            text,
            value,
            time_ns,
            _event(headers),
            self._first,
            read,
            start,
            end,
            bad,
            problem,
            headers,
        )

    def flush(self) -> list[Frame]:
        return []

    def finish(self) -> Truncation | None:
        if self._dead or not self._size:
            return None
        need = f"of {self._need}" if self._need > PRELUDE else "of its 12-byte prelude"
        return CutMessage(self._pos, f"{self._size} bytes {need} arrived")


def _prelude(buf: bytes, at: int) -> tuple[int, str | None]:
    """The total length of the message at `at`, or why its prelude cannot be trusted."""
    total, headers, crc = struct.unpack_from(">III", buf, at)
    computed = zlib.crc32(buf[at : at + 8])
    if computed != crc:
        return 0, (
            f"its prelude CRC does not match (0x{crc:08x} sent, 0x{computed:08x} computed): "
            "nothing after it can be read"
        )
    if (
        total < _MIN
        or headers > total - _MIN
        or headers > MAX_HEADERS
        or (total - _MIN - headers > MAX_PAYLOAD)
    ):
        return 0, (
            f"its prelude gives an impossible length (total {total}, headers {headers}): "
            "nothing after it can be read"
        )
    return total, None


def _headers(raw: bytes) -> tuple[tuple[FrameHeader, ...], str | None]:
    """The typed headers, and why the rest do not read (if they do not)."""
    out: list[FrameHeader] = []
    i, n = 0, len(raw)
    try:
        while i < n:
            size = raw[i]
            name = raw[i + 1 : i + 1 + size].decode("utf-8", "replace")
            i += 1 + size
            kind = raw[i]
            i += 1
            value: object
            if kind in (0, 1):
                value, type_name = kind == 0, "bool"
            elif kind in _INT:
                fmt, width, type_name = _INT[kind]
                (value,) = struct.unpack_from(fmt, raw, i)
                i += width
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", raw, i)
                blob = raw[i + 2 : i + 2 + length]
                if len(blob) != length:
                    raise IndexError
                i += 2 + length
                if kind == 7:
                    value, type_name = blob.decode("utf-8", "replace"), "string"
                else:
                    value, type_name = blob, "byte_array"
            elif kind == 8:
                (value,) = struct.unpack_from(">q", raw, i)  # milliseconds since the epoch
                i += 8
                type_name = "timestamp"
            elif kind == 9:
                if i + 16 > n:
                    raise IndexError
                value, type_name = uuid.UUID(bytes=raw[i : i + 16]), "uuid"
                i += 16
            else:
                return tuple(out), f"header {name!r} has type {kind}, which no header has"
            out.append(FrameHeader(name, type_name, value))
    except (IndexError, struct.error):
        return tuple(out), f"its headers end inside a header (byte {i} of {n})"
    return tuple(out), None


def _event(headers: tuple[FrameHeader, ...]) -> str | None:
    """The event's name: `:event-type`, an exception's type or an error's code."""
    by = {h.name: h.value for h in headers}
    kind = by.get(":message-type")
    key = ":event-type"
    if kind == "exception":
        key = ":exception-type"
    elif kind == "error":
        key = ":error-code"
    name = by.get(key)
    return name if isinstance(name, str) else None


def encode(headers: list[tuple[str, int, object]], payload: bytes) -> bytes:
    """One message, from headers as (name, type number, value) and the payload (tests,
    and `serve` answering in this framing)."""
    parts = []
    for name, kind, value in headers:
        raw = name.encode()
        part = bytes([len(raw)]) + raw + bytes([kind])
        if kind in _INT:
            part += struct.pack(_INT[kind][0], value)
        elif kind in (6, 7):
            data = value.encode() if isinstance(value, str) else _bytes(value)
            part += struct.pack(">H", len(data)) + data
        elif kind == 8:
            part += struct.pack(">q", value)
        elif kind == 9:
            part += value.bytes if isinstance(value, uuid.UUID) else _bytes(value)
        parts.append(part)
    head = b"".join(parts)
    total = PRELUDE + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + head + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _bytes(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"a header of this type holds bytes, not {type(value).__name__}")
    return bytes(value)
