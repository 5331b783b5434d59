"""Recordings whose bodies an upstream compressed: a bundled recording's every body
encoded as a streaming server does it, one compressed piece per read (flushed, so each
read decodes to the bytes the plain read held), its response saying Content-Encoding."""

from __future__ import annotations

import zlib
from pathlib import Path

import brotli
import orjson

from streamscope.recording.format import Chunk

try:
    from compression import zstd
except ImportError:
    from backports import zstd

CODINGS = ("gzip", "deflate", "br", "zstd")


class Encoder:
    """One body's compressor: `piece(data)` for each read, `last()` for the end."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        if coding == "identity":
            self.c = None
        elif coding == "gzip":
            self.c = zlib.compressobj(wbits=31)
        elif coding in ("deflate", "raw-deflate"):
            self.c = zlib.compressobj(wbits=15 if coding == "deflate" else -15)
        elif coding == "br":
            self.c = brotli.Compressor()
        else:
            self.c = zstd.ZstdCompressor()

    def piece(self, data: bytes, last: bool = False) -> bytes:
        if self.coding == "identity":  # (a body whose header says otherwise)
            return data
        c = self.c
        if self.coding == "br":
            return c.process(data) + (c.finish() if last else c.flush())
        if self.coding == "zstd":
            mode = c.FLUSH_FRAME if last else c.FLUSH_BLOCK
            return c.compress(data, mode)
        return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def decode(codings: str, data: bytes) -> bytes:
    """A whole body, its Content-Encoding (codings in the order applied) undone by each
    coding's own library, not streamscope's: what a server reads of a request."""
    for coding in reversed([c.strip() for c in codings.split(",") if c.strip()]):
        if coding == "gzip":
            data = zlib.decompress(data, wbits=31)
        elif coding == "deflate":
            data = zlib.decompress(data)
        elif coding == "br":
            data = brotli.decompress(data)
        elif coding == "zstd":
            data = zstd.decompress(data)
        else:
            raise ValueError(f"no decoder for {coding!r}")
    return data


def encode(codings: str, data: bytes) -> bytes:
    """A whole body in `codings` (applied in order, as Content-Encoding lists them)."""
    for coding in [c.strip() for c in codings.split(",") if c.strip()]:
        data = Encoder(coding).piece(data, last=True)
    return data


def encode_recording(
    src: str | Path, dst: str | Path, coding: str, header: str | None = None
) -> Path:
    """`src` with every response body encoded in `coding` (each read one flushed piece),
    and a Content-Encoding header naming `header` (default: the coding)."""
    lines = [orjson.loads(x) for x in Path(src).read_bytes().splitlines() if x.strip()]
    chunks: dict[int, list[int]] = {}
    for i, d in enumerate(lines):
        if d.get("type") == "chunk":
            chunks.setdefault(d["exchange"], []).append(i)
    name = header or ("deflate" if coding == "raw-deflate" else coding)
    for d in lines:
        if d.get("type") == "response" and d["exchange"] in chunks:
            d["headers"] = [[k, v] for k, v in d["headers"] if k.lower() != "content-length"]
            d["headers"].append(["content-encoding", name])
    for ex, where in chunks.items():
        enc = Encoder(coding)
        for k, i in enumerate(where):
            d = lines[i]
            raw = Chunk.from_json(d).data_bytes
            lines[i] = Chunk.of(ex, d["t_ns"], enc.piece(raw, k == len(where) - 1)).to_json()
    Path(dst).write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    return Path(dst)
