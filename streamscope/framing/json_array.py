"""The `json-array` framing: a body that is one JSON array sent element by element, as
Gemini streams without `alt=sse` (`[{...}\\n,\\r\\n{...}\\n]`, pretty-printed or not).

Read incrementally, never the whole body at once: each element is one frame, parsed as
soon as its last byte arrives. An element's end is found by its braces, checked by
parsing it (a part of a JSON value that parses whole is the whole value); where that
does not settle it (braces inside strings, a broken element, nesting past the parser's
limit, an element split across reads) a small scanner that tracks strings, escapes and
depth finds it, each byte once, in linear time and without recursion.

What is wrong is said at its frame (`Frame.invalid`): an element that is not JSON or no
object, an element with no comma before it, a body that does not open with `[`, bytes
after the closing `]` (one frame at the end of the body). A body that ends before its
closing `]` is truncation.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator

import orjson

from ..core.frames import INVALID, Frame, Truncation, sent_bytes
from ..core.jsonio import loads
from ..text import plural

_OPEN, _ITEMS, _AFTER = 0, 1, 2
_OBJ, _STR, _SCALAR = 0, 1, 2  # what the element being scanned is
_BOM = b"\xef\xbb\xbf"
_WS = re.compile(rb"[ \t\r\n]*")
# a closer that likely ends an element: followed by a comma and the next element's opener,
# by the array's end, or by the read's end
_CLOSER = re.compile(
    rb"[}\]](?=[ \t\r\n]*(?:,[ \t\r\n]*(?:[{\[]|\Z)|\][ \t\r\n]*(?:\Z|[^ \t\r\n,])|\Z))"
)
_TOKEN = re.compile(rb'[][{}"]')
# a string's body, "unrolled" so no input makes it backtrack (Python 3.10 has no `*+`)
_STRING = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_SCALAR_END = re.compile(rb"[,\]\s]")
_NEXT = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*(?=\{)")  # the comma before a next element
_BLANK = b" \t\r\n"
_TRIES = 4  # closers the fast path looks at before the scanner takes over
_KEPT = 4096  # bytes of a cut-off element or of what follows the array kept for the report
_loads = orjson.loads
_JSONError = orjson.JSONDecodeError


class Unclosed(Truncation):
    """The body ended between elements, before the array's closing `]`."""

    def describe(self) -> str:
        return (
            f"the body ended at byte {self.offset} before the JSON array's closing ]: "
            "the stream was cut off"
        )


class JsonArrayDecoder:
    """Feed reads with `feed`; at the end of the body `flush`, then `finish`, once."""

    __slots__ = (
        "frames",
        "_phase",
        "_reads",
        "_offset",
        "_time",
        "_parts",
        "_start",
        "_first",
        "_kind",
        "_depth",
        "_in_str",
        "_esc",
        "_commas",
        "_bare",
        "_trail",
        "_trail_at",
        "_trail_size",
    )

    def __init__(self) -> None:
        self.frames = 0
        self._phase = _OPEN
        self._reads = 0
        self._offset = 0  # bytes fed before the current read
        self._time: int | None = None
        self._parts: list[bytes] | None = None  # an element begun, not ended
        self._start = 0  # where it begins in the body
        self._first = 0  # the read it begins in
        self._kind = _OBJ
        self._depth = 0
        self._in_str = False
        self._esc = False
        self._commas = 0  # commas since the last element
        self._bare = False  # the body does not open with [
        self._trail: list[bytes] = []  # what follows the closing ] (the first _KEPT bytes)
        self._trail_at = -1
        self._trail_size = 0

    def copy(self) -> JsonArrayDecoder:
        """An independent decoder in the same state (plain values and two lists)."""
        new = copy.copy(self)
        if self._parts is not None:
            new._parts = list(self._parts)
        new._trail = list(self._trail)
        return new

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        read = self._reads
        self._reads += 1
        self._time = time_ns
        base = self._offset
        self._offset += len(data)
        out: list[Frame] = []
        pos = 0
        if self._parts is not None and data:  # an element split across reads
            end = self._scan(data, 0)
            if end < 0:
                self._parts.append(data)
                return out
            self._parts.append(data[:end])
            raw = b"".join(self._parts)
            self._parts = None
            out.append(self._frame(raw, self._start, self._first, read, time_ns))
            pos = end
        elif self.frames and not self._commas and self._phase == _ITEMS and not self._bare:
            # as servers send the elements after the first: `,{...}` a read, one parse
            m = _NEXT.match(data)
            if m is not None:
                i, e = m.end(), data.rfind(b"}") + 1
                if e > i and not data[e:].strip(_BLANK):
                    raw = data[i:e]
                    try:
                        payload = _loads(raw)  # (it checks the bytes are UTF-8)
                    except _JSONError:
                        payload = None
                    if type(payload) is dict:
                        self.frames += 1
                        frame = Frame(
                            self.frames, raw.decode(), payload, time_ns, None, read, read,
                            base + i, base + e, False, None,
                        )  # fmt: skip
                        out.append(frame)
                        return out
        self._walk(data, pos, base, read, time_ns, out)
        return out

    def _walk(
        self, buf: bytes, i: int, base: int, read: int, time_ns: int | None, out: list[Frame]
    ) -> None:
        n = len(buf)
        whole = True  # the first element of the read may be all of it (as servers send)
        while i < n:
            if self._phase == _AFTER:
                self._trailing(buf, i, base)
                return
            i = _skip(buf, i)
            if i >= n:
                return
            c = buf[i]
            if self._phase == _OPEN:
                if buf.startswith(_BOM, i) and base + i == 0:
                    i += 3
                    continue
                self._phase = _ITEMS
                if c == 0x5B:  # [
                    i += 1
                    continue
                self._bare = True
            if c == 0x2C:  # ,
                self._commas += 1
                i += 1
                continue
            if c == 0x5D and not self._bare:  # ]
                self._phase = _AFTER
                i += 1
                continue
            if c == 0x7B or c == 0x5B:  # { [
                got = self._whole(buf, i) if whole else None
                whole = False
                if got is None:
                    got = self._fast(buf, i)
                if got is not None:
                    end, payload = got
                    out.append(self._frame(buf[i:end], base + i, read, read, time_ns, payload))
                    i = end
                    continue
                self._kind, self._depth, self._in_str, self._esc = _OBJ, 1, False, False
                end = self._scan(buf, i + 1)
            elif c == 0x22:  # "
                self._kind, self._depth, self._in_str, self._esc = _STR, 0, True, False
                end = self._scan(buf, i + 1)
            else:  # (at least its first byte: a stray ] of a body that is no array)
                self._kind = _SCALAR
                end = self._scan(buf, i + 1)
            if end < 0:  # it goes on in the next read
                self._parts, self._start, self._first = [buf[i:]], base + i, read
                return
            out.append(self._frame(buf[i:end], base + i, read, read, time_ns))
            i = end

    def _whole(self, buf: bytes, i: int) -> tuple[int, object] | None:
        """(end, payload) when the object at `i` runs to the read's last `}`, with only
        a separator or the array's end after it: one parse, as one JSON document (tried
        once a read, so a block of many elements costs one failed parse)."""
        e = buf.rfind(b"}") + 1
        if e <= i or buf[e:].strip(b" \t\r\n") not in (b"", b",", b"]"):
            return None
        try:
            return e, _loads(buf[i:e])
        except _JSONError:
            return None

    def _fast(self, buf: bytes, i: int) -> tuple[int, object] | None:
        """(end, payload) of the object or array at `i` when a likely end balances its
        braces and parses; None for the scanner to decide."""
        count = buf.count
        for k, m in enumerate(_CLOSER.finditer(buf, i)):
            e = m.end()
            if k >= _TRIES:
                return None
            if count(b"{", i, e) == count(b"}", i, e) and count(b"[", i, e) == count(b"]", i, e):
                try:
                    return e, _loads(buf[i:e])
                except _JSONError:
                    return None
        return None

    def _scan(self, data: bytes, pos: int) -> int:
        """Scan on from `pos` in the element being read: the offset just past its end in
        `data`, or -1 when it goes on past `data` (the state is kept for the next read)."""
        if self._kind == _SCALAR:
            m = _SCALAR_END.search(data, pos)
            return m.start() if m else -1
        n = len(data)
        while True:
            if self._in_str:
                if self._esc:
                    pos += 1
                    self._esc = False
                    if pos >= n:
                        return -1
                e = _STRING.match(data, pos).end()  # type: ignore[union-attr]
                if e >= n:
                    return -1
                if data[e] == 0x5C:  # a backslash ending the read: it escapes the next byte
                    self._esc = True
                    return -1
                self._in_str = False
                pos = e + 1
                if self._kind == _STR:
                    return pos
                continue
            m = _TOKEN.search(data, pos)
            if m is None:
                return -1
            c = data[m.start()]
            pos = m.end()
            if c == 0x22:
                self._in_str = True
            elif c == 0x7B or c == 0x5B:
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    return pos

    def _frame(
        self,
        raw: bytes,
        start: int,
        first: int,
        last: int,
        time_ns: int | None,
        payload: object = None,
    ) -> Frame:
        bad = False
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text, bad = raw.decode("utf-8", "replace"), True
        problem = None
        if payload is None:
            try:
                payload = loads(text)  # (what the stdlib reads orjson refused)
            except _JSONError as e:
                payload = INVALID
                said = str(e)
                if "depth limit" not in said and "recursion" not in said.lower():
                    problem = (
                        "the element is not JSON"  # (else: JSON nested past the parser's limit)
                    )
        self.frames += 1
        if problem is None and type(payload) is not dict and payload is not INVALID:
            problem = f"the element is a JSON {_json_type(payload)}, not an object"
        if self._bare and self.frames == 1:
            problem = _join("the body is no JSON array (it does not open with [)", problem)
        elif not self._bare and self._commas != (self.frames > 1):
            said = "no comma before it" if not self._commas else f"{self._commas} commas before it"
            problem = _join(said, problem)
        self._commas = 0
        if problem is not None and type(payload) is dict:
            payload = INVALID  # bytes the framing cannot vouch for are read as no event
        return Frame(
            self.frames,
            text,
            payload,
            time_ns,
            None,
            first,
            last,
            start,
            start + len(raw),
            bad,
            problem,
            raw=raw if bad else None,
        )

    def _trailing(self, buf: bytes, i: int, base: int) -> None:
        """Bytes after the closing ]: kept (the first _KEPT) for one frame at the end."""
        if self._trail_at < 0:
            i = _skip(buf, i)
            if i >= len(buf):
                return
            self._trail_at = base + i
        piece = buf[i:]
        self._trail_size += len(piece)
        room = _KEPT - sum(map(len, self._trail))
        if room > 0:
            self._trail.append(piece[:room])

    def flush(self) -> list[Frame]:
        """The body is over: what follows the closing ] is one frame, said invalid; an
        element still open (a scalar: the body's end ends it) is one too."""
        if self._parts is not None and self._kind == _SCALAR:
            raw = b"".join(self._parts)
            self._parts = None
            return [self._frame(raw, self._start, self._first, self._reads - 1, self._time)]
        if self._trail_at < 0:
            return []
        kept = b"".join(self._trail).rstrip()
        self.frames += 1
        text = kept.decode("utf-8", "replace")
        problem = (
            f"{plural(self._trail_size, 'byte')} after the JSON array's closing ], from byte "
            f"{self._trail_at}: {text[:40]!r}"
        )
        start = self._trail_at
        self._trail, self._trail_at = [], -1
        last = self._reads - 1
        end = start + self._trail_size
        return [
            Frame(
                self.frames, text, INVALID, self._time, None, last, last, start, end, False, problem
            )
        ]

    def finish(self) -> Truncation | None:
        """Why the body ended early: inside an element, or before the closing ]."""
        if self._parts is not None:
            kept = b"".join(self._parts)[:_KEPT]
            return Truncation(self._start, kept.decode("utf-8", "replace"))
        if self._phase == _ITEMS and not self._bare:
            return Unclosed(self._offset, "")
        return None


def _skip(buf: bytes, i: int) -> int:
    """Past the blank space at `i`."""
    m = _WS.match(buf, i)
    return m.end() if m else i


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else type(value).__name__


def _join(first: str, then: str | None) -> str:
    return first if then is None else f"{first}; {then}"


# A whole JSON string (its brackets are no structure); one left open has no unescaped ".
_WHOLE_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


class ArrayClose:
    """Whether a body read so far has reached its JSON array's closing `]` (a recorder's
    final-event watch: it runs after every relayed read, so it is cheap, in C but for a
    few calls a read): the brackets outside strings are counted, a string cut across two
    reads carried over. `closed(data)` after each read, in order."""

    __slots__ = ("_depth", "_opened", "_in_str", "_esc")

    def __init__(self) -> None:
        self._depth = 0
        self._opened = False  # a bracket was seen (the array opened)
        self._in_str = False  # the last read ended inside a string
        self._esc = False  # ... right after its backslash

    def closed(self, data: bytes) -> bool:
        if self._in_str:  # first, the rest of the string the last read left open
            pos = 1 if self._esc and data else 0
            self._esc = self._esc and not data
            end = _STRING.match(data, pos).end()  # type: ignore[union-attr]
            if end >= len(data):
                return False
            if data[end] == 0x5C:  # a backslash ending the read escapes the next byte
                self._esc = True
                return False
            self._in_str = False
            data = data[end + 1 :]
        bare = _WHOLE_STRING.sub(b"", data)
        quote = bare.find(b'"')
        if quote >= 0:  # a string the read leaves open (only escaped quotes inside it)
            bare = bare[:quote]
            self._in_str = True
            tail = len(data) - len(data.rstrip(b"\\"))
            self._esc = tail % 2 == 1
        c = bare.count
        opened = c(b"[") + c(b"{")
        self._opened = self._opened or opened > 0
        self._depth += opened - c(b"]") - c(b"}")
        return self._opened and self._depth <= 0


def write(frames: Iterable[Frame], whole: Callable[[], bool]) -> Iterator[bytes]:
    """Each element as a server writes it, one read an element (`[{...}`, `,\\r\\n{...}`),
    then the closing `]` when the body was `whole()` (a body cut short stays unclosed)."""
    sep = b"["
    for frame in frames:
        yield sep + sent_bytes(frame.data)  # (a data as sent: as_sent)
        sep = b",\r\n"
    if whole():
        yield b"]" if sep == b",\r\n" else b"[]"
