"""Play recorded streams back to a client: which exchange answers a request, and how.

The one place that decides what a replayed request gets, shared by `streamscope serve`
(playback/serve.py, a mock provider on 127.0.0.1) and by `playback_transport` (a
transport for httpx2 or httpx clients, sync and async: no server, no socket)::

    client = openai.OpenAI(api_key="x", http_client=httpx2.Client(
        transport=playback_transport("recordings/openai.jsonl")))
    aclient = openai.AsyncOpenAI(api_key="x", http_client=httpx2.AsyncClient(
        transport=async_playback_transport("recordings/openai.jsonl", speed=1)))

Both default to speed 0 (no waiting) and answer alike: a request that asks for a stream
(`"stream": true`, or as its dialect asks, `Dialect.facts`) gets a recorded stream; any
other request gets a recorded non-stream response (one whose request did not ask for a
stream), or, when the files hold none, a 400 error saying so; a body that is no JSON
object, a 400 error.

Every registered dialect's API is served (its `endpoints`; which requests it claims is
`streamscope.dialects.claimant`). A request is answered by an exchange of its own API (a
recorded request tells which), or by a raw SSE body, which answers any request; so a
recording of an agent that used several APIs replays each its own.

Inputs (several files: their exchanges one after the other, in the order given):

- a recording: every exchange with a response line whose request (if recorded) a
  dialect claims. Its body is its chunk lines, one body chunk per recorded upstream read (so a client sees the recorded
  chunking), with the recorded status and headers (hop-by-hop headers and content-length
  dropped: the body is re-framed). An exchange whose recorded upstream failed, that
  the recorder's own stop cut (`end` reason `upstream-error`, `timeout` or
  `recorder-stopped`), or that never ended (no end line: the recorder was killed, and
  a recording that ends with a cut-off line is read up to it) is cut after its last
  read, as the client saw it: the server aborts the connection, the transport raises the
  client's RemoteProtocolError. Where a recording stops early is said in
  `Library.notes`.
  A recorded head HTTP cannot send again is cleaned or refused (playback/head.py): a
  header that is not a token with a sendable value is left out and said in
  `Library.notes` (`serve` says them on stderr), a status outside 200-599 answers a 502
  JSON error of type `unreplayable_response` saying why, and a 204 or 304 is sent
  without its recorded body. An exchange numbered 0 is served as exchange 0.
- a raw SSE body: one exchange, `200` with SSE's content type, one body chunk per SSE event
  (the bytes unchanged, CRLF and comments included).
- a chunk log (chat.completion.chunk JSON Lines): one exchange, each line sent as one
  `data: <line>\\n\\n` event, then `data: [DONE]\\n\\n` (unless the log has one); it
  answers chat completions only.
- any other saved body (a JSON array, as Gemini streams without `alt=sse`): one exchange,
  its body as saved (decompressed), answering the dialect its first events tell.

A stream is sent in the framing its request asks for (`streamscope.dialects.streams_in`:
Gemini's SSE with `alt=sse`, else one JSON array): as recorded when it was recorded in
that framing, else its events written again in it (`streamscope.framing.rewrite`).

Timing: a recording's response headers are sent at the recorded time after the request
and every read at its recorded time, divided by `speed` (2 is twice as fast; 0 does not
wait at all). Times are kept against the request's arrival, so sleeps do not add up.
SSE bodies and chunk logs have no recorded times: they are sent without waiting.

Which exchange answers a request (`Library.select`):

1. Matched by body: a recorded request whose JSON body has the same values of its
   dialect's `match_keys` as the request: `model`, `messages` and `tools` for Chat
   Completions; `system` too for Anthropic's; `instructions`, `input` and
   `previous_response_id` for the Responses API's; `contents` and `systemInstruction` for
   Gemini's (other keys, e.g. `stream_options`, `max_tokens`, `temperature` or
   `generationConfig`, are ignored; a recorded value `"[REDACTED]"` matches anything). A
   request that names its model in its path (Gemini's) has it compared as its `model`.
   When several match (a request sent again), the one served the fewest times, earliest
   first.
2. Otherwise, unless strict, the next exchange in order: the one served the fewest
   times, earliest first (so every exchange is served once before any is served again).
3. Under strict, only an exchange with no recorded request to compare with (an SSE body,
   a chunk log, or a recorded request whose body is not a JSON object) may answer an
   unmatched request, in the same order; a raw SSE file alone answers every request.
4. Otherwise the request is refused: 400 with
   `{"error": {"message": "streamscope serve: no recorded exchange matches this request:
   <what differed from the closest recorded request>", "type": "unmatched_request"}}`
   (the closest: the longest run of equal messages, or input items, first). Each
   difference of those keys is named, e.g. `messages differ from openai.jsonl exchange 2
   at message 3 (role assistant), tool_calls[0].id: the request has "call_x", the
   recording "call_Qm3..."`, `messages differ from openai.jsonl exchange 1 at message 3
   (role tool): the request has 3 messages, the recording 2` or `input differs from
   run.jsonl exchange 2 at item 3 (type function_call_output), call_id: ...`. The
   transport says `streamscope playback:` instead of `streamscope serve:`.

Only POST requests a dialect claims (any path prefix) are answered; anything else is a
404 JSON error of type `not_found`, naming what is served. Every error is the document of
the request's dialect, or of the dialect whose clients alone send one of its headers
(`streamscope.dialects.speaker`; Chat Completions' for any other): each SDK reads it as
it reads its API's own.

This module imports neither httpx2, httpx, uvicorn nor openai: the transport takes the
HTTP package from the client that uses it (streamscope/http/clients.py).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import field
from types import ModuleType
from typing import Any

import orjson

from ..core import jsonio
from ..core.record import record
from ..dialects import (
    DEFAULT,
    DIALECTS,
    Dialect,
    claimant,
    claimant_sent,
    of_client,
    request_facts,
    sent_body,
    streams_in,
)
from ..framing import content_type, rewrite, writes
from ..http import clients
from ..http.headers import HOP_BY_HOP
from ..inputs import CHUNKS, SSE, Source, open_input
from ..inputs.encoding import request_body, request_json
from ..inputs.reads import Reads
from ..inputs.source import WEBSOCKET, Exchange
from ..providers import PROVIDERS
from ..recording.format import BOM, REDACTED, End, RecordingError
from ..text import plural, quote
from .head import sendable

# Hop-by-hop headers and content-length: the replay frames its own body.
DROPPED_HEADERS = HOP_BY_HOP | {"content-length"}
# Every key some dialect's matching compares (each request compares its own dialect's).
MATCH_KEYS = tuple(dict.fromkeys(k for d in DIALECTS.values() for k in d.match_keys))
SSE_HEADERS = [
    ("content-type", f"{content_type(None)}; charset=utf-8"),
    ("cache-control", "no-cache"),
]
# cut as the client saw it: the upstream failed, or the recorder stopped mid-stream
_FAILED = ("upstream-error", "timeout", "recorder-stopped")
_ABSENT = object()  # a key or item the other side lacks
_NOT_JSON = object()


def cut_short(end: End | None) -> str | None:
    """How a recorded exchange was cut for its client (None: it was not): its upstream
    failed, the recorder stopped, or the recording stops before its end line (a recorder
    killed, a cut-off last line). A replay of it is cut after its last read, as the
    recorded client saw it, never ended cleanly."""
    if end is None:
        return "the recording stops before this exchange ended (no end line)"
    return f"{end.reason}: {end.error}" if end.reason in _FAILED else None


def _unended_note(source: Source, numbers: list[int]) -> str | None:
    """What `serve` says of a recording that stops early: where its last line was cut
    off, and which served exchanges (`numbers`) never ended."""
    said = []
    if source.stopped_at is not None:
        said.append(source.stopped_at.message)
    if numbers:
        which = ", ".join(map(str, numbers))
        said.append(
            f"exchange{'s' if len(numbers) > 1 else ''} {which} never ended (no end line): "
            "served cut after its last read"
        )
    return f"{os.path.basename(source.path)}: {'; '.join(said)}" if said else None


# -- what can be served -------------------------------------------------------------


@record(eq=False)
class Entry:
    """One servable exchange: what to send, and the recorded request it answers."""

    number: int  # 1-based, across all the files given
    source: Source = field(repr=False)
    exchange: int | None = None  # in its recording
    request: dict | None = field(default=None, repr=False)  # recorded JSON body; None: any
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=lambda: list(SSE_HEADERS), repr=False)
    head_s: float = 0.0  # seconds from the request to the response headers
    failed: str | None = None  # how the recorded exchange was cut, if it was (cut_short)
    stream: bool = True  # answers requests that ask for a stream (else the others)
    dialect: Dialect | None = None  # the dialect whose requests it answers; None: any
    refusal: str | None = None  # why its recorded head cannot be sent (playback/head.py)
    bodiless: bool = False  # its status carries no body (204, 304)
    framing: str | None = "sse"  # the framing `reads` sends its body in (None: no stream)
    left_early: bool = False  # the recorded client closed the stream before its end

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def kind(self) -> str:
        return self.source.kind

    @property
    def label(self) -> str:
        name = os.path.basename(self.path)
        return f"{name} exchange {self.exchange}" if self.exchange is not None else name

    def _exchange(self) -> Exchange:
        # (a recording may number an exchange 0: it is that one, not the first)
        return self.source.exchange(1 if self.exchange is None else self.exchange)

    def written_in(self, asked: str | None) -> str | None:
        """The framing its body is written in for a request that asks for `asked`, when
        that is not the one it was recorded in (None: sent as recorded): a successful
        stream's events are written again, in the framing its request asked for."""
        if asked is None or asked == self.framing or self.framing is None:
            return None
        if not self.stream or self.status >= 400 or self.bodiless or not writes(asked):
            return None
        return asked

    def headers_for(self, asked: str | None) -> list[tuple[str, str]]:
        """Its headers, for a request that asks for framing `asked` (`written_in`)."""
        written = self.written_in(asked)
        if written is None:
            return self.headers
        dropped = ("content-type", "content-encoding")  # written anew, not compressed
        kept = [(k, v) for k, v in self.headers if k.lower() not in dropped]
        return [("content-type", content_type(written)), *kept]

    def reads(self, asked: str | None = None) -> Iterator[tuple[bytes, float]]:
        """(bytes, seconds after the request) for each body chunk, read lazily, for a
        request that asks for framing `asked` (None: as recorded)."""
        # the bytes as they arrived (compressed, if they were: with the recorded headers)
        if self.bodiless:
            return
        written = self.written_in(asked)
        if written is not None:  # each event, at the time of the read that completed it
            body = self._exchange().reads

            # closed only where the recorded body ended whole: not cut by the upstream, the
            # recorder or the client, nor inside an event
            def ended() -> bool:
                return not (self.failed or self.left_early or body.truncation)

            for data, t in rewrite(written, body.frames(), ended):
                yield data, (t or 0) / 1e9
            return
        reads = self._exchange().wire
        if self.source.recorded:  # the recorded chunking and timing
            for i in range(len(reads)):
                data, t = reads.read(i)
                yield data, (t or 0) / 1e9
        elif self.kind not in (SSE, CHUNKS):  # a saved body: as saved (decompressed)
            reads = self._exchange().reads
            for i in range(len(reads)):
                yield reads.read(i)[0], 0.0
        elif self.kind == SSE:  # event by event (each with its blank line), bytes unchanged
            event: list[bytes] = []
            for line in _lines(reads):
                event.append(line)
                if line in (b"\n", b"\r\n"):
                    yield b"".join(event), 0.0
                    event = []
            if event:
                yield b"".join(event), 0.0
        else:  # a chunk log: each line as one `data:` event, then [DONE] unless it had one
            done = False
            for i in range(len(reads)):
                data = reads.read(i)[0].strip()
                if i == 0 and data.startswith(BOM):
                    data = data[len(BOM) :].strip()
                if not data:
                    continue
                if data.startswith(b"data:"):  # an SSE line kept in a log
                    data = data[5:].lstrip(b" ")
                done = done or data == b"[DONE]"
                yield b"data: " + data + b"\n\n", 0.0
            if not done:
                yield b"data: [DONE]\n\n", 0.0


def _lines(reads: Reads) -> Iterator[bytes]:
    """The body's lines, each with its line end."""
    rest = b""
    for i in range(len(reads)):
        *whole, rest = (rest + reads.read(i)[0]).split(b"\n")
        for line in whole:
            yield line + b"\n"
    if rest:
        yield rest


def _as_matched(body: Any, dialect: Dialect, path: str) -> Any:
    """A request body as it is matched: with the model its path names (Gemini's), under
    the key the other dialects keep the model in."""
    if isinstance(body, dict) and "model" not in body:
        model = request_facts(dialect, path, body).model
        if model is not None:
            return {"model": model, **body}
    return body


def _asks_stream(dialect: Dialect, path: str, body: Any) -> bool:
    return request_facts(dialect, path, body).stream is True


def _recording_entries(
    source: Source, only: int | None, notes: list[str], sessions: list[int]
) -> list[Entry]:
    """The exchanges of a recording or HAR that can answer a request; `notes` gets what
    of their recorded heads cannot be sent and where the recording stops early,
    `sessions` the WebSocket sessions' numbers (played by playback/websocket.py, not
    answered here)."""
    out = []
    unended: list[int] = []  # the exchanges served that never ended (said in a note)
    for x in [only] if only is not None else source.numbers():
        ex = source.exchange(x)  # RecordingError for an exchange that is not there
        request, response, end = ex.request, ex.response, ex.end
        if response is None:
            continue  # nothing was answered: nothing to replay
        if response.status == 101 and ex.info.framing == WEBSOCKET:
            sessions.append(x)
            unended += [x] if end is None else []
            continue
        body = request_json(request) if request is not None else None
        told = claimant(request.url, body) if request is not None else None  # no request: any
        if request is not None and told is None:
            continue
        unended += [x] if end is None else []
        # what was asked for, even when an error answered it; else the response's type
        stream = ex.info.stream
        if told is not None and request is not None:
            facts = request_facts(told, request.url, body)
            body = _as_matched(body, told, request.url)
            if facts.stream is not None:
                stream = facts.stream
        t0 = request.t_ns if request is not None else response.t_ns
        label = f"{os.path.basename(source.path)} exchange {x}"
        kept = [(k, v) for k, v in response.headers if k.lower() not in DROPPED_HEADERS]
        head = sendable(response.status, kept, label)
        notes += head.notes
        if head.refusal is not None:
            notes.append(f"{head.refusal}: a request it answers gets a 502 JSON error saying so")
        if head.bodiless and len(ex.wire):
            notes.append(
                f"{label}: its recorded status {response.status} carries no body: "
                f"its {len(ex.wire)} recorded reads are not sent"
            )
        out.append(
            Entry(
                0,
                source,
                x,
                body if isinstance(body, dict) else None,
                response.status,
                head.headers,
                max(0.0, (response.t_ns - t0) / 1e9),
                cut_short(end),
                stream,
                told,
                head.refusal,
                head.bodiless,
                ex.info.framing if stream else None,
                left_early=end is not None and end.reason == "client-closed",
            )
        )
    note = _unended_note(source, unended)
    if note is not None:
        notes.append(note)
    return out


def _body_entry(source: Source, exchange: int | None) -> Entry:
    """A saved body's one exchange: an SSE body answers any request; a chunk log
    (chat.completion.chunk lines) is served as Chat Completions SSE; any other body (a
    JSON array...) as saved, answering the dialect its first events tell."""
    ex = source.exchange(1 if exchange is None else exchange)  # RecordingError: another
    if source.kind == SSE:
        return Entry(0, source)
    if source.kind == CHUNKS:
        return Entry(0, source, dialect=DEFAULT)
    told = DIALECTS.get(ex.dialect() or "", DEFAULT)
    framing = ex.info.framing
    headers = [("content-type", content_type(framing)), ("cache-control", "no-cache")]
    return Entry(0, source, headers=headers, dialect=told, framing=framing)


# -- choosing -------------------------------------------------------------------------


@record(frozen=True, slots=True)
class Selection:
    entry: Entry
    how: str  # "body" (matched by body), "any" (answers anything) or "order"


@record(frozen=True, slots=True)
class Unmatched:
    """A request nothing answers: `message` says what did not match."""

    message: str


def _same(recorded: Any, got: Any) -> bool:
    try:
        return _first_diff(recorded, got) is None
    except RecursionError:  # nested past Python's limit: not comparable, so not the same
        return False


def _first_diff(recorded: Any, got: Any, at: tuple = ()) -> tuple[tuple, Any, Any] | None:
    """(path, recorded value, request value) of the first difference, or None."""
    if recorded == REDACTED:
        return None
    if isinstance(recorded, dict) and isinstance(got, dict):
        for k in [*recorded, *(k for k in got if k not in recorded)]:
            d = _first_diff(recorded.get(k, _ABSENT), got.get(k, _ABSENT), (*at, k))
            if d:
                return d
        return None
    if isinstance(recorded, list) and isinstance(got, list):
        for i in range(max(len(recorded), len(got))):
            r = recorded[i] if i < len(recorded) else _ABSENT
            g = got[i] if i < len(got) else _ABSENT
            d = _first_diff(r, g, (*at, i))
            if d:
                return d
        return None
    if type(recorded) is type(got) and recorded == got:
        return None
    if _number(recorded) and _number(got) and recorded == got:  # 1 and 1.0, not True
        return None
    return at, recorded, got


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "nothing"
    return quote(value, 60)


def _where(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _explain(label: str, recorded_body: dict, got: dict, speaks: Dialect) -> str:
    """What differs between the request and one recorded request (`label`'s: an
    exchange, or a session's turn; its JSON body is `recorded_body`), as one line."""
    parts = []
    turns_key, turn_word = speaks.turns
    for key in speaks.match_keys:
        try:
            d = _first_diff(recorded_body.get(key, _ABSENT), got.get(key, _ABSENT))
        except RecursionError:
            parts.append(f"{key} nests too deeply to compare with {label}")
            continue
        if d is None:
            continue
        path, rec, req = d
        values = f"the request has {_show(req)}, the recording {_show(rec)}"
        turns, recorded = got.get(key), recorded_body.get(key)
        if key == turns_key and path and isinstance(turns, list) and isinstance(recorded, list):
            n, name = path[0], turn_word
            turn = turns[n] if n < len(turns) else recorded[n]
            where = f" at {name} {n + 1}{_kind(turn)}"
            if len(path) > 1:
                where += f", {_where(path[1:])}"
            elif rec is _ABSENT or req is _ABSENT:
                values = f"the request has {len(turns)} {name}s, the recording {len(recorded)}"
        else:
            where = f" at {_where(path)}" if path else ""
        verb = "differ" if key in ("messages", "instructions", "contents", "tools") else "differs"
        parts.append(f"{key} {verb} from {label}{where}: {values}")
    return "; ".join(parts)


def _kind(turn: Any) -> str:
    """What a message or an input item is: ` (role user)`, ` (type function_call)`."""
    for key in ("role", "type"):
        value = turn.get(key) if isinstance(turn, dict) else None
        if isinstance(value, str) and value:
            return f" ({key} {value})"
    return ""


def _closeness(number: int, recorded_body: dict, got: dict, speaks: Dialect) -> tuple:
    """How alike a recorded request (number `number`, whose JSON body is `recorded_body`)
    is: the longer run of equal turns (the dialect's messages, or items) first, then the
    earlier one."""
    key = speaks.turns[0]
    rec, req = recorded_body.get(key), got.get(key)
    prefix, next_role, lengths = 0, False, 0
    if isinstance(rec, list) and isinstance(req, list):
        while prefix < min(len(rec), len(req)) and _same(rec[prefix], req[prefix]):
            prefix += 1
        if prefix < min(len(rec), len(req)):
            a, b = rec[prefix], req[prefix]
            next_role = (
                isinstance(a, dict) and isinstance(b, dict) and a.get("role") == b.get("role")
            )
        lengths = -abs(len(rec) - len(req))
    return (
        prefix,
        next_role,
        lengths,
        _same(recorded_body.get("model", _ABSENT), got.get("model", _ABSENT)),
        _same(recorded_body.get("tools", _ABSENT), got.get("tools", _ABSENT)),
        -number,
    )


class Library:
    """The exchanges of one or more files, and which one answers each request.

    `select` is thread-safe: one Library may serve many requests at once.
    """

    def __init__(
        self, paths: str | os.PathLike | Sequence[str | os.PathLike], exchange: int | None = None
    ) -> None:
        given = [paths] if isinstance(paths, (str, os.PathLike)) else paths
        names = [os.fspath(p) for p in given]
        if not names:
            raise ValueError("no file to serve")
        if exchange is not None and len(names) != 1:
            raise ValueError("exchange= needs exactly one file")
        self.paths = names
        self.entries: list[Entry] = []
        # the WebSocket sessions (source, exchange): `serve` plays them (playback/sessions.py)
        self.sessions: list[tuple[Source, int]] = []
        # what of the recorded heads cannot be sent (left out), where a recording stops
        # early (`serve` says it on stderr)
        self.notes: list[str] = []
        self._sources: list[Source] = []
        self._lock = threading.Lock()
        try:
            for path in names:
                # every line checked now: a bad one must not cut a client off half-way
                source = open_input(path, check=True)
                self._sources.append(source)
                if source.recorded:
                    numbers: list[int] = []
                    found = _recording_entries(source, exchange, self.notes, numbers)
                    if not found and not numbers:
                        raise RecordingError(
                            f"{path}: no {_nouns()} exchange with a response to serve",
                            path,
                        )
                    self.entries += found
                    self.sessions += [(source, x) for x in numbers]
                else:
                    self.entries.append(_body_entry(source, exchange))
        except BaseException:
            self.close()
            raise
        for i, entry in enumerate(self.entries, 1):
            entry.number = i
        self.served = [0] * (len(self.entries) + 1)  # by entry number

    def select(
        self, body: bytes, strict: bool = False, dialect: Dialect | None = None, path: str = ""
    ) -> Selection | Unmatched:
        """The exchange that answers a request with this body, to `path`, speaking
        `dialect` (None: any, read as Chat Completions), by the module docstring's
        rules."""
        try:
            got = jsonio.loads(body) if body else _NOT_JSON
        except orjson.JSONDecodeError:
            got = _NOT_JSON
        speaks = dialect or DEFAULT
        got = _as_matched(got, speaks, path)
        entries = self.entries
        if dialect is not None:
            entries = [e for e in entries if e.dialect in (None, dialect)]
            if not entries:
                return Unmatched(f"the files hold no {_noun(dialect)} exchange")
        # a stream request gets a stream only (a request that does not say: either)
        facts = request_facts(speaks, path, got if isinstance(got, dict) else None)
        if facts.stream is None and not isinstance(got, dict):
            # a body that is no JSON object asks for no stream (an API refuses it too):
            # never an SSE body it did not ask for, strict or not
            return Unmatched("the request body is not a JSON object")
        if facts.stream is not None:
            wants = facts.stream
            entries = [e for e in entries if e.stream == wants]
            if not entries:
                return Unmatched(_no_such_response(wants, speaks))
        keys = speaks.match_keys
        with self._lock:
            how, pool = "body", []
            if isinstance(got, dict):
                pool = [
                    e
                    for e in entries
                    if e.request is not None
                    and all(_same(e.request.get(k, _ABSENT), got.get(k, _ABSENT)) for k in keys)
                ]
            if not pool and not strict:
                how, pool = "order", entries
            if not pool:  # strict: only what answers anything
                how, pool = "any", [e for e in entries if e.request is None]
            if not pool:
                return Unmatched(self._unmatched(got, entries, speaks))
            entry = min(pool, key=lambda e: (self.served[e.number], e.number))
            self.served[entry.number] += 1
            return Selection(entry, how)

    def _unmatched(self, got: Any, entries: list[Entry], speaks: Dialect) -> str:
        if not isinstance(got, dict):
            return "the request body is not a JSON object"
        candidates = [(e, e.request) for e in entries if e.request is not None]
        closest, recorded_body = max(
            candidates, key=lambda c: _closeness(c[0].number, c[1], got, speaks)
        )
        return _explain(closest.label, recorded_body, got, speaks)

    def answers(self, dialect: Dialect) -> bool:
        """Whether some exchange answers requests that speak `dialect`."""
        return any(e.dialect in (None, dialect) for e in self.entries)

    def describe(self) -> str:
        """One line: how many exchanges (and WebSocket sessions), from which files."""
        n, k = len(self.entries), len(self.sessions)
        names = ", ".join(os.path.basename(p) for p in self.paths)
        said = [plural(n, "exchange")] if n or not k else []
        if k:
            said.append(plural(k, "WebSocket session"))
        return f"{' and '.join(said)} from {names}"

    def close(self) -> None:
        """Close the files; they are opened again if the library is used again."""
        for source in self._sources:
            source.close()


def _noun(dialect: Dialect) -> str:
    return dialect.noun or dialect.title


def _nouns() -> str:
    """Every dialect's exchanges, in a sentence: "chat completion, Responses ... or Gemini"."""
    nouns = [_noun(d) for d in DIALECTS.values()]
    return ", ".join(nouns[:-1]) + " or " + nouns[-1] if len(nouns) > 1 else nouns[0]


def _no_such_response(stream: bool, speaks: Dialect) -> str:
    """Why no exchange answers a request for a stream (or for none)."""
    if speaks.unserved is not None:
        return speaks.unserved(stream)
    if stream:
        return "the request asks for a stream and the files hold only non-stream responses"
    return (
        'the request asks for a non-stream response ("stream" is not true) '
        "and the files hold only streams"
    )


# -- answering ------------------------------------------------------------------------


def error_body(
    name: str, kind: str, message: str, speaks: Dialect = DEFAULT, status: int = 400
) -> bytes:
    """An error document in the shape of the client's API (its dialect's)."""
    return speaks.error_document(status, kind, f"{name}: {message}")


@record(frozen=True, slots=True)
class Answer:
    """What to send for one request: a selection, or an error (status, JSON body)."""

    selection: Selection | None
    status: int = 200
    error: bytes = b""
    framing: str | None = None  # the framing the request asks its stream in
    error_headers: tuple[tuple[str, str], ...] = ()  # beside the error (its type, Bedrock's)


def _served(speaks: Dialect) -> str:
    """What a client is told is served: its provider's endpoints (every one, for a
    client no provider's dialect tells)."""
    own = next((p.speaks() for p in PROVIDERS if speaks in p.speaks()), list(DIALECTS.values()))
    said = [f"{endpoint}" for d in own for endpoint in d.endpoints]
    if len(said) == 1:
        return f"{said[0]} is"
    return ", ".join(said[:-1]) + " and " + said[-1] + " are"


def answer(
    library: Library,
    method: str,
    path: str,
    body: bytes,
    strict: bool,
    name: str,
    headers: Sequence[tuple[str, str]] = (),
) -> Answer:
    """The request (`path`: its target, the query included: it may tell the framing
    asked for) and its dialect told once (streamscope.dialects.claimant; its errors are its
    dialect's, else those of the dialect whose client sent it, `of_client`), then the
    selection, for the server and the transport alike. A compressed body is read as it
    decodes (its `headers`' Content-Encoding undone)."""
    readable = request_body(headers, body)
    body = readable.data
    told = claimant_sent(path, body)  # the requests a dialect claims are answered
    speaks = told or of_client(name for name, _ in headers) or DEFAULT
    if readable.failure is not None:
        message = readable.describe()
        said = speaks.error_headers(400, "unmatched_request")
        return Answer(None, 400, error_body(name, "unmatched_request", message, speaks), None, said)
    if told is None or method.upper() != "POST":
        message = f"only {_served(speaks)} served, not {method} {path}"
        said = speaks.error_headers(404, "not_found")
        return Answer(None, 404, error_body(name, "not_found", message, speaks, 404), None, said)
    chosen = library.select(body, strict, told, path)
    if isinstance(chosen, Unmatched):
        message = f"no recorded exchange matches this request: {chosen.message}"
        said = speaks.error_headers(400, "unmatched_request")
        body = error_body(name, "unmatched_request", message, speaks)
        return Answer(None, 400, body, None, said)
    if chosen.entry.refusal is not None:  # its head cannot be sent: say why instead
        kind = "unreplayable_response"
        body = error_body(name, kind, chosen.entry.refusal, speaks, 502)
        return Answer(None, 502, body, None, speaks.error_headers(502, kind))
    return Answer(chosen, framing=streams_in(told.name, path, sent_body(body)))


class Pace:
    """The clock of one replay: how long to wait until `at` seconds after the request."""

    def __init__(self, speed: float, start: float | None = None) -> None:
        if speed < 0:
            raise ValueError(f"speed must be 0 or more, got {speed}")
        self.speed = speed
        self.start = time.monotonic() if start is None else start

    def wait(self, at: float) -> float:
        if not self.speed:
            return 0.0
        return max(0.0, self.start + at / self.speed - time.monotonic())


# -- the transport --------------------------------------------------------------------


class _Body:
    """A replayed body, one recorded read per chunk, each at its (scaled) time.

    Made concrete per HTTP package (`_body_class`): the client checks the stream's type.
    """

    error: type[Exception] = OSError  # the package's RemoteProtocolError

    def __init__(self, entry: Entry, pace: Pace, asked: str | None = None) -> None:
        self.entry = entry
        self.pace = pace
        self.asked = asked  # the framing the request asked for

    def __iter__(self) -> Iterator[bytes]:
        for data, at in self.entry.reads(self.asked):
            delay = self.pace.wait(at)
            if delay:
                time.sleep(delay)
            yield data
        self._fail()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for data, at in self.entry.reads(self.asked):
            delay = self.pace.wait(at)
            if delay:
                await asyncio.sleep(delay)
            yield data
        self._fail()

    def _fail(self) -> None:
        if self.entry.failed:
            raise self.error(
                f"streamscope playback: the recorded exchange was cut here ({self.entry.failed})"
            )


@functools.cache
def _body_class(package: ModuleType) -> type:
    return type(
        "PlaybackStream",
        (_Body, package.SyncByteStream, package.AsyncByteStream),
        {"error": package.RemoteProtocolError},
    )


class PlaybackTransport(clients.Transport):
    """Answers requests from recordings, for httpx2 and httpx clients, sync and async:
    what `playback_transport` returns.

    Each request is answered with its own client's types (`http=None`), or only a client
    of the package named (`http="httpx2"` or `"httpx"`) may use it (TypeError for
    another). `selections` lists, per request, the exchange that answered it (None:
    refused). `close()` closes the files; it is also a (async) context manager.
    """

    name = "streamscope playback"

    def __init__(
        self,
        library: Library,
        *,
        speed: float = 0.0,
        strict: bool = False,
        http: str | None = None,
    ) -> None:
        Pace(speed)  # checks it
        if http is not None:
            clients.load(http)  # checks the name; ImportError when it is not installed
        self.library = library
        self.speed = speed
        self.strict = strict
        self.http = http
        self.selections: list[Selection | None] = []  # one per request: what answered it

    def _respond(self, request: Any, body: bytes, start: float) -> tuple[float, Any]:
        package = clients.package_of(request, self.http)
        target = request.url.raw_path.decode("latin-1")  # its query too (alt=sse)
        heads = request.headers.multi_items()
        got = answer(self.library, request.method, target, body, self.strict, self.name, heads)
        self.selections.append(got.selection)
        if got.selection is None:
            headers = [("content-type", "application/json"), *got.error_headers]
            response = package.Response(
                got.status, headers=headers, content=got.error, request=request
            )
            return 0.0, response
        entry = got.selection.entry
        pace = Pace(self.speed, start)
        response = package.Response(
            entry.status,
            headers=entry.headers_for(got.framing),
            stream=_body_class(package)(entry, pace, got.framing),
            request=request,
        )
        return pace.wait(entry.head_s), response

    def handle_request(self, request: Any) -> Any:
        start = time.monotonic()
        delay, response = self._respond(request, request.read(), start)
        if delay:
            time.sleep(delay)
        return response

    async def handle_async_request(self, request: Any) -> Any:
        start = time.monotonic()
        delay, response = self._respond(request, await request.aread(), start)
        if delay:
            await asyncio.sleep(delay)
        return response

    def close(self) -> None:
        self.library.close()


def playback_transport(
    path: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    speed: float = 0.0,
    strict: bool = False,
    exchange: int | None = None,
    http: str | None = None,
) -> PlaybackTransport:
    """A transport for `httpx2.Client` or `httpx.Client` that answers from recorded streams.

    Args:
        path: a recording, a HAR file, a raw SSE body or a chunk log, or a list of them.
        speed: the recorded timing divided by this (0, the default: no waiting).
        strict: refuse a request that matches no recorded request body (400, saying
            what differed).
        exchange: serve only this exchange of the file.
        http: "httpx2" or "httpx" to accept only that package's clients (default:
            answer either with its own types).

    Returns:
        A PlaybackTransport: give it to a client as `transport=`; closing the client
        (or the transport) closes the files. Which exchange answers which request: the
        module docstring.

    Raises:
        RecordingError: a file cannot be read or served (one that holds only WebSocket
            sessions among them: an HTTP transport cannot carry a WebSocket, `streamscope
            serve` plays them).
        ValueError: a negative speed, no file, or `exchange` with several files; or an
            `http` that is neither package.
        ImportError: the package `http` names is not installed.
    """
    Pace(speed)  # a bad speed fails before any file is opened
    library = Library(path, exchange)
    if not library.entries:
        library.close()
        where = ", ".join(library.paths)
        raise RecordingError(
            f"{where}: only WebSocket sessions to play, and an HTTP transport cannot carry a "
            "WebSocket: play them with `streamscope serve`",
            library.paths[0],
        )
    return PlaybackTransport(library, speed=speed, strict=strict, http=http)


def async_playback_transport(
    path: str | os.PathLike | Sequence[str | os.PathLike], **options: Any
) -> PlaybackTransport:
    """The same transport, named for `httpx2.AsyncClient` / `httpx.AsyncClient` (and so for
    `openai.AsyncOpenAI`). Arguments, return and errors as `playback_transport`."""
    return playback_transport(path, **options)
