"""A body's Content-Encoding undone: read by read (a response), or whole (a request).

A recording keeps a body's bytes exactly as they arrived; an upstream (a CDN, a gateway)
may have compressed them with gzip, deflate, br or zstd. Every face analyses the body
as the client read it: `Inflow` decompresses it one read at a time (a frame's time is
the time of the compressed read that completed it; streamscope.inputs.encoding gives a
recorded exchange's reads decompressed). The one home of decoding: the recording's
writer (masking what a request body decodes to), the readers and export all call it.

A decompression bomb is refused: a read may decode to at most RATIO times its size, and
the body to at most RATIO times the bytes read so far, each plus SLACK (deflate cannot
exceed 1032:1; a real stream of JSON events compresses 5 to 50 times), so what one read
holds in memory is bounded by its size. Past that, and on bytes that are not what the
encoding says, an unknown encoding or a body that ends inside its compressed stream,
decoding stops and the stream gets one `stream-truncated` finding naming the encoding
(`Undecodable`).

A request body is decoded whole (`decode_body`, `request_body`): what the client meant to
send, for reading its model, tools and history and for masking it. It may decode to at
most BODY_LIMIT bytes; past that, as on bad data, it is read as not decoded and the
failure says why (the analysis files it as `request-undecodable`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Protocol

import orjson

from . import jsonio
from .frames import Truncation
from .record import record

CODINGS = ("gzip", "deflate", "br", "zstd")
_ALIASES = {"x-gzip": "gzip"}
RATIO = 1000
SLACK = 1 << 20
BODY_LIMIT = 64 << 20  # what a request body may decode to (Anthropic refuses over 32 MB)
_PIECE = 1 << 14  # a request body is fed in pieces: at most RATIO * _PIECE bytes at a step
_ZSTD_WINDOW_LOG = 23  # RFC 9659: an HTTP zstd body needs no window over 8 MB


@record(slots=True)
class Undecodable(Truncation):
    """The body cannot be decoded as its Content-Encoding says, from byte `offset` of the
    body as received on."""

    coding: str = ""
    reason: str = ""
    cut: bool = False  # the body ends inside its compressed stream (nothing else wrong)

    def describe(self) -> str:
        return (
            f"the body's Content-Encoding {self.coding} cannot be decoded from the read at "
            f"byte {self.offset} of the body as received: {self.reason}; nothing after it "
            "is read"
        )


def stored_decoded(codings: Sequence[str], body: bytes) -> bool:
    """Whether `body`, said to be in `codings`, is not: a HAR keeps bodies decoded (HAR 1.2:
    `content.text` is decompressed), though some tools keep the bytes as they came."""
    inflow = Inflow(codings)
    for k in range(0, len(body), 1 << 16):  # (what it decodes to is not kept)
        inflow.feed(body[k : k + (1 << 16)])
        if inflow.failure is not None:
            return True
    return inflow.finish() is not None


@record(frozen=True, slots=True)
class Decoded:
    """A request body as its Content-Encoding undone: `data` what it decodes to (the
    bytes as they are when there is nothing to undo, or it cannot be undone), `codings`
    what was undone, `failure` why it could not be."""

    data: bytes
    codings: tuple[str, ...] = ()
    failure: Undecodable | None = None

    @property
    def decoded(self) -> bool:
        return bool(self.codings) and self.failure is None

    def json(self) -> Any | None:
        """What it decodes to, parsed (None: no JSON, or it cannot be decoded)."""
        if self.failure is not None:
            return None
        try:
            return jsonio.loads(self.data)
        except orjson.JSONDecodeError:
            return None

    def describe(self) -> str:
        """The failure, said of a request body (empty when there is none)."""
        f = self.failure
        if f is None:
            return ""
        return (
            f"the request body's Content-Encoding {f.coding} cannot be decoded (at byte "
            f"{f.offset} of {len(self.data)} as sent): {f.reason}; its model, tools and "
            "history are not read"
        )


def decode_body(codings: Sequence[str], body: bytes, limit: int = BODY_LIMIT) -> Decoded:
    """A whole body (a request's), its `codings` undone; at most `limit` bytes of it."""
    if not codings:
        return Decoded(body)
    inflow, out, made = Inflow(codings), [], 0
    for k in range(0, len(body), _PIECE):
        got = inflow.feed(body[k : k + _PIECE])
        made += len(got)
        if made > limit:
            why = f"it decodes to more than {limit} bytes, so decoding stopped there"
            return Decoded(body, tuple(codings), Undecodable(k, "", ", ".join(codings), why))
        if inflow.failure is not None:
            break
        out.append(got)
    failure = inflow.finish()
    if failure is not None:
        return Decoded(body, tuple(codings), failure)
    return Decoded(b"".join(out), tuple(codings))


def request_body(
    headers: Sequence[tuple[str, str]], body: bytes, stored: Sequence[str] | None = None
) -> Decoded:
    """A request body as the client meant it, its Content-Encoding undone; `stored`:
    the codings already undone where it was kept (a recording's `body_decoded`)."""
    if stored:
        return Decoded(body, tuple(stored))
    return decode_body(content_codings(headers), body)


def content_codings(headers: Sequence[tuple[str, str]] | None) -> list[str]:
    """The codings a body's Content-Encoding lists, in the order they were applied
    (`identity` left out; lower case)."""
    found: list[str] = []
    for name, value in headers or ():
        if name.lower() == "content-encoding":
            found += [c.strip().lower() for c in value.split(",") if c.strip()]
    return [_ALIASES.get(c, c) for c in found if c != "identity"]


def without_codings(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers of the same response carried decoded: no Content-Encoding, and no
    Content-Length (it counted the encoded bytes)."""
    return [(k, v) for k, v in headers if k.lower() not in ("content-encoding", "content-length")]


class _Failed(Exception):
    pass


# brotli and zstd come untyped (zstd is the standard library's only from Python 3.14):
# what of their decompressors the decoders use, so that what they return is typed.
class _BrotliDecompressor(Protocol):
    def process(self, data: bytes, output_buffer_limit: int) -> bytes: ...
    def is_finished(self) -> bool: ...
    def can_accept_more_data(self) -> bool: ...


class _ZstdDecompressor(Protocol):
    @property
    def eof(self) -> bool: ...
    @property
    def needs_input(self) -> bool: ...
    @property
    def unused_data(self) -> bytes: ...
    def decompress(self, data: bytes, max_length: int) -> bytes: ...


class _Zlib:
    """gzip (one member after another, as RFC 1952 allows) and deflate (zlib-wrapped as
    RFC 9110 says, or raw, as some servers send it)."""

    __slots__ = ("gzip", "coding", "d", "head", "ended")

    def __init__(self, gzip: bool) -> None:
        self.gzip = gzip
        self.coding = "gzip" if gzip else "deflate"
        self.d = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None
        self.head = b""  # deflate: the first bytes, until they tell zlib-wrapped from raw
        self.ended = False

    def feed(self, data: bytes, room: int) -> bytes:
        if self.d is None:
            self.head += data
            if len(self.head) < 2:
                return b""
            b0, b1 = self.head[0], self.head[1]
            wrapped = b0 & 0x0F == 8 and (b0 << 8 | b1) % 31 == 0
            self.d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self.head = self.head, b""
        out = []
        while data:
            if self.ended:
                if not self.gzip:
                    raise _Failed(f"{len(data)} bytes after the end of the deflate stream")
                self.d, self.ended = zlib.decompressobj(16 + zlib.MAX_WBITS), False
            try:
                got = self.d.decompress(data, max(room, 1))
            except zlib.error as e:
                raise _Failed(f"not valid {self.coding} data ({_said(e)})") from None
            if self.d.unconsumed_tail:
                raise _Failed(_BOMB)
            out.append(got)
            room -= len(got)
            self.ended = self.d.eof
            data = self.d.unused_data if self.ended else b""
        return b"".join(out)

    def complete(self) -> bool:
        return self.ended


def _said(e: Exception) -> str:
    """What a decompressor said, without its error number ("incorrect header check")."""
    text = str(e).split(": ", 1)[-1] if "while decompressing" in str(e) else str(e)
    return " ".join(text.split()) or type(e).__name__


# brotli and zstd are imported by the first body that is compressed with them: most
# streams are not, and every command would pay for both at start-up


class _Brotli:
    __slots__ = ("d",)

    def __init__(self) -> None:
        self.d: _BrotliDecompressor = _brotli_module().Decompressor()

    def feed(self, data: bytes, room: int) -> bytes:
        if data and self.d.is_finished():
            raise _Failed(f"{len(data)} bytes after the end of the br stream")
        try:
            got = self.d.process(data, output_buffer_limit=max(room, 1))
        except _brotli_module().error as e:
            raise _Failed(f"not valid br data ({_said(e)})") from None
        if not self.d.can_accept_more_data():
            raise _Failed(_BOMB)
        return got

    def complete(self) -> bool:
        return self.d.is_finished()


class _Zstd:
    """One frame after another (RFC 8878 allows several)."""

    __slots__ = ("d",)

    def __init__(self) -> None:
        self.d: _ZstdDecompressor = _zstd()

    def feed(self, data: bytes, room: int) -> bytes:
        out = []
        while data:
            if self.d.eof:
                self.d = _zstd()
            try:
                got = self.d.decompress(data, max(room, 1))
            except _zstd_module().ZstdError as e:
                raise _Failed(f"not valid zstd data ({_said(e)})") from None
            if not self.d.needs_input and not self.d.eof:
                raise _Failed(_BOMB)
            out.append(got)
            room -= len(got)
            data = self.d.unused_data if self.d.eof else b""
        return b"".join(out)

    def complete(self) -> bool:
        return self.d.eof


def _brotli_module() -> Any:
    import brotli

    return brotli


def _zstd_module() -> Any:
    try:
        from compression import zstd  # Python 3.14
    except ImportError:  # pragma: no cover (the backport, on older Pythons)
        from backports import zstd
    return zstd


def _zstd() -> _ZstdDecompressor:
    zstd = _zstd_module()
    d: _ZstdDecompressor = zstd.ZstdDecompressor(
        options={zstd.DecompressionParameter.window_log_max: _ZSTD_WINDOW_LOG}
    )
    return d


_BOMB = (
    f"it decodes to more than {RATIO} times its size (a decompression bomb?), "
    "so decoding stopped there"
)


def _step(coding: str) -> _Zlib | _Brotli | _Zstd:
    if coding == "br":
        return _Brotli()
    if coding == "zstd":
        return _Zstd()
    return _Zlib(coding == "gzip")


class Inflow:
    """One body's Content-Encoding, undone read by read: `feed` takes the bytes of a read
    as they arrived and gives the bytes the client read from them; `failure` says why
    decoding stopped (then every later read gives nothing)."""

    __slots__ = ("codings", "steps", "fed", "made", "failure")

    def __init__(self, codings: Sequence[str]) -> None:
        self.codings = list(codings)
        self.fed = 0  # bytes taken, as they arrived
        self.made = 0  # bytes given, decoded
        self.failure: Undecodable | None = None
        unknown = [c for c in self.codings if c not in CODINGS]
        self.steps = [] if unknown else [_step(c) for c in reversed(self.codings)]
        if unknown:
            self.failure = Undecodable(
                0,
                "",
                repr(unknown[0]),
                f"it is not one streamscope decodes ({', '.join(CODINGS)})",
            )

    def feed(self, data: bytes) -> bytes:
        at = self.fed
        self.fed += len(data)
        if self.failure is not None or not data:
            return b""
        coding = self.codings[-1] if self.codings else ""
        room = min(RATIO * len(data), RATIO * self.fed - self.made) + SLACK
        try:
            for step, coding in zip(self.steps, reversed(self.codings), strict=True):  # noqa: B007
                data = step.feed(data, room)
        except _Failed as e:
            self.failure = Undecodable(at, "", coding, str(e))
            return b""
        self.made += len(data)
        return data

    def finish(self) -> Undecodable | None:
        """The body is over: why it could not be decoded, if it could not (a body that
        ends inside its compressed stream was cut short)."""
        if self.failure is None and self.fed:  # (not kept: a growing body may go on)
            for step, coding in zip(self.steps, reversed(self.codings), strict=True):
                if not step.complete():
                    why = f"the body ends inside its {coding} stream"
                    return Undecodable(self.fed, "", coding, why, True)
        return self.failure
