"""Read any input, run the engine over every stream, check the round-trip contract.

The one driver behind `inspect`, `replay` and `export`: recordings are read in one
sequential pass (exchanges may interleave), each stream's engine is dropped as soon as
its `end` line arrives, so memory stays flat on a 1M-frame file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..core.calls import StrategyError
from ..core.contract import Conversation, Finding, check
from ..core.engine import UNFINISHED, StreamEngine, StreamResult
from ..core.frames import Frame
from ..core.sdk_model import Unmodeled
from ..core.sse import SseDecoder
from ..inputs import SSE, ExchangeInfo, Source, describe_numbers, open_input
from ..recording.format import End, RecordingError, Request, Response, bytes_of


@dataclass(slots=True)
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


@dataclass(slots=True)
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


class _Live:
    """A stream being read: its decoder and engine."""

    __slots__ = ("info", "decoder", "engine")

    def __init__(self, info: ExchangeInfo) -> None:
        self.info = info
        self.decoder = SseDecoder()
        self.engine = StreamEngine(info.exchange, info.tools, info.response_format)


def analyze(
    path: str | os.PathLike[str], exchange: int | None = None, tolerant: bool = False
) -> Analysis:
    """Analyse every stream of `path` (or only `exchange`). Raises RecordingError, unless
    `tolerant`: then a recording's unreadable lines are skipped and listed in `skipped`."""
    with open_input(path, tolerant=tolerant) as source:
        if source.recorded:  # a recording or a HAR: exchanges, in one pass
            result = _recording(source, exchange)
        else:
            stream = _one_stream(source, exchange or 1)
            result = Analysis(
                source.path, source.kind, [stream], [], [ExchangeInfo(1, stream=True)]
            )
        result.notes = source.notes
        result.skipped = list(source.scan_errors)
        _sdk_fallback(result, source)
    return result


def _one_stream(source: Source, number: int) -> StreamResult:
    """A saved SSE body or chunk log: its one stream."""
    reads = source.exchange(number).reads
    engine = StreamEngine(1)
    try:
        for frame in reads.frames():
            engine.feed(frame)
    except OSError as e:
        raise RecordingError(f"{source.path}: {e.strerror or e}", source.path) from None
    return engine.finish(reads.truncation, expect_done=source.kind == SSE)


def _recording(source: Source, only: int | None) -> Analysis:
    name = source.path
    infos: dict[int, ExchangeInfo] = {}
    live: dict[int, _Live] = {}
    streams: list[StreamResult] = []
    conversations: list[Conversation] = []
    for _, d in source.records():
        kind = d["type"]
        if kind == "chunk":
            state = live.get(d["exchange"])
            if state is None:
                info = infos.get(d["exchange"])
                if info is not None and info.body is not None and len(info.body) < 600:
                    info.body += bytes_of(d.get("data"), d.get("data_b64"))
                continue
            engine = state.engine
            for frame in state.decoder.feed(
                bytes_of(d.get("data"), d.get("data_b64")), d["t_ns"] - state.info.start_ns
            ):
                engine.feed(frame)
            continue
        if kind == "header":
            continue
        ex = d["exchange"]
        if kind == "request":
            info = infos[ex] = ExchangeInfo(ex)
            body = info.saw_request(Request.from_json(d))
            if isinstance(body, dict):
                conv = Conversation.of(ex, body)
                if conv is not None and any(
                    role in ("assistant", "tool") for role, _ in conv.messages
                ):
                    conversations.append(conv)
        elif kind == "response":
            info = infos.setdefault(ex, ExchangeInfo(ex))
            info.saw_response(Response.from_json(d))
            if info.stream:
                live[ex] = _Live(info)
            else:
                info.body = bytearray()
        elif kind == "end":
            info = infos.setdefault(ex, ExchangeInfo(ex))
            end = End.from_json(d)
            info.saw_end(end)
            state = live.pop(ex, None)
            if state is not None:
                streams.append(
                    state.engine.finish(state.decoder.finish(), end.reason, end.error, info.status)
                )
    for state in live.values():  # the recording stops before these ended
        streams.append(
            state.engine.finish(state.decoder.finish(), UNFINISHED, None, state.info.status)
        )
    if only is not None and only not in infos:
        raise RecordingError(
            f"{name}: there is no exchange {only} ({describe_numbers(sorted(infos))})", name
        )
    streams.sort(key=lambda s: s.exchange)
    contract = check(
        [(s.exchange, s.tool_calls) for s in streams],
        sorted(conversations, key=lambda c: c.exchange),
    )
    findings = contract.findings
    if only is not None:  # every stream was read: the contract of `only` spans exchanges
        streams = [s for s in streams if s.exchange == only]
        findings = [f for f in findings if only in (f.exchange, f.stream)]
    stopped = None
    if source.stopped_at_scan is not None:
        at = source.stopped_at_scan
        stopped = {"line": at.line, "offset": at.offset, "message": at.message}
    exchanges = [infos[k] for k in sorted(infos)]
    failures = [f for f in map(_failure, exchanges) if f is not None and only in (None, f.exchange)]
    return Analysis(
        name, source.kind, streams, findings, exchanges, stopped, contract.compared, failures
    )


def _failure(info: ExchangeInfo) -> Failure | None:
    """Why a non-stream exchange failed, or None when it did not."""
    if info.stream:
        return None  # streams say it themselves (ended, stream-truncated)
    status = info.status
    http_ok = status is None or status < 400
    if http_ok and (info.end_reason == "complete" or (info.end_reason is None and status is None)):
        return None
    body = bytes(info.body or b"").decode("utf-8", "replace").strip()
    detail = info.end_error or body
    detail = " ".join(detail.split())
    detail = detail if len(detail) <= 200 else detail[:199] + "…"
    if status is not None and status >= 400:
        what = f"HTTP {status}"
    elif info.end_reason is None:
        what = "the recording stops before this exchange ended"
    else:
        what = f"ended {info.end_reason}"
    return Failure(info.exchange, status, info.end_reason, f"{what}: {detail}" if detail else what)


def frame_source(path: str, exchange: int = 1) -> Iterator[Frame]:
    """The frames of one stream of `path`, from the start (for tests and tools)."""
    with open_input(path) as source:
        yield from source.exchange(exchange).frames()


def _sdk_fallback(analysis: Analysis, source: Source) -> None:
    """Run the real openai stream accumulator where the emulation does not model the shape."""
    pending = [s for s in analysis.streams if isinstance(s.strategies["openai-sdk"], Unmodeled)]
    if not pending:
        return
    from .sdk_oracle import run_real_sdk

    infos = {i.exchange: i for i in analysis.exchanges}
    for stream in pending:
        info = infos.get(stream.exchange)
        frames = source.exchange(stream.exchange).frames()
        try:
            stream.strategies["openai-sdk"] = run_real_sdk(
                frames, info.tools if info else None, info.response_format if info else None
            )
        except Exception as exc:  # the oracle itself failed: say so rather than guess
            stream.strategies["openai-sdk"] = StrategyError.from_exception(exc, 0)


@dataclass(slots=True)
class ExchangeSummary:
    """One line of the exchanges screen's analysis columns, and what the conversation view
    needs from the other exchanges (the calls each stream assembled)."""

    exchange: int
    stream: bool
    frames: int = 0
    kinds: list[str] = field(default_factory=list)  # one per anomaly entry, then per finding
    findings: list[list[str]] = field(default_factory=list)  # [kind, message] of this request
    calls: list[list] = field(default_factory=list)  # [id, name] per assembled call
    failure: str | None = None  # why a non-stream exchange failed


def summarize_exchanges(path: str) -> list[ExchangeSummary]:
    """Every exchange's size, anomaly and contract kinds, calls and failure; small enough
    to pass between processes. Tolerant: the replay shows what it can read."""
    a = analyze(path, tolerant=True)
    streams = {s.exchange: s for s in a.streams}
    failures = {f.exchange: f.message for f in a.failures}
    infos = a.exchanges or [ExchangeInfo(s.exchange, stream=True) for s in a.streams]
    out = []
    for info in infos:
        s = streams.get(info.exchange)
        row = ExchangeSummary(info.exchange, s is not None, failure=failures.get(info.exchange))
        if s is not None:
            row.frames = s.frames
            row.kinds = [x.kind for x in s.anomalies]
            row.calls = [[_plain(c.id), _plain(c.name)] for c in s.tool_calls]
        for f in a.contract:
            if f.exchange == info.exchange:
                row.kinds.append(f.kind)
                row.findings.append([f.kind, f.message])
        out.append(row)
    return out


def _plain(value: object) -> object:
    """An id or name as JSON can carry it (a provider may send any JSON value)."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def summarize_in_child(path: str) -> list[ExchangeSummary]:
    """`summarize_exchanges` in another interpreter: its CPU time does not hold this one's GIL."""
    import subprocess
    import sys

    import orjson

    done = subprocess.run(
        [sys.executable, "-m", "streamscope.analysis", path], capture_output=True, check=False
    )
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RecordingError(
            lines[-1] if lines else f"analysis exited with {done.returncode}", path
        )
    return [ExchangeSummary(**d) for d in orjson.loads(done.stdout)]
