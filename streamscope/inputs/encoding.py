"""A recorded exchange's reads with their Content-Encoding undone (streamscope.core.codings
holds the decoding itself, its limits and its findings)."""

from __future__ import annotations

import threading
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from ..core.codings import (
    BODY_LIMIT,
    CODINGS,
    RATIO,
    SLACK,
    Decoded,
    Inflow,
    Undecodable,
    content_codings,
    decode_body,
    request_body,
    stored_decoded,
    without_codings,
)
from ..core.frames import Truncation
from ..framing import Framing
from ..recording.format import Request
from .reads import Reads

__all__ = [
    "BODY_LIMIT",
    "CODINGS",
    "RATIO",
    "SLACK",
    "Decoded",
    "DecodedReads",
    "Inflow",
    "Undecodable",
    "content_codings",
    "decode_body",
    "read_request",
    "request_body",
    "request_json",
    "stored_decoded",
    "without_codings",
]

_SPILL_BLOCK = 1 << 20  # what DecodedReads reads back from its spill at once


def read_request(request: Request) -> Decoded:
    """A recorded request's body as the client meant it: its Content-Encoding undone
    (unless the recording kept it decoded), or why it cannot be."""
    return request_body(request.headers, request.body_bytes, request.decoded)


def request_json(request: Request) -> Any | None:
    """A recorded request's body, decoded, parsed (None: no JSON, or not decodable)."""
    if request.decoded is None and not content_codings(request.headers):
        return request.json_body()  # (the common case, without a copy of the body)
    return read_request(request).json()


class DecodedReads(Reads):
    """A recorded exchange's reads as the client read them: read `i` is what the
    compressed read `i` decoded to (maybe nothing), with its time (the wire's).

    Decoding is sequential, and done once: what the reads decoded to is kept in a
    temporary file (8 bytes a read in memory), so a replay's jump back, or the bytes of
    one frame, read it from there instead of decoding the body again from its start.
    Reading past what is known decodes on from there (a body still being recorded)."""

    def __init__(self, wire: Reads, codings: Sequence[str]) -> None:
        self.wire = wire
        self.framing = wire.framing  # (told before the body is read decoded)
        self.codings = list(codings)
        self.failure: Undecodable | None = None  # known once decoding reached the end
        self._inflow = Inflow(self.codings)  # its state after the reads decoded so far
        self._offsets = array("q", [0])  # where each decoded read starts in the spill
        self._spill: BinaryIO | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.wire)

    @property
    def stop(self) -> int | None:  # a recording's read that cannot be read (see ExchangeReads)
        return getattr(self.wire, "stop", None)

    @stop.setter
    def stop(self, value: int | None) -> None:
        self.wire.stop = value  # type: ignore[attr-defined]

    def read(self, i: int) -> tuple[bytes, int | None]:
        return next(iter(self.reads_from(i, i + 1)))

    def reads_from(self, start: int, stop: int) -> Iterator[tuple[bytes, int | None]]:
        k = start
        while k < stop:
            with self._lock:
                known = len(self._offsets) - 1
            if k < known:  # decoded before: from the spill, with the wire's times
                end = min(stop, known)
                for (_, t), data in zip(
                    self.wire.reads_from(k, end), self._spilled(k, end), strict=True
                ):
                    yield data, t
                k = end
                continue
            for i, (data, t) in enumerate(self.wire.reads_from(known, stop), known):
                with self._lock:
                    if len(self._offsets) - 1 != i:  # another reader decoded it meanwhile
                        break
                    out = self._inflow.feed(data)
                    self._keep(out)
                    if i + 1 >= len(self):
                        self.failure = self._inflow.finish()
                if i >= k:
                    yield out, t
                    k = i + 1

    def _keep(self, out: bytes) -> None:
        """Spill the next read's decoded bytes (under the lock)."""
        if out:
            if self._spill is None:
                import tempfile  # (here: only a compressed body spills; start-up waits less)

                self._spill = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close)
            self._spill.seek(self._offsets[-1])
            self._spill.write(out)
        self._offsets.append(self._offsets[-1] + len(out))

    def _spilled(self, start: int, stop: int) -> Iterator[bytes]:
        """Reads start..stop-1 as decoded, read back from the spill in blocks."""
        offsets, k = self._offsets, start
        while k < stop:
            end = k + 1
            while end < stop and offsets[end + 1] - offsets[k] <= _SPILL_BLOCK:
                end += 1
            with self._lock:
                if offsets[end] > offsets[k]:
                    spill = self._spill
                    if spill is None:  # bytes were spilled: only close() drops the file
                        raise ValueError("DecodedReads read after it was closed")
                    spill.seek(offsets[k])
                    block = spill.read(offsets[end] - offsets[k])
                else:
                    block = b""
            base = offsets[k]
            for i in range(k, end):
                yield block[offsets[i] - base : offsets[i + 1] - base]
            k = end

    def decoder(self) -> Framing:
        return self.wire.decoder()

    def ended(self, truncation: Truncation | None) -> Truncation | None:
        """Why the body's frames end where they do: decoding failed, else `truncation`."""
        return self.failure or truncation

    def close(self) -> None:
        with self._lock:
            if self._spill is not None:
                self._spill.close()
                self._spill = None
                self._offsets = array("q", [0])
                self._inflow = Inflow(self.codings)
        self.wire.close()
