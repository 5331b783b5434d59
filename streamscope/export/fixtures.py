"""`streamscope export`: one stream as a test fixture (SSE body, chunk log, recording, pytest).

Without --minimal the SSE form is byte-exact: the reads as received, or the bytes of
frames A..B. With --minimal the stream is first shrunk (by its dialect's search) to the
fewest frames and fields on which the same warnings, errors and client divergences still
hold.
"""

from __future__ import annotations

import ast
import datetime
import os
import pprint
import textwrap
from typing import Any

from .. import __version__
from ..core import jsonio
from ..core.calls import StrategyError, Unmodeled
from ..core.engine import UNFINISHED
from ..core.frames import (
    INVALID,
    Frame,
    FrameHeader,
    Truncation,
    as_sent,
    parse_payload,
    read_sent,
    sent_bytes,
    sent_frame,
)
from ..core.minimal import Tells
from ..core.record import record
from ..dialects import LOOK, Dialect, dialect
from ..dialects.base import Messages
from ..framing import SSE, content_type, framing
from ..inputs import CHUNKS, Exchange, Source, open_input
from ..inputs.encoding import read_request, without_codings
from ..inputs.har import Har
from ..inputs.reads import Reads
from ..inputs.sniff import FRAMING_OF, opens
from ..recording.format import Chunk, End, Header, RecordingError, Request, Response, line_json
from ..recording.mask import Masking, Secrets, mask_pieces, mask_request
from ..text import visible
from .kept import Kept, Tail, kept, tail_of, tells

# (session last: it refuses an HTTP stream, which the others write)
FORMATS = ("sse", "chunks", "recording", "pytest", "session")
CHUNKS_FRAMING = FRAMING_OF[CHUNKS]  # the framing `--format chunks` writes


@record(slots=True)
class Export:
    data: bytes
    frames_in: int  # frames of the stream (or of the selection)
    frames_out: int  # frames in the fixture
    # values masked in an SSE, chunk log or pytest fixture (a recording counts its own)
    masked: int = 0
    # a WebSocket session's turns, in the selection and in the fixture (None: a stream)
    turns_in: int | None = None
    turns_out: int | None = None
    # what the export left out of the file, said on stderr (a line each)
    notes: tuple[str, ...] = ()


@record(slots=True)
class _Stream:
    source: Source
    exchange: Exchange
    datas: list[str]  # every frame's data, as sent (core.frames.as_sent)
    # every frame's byte span in the body, and time: None with --minimal (it writes none)
    spans: list[tuple[int, int]] | None
    times: list[int | None] | None
    payloads: list[object] | None = None  # every frame's parsed data, kept for --minimal
    names: list[str | None] | None = None  # every frame's SSE event name (named dialects)
    # a turn of a WebSocket session: its number and its request's tools (None: the stream
    # is an exchange's body)
    turn: int | None = None
    turn_tools: list | None = None
    # every frame's headers, where its framing gives some (an AWS event stream's)
    headers: list[tuple[FrameHeader, ...]] | None = None
    # how the body ended past its last frame: cut inside an event (its framing's
    # truncation, or its Content-Encoding's), and the bytes it ended with (export/kept.py)
    truncation: Truncation | None = None
    tail: Tail | None = None

    @property
    def tools(self) -> list | None:
        return self.turn_tools if self.turn is not None else self.exchange.info.tools

    @property
    def fmt(self) -> str:
        return self.source.kind

    @property
    def told(self) -> Dialect:
        return dialect(self.exchange.dialect())

    @property
    def chunk_log(self) -> bool:
        """Is it read as a chunk log (Source.chunk_log): its events unnamed, no end marker?"""
        self.exchange.dialect()  # (told: a chunk log is one of a dialect that streams none)
        return self.source.chunk_log(self.exchange.info)

    @property
    def reads(self) -> Reads:
        return self.exchange.reads


def _pick(source: Source, exchange: int | None) -> int | None:
    """The exchange to export: `exchange`, or a recording's first stream (a stream file's
    one: None)."""
    if not source.recorded:
        return exchange
    infos = source.infos()
    streams = [i.exchange for i in infos if i.stream and i.status is not None]
    if exchange is None:
        if not streams:
            raise RecordingError(f"{source.path}: no stream to export", source.path)
        return streams[0]
    if exchange not in streams:
        what = "is not a stream" if exchange in source.numbers() else "does not exist"
        raise RecordingError(
            f"{source.path}: exchange {exchange} {what} "
            f"(streams: {', '.join(map(str, streams)) or 'none'})",
            source.path,
        )
    return exchange


def _load(source: Source, exchange: int | None, payloads: bool = False) -> _Stream:
    ex = source.exchange(
        1 if exchange is None else exchange
    )  # (a recording may hold an exchange 0)
    if payloads and not dialect(ex.dialect()).named_events:
        return _minimal_load(source, ex)
    datas, spans, times, names, headers = [], [], [], [], []
    for frame in ex.frames():
        datas.append(as_sent(frame))  # (bytes that are not UTF-8 kept, as sent)
        spans.append((frame.start, frame.end))
        times.append(frame.time_ns)
        names.append(frame.event)
        headers.append(frame.headers)
    kept = headers if any(headers) else None
    stream = _Stream(source, ex, datas, spans, times, names=names, headers=kept)
    return _ended(stream, (spans[0][0], spans[-1][1]) if spans else None, ex.reads.truncation)


def _ended(
    stream: _Stream, bounds: tuple[int, int] | None, truncation: Truncation | None
) -> _Stream:
    """`stream` with how its body ended (`truncation`), its frames read (they span
    `bounds`)."""
    stream.truncation = truncation
    if truncation is not None:  # (rare: the body is read again only then)
        stream.tail = tail_of(_body(stream.reads), bounds, truncation)
    return stream


def _minimal_load(source: Source, ex: Exchange) -> _Stream:
    """The frames' datas and payloads alone: --minimal writes no byte as received (no
    spans, no times). Most bodies are plain: split, not decoded line by line, and as a
    stream repeats its chunks, each distinct text parsed once, equal ones sharing it (the
    minimiser never changes a payload)."""
    reads = ex.reads
    plain = framing(reads.framing or SSE).plain
    body = _body(reads) if plain is not None else b""
    if body.endswith(b"\n"):  # (else it may end inside an event: read by the decoder)
        datas = plain(body) if plain is not None else None
        if datas is not None:
            known: dict[str, object] = {}
            for data in datas:
                if data not in known:
                    known[data] = parse_payload(data)
            stream = _Stream(source, ex, datas, None, None, list(map(known.__getitem__, datas)))
            return _ended(stream, None, reads.ended(None))  # (its coding may have cut it)
    frames = list(reads.frames())
    headers = [f.headers for f in frames]
    stream = _Stream(
        source,
        ex,
        [as_sent(f) for f in frames],  # (bytes that are not UTF-8 kept, as sent)
        None,
        None,
        [f.payload for f in frames],
        headers=headers if any(headers) else None,
    )
    bounds = (frames[0].start, frames[-1].end) if frames else None
    return _ended(stream, bounds, reads.truncation)


def parse_range(text: str | None, total: int) -> tuple[int, int]:
    """ "A-B", "A-" or "A" (1-based, inclusive) within 1..total."""
    if not text:
        return 1, total
    first, _, last = text.partition("-")
    try:
        a = int(first)
        b = int(last) if last else (total if "-" in text else a)
    except ValueError:
        raise ValueError(f"--frames takes A-B (like 3-9), got {text!r}") from None
    if a > b >= 1:  # said as such: "the stream has frames 1-11" would not say what is wrong
        raise ValueError(
            f"--frames {text}: the range is reversed (frame {a} comes after frame {b}); "
            f"write {b}-{a}"
        )
    if not 1 <= a <= b <= total:
        raise ValueError(f"--frames {text}: the stream has frames 1-{total}")
    return a, b


def export(
    path: str,
    fmt: str = "sse",
    exchange: int | None = None,
    frames: str | None = None,
    minimal: bool = False,
    keep_fields: bool = False,
    turn: int | None = None,
) -> Export:
    if keep_fields and not minimal:
        raise ValueError("--keep-fields only applies with --minimal")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    with open_input(path, check=True) as source:
        if source.har is not None and fmt == "recording" and not (exchange or frames or minimal):
            if turn is not None:
                raise ValueError("--turn picks a turn of a WebSocket session; a HAR holds none")
            return _whole_har(source, source.har)
        number = _pick(source, exchange)
        if source.recorded and number is not None:
            from .session import is_session

            ex = source.exchange(number)
            if is_session(ex):
                return _session(source, ex, fmt, frames, minimal, keep_fields, turn)
        where = f"exchange {number}" if source.recorded else "the stream"
        if turn is not None:
            raise ValueError(
                f"--turn picks a turn of a WebSocket session; {where} is an HTTP stream"
            )
        if fmt == "session":
            raise ValueError(
                f"--format session writes a WebSocket session; {where} is an HTTP stream "
                "(--format recording writes it as a recording)"
            )
        return _export(_load(source, number, minimal), fmt, frames, minimal, keep_fields)


def _session(
    source: Source,
    ex: Exchange,
    fmt: str,
    frames: str | None,
    minimal: bool,
    keep_fields: bool,
    turn: int | None,
) -> Export:
    """A WebSocket session: one turn's stream (sse, chunks), or the session (its turn
    `turn` alone, or shrunk with --minimal) as a recording, a session fixture or a pytest
    module."""
    from . import session as ws

    view = ws.open_view(source, ex)
    if fmt in ("sse", "chunks"):
        t = ws.one_turn(view, turn, fmt)
        label = view.reading.label(t)
        stream = _Stream(
            source,
            ex,
            [as_sent(f) for f in t.frames],
            [(f.start, f.end) for f in t.frames],
            [f.time_ns for f in t.frames],
            [f.payload for f in t.frames],
            [f.event for f in t.frames],
            label,
            ws.turn_tools(view, t),
        )
        return _export(stream, fmt, frames, minimal, keep_fields)
    if frames is not None:
        raise ValueError(
            "--frames picks frames of one stream: for one turn of this session, add --turn "
            "and --format sse or chunks"
        )
    entries = ws.select(view, turn)
    frames_in, turns_in = ws.frames_of(entries), len(ws.read(view, entries).turns)
    if minimal:
        from .session_minimal import minimize_session

        entries = minimize_session(view, entries, keep_fields, keep_calls=fmt == "pytest")
    entries = ws.masked_entries(view, entries)  # (what is written, masked last)
    kept = ws.read(view, entries).labels
    if fmt == "recording":
        data = ws.recording(view, entries, whole=turn is None and not minimal)
    elif fmt == "session":
        data = ws.session_json(view, entries)
    else:
        driver = view.told.fixture.session
        if driver is None:
            raise ValueError(
                f"{view.where()} is a WebSocket session of {view.told.title}, which has no "
                "WebSocket client a pytest module can drive: export it as --format session "
                "or recording"
            )
        if not kept:
            raise ValueError(
                f"{view.where()} is a WebSocket session with no turn: nothing for a pytest "
                "module to assert; export it as --format session or recording"
            )
        from .session_pytest import pytest_module

        what = "turn" if len(kept) == 1 else "turns"
        where = f"exchange {ex.number}: a WebSocket session, {what} {ws.labels_words(kept)}"
        own = list(range(1, len(kept) + 1))
        if kept != own:  # the module numbers the turns it holds from 1
            where += f", {ws.labels_words(own)} here"
        where += ", minimised" if minimal else ""
        data = pytest_module(view, entries, driver, where).encode()
    masked = ws.masked(entries) if fmt != "recording" else 0  # (a recording counts its own)
    return Export(data, frames_in, ws.frames_of(entries), masked, turns_in, len(kept))


def _whole_har(source: Source, har: Har) -> Export:
    """A HAR as one recording: every exchange it kept, its notes in the header, its
    secrets masked as the recorder masks them."""
    lines = [Header(created=_created(source), notes=har.notes).to_json()]
    masking = Masking()
    for x in har.exchanges:
        t0 = x.request.t_ns
        reads = [(data, t0 + t) for data, t in x.reads]
        lines += _masked(masking, x.request, x.response, reads, x.end, x.secrets)
    frames = sum(line["type"] == "chunk" for line in lines)
    return Export(b"".join(line_json(line) for line in lines), frames, frames)


def _masked(
    masking: Masking,
    request: Request | None,
    response: Response | None,
    reads: list[tuple[bytes, int]],
    end: End,
    known: list[str] | None = None,
    end_line: bool = True,
) -> list[dict]:
    """One exchange's lines, through the masking every recording's writer uses: what a
    HAR or a recording made with --no-redact holds in clear is not exported so.
    `end_line` False: the recording stops before the exchange ended, as the source did."""
    ex, lines = end.exchange, []
    if request is not None:
        got = mask_request(  # on what the body decodes to, as the writer masks it
            masking,
            ex,
            request.url,
            request.headers,
            request.body_bytes,
            known or (),
            stored=request.decoded,
        )
        masked = request.masked + got.masked
        lines.append(
            Request.of(
                ex,
                request.t_ns,
                request.method,
                got.url,
                got.headers,
                got.body,
                masked,
                got.decoded,
                request.redacted,
            )
        )
    if response is not None:
        headers, n = masking.headers(ex, response.headers)
        lines.append(Response(ex, response.t_ns, response.status, headers, response.masked + n))
    for data, t in reads:
        ready = masking.chunk(ex, t, data)
        lines += [Chunk.of(ex, t, d) for t, d in (ready if ready is not None else [(t, data)])]
    held, error, n = masking.end(ex, end.error)
    lines += [Chunk.of(ex, t, d) for t, d in held]
    if end_line:
        lines.append(End(ex, end.t_ns, end.reason, error, end.masked + n))
    return [line.to_json() for line in lines]


def _export(
    stream: _Stream, fmt: str, frames: str | None, minimal: bool, keep_fields: bool
) -> Export:
    a, b = parse_range(frames, len(stream.datas))
    datas = stream.datas[a - 1 : b]
    names = stream.names[a - 1 : b] if stream.names is not None else [None] * len(datas)
    heads = stream.headers[a - 1 : b] if stream.headers is not None else None
    # a frame --minimal keeps or changes carries the headers its event came with (the
    # first frame of each event's: one event's messages carry the same)
    by_name = {} if heads is None else dict(reversed(list(zip(names, heads, strict=True))))
    tools = stream.tools
    # frames that reach the stream's end end as it did (export/kept.py)
    keep = _kept(stream, fmt) if b == len(stream.datas) else Kept()
    # (told only where it matters: a bare body's dialect is read off its first frames)
    told = stream.told if minimal else None
    if told is not None and told.shape is not None:
        from .minimize_events import minimize_events

        pairs = minimize_events(
            list(zip(names, datas, strict=True)),
            told,
            told.shape,
            tools,
            keep_fields=keep_fields,
            expect_done=not stream.chunk_log,
            headers=by_name,
            keep_calls=fmt == "pytest",
            chunk_log=stream.chunk_log,
            end=keep.ending,
            tells=_tells(stream, fmt, names, datas),
        )
        names, datas = [n for n, _ in pairs], [d for _, d in pairs]
        heads = None if heads is None else [by_name.get(n, ()) for n in names]
    elif told is not None and told.minimize is not None:
        # (a stream that ended with [DONE] ends with it: chat/minimize.py)
        unnamed: list[str | None] = [None] * len(datas)  # (it writes no event names)
        datas = told.minimize(
            datas,
            tools,
            keep_fields=keep_fields,
            expect_done=not stream.chunk_log,
            payloads=stream.payloads[a - 1 : b] if stream.payloads is not None else None,
            keep_calls=fmt == "pytest",
            end=keep.ending,
            tells=_tells(stream, fmt, unnamed, datas),
        )
        names, heads = [None] * len(datas), None
    elif told is not None:
        raise ValueError(f"--minimal cannot shrink {told.title} streams yet")
    exact = not minimal
    secrets, masked = _secrets(stream), 0
    if secrets and fmt != "recording":  # (a recording is masked by _recording, counted)
        datas, masked = _masked_datas(secrets, datas)
    if fmt != "recording" and stream.turn is None:  # what its reader masked (masking.py)
        masked += stream.exchange.body_masked
    tail = keep.tail
    notes: list[str] = []
    if fmt == "sse":
        if exact and stream.turn is None:
            data, n = secrets.body(_sse_exact(stream, a, b, tail is not None))
            masked = n + stream.exchange.body_masked
        else:
            data, n = _ending(_written(stream, names, datas, heads=heads, tail=tail), tail, secrets)
            masked += n
    elif fmt == "chunks":
        lines, first, spread, unnamed = _chunk_lines(stream.told, names, datas)
        if lines and not opens(CHUNKS_FRAMING, first):
            raise ValueError(
                f"--format chunks: the first event written "
                f"({lines[0][:30].decode('utf-8', 'replace')!r}...) is "
                "none a chunk log is told by, so inspect would not read the file: export "
                "it as --format sse or recording"
            )
        data, n = _ending(tail.written(lines) if tail is not None else lines, tail, secrets)
        masked += n
        if spread:
            what = "an event's JSON was" if spread == 1 else f"{spread} events' JSON were"
            notes.append(
                f"{what} laid out over several lines: written on one line each (a chunk log "
                "holds an event a line), every line break as a space"
            )
        if unnamed:
            what = "an event's name differs" if unnamed == 1 else f"{unnamed} events' names differ"
            notes.append(
                f"{what} from its data's type, and a chunk log holds no event names: inspect "
                "reads each by its data (--format sse keeps the names)"
            )
        reaches = b == len(stream.datas) and not keep.notes  # (a cut end is said: kept.py)
        if reaches and not _ends_marked(stream, names, datas, heads):
            notes.append(
                "the stream ended before its end marker, and a chunk log holds none: inspect "
                "reads its last line as its end (--format sse or recording keeps how it ended)"
            )
    elif fmt == "recording":
        data = _recording(stream, datas, names, a, b, exact, heads, keep)
    elif fmt == "pytest":  # (its module serves text: bytes that are not UTF-8 read as U+FFFD)
        datas = [read_sent(d)[0] for d in datas]
        data = _pytest(stream, names, datas, heads, a, b, minimal, tools).encode()
    else:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    return Export(data, b - a + 1, len(datas), masked, notes=(*keep.notes, *notes))


def _chunk_lines(
    told: Dialect, names: list[str | None], datas: list[str]
) -> tuple[list[bytes], object, int, int]:
    """A chunk log's lines, its first line's JSON value, how many events' JSON was laid
    out over several lines, and how many events' names (a named dialect's) the lines
    lose: each frame's data as sent, a line each (a frame whose data is no JSON is left
    out; a line break inside JSON's is whitespace between its tokens, written as a
    space), wrapped in its event's name where the dialect's data does not name it
    (`Dialect.chunk_key`: Bedrock's `{"messageStart": {...}}`); a name no wrapper keeps
    is lost where it is not the data's `type` (what a chunk log's event is read by)."""
    lines: list[bytes] = []
    first: object = None
    spread = unnamed = 0
    for name, data in zip(names, datas, strict=True):
        payload = parse_payload(read_sent(data)[0])
        if payload is INVALID:
            continue
        key = told.chunk_key(name, payload)
        if key is None and name is not None and told.named_events:
            unnamed += not isinstance(payload, dict) or payload.get("type") != name
        line = sent_bytes(data)
        if b"\n" in line or b"\r" in line:
            line = line.replace(b"\r", b" ").replace(b"\n", b" ")
            spread += 1
        if key is not None:
            line, payload = b"{" + jsonio.dumps(key) + b":" + line + b"}", {key: payload}
        if not lines:
            first = payload
        lines.append(line + b"\n")
    return lines, first, spread, unnamed


def _ends_marked(
    stream: _Stream,
    names: list[str | None],
    datas: list[str],
    heads: list[tuple[FrameHeader, ...]] | None,
) -> bool:
    """Does the stream end as its chunk log reads (its last line its end): it is read as a
    chunk log, or its frames (`datas`, with their event names and headers) reach its end
    marker ([DONE], message_stop), an error or an error status ended it, or it is a
    WebSocket session's turn (its turn's end ends it)."""
    info = stream.exchange.info
    if stream.chunk_log or stream.turn is not None or (info.status or 0) >= 400:
        return True
    engine = stream.told.engine(1, stream.tools)
    heads = heads if heads is not None else [()] * len(datas)
    frames = zip(names, datas, heads, strict=True)
    for n, (name, data, head) in enumerate(frames, 1):
        engine.feed(Frame(n, data, parse_payload(read_sent(data)[0]), event=name, headers=head))
    return engine.done_seen or engine.errored


def _kept(stream: _Stream, fmt: str) -> Kept:
    """How an export of frames that reach the stream's end ends (export/kept.py): in
    the framing written, with the recorded end where a recording is written."""
    if fmt == "pytest":
        return Kept()  # (its module serves the frames alone)
    recorded = None
    if stream.source.recorded and stream.turn is None:
        end = stream.exchange.end  # (None: the recording stops before its end line)
        recorded = (end.reason, end.error) if end is not None else (UNFINISHED, None)
    own = _framing_of(stream, fmt) == (stream.reads.framing or SSE)
    return kept(stream.truncation, stream.tail, recorded, own, fmt == "recording")


def _tells(stream: _Stream, fmt: str, names: list[str | None], datas: list[str]) -> Tells | None:
    """Where the written stream's dialect is told by its frames (a saved body, a turn, a
    recording whose request tells none), the test that a candidate's still tell the
    one these tell (export/kept.py); None: the dialect is told otherwise."""
    if fmt == "pytest" or (fmt == "recording" and stream.exchange.info.request_dialect):
        return None
    saved = None if fmt == "recording" else _framing_of(stream, fmt)
    first = [
        sent_frame(n, data, event=name)
        for n, (name, data) in enumerate(zip(names[:LOOK], datas[:LOOK], strict=True), 1)
    ]
    return tells(first, saved)


def _framing_of(stream: _Stream, fmt: str) -> str:
    """The framing `fmt` writes the stream in (a chunk log's JSON lines, or _written_in)."""
    return CHUNKS_FRAMING if fmt == "chunks" else _written_in(stream, fmt)


def _ending(pieces: list[bytes], tail: Tail | None, secrets: Secrets) -> tuple[bytes, int]:
    """A body written anew, whose last piece is `tail`'s bytes as received when it has
    one: masked as the frames before it were (the values masked in it)."""
    n = 0
    if tail is not None and secrets:
        pieces[-1], n = secrets.body(pieces[-1])
    return b"".join(pieces), n


def _secrets(stream: _Stream) -> Secrets:
    """The credentials the stream's request carried, as the recorder looks for them: a
    HAR's (kept before its reader masked them) or a --no-redact recording's."""
    ex, har = stream.exchange, stream.source.har
    known = har.exchanges[ex.number - 1].secrets if har is not None else []
    known += ex.secrets.values if ex.secrets is not None else []  # (its reader's)
    req = ex.request
    if req is None:
        return Secrets.of_request("", [], b"", known)
    return Secrets.of_request(req.url, req.headers, read_request(req).data, known)


def _masked_datas(secrets: Secrets, datas: list[str]) -> tuple[list[str], int]:
    """The frames' data with the credentials masked as one body (mask_pieces: a credential
    split over two frames, or across the text of consecutive deltas, is masked in each;
    the same length, still valid UTF-8: what is masked is whole characters)."""
    pieces, counts = mask_pieces(secrets, [d.encode("utf-8", "surrogatepass") for d in datas])
    return [p.decode("utf-8", "surrogatepass") for p in pieces], sum(counts)


def _written_in(stream: _Stream, fmt: str) -> str:
    """The framing frames written anew are written in: the stream's own, but where its
    content type alone would not tell it in a recording with no request (a JSON array
    saved bare): SSE."""
    record = framing(stream.reads.framing or SSE)
    bare = fmt == "recording" and not stream.source.recorded
    return record.name if record.write is not None and (record.typed or not bare) else SSE


def _written(
    stream: _Stream,
    names: list[str | None],
    datas: list[str],
    fmt: str = "sse",
    heads: list[tuple[FrameHeader, ...]] | None = None,
    tail: Tail | None = None,
) -> list[bytes]:
    """Frames written anew (a selection, a minimal stream) as a server writes them in
    `_written_in`'s framing, a piece a frame (a JSON array's closing `]` last, unless the
    stream ends with a `tail`: its bytes, the last piece); SSE events keep their `event:`
    names, a binary framing's messages their headers (`heads`, one a frame)."""
    name = _written_in(stream, fmt)
    write = framing(name).write
    if name == SSE or write is None:
        pieces = list(map(_event, names, datas))
    else:
        heads = heads if heads is not None else [()] * len(datas)
        frames = (
            Frame(n, data, INVALID, event=event, headers=head)
            for n, (event, data, head) in enumerate(zip(names, datas, heads, strict=True), 1)
        )
        pieces = list(write(frames, lambda: tail is None))
    return tail.written(pieces) if tail is not None else pieces


def _event(name: str | None, data: str) -> bytes:
    """One SSE event as a server writes it (its `event:` line when it had one)."""
    head = b"" if name is None else b"event: " + name.encode() + b"\n"
    lines = data.split("\n")  # (a data as sent: its bytes that are not UTF-8 as they came)
    return head + b"".join(b"data: " + sent_bytes(line) + b"\n" for line in lines) + b"\n"


def _body(reads: Reads) -> bytes:
    """The body as received: every read, in order."""
    return b"".join(data for data, _ in reads.reads_from(0, len(reads)))


def _sse_exact(stream: _Stream, a: int, b: int, cut: bool) -> bytes:
    """The bytes of frames a..b; `cut`: with the unfinished end after them."""
    body = _body(stream.reads)
    assert stream.spans is not None  # loaded for an exact export
    if a == 1 and b == len(stream.datas):
        return body  # every byte as received, comments and all
    return body[stream.spans[a - 1][0] : None if cut else stream.spans[b - 1][1]]


def _created(source: Source) -> str:
    """The exported recording's start: the capture's own time (exports stay reproducible)."""
    if source.header is not None:  # a recording
        return source.header.created
    if source.har is not None and source.har.created is not None:  # its first entry's start
        return source.har.created
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(source.path), datetime.timezone.utc)
    return mtime.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _recording(
    stream: _Stream,
    datas: list[str],
    names: list[str | None],
    a: int,
    b: int,
    exact: bool,
    heads: list[tuple[FrameHeader, ...]] | None,
    keep: Kept,
) -> bytes:
    header, ex = stream.source.header, stream.exchange
    har = stream.source.har
    created = _created(stream.source)
    # a recording's notes, or a HAR's that hold for each of its exchanges
    har_notes = list(har.general) if har is not None else None
    notes = header.notes if header is not None else har_notes
    lines = [Header(created=created, argv=None, notes=notes).to_json()]
    t0 = 0
    whole = exact and a == 1 and b == len(stream.datas)
    request = response = None
    if stream.source.recorded:
        if ex.request is not None:
            req = ex.request
            t0 = req.t_ns
            request = Request(
                1,
                0,
                req.method,
                req.url,
                req.headers,
                req.body,
                req.body_b64,
                req.masked,
                req.decoded,
            )
        if ex.response is not None:
            resp = ex.response
            # the whole body goes as it arrived (compressed, if it was); any other, decoded
            headers = resp.headers if whole else without_codings(resp.headers)
            response = Response(1, resp.t_ns - t0, resp.status, headers, resp.masked)
    else:  # a saved body: its frames as its framing's server writes them (_written)
        response = Response(
            1, 0, 200, [("content-type", content_type(_written_in(stream, "recording")))]
        )
    reads: list[tuple[bytes, int]] = []
    if whole and stream.source.recorded:
        wire = ex.wire
        for i in range(len(wire)):
            data, t = wire.read(i)
            reads.append((data, t or 0))
    else:
        times: list[int | None] = [None] * len(datas)
        if exact:
            assert stream.times is not None  # loaded for an exact export
            times = stream.times[a - 1 : b]
        pieces = _written(stream, names, datas, "recording", heads, keep.tail)
        times += [times[-1] if times else None] * (len(pieces) - len(times))  # `]`, a tail
        reads += [(piece, t or 0) for piece, t in zip(pieces, times, strict=True)]
    last = reads[-1][1] if reads else (response.t_ns if response is not None else 0)
    masked = ex.end.masked if whole and ex.end is not None else 0
    # the recorded end, where the frames reach it (a selection that stops before: complete)
    ending = keep.ending
    end = End(1, last, ending.reason or "complete", ending.error, masked)
    known = har.exchanges[ex.number - 1].secrets if har is not None else None
    lines += _masked(Masking(), request, response, reads, end, known, keep.end_line)
    return b"".join(line_json(line) for line in lines)


def in_docstring(text: str) -> str:
    """`text` as it can stand inside a module's triple-quoted docstring: Python's own string
    escaping (repr) with double quotes escaped as well, so no value (a file name like
    `x\"\"\"+__import__("os")...`, a `\\U` in a Windows path, a control character or a lone
    surrogate) can end the docstring or make the module fail to compile."""
    escaped = repr(text)
    body = escaped[1:-1]
    # a single-quoted repr leaves `"` as it is; a double-quoted one has none to escape
    return body.replace('"', '\\"') if escaped[0] == "'" else body


def _pytest(
    stream: _Stream,
    names: list[str | None],
    datas: list[str],
    heads: list[tuple[FrameHeader, ...]] | None,
    a: int,
    b: int,
    minimal: bool,
    tools: list | None,
) -> str:
    """A module that serves the frames through the dialect's own SDK, as the stream's
    framing has its clients read it (the dialect's fixture for that framing), and asserts
    that its embedded accumulator (streamscope's reading, in a few lines) assembles the
    calls."""
    told = stream.told
    fixture = told.fixture_for(stream.reads.framing)
    heads = heads if heads is not None else [()] * len(datas)
    served: Messages
    framed = fixture.framed
    if framed is not None:  # its SDK reads the headers too
        served = framed.served(list(zip(names, datas, heads, strict=True)))
        literal = framed.literal(served)

        def given() -> list[Any]:
            assert framed is not None
            return framed.events(served)

    else:
        pairs = fixture.served(list(zip(names, datas, strict=True)))
        served = [(name, data, ()) for name, data in pairs]
        literal = fixture.literal(pairs)

        def given() -> list[Any]:
            return fixture.events(pairs)

    engine = told.engine(1, tools)
    fed = [
        Frame(n, data, parse_payload(data), event=name, headers=head)
        for n, (name, data, head) in enumerate(served, 1)
    ]
    for frame in fed:
        engine.feed(frame)
    result = engine.finish(expect_done=False)
    expected = [fixture.expected(c) for c in result.tool_calls]
    kinds = sorted({x.kind for x in result.anomalies if x.severity != "info"})
    story = "What it shows: " + (", ".join(kinds) if kinds else "no warning or error") + "."
    sdk = result.strategies.get(told.sdk)
    if isinstance(sdk, Unmodeled) and told.sdk_version() is not None:
        sdk = told.real_sdk(fed, tools, None)
    if isinstance(sdk, StrategyError):
        said = visible(sdk.error.splitlines()[0] if sdk.error else "")[:100]
        said = said.replace("\\", "/").replace('"', "'")  # (it goes in a docstring)
        if fixture.helper is None:  # the SDK the test reads through raises on it
            story += (
                f"\nNOTE: the SDK raises on these frames (at frame {sdk.frame}: {said}); the test"
                "\nfails there, as a client built on it does."
            )
        else:  # only its stream helper does, which the test does not read through
            note = (
                f"NOTE: the SDK's stream helper, {fixture.helper} (inspect's {told.sdk}), "
                f"raises on these frames (at frame {sdk.frame}: {said}), as a client built on "
                "it does. This test reads the frames without it, so it does not fail there."
            )
            story += "\n" + textwrap.fill(note, 88, break_on_hyphens=False)
    scope: dict = {}
    exec(fixture.reference(), scope)
    try:  # (the events it is given are read here: a value nested past Python's limit too)
        mine = scope["accumulate"](given())
    except Exception:  # it raises on this stream's shapes: so would the exported test
        mine = None
    if mine != expected:  # never claim a green test that is not
        story += (
            "\nNOTE: the small `accumulate` below reads this stream differently from streamscope's"
            "\nrobust reading (see `streamscope inspect` on the source); the test fails until the"
            "\naccumulator you put in its place assembles EXPECTED."
        )
    recorded = stream.source.recorded
    where = f" (exchange {stream.exchange.number}" if recorded else " ("
    where += f"{', ' if recorded else ''}frames {a}-{b}{', minimised' if minimal else ''})"
    too_deep = ValueError(
        "the assembled calls nest too deeply to be written as a Python literal; "
        "export this stream as --format sse, chunks or recording"
    )
    try:
        written = pprint.pformat(expected, width=96, sort_dicts=False)
        module = fixture.template.format(
            version=__version__,
            source=in_docstring(stream.source.path),
            where=where,
            story=story,
            frames=literal,
            expected=written,
            reference=fixture.reference(),
        )
        compile(module, "<exported pytest module>", "exec")  # Python's parser stops at ~200 levels
        # a value with no literal (inf, nan) would make the module fail when it is run
        same = ast.literal_eval(written) == expected
    except (RecursionError, SyntaxError, MemoryError):
        raise too_deep from None
    if not same:
        raise ValueError(
            "the assembled calls hold a value with no Python literal (inf or nan); "
            "export this stream as --format sse, chunks or recording"
        )
    return module
