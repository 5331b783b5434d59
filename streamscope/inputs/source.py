"""One door for every input: `open_input(path)` gives a `Source`.

A Source knows its kind (recording, HAR file, SSE body, chunk log), the notes its
sniffing made (a byte order mark), and its exchanges: each one's request, response head, end, and its
body as reads that decode to frames with byte offsets and times. What a face needs is
read lazily: `inspect` walks a recording once in file order (`records`), the replay,
`export` and playback index it for random access (`exchange`).

Every line that cannot be read is a one-line RecordingError naming the file, the line
and the byte; field types are checked once, here (recording/format.py). A face chooses:
stop (inspect, export, serve) or open what can be read (replay, `tolerant=True`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..core.frames import Frame
from ..core.record import record
from ..dialects import (
    answered_facts,
    claimant,
    dialect,
    look_alike,
    of_frames,
    path_of,
    request_facts,
    streams_in,
)
from ..dialects.mismatch import DialectCheck
from ..framing import of_response
from ..recording.format import Chunk, End, Header, RecordingError, Request, Response, Stopped
from ..recording.mask import Secrets, argv_credentials
from ..recording.reader import Progress, RecordingIndex, iter_raw
from .encoding import DecodedReads, content_codings, read_request
from .masking import FileMask, MaskedReads, mask_frames
from .notes import CASSETTE_TIMING, HAR_TIMING
from .reads import BlockReads, ExchangeReads, LineReads, Reads, record_at
from .session import Session, SessionFacts, facts_of, read_session
from .sniff import (
    CASSETTE,
    CASSETTE_JSON,
    CHUNKS,
    FRAMING_OF,
    HAR,
    KIND_WORDS,
    RECORDED,
    RECORDING,
    sniff,
)

if TYPE_CHECKING:
    from ..recording.ahead import Ahead
    from .har import Har

WEBSOCKET = "websocket"  # the framing of a session (framing/__init__.py)


@record(slots=True)
class ExchangeInfo:
    """What the request, response and end lines say about one exchange (not its frames)."""

    exchange: int
    method: str = ""
    url: str = ""
    model: str | None = None
    status: int | None = None
    stream: bool = False
    start_ns: int = 0
    end_ns: int | None = None
    end_reason: str | None = None
    tools: list[object] | None = None  # the request's, as its JSON body gives them
    response_format: object = None
    end_error: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)  # the response's
    body: bytearray | None = None  # the start of a non-stream response body
    # The tool-call dialect the request speaks (None: it does not tell; the stream's first
    # events will), see streamscope.dialects.
    dialect: str | None = None
    request_dialect: str | None = None  # ... as its request told it (None: it did not)
    masked: int = 0  # values the recorder masked in this exchange (secrets)
    redacted: int = 0  # request body values --redact-json replaced
    # The framing its request asks its stream in (its dialect knows: None, no stream),
    # and the framing its body streams in, told by the response (streamscope.framing;
    # None: the body is no stream).
    asked_framing: str | None = None
    framing: str | None = None
    session: SessionFacts | None = None  # a WebSocket session's, once its messages are read
    # when its body's last read arrived (a recording's last chunk line; None: none yet):
    # the stream's end, as the tools' run time counts it (core/results.py)
    last_ns: int | None = None
    # why its request body cannot be decoded as its Content-Encoding says ("": it can)
    undecodable: str = ""

    def saw_request(self, request: Request) -> object:
        """Take the request's facts; returns its parsed JSON body (None if not JSON)."""
        self.method, self.url, self.start_ns = request.method, request.url, request.t_ns
        self.masked += request.masked
        self.redacted += request.redacted
        readable = read_request(request)  # its Content-Encoding undone
        self.undecodable = readable.describe()
        body = readable.json()
        told = claimant(request.url, body) or look_alike(body)
        self.dialect = self.request_dialect = None if told is None else told.name
        # as the dialect reads its request
        facts = request_facts(told, request.url, body, request.headers)
        self.model, self.tools = facts.model, facts.tools
        self.stream = facts.stream is True
        self.response_format = facts.response_format
        self.asked_framing = streams_in(self.dialect, request.url, body)
        return body

    def dialect_check(self) -> DialectCheck | None:
        """The look at its stream's events that says when they are another dialect's than
        the one its request names (`dialect-mismatch`); None: its request names none."""
        if self.request_dialect is None:
            return None
        request = f"{self.method} {path_of(self.url)}".strip()
        return DialectCheck(dialect(self.request_dialect), request, self.exchange)

    def saw_response(self, response: Response) -> None:
        """Take the status, and the framing the body streams in, if it is a stream (its
        content type, and what the request asked for)."""
        self.status, self.headers = response.status, response.headers
        told = None if self.request_dialect is None else dialect(self.request_dialect)
        self.response_format = answered_facts(told, self.response_format, response.headers)
        self.masked += response.masked
        typed = any(name.lower() == "content-type" for name, _ in response.headers)
        asked = self.asked_framing if typed or self.stream else None
        self.framing = of_response(response.status, response.headers, asked)
        if typed or self.framing is not None:
            self.stream = self.framing is not None

    def saw_end(self, end: End) -> None:
        self.end_ns, self.end_reason, self.end_error = end.t_ns, end.reason, end.error
        self.masked += end.masked

    @property
    def holds_chunk_log(self) -> bool:
        """Is its body a chunk log: JSON lines of a dialect that streams none (what
        `export --format recording` writes of a chunk log)? It is read as a saved chunk
        log is: its events unnamed, its last line its end (a chunk log holds no end
        marker). Its dialect is the one told so far (None: Chat Completions)."""
        return self.framing == FRAMING_OF[CHUNKS] and (
            FRAMING_OF[CHUNKS] not in dialect(self.dialect).framings
        )


@record(slots=True)
class Exchange:
    """One exchange, indexed: its lines as records and its body as reads: `wire` as they
    arrived (what playback serves), `reads` as the client read them (its Content-Encoding
    undone: what every analysis reads)."""

    number: int
    info: ExchangeInfo
    request: Request | None
    response: Response | None
    end: End | None
    wire: Reads
    _decoded: DecodedReads | None = None
    index: RecordingIndex | None = None  # a recording's (a session reads its messages there)
    _session: Session | None = None
    # the credentials its reader masks in it (inputs/masking.py; None: none to mask):
    # what a face that reads its lines itself (a session's frames) masks them with
    secrets: Secrets | None = None

    @property
    def reads(self) -> Reads:
        if self._decoded is not None:
            return self._decoded
        codings = content_codings(self.response.headers) if self.response is not None else []
        if not codings:
            return self.wire
        if self._decoded is None:  # (a --follow'd response line may come after the chunks)
            self._decoded = DecodedReads(self.wire, codings)
        return self._decoded

    def frames(self) -> Iterator[Frame]:
        return self.reads.frames()

    @property
    def body_masked(self) -> int:
        """Values its reader masked in its body (inputs/masking.py; 0: none, or nothing
        to mask)."""
        return self.wire.masked if isinstance(self.wire, MaskedReads) else 0

    def session(self) -> Session | None:
        """A WebSocket session's messages and turns (None: the exchange is no session)."""
        if self._session is None and self.index is not None and self.info.framing == WEBSOCKET:
            lines = list(self.index.messages(self.number))
            if self.secrets is not None:  # (masking.py)
                lines, _ = mask_frames(self.secrets, lines)
            self._session = read_session(self.info.dialect, lines, self.info.start_ns)
            self.info.session = facts_of(self._session.messages)
            self.info.dialect = self._session.dialect
        return self._session

    def dialect(self) -> str | None:
        """The stream's dialect: told by its request, else by its first events."""
        info = self.info
        if info.dialect is None and info.stream:
            info.dialect = of_frames(self.reads.frames())
        return info.dialect


class Source:
    """An opened input. Close it (or use `with`) when done with random access."""

    def __init__(
        self,
        path: str,
        kind: str,
        notes: list[str],
        tolerant: bool,
        check: bool,
        codings: list[str] | None = None,
    ) -> None:
        self.path = path
        self.kind = kind
        self.codings = codings or []  # how a saved stream's file is compressed
        self.notes = notes
        self.tolerant = tolerant
        self.check = check
        self._index: RecordingIndex | None = None
        self.ahead: Ahead | None = None  # the index scanned in a child process (replay)
        self._stream: Exchange | None = None  # an SSE body's or chunk log's one exchange
        self._exchanges: dict[int, Exchange] = {}  # a recording's, as opened
        self._lock = threading.RLock()  # faces may open exchanges from several threads
        self.header: Header | None = None
        self.stopped_at_scan: Stopped | None = None  # set by a pass of records()
        self.scan_errors: list[RecordingError] = []  # lines a tolerant records() skipped
        self.har: Har | None = None
        # the credentials the file holds, masked in everything read of it (masking.py)
        self.known: list[str] = []
        if kind == RECORDING:
            # the header is read (and checked) now: a bad one fails before any face starts
            header = iter_raw(path).header
            self.known = argv_credentials(header.argv)
            self.header = FileMask().header(header)
            self.notes = notes + (self.header.notes or [])  # (one exported from a HAR)
        elif kind == HAR:  # read whole now: a bad one fails here
            from .har import read_har

            self.har = read_har(path)
        elif kind in (CASSETTE, CASSETTE_JSON):
            from .cassette import read_cassette

            self.har = read_cassette(path, kind == CASSETTE)
        if self.har is not None:
            self.notes = notes + self.har.notes
            self.known = [s for x in self.har.exchanges for s in x.secrets]
        self._mask = FileMask(self.known)

    @property
    def approximate_times(self) -> bool:
        """Its times were spread over a HAR entry's receive time, or not recorded at all
        (a cassette's), not taken per read (or a recording exported from one of those)."""
        return HAR_TIMING in self.notes or CASSETTE_TIMING in self.notes

    @property
    def untimed(self) -> bool:
        """It holds no times at all (a cassette, or a recording exported from one): every
        read is at its request's time."""
        return CASSETTE_TIMING in self.notes

    @property
    def recorded(self) -> bool:
        """The input holds exchanges with requests and responses (a recording, a HAR),
        not one bare stream."""
        return self.kind in RECORDED

    # -- random access -------------------------------------------------------------

    def index(self, progress: Progress | None = None) -> RecordingIndex:
        """The recording's line index (built on first use; `progress` reports the scan)."""
        with self._lock:
            if self._index is None and self.ahead is not None:
                self._index = self.ahead.index(progress, tolerant=self.tolerant, check=self.check)
            if self._index is None:
                self._index = RecordingIndex.open(
                    self.path, progress, check=self.check, tolerant=self.tolerant
                )
            return self._index

    def refresh(self) -> bool:
        """A recording being written: index the lines appended since (only the new bytes).
        True when there were any."""
        with self._lock:
            if self.kind != RECORDING or self._index is None:
                return False
            index = self._index
            grew = index.refresh() > 0
            if grew:  # an exchange opened before may have new lines: only those are read
                for ex in self._exchanges.values():
                    self._catch_up(index, ex)
            return grew

    def _catch_up(self, index: RecordingIndex, ex: Exchange) -> None:
        """Read the head lines an exchange does not have yet (all of them when it is
        opened; its chunks are read through its reads, which see the index grow), masked
        (masking.py): an exchange with credentials to mask has its reads masked too."""
        lines, info, mask = index.exchange(ex.number), ex.info, self._mask
        if ex.request is None and lines.request is not None:
            ex.request = mask.request(record_at(index, lines.request, Request))
            info.saw_request(ex.request)
            ex.secrets = mask.secrets(ex.number)
            if ex.secrets is not None:
                ex.wire = MaskedReads(ex.wire, mask, ex.number, [])
        if ex.response is None and lines.response is not None:
            response = record_at(index, lines.response, Response)
            if isinstance(ex.wire, MaskedReads):  # read decoded, if compressed
                ex.wire.codings = content_codings(response.headers)
            ex.response = mask.response(response)
            info.saw_response(ex.response)
            ex.wire.framing = info.framing
        if ex.end is None and lines.end is not None:
            end = record_at(index, lines.end, End)
            ex.end = mask.end(end, len(ex.wire) and ex.body_masked)  # (its body is read)
            info.saw_end(ex.end)

    @property
    def errors(self) -> list[RecordingError]:
        """Lines a tolerant source skipped (known once indexed)."""
        return self._index.errors if self._index is not None else []

    @property
    def stopped_at(self) -> Stopped | None:
        return self._index.stopped_at if self._index is not None else None

    def numbers(self, progress: Progress | None = None) -> list[int]:
        """The exchange numbers, in order (a stream file has exchange 1 only)."""
        if self.har is not None:
            return list(range(1, len(self.har.exchanges) + 1))
        return self.index(progress).exchanges() if self.kind == RECORDING else [1]

    def chunk_log(self, info: ExchangeInfo) -> bool:
        """Is the stream of the exchange `info` tells of read as a chunk log: a saved one,
        or one it holds (ExchangeInfo.holds_chunk_log)?"""
        return self.kind == CHUNKS or info.holds_chunk_log

    def infos(self, progress: Progress | None = None) -> list[ExchangeInfo]:
        return [self.exchange(n, progress).info for n in self.numbers(progress)]

    def exchange(self, number: int, progress: Progress | None = None) -> Exchange:
        """Exchange `number`; RecordingError when there is none (naming those there are)."""
        if self.har is not None:
            return self._har_exchange(self.har, number)
        if self.kind != RECORDING:
            if number != 1:
                raise RecordingError(
                    f"{self.path}: {KIND_WORDS[self.kind]} holds one stream (exchange 1), not {number}",
                    self.path,
                )
            with self._lock:
                if self._stream is None:
                    framing = FRAMING_OF[self.kind]
                    reads: Reads = (
                        LineReads(self.path)
                        if self.kind == CHUNKS and not self.codings
                        else BlockReads(self.path, framing=framing)
                    )
                    info = ExchangeInfo(1, stream=True, framing=framing)
                    self._stream = Exchange(1, info, None, None, None, reads)
                    if self.codings:  # a compressed file: read as its body decompressed
                        self._stream._decoded = DecodedReads(reads, self.codings)
                return self._stream
        index = self.index(progress)
        with self._lock:
            known = self._exchanges.get(number)
        if known is not None:
            return known
        try:
            index.exchange(number)
        except KeyError:
            raise RecordingError(
                f"{self.path}: there is no exchange {number} ({describe_numbers(index.exchanges())})",
                self.path,
            ) from None
        reads = ExchangeReads(index, number)
        ex = Exchange(number, ExchangeInfo(number), None, None, None, reads, None, index)
        self._catch_up(index, ex)  # its head lines, as --follow reads those that come later
        with self._lock:  # request bodies are parsed once, whichever face asks
            return self._exchanges.setdefault(number, ex)

    def _har_exchange(self, har: Har, number: int) -> Exchange:
        numbers = self.numbers()
        if number not in numbers:
            raise RecordingError(
                f"{self.path}: there is no exchange {number} ({describe_numbers(numbers)})",
                self.path,
            )
        x, mask = har.exchanges[number - 1], self._mask
        request, response = mask.request(x.request), mask.response(x.response)
        codings = content_codings(x.response.headers)
        from .har import MemoryReads

        reads = MaskedReads(MemoryReads(x.reads), mask, number, codings)
        end = mask.end(x.end, len(reads) and reads.masked)
        info = ExchangeInfo(number)
        info.saw_request(request)
        info.saw_response(response)
        info.saw_end(end)
        reads.framing = info.framing
        out = Exchange(number, info, request, response, end, reads)
        out.secrets = mask.secrets(number)
        return out

    # -- one pass in file order ------------------------------------------------------

    def records(self, progress: Progress | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """A recording's lines in file order as checked dicts (exchanges may interleave);
        a HAR's exchanges as the lines a recording of them would hold.

        Then `stopped_at_scan` says where a cut-off recording stopped.
        """
        mask = FileMask(self.known)  # (learnt again, in file order)
        if self.har is not None:
            yield from mask.lines(har_records(self.har))
            return
        reader = iter_raw(self.path, progress, self.tolerant)
        self.stopped_at_scan = None
        yield from mask.lines(reader)
        self.stopped_at_scan = reader.stopped_at
        self.scan_errors = reader.errors  # lines a tolerant source skipped

    def close(self) -> None:
        """Close the files; they are opened again if the source is used again."""
        with self._lock:
            if self.ahead is not None:  # (a scan never asked for is stopped)
                self.ahead.close()
                self.ahead = None
            if self._stream is not None:
                (self._stream._decoded or self._stream.wire).close()
                self._stream = None
            if self._index is not None:
                self._index.close()
                self._index = None
            for ex in self._exchanges.values():
                if ex._decoded is not None:  # its spill of decoded reads
                    ex._decoded.close()
            self._exchanges.clear()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def har_records(har: Har) -> Iterator[tuple[int, dict[str, Any]]]:
    """(0, line) for every line a recording of the HAR's exchanges would hold."""
    for x in har.exchanges:
        for head in (x.request.to_json(), x.response.to_json()):
            head["headers"] = [list(pair) for pair in head["headers"]]  # as JSON reads them
            yield 0, head
        t0 = x.request.t_ns
        for data, t in x.reads:
            yield 0, Chunk.of(x.request.exchange, t0 + t, data).to_json()
        yield 0, x.end.to_json()


def describe_numbers(numbers: list[int]) -> str:
    """ "exchanges: 1 to 12", "exchanges: 1, 3", "the file has no exchanges"."""
    if not numbers:
        return "the file has no exchanges"
    if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 2:
        return f"exchanges: {numbers[0]} to {numbers[-1]}"
    shown = ", ".join(map(str, numbers[:10])) + (" ..." if len(numbers) > 10 else "")
    return f"exchange{'s' if len(numbers) > 1 else ''}: {shown}"


def open_input(
    path: str | os.PathLike[str], *, tolerant: bool = False, check: bool = False
) -> Source:
    """Open any input streamscope reads; RecordingError (one line) when it cannot.

    `tolerant`: skip lines that cannot be read (kept in `Source.errors`) instead of failing.
    `check`: validate every line when indexing, not only when it is read (for playback,
    which must not fail half-way through a response).
    """
    name = os.fspath(path)
    sniffed = sniff(name)
    try:
        return Source(name, sniffed.kind, sniffed.notes, tolerant, check, sniffed.codings)
    except OSError as e:
        raise RecordingError(f"{name}: {e.strerror or e}", name) from None
