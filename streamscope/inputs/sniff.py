"""Which kind of input a file is, by its structure (never by its name).

The first non-blank line decides, read whole whatever its length: a JSON object with
`schema_version` is a recording, one with `choices` (or `"object": "chat.completion.chunk"`)
or an event object of another dialect (`{"type": "message_start", ...}`) a chunk log, a line that is an SSE field or comment an SSE body; a JSON document whose
first key is `"log"` (however it is laid out) is a HAR file; a JSON array whose first
element is a dialect's event (Gemini's stream without `alt=sse`, saved) a stream in the
JSON-array framing; binary data that opens with an AWS event stream prelude whose CRC
matches a stream in that framing. A saved stream may be gzip-compressed (it opens with
gzip's magic bytes): it is read decompressed, and noted. A UTF-8 byte order mark
is skipped for every kind and noted; a stray NUL or invalid UTF-8 byte does not decide the
kind (the readers report it where it is). Only input with no recognisable structure at
all is refused.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import field
from typing import BinaryIO

import orjson

from ..core import jsonio
from ..core.record import record
from ..dialects import of_event
from ..framing import FRAMINGS, Framing, of_bytes
from ..recording.copies import NAMES, text_of
from ..recording.format import BOM, RecordingError
from ..recording.migrate import header_version

RECORDING, SSE, CHUNKS, HAR = "recording", "sse", "chunks", "har"
JSON_ARRAY, EVENTSTREAM = "json-array", "aws-eventstream"
# a cassette (vcrpy, pytest-recording, go-vcr): YAML, or JSON
CASSETTE, CASSETTE_JSON = "cassette", "cassette-json"
RECORDED = (
    RECORDING,
    HAR,
    CASSETTE,
    CASSETTE_JSON,
)  # kinds that hold exchanges (requests and responses)
# each kind in words, with its article ("an SSE file", not "a sse file")
KIND_WORDS = {
    RECORDING: "a recording",
    SSE: "an SSE file",
    CHUNKS: "a chunk log",
    HAR: "a HAR file",
    CASSETTE: "a cassette",
    CASSETTE_JSON: "a cassette",
    JSON_ARRAY: "a JSON array of stream events",
    EVENTSTREAM: "an AWS event stream file",
}
# the framing each kind that is one saved stream is read in
FRAMING_OF = {
    SSE: "sse",
    CHUNKS: "ndjson",
    JSON_ARRAY: "json-array",
    EVENTSTREAM: "aws-eventstream",
}
_GZIP = b"\x1f\x8b"
_HAR = re.compile(rb'\{\s*"log"\s*:')  # a JSON document whose first key is "log"
# a cassette: JSON whose first key is "interactions" (vcrpy) or "version" with
# "interactions" after it; YAML that opens with "---", "interactions:" or "version:"
# and holds a top-level "interactions:" key
_CASSETTE_JSON = re.compile(rb'\{\s*"(interactions|version)"\s*:')
_CASSETTE_YAML = re.compile(rb"(---[ \t]*(\r?\n|\r|$)|interactions:|version:)")
_INTERACTIONS = re.compile(rb"^interactions:", re.MULTILINE)
_INTERACTIONS_JSON = re.compile(rb'"interactions"\s*:')

_HEAD = 1 << 16
_BLOCK = 1 << 20


@record(slots=True)
class Sniffed:
    kind: str
    notes: list[str] = field(default_factory=list)  # facts about the file, info level
    codings: list[str] = field(default_factory=list)  # how the file is compressed ("gzip")

    @property
    def framing(self) -> str | None:
        """The framing of a file that is one saved stream (None: it holds exchanges)."""
        return FRAMING_OF.get(self.kind)


def error(
    path: str, what: str, line: int | None = None, offset: int | None = None
) -> RecordingError:
    """The one-line error naming the file and, when known, the line and byte."""
    where = []
    if line is not None:
        where.append(f"line {line}")
    if offset is not None:
        where.append(f"byte {offset}" if line is None else f"(byte {offset})")
    at = f" {' '.join(where)}:" if where else ""
    return RecordingError(f"{path}:{at} {what}", path, line, offset)


def open_error(path: str, e: OSError) -> RecordingError:
    if isinstance(e, FileNotFoundError):
        return error(path, "no such file")
    if isinstance(e, IsADirectoryError):
        return error(path, "is a directory, not a file")
    return error(path, e.strerror or str(e))


def _first_line(f: BinaryIO, head: bytes, pos: int) -> bytes:
    """The line starting at `pos`; a JSON line is read whole however long it is."""
    end = min((i for i in (head.find(b"\n", pos), head.find(b"\r", pos)) if i >= 0), default=-1)
    if end >= 0:
        return head[pos:end]
    if not head[pos:].startswith(b"{"):
        return head[pos:]  # not JSON: the first 64 KiB are enough to tell
    pieces = [head[pos:]]
    while block := f.read(_BLOCK):
        cut = block.find(b"\n")
        if cut >= 0:
            pieces.append(block[:cut])
            break
        pieces.append(block)
    return b"".join(pieces).rstrip(b"\r")


# The `type` of an event only a streamed dialect sends (Responses, Anthropic Messages).
_EVENT_TYPE = re.compile(rb'"type"\s*:\s*"(response\.|message_start"|content_block_)')
# Version 0's header, which has no schema_version ("kind": "header", "version": 0)
_V0_HEADER = re.compile(rb'"kind"\s*:\s*"header"')


def _is_header(obj: dict[str, object]) -> bool:
    """A recording's header line of any version (version 0's has "kind" and "version"):
    one said wrong is still a header, which the reader names the fault of."""
    try:
        return header_version(obj) is not None
    except ValueError:
        return True


def _json_kind(line: bytes) -> tuple[str | None, object]:
    """(kind, parsed object) of a JSON first line; kind None when it is neither."""
    try:
        obj = jsonio.loads(line)
    except orjson.JSONDecodeError:
        try:  # invalid UTF-8 inside a string must not hide the structure
            obj = jsonio.loads(line.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            obj = None
    if isinstance(obj, dict):
        if "schema_version" in obj or _is_header(obj):
            return RECORDING, obj
        return (CHUNKS if _chunk(obj) else None), obj
    if obj is None and line.startswith(b"{"):
        # Not parseable (cut off, nested past the parser's limit): its keys still tell.
        start = line[:4096]
        if b'"schema_version"' in start or _V0_HEADER.search(start):
            return RECORDING, None
        if b'"choices"' in start or b'"chat.completion.chunk"' in start:
            return CHUNKS, None
        if _EVENT_TYPE.search(start):  # another dialect's event, cut off
            return CHUNKS, None
    return None, obj


def sniff(path: str | os.PathLike[str]) -> Sniffed:
    """The kind of input `path` holds; RecordingError (one line, with a position) otherwise."""
    name = os.fspath(path)
    real, coding = text_of(name)  # a UTF-16 file: its UTF-8 copy
    try:
        with open(real, "rb") as f:
            head = f.read(_HEAD)
            if head.startswith(_GZIP):
                return _gzipped(name, f, head)
            if of_bytes(head[:16]) == EVENTSTREAM and not head[:1].isspace():
                return Sniffed(EVENTSTREAM)
            bom = head.startswith(BOM)
            pos = 3 if bom else 0
            # Blank lines may run past the first 64 KiB: skipped as they are read, so
            # `head` starts at the last block read and `base` is where that is.
            base = lines = 0
            while True:
                while pos < len(head) and head[pos] in b"\r\n \t":
                    pos += 1
                if pos < len(head) or len(head) < _HEAD:
                    break
                lines += head.count(b"\n")
                base += len(head)
                head, pos = f.read(_HEAD), 0
            if pos >= len(head):
                blank = base + pos > (3 if bom else 0)  # (not "empty": its size shows bytes)
                what = "the file holds only blank lines" if blank else "the file is empty"
                raise error(name, what, offset=0)
            first = _first_line(f, head, pos)
    except OSError as e:
        raise open_error(name, e) from None
    notes = ["the file begins with a UTF-8 byte order mark (skipped)"] if bom else []
    if coding is not None:
        notes.append(
            f"the file is {NAMES[coding]} text (it begins with its byte order mark): read as "
            "UTF-8, so byte offsets count the UTF-8 text"
        )
    line_no = lines + head.count(b"\n", 0, pos) + 1
    if _HAR.match(head, pos):
        return Sniffed(HAR, notes)
    cassette = _cassette(head, pos)
    if cassette is not None:  # (before SSE: "version: 1" reads as an SSE field)
        return Sniffed(cassette, notes)
    if FRAMINGS[SSE].sniff(first):
        return Sniffed(SSE, notes)
    if first.startswith(b"["):
        told = _array_kind(name, real, base + pos)
        if told is not None:
            return Sniffed(told, notes)
    kind, obj = _json_kind(first)
    if kind is not None:
        return Sniffed(kind, notes)
    if isinstance(obj, dict) and "choices" in obj:
        raise error(
            name,
            "a whole chat.completion response (choices[].message), not a stream; "
            "streamscope reads streamed chunks",
            line_no,
            base + pos,
        )
    binary = b"\x00" in first
    if not binary:
        try:
            first.decode("utf-8")
        except UnicodeDecodeError:
            binary = True
    # binary data as its bytes (\xff, not the � that replaced each: the bytes as they are)
    shown: str | bytes = first[:30] if binary else first[:30].decode("utf-8", "replace")
    what = "binary data, not" if binary else "not"
    raise error(
        name,
        f"{what} a streamscope recording, an SSE body, JSON lines or a JSON array of stream "
        "events, an AWS event stream, a HAR file or a vcrpy or go-vcr cassette "
        f"(it begins {shown!r})",
        line_no,
        base + pos,
    )


def _chunk(obj: object) -> bool:
    """A chunk log's first line: a chunk, or an event object of another dialect (a whole
    completion is none: refused with its own words)."""
    if not isinstance(obj, dict):
        return False
    choices = obj.get("choices")
    if (
        isinstance(choices, list)
        and choices
        and isinstance(choices[0], dict)
        and "message" in choices[0]
    ):
        return False
    if "choices" in obj or obj.get("object") == "chat.completion.chunk":
        return True
    return of_event(obj, None) is not None


def opens(framing: str, payload: object) -> bool:
    """Whether a stream saved in `framing` whose first frame's payload is `payload` is
    read as one (what export --minimal keeps first): a chunk log's first line, and a JSON
    array's first element, tell it by being an event (an array's: or an error document);
    an SSE body and an AWS event stream are told by their bytes."""
    if framing == FRAMING_OF[CHUNKS]:
        return _chunk(payload)
    if framing == FRAMING_OF[JSON_ARRAY]:
        return _is_event(payload)
    return True


def _is_event(payload: object) -> bool:
    """A dialect's event, or an error document in its place (a stream that failed)."""
    return of_event(payload, None) is not None or (isinstance(payload, dict) and "error" in payload)


def _cut_event(head: bytes) -> bool:
    """A first element cut off before its end: its keys still tell a stream event."""
    start = head[:4096]
    return (
        b'"candidates"' in start
        or b'"error"' in start
        or b'"choices"' in start
        or _EVENT_TYPE.search(start) is not None
    )


def _first_element(decoder: Framing, head: bytes) -> bool:
    """Whether an array's first element (read so far) is a stream event."""
    frames = decoder.feed(head) or decoder.flush()
    return _is_event(frames[0].payload) if frames else _cut_event(head.lstrip(b" \t\r\n["))


def _array_kind(name: str, real: str, pos: int) -> str | None:
    """JSON_ARRAY when the array's first element is a stream event, else None; the
    element is read incrementally, however long (a 1 MiB block at a time)."""
    decoder = FRAMINGS[JSON_ARRAY].new()
    with open(real, "rb") as f:
        f.seek(pos)
        while block := f.read(_BLOCK):
            frames = decoder.feed(block)
            if frames:
                return JSON_ARRAY if _is_event(frames[0].payload) else None
    frames = decoder.flush()
    if frames:
        return JSON_ARRAY if _is_event(frames[0].payload) else None
    with open(real, "rb") as f:  # a body cut off inside its first element
        f.seek(pos)
        return JSON_ARRAY if _cut_event(f.read(_HEAD)[1:].lstrip()) else None


def _cassette(head: bytes, pos: int) -> str | None:
    """CASSETTE or CASSETTE_JSON when the text at `pos` begins one, else None."""
    if _CASSETTE_JSON.match(head, pos) and _INTERACTIONS_JSON.search(head, pos):
        return CASSETTE_JSON
    if _CASSETTE_YAML.match(head, pos) and _INTERACTIONS.search(head, pos):
        return CASSETTE
    return None


def _gzipped(name: str, f: BinaryIO, head: bytes) -> Sniffed:
    """A gzip-compressed file: the kind its decompressed start shows (a saved stream)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = []
    size = 0
    block = head
    try:
        while block and size < _HEAD and not d.eof:
            got = d.decompress(block, _HEAD)
            out.append(got)
            size += len(got)
            block = d.unconsumed_tail or f.read(_HEAD)
    except zlib.error as e:
        raise error(name, f"gzip-compressed, but not valid gzip data ({e})", offset=0) from None
    plain = b"".join(out)
    note = (
        "the file is gzip-compressed: read decompressed (byte offsets count the decompressed body)"
    )
    start = plain.lstrip(b" \t\r\n")
    told = of_bytes(plain[:_HEAD])
    if told == EVENTSTREAM:
        return Sniffed(EVENTSTREAM, [note], ["gzip"])
    if told == JSON_ARRAY and _first_element(FRAMINGS[JSON_ARRAY].new(), start):
        return Sniffed(JSON_ARRAY, [note], ["gzip"])
    if told == SSE:
        return Sniffed(SSE, [note], ["gzip"])
    line = start.split(b"\n", 1)[0]
    kind = _json_kind(line)[0]
    if kind == CHUNKS:
        return Sniffed(CHUNKS, [note], ["gzip"])
    if kind == RECORDING or _HAR.match(start):  # what it holds is read, but uncompressed
        what = "streamscope recording" if kind == RECORDING else "HAR file"
        raise error(
            name,
            f"a gzip-compressed {what}: a {what} is read uncompressed (gunzip it first)",
            offset=0,
        )
    # a cassette (langchain keeps its partners' as .yaml.gz): read whole, decompressed
    unmarked = plain[len(BOM) :] if plain.startswith(BOM) else plain
    cassette = _cassette(unmarked, len(unmarked) - len(unmarked.lstrip(b" \t\r\n")))
    if cassette is not None:
        return Sniffed(cassette, [CASSETTE_GZIP], ["gzip"])
    shown = start[:30].decode("utf-8", "replace")
    raise error(
        name,
        f"gzip-compressed, and what it holds is no stream streamscope reads (it begins {shown!r}); "
        "a recording or a HAR file is read uncompressed",
        offset=0,
    )


CASSETTE_GZIP = "the file is gzip-compressed: read decompressed (line numbers count its lines)"
