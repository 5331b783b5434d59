"""Every input as a sequence of reads, and the decoder that turns reads into frames.

A recorded exchange's reads are its chunk lines; a saved SSE body is read in blocks; a
chunk log is read line by line. Each source also gives random access to read `i`, so
the replay can resume decoding from a snapshot instead of from the start.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator

from ..core.frames import Frame, parse_payload
from ..core.sse import SseDecoder, Truncation
from ..recording.reader import RecordingIndex

_BLOCK = 1 << 16


class LineDecoder:
    """A chunk log: each non-blank line is one frame (an SSE `data:` prefix is allowed).

    A line that is not JSON is still a frame; a cut-off last line (no newline, not JSON)
    is reported as truncation by `finish`.
    """

    __slots__ = ("frames", "offset", "_pending", "reads")

    def __init__(self) -> None:
        self.frames = 0
        self.offset = 0
        self.reads = 0
        self._pending: tuple[int, str] | None = None  # a last line with no newline yet

    def feed(self, line: bytes, time_ns: int | None = None) -> list[Frame]:
        read, self.reads = self.reads, self.reads + 1
        at, self.offset = self.offset, self.offset + len(line)
        body = line.strip()
        if not body:
            return []
        try:
            text, bad = body.decode("utf-8"), False
        except UnicodeDecodeError:
            text, bad = body.decode("utf-8", "replace"), True
        if text.startswith("data:"):  # an SSE line kept in a log: its data is the chunk
            text = text[5:].lstrip(" ")
        payload = parse_payload(text)
        if not line.endswith(b"\n") and not isinstance(payload, (dict, list)):
            self._pending = (at, text)
            return []
        self.frames += 1
        return [Frame(self.frames, text, payload, time_ns, None, read, read, at, self.offset, bad)]

    def finish(self) -> Truncation | None:
        return Truncation(*self._pending) if self._pending else None


class Reads:
    """Random access to one stream's reads, plus a fresh decoder for them."""

    def __len__(self) -> int:
        raise NotImplementedError

    def read(self, i: int) -> tuple[bytes, int | None]:
        """Read `i`: its bytes and its time (ns from the request), if known."""
        raise NotImplementedError

    def decoder(self) -> SseDecoder | LineDecoder:
        return SseDecoder()

    def frames(
        self, start_read: int = 0, decoder: SseDecoder | LineDecoder | None = None
    ) -> Iterator[Frame]:
        """Frames from read `start_read` on (with the decoder state there, if not 0)."""
        decoder = decoder or self.decoder()
        for i in range(start_read, len(self)):
            data, t = self.read(i)
            yield from decoder.feed(data, t)
        self.truncation = decoder.finish()


class ExchangeReads(Reads):
    """A recorded exchange: one read per chunk line, timed from its request."""

    def __init__(self, index: RecordingIndex, exchange: int) -> None:
        self.index = index
        info = index.exchange(exchange)
        self.lines = info.chunks
        self.t0 = index.line(info.request).t_ns if info.request is not None else 0

    def __len__(self) -> int:
        return len(self.lines)

    def read(self, i: int) -> tuple[bytes, int | None]:
        chunk = self.index.line(self.lines[i])
        return chunk.data_bytes, chunk.t_ns - self.t0


class BlockReads(Reads):
    """A saved SSE body, read in fixed blocks (its own reads were not kept)."""

    def __init__(self, path: str | os.PathLike[str], block: int = _BLOCK) -> None:
        self.path = os.fspath(path)
        self.block = block
        self.size = os.path.getsize(self.path)
        self._f = open(self.path, "rb")  # noqa: SIM115 (kept open for random reads)

    def __len__(self) -> int:
        return (self.size + self.block - 1) // self.block

    def read(self, i: int) -> tuple[bytes, int | None]:
        self._f.seek(i * self.block)
        return self._f.read(self.block), None


class LineReads(Reads):
    """A chunk log: one read per line (offsets indexed once, 8 bytes a line)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.offsets = array("q", [0])
        with open(self.path, "rb") as f:
            for line in f:
                self.offsets.append(self.offsets[-1] + len(line))
        self._f = open(self.path, "rb")  # noqa: SIM115 (kept open for random reads)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def read(self, i: int) -> tuple[bytes, int | None]:
        self._f.seek(self.offsets[i])
        return self._f.read(self.offsets[i + 1] - self.offsets[i]), None

    def decoder(self) -> LineDecoder:
        return LineDecoder()


# Sequential readers for `inspect` (no index needed).


class SseFile:
    """A saved SSE body: one stream. Iterate frames; then `truncation` is known."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.truncation: Truncation | None = None

    def frames(self, start: int = 1) -> Iterator[Frame]:
        decoder = SseDecoder()
        with open(self.path, "rb") as f:
            while block := f.read(1 << 20):
                for frame in decoder.feed(block):
                    if frame.number >= start:
                        yield frame
        self.truncation = decoder.finish()


class ChunksFile:
    """A chunk log: one stream, one frame per line. Then `truncation` is known."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.truncation: Truncation | None = None

    def frames(self, start: int = 1) -> Iterator[Frame]:
        decoder = LineDecoder()
        with open(self.path, "rb") as f:
            for line in f:
                for frame in decoder.feed(line):
                    if frame.number >= start:
                        yield frame
        self.truncation = decoder.finish()


def exchange_frames(index: RecordingIndex, exchange: int, start: int = 1) -> Iterator[Frame]:
    """The frames of one recorded exchange, decoded from its chunk lines."""
    for frame in ExchangeReads(index, exchange).frames():
        if frame.number >= start:
            yield frame
