"""Read any input, run the engine over every stream, check the round-trip contract.

The one driver behind `inspect`, `replay` and `export`: recordings are read in one
sequential pass (exchanges may interleave), each stream's engine is dropped as soon as
its `end` line arrives, so memory stays flat on a 1M-frame file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..core.calls import StrategyError
from ..core.contract import Conversation, Finding, check
from ..core.engine import UNFINISHED, StreamEngine, StreamResult
from ..core.frames import Frame
from ..core.sdk_model import Unmodeled
from ..core.sse import SseDecoder
from ..inputs.reads import ChunksFile, SseFile, exchange_frames
from ..inputs.sniff import RECORDING, SSE, sniff
from ..recording import RecordingIndex, iter_raw
from ..recording.format import RecordingError


@dataclass(slots=True)
class ExchangeInfo:
    """One recorded exchange, for listings (the TUI's exchanges screen, the text report)."""

    exchange: int
    method: str = ""
    url: str = ""
    model: str | None = None
    status: int | None = None
    stream: bool = False
    start_ns: int = 0
    end_ns: int | None = None
    end_reason: str | None = None
    tools: list | None = None
    response_format: object = None
    end_error: str | None = None
    body: bytearray | None = None  # the start of a non-stream response body


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


class _Live:
    """A stream being read: its decoder and engine."""

    __slots__ = ("info", "decoder", "engine")

    def __init__(self, info: ExchangeInfo) -> None:
        self.info = info
        self.decoder = SseDecoder()
        self.engine = StreamEngine(info.exchange, info.tools, info.response_format)


def _is_stream(info: ExchangeInfo, headers: list) -> bool:
    for name, value in headers:
        if str(name).lower() == "content-type":
            return "text/event-stream" in str(value).lower()
    return info.stream


def analyze(path: str | os.PathLike[str], exchange: int | None = None) -> Analysis:
    """Analyse every stream of `path` (or only `exchange`). Raises RecordingError."""
    name = os.fspath(path)
    fmt = sniff(name)
    if fmt == RECORDING:
        result = _recording(name, exchange)
    else:
        if exchange not in (None, 1):
            raise RecordingError(
                f"{name}: a {fmt} file holds one stream (exchange 1), not {exchange}", name
            )
        source = SseFile(name) if fmt == SSE else ChunksFile(name)
        engine = StreamEngine(1)
        try:
            for frame in source.frames():
                engine.feed(frame)
        except OSError as e:
            raise RecordingError(f"{name}: {e.strerror or e}", name) from None
        stream = engine.finish(source.truncation, expect_done=fmt == SSE)
        result = Analysis(name, fmt, [stream], [], [ExchangeInfo(1, stream=True)])
    _sdk_fallback(result)
    return result


def _recording(name: str, only: int | None) -> Analysis:
    reader = iter_raw(name)
    infos: dict[int, ExchangeInfo] = {}
    live: dict[int, _Live] = {}
    streams: list[StreamResult] = []
    conversations: list[Conversation] = []
    for _, d in reader:
        kind = d["type"]
        if kind == "chunk":
            state = live.get(d["exchange"])
            if state is None:
                info = infos.get(d["exchange"])
                if info is not None and info.body is not None and len(info.body) < 600:
                    text = d.get("data")
                    info.body += text.encode() if text is not None else _b64(d["data_b64"])
                continue
            text = d.get("data")
            data = text.encode() if text is not None else _b64(d["data_b64"])
            engine = state.engine
            for frame in state.decoder.feed(data, d["t_ns"] - state.info.start_ns):
                engine.feed(frame)
            continue
        if kind == "header":
            continue
        ex = d["exchange"]
        if kind == "request":
            body = _json_body(d)
            info = infos[ex] = ExchangeInfo(
                ex, d.get("method", ""), d.get("url", ""), start_ns=d["t_ns"]
            )
            if isinstance(body, dict):
                info.model = body.get("model") if isinstance(body.get("model"), str) else None
                info.stream = body.get("stream") is True
                info.tools = body.get("tools") if isinstance(body.get("tools"), list) else None
                info.response_format = body.get("response_format")
                conv = Conversation.of(ex, body)
                if conv is not None and any(
                    role in ("assistant", "tool") for role, _ in conv.messages
                ):
                    conversations.append(conv)
        elif kind == "response":
            info = infos.setdefault(ex, ExchangeInfo(ex))
            info.status = d.get("status")
            if _is_stream(info, d.get("headers") or []):
                info.stream = True
                live[ex] = _Live(info)
            else:
                info.stream = False
                info.body = bytearray()
        elif kind == "end":
            info = infos.setdefault(ex, ExchangeInfo(ex))
            info.end_ns, info.end_reason = d["t_ns"], d.get("reason")
            info.end_error = d.get("error")
            state = live.pop(ex, None)
            if state is not None:
                streams.append(
                    state.engine.finish(
                        state.decoder.finish(), d.get("reason"), d.get("error"), info.status
                    )
                )
    for state in live.values():  # the recording stops before these ended
        streams.append(
            state.engine.finish(state.decoder.finish(), UNFINISHED, None, state.info.status)
        )
    if only is not None and only not in infos:
        have = sorted(infos)
        span = (
            ", ".join(map(str, have[:10])) + (" ..." if len(have) > 10 else "") if have else "none"
        )
        raise RecordingError(f"{name}: there is no exchange {only} (exchanges: {span})", name)
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
    if reader.stopped_at is not None:
        stopped = {
            "line": reader.stopped_at.line,
            "offset": reader.stopped_at.offset,
            "message": reader.stopped_at.message,
        }
    exchanges = [infos[k] for k in sorted(infos)]
    failures = [f for f in map(_failure, exchanges) if f is not None and only in (None, f.exchange)]
    return Analysis(
        name, RECORDING, streams, findings, exchanges, stopped, contract.compared, failures
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


def _b64(text: str) -> bytes:
    import base64

    return base64.b64decode(text)


def _json_body(d: dict) -> object:
    import orjson

    body = d.get("body")
    if body is None and d.get("body_b64"):
        try:
            body = _b64(d["body_b64"]).decode("utf-8")
        except ValueError:
            return None
    if not body:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def frame_source(path: str, fmt: str, exchange: int = 1) -> Callable[[int], Iterator[Frame]]:
    """A function giving the frames of one stream from frame `start` on (re-reads the file)."""
    if fmt == RECORDING:
        index = RecordingIndex.open(path)
        return lambda start=1: exchange_frames(index, exchange, start)
    source = SseFile(path) if fmt == SSE else ChunksFile(path)
    return source.frames


def _sdk_fallback(analysis: Analysis) -> None:
    """Run the real openai stream accumulator where the emulation does not model the shape."""
    pending = [s for s in analysis.streams if isinstance(s.strategies["openai-sdk"], Unmodeled)]
    if not pending:
        return
    from .sdk_oracle import run_real_sdk

    infos = {i.exchange: i for i in analysis.exchanges}
    for stream in pending:
        info = infos.get(stream.exchange)
        frames = frame_source(analysis.source, analysis.format, stream.exchange)
        try:
            stream.strategies["openai-sdk"] = run_real_sdk(
                frames(1), info.tools if info else None, info.response_format if info else None
            )
        except Exception as exc:  # the oracle itself failed: say so rather than guess
            stream.strategies["openai-sdk"] = StrategyError.from_exception(exc, 0)


@dataclass(slots=True)
class StreamSummary:
    """One line of the exchanges screen's analysis columns."""

    exchange: int
    frames: int
    calls: int
    kinds: list[str]  # one per anomaly entry (with repeats collapsed)


def summarize_streams(path: str) -> list[StreamSummary]:
    """Every stream's size and anomaly kinds; small enough to pass between processes."""
    return [
        StreamSummary(s.exchange, s.frames, len(s.tool_calls), [a.kind for a in s.anomalies])
        for s in analyze(path).streams
    ]


def summarize_in_child(path: str) -> list[StreamSummary]:
    """`summarize_streams` in another interpreter: its CPU time does not hold this one's GIL."""
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
    return [StreamSummary(**d) for d in orjson.loads(done.stdout)]
