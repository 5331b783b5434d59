"""The `sse` framing: an incremental Server-Sent Events decoder (WHATWG rules), bytes in,
frames out.

Every dispatched event becomes a Frame that remembers which reads its bytes came
from, where it sits in the body and when it was completed, so the faces can show
read boundaries and timing. Comments and keep-alives are not frames.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator

import orjson

from ..core.frames import Frame, Truncation, parse_payload, refused_payload, sent_bytes

_BOM = b"\xef\xbb\xbf"
_loads = orjson.loads
_JSONError = orjson.JSONDecodeError


class SseDecoder:
    """Feed reads with `feed`; call `finish` once at the end of the body."""

    __slots__ = (
        "_buf",
        "_pos",
        "_reads",
        "_data",
        "_more",
        "_event",
        "_event_start",
        "_event_read",
        "_skip_lf",
        "_bom_checked",
        "_buf_read",
        "_old",
        "_last",
        "frames",
        "comments",
        "last_event_id",
        "retry",
    )

    def __init__(self) -> None:
        self._buf = b""  # an unfinished line carried to the next read
        self._pos = 0  # absolute offset of _buf[0]
        self._reads = 0
        self._data: list[bytes] = []
        self._more: list[bytes] = []  # reads after _buf that hold no line end yet
        self._event: bytes | None = None
        self._event_start = -1
        self._event_read = 0
        self._skip_lf = False  # a CR ended the last read: a leading LF belongs to it
        self._bom_checked = False
        self._buf_read = 0  # the read in which _buf began
        self._old = 0  # how much of the current data came from _buf
        self._last: Frame | None = None
        self.frames = 0
        self.comments = 0
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def copy(self) -> SseDecoder:
        """An independent decoder in the same state (a replay snapshot): its state is
        plain values but for two lists and the last frame (whose end a CRLF split across
        reads may still move); a deep copy walked every frame's parsed payload."""
        new = copy.copy(self)
        new._data = list(self._data)
        new._more = list(self._more)
        if self._last is not None:
            new._last = copy.copy(self._last)
        return new

    def feed(self, chunk: bytes, time_ns: int | None = None) -> list[Frame]:
        read = self._reads
        self._reads += 1
        if not self._bom_checked:
            if len(self._buf) + len(chunk) < 3 and _BOM.startswith(self._buf + chunk):
                self._buf += chunk  # could still become a BOM
                return []
            self._bom_checked = True
            head = self._buf + chunk
            if head.startswith(_BOM):
                head = head[3:]
                self._pos += 3
            self._buf, chunk = b"", head
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if self._last is not None and self._last.end == self._pos:
                    self._last.end += 1  # the LF of a CRLF split across reads
                self._pos += 1
        if self._buf and b"\n" not in chunk and b"\r" not in chunk:
            # A line still going on (one large event over many reads): kept as parts and
            # joined once, when the line ends, instead of growing a buffer read by read.
            self._more.append(chunk)
            return []
        if self._more:
            self._buf = b"".join([self._buf, *self._more])
            self._more = []
        if not self._buf:
            # The common read: exactly one whole event, `data: ...` or (Anthropic's)
            # `event: NAME` then `data: ...`. Same result as the line-by-line path.
            name, at = None, 0
            if chunk[:7] == b"event: ":
                at = chunk.find(b"\n", 7) + 1
                if at:
                    name = chunk[7 : at - 1]
            raw = None
            if not self._data and self._event_start < 0 and chunk[at : at + 6] == b"data: ":
                last = len(chunk)
                if (
                    chunk.find(b"\n", at + 6) == last - 2
                    and chunk[-1:] == b"\n"
                    and b"\r" not in chunk
                ):
                    raw = chunk[at + 6 : -2]
                elif (  # the same framed by CRLF, as Google sends (no event line)
                    not at
                    and chunk[-4:] == b"\r\n\r\n"
                    and chunk.find(b"\r", 6) == last - 4
                    and chunk.find(b"\n", 6) == last - 3
                ):
                    raw = chunk[6:-4]
            if raw is not None:
                try:
                    text, bad = raw.decode("utf-8"), False
                except UnicodeDecodeError:
                    text, bad = raw.decode("utf-8", "replace"), True
                try:
                    payload = _loads(text)
                except _JSONError as refused:  # (what the stdlib reads of it, if anything)
                    payload = refused_payload(text, str(refused))
                start = self._pos
                self._pos = end = start + len(chunk)
                self.frames = number = self.frames + 1
                event = None if name is None else name.decode("utf-8", "replace")
                frame = Frame(
                    number, text, payload, time_ns, event, read, read, start, end, bad,
                    raw=raw if bad else None,
                )  # fmt: skip
                self._last = frame
                return [frame]
            self._buf_read = read
        self._old = len(self._buf)
        data = self._buf + chunk if self._buf else chunk
        out: list[Frame] = []
        if b"\r" in data:
            consumed = self._lines_any(data, read, time_ns, out)
        else:
            consumed = self._lines_lf(data, read, time_ns, out)
        if consumed:
            self._buf_read = read
        self._buf = data[consumed:]
        self._pos += consumed
        if out:
            self._last = out[-1]
        return out

    def _lines_lf(self, data: bytes, read: int, time_ns: int | None, out: list[Frame]) -> int:
        start = 0
        find = data.find
        while True:
            end = find(b"\n", start)
            if end < 0:
                return start
            self._line(data[start:end], start, end + 1, read, time_ns, out)
            start = end + 1

    def _lines_any(self, data: bytes, read: int, time_ns: int | None, out: list[Frame]) -> int:
        start, n = 0, len(data)
        while start < n:
            lf = data.find(b"\n", start)
            cr = data.find(b"\r", start)
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                end, nxt = lf, lf + 1
            elif cr + 1 < n:
                end, nxt = cr, cr + 2 if data[cr + 1] == 10 else cr + 1
            else:  # CR at the very end of this read: the line is over, an LF may follow
                end, nxt = cr, cr + 1
                self._skip_lf = True
            self._line(data[start:end], start, nxt, read, time_ns, out)
            start = nxt
        return start

    def _line(
        self, line: bytes, at: int, after: int, read: int, time_ns: int | None, out: list[Frame]
    ) -> None:
        if not line:
            if self._data:
                out.append(self._dispatch(self._pos + after, read, time_ns))
            else:
                self._event = None
                self._event_start = -1
            return
        if self._event_start < 0:
            self._event_start = self._pos + at
            self._event_read = self._buf_read if at < self._old else read
        if line[0] == 58:  # ":" comment / keep-alive
            self.comments += 1
            return
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name, value = line[:colon], line[colon + 1 :]
            if value[:1] == b" ":
                value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\x00" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)

    def _dispatch(self, after: int, read: int, time_ns: int | None) -> Frame:
        parts = self._data
        raw = parts[0] if len(parts) == 1 else b"\n".join(parts)
        try:
            text, bad = raw.decode("utf-8"), False
        except UnicodeDecodeError:
            text, bad = raw.decode("utf-8", "replace"), True
        event = self._event.decode("utf-8", "replace") if self._event is not None else None
        self.frames += 1
        frame = Frame(
            self.frames,
            text,
            parse_payload(text),
            time_ns,
            event,
            self._event_read,
            read,
            self._event_start,
            after,
            bad,
            raw=raw if bad else None,
        )
        self._data = []
        self._event = None
        self._event_start = -1
        return frame

    def flush(self) -> list[Frame]:
        """The body is over: an event never ended by its blank line is no frame (WHATWG)."""
        return []

    def finish(self) -> Truncation | None:
        """End of body: an event still being built is discarded, and reported."""
        pending = b"".join([self._buf, *self._more])
        if not self._data and not pending:
            return None  # nothing unfinished (pending comments lose nothing)
        offset = self._event_start if self._event_start >= 0 else self._pos
        lines = [b"data: " + d for d in self._data]  # as they stood in the body
        text = b"\n".join([*lines, pending] if pending else lines)
        return Truncation(offset, text.decode("utf-8", "replace"))


_FIELDS = (b"data", b"event", b"id", b"retry")


def looks_like_sse(head: bytes) -> bool:
    """Whether a body's first line (past blank space) is an SSE field or comment."""
    line = head.split(b"\n", 1)[0].split(b"\r", 1)[0]
    if line.startswith(_BOM):
        line = line[3:]
    return line.startswith(b":") or line.split(b":", 1)[0].strip() in _FIELDS


def decode_body(body: bytes) -> tuple[list[Frame], Truncation | None]:
    """Decode a whole body at once (tests, small files)."""
    decoder = SseDecoder()
    frames = decoder.feed(body)
    return frames, decoder.finish()


def plain_datas(body: bytes) -> list[str] | None:
    """The data of each event SseDecoder dispatches from `body`, when the body has the
    plain form nearly every server writes (`data: ...` lines, each event ended by one
    blank line, LF line ends, valid UTF-8): in a few passes in C, no decoder step per
    line. None for any other body (decode it with SseDecoder)."""
    if b"\r" in body:  # a CR ends a line too
        return None
    lines = body.split(b"\n")
    lines.pop()  # after the last LF: an unfinished line (or nothing), never dispatched
    if len(lines) % 2 or any(lines[1::2]):  # every other line blank
        return None
    values = lines[0::2]
    if not all(line.startswith(b"data:") for line in values):  # (a BOM fails here too)
        return None
    try:
        return [(line[6:] if line[5:6] == b" " else line[5:]).decode("utf-8") for line in values]
    except UnicodeDecodeError:  # the decoder reads it with U+FFFD, and marks the frame
        return None


_LINE_END = re.compile(r"\r\n|\r|\n")


def write(frames: Iterable[Frame], whole: Callable[[], bool]) -> Iterator[bytes]:
    """Each event as a server writes it, one read an event: its `event:` line where it
    has a name one line can hold (an Anthropic event from Bedrock's chunks), `data:`
    lines (one a line of the data), then the empty line (CRLF, as Google's front ends
    write)."""
    for frame in frames:
        name = frame.event
        head = f"event: {name}\r\n" if name is not None and not _LINE_END.search(name) else ""
        lines = "".join(f"data: {line}\r\n" for line in _LINE_END.split(frame.data))
        yield sent_bytes(head + lines) + b"\r\n"  # (a data as sent: as_sent)
