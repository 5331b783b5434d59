"""A recording as OpenTelemetry traces (`export --format otlp`, `--otlp-endpoint`).

Each conversation (the exchanges the contract pairs, as `inspect` groups them) is one
trace: a `conversation` span over it, and under it a span per exchange (a WebSocket
session: a span per response) following the GenAI semantic conventions' inference span
(`chat gpt-4o`, kind CLIENT, `gen_ai.*` attributes). What streamscope found is written
beside them as span events in the `streamscope.*` namespace (docs/otlp.md): each anomaly
at its frame's time, each contract finding, what each client builds.

`build` gives the request as OTLP/JSON (ids as hex, 64-bit integers as strings, enums as
numbers: what an OTLP/HTTP JSON body is); `to_protobuf` the same as the protobuf bytes
an OTLP/HTTP collector takes (opentelemetry-proto, imported only there); `send` posts
them. Ids are streamscope's own, derived from the file's bytes (a re-export is the same
trace); no id a provider sent is ever made up. The conversation's content (text, tool
arguments and results, the history, system instructions) is written only with
`content`; every string is masked with the credentials the input carried, then for
key-shaped words.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from dataclasses import field
from datetime import datetime, timezone
from typing import Any

import orjson

from .. import __version__
from ..analysis import Analysis, analyze
from ..core import jsonio
from ..core.calls import Call
from ..core.engine import StreamResult
from ..core.frames import Frame
from ..core.history import History
from ..core.links import stream_link
from ..core.record import record
from ..dialects import dialect, request_facts
from ..dialects.base import ResponseFacts
from ..inputs import ExchangeInfo, Source, open_input
from ..inputs.encoding import request_json
from ..providers import gen_ai_provider
from ..recording.format import REDACTED
from ..recording.mask import Secrets
from ..recording.redact import redact_text, redact_url
from .report import _said, _secrets, _tables

SCOPE = "streamscope"
CLIENT, INTERNAL = 3, 1  # Span.SpanKind
STATUS_ERROR = 2  # Status.StatusCode
TRACES = "/v1/traces"
# the request's settings the conventions name, by the body's own key
SETTINGS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
}
INTEGERS = frozenset({"gen_ai.request.max_tokens", "gen_ai.request.seed"})
# how far the times are the recording's own (streamscope.clock)
RECORDED, APPROXIMATE, NO_CLOCK = "recorded", "approximate", "none"
# how a stream ends that makes its span an error (StreamResult.ended): cut short, or an
# error (a failed connection, an error status or event); one the client or the recorder
# closed is no error of the operation
FAILED = frozenset({"truncated", "error"})


@record(slots=True)
class Traces:
    """The OTLP request, and what it holds."""

    request: dict[str, Any]
    spans: int
    traces: int
    masked: int = 0

    def json(self, shown: bool = False) -> bytes:
        """The OTLP/JSON (`shown`: for a terminal, core/jsonio.dumps)."""
        return jsonio.dumps(self.request, indent=True, newline=True, shown=shown)


@record(slots=True)
class _Span:
    trace: str
    span_id: str
    name: str
    kind: int
    start: int
    end: int
    parent: str = ""
    attributes: dict[str, object] = field(default_factory=dict)
    events: list[tuple[int, str, dict[str, object]]] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "traceId": self.trace,
            "spanId": self.span_id,
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": str(self.start),
            "endTimeUnixNano": str(max(self.end, self.start)),
            "attributes": _attributes(self.attributes),
        }
        if self.parent:
            out["parentSpanId"] = self.parent
        if self.events:
            out["events"] = [
                {"timeUnixNano": str(t), "name": name, "attributes": _attributes(attrs)}
                for t, name, attrs in sorted(self.events, key=lambda e: e[0])
            ]
        out["status"] = {"code": STATUS_ERROR, "message": self.error} if self.error else {}
        return out


class _Ids:
    """streamscope's trace and span ids: hashes of the file's bytes and what the id
    names, so the same file exports to the same ids."""

    def __init__(self, path: str) -> None:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        self._file = digest.digest()

    def _hex(self, what: str, size: int) -> str:
        out = hashlib.sha256(self._file + what.encode()).hexdigest()[: size * 2]
        return out if out.strip("0") else "1".rjust(size * 2, "0")  # (all zero is invalid)

    def trace(self, conversation: int) -> str:
        return self._hex(f"trace {conversation}", 16)

    def span(self, what: str) -> str:
        return self._hex(f"span {what}", 8)


def build(
    path: str,
    content: bool = False,
    exchange: int | None = None,
    turn: int | None = None,
    name: str | None = None,
) -> Traces:
    """The traces of `path` (only exchange `exchange`, its response `turn`, when given);
    `name`: the file as links name it (default `path`). Raises RecordingError, OSError,
    ValueError."""
    analysis = analyze(path, exchange)
    name = path if name is None else name
    ids = _Ids(path)
    with open_input(path, check=True) as source:
        secrets = _secrets(source, analysis)
        base, clock = _clock(source)
        spans: list[_Span] = []
        for info in analysis.exchanges:
            streams = [s for s in analysis.streams if s.exchange == info.exchange]
            if turn is not None:
                streams = [s for s in streams if s.turn == turn]
                if not streams:
                    continue
            conversation = analysis.conversations.get(info.exchange, info.exchange)
            chosen: list[StreamResult | None] = list(streams) or [None]
            for s in chosen:  # no stream: the exchange alone (a body, a failure)
                span = _exchange(source, analysis, info, s, content, base, clock)
                span.trace = ids.trace(conversation)
                turn_of = "" if s is None or s.turn is None else f".{s.turn}"
                span.span_id = ids.span(f"{info.exchange}{turn_of}")
                span.attributes["streamscope.conversation"] = conversation
                spans.append(span)
        if turn is not None and not spans:
            if exchange is None:
                raise ValueError(f"no WebSocket session has a response {turn}")
            raise ValueError(f"exchange {exchange} has no response {turn}")
        _contract(analysis, spans, content, name)
        for span in spans:
            _link(span, name)
    roots = _roots(spans, ids)
    every = roots + spans
    request = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": _attributes(
                        {
                            "service.name": SCOPE,
                            "service.version": __version__,
                            "streamscope.source": name,
                            "streamscope.clock": clock,
                            "streamscope.content": content,
                        }
                    )
                },
                "scopeSpans": [
                    {
                        "scope": {"name": SCOPE, "version": __version__},
                        "spans": [s.to_json() for s in every],
                    }
                ],
            }
        ]
    }
    masked = _mask(request, secrets)
    return Traces(request, len(every), len(roots), masked)


def _clock(source: Source) -> tuple[int, str]:
    """The wall-clock time the input's times count from (ns since the epoch), and how far
    its times are its own: a recording's and a HAR's start (a HAR's reads spread over an
    entry's receive time: approximate); none at all (a cassette, a bare stream file: its
    times count from the epoch itself, and say so)."""
    created = source.header.created if source.header is not None else None
    if created is None and source.har is not None:
        created = source.har.created
    if created is None or source.untimed:
        return (_epoch_ns(created) if created else 0), NO_CLOCK
    return _epoch_ns(created), APPROXIMATE if source.approximate_times else RECORDED


def _epoch_ns(text: str) -> int:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (when - epoch) // _MICROSECOND * 1000


_MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1) - datetime(1970, 1, 1)


def _exchange(
    source: Source,
    analysis: Analysis,
    info: ExchangeInfo,
    s: StreamResult | None,
    content: bool,
    base: int,
    clock: str,
) -> _Span:
    """The span of one exchange, or of one response of a session (`s.turn`)."""
    ex = source.exchange(info.exchange)
    told = dialect(s.dialect if s is not None else info.dialect)
    body: object = request_json(ex.request) if ex.request is not None else None
    start = info.start_ns
    frames: Iterable[Frame] = ex.frames() if s is not None and s.turn is None else ()
    model = info.model
    if s is not None and s.turn is not None:
        session = ex.session()
        t = session.turns[s.turn - 1] if session and 0 < s.turn <= len(session.turns) else None
        if t is not None:
            body, start, frames = t.request, t.start_ns, t.frames
            model = request_facts(told, info.url, body).model or model
    facts, times, first = _read_frames(told.response_facts, frames, s)
    if s is not None and s.turn is not None:  # a session's response: to its last event
        end: int | None = start + times[s.frames] if s.frames in times else start
    else:
        end = info.end_ns if info.end_ns is not None else info.last_ns
    operation = told.operation
    a: dict[str, object] = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": gen_ai_provider(info.url, told.name),
    }
    if model:
        a["gen_ai.request.model"] = model
    host, port = _server(info.url)
    if host:
        a["server.address"], a["server.port"] = host, port
    if info.stream or s is not None:  # (set only for a stream: unset means none)
        a["gen_ai.request.stream"] = True
    history = told.history(body) if body is not None else None
    _request_attributes(a, history, body, content)
    if info.status is not None:
        a["http.response.status_code"] = info.status
    a["streamscope.exchange"] = info.exchange
    if s is not None and s.turn is not None:
        a["streamscope.turn"] = s.turn
    a["streamscope.dialect"] = told.name
    a["streamscope.clock"] = clock
    error = _error(analysis, info, s)
    if error:
        a["error.type"] = error[0]
    if s is not None:
        _stream_attributes(a, s, facts, first, content, clock)
    span = _Span(
        "",
        "",
        f"{operation} {model}" if model else operation,
        CLIENT,
        base + start,
        base + (end if end is not None else start),
        attributes=a,
        error=error[1] if error else None,
    )
    if s is not None:
        _findings(span, s, times, base + start, content)
    return span


def _read_frames(
    read: Any, frames: Iterable[Frame], s: StreamResult | None
) -> tuple[ResponseFacts, dict[int, int], int | None]:
    """What the frames say of the response, each frame's time (ns from its request, where
    known), and the first frame's."""
    facts = ResponseFacts()
    times: dict[int, int] = {}
    first: int | None = None
    if s is None:
        return facts, times, first
    for number, frame in enumerate(frames, 1):
        read(frame.payload, facts)
        if frame.time_ns is not None:
            times[number] = frame.time_ns
            if first is None:
                first = frame.time_ns
    return facts, times, first


def _server(url: str) -> tuple[str, int]:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "", 0
    host = parts.hostname or ""
    if port is None:
        port = {"https": 443, "wss": 443, "http": 80, "ws": 80}.get(parts.scheme, 0)
    return host, port


def _request_attributes(
    a: dict[str, object], history: History | None, body: object, content: bool
) -> None:
    """The request's settings, its conversation id where it carries one, its tools (by
    name), and (with content) its history and system instructions."""
    if isinstance(body, dict):
        for key, attribute in SETTINGS.items():
            value = body.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if attribute in INTEGERS and not isinstance(value, int):
                continue
            a[attribute] = value if attribute in INTEGERS else float(value)
        stop = body.get("stop")
        stops = [stop] if isinstance(stop, str) else stop
        if isinstance(stops, list) and stops and all(isinstance(x, str) for x in stops):
            a["gen_ai.request.stop_sequences"] = stops
    if history is None:
        return
    if isinstance(history.stored, str) and history.stored:
        a["gen_ai.conversation.id"] = history.stored
    if isinstance(history.previous, str) and history.previous:
        a["streamscope.previous_response_id"] = history.previous
    if history.tools:
        tools = [
            {"type": "function", "name": t.name} for t in history.tools if isinstance(t.name, str)
        ]
        if tools:
            a["gen_ai.tool.definitions"] = _json(tools)
    if not content:
        return
    if history.system is not None:
        a["gen_ai.system_instructions"] = _json(_parts(history.system))
    a["gen_ai.input.messages"] = _json(_history(history))


def _history(history: History) -> list[dict[str, Any]]:
    """The request's messages as the conventions' input messages."""
    out: list[dict[str, Any]] = []
    for turn in history.turns:
        parts = _parts(turn.content if turn.raw is None else turn.raw)
        for call in turn.calls or []:
            parts.append(_call_part(call.id, call.name, call.arguments, True))
        for result in turn.results:
            part: dict[str, Any] = {"type": "tool_call_response", "response": result.content}
            if isinstance(result.answers, str):
                part["id"] = result.answers
            parts.append(part)
        # a turn of calls is the assistant's, one of results the tools' (as the contract
        # reads them: History.entries), whatever the dialect names them
        role = "assistant" if turn.calls is not None else "tool" if turn.results else turn.role
        out.append({"role": role, "parts": parts})
    return out


def _parts(value: object) -> list[dict[str, Any]]:
    """Text as sent (a string, or the text of each part of a list) as text parts."""
    if isinstance(value, str):
        return [{"type": "text", "content": value}] if value else []
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    out: list[dict[str, Any]] = []
    for item in value:
        if isinstance(item, str):
            out.append({"type": "text", "content": item})
        elif isinstance(item, dict):
            text = item.get("text", item.get("content"))
            if isinstance(text, str):
                out.append({"type": "text", "content": text})
    return out


def _call_part(id: object, name: object, arguments: object, content: bool) -> dict[str, Any]:
    """A tool call part: its id and name, and (with content) its arguments, parsed where
    they are JSON text."""
    part: dict[str, Any] = {"type": "tool_call", "name": name if isinstance(name, str) else ""}
    if isinstance(id, str):
        part["id"] = id
    if content:
        if isinstance(arguments, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                arguments = jsonio.loads(arguments)
        part["arguments"] = arguments
    return part


def _stream_attributes(
    a: dict[str, object],
    s: StreamResult,
    facts: ResponseFacts,
    first: int | None,
    content: bool,
    clock: str,
) -> None:
    if facts.id:
        a["gen_ai.response.id"] = facts.id
    elif s.response_id:
        a["gen_ai.response.id"] = s.response_id
    if facts.model:
        a["gen_ai.response.model"] = facts.model
    if facts.input_tokens is not None:
        a["gen_ai.usage.input_tokens"] = facts.input_tokens
    if facts.output_tokens is not None:
        a["gen_ai.usage.output_tokens"] = facts.output_tokens
    # (a first frame at offset 0: the turn's clock starts at a server message, not at the
    # request, so the wait is not known)
    if first and clock != NO_CLOCK:
        a["gen_ai.response.time_to_first_chunk"] = first / 1e9
    choices = s.choices or []
    reasons = [c.finish_reason for c in choices if c.finish_reason]
    if not choices and s.finish_reason:
        reasons = [s.finish_reason]
    if reasons:
        a["gen_ai.response.finish_reasons"] = reasons
    a["gen_ai.output.messages"] = _json(_output(s, content))
    a["streamscope.framing"] = s.framing
    a["streamscope.ended"] = s.ended
    a["streamscope.frames"] = s.frames
    a["streamscope.calls"] = len(s.tool_calls)


def _output(s: StreamResult, content: bool) -> list[dict[str, Any]]:
    """Each choice's message: its text and reasoning (with content), the calls robust
    assembled, its finish reason ("" where the stream sent none)."""
    by_choice: dict[int, list[Call]] = {}
    for c in s.tool_calls:
        by_choice.setdefault(c.choice, []).append(c)
    choices = [(c.index, c.content, c.reasoning_content, c.finish_reason) for c in s.choices]
    if not choices:
        choices = [(0, s.content, s.reasoning_content, s.finish_reason)]
    known = {index for index, *_ in choices}
    choices += [(i, "", "", None) for i in sorted(by_choice) if i not in known]
    out: list[dict[str, Any]] = []
    for index, text, reasoning, reason in choices:
        parts: list[dict[str, Any]] = []
        if content and reasoning:
            parts.append({"type": "reasoning", "content": reasoning})
        if content and text:
            parts.append({"type": "text", "content": text})
        parts += [_call_part(c.id, c.name, c.arguments, content) for c in by_choice.get(index, [])]
        message: dict[str, Any] = {"role": "assistant", "parts": parts}
        # required by the conventions' schema (a backend that validates it, Phoenix for
        # one, drops every output message of the span when one lacks it): "" where the
        # stream sent none, never a reason made up
        message["finish_reason"] = reason or ""
        out.append(message)
    return out


def _error(
    analysis: Analysis, info: ExchangeInfo, s: StreamResult | None
) -> tuple[str, str] | None:
    """`error.type` and the status message of an exchange that failed: its HTTP status,
    or how its stream ended where it did not complete."""
    failure = next((f for f in analysis.failures if f.exchange == info.exchange), None)
    if info.status is not None and info.status >= 400:
        return str(info.status), failure.message if failure else f"HTTP {info.status}"
    if failure is not None:
        return failure.ended or "_OTHER", failure.message
    if s is not None and s.ended in FAILED:
        why = info.end_reason if info.end_reason not in (None, "complete") else s.ended
        return str(why), f"the stream ended: {s.ended}" + (f" ({why})" if why != s.ended else "")
    return None


def _findings(
    span: _Span, s: StreamResult, times: dict[int, int], start: int, content: bool
) -> None:
    """Each anomaly at its frame's time (where known; else the span's start), and what
    each client builds at the stream's end."""
    for an in s.anomalies:
        at = times.get(an.frame)
        attrs: dict[str, object] = {
            "streamscope.anomaly.kind": an.kind,
            "streamscope.anomaly.severity": an.severity,
            "streamscope.anomaly.message": _said(an.kind, an.text(), not content),
            "streamscope.anomaly.frame": an.frame,
        }
        if an.count > 1:
            attrs["streamscope.anomaly.count"] = an.count
        if an.cut_by_client:
            attrs["streamscope.anomaly.cut_by_client"] = True
        if an.choice is not None:
            attrs["streamscope.anomaly.choice"] = an.choice
        if isinstance(an.index, int | str) and not isinstance(an.index, bool):
            attrs["streamscope.anomaly.index"] = an.index
        # (frame 0: said of the stream as a whole, at its end)
        when = start + at if at is not None else span.end if an.frame == 0 else span.start
        span.events.append((when, "streamscope.anomaly", attrs))
    for strategy, table in _tables(
        s.strategies, s.tool_calls, not content, s.by_value, True
    ).items():
        if strategy == "robust":  # (the span's own calls)
            continue
        attrs = {"streamscope.client.name": strategy}
        if table.calls is not None:
            attrs["streamscope.client.calls"] = len(table.calls) + table.more
            if table.differs is not None:
                attrs["streamscope.client.differs"] = table.differs
            if table.said:
                attrs["streamscope.client.difference"] = table.said
        if table.error:
            attrs["streamscope.client.error"] = table.error
        span.events.append((span.end, "streamscope.client", attrs))


def _contract(analysis: Analysis, spans: list[_Span], content: bool, name: str) -> None:
    """Each contract finding on the span of the request it is about (a session's: its
    response's)."""
    for f in analysis.contract:
        span = _span_of(spans, f.exchange, f.turn) or _span_of(spans, f.exchange, None)
        if span is None and f.stream is not None:  # (--exchange: the stream's exchange alone)
            span = _span_of(spans, f.stream, f.stream_turn) or _span_of(spans, f.stream, None)
        if span is None:
            continue
        attrs: dict[str, object] = {
            "streamscope.contract.kind": f.kind,
            "streamscope.contract.severity": f.severity,
            "streamscope.contract.message": _said(f.kind, f.message, not content),
        }
        if f.stream is not None:
            attrs["streamscope.contract.stream"] = f.stream
            if f.stream_turn is not None:
                attrs["streamscope.contract.stream_turn"] = f.stream_turn
        if f.at_message is not None:
            attrs["streamscope.contract.message_index"] = f.at_message
        if isinstance(f.call, str):
            attrs["streamscope.contract.call_id"] = f.call
        span.events.append((span.start, "streamscope.contract", attrs))


def _span_of(spans: list[_Span], exchange: int, turn: int | None) -> _Span | None:
    for span in spans:
        a = span.attributes
        if a.get("streamscope.exchange") == exchange and (
            turn is None or a.get("streamscope.turn") == turn
        ):
            return span
    return None


def _link(span: _Span, name: str) -> None:
    """The span's link (FILE#N, FILE#N.R), and each anomaly's to its frame."""
    a = span.attributes
    exchange = a["streamscope.exchange"]
    turn = a.get("streamscope.turn")
    assert isinstance(exchange, int)
    turn = turn if isinstance(turn, int) else None
    frames = a.get("streamscope.frames")
    a["streamscope.link"] = stream_link(name, exchange, turn, 0, 0)
    for _, event, attrs in span.events:
        frame = attrs.get("streamscope.anomaly.frame")
        if event == "streamscope.anomaly" and isinstance(frame, int):
            total = frames if isinstance(frames, int) else 0
            attrs["streamscope.anomaly.link"] = stream_link(name, exchange, turn, frame, total)


def _roots(spans: list[_Span], ids: _Ids) -> list[_Span]:
    """A `conversation` span over each trace's exchanges, each exchange's span its child."""
    by_trace: dict[str, list[_Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace, []).append(span)
    roots: list[_Span] = []
    for trace, members in by_trace.items():
        conversation = members[0].attributes["streamscope.conversation"]
        root = _Span(
            trace,
            ids.span(f"conversation {conversation}"),
            "conversation",
            INTERNAL,
            min(s.start for s in members),
            max(max(s.end, s.start) for s in members),
            attributes={
                "streamscope.conversation": conversation,
                "streamscope.exchanges": [s.attributes["streamscope.exchange"] for s in members],
                # the file's clock, which every exchange of it counts from
                "streamscope.clock": members[0].attributes.get("streamscope.clock"),
            },
        )
        conv_ids = {s.attributes.get("gen_ai.conversation.id") for s in members} - {None}
        if len(conv_ids) == 1:
            root.attributes["gen_ai.conversation.id"] = conv_ids.pop()
        for s in members:
            s.parent = root.span_id
        roots.append(root)
    return roots


def _json(value: object) -> str:
    return jsonio.dumps(value).decode()


def _attributes(attrs: dict[str, object]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in attrs.items() if v is not None]


def _value(v: object) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list | tuple):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    return {"stringValue": str(v)}


def _mask(value: Any, secrets: Secrets) -> int:
    """Every string of the request with the input's credentials masked, then its
    key-shaped words; how many credentials were."""
    total = 0

    def one(s: str) -> str:
        nonlocal total
        masked, n = secrets.text(s) if secrets else (s, 0)
        total += n
        return redact_text(masked)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            for k, x in v.items():
                v[k] = one(x) if isinstance(x, str) and k == "stringValue" else walk(x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                v[i] = walk(x)
        return v

    walk(value)
    return total


# -- OTLP/HTTP protobuf -----------------------------------------------------------------


def to_protobuf(request: dict[str, Any]) -> bytes:
    """The OTLP/JSON request as the protobuf an OTLP/HTTP collector takes (needs
    opentelemetry-proto: `pip install 'streamscope[otlp]'`). OTLP/JSON writes ids in hex
    where protobuf's JSON mapping reads base64: they are turned into bytes first."""
    import base64

    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    copy = jsonio.loads(jsonio.dumps(request))
    for rs in copy["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = b64(span[key])
    message = ExportTraceServiceRequest()
    json_format.ParseDict(copy, message)
    data: bytes = message.SerializeToString()
    return data


def endpoint_url(url: str) -> str:
    """Where the traces go: a URL with no path gets OTLP/HTTP's `/v1/traces`; one with a
    path is taken as it is. ValueError for a URL that is no http(s) URL."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{shown(url)}: --otlp-endpoint takes an http:// or https:// URL")
    if parts.path in ("", "/"):
        return urlunsplit((parts.scheme, parts.netloc, TRACES, parts.query, ""))
    return url


def shown(url: str) -> str:
    """The endpoint as a message may say it: its userinfo (a password), credential-looking
    query values and key-shaped words masked."""
    return redact_url(url)


def _basic(url: str) -> tuple[str, dict[str, str], list[str]]:
    """The URL without its userinfo, the Authorization header it stands for (HTTP Basic,
    as curl and httpx send a URL's `user:password@`), and the secrets it holds (to mask
    in what the collector answers)."""
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}, []
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = (unquote(x) for x in userinfo.partition(":"))
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    bare = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    hidden = [x for x in (token, userinfo, password or user) if x]
    return bare, {"Authorization": f"Basic {token}"}, hidden


def send(url: str, data: bytes, timeout: float = 30.0) -> str:
    """POST the protobuf to the collector at `url` (endpoint_url's; a `user:password@` in
    it is sent as HTTP Basic auth); what it answered past success, in words ("" where
    all was taken). OSError (one line) where it could not be sent or was refused."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    from ..text import cut, visible

    bare, auth, hidden = _basic(url)
    request = urllib.request.Request(
        bare,
        data=data,
        method="POST",
        headers={"Content-Type": "application/x-protobuf", **auth},
    )
    host = urlsplit(bare).hostname or ""
    handlers = []
    if host in ("127.0.0.1", "localhost", "::1"):  # a local collector: never through a proxy
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as answer:
            body = answer.read()
    except urllib.error.HTTPError as e:
        said = " ".join(e.read(2000).decode("utf-8", "replace").split())
        for secret in hidden:  # (a collector that echoes what it was sent)
            said = said.replace(secret, REDACTED)
        said = visible(cut(said, 200))
        raise OSError(
            f"the collector answered {e.code} {e.reason}" + (f": {said}" if said else "")
        ) from None
    except urllib.error.URLError as e:
        reason = (
            e.reason.strerror if isinstance(e.reason, OSError) and e.reason.strerror else e.reason
        )
        raise OSError(f"cannot send: {reason}") from None
    except (TimeoutError, ConnectionError) as e:
        raise OSError(f"cannot send: {e.strerror or e}") from None
    return _partial(body)


def _partial(body: bytes) -> str:
    """What an ExportTraceServiceResponse says it rejected ("": nothing)."""
    if not body:
        return ""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    answer = ExportTraceServiceResponse()
    try:
        answer.ParseFromString(body)
    except DecodeError:
        return ""
    partial = getattr(answer, "partial_success", None)
    if partial is None or (not partial.rejected_spans and not partial.error_message):
        return ""
    from ..text import cut, visible

    return visible(cut(f"{partial.rejected_spans} spans rejected: {partial.error_message}", 200))
