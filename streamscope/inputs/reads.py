"""Every input's streams as sequences of reads, decoded to frames by the stream's framing.

A recorded exchange's reads are its chunk lines; a saved body is read in blocks; a
chunk log is read line by line. Each source also gives random access to read `i`, so
the replay can resume decoding from a snapshot instead of from the start. Which framing
decodes the reads is the stream's (`Reads.framing`, told where the stream is opened).
"""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Iterator
from typing import TypeVar

from .. import framing as framings
from ..core.frames import Frame, Truncation
from ..framing import Framing
from ..recording.copies import readable
from ..recording.format import MAX_T_NS, Chunk, End, RecordingError, Request, Response
from ..recording.reader import RecordingIndex

_BLOCK = 1 << 16

_R = TypeVar("_R", bound=Request | Response | Chunk | End)


def record_at(index: RecordingIndex, n: int, kind: type[_R]) -> _R:
    """Line `n` of a recording, which its index files as a `kind` line (it files a line
    by its type, so only a file changed under the index has another there)."""
    record = index.line(n)  # a located RecordingError when a field is wrong
    if not isinstance(record, kind):
        raise RecordingError(
            f"{index.path}: line {n}: expected a {kind.type} line, found a {record.type} line",
            index.path,
            n,
        )
    return record


class Reads:
    """Random access to one stream's reads, plus a fresh decoder (its framing) for them.

    `frames()` sets `truncation` when it reaches the end of the body.
    """

    truncation: Truncation | None = None
    framing: str | None = None  # the stream's framing (None: SSE, the framing nothing told)

    def __len__(self) -> int:
        raise NotImplementedError

    def read(self, i: int) -> tuple[bytes, int | None]:
        """Read `i`: its bytes and its time (ns from the request), if known."""
        raise NotImplementedError

    def byte_size(self) -> int | None:
        """About how many bytes the reads hold, when that is known without reading them
        (None: it is not)."""
        return None

    def reads_from(self, start: int, stop: int) -> Iterator[tuple[bytes, int | None]]:
        """Reads `start` to `stop - 1` in order, as `read` gives them (a source may read
        ahead in big blocks)."""
        for i in range(start, stop):
            yield self.read(i)

    def decoder(self) -> Framing:
        """The stream's framing, at the start of the body."""
        return framings.new(self.framing)

    def frames(self, start_read: int = 0, decoder: Framing | None = None) -> Iterator[Frame]:
        """Frames from read `start_read` on (with the decoder state there, if not 0)."""
        decoder = decoder or self.decoder()
        for data, t in self.reads_from(start_read, len(self)):
            yield from decoder.feed(data, t)
        yield from decoder.flush()
        self.truncation = self.ended(decoder.finish())

    def ended(self, truncation: Truncation | None) -> Truncation | None:
        """Why the body's frames end where they do, given the decoder's `truncation`
        (a compressed body may say more: inputs/encoding.py)."""
        return truncation

    def close(self) -> None:
        """Close what the reads hold open (a recording's index is its source's to close)."""


class ExchangeReads(Reads):
    """A recorded exchange: one read per chunk line, timed from its request."""

    def __init__(self, index: RecordingIndex, exchange: int) -> None:
        self.index = index
        info = index.exchange(exchange)
        self.lines = info.chunks
        # times count from the request (else from the response head, if that was recorded)
        if info.request is not None:
            self.t0 = record_at(index, info.request, Request).t_ns
        elif info.response is not None:
            self.t0 = record_at(index, info.response, Response).t_ns
        else:
            self.t0 = 0
        self.stop: int | None = None  # reads past a line that cannot be read are not offered

    def __len__(self) -> int:
        return len(self.lines) if self.stop is None else self.stop

    def byte_size(self) -> int:
        return sum(map(self.index.line_size, self.lines))  # (their lines, as recorded)

    def read(self, i: int) -> tuple[bytes, int | None]:
        n = self.lines[i]
        return self._take(n, self.index.raw_line(n))

    def reads_from(self, start: int, stop: int) -> Iterator[tuple[bytes, int | None]]:
        lines = self.lines
        for i, d in enumerate(self.index.raw_lines(lines, start, stop), start):
            yield self._take(lines[i], d)

    def _take(self, n: int, d: object) -> tuple[bytes, int | None]:
        """Line `n`, parsed as `d`: its bytes and time."""
        # the hot path, as inspect's reader: a chunk line whose every field has its type
        # (what body_record would check) is taken as it is, without building its record
        if (
            type(d) is dict
            and type(data := d.get("data")) is str
            and d.get("type") == "chunk"
            and type(t := d.get("t_ns")) is int
            and -MAX_T_NS <= t <= MAX_T_NS
            and type(d.get("exchange")) is int
            and "data_b64" not in d
        ):
            return data.encode("utf-8"), t - self.t0
        chunk = record_at(
            self.index, n, Chunk
        )  # checked field by field: a located error says what is wrong
        return chunk.data_bytes, chunk.t_ns - self.t0


class BlockReads(Reads):
    """A saved body, read in fixed blocks (its own reads were not kept)."""

    def __init__(
        self, path: str | os.PathLike[str], block: int = _BLOCK, framing: str | None = None
    ) -> None:
        self.path = os.fspath(path)
        self.framing = framing
        self.block = block
        self._f = open(readable(self.path), "rb")  # noqa: SIM115 (kept open for random reads)
        self._lock = threading.Lock()  # seek + read must not interleave between threads
        self.size = os.fstat(self._f.fileno()).st_size

    def close(self) -> None:
        self._f.close()

    def __len__(self) -> int:
        return (self.size + self.block - 1) // self.block

    def byte_size(self) -> int:
        return self.size

    def read(self, i: int) -> tuple[bytes, int | None]:
        with self._lock:
            self._f.seek(i * self.block)
            return self._f.read(self.block), None


class LineReads(Reads):
    """A chunk log: one read per line. Random access indexes the lines first (8 bytes a
    line); reading from the start does not need to."""

    framing = "ndjson"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._offsets: array[int] | None = None
        self._f = open(readable(self.path), "rb")  # noqa: SIM115 (kept open for random reads)
        self._lock = threading.Lock()

    @property
    def offsets(self) -> array[int]:
        if self._offsets is None:
            offsets = array("q", [0])
            with open(readable(self.path), "rb") as f:
                for line in f:
                    offsets.append(offsets[-1] + len(line))
            self._offsets = offsets
        return self._offsets

    def byte_size(self) -> int:
        return os.path.getsize(readable(self.path))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def read(self, i: int) -> tuple[bytes, int | None]:
        offsets = self.offsets
        with self._lock:
            self._f.seek(offsets[i])
            return self._f.read(offsets[i + 1] - offsets[i]), None

    def frames(self, start_read: int = 0, decoder: Framing | None = None) -> Iterator[Frame]:
        if start_read or self._offsets is not None:
            yield from super().frames(start_read, decoder)
            return
        decoder = decoder or self.decoder()
        with open(readable(self.path), "rb") as f:  # one pass, no index
            for line in f:
                yield from decoder.feed(line)
        yield from decoder.flush()
        self.truncation = decoder.finish()

    def close(self) -> None:
        self._f.close()
