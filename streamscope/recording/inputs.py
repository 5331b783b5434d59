"""Frames from each kind of input: a raw SSE body, chunk JSON lines, a recording's exchange."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..core.frames import Frame, parse_payload
from ..core.sse import SseDecoder, Truncation
from .reader import RecordingIndex

_BLOCK = 1 << 20


class SseFile:
    """A saved SSE body: one stream. Iterate frames; then `truncation` is known."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.truncation: Truncation | None = None

    def frames(self, start: int = 1) -> Iterator[Frame]:
        decoder = SseDecoder()
        with open(self.path, "rb") as f:
            while block := f.read(_BLOCK):
                for frame in decoder.feed(block):
                    if frame.number >= start:
                        yield frame
        self.truncation = decoder.finish()


class ChunksFile:
    """JSON Lines of chat.completion.chunk objects: one stream, one frame per line.

    A line that is not JSON is still a frame (the analysis names it); a cut-off last
    line (no newline at the end, not JSON) is reported as truncation.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.truncation: Truncation | None = None

    def frames(self, start: int = 1) -> Iterator[Frame]:
        number, offset = 0, 0
        with open(self.path, "rb") as f:
            for raw in f:
                at, offset = offset, offset + len(raw)
                line = raw.strip()
                if not line:
                    continue
                try:
                    text, bad = line.decode("utf-8"), False
                except UnicodeDecodeError:
                    text, bad = line.decode("utf-8", "replace"), True
                if text.startswith("data:"):  # an SSE line kept in a log: its data is the chunk
                    text = text[5:].lstrip(" ")
                payload = parse_payload(text)
                if not raw.endswith(b"\n") and not isinstance(payload, (dict, list)):
                    self.truncation = Truncation(at, text)
                    return
                number += 1
                if number >= start:
                    yield Frame(
                        number, text, payload, None, None, number - 1, number - 1, at, offset, bad
                    )


def exchange_frames(index: RecordingIndex, exchange: int, start: int = 1) -> Iterator[Frame]:
    """The frames of one recorded exchange, decoded from its chunk lines."""
    decoder = SseDecoder()
    info = index.exchange(exchange)
    t0 = index.line(info.request).t_ns if info.request is not None else 0
    for chunk in index.chunks(exchange):
        for frame in decoder.feed(chunk.data_bytes, chunk.t_ns - t0):
            if frame.number >= start:
                yield frame
