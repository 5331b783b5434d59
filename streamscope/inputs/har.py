"""HAR 1.2 files (browser devtools, mitmproxy, Charles, Proxyman) as recorded exchanges.

Each entry whose response is an event stream, or whose request a dialect claims
(streamscope.dialects.claimant), is one exchange: its request (method, URL, headers, `postData`
text) and response (status, headers, `content.text`, plain or `"encoding": "base64"`)
become the same Request / Response / End records a recording holds, so every face reads
a HAR as it reads a recording. Headers and URLs are masked (and counted) as the recorder
masks them.

A HAR keeps no per-read timing: a body is cut into its SSE events (every byte kept) and
their times are spread evenly over the entry's `timings.receive`, after its start and
its `blocked + dns + connect + send + wait` (+ `ssl` in mitmproxy's export, which times
TLS apart from `connect`). The source says so in a note. A HAR does not say how a
transfer ended either: an entry with a body is read as complete.

A JSON-RPC request (an agent's MCP or A2A traffic beside its model's) is left out, and
counted in a note.

A file that is not HAR 1.2 (bad JSON, another version, no `log.entries`) is a one-line
RecordingError, and so is one none of whose entries is read (naming the first skipped
and how many were); an entry that cannot be read (no body, an empty one, bad base64) is
skipped with a note naming it; a timing that is no number of milliseconds (or `timings`
that are no object) is noted and read as absent; a `startedDateTime` that cannot be placed (not ISO 8601, outside years
1-9999 once in UTC, or decades after the earliest entry's) is noted and read as the
earliest entry's start. A UTF-8 byte order mark is skipped, and a UTF-16 file read as its
text (recording/copies.py), as for every input.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import field
from datetime import datetime, timedelta, timezone

import orjson

from ..core import jsonio
from ..core.record import record
from ..dialects import claimant, of_request, streams_in
from ..framing import SSE, of_response
from ..recording.copies import readable
from ..recording.format import BOM, End, RecordingError, Request, Response
from ..recording.mask import credentials, mask_head
from ..text import quote
from .encoding import Decoded, content_codings, decode_body, stored_decoded, without_codings
from .notes import HAR_END as END_NOTE
from .notes import HAR_TIMING as TIMING_NOTE
from .reads import Reads

VERSION = "1.2"
# what holds for every exchange read from a HAR (kept by a recording exported from one)
GENERAL_NOTES = (TIMING_NOTE, END_NOTE)
_BLANK = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_BEFORE_BODY = ("blocked", "dns", "connect", "send", "wait")  # ssl is inside connect...
# ...as HAR 1.2 asks, but not in mitmproxy's export (savehar.py times TLS apart)
_SSL_APART = ("mitmproxy",)

# A JSON object of the HAR as parsed: nothing in it is trusted, every value is narrowed
# (isinstance) where it is read.
_Json = dict[str, object]


class MemoryReads(Reads):
    """A body held in memory as reads, each with its time (ns from the request)."""

    def __init__(self, reads: list[tuple[bytes, int]]) -> None:
        self.reads = reads

    def __len__(self) -> int:
        return len(self.reads)

    def read(self, i: int) -> tuple[bytes, int | None]:
        return self.reads[i]


@record(slots=True)
class HarExchange:
    request: Request
    response: Response
    end: End
    reads: list[tuple[bytes, int]]  # (bytes, ns from the request)
    note: str | None = None  # what reading it changed (said in the HAR's notes)
    # the credentials its request carried, before they were masked: export masks them
    # wherever the exchange holds them (recording/mask.py)
    secrets: list[str] = field(default_factory=list)


@record(slots=True)
class Har:
    exchanges: list[HarExchange]
    notes: list[str] = field(default_factory=list)
    created: str | None = None  # the earliest entry's start, in UTC as a recording header has it
    # the notes that hold for each of its exchanges (what an export of one keeps)
    general: tuple[str, ...] = GENERAL_NOTES
    # the notes (in `notes` too) of the entries not read: an export of it all says them
    skipped: list[str] = field(default_factory=list)


class _Skip(Exception):
    """Why one entry is not read (said in a note)."""


def skip(har: Har, at: str, why: _Skip) -> None:
    """The note that the entry `at` is not read, and why."""
    note = f"{at} skipped: {why}"
    har.notes.append(note)
    har.skipped.append(note)


def _error(
    path: str, what: str, line: int | None = None, offset: int | None = None
) -> RecordingError:
    where = f" line {line} (byte {offset}):" if line is not None else ""
    return RecordingError(f"{path}:{where} {what}", path, line, offset)


def read_har(path: str | os.PathLike[str]) -> Har:
    """The exchanges of a HAR file; RecordingError (one line) when it is not HAR 1.2."""
    name = os.fspath(path)
    with open(readable(name), "rb") as f:
        raw = f.read()
    skip = len(BOM) if raw.startswith(BOM) else 0  # (noted by the input layer)
    try:
        doc = jsonio.loads(memoryview(raw)[skip:])
    except orjson.JSONDecodeError as e:
        what = f"not valid JSON, so not a HAR file: {e.msg}"
        raise _error(name, what, e.lineno, skip + e.pos) from None
    log = doc.get("log") if isinstance(doc, dict) else None
    if not isinstance(log, dict):
        raise _error(name, 'a HAR file is a JSON object with a "log" object')
    version = log.get("version")
    if version != VERSION:
        raise _error(name, f"HAR version {quote(version, 40)}: streamscope reads HAR {VERSION}")
    entries = log.get("entries")
    if not isinstance(entries, list):
        raise _error(name, 'the HAR has no "log.entries" list')
    har = Har([], list(GENERAL_NOTES))
    creator = log.get("creator")
    writer = creator.get("name") if isinstance(creator, dict) else None
    before = (*_BEFORE_BODY, "ssl") if writer in _SSL_APART else _BEFORE_BODY
    starts = [_start(e) for e in entries]
    t0 = min((s for s in starts if isinstance(s, datetime)), default=None)
    others = rpc = 0
    for i, (entry, start) in enumerate(zip(entries, starts, strict=True)):
        if _json_rpc(entry):
            rpc += 1
            continue
        if not _wanted(entry):
            others += 1
            continue
        add(har, entry, f"entries[{i}]", _offset(start, t0, i, har.notes), before)
    left_out(har.notes, others, rpc, "entry", "entries")
    if not har.exchanges:
        why = unread(har, "entry", "entries")
        raise _error(name, f"the HAR holds no event stream or chat completion to read{why}")
    if t0 is not None:  # (isoformat: strftime writes year 1 as "1", not "0001")
        har.created = t0.isoformat(timespec="microseconds").replace("+00:00", "Z")
    return har


def add(
    har: Har, entry: _Json, at: str, t_ns: int, before: tuple[str, ...], cut: bool = True
) -> None:
    """The entry `at` as the HAR's next exchange, or a note saying why it is skipped (a
    cassette's interactions are added so too: inputs/cassette.py)."""
    try:
        x = _exchange(len(har.exchanges) + 1, entry, t_ns, at, har.notes, before, cut)
        har.exchanges.append(x)
        if x.note is not None:
            har.notes.append(f"{at}: {x.note}")
    except _Skip as why:
        skip(har, at, why)


def unread(har: Har, one: str, many: str, ignore: tuple[str, ...] = ()) -> str:
    """Why a file gave no exchange, for its one-line error (`one`, `many`: the word for its
    entries): the first skipped entry's note and how many were skipped, else its first note
    that is no note of every exchange's nor in `ignore` (how bodies are kept is no why)."""
    if har.skipped:
        n = len(har.skipped)
        count = f"; {n} {many} skipped" if n > 1 else ""
        return f" ({har.skipped[0]}{count})"
    said = [x for x in har.notes if x not in har.general and x not in ignore]
    return f" ({said[0]})" if said else ""


def left_out(notes: list[str], others: int, rpc: int, one: str, many: str) -> None:
    """Notes counting the entries (`one`, `many`: the word for them) left out: `others`
    not a model's stream, `rpc` JSON-RPC requests."""
    if others:
        notes.append(
            f"{others} other {one if others == 1 else many} (not an event stream "
            "or a chat completion) left out"
        )
    if rpc:
        notes.append(
            f"{rpc} JSON-RPC {one if rpc == 1 else many} (an MCP or A2A server's, not "
            "a model's) left out"
        )


def _start(entry: object) -> datetime | str | None:
    """An entry's startedDateTime in UTC; why it cannot be read (said in a note if the
    entry is read); None when there is none."""
    text = entry.get("startedDateTime") if isinstance(entry, dict) else None
    if text is None:
        return None
    if not isinstance(text, str):
        return f"{quote(text, 40)} is not a date and time"
    try:
        start = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return f"{quote(text, 40)} is not an ISO 8601 date and time"
    # HAR asks for a zone; one without is read as UTC (naive and zoned times do not compare)
    if start.tzinfo is None:
        start = start.replace(tzinfo=timezone.utc)
    try:
        return start.astimezone(timezone.utc)
    except OverflowError:  # year 1 at +23:59, year 9999 at -23:59
        return f"{quote(text, 40)} is before year 1 or after 9999 in UTC"


def _offset(start: datetime | str | None, t0: datetime | None, i: int, notes: list[str]) -> int:
    """Entry i's start in ns after the earliest entry's (0, and noted, when it has none that
    can be placed)."""
    if isinstance(start, str):
        notes.append(f"entries[{i}].startedDateTime {start}: read as the earliest entry's start")
        return 0
    if start is None or t0 is None:
        return 0
    ms = (start - t0) / timedelta(milliseconds=1)
    if ms > _LONGEST_MS:
        notes.append(
            f"entries[{i}].startedDateTime is {ms / 8.64e7:,.0f} days after the earliest entry's: "
            "too far to place, read as the earliest entry's start"
        )
        return 0
    return round(ms * 1e6)


def _headers_of(d: _Json) -> list[tuple[str, str]]:
    """A HAR header list ([{"name", "value"}]) as pairs; entries not like that are dropped."""
    headers = d.get("headers")
    if not isinstance(headers, list):
        return []
    return [
        (h["name"], h["value"])
        for h in headers
        if isinstance(h, dict)
        and isinstance(h.get("name"), str)
        and isinstance(h.get("value"), str)
    ]


def _unread_headers(d: _Json, where: str) -> list[str]:
    """Notes for what of a header list `_headers_of` leaves out (said, never dropped
    silently)."""
    headers = d.get("headers")
    if headers is None:
        return []
    if not isinstance(headers, list):
        return [f"{where} {quote(headers, 40)} is not a list of headers: read as none"]
    return [
        f"{where}[{k}] {quote(h, 40)} is not a {{name, value}} pair of strings: left out"
        for k, h in enumerate(headers)
        if not (
            isinstance(h, dict)
            and isinstance(h.get("name"), str)
            and isinstance(h.get("value"), str)
        )
    ]


def _content_type(response: _Json) -> str:
    content = response.get("content")
    mime = content.get("mimeType") if isinstance(content, dict) else None
    if isinstance(mime, str) and mime:
        return mime.lower()
    for name, value in _headers_of(response):
        if name.lower() == "content-type":
            return value.lower()
    return ""


def _framing(request: object, response: object) -> str | None:
    """The framing an entry's response body streams in (None: no stream), told as a
    recording's is: by its content type and what its request asked for."""
    if not isinstance(response, dict):
        return None
    asked = None
    if isinstance(request, dict) and isinstance(request.get("url"), str):
        body = _posted(request).json()
        url = request["url"]
        asked = streams_in(of_request(url, body), url, body)
    status = response.get("status")
    return of_response(
        status if type(status) is int else None,
        [("content-type", _content_type(response))],
        asked,
    )


def _json_rpc(entry: object) -> bool:
    """A JSON-RPC 2.0 request (`"jsonrpc": "2.0"`, alone or in a batch): what an agent
    sends a tool server (MCP) or another agent (A2A), whose answers may stream as SSE too;
    no model's API speaks it."""
    request = entry.get("request") if isinstance(entry, dict) else None
    if not isinstance(request, dict):
        return False
    data = _posted(request).data  # as sent: base64 (a cassette's) and codings undone
    if b'"jsonrpc"' not in data:
        return False
    try:
        body = jsonio.loads(data)
    except orjson.JSONDecodeError:
        return False
    first = body[0] if isinstance(body, list) and body else body
    return isinstance(first, dict) and first.get("jsonrpc") == "2.0"


def _wanted(entry: object) -> bool:
    """An event stream (any framing), or a request a dialect claims (what streamscope
    reads); not a browser's CORS preflight (OPTIONS) of one."""
    if not isinstance(entry, dict):
        return False
    request, response = entry.get("request"), entry.get("response")
    if isinstance(request, dict) and request.get("method") == "OPTIONS":
        return False
    if _framing(request, response) is not None:
        return True
    url = request.get("url") if isinstance(request, dict) else None
    if not isinstance(url, str):
        return False
    body = _posted(request).json() if isinstance(request, dict) else None
    return claimant(url, body) is not None


def _posted(request: _Json) -> Decoded:
    """An entry's request body as the client meant it: its Content-Encoding undone, unless
    the HAR kept it decoded (as HAR 1.2 keeps bodies; `stored_decoded` tells)."""
    try:
        data = _text(request.get("postData"), "request.postData")
    except _Skip:
        return Decoded(b"")
    codings = content_codings(_headers_of(request))
    if codings and stored_decoded(codings, data):
        return Decoded(data, tuple(codings))
    return decode_body(codings, data)


def _exchange(
    number: int,
    entry: _Json,
    t_ns: int,
    at: str,
    notes: list[str],
    before: tuple[str, ...],
    cut: bool = True,
) -> HarExchange:
    """The entry `at` ("entries[3]") as exchange `number`; `before`: the timings that pass
    before its body; `cut`: an SSE body is cut into its events (else one read: a cassette's,
    whose reads were not recorded)."""
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise _Skip("it has no request or no response object")
    method, url, status = request.get("method"), request.get("url"), response.get("status")
    if not isinstance(method, str) or not isinstance(url, str):
        raise _Skip("its request has no method or URL")
    if type(status) is not int or status <= 0:
        raise _Skip(
            f"its response has no status (status {quote(status, 40)}: no answer was recorded)"
        )
    if not 100 <= status <= 599:  # (as a recording's status is)
        raise _Skip(f"its response status {status} is not an HTTP status from 100 to 599")
    for side, d in (("request", request), ("response", response)):
        notes += _unread_headers(d, f"{at} {side}.headers")
    post = request.get("postData")
    if post is not None and not (isinstance(post, dict) and isinstance(post.get("text"), str)):
        what = post.get("text") if isinstance(post, dict) else post
        field = "request.postData.text" if isinstance(post, dict) else "request.postData"
        notes.append(
            f"{at} {field} {quote(what, 40)} is not text: the request body is read as empty"
        )
    body = _text(post, "request.postData")
    posted = _posted(request)  # (the body kept as the HAR holds it; read decoded)
    kept = list(posted.codings) if posted.decoded and posted.data == body else None
    content = response.get("content")
    if not isinstance(content, dict) or not isinstance(content.get("text"), str):
        raise _Skip("the response body was not saved (no response.content.text)")
    data = _text(content, "response.content")
    if not data and status < 400:  # an error's empty body still says the request failed
        raise _Skip(
            'its response body is empty (response.content.text is ""): the body was not '
            "saved, or nothing was received"
        )
    given = entry.get("timings")
    timings: _Json = given if isinstance(given, dict) else {}
    if given is not None and not isinstance(given, dict):
        notes.append(f"{at} timings {quote(given, 40)} is not an object of timings: read as none")
    ms = {k: _ms(timings, k) for k in (*before, "receive")}
    for k, v in ms.items():
        if v is None:
            notes.append(
                f"{at} timings.{k} {quote(timings[k], 40)} is not a time in "
                "milliseconds: read as absent"
            )
    head = sum(ms[k] or 0.0 for k in before)
    receive = ms["receive"] or 0.0
    framing = _framing(request, response)
    _, headers, response_masked = mask_head(None, _headers_of(response))
    codings, note = content_codings(headers), None
    if codings and stored_decoded(codings, data):  # as HAR 1.2 says text is kept
        headers = without_codings(headers)
        note = (
            f"its body is kept decoded, so its Content-Encoding ({', '.join(codings)}) is left out"
        )
    # a body kept as it came (compressed) has no events to cut: one read
    pieces = _events(data) if cut and framing == SSE and (note or not codings) else [data]
    reads = [
        (piece, t_ns + round((head + receive * (k + 1) / len(pieces)) * 1e6))
        for k, piece in enumerate(pieces)
    ]
    end_t = t_ns + round((head + receive) * 1e6)
    shown, request_headers, request_masked = mask_head(url, _headers_of(request))
    return HarExchange(
        Request.of(number, t_ns, method, shown or "", request_headers, body, request_masked, kept),
        Response(number, t_ns + round(head * 1e6), status, headers, response_masked),
        End(number, end_t, "complete", None),
        [(b, t - t_ns) for b, t in reads if b],
        note,
        credentials(url, _headers_of(request) + _cookies_of(request), posted.data),
    )


def _cookies_of(request: _Json) -> list[tuple[str, str]]:
    """A HAR request's `cookies` array as Cookie headers, so a cookie kept only there is
    learnt as a credential (and masked wherever the exchange echoes it)."""
    cookies = request.get("cookies")
    if not isinstance(cookies, list):
        return []
    return [
        ("cookie", f"{c['name']}={c['value']}")
        for c in cookies
        if isinstance(c, dict)
        and isinstance(c.get("name"), str)
        and isinstance(c.get("value"), str)
    ]


_LONGEST_MS = 1e12  # some 30 years: a timing beyond it is no time this reader can place


def _ms(timings: _Json, key: str) -> float | None:
    """A HAR timing in ms (-1, null, or absent, means it does not apply: 0); None when it
    is no number of milliseconds (a string, infinite, past any real transfer)."""
    v = timings.get(key)
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None if v is not None else 0.0
    if v != v or not -_LONGEST_MS <= v <= _LONGEST_MS:  # NaN, or too far to place
        return None
    return float(v) if v > 0 else 0.0


def _text(d: object, where: str) -> bytes:
    """The bytes of a postData or content object: `text`, base64 when `encoding` says so."""
    if not isinstance(d, dict):
        return b""
    text = d.get("text")
    if not isinstance(text, str):
        return b""
    encoding = d.get("encoding")
    if encoding is None or encoding == "":
        return text.encode("utf-8", "surrogatepass")
    if encoding != "base64":
        raise _Skip(
            f"{where}.encoding {quote(encoding, 40)} is not one streamscope reads (only base64)"
        )
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:  # binascii.Error, or a character that is not ASCII
        bad = next((i for i, ch in enumerate(text) if not ch.isascii()), None)
        why = "" if bad is None else f" ({quote(text[bad])} at character {bad} is not ASCII)"
        raise _Skip(f"{where}.text is not valid base64{why}") from None


def _events(body: bytes) -> list[bytes]:
    """The body cut after each blank line (LF, CRLF or CR line ends), every byte kept."""
    pieces, start = [], 0
    for m in _BLANK.finditer(body):
        pieces.append(body[start : m.end()])
        start = m.end()
    if start < len(body):
        pieces.append(body[start:])
    return pieces
