"""The `aws-eventstream` framing: the AWS event stream (Bedrock's and every boto3
streaming call's), binary messages one after another.

A message: a 12-byte prelude (total length, headers length, both big-endian uint32, and
the CRC32 of those 8 bytes), typed headers, the payload, and the CRC32 of everything
before it. Read incrementally across reads; each message is one frame: its event is the
`:event-type` header (an exception's `:exception-type`, an error's `:error-code`), its
data the payload as text, its payload that text parsed as JSON, its headers typed.

A `chunk` message (Bedrock's InvokeModelWithResponseStream: `{"bytes": "<base64>"}`,
and a `p` of padding) is an envelope, as an SSE event's `data:` lines are: it carries one
event of the model's own API (an Anthropic Messages event, a Llama or Titan chunk), so
its frame is that event: its data the decoded bytes, its event the event's `type` (as
the anthropic SDK's Bedrock decoder names it), its headers the message's. A chunk whose
`bytes` are missing or no base64 is said at its frame; bytes that decode to no JSON are
the event's data, for its dialect to say so (as a `data:` line that is no JSON is).

What is wrong is said at its frame (`Frame.invalid`): a message whose CRC does not
match, or whose headers do not read, is still a frame; a prelude whose CRC does not
match, or that gives an impossible length, leaves no way to find the next message, so
its frame is the last (the bytes after it are not read). A body that ends inside a
message is truncation.
"""

from __future__ import annotations

import base64
import binascii
import copy
import struct
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator

import orjson

from ..core import jsonio
from ..core.frames import INVALID, Frame, FrameHeader, Truncation, parse_payload, sent_bytes

PRELUDE = 12
_PRELUDE = struct.Struct(">III")  # total length, headers length, the prelude's CRC
_CRC = struct.Struct(">I")
_MIN = PRELUDE + 4  # a message with no headers and no payload
# botocore's limits (eventstream.py): larger is no message a service sends
MAX_HEADERS = 128 * 1024
MAX_PAYLOAD = 16 * 1024 * 1024
_INT = {2: (">b", 1, "byte"), 3: (">h", 2, "short"), 4: (">i", 4, "integer"), 5: (">q", 8, "long")}
# a header's type number, by the name FrameHeader gives its type (bool: 0 true, 1 false)
_TYPE_NUMBER = {
    **{name: kind for kind, (_, _, name) in _INT.items()},
    "byte_array": 6,
    "string": 7,
    "timestamp": 8,
    "uuid": 9,
}
CHUNK = "chunk"  # the envelope's `:event-type`
JSON = "application/json"


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
            whole = self._whole(data, read, time_ns)
            if whole is not None:
                return [whole]
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

    def _whole(self, data: bytes, read: int, time_ns: int | None) -> Frame | None:
        """The frame of a read that is one whole event message, every check passing (the
        usual read); None for any other read, which the general path takes."""
        size = len(data)
        if size < _MIN:
            return None
        total, length, crc = _PRELUDE.unpack_from(data)
        if (
            total != size
            or length > MAX_HEADERS
            or length > total - _MIN
            or total - _MIN - length > MAX_PAYLOAD
            or zlib.crc32(data[:8]) != crc
            or zlib.crc32(memoryview(data)[:-4]) != _CRC.unpack_from(data, size - 4)[0]
        ):
            return None
        headers, bad, event, chunk = _read_headers(data[PRELUDE : PRELUDE + length])
        if bad is not None or chunk:
            return None
        try:
            text = data[PRELUDE + length : -4].decode("utf-8")
        except UnicodeDecodeError:
            return None
        self.frames += 1
        start = self._pos
        self._pos += size
        value = parse_payload(text) if text else INVALID
        return Frame(
            self.frames, text, value, time_ns, event, read, read, start, start + size,
            False, None, headers,
        )  # fmt: skip

    def _message(self, msg: bytes, read: int, time_ns: int | None) -> Frame:
        headers_length = struct.unpack_from(">I", msg, 4)[0]
        problems = []
        (crc,) = struct.unpack_from(">I", msg, len(msg) - 4)
        if zlib.crc32(msg[:-4]) != crc:
            problems.append(
                f"its message CRC does not match (0x{crc:08x} sent, "
                f"0x{zlib.crc32(msg[:-4]):08x} computed)"
            )
        headers, bad_header, event, chunk = _read_headers(msg[PRELUDE : PRELUDE + headers_length])
        if bad_header:
            problems.append(bad_header)
        payload = msg[PRELUDE + headers_length : -4]
        problem = "; ".join(problems) or None
        if problem is None and chunk:
            inner, why = _chunk_bytes(payload)
            if why is not None:
                return self._frame(payload, read, time_ns, why, headers, len(msg), event)
            return self._frame(inner, read, time_ns, None, headers, len(msg), event, chunk=True)
        return self._frame(payload, read, time_ns, problem, headers, len(msg), event)

    def _frame(
        self,
        payload: bytes,
        read: int,
        time_ns: int | None,
        problem: str | None,
        headers: tuple[FrameHeader, ...] = (),
        length: int | None = None,
        event: str | None = None,
        chunk: bool = False,
    ) -> Frame:
        try:
            text, bad = payload.decode("utf-8"), False
        except UnicodeDecodeError:
            text, bad = payload.decode("utf-8", "replace"), True
        value = parse_payload(text) if text else INVALID
        if problem is not None and isinstance(value, dict):
            value = INVALID  # bytes the framing cannot vouch for are read as no event
        if chunk:  # the event it carries names itself, as its SDK names it
            kind = value.get("type") if isinstance(value, dict) else None
            event = kind if isinstance(kind, str) else None
        self.frames += 1
        start = self._pos
        end = start + (length if length is not None else len(payload))
        return Frame(
            self.frames,
            text,
            value,
            time_ns,
            event,
            self._first,
            read,
            start,
            end,
            bad,
            problem,
            headers,
            payload if bad else None,
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


# Headers as read, by their bytes: a stream's messages repeat a few sets of headers
# (`:event-type` contentBlockDelta, `:content-type`, `:message-type`), so each set is read
# once. FrameHeader is frozen and its values immutable: the tuples are shared.
_READ: dict[bytes, tuple[tuple[FrameHeader, ...], str | None, str | None, bool]] = {}
_READ_MAX = 1024


def _read_headers(raw: bytes) -> tuple[tuple[FrameHeader, ...], str | None, str | None, bool]:
    """(headers, why the rest do not read, the event's name, whether it is a chunk)."""
    known = _READ.get(raw)
    if known is None:
        headers, problem = _headers(raw)
        known = (headers, problem, _event(headers), is_chunk(headers))
        if len(_READ) < _READ_MAX:
            _READ[raw] = known
    return known


def _header(headers: tuple[FrameHeader, ...], name: str) -> object:
    return next((h.value for h in headers if h.name == name), None)


def is_chunk(headers: tuple[FrameHeader, ...]) -> bool:
    """An event message whose `:event-type` is `chunk` (an envelope; its frame is the
    event it carries)."""
    kind = _header(headers, ":message-type")
    return kind in (None, "event") and _header(headers, ":event-type") == CHUNK


def _chunk_bytes(payload: bytes) -> tuple[bytes, str | None]:
    """The bytes a chunk carries, or why it carries none."""
    try:
        outer = jsonio.loads(payload)
    except orjson.JSONDecodeError:
        return b"", 'its chunk\'s payload is not JSON (a chunk holds {"bytes": base64})'
    raw = outer.get("bytes") if isinstance(outer, dict) else None
    if not isinstance(raw, str):
        return b"", 'its chunk holds no "bytes" string (a chunk holds {"bytes": base64})'
    try:
        return base64.b64decode(raw, validate=True), None
    except (binascii.Error, ValueError):
        return b"", 'its chunk\'s "bytes" are not base64'


def fault(frame: Frame) -> tuple[str, str] | None:
    """(type, message) of an exception or error message (`:message-type`), as botocore
    reads one (its `:exception-type` and payload's `message`; its `:error-code` and
    `:error-message`); None for an event. Any JSON may stand in the payload."""
    kind = _header(frame.headers, ":message-type")
    if kind == "exception":
        name = _header(frame.headers, ":exception-type")
        said = frame.payload.get("message") if isinstance(frame.payload, dict) else None
        message: object = said if isinstance(said, str) else frame.data
    elif kind == "error":
        name = _header(frame.headers, ":error-code")
        message = _header(frame.headers, ":error-message")
    else:
        return None
    return (name if isinstance(name, str) else "", message if isinstance(message, str) else "")


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


def message_of(frame: Frame) -> bytes:
    """One frame as the message a server writes: its recorded headers (names, types and
    values as recorded) and its data; a chunk's event (or an event that came with no
    headers: an SSE event) wrapped in a `chunk` again, its bytes base64."""
    data = sent_bytes(frame.data)  # (a data as sent: as_sent)
    headers = [(h.name, type_number(h), h.value) for h in frame.headers]
    if not headers or is_chunk(frame.headers):
        data = orjson.dumps({"bytes": base64.b64encode(data).decode("ascii")})
        if not headers:
            headers = [(":event-type", 7, CHUNK), (":content-type", 7, JSON)]
            headers.append((":message-type", 7, "event"))
    return encode(headers, data)


def type_number(header: FrameHeader) -> int:
    """The type number a header is written with (bool: 0 true, 1 false)."""
    if header.type == "bool":
        return 0 if header.value else 1
    return _TYPE_NUMBER[header.type]


def write(frames: Iterable[Frame], whole: Callable[[], bool]) -> Iterator[bytes]:
    """Each frame as one message (`message_of`), one read a message."""
    for frame in frames:
        yield message_of(frame)


def _bytes(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"a header of this type holds bytes, not {type(value).__name__}")
    return bytes(value)
