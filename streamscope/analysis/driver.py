"""Read any input, run the engine over every stream, check the round-trip contract.

The one driver behind `inspect`, `replay` and `export`: recordings are read in one
sequential pass (exchanges may interleave), each stream's engine is dropped as soon as
its `end` line arrives, so memory stays flat on a 1M-frame file.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict, field
from typing import TYPE_CHECKING

import orjson

from ..core import jsonio
from ..core import results as call_results
from ..core.calls import Call, Unmodeled
from ..core.contract import ContractResult, Conversation, Finding, check
from ..core.engine import UNFINISHED, Engine, StreamResult
from ..core.frames import Frame
from ..core.history import Entry, Tool, run_at
from ..core.record import record
from ..core.results import APPROXIMATE, RECORDED, Answer, CallResult, ClientMessage
from ..core.verdict import exchange_failure
from ..dialects import (
    DEFAULT,
    LOOK,
    dialect,
    is_foreign,
    of_frame,
    of_session,
    open_engine,
    request_facts,
    session_turns,
)
from ..dialects.base import Turn
from ..dialects.mismatch import DialectCheck
from ..framing import new as new_framing
from ..framing.session import Reassembler, WsMessage
from ..inputs import CHUNKS, ExchangeInfo, Source, describe_numbers, open_input
from ..inputs.encoding import Inflow, content_codings, request_json
from ..inputs.masking import FileMask
from ..inputs.session import facts_of, turn_end
from ..inputs.sniff import CASSETTE, CASSETTE_JSON
from ..recording.format import End, Message, RecordingError, Request, Response, bytes_of
from ..recording.reader import RecordingReader
from ..text import cut, one_line

WEBSOCKET = "websocket"

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..dialects.base import EngineOptions


@record(slots=True)
class Failure:
    """An exchange that is not a stream and did not succeed: an HTTP error, a broken connection."""

    exchange: int
    status: int | None
    ended: str | None
    message: str

    def to_json(self) -> dict:
        return {
            "exchange": self.exchange,
            "status": self.status,
            "ended": self.ended,
            "message": self.message,
        }


@record(slots=True)
class Analysis:
    source: str
    format: str
    streams: list[StreamResult]
    contract: list[Finding]
    exchanges: list[ExchangeInfo] = field(default_factory=list)
    stopped: dict | None = None  # where a cut-off recording stopped
    compared: int = 0  # streams whose calls a later request carried back (contract checked)
    failures: list[Failure] = field(default_factory=list)  # non-stream exchanges that failed
    notes: list[str] = field(default_factory=list)  # facts about the file (a byte order mark)
    skipped: list[RecordingError] = field(default_factory=list)  # lines a tolerant read skipped
    masked: int = 0  # values the recorder masked (secrets), as its lines count them
    redacted: int = 0  # request body values --redact-json replaced, as its lines count them
    # each exchange's conversation, named by its first exchange (the contract's pairing)
    conversations: dict[int, int] = field(default_factory=dict)
    # a stream with calls -> the request that continues it: each call's result, the
    # tools' run time (core/results.py)
    answers: dict[int, Answer] = field(default_factory=dict)
    # ... and a WebSocket session's response: its client messages' results, by
    # (exchange, turn)
    turn_answers: dict[tuple[int, int], Answer] = field(default_factory=dict)
    # each request's tools, as its dialect reads them (nested ones too), by exchange
    tools: dict[int, list[Tool]] = field(default_factory=dict)
    # ... and the tools in force for each response of a session (turn_tools), by
    # (exchange, turn)
    turn_tools: dict[tuple[int, int], list[Tool] | None] = field(default_factory=dict)

    def tools_of(self, s: StreamResult) -> list[Tool] | None:
        """The tools a stream's request declares: its exchange's, or a session
        response's (None: no request is known)."""
        if s.turn is None:
            return self.tools.get(s.exchange)
        return self.turn_tools.get((s.exchange, s.turn))

    def answer_of(self, s: StreamResult) -> Answer | None:
        """What answers a stream's calls: a request, or a session's client messages."""
        if s.turn is None:
            return self.answers.get(s.exchange)
        return self.turn_answers.get((s.exchange, s.turn))


class _Opening:
    """A stream's engine, opened once its dialect is told: by the request, else by its
    first frames, held until one tells (at most LOOK of them)."""

    __slots__ = ("info", "engine", "held", "foreign", "options", "check", "chunk_log")

    def __init__(self, info: ExchangeInfo, **options: Unpack[EngineOptions]) -> None:
        self.info = info
        self.options = options
        self.engine: Engine | None = None
        self.chunk_log = False  # is the stream read as a chunk log (once opened)
        self.held: list[Frame] = []
        self.foreign = 0  # frames held that could be no Chat Completions chunk (is_foreign)
        # whether the events are the dialect the request names (dialect-mismatch), while
        # its first frames are looked at, or all of them when they are another's
        self.check: DialectCheck | None = None
        if info.dialect is not None:
            self.opened()
            self.check = info.dialect_check()

    def opened(self) -> Engine:
        """The engine (opened now in the dialect told so far, when it is not yet)."""
        if self.engine is None:
            info = self.info
            options = self.options
            if info.holds_chunk_log:  # (a recording's chunk log: read as a saved one is)
                options = {**options, "chunk_log": True}
            self.chunk_log = options.get("chunk_log", False)
            engine = self.engine = open_engine(
                info.dialect, info.exchange, info.tools, info.response_format, **options
            )
            for frame in self.held:
                engine.feed(frame)
            self.held = []
        return self.engine

    def hold(self, frame: Frame) -> None:
        """A frame read before the dialect is known."""
        self.held.append(frame)
        told = of_frame(frame, self.foreign)
        self.foreign += is_foreign(frame)
        if told is not None or len(self.held) >= LOOK:
            self.info.dialect = told
            self.opened()

    @property
    def frames(self) -> int:
        return self.engine.frames if self.engine is not None else len(self.held)


class _Live(_Opening):
    """A recording's stream being read: its framing, its Content-Encoding undone (if it
    has one), and its engine once opened."""

    __slots__ = ("decoder", "inflow")

    def __init__(self, info: ExchangeInfo) -> None:
        super().__init__(info)
        self.decoder = new_framing(info.framing)
        codings = content_codings(info.headers)
        self.inflow = Inflow(codings) if codings else None

    def feed(self, frames: list[Frame]) -> None:
        engine = self.engine
        if engine is not None:
            for frame in frames:
                engine.feed(frame)
            check = self.check
            if check is not None:
                for frame in frames:
                    if not check.feed(frame):
                        self.check = None
                        break
            return
        for k, frame in enumerate(frames):
            self.hold(frame)
            if self.engine is not None:  # told by this frame: the read's rest goes to it
                for rest in frames[k + 1 :]:
                    self.engine.feed(rest)
                return

    def finish(self, end_reason: str, end_error: str | None, status: int | None) -> StreamResult:
        self.feed(self.decoder.flush())
        truncation = self.decoder.finish()
        if self.inflow is not None:
            truncation = self.inflow.finish() or truncation
        engine = self.opened()
        if self.check is not None:
            self.check.file(engine.log)
        # (a chunk log holds no end marker)
        result = engine.finish(
            truncation, end_reason, end_error, status, expect_done=not self.chunk_log
        )
        result.framing = self.info.framing or result.framing
        return result


def analyze(
    path: str | os.PathLike[str], exchange: int | None = None, tolerant: bool = False
) -> Analysis:
    """Analyse every stream of `path` (or only `exchange`). Raises RecordingError, unless
    `tolerant`: then a recording's unreadable lines are skipped and listed in `skipped`."""
    with open_input(path, tolerant=tolerant) as source:
        if source.recorded:  # a recording or a HAR: exchanges, in one pass
            result = _recording(source, exchange)
        else:
            stream = _one_stream(source, 1 if exchange is None else exchange)
            result = Analysis(source.path, source.kind, [stream], [], [source.exchange(1).info])
        result.notes = list(source.notes)
        if source.kind in (CASSETTE, CASSETTE_JSON) and _all_empty(result.streams):
            result.notes.append(EMPTY_CASSETTE)
        header = source.header
        result.masked = (header.masked if header is not None else 0) + sum(
            i.masked for i in result.exchanges
        )
        result.redacted = sum(i.redacted for i in result.exchanges)
        result.skipped = list(source.scan_errors)
        _sdk_fallback(result, source)
    return result


# A cassette recorder may keep a streamed body it never saw whole as nothing, or as the
# `[DONE]` line alone: the cassette is then named, not read as streams that said nothing.
EMPTY_CASSETTE = (
    "every stream in this cassette is empty or holds only [DONE]: the cassette kept none "
    "of their events, so nothing of what was streamed can be checked"
)


def _all_empty(streams: list[StreamResult]) -> bool:
    """Every stream kept no event: no frame, or Chat Completions' `[DONE]` alone (a stream
    of events that built nothing, an error's or a tool server's, is no empty one)."""
    return bool(streams) and all(
        s.frames == 0 or (s.frames == 1 and s.ended == "done" and s.dialect == DEFAULT.name)
        for s in streams
    )


def _one_stream(source: Source, number: int) -> StreamResult:
    """A saved SSE body or chunk log: its one stream."""
    ex = source.exchange(number)
    reads = ex.reads
    # the dialect told by the first frames as they are read (each decoded once)
    opening = _Opening(ex.info, chunk_log=source.kind == CHUNKS)
    try:
        frames = reads.frames()
        for frame in frames:
            opening.hold(frame)
            if opening.engine is not None:
                break
        engine = opening.opened()
        for frame in frames:
            engine.feed(frame)
    except OSError as e:
        raise RecordingError(f"{source.path}: {e.strerror or e}", source.path) from None
    result = engine.finish(reads.truncation, expect_done=not opening.chunk_log)
    result.framing = ex.info.framing or result.framing
    return result


class _Session:
    """A WebSocket session being read: its frames reassembled into messages as they come;
    split into turns (each a stream) once it ended."""

    __slots__ = ("info", "reassembler", "messages", "last_ns")

    def __init__(self, info: ExchangeInfo) -> None:
        self.info = info
        self.reassembler = Reassembler()
        self.messages: list[WsMessage] = []
        self.last_ns = info.start_ns

    def feed(self, m: Message) -> None:
        self.last_ns = m.t_ns
        self.info.masked += m.masked  # (each frame counts what was masked in it)
        self.messages += self.reassembler.feed(
            m.sender, m.opcode, m.fin, m.data_bytes, m.t_ns, m.compressed
        )

    def finish(
        self, end_reason: str, end_error: str | None, status: int | None
    ) -> tuple[list[Turn], list[StreamResult], dict[int, Answer]]:
        """Its turns and their streams, read in the dialect its handshake told, and what
        its client messages sent for each response's calls, by turn."""
        self.messages += self.reassembler.finish(self.last_ns)
        info = self.info
        info.session = facts_of(self.messages)
        if info.dialect is None:  # a handshake no dialect claims: its messages tell
            info.dialect = of_session(self.messages, info.start_ns)
        turns = session_turns(dialect(info.dialect), self.messages, info.start_ns)
        results = read_turns(info, turns, end_reason, end_error, status)
        return turns, results, session_answers(info, self.messages, turns, results)


def _began(t: Turn) -> int | None:
    """When a turn's first server message came (None: it has none)."""
    return t.start_ns + (t.frames[0].time_ns or 0) if t.frames else None


def turn_tools(told: str | None, t: Turn) -> list[Tool] | None:
    """The tools in force for a session's response: its request's own (Codex's
    response.create `tools`, and its `additional_tools` input items' namespaces), else
    those the session declared beside it (Turn.tools: Realtime's session.update), as its
    dialect reads them; None: no client message opened the response, none declared."""
    d = dialect(told)
    history = d.history(t.request)
    if history is not None and history.tools:
        return history.tools
    if t.tools is not None and d.session_tools is not None:
        return d.session_tools(t.tools)
    return [] if t.request is not None else None  # (None: no client message opened it)


def session_answers(
    info: ExchangeInfo, messages: list[WsMessage], turns: list[Turn], results: list[StreamResult]
) -> dict[int, Answer]:
    """Each response with calls whose results a client message sends: its answer
    (core/results.session_answer), by turn number."""
    read = dialect(info.dialect).session_results
    if read is None:
        return {}
    # the turn a client message opens: the one holding it among its client messages
    # (Realtime's), or the one it began (Codex's), whose request it is
    held = {id(c): t for t in turns for c in t.client}
    starts: dict[int, list[Turn]] = {}
    for t in turns:
        starts.setdefault(t.start_ns, []).append(t)
    sent: list[ClientMessage] = []
    for n, m in enumerate(messages, 1):
        if m.sender != "client" or m.opcode != "text":
            continue
        try:
            body = jsonio.loads(m.data)
        except orjson.JSONDecodeError:
            continue
        carried = read(body)
        if carried is None:
            continue
        c = ClientMessage(n, m.t_ns, carried)
        if carried.opens:
            mine = [held.get(id(m)), *starts.get(m.t_ns, ())]
            c.turn = next((t.turn for t in mine if t is not None and t.request == body), None)
        sent.append(c)
    following: int | None = None  # a message that opens none: the next one's response
    for c in reversed(sent):
        if c.carried.opens:
            following = c.turn
        else:
            c.turn = following
    out: dict[int, Answer] = {}
    for t, result in zip(turns, results, strict=True):
        first = _began(t)
        if not result.tool_calls or first is None:
            continue
        last = t.start_ns + (t.frames[-1].time_ns or 0)
        answer = call_results.session_answer(result.tool_calls, first, last, sent, info.exchange)
        if answer is not None:
            out[t.turn] = answer
    return out


def read_turns(
    info: ExchangeInfo,
    turns: list[Turn],
    end_reason: str | None,
    end_error: str | None,
    status: int | None,
) -> list[StreamResult]:
    """Each turn of a session (exchange `info`, in the dialect it tells) read as a
    stream: the driver's reading, and export's of the sessions it writes."""
    results = []
    for i, t in enumerate(turns):
        last = i == len(turns) - 1
        results.append(read_turn(info, t, last, end_reason, end_error, status))
    return results


def read_turn(
    info: ExchangeInfo,
    t: Turn,
    last: bool,
    end_reason: str | None,
    end_error: str | None,
    status: int | None,
    **options: Unpack[EngineOptions],
) -> StreamResult:
    """One turn as a stream: the tools in force (the turn's, its request's, the
    handshake's), its frames through the dialect's engine, ended as `turn_end` says; the
    real SDK run on the turn's frames where its emulation declines their shape (the
    exchange's frames, which `_sdk_fallback` reads, are not a session's turns)."""
    told = dialect(info.dialect)
    facts = request_facts(told, info.url, t.request)
    if info.model is None:  # the handshake names none: its first turn does
        info.model = facts.model
    tools = t.tools or facts.tools or info.tools
    engine = open_engine(info.dialect, info.exchange, tools, facts.response_format, **options)
    for frame in t.frames:
        engine.feed(frame)
    result = engine.finish(None, **turn_end(t, last, end_reason, end_error, status))
    result.turn, result.framing = t.turn, "websocket"
    if isinstance(result.strategies.get(told.sdk), Unmodeled):
        result.strategies[told.sdk] = told.real_answer(t.frames, tools, facts.response_format)
    return result


class RecordingPass:
    """The one pass over a recording's lines in file order, kept between calls: --follow
    feeds it the lines appended since (no line is read twice)."""

    def __init__(self) -> None:
        self.infos: dict[int, ExchangeInfo] = {}
        self.live: dict[int, _Live] = {}  # streams whose end line has not come yet
        self.streams: dict[int, StreamResult] = {}  # streams that ended
        self.live_sessions: dict[int, _Session] = {}  # WebSocket sessions still open
        # sessions that ended: their turns and each turn's stream
        self.sessions: dict[int, tuple[list[Turn], list[StreamResult]]] = {}
        # what a session's client messages sent for a response's calls, by (exchange, turn)
        self.turn_answers: dict[tuple[int, int], Answer] = {}
        self.bodies: dict[int, Inflow] = {}  # non-stream bodies compressed (read as the client did)
        self.conversations: list[Conversation] = []  # every request's history (pairing)
        # request bodies whose dialect neither their path nor their body told: read in
        # the dialect their stream's events tell (Chat Completions when none does)
        self.untold: dict[int, dict] = {}

    def feed(self, d: dict) -> None:
        """One line of the recording, as `Source.records` gives it."""
        kind = d["type"]
        if kind == "header":
            return
        ex = d["exchange"]
        if kind == "chunk":
            known = self.infos.get(ex)
            if known is not None:
                known.last_ns = d["t_ns"]
            state = self.live.get(ex)
            if state is None:
                info = self.infos.get(ex)
                if info is not None and info.body is not None and len(info.body) < 600:
                    data = bytes_of(d.get("data"), d.get("data_b64"))
                    inflow = self.bodies.get(ex)
                    info.body += data if inflow is None else inflow.feed(data)
                return
            data = bytes_of(d.get("data"), d.get("data_b64"))
            if state.inflow is not None:  # as the client read it
                data = state.inflow.feed(data)
            state.feed(state.decoder.feed(data, d["t_ns"] - state.info.start_ns))
        elif kind == "message":
            session = self.live_sessions.get(ex)
            if session is None:
                if ex in self.sessions:
                    return  # (after its end line: nothing more is read of it)
                info = self.infos.setdefault(ex, ExchangeInfo(ex))
                session = self.live_sessions[ex] = _Session(info)
                self.live.pop(ex, None)
            session.feed(Message.from_json(d))
        elif kind == "request":
            info = self.infos[ex] = ExchangeInfo(ex)
            body = info.saw_request(Request.from_json(d))
            if info.dialect is None and isinstance(body, dict):
                self.untold[ex] = body  # read once its stream tells the dialect
            else:
                self._converse(ex, info.dialect, body)
        elif kind == "response":
            info = self.infos.setdefault(ex, ExchangeInfo(ex))
            info.saw_response(Response.from_json(d))
            if info.framing == WEBSOCKET:
                self.live_sessions[ex] = _Session(info)
            elif info.stream:
                self.live[ex] = _Live(info)
            else:
                info.body = bytearray()
                codings = content_codings(info.headers)
                if codings:
                    self.bodies[ex] = Inflow(codings)
        elif kind == "end":
            info = self.infos.setdefault(ex, ExchangeInfo(ex))
            end = End.from_json(d)
            info.saw_end(end)
            self.bodies.pop(ex, None)
            session = self.live_sessions.pop(ex, None)
            if session is not None:
                self._ended(ex, session.finish(end.reason, end.error, info.status))
            state = self.live.pop(ex, None)
            if state is not None:
                self.streams[ex] = state.finish(end.reason, end.error, info.status)

    def _converse(self, ex: int, told: str | None, body: object) -> None:
        history = dialect(told).history(body)
        if history is not None:  # every one: a later request may continue it
            self.conversations.append(Conversation.of(ex, history))

    def finish_open(self) -> None:
        """The recording stops before these streams ended: finish them as unfinished."""
        for ex, state in self.live.items():
            self.streams[ex] = state.finish(UNFINISHED, None, state.info.status)
        self.live.clear()
        for ex, session in self.live_sessions.items():
            self._ended(ex, session.finish(UNFINISHED, None, session.info.status))
        self.live_sessions.clear()

    def _ended(
        self, ex: int, read: tuple[list[Turn], list[StreamResult], dict[int, Answer]]
    ) -> None:
        turns, results, answers = read
        self.sessions[ex] = turns, results
        self.turn_answers |= {(ex, turn): a for turn, a in answers.items()}

    def all_streams(self) -> list[StreamResult]:
        """Every stream that ended: an exchange's own, and each turn of a session, in
        exchange order."""
        out = [(ex, 0, s) for ex, s in self.streams.items()]
        for ex, (_, results) in self.sessions.items():
            out += [(ex, i + 1, s) for i, s in enumerate(results)]
        return [s for _, _, s in sorted(out, key=lambda e: e[:2])]

    def contract(self, final: bool = True) -> ContractResult:
        """The round-trip contract of the streams that ended and the requests so far
        (`final` False: the recording is still being written, a request's stream may
        still tell its dialect)."""
        for ex, body in list(self.untold.items()):
            info = self.infos[ex]
            if final or info.dialect is not None or info.end_ns is not None:
                del self.untold[ex]  # its stream told the dialect, or never will
                self._converse(ex, info.dialect, body)
        streams = self.streams
        # a successful body may be what a later request continues (pairing counts it)
        bodies = [
            ex
            for ex, info in self.infos.items()
            if not info.stream and info.status is not None and info.status < 400
        ]
        result = check(
            [(ex, streams[ex].tool_calls) for ex in sorted(streams)],
            sorted(self.conversations, key=lambda c: c.exchange),
            {s.response_id: ex for ex, s in streams.items() if s.response_id},
            bodies,
            {ex: info.undecodable for ex, info in self.infos.items() if info.undecodable},
        )
        if self.sessions:
            found, compared = self._session_findings()
            result.findings = sorted(result.findings + found, key=lambda f: f.exchange)
            result.compared += compared
        return result

    def answers(self, contract: ContractResult, source: Source | None = None) -> dict[int, Answer]:
        """Each stream with calls that a request continues: that request, the result it
        sends for each call and how long after the stream's last byte it began. A result
        run the request does not end with is read again from `source` (None: not shown)."""
        approximate = source is not None and source.approximate_times
        untimed = source is not None and source.untimed  # (no gap to tell: unknown)
        by_ex = {c.exchange: c for c in self.conversations}
        wanted: dict[int, tuple[int, int | None]] = {
            ex: (c.exchange, c.end) for ex, c in contract.continued.items()
        }
        for ex, req in contract.by_previous.items():
            wanted.setdefault(ex, (req, None))  # its results come first
        out: dict[int, Answer] = {}
        for ex in sorted(wanted):
            req, end = wanted[ex]
            stream, conv = self.streams.get(ex), by_ex.get(req)
            if stream is None or not stream.tool_calls or conv is None:
                continue
            start = 0 if end is None else end
            if end is None:
                sent = None
            else:
                first = contract.continued[ex].first
                sent = [c for k in conv.call_turns(first, end) for c in conv.calls_at(k)]
            at, run = conv.tail
            if at != start:  # (at == start with no run: the request sends no results yet)
                run = self._run_again(source, req, start)
            answer = Answer(
                req,
                call_results.results(
                    stream.tool_calls, sent, run, req, conv.error_field, conv.words.turn
                ),
            )
            mine, theirs = self.infos.get(ex), self.infos.get(req)
            if mine is not None and theirs is not None:
                last = mine.last_ns if mine.last_ns is not None else mine.end_ns
                if last is not None and not untimed:
                    answer.gap_ns = theirs.start_ns - last
                    answer.timing = APPROXIMATE if approximate else RECORDED
            out[ex] = answer
        return out

    def _run_again(self, source: Source | None, req: int, start: int) -> list[Entry]:
        """The results at entry `start` of request `req`, its body read again."""
        if source is None:
            return []
        try:
            request = source.exchange(req).request
        except RecordingError:
            return []
        history = dialect(self.infos[req].dialect).history(
            request_json(request) if request is not None else None
        )
        return run_at(history.entries(), start) if history is not None else []

    def _session_findings(self) -> tuple[list[Finding], int]:
        """Each session's own contract, over its turns (a response it continues looked
        up in the session, then among every stream of the recording)."""
        responses = {s.response_id: s for s in self.all_streams() if s.response_id}
        out: list[Finding] = []
        compared = 0
        for ex in sorted(self.sessions):
            turns, results = self.sessions[ex]
            check_session = dialect(self.infos[ex].dialect).session_contract
            if check_session is not None:
                found, n = check_session(ex, turns, results, responses)
                out += found
                compared += n
        return out, compared


def _recording(source: Source, only: int | None) -> Analysis:
    name = source.path
    seen = RecordingPass()
    for _, d in source.records():
        seen.feed(d)
    seen.finish_open()
    infos = seen.infos
    if only is not None and only not in infos:
        raise RecordingError(
            f"{name}: there is no exchange {only} ({describe_numbers(sorted(infos))})", name
        )
    streams = seen.all_streams()
    contract = seen.contract()
    findings = contract.findings
    if only is not None:  # every stream was read: the contract of `only` spans exchanges
        streams = [s for s in streams if s.exchange == only]
        findings = [f for f in findings if only in (f.exchange, f.stream)]
    stopped = None
    if source.stopped_at_scan is not None:
        at = source.stopped_at_scan
        stopped = {"line": at.line, "offset": at.offset, "message": at.message}
    exchanges = [infos[k] for k in sorted(infos) if only in (None, k)]
    failures = [f for f in map(_failure, exchanges) if f is not None and only in (None, f.exchange)]
    out = Analysis(
        name, source.kind, streams, findings, exchanges, stopped, contract.compared, failures
    )
    out.conversations = contract.conversation
    out.answers = seen.answers(contract, source)
    out.tools = {c.exchange: c.tools for c in seen.conversations if only in (None, c.exchange)}
    out.turn_answers = {k: a for k, a in seen.turn_answers.items() if only in (None, k[0])}
    out.turn_tools = {
        (ex, t.turn): turn_tools(infos[ex].dialect, t)
        for ex, (turns, _) in seen.sessions.items()
        if only in (None, ex)
        for t in turns
    }
    if only is not None:
        out.answers = {k: v for k, v in out.answers.items() if k == only}
    return out


def _failure(info: ExchangeInfo) -> Failure | None:
    """Why a non-stream exchange failed, or None when it did not."""
    what = exchange_failure(info.stream, info.status, info.end_reason)
    if what is None:
        return None
    body = bytes(info.body or b"").decode("utf-8", "replace").strip()
    body = " ".join(body.split())
    # why it ended is said whole (a reader wraps it); a body (an error page) is only quoted
    detail = " ".join(info.end_error.split()) if info.end_error else cut(body, 200)
    return Failure(
        info.exchange, info.status, info.end_reason, f"{what}: {detail}" if detail else what
    )


def frame_source(path: str, exchange: int = 1) -> Iterator[Frame]:
    """The frames of one stream of `path`, from the start (for tests and tools)."""
    with open_input(path) as source:
        yield from source.exchange(exchange).frames()


def _sdk_fallback(analysis: Analysis, source: Source) -> None:
    """Run the real SDK where its emulation does not model the shape."""
    infos = {i.exchange: i for i in analysis.exchanges}
    for stream in analysis.streams:
        d = dialect(stream.dialect)
        if stream.turn is not None or not isinstance(stream.strategies.get(d.sdk), Unmodeled):
            continue  # (a session's turn: read_turn asked it on the turn's frames)
        info = infos.get(stream.exchange)
        frames = list(source.exchange(stream.exchange).frames())
        stream.strategies[d.sdk] = d.real_answer(
            frames,
            info.tools if info else None,
            info.response_format if info else None,
            source.chunk_log(info) if info else source.kind == CHUNKS,
        )


@record(frozen=True, slots=True)
class Seen:
    """A kind an exchange's stream or request was found with, at the severity it was
    filed with (a client's cut already lowered: see core.anomalies.cut_by_client)."""

    kind: str
    severity: str

    @classmethod
    def from_json(cls, d: dict) -> Seen:
        return cls(d["kind"], d["severity"])


@record(frozen=True, slots=True)
class RequestFinding:
    """A contract finding about this exchange's request, and where in it it points."""

    kind: str
    severity: str
    message: str
    at_message: int | None = None  # the request message's index
    call: object = None  # the call id (contract.about; ["name", name] for one sent with none)
    turn: int | None = None  # in a WebSocket session: the response whose request it is about

    @classmethod
    def of(cls, f: Finding) -> RequestFinding:
        return cls(f.kind, f.severity, f.message, f.at_message, _plain(f.call), f.turn)

    @classmethod
    def from_json(cls, d: dict) -> RequestFinding:
        return cls(
            d["kind"], d["severity"], d["message"], d["at_message"], d["call"], d.get("turn")
        )


@record(frozen=True, slots=True)
class AssembledCall:
    """A call a stream assembled, as the conversation view matches calls sent back."""

    id: object
    name: object

    @classmethod
    def of(cls, c: Call) -> AssembledCall:
        return cls(_plain(c.id), _plain(c.name))

    @classmethod
    def from_json(cls, d: dict) -> AssembledCall:
        return cls(d["id"], d["name"])


@record(frozen=True, slots=True)
class ResultLine:
    """A call's result as the replay shows it: its content on one line (made safe, cut),
    whether it says the tool failed (CallResult.error, error_field), where it is."""

    content: str
    error: object
    error_field: str | None
    where: str  # "message 3", "input item 4"
    error_said: str | None = None  # what the error field said (CallResult.error_said)

    LONG = 500  # characters of content kept (the replay cuts it to its width)

    @classmethod
    def of(cls, r: CallResult) -> ResultLine:
        content = one_line(r.content, cls.LONG)
        return cls(content, _plain(r.error), r.error_field, r.words(), r.error_said)

    @classmethod
    def from_json(cls, d: dict) -> ResultLine:
        return cls(d["content"], d["error"], d["error_field"], d["where"], d.get("error_said"))


@record(slots=True)
class AnswerSummary:
    """The request that continues a stream, for the replay (core/results.Answer)."""

    exchange: int
    gap_ns: int | None
    timing: str
    results: list[ResultLine | None]
    # a session's: its client message, the response it opens or precedes (Answer's)
    message: int | None = None
    turn: int | None = None
    opens: bool = False

    def by(self) -> str:
        """Who sent the results, in words (core/results.sender)."""
        return call_results.sender(self.exchange, self.message, self.turn, self.opens)

    @classmethod
    def of(cls, a: Answer) -> AnswerSummary:
        lines = [ResultLine.of(r) if r is not None else None for r in a.results]
        return cls(a.exchange, a.gap_ns, a.timing, lines, a.message, a.turn, a.opens)

    @classmethod
    def from_json(cls, d: dict) -> AnswerSummary:
        lines = [ResultLine.from_json(r) if r is not None else None for r in d["results"]]
        return cls(
            d["exchange"],
            d["gap_ns"],
            d["timing"],
            lines,
            d.get("message"),
            d.get("turn"),
            d.get("opens", False),
        )


@record(slots=True)
class ExchangeSummary:
    """One line of the exchanges screen's analysis columns, and what the conversation view
    needs from the other exchanges (the calls each stream assembled). Crosses a process
    boundary as JSON (summarize_in_child, FollowingChild): to_json, from_json.

    A WebSocket session's summary is its responses' together (frames, anomalies and calls
    of all, every finding about its requests), and each response's own in `turns`."""

    exchange: int
    stream: bool
    frames: int = 0
    seen: list[Seen] = field(default_factory=list)  # one per anomaly entry, then per finding
    findings: list[RequestFinding] = field(default_factory=list)  # about this request
    calls: list[AssembledCall] = field(default_factory=list)
    response_id: str | None = None  # the response's own id (StreamResult.response_id)
    failure: str | None = None  # why a non-stream exchange failed
    open: bool = False  # --follow: no end line yet (so far, no end-of-stream verdict)
    # the conversation it belongs to, named by its first exchange (the contract's pairing)
    conversation: int | None = None
    session: bool = False  # a WebSocket session: its responses are `turns`
    model: str | None = None  # a session's, as its first response's request names it
    turn: int | None = None  # one response of a session: its number (1-based)
    turns: list[ExchangeSummary] = field(default_factory=list)
    answer: AnswerSummary | None = None  # the request that continues its stream, if any

    @property
    def kinds(self) -> list[str]:
        return [s.kind for s in self.seen]

    def response(self, turn: int | None) -> ExchangeSummary | None:
        """This exchange's stream (`turn` None), or its session's response `turn`."""
        if turn is None:
            return self
        return next((t for t in self.turns if t.turn == turn), None)

    def streams(self) -> list[ExchangeSummary]:
        """Its streams' summaries: a session's responses, else itself."""
        return self.turns if self.session else [self]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> ExchangeSummary:
        return cls(
            d["exchange"],
            d["stream"],
            d["frames"],
            [Seen.from_json(s) for s in d["seen"]],
            [RequestFinding.from_json(f) for f in d["findings"]],
            [AssembledCall.from_json(c) for c in d["calls"]],
            d["response_id"],
            d["failure"],
            d["open"],
            d["conversation"],
            d.get("session", False),
            d.get("model"),
            d.get("turn"),
            [ExchangeSummary.from_json(t) for t in d.get("turns", ())],
            AnswerSummary.from_json(d["answer"]) if d.get("answer") else None,
        )


def _summary(
    info: ExchangeInfo, stream: StreamResult | None, findings: list[Finding], failure: str | None
) -> ExchangeSummary:
    row = ExchangeSummary(info.exchange, stream is not None, failure=failure)
    if stream is not None:
        row.frames = stream.frames
        row.seen = [Seen(x.kind, x.severity) for x in stream.anomalies]
        row.calls = [AssembledCall.of(c) for c in stream.tool_calls]
        row.response_id = stream.response_id
    for f in findings:
        row.seen.append(Seen(f.kind, f.severity))
        row.findings.append(RequestFinding.of(f))
    return row


def _session_summary(
    info: ExchangeInfo,
    results: list[StreamResult],
    findings: list[Finding],
    failure: str | None,
    answers: dict[tuple[int, int], Answer] | None = None,
) -> ExchangeSummary:
    """A WebSocket session's summary: each response's (with the findings about its
    request, and what the client's messages sent for its calls), and all of them
    together."""
    row = _summary(info, None, findings, failure)
    row.stream = row.session = True
    row.model = info.model  # (the handshake names none: the analysis read it in a request)
    for s in results:
        mine = _summary(info, s, [f for f in findings if f.turn == s.turn], None)
        mine.turn = s.turn
        answer = (answers or {}).get((info.exchange, s.turn or 0))
        mine.answer = AnswerSummary.of(answer) if answer is not None else None
        row.turns.append(mine)
    row.frames = sum(t.frames for t in row.turns)
    row.calls = [c for t in row.turns for c in t.calls]
    anomalies = [x for s in results for x in s.anomalies]
    row.seen[:0] = [Seen(x.kind, x.severity) for x in anomalies]  # anomalies, then findings
    return row


def summarize_exchanges(path: str) -> list[ExchangeSummary]:
    """Every exchange's size, anomaly and contract kinds, calls and failure; small enough
    to pass between processes. Tolerant: the replay shows what it can read."""
    a = analyze(path, tolerant=True)
    streams: dict[int, list[StreamResult]] = {}  # a session has a stream per response
    for s in a.streams:
        streams.setdefault(s.exchange, []).append(s)
    failures = {f.exchange: f.message for f in a.failures}
    findings = _by_exchange(a.contract)
    infos = a.exchanges or [ExchangeInfo(s.exchange, stream=True) for s in a.streams]
    rows = []
    for info in infos:
        ex = info.exchange
        mine, said, failure = streams.get(ex, []), findings.get(ex, []), failures.get(ex)
        if info.framing == WEBSOCKET:
            rows.append(_session_summary(info, mine, said, failure, a.turn_answers))
        else:
            rows.append(_summary(info, mine[0] if mine else None, said, failure))
    for row in rows:
        row.conversation = a.conversations.get(row.exchange)
        answer = a.answers.get(row.exchange)
        if answer is not None and not row.session:
            row.answer = AnswerSummary.of(answer)
    return rows


def _by_exchange(findings: list[Finding]) -> dict[int, list[Finding]]:
    out: dict[int, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.exchange, []).append(f)
    return out


class FollowedSummaries:
    """--follow's exchange summaries, kept up to date: each `update` reads only the lines
    appended since the last, feeds them to the streams they belong to, and gives the rows
    that changed. A stream still open shows what it holds so far (its frames, the
    anomalies seen, the calls begun) and no end-of-stream verdict; its calls enter the
    contract once it has ended."""

    def __init__(self, path: str) -> None:
        self.reader = RecordingReader(path, raw=True, tolerant=True)
        self.mask = FileMask()  # its lines as every face reads them (inputs/masking.py)
        self.seen = RecordingPass()
        self._findings: dict[int, list[RequestFinding]] = {}  # per request, as last given
        # the contract's findings, and how many streams and requests they were checked on:
        # both only grow, so the check runs again only when one of them has
        self._contract: tuple[tuple[int, int], dict[int, list[Finding]]] | None = None
        self._threads: dict[int, int] = {}  # each exchange's conversation, as last checked
        self._answers: dict[int, AnswerSummary] = {}  # as last checked
        self._path = path
        self._source: Source | None = None  # opened when a request's body is read again

    def update(self) -> list[ExchangeSummary]:
        seen = self.seen
        touched: set[int] = set()  # exchanges that got lines
        for _, d in self.mask.feed(self.reader.more()):
            seen.feed(d)
            if d["type"] != "header":
                touched.add(d["exchange"])
        checked_on = (len(seen.streams), len(seen.conversations))
        if self._contract is None or self._contract[0] != checked_on:
            checked = seen.contract(final=False)
            self._contract = checked_on, _by_exchange(checked.findings)
            self._threads = checked.conversation
            answers = {
                ex: AnswerSummary.of(a) for ex, a in seen.answers(checked, self._input()).items()
            }
            touched |= {
                ex
                for ex in answers.keys() | self._answers.keys()
                if answers.get(ex) != self._answers.get(ex)
            }
            self._answers = answers
        findings = self._contract[1]
        said = {ex: [RequestFinding.of(f) for f in fs] for ex, fs in findings.items()}
        changed = touched | {
            ex
            for ex in said.keys() | self._findings.keys()
            if said.get(ex) != self._findings.get(ex)
        }
        self._findings = said
        return [self._row(ex, findings.get(ex, [])) for ex in sorted(changed) if ex in seen.infos]

    def _row(self, ex: int, findings: list[Finding]) -> ExchangeSummary:
        info, seen = self.seen.infos[ex], self.seen
        session = seen.live_sessions.get(ex)
        if session is not None:  # open: its turns are split once it ended
            row = _session_summary(info, [], findings, None)
            row.open = True
            row.frames = sum(m.sender == "server" and m.opcode == "text" for m in session.messages)
            return row
        if ex in seen.sessions:
            failure = _failure(info)
            why = failure.message if failure is not None else None
            return _session_summary(info, seen.sessions[ex][1], findings, why, seen.turn_answers)
        live = seen.live.get(ex)
        if live is not None:  # open: what it holds so far, without finishing it
            engine = live.engine
            row = _summary(info, None, findings, None)
            row.stream, row.open, row.frames = True, True, live.frames
            if engine is not None:  # (None: its dialect is not told yet)
                so_far = [Seen(a.kind, a.severity) for a in engine.log.entries()]
                row.seen[:0] = so_far  # anomalies, then findings
                row.calls = [AssembledCall.of(c) for c in engine.calls_now()]
            return row
        if info.end_ns is None:  # no response yet, or a body still coming
            row = _summary(info, None, findings, None)
            row.stream, row.open = info.stream, True
            return row
        failure = _failure(info)
        row = _summary(info, seen.streams.get(ex), findings, failure and failure.message)  # type: ignore[arg-type]
        row.conversation = self._threads.get(ex)
        row.answer = self._answers.get(ex)
        return row

    def _input(self) -> Source | None:
        """The recording as an input, brought up to date: where a request's results are
        read again (RecordingPass.answers), and whether its times are approximate."""
        try:
            if self._source is None:
                self._source = open_input(self._path, tolerant=True)
            else:
                self._source.refresh()
        except (RecordingError, OSError):
            return None
        return self._source


def _plain(value: object) -> object:
    """An id or name as JSON can carry it (a provider may send any JSON value); a finding's
    ("name", name) for a call sent back with no id (contract.about) as a list of two."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "name":
        return ["name", _plain(value[1])]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def summarize_in_child(path: str) -> list[ExchangeSummary]:
    """`summarize_exchanges` in another interpreter: its CPU time does not hold this one's
    GIL. A pipe (`<(cmd)`, /dev/stdin) is read once: the child reads this process's copy
    of it, in its name."""
    import subprocess  # (here: only the replay's children need it)

    from ..recording.copies import piped

    pipe = piped(path)
    handed = ["--copy", pipe[0], pipe[1] or ""] if pipe is not None else []
    done = subprocess.run(
        [sys.executable, "-m", "streamscope.analysis", *handed, path],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RecordingError(_last_line(done.stderr, done.returncode), path)
    return [ExchangeSummary.from_json(d) for d in jsonio.loads(done.stdout)]


def _last_line(stderr: bytes, code: int | None) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"analysis exited with {code}"


class FollowingChild:
    """`FollowedSummaries` in another interpreter, kept running while the replay follows
    (its first update reads the whole recording, which takes seconds of CPU on a big one).
    One update at a time: hold `lock` from asking to delivering the rows."""

    def __init__(self, path: str) -> None:
        self.path = path
        import subprocess

        self.lock = threading.Lock()
        self.bytes_read = 0  # by the child's line passes, all updates together
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "streamscope.analysis", "--follow", path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def update(self) -> list[ExchangeSummary]:
        """The rows that changed since the last update (every row, the first time)."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError:
            line = b""
        if not line:  # the child is gone: its last words, if any
            proc.wait()
            raise RecordingError(_last_line(proc.stderr.read(), proc.returncode), self.path)
        d = jsonio.loads(line)
        if d.get("error"):
            raise RecordingError(d["error"], self.path)
        self.bytes_read = d["read"]
        return [ExchangeSummary.from_json(r) for r in d["rows"]]

    def close(self) -> None:
        import subprocess

        proc = self._proc
        if proc.poll() is None:
            proc.stdin.close()  # type: ignore[union-attr]  # it ends at the end of its input
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
