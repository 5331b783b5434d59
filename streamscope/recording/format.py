"""Recording format v2: constants and one dataclass per line type.

The format is documented in recordings/README.md. Every line is one JSON object whose
first two keys are "type" and "exchange" (the header has no exchange), so the index can
learn a line's type and exchange from a byte prefix without parsing the whole line.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import sys
from typing import Any, ClassVar

import orjson

from streamscope import __version__

from ..core import jsonio
from ..core.record import record
from ..text import json_type

SCHEMA_VERSION = 2  # 2: `message` lines (WebSocket frames)
# Body lines of this version or later are current lines as they stand (version 2 only
# added a line type), so reading them needs no migration.
SAME_LINES_SINCE = 1
TOOL = "streamscope"
REDACTED = "[REDACTED]"
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, which editors may put before line 1
# recorder-stopped: streamscope itself stopped (a signal, a write failure) mid-exchange.
END_REASONS = ("complete", "client-closed", "upstream-error", "timeout", "recorder-stopped")

Headers = list[tuple[str, str]]
# A line's time (ns from the recording's start) is under 2^62 ns either way (146 years): every
# difference of two times (what an export writes) still fits the 64-bit integers JSON
# writers take.
MAX_T_NS = (1 << 62) - 1


class RecordingError(Exception):
    """A recording cannot be read (or written). str() is always one line."""

    def __init__(
        self,
        message: str,
        path: str | None = None,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.offset = offset


def located(path: str, line: int, offset: int, what: str) -> RecordingError:
    """The one-line error naming file, line number and byte offset."""
    what = " ".join(what.split())  # keep it one line whatever the cause says
    return RecordingError(f"{path}: line {line} (byte {offset}): {what}", path, line, offset)


@record(frozen=True, slots=True)
class Stopped:
    """Where reading stopped early: a cut-off last line, as kill -9 of the writer leaves."""

    line: int
    offset: int

    @property
    def message(self) -> str:
        return (
            f"recording ends with a cut-off line {self.line} at byte {self.offset} "
            "(the writer was interrupted)"
        )

    def __str__(self) -> str:
        return self.message


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate (an undecodable byte, as Python decodes argv and
    file names) written as its escape, `\\udcff`: UTF-8, and so JSON, cannot hold it."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def line_json(record: dict[Any, Any]) -> bytes:
    """A record as its line: compact JSON and a newline. No line holds a lone surrogate
    (text fields hold UTF-8 text, and the reader refuses a line that holds one), so one
    that reaches a writer (a HAR's header, say) is written as the text of its escape,
    `\\udcff`, as argv's are (`without_surrogates`); an integer past 64 bits, which no
    field holds either, is written by the stdlib and refused by the field checks."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return jsonio.dumps(_no_surrogates(record), newline=True)


def _no_surrogates(value: object) -> object:
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_surrogates(v) for v in value]
    return value


def text_or_b64(key: str, raw: bytes) -> tuple[str, str]:
    """(key, text) when `raw` is valid UTF-8, else (key + "_b64", base64): bytes round-trip."""
    try:
        return key, raw.decode("utf-8")
    except UnicodeDecodeError:
        return key + "_b64", base64.b64encode(raw).decode("ascii")


if sys.version_info >= (3, 11):

    def decode_b64(text: str) -> bytes:
        """Strict base64 (the alphabet only, padding where it belongs), as
        b64decode(validate=True) reads it without its regular expression; ValueError."""
        return binascii.a2b_base64(text, strict_mode=True)

else:  # (strict_mode came in 3.11)

    def decode_b64(text: str) -> bytes:
        return base64.b64decode(text, validate=True)


def bytes_of(text: str | None, b64: str | None) -> bytes:
    """A line's bytes from its text or base64 field (the one that is set)."""
    return text.encode("utf-8") if text is not None else decode_b64(b64 or "")


# -- field checks for from_json: a ValueError here becomes a located RecordingError.


def field_wrong(d: dict[Any, Any], key: str, want: str) -> str:
    """The one wording for a line's field that is not `want` ("a string"): missing, or
    not it, naming the JSON type it is (null, array), never Python's (NoneType, list)."""
    if key not in d:
        kind = d.get("type")
        known = kind == "header" or (isinstance(kind, str) and kind in BODY_TYPES)
        return f"field {key!r} is missing" + (f" from the {kind} line" if known else "")
    return f"field {key!r} is not {want} (a JSON {json_type(d[key])})"


def _int(d: dict[Any, Any], key: str) -> int:
    v = _need(d, key, "an integer")
    if type(v) is not int:  # not isinstance: bool is an int subclass
        raise ValueError(field_wrong(d, key, "an integer"))
    return v


_HTTP_STATUS = "an HTTP status from 100 to 599"


def _status(d: dict[Any, Any]) -> int:
    """A response's status: an integer from 100 to 599, as HTTP has them (RFC 9110 15)."""
    v = _need(d, "status", _HTTP_STATUS)
    if type(v) is not int:  # not isinstance: bool is an int subclass
        raise ValueError(field_wrong(d, "status", _HTTP_STATUS))
    if not 100 <= v <= 599:
        raise ValueError(f"field 'status' is {v}, not {_HTTP_STATUS}")
    return v


def _t_ns(d: dict[Any, Any]) -> int:
    v = _int(d, "t_ns")
    if not -MAX_T_NS <= v <= MAX_T_NS:
        raise ValueError(
            f"field 't_ns' is {v}: not a time this reader can place "
            "(under 2^62 ns, some 146 years, from the recording's start)"
        )
    return v


# The keys a reader takes from a line's first bytes without parsing it (reader.py's index).
PREFIX_KEYS = ("type", "exchange")
_CHUNK_PREFIX = b'{"type":"chunk","exchange":'


def _spelt(name: str) -> str:
    """A pattern of `name` as a JSON key in any spelling: each letter itself or its
    `\\u` escape (the only escape that gives a letter), hex digits in either case."""
    units = []
    for c in name:
        digits = "".join(f"[{h}{h.upper()}]" if h.isalpha() else h for h in f"{ord(c):04x}")
        units.append(f"(?:{c}|\\\\u{digits})")
    return '"' + "".join(units) + '"'


# A key that is one of PREFIX_KEYS as JSON decodes it, in any spelling (a key written
# with an escape, "typ\\u0065", is "type"), followed by its colon.
SPELT_KEY = re.compile(f"(?:{'|'.join(map(_spelt, PREFIX_KEYS))})[ \t\r\n]*:".encode())
# The escape of a lowercase letter (U+0061 to U+007A), which such a spelling holds: text
# seldom escapes one (an "\\u00e9" is none), so one search rules most lines out.
_LETTER_ESCAPE = re.compile(rb"\\u00[67]")
# How a key whose last letter is an "e" ("type", "exchange") ends when that letter is spelt
# with its escape (else it ends `e"`).
ESCAPED_E = b'\\u0065"'


def escaped_key(data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether data[start:end] gives one of PREFIX_KEYS spelt with an escape."""
    stop = len(data) if end is None else end
    if _LETTER_ESCAPE.search(data, start, stop) is None:
        return False
    return any(b"\\" in m[0] for m in SPELT_KEY.finditer(data, start, stop))


def key_twice(line: bytes) -> str | None:
    """Why `line` cannot be read when it gives "type" or "exchange" twice, else None.

    JSON leaves a key given twice to the reader: the index reads the first from the line's
    prefix, the JSON parser takes the last, so one file would show two different exchanges.
    Such a line is refused on every face (the same one-line error). Cheap unless one of
    the two names appears twice (a header value may be "exchange": then it is checked), or
    one is spelt with an escape: a key is the one JSON decodes ("typ\\u0065" is "type")."""
    # A line as writers write it ({"type":"chunk","exchange":N,...) gives either key again
    # only if a key or text ends in `e"` (or in ESCAPED_E) after its prefix: two searches
    # rule most out.
    if (
        line.startswith(_CHUNK_PREFIX)
        and line.find(b'e"', len(_CHUNK_PREFIX)) < 0
        and line.find(ESCAPED_E, len(_CHUNK_PREFIX)) < 0
    ):
        return None
    if line.count(b'"exchange"') < 2 and line.count(b'"type"') < 2 and not escaped_key(line):
        return None
    top: list[str] = []

    def keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
        top[:] = [k for k, _ in pairs]  # the outermost object closes last
        return dict(pairs)

    try:
        json.loads(line, object_pairs_hook=keys)
    except (ValueError, RecursionError):
        return None  # not JSON: said as such where it is parsed
    for key in PREFIX_KEYS:
        if top.count(key) > 1:
            return (
                f"the key {key!r} is given twice (JSON leaves which one counts to the reader, "
                "so streamscope reads neither)"
            )
    return None


def _str(d: dict[Any, Any], key: str) -> str:
    v = _need(d, key, "a string")
    if not isinstance(v, str):
        raise ValueError(field_wrong(d, key, "a string"))
    return v


def _need(d: dict[Any, Any], key: str, want: str = "") -> Any:
    if key not in d:
        raise ValueError(field_wrong(d, key, want))
    return d[key]


def _masked(d: dict[Any, Any], name: str = "masked") -> int:
    """How many values the writer masked (or, `redacted`, replaced by path) in this
    line's part of the exchange (0: none, or a recording older than the count)."""
    v = d.get(name, 0)
    if type(v) is not int or v < 0:
        raise ValueError(f"field {name!r} is not a count (a non-negative integer)")
    return v


def _decoded(d: dict[Any, Any]) -> list[str] | None:
    """The codings a request's body was kept with undone (None: kept as it was sent)."""
    v = d.get("body_decoded")
    if v is None:
        return None
    if not isinstance(v, list) or not v or not all(isinstance(c, str) for c in v):
        raise ValueError("field 'body_decoded' is not a list of content codings")
    return v


def _headers(d: dict[Any, Any]) -> Headers:
    v = _need(d, "headers")
    if not isinstance(v, list) or not all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], str)
        for p in v
    ):
        raise ValueError("field 'headers' is not a list of [name, value] string pairs")
    return [(p[0], p[1]) for p in v]


def _one_of(d: dict[Any, Any], key: str) -> tuple[str | None, str | None]:
    """Exactly one of key / key_b64, both strings; base64 is checked here, not at use."""
    text, b64 = d.get(key), d.get(key + "_b64")
    if (text is None) == (b64 is None):
        raise ValueError(f"{d.get('type')} line needs exactly one of {key!r} or '{key}_b64'")
    if not isinstance(text if b64 is None else b64, str):
        raise ValueError(field_wrong(d, key if b64 is None else f"{key}_b64", "a string"))
    if b64 is not None:
        try:
            decode_b64(b64)
        except ValueError:  # binascii.Error, or a character that is not ASCII
            raise ValueError(f"field '{key}_b64' is not valid base64") from None
    return text, b64


@record(slots=True)
class Header:
    """Line 1 of every recording."""

    created: str  # UTC, "2026-11-29T22:00:00.000000Z"
    argv: list[str] | None = None
    # facts about what was recorded that every reader should say (a recording exported
    # from a HAR: its times are approximate); written only when there are some
    notes: list[str] | None = None
    masked: int = 0  # words of `argv` masked (secrets), said by `inspect`
    tool_version: str = __version__
    schema_version: int = SCHEMA_VERSION
    tool: str = TOOL
    type: ClassVar[str] = "header"

    def to_json(self) -> dict[Any, Any]:
        d = {
            "type": "header",
            "schema_version": self.schema_version,
            "tool": self.tool,
            "tool_version": self.tool_version,
            "created": self.created,
            "argv": self.argv,
        }
        if self.notes:
            d["notes"] = self.notes
        if self.masked:
            d["masked"] = self.masked
        return d

    @classmethod
    def from_json(cls, d: dict[Any, Any]) -> Header:
        argv = d.get("argv")
        if argv is not None and not (
            isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        ):
            raise ValueError("field 'argv' is not a list of strings")
        notes = d.get("notes")
        if notes is not None and not (
            isinstance(notes, list) and all(isinstance(n, str) for n in notes)
        ):
            raise ValueError("field 'notes' is not a list of strings")
        return cls(
            created=_str(d, "created"),
            argv=argv,
            notes=notes,
            masked=_masked(d),
            tool_version=_str(d, "tool_version"),
            schema_version=_int(d, "schema_version"),
            tool=_str(d, "tool"),
        )


@record(slots=True)
class Request:
    """The request the client sent. Exactly one of body / body_b64 is set."""

    exchange: int
    t_ns: int
    method: str
    url: str
    headers: Headers
    body: str | None = ""
    body_b64: str | None = None
    masked: int = 0  # values masked in its URL, headers and body (secrets)
    # The Content-Encoding codings undone before the body was kept (None: the body is as
    # it was sent): the writer keeps a compressed body decoded where masking changed it
    decoded: list[str] | None = None
    redacted: int = 0  # body values --redact-json replaced (asked, not secrets found)
    type: ClassVar[str] = "request"

    @classmethod
    def of(
        cls,
        exchange: int,
        t_ns: int,
        method: str,
        url: str,
        headers: Headers,
        body: bytes,
        masked: int = 0,
        decoded: list[str] | None = None,
        redacted: int = 0,
    ) -> Request:
        key, text = text_or_b64("body", body)
        if key == "body":
            return cls(exchange, t_ns, method, url, headers, text, None, masked, decoded, redacted)
        return cls(exchange, t_ns, method, url, headers, None, text, masked, decoded, redacted)

    @property
    def body_bytes(self) -> bytes:
        return bytes_of(self.body, self.body_b64)

    def json_body(self) -> Any | None:
        """The stored body parsed, or None when it is not JSON. A compressed body is no
        JSON: readers read it decoded (streamscope.inputs.encoding.request_json)."""
        try:
            return jsonio.loads(self.body if self.body is not None else self.body_bytes)
        except orjson.JSONDecodeError:
            return None

    def to_json(self) -> dict[Any, Any]:
        d = {"type": "request", "exchange": self.exchange, "t_ns": self.t_ns}
        d |= {"method": self.method, "url": self.url, "headers": self.headers}
        if self.body_b64 is not None:
            d["body_b64"] = self.body_b64
        else:
            d["body"] = self.body or ""
        if self.masked:
            d["masked"] = self.masked
        if self.redacted:
            d["redacted"] = self.redacted
        if self.decoded:
            d["body_decoded"] = self.decoded
        return d

    @classmethod
    def from_json(cls, d: dict[Any, Any]) -> Request:
        body, body_b64 = _one_of(d, "body")
        return cls(
            _int(d, "exchange"),
            _t_ns(d),
            _str(d, "method"),
            _str(d, "url"),
            _headers(d),
            body,
            body_b64,
            _masked(d),
            _decoded(d),
            _masked(d, "redacted"),
        )


@record(slots=True)
class Response:
    """The upstream's status line and headers."""

    exchange: int
    t_ns: int
    status: int
    headers: Headers
    masked: int = 0  # header values masked (secrets)
    type: ClassVar[str] = "response"

    def to_json(self) -> dict[Any, Any]:
        d = {
            "type": "response",
            "exchange": self.exchange,
            "t_ns": self.t_ns,
            "status": self.status,
            "headers": self.headers,
        }
        if self.masked:
            d["masked"] = self.masked
        return d

    @classmethod
    def from_json(cls, d: dict[Any, Any]) -> Response:
        return cls(_int(d, "exchange"), _t_ns(d), _status(d), _headers(d), _masked(d))


@record(slots=True)
class Chunk:
    """One upstream read, bytes exactly as read. Exactly one of data / data_b64 is set."""

    exchange: int
    t_ns: int
    data: str | None = ""
    data_b64: str | None = None
    type: ClassVar[str] = "chunk"

    @classmethod
    def of(cls, exchange: int, t_ns: int, raw: bytes) -> Chunk:
        key, text = text_or_b64("data", raw)
        return cls(exchange, t_ns, text, None) if key == "data" else cls(exchange, t_ns, None, text)

    @property
    def data_bytes(self) -> bytes:
        return bytes_of(self.data, self.data_b64)

    def to_json(self) -> dict[Any, Any]:
        d = {"type": "chunk", "exchange": self.exchange, "t_ns": self.t_ns}
        if self.data_b64 is not None:
            d["data_b64"] = self.data_b64
        else:
            d["data"] = self.data or ""
        return d

    @classmethod
    def from_json(cls, d: dict[Any, Any]) -> Chunk:
        data, data_b64 = _one_of(d, "data")
        return cls(_int(d, "exchange"), _t_ns(d), data, data_b64)


@record(slots=True)
class End:
    """How the exchange ended. `reason` is one of END_REASONS (checked when writing only)."""

    exchange: int
    t_ns: int
    reason: str
    error: str | None = None
    masked: int = 0  # values masked in the body's reads and the error (secrets)
    type: ClassVar[str] = "end"

    def to_json(self) -> dict[Any, Any]:
        d = {
            "type": "end",
            "exchange": self.exchange,
            "t_ns": self.t_ns,
            "reason": self.reason,
            "error": self.error,
        }
        if self.masked:
            d["masked"] = self.masked
        return d

    @classmethod
    def from_json(cls, d: dict[Any, Any]) -> End:
        error = d.get("error")
        if error is not None and not isinstance(error, str):
            raise ValueError("field 'error' is not a string or null")
        return cls(_int(d, "exchange"), _t_ns(d), _str(d, "reason"), error, _masked(d))


# A WebSocket frame's opcode, by name as a `message` line spells it (RFC 6455 5.2);
# a reserved opcode is written as its number.
OPCODES = {0: "continuation", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong"}
OPCODE_NUMBERS = {name: n for n, name in OPCODES.items()}
SENDERS = ("client", "server")


@record(slots=True)
class Message:
    """One WebSocket frame of a session (the exchange whose response is its `101`), as a
    peer sent it: its payload unmasked, and inflated where `compressed` (permessage-deflate:
    the wire held it deflated)."""

    exchange: int
    t_ns: int
    sender: str  # "client" or "server"
    opcode: str | int  # a name of OPCODES, or the number of a reserved opcode
    fin: bool
    data: str | None = ""
    data_b64: str | None = None
    compressed: bool = False
    masked: int = 0  # secrets masked in this frame
    type: ClassVar[str] = "message"

    @classmethod
    def of(
        cls,
        exchange: int,
        t_ns: int,
        sender: str,
        opcode: int,
        fin: bool,
        raw: bytes,
        compressed: bool = False,
        masked: int = 0,
    ) -> Message:
        key, text = text_or_b64("data", raw)
        name = OPCODES.get(opcode, opcode)
        if key == "data":
            return cls(exchange, t_ns, sender, name, fin, text, None, compressed, masked)
        return cls(exchange, t_ns, sender, name, fin, None, text, compressed, masked)

    @property
    def data_bytes(self) -> bytes:
        return bytes_of(self.data, self.data_b64)

    @property
    def opcode_number(self) -> int:
        return self.opcode if isinstance(self.opcode, int) else OPCODE_NUMBERS[self.opcode]

    def holding(self, payload: bytes, masked: int) -> Message:
        """This frame's line holding `payload` instead, `masked` more values masked."""
        return Message.of(
            self.exchange,
            self.t_ns,
            self.sender,
            self.opcode_number,
            self.fin,
            payload,
            self.compressed,
            self.masked + masked,
        )

    def to_json(self) -> dict[Any, Any]:
        d: dict[str, Any] = {"type": "message", "exchange": self.exchange, "t_ns": self.t_ns}
        d |= {"from": self.sender, "opcode": self.opcode, "fin": self.fin}
        if self.compressed:
            d["compressed"] = True
        if self.data_b64 is not None:
            d["data_b64"] = self.data_b64
        else:
            d["data"] = self.data or ""
        if self.masked:
            d["masked"] = self.masked
        return d

    @classmethod
    def from_json(cls, d: dict[Any, Any]) -> Message:
        sender = _str(d, "from")
        if sender not in SENDERS:
            raise ValueError(f"field 'from' is {sender!r}, not 'client' or 'server'")
        opcode = _need(d, "opcode")
        named = type(opcode) is str and opcode in OPCODE_NUMBERS
        if not (named or (type(opcode) is int and 0 <= opcode <= 15)):
            raise ValueError("field 'opcode' is not an opcode name or a number from 0 to 15")
        if type(opcode) is int and opcode in OPCODES:
            opcode = OPCODES[opcode]
        fin = _need(d, "fin")
        compressed = d.get("compressed", False)
        if type(fin) is not bool or type(compressed) is not bool:
            raise ValueError(
                f"field {'fin' if type(fin) is not bool else 'compressed'!r} is not a boolean"
            )
        data, data_b64 = _one_of(d, "data")
        exchange, t_ns = _int(d, "exchange"), _t_ns(d)
        return cls(exchange, t_ns, sender, opcode, fin, data, data_b64, compressed, _masked(d))


Record = Header | Request | Response | Chunk | Message | End

# Line types after the header, by "type" value.
BODY_TYPES: dict[str, type[Request | Response | Chunk | Message | End]] = {
    "request": Request,
    "response": Response,
    "chunk": Chunk,
    "message": Message,
    "end": End,
}

# Which keys each line type must have (their types are checked by from_json).
_REQUIRED = {
    "request": frozenset({"exchange", "t_ns", "method", "url", "headers"}),
    "response": frozenset({"exchange", "t_ns", "status", "headers"}),
    "chunk": frozenset({"exchange", "t_ns"}),
    "message": frozenset({"exchange", "t_ns", "from", "opcode", "fin"}),
    "end": frozenset({"exchange", "t_ns", "reason"}),
}
_ONE_OF = {
    "request": ("body", "body_b64"),
    "chunk": ("data", "data_b64"),
    "message": ("data", "data_b64"),
}


def check_raw(d: object) -> str | None:
    """Why `d` is not a valid body line (key presence only), or None when it looks fine."""
    if type(d) is not dict:
        return "not a JSON object"
    t = d.get("type")
    if not isinstance(t, str):
        return field_wrong(d, "type", "a string")
    need = _REQUIRED.get(t)
    if need is None:
        return "a second header line" if t == "header" else f"unknown record type {t!r}"
    if not need <= d.keys():
        return field_wrong(d, sorted(need - d.keys())[0], "")
    one = _ONE_OF.get(t)
    if one and (one[0] in d) == (one[1] in d):
        return f"{t} line needs exactly one of {one[0]!r} or {one[1]!r}"
    return None


def body_record(d: object) -> Request | Response | Chunk | Message | End:
    """A parsed, migrated body line as its dataclass; ValueError says what is wrong."""
    problem = check_raw(d)
    if problem:
        raise ValueError(problem)
    assert isinstance(d, dict)  # (check_raw says why when it is not)
    return BODY_TYPES[d["type"]].from_json(d)
