"""The `ndjson` framing: one JSON value a line (Ollama's native stream); a chunk log is
one too. A chunk log and a recording of one give a line a read; a body read in blocks,
or a line split over reads, is joined and cut at its newlines first.

A line that is not JSON is still a frame (its dialect says what it is). The last line,
with no newline after it, is a frame when it is a whole JSON object or array (`flush`),
else truncation (`finish`). An SSE `data:` prefix is allowed (an SSE line kept in a log:
its data is the chunk).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator

from ..core.frames import Frame, Truncation, parse_payload, sent_bytes

_BOM = b"\xef\xbb\xbf"


class LineDecoder:
    """Feed reads with `feed`; at the end of the body `flush`, then `finish`, once."""

    __slots__ = ("frames", "offset", "reads", "_part", "_part_read", "_time")

    def __init__(self) -> None:
        self.frames = 0
        self.offset = 0  # where the line being read starts in the body
        self.reads = 0
        self._part: list[bytes] = []  # a line begun in earlier reads, no newline yet
        self._part_read = 0  # the read it began in
        self._time: int | None = None  # the last read's

    def copy(self) -> LineDecoder:
        """An independent decoder in the same state (plain values and one small list)."""
        new = copy.copy(self)
        new._part = list(self._part)
        return new

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        read, self.reads = self.reads, self.reads + 1
        self._time = time_ns
        if not self._part and data.find(b"\n") == len(data) - 1:  # one whole line: the hot path
            return self._line(data, read, read, time_ns)
        out: list[Frame] = []
        start = 0
        find = data.find
        while (cut := find(b"\n", start)) >= 0:
            piece, first = data[start : cut + 1], read
            if self._part:
                piece, first = b"".join([*self._part, piece]), self._part_read
                self._part = []
            out += self._line(piece, first, read, time_ns)
            start = cut + 1
        if start < len(data):
            if not self._part:
                self._part_read = read
            self._part.append(data[start:] if start else data)
        return out

    def _line(self, line: bytes, first: int, read: int, time_ns: int | None) -> list[Frame]:
        at = self.offset
        self.offset += len(line)
        body = line.strip()
        if at == 0 and body.startswith(_BOM):  # noted by the input layer, not a frame's data
            body = body[len(_BOM) :].strip()
        if not body:
            return []
        text, bad = _text(body)
        if text.startswith("data:"):  # an SSE line kept in a log: its data is the chunk
            text, body = text[5:].lstrip(" "), body[5:].lstrip(b" ")
        self.frames += 1
        payload = parse_payload(text)
        raw = body if bad else None
        at_end = self.offset
        return [
            Frame(self.frames, text, payload, time_ns, None, first, read, at, at_end, bad, raw=raw)
        ]

    def _last(self) -> tuple[bytes, str, object] | None:
        """The last line (no newline after it): its bytes, text and payload."""
        if not self._part:
            return None
        line = b"".join(self._part)
        body = line.strip()
        if self.offset == 0 and body.startswith(_BOM):
            body = body[len(_BOM) :].strip()
        if not body:
            return None
        text = _text(body)[0]
        if text.startswith("data:"):
            text = text[5:].lstrip(" ")
        return line, text, parse_payload(text)

    def flush(self) -> list[Frame]:
        """The body is over: its last line, with no newline, is a frame when it is a whole
        JSON object or array."""
        last = self._last()
        if last is None or not isinstance(last[2], (dict, list)):
            return []
        self._part = []
        return self._line(last[0], self._part_read, self.reads - 1, self._time)

    def finish(self) -> Truncation | None:
        """Why the body's last line is no frame: cut off (no newline, not whole JSON)."""
        last = self._last()
        if last is None or isinstance(last[2], (dict, list)):
            return None
        return Truncation(self.offset, last[1])


def _text(body: bytes) -> tuple[str, bool]:
    try:
        return body.decode("utf-8"), False
    except UnicodeDecodeError:
        return body.decode("utf-8", "replace"), True


def write(frames: Iterable[Frame], whole: Callable[[], bool]) -> Iterator[bytes]:
    """Each event's JSON as one line, one read a line."""
    for frame in frames:
        yield sent_bytes(frame.data) + b"\n"  # (a data as sent: as_sent)
