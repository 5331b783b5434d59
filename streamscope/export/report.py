"""A shareable report of one exchange or a whole recording (`export --format md|html`):
what both formats show, built once from the analysis layer's typed results.

`build` reads each stream frame by frame (its dialect's engine, as the replay does) and
keeps, per frame kept, robust's call table and every client's as they stood; the
anomalies at their frames; what each client builds at the end; the contract. Every
recorded value is kept as data (the formats escape it where they write it), every
credential the requests carried is masked in every string (a HAR's, a --no-redact
recording's: the report never holds a secret a recording masks), and with `redact` the
conversation's text goes (below), keys and shapes kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import field
from typing import Any

from ..analysis import Analysis, analyze
from ..core.anomalies import SEVERITY_ORDER
from ..core.calls import Call, StrategyError
from ..core.contract import KINDS as CONTRACT_KINDS
from ..core.engine import Engine, StreamResult
from ..core.frames import Frame
from ..core.record import record
from ..dialects import ANOMALY_KINDS, dialect, open_engine, request_facts
from ..inputs import Source, open_input
from ..inputs.encoding import read_request
from ..recording.mask import Secrets
from ..text import visible

MAX_STATES = 400  # frames kept per stream (a longer stream: its marked frames and a spread)
MAX_CELL = 2000  # characters of one cell (a call's arguments) kept
MAX_BODY = 20000  # characters of a request body kept
MAX_CALLS = 100  # calls of one table kept (a stream of thousands: the first, the rest counted)
GONE = "…"  # what a redacted text becomes
# a request body's string values kept by --redact-content: what names things, never text
# the conversation holds
KEPT_KEYS = frozenset(
    {"model", "role", "type", "name", "id", "call_id", "tool_call_id", "tool_use_id", "stream"}
)


@record(slots=True)
class Cell:
    """One call as a table row shows it."""

    choice: int
    index: object
    id: object
    name: object
    arguments: object  # as held (text, or the JSON value a provider sent)
    fragments: int
    item_id: object = None  # the output item's id, where a dialect has two
    signature: object = None  # a Gemini call's thoughtSignature


@record(slots=True)
class Table:
    """One strategy's calls at a frame, or what it raised."""

    calls: list[Cell] | None
    error: str | None = None
    differs: bool | None = None  # from robust's at the same frame (None: robust's own)
    more: int = 0  # calls past MAX_CALLS, left out
    said: str = ""  # what differs from robust, as inspect says it ("" where none does)


@record(slots=True)
class FrameView:
    number: int  # 0: before the first frame
    time_ms: float | None
    summary: str  # the frame in one line ("" when redacted)
    tables: dict[str, Table]  # robust first, then the clients
    marks: list[str]  # the anomaly kinds first seen at this frame
    text: str = ""  # the text answer so far ("…" when redacted)
    reasoning: str = ""  # the reasoning so far


@record(slots=True)
class Finding:
    """An anomaly at its frame, or a contract finding (frame None)."""

    kind: str
    severity: str
    message: str
    frame: int | None = None
    index: object = None


@record(slots=True)
class StreamReport:
    exchange: int
    turn: int | None
    dialect: str
    framing: str
    ended: str
    frames: int
    request: dict[str, Any]  # method, url, model, status, tools, headers, body
    states: list[FrameView]
    anomalies: list[Finding]
    clients: dict[str, Table]  # at the end of the stream, robust first
    finding_frame: int  # the frame of the first finding (or the last frame)
    content: str = ""
    notes: list[str] = field(default_factory=list)
    reasoning: str = ""
    calls: int = 0  # robust's calls at the end: 0, a text-only stream
    # the call table's columns in the dialect's words: [label, Cell field] (Terms.call_fields)
    columns: list[list[str]] = field(default_factory=list)

    def first_call_frame(self) -> int | None:
        """The first frame kept whose robust table holds a call (None: none does)."""
        for st in self.states:
            robust = st.tables.get("robust")
            if robust is not None and robust.calls:
                return st.number
        return None


@record(slots=True)
class Report:
    source: str
    redacted: bool
    streams: list[StreamReport]
    contract: list[Finding]
    masked: int = 0  # credentials masked in the report itself
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def build(
    path: str,
    exchange: int | None = None,
    redact: bool = False,
    one: int | None | bool = False,
    response: int | None = None,
) -> Report:
    """The report of `path` (only `exchange`, when given; only the WebSocket session's
    response `response`, when given). `one`: keep one frame's state per stream (the
    Markdown's): that frame, or None, its first finding's; False: every frame (up to
    MAX_STATES). Raises RecordingError, OSError, ValueError."""
    analysis = analyze(path, exchange)
    chosen = [
        s
        for s in analysis.streams
        if (exchange is None or s.exchange == exchange) and (response is None or s.turn == response)
    ]
    if response is not None and not chosen:
        turns = [s.turn for s in analysis.streams if s.exchange == exchange and s.turn]
        if exchange is None:
            raise ValueError(f"no WebSocket session has a response {response}")
        if not turns:
            raise ValueError(f"exchange {exchange} is no WebSocket session, it has no responses")
        raise ValueError(f"the WebSocket session has responses 1-{max(turns)}, not {response}")
    with open_input(path, check=True) as source:
        secrets = _secrets(source, analysis)
        streams = [_stream(source, analysis, s, redact, one) for s in chosen]
    contract = [
        Finding(f.kind, f.severity, _said(f.kind, f.message, redact)) for f in analysis.contract
    ]
    if not streams:
        raise ValueError("no stream to report" + (f" in exchange {exchange}" if exchange else ""))
    notes = list(analysis.notes)
    if analysis.masked or analysis.redacted:  # (at record time: inspect's note)
        from ..analysis.text_report import masked_note

        notes.append(masked_note(analysis.masked, analysis.redacted))
    report = Report(path, redact, streams, contract, notes=notes)
    report.masked = _mask(report, secrets)
    return report


def _said(kind: str, message: str, redact: bool) -> str:
    """A finding's message, or (redacted) its kind's meaning: a message may quote the
    values it is about."""
    if not redact:
        return message
    known = ANOMALY_KINDS.get(kind) or CONTRACT_KINDS.get(kind)
    return known.meaning if known is not None else kind


def _stream(
    source: Source, analysis: Analysis, s: StreamResult, redact: bool, one: int | None | bool
) -> StreamReport:
    info = next((i for i in analysis.exchanges if i.exchange == s.exchange), None)
    ex = source.exchange(s.exchange)
    anomalies = [
        Finding(a.kind, a.severity, _said(a.kind, a.text(), redact), a.frame, a.index)
        for a in s.anomalies
    ]
    marks = {f: list(kinds) for f, kinds in s.anomaly_frames.items()}
    notes: list[str] = []
    states: list[FrameView] = []
    first = _opening(s)
    kept = None if one is False else {first if one is None or one is True else int(one)}
    frames, engine, asked = _feed(source, s, info, analysis)
    states = _states(frames, engine, s, dialect(ex.dialect()).summarize, marks, redact, notes, kept)
    clients = _tables(s.strategies, s.tool_calls, redact, s.by_value, said=True)
    if dialect(s.dialect).terms.item_ids:  # each call's response, numbered as inspect does
        from ..core.events import response_number

        for table in [*clients.values(), *(t for st in states for t in st.tables.values())]:
            for cell in table.calls or ():
                cell.choice = response_number(s.turn, cell.choice)
    tools = analysis.tools_of(s)
    recorded = ex.request is not None
    request: dict[str, Any] = {
        "recorded": recorded,  # False: a body file, a chunk log (no request to show)
        "method": info.method if info and recorded else "",
        "url": info.url if info and recorded else "",
        "model": info.model if info else None,
        "status": info.status if info else None,
        "tools": [t.name for t in tools] if tools else [],
        "headers": _headers(ex.request.headers) if ex.request is not None else [],
        "response_headers": _headers(info.headers) if info else [],
        "body": _body(ex.request, redact, asked) if ex.request is not None else None,
        # a session's response: the client message that opened it (its type), the
        # handshake above being the session's, not the response's
        "message": _message_type(asked) if s.turn is not None else None,
    }
    return StreamReport(
        s.exchange,
        s.turn,
        s.dialect,
        s.framing,
        s.ended,
        s.frames,
        request,
        states,
        anomalies,
        clients,
        first,
        _text(s.content, redact),
        notes,
        _text(s.reasoning_content, redact),
        len(s.tool_calls),
        [list(c) for c in dialect(s.dialect).terms.call_fields()],
    )


def _opening(s: StreamResult) -> int:
    """The frame a stream's report opens at: its first error's, else its first
    warning's, else its first finding's (no finding: its last frame)."""
    found = [a for a in s.anomalies if a.frame > 0]
    if not found:
        return s.frames
    return min(found, key=lambda a: (SEVERITY_ORDER.get(a.severity, 9), a.frame)).frame


def _message_type(message: object) -> str:
    """What a session's client message is: its `type` ("response.create")."""
    kind = message.get("type") if isinstance(message, dict) else None
    return visible(str(kind)) if kind is not None else "a client message"


def _text(text: str, redact: bool) -> str:
    """Text the model wrote, as a report holds it: "…" when redacted."""
    return GONE if redact and text else visible(text, lines=True)


def _feed(
    source: Source, s: StreamResult, info: Any, analysis: Analysis
) -> tuple[Iterable[Frame], Engine, object]:
    """The stream's frames and a fresh engine to read them as inspect did, and what its
    own request was (a session's response: the client message that opened it; None:
    the exchange's request)."""
    ex = source.exchange(s.exchange)
    tools = info.tools if info else None
    form = info.response_format if info else None
    if s.turn is not None:
        ws = ex.session()
        if ws is not None and 0 < s.turn <= len(ws.turns):
            turn = ws.turns[s.turn - 1]
            facts = request_facts(dialect(ws.dialect), info.url if info else "", turn.request)
            engine = open_engine(
                ws.dialect, s.exchange, turn.tools or facts.tools or tools, facts.response_format
            )
            return turn.frames, engine, turn.request
    engine = open_engine(ex.dialect(), s.exchange, tools, form, chunk_log=source.chunk_log(ex.info))
    return ex.frames(), engine, None


def _headers(headers: Any) -> list[list[str]]:
    """Headers as shown: control characters visible (a header is no text to render)."""
    return [[visible(str(k)), visible(str(v))] for k, v in headers]


def _states(
    frames: Iterable[Frame],
    engine: Engine,
    s: StreamResult,
    summarize: Any,
    marks: dict[int, list[str]],
    redact: bool,
    notes: list[str],
    only: set[int] | None = None,
) -> list[FrameView]:
    """The stream frame by frame: every frame, or (a long stream) its marked frames, its
    first and last and a spread between, said in `notes`."""
    if only is None:
        kept, rule = _kept(s.frames, marks)
        if rule:
            notes.append(f"{s.frames} frames, {len(kept)} kept in this report: {rule}")
    else:
        kept = only | {0}
    states = [FrameView(0, None, "", _tables(engine.strategy_calls(), None, redact), [])]
    for number, frame in enumerate(frames, 1):
        engine.feed(frame)
        if number not in kept:
            continue
        ms = None
        if frame.time_ns is not None:  # (already an offset from the request)
            ms = round(frame.time_ns / 1e6, 3)
        robust = engine.calls_now()
        states.append(
            FrameView(
                number,
                ms,
                "" if redact else visible(summarize(frame))[:300],
                _tables(engine.strategy_calls(), robust, redact, s.by_value),
                marks.get(number, []),
                _text(engine.content_now(), redact),
                _text(engine._summary()[2], redact),
            )
        )
    return states


def _kept(total: int, marks: dict[int, list[str]]) -> tuple[set[int], str]:
    """The frames a stream's page keeps, and the rule that kept them, in words ("":
    every frame)."""
    if total < MAX_STATES:
        return set(range(total + 1)), ""
    every = sorted(f for f, k in marks.items() if k)
    marked = every[: MAX_STATES // 2]
    step = max(1, total // (MAX_STATES - len(marked)))
    kept = {0, total, *marked, *range(1, total + 1, step)}
    if not every:
        said = "no frame is marked"
    elif len(marked) == len(every):
        said = f"all {len(every)} marked frames"
    else:
        said = f"the first {len(marked)} of {len(every)} marked frames (to frame {marked[-1]})"
    spread = (
        f"one frame in {step} (1, {1 + step}, {1 + 2 * step}, …)" if step > 1 else "every frame"
    )
    return kept, f"{said}, {spread} and the last; a frame not kept shows the one before it"


def _tables(
    strategies: Any,
    robust: list[Call] | None,
    redact: bool,
    by_value: bool = False,
    said: bool = False,
) -> dict[str, Table]:
    """Each strategy's table (robust first); `robust`: the calls others are told apart
    from (None: strategies' own robust entry); `said`: with what differs, in inspect's
    words (redacted: arguments by their shape)."""
    from ..analysis.text_report import describe_difference
    from ..core.engine import value_key

    key = value_key if by_value else Call.key
    base = robust if robust is not None else strategies.get("robust")
    out: dict[str, Table] = {}
    for name, got in strategies.items():
        if isinstance(got, list):
            differs = None
            if name != "robust" and isinstance(base, list):
                differs = [key(c) for c in got] != [key(c) for c in base]
            cells = [_cell(c, redact) for c in got[:MAX_CALLS]]
            out[name] = Table(cells, differs=differs, more=max(len(got) - MAX_CALLS, 0))
            if said and differs and isinstance(base, list):
                ours, theirs = (_shaped(base), _shaped(got)) if redact else (base, got)
                out[name].said = visible(describe_difference(ours, theirs, by_value))
        elif isinstance(got, StrategyError):
            # redacted: the exception's class alone (an SDK's message may quote the input)
            error = got.error.partition(":")[0] if redact else got.error
            out[name] = Table(None, f"{error} (frame {got.frame})")
        else:
            out[name] = Table(None, f"not modelled: {got}")
    return out


def _cell(c: Call, redact: bool) -> Cell:
    args = c.arguments
    if redact:
        args = shape(args)
    elif isinstance(args, str) and len(args) > MAX_CELL:
        args = args[:MAX_CELL] + f"… ({len(args) - MAX_CELL} more characters)"
    return Cell(c.choice, c.index, c.id, c.name, args, c.fragments, c.item_id, c.signature)


def _shaped(calls: list[Call]) -> list[Call]:
    from dataclasses import replace

    return [replace(c, arguments=shape(c.arguments)) for c in calls]


def _body(request: Any, redact: bool, own: object = None) -> str | None:
    """The request body as text (`own`: a session response's client message, in its
    place; redacted: its JSON with the conversation's strings gone); cut at MAX_BODY."""
    import orjson

    from ..core import jsonio

    data = read_request(request).data
    value: object = own
    try:
        if value is None:
            value = jsonio.loads(data)
    except orjson.JSONDecodeError:
        value = None
        if redact:
            return f"({len(data)} bytes, not JSON: left out)"
    if value is not None:
        if redact:
            value = _redact_value(value, None, 0)
        text = jsonio.dumps(value, indent=True).decode()
    else:
        text = data.decode("utf-8", "replace")
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY] + f"\n… ({len(text) - MAX_BODY} more characters)"
    return text


def _redact_value(value: object, key: str | None, depth: int) -> object:
    """A request body with the conversation gone: each string but those naming things
    (KEPT_KEYS) "…", each number below the top level (a tool result's, an argument's;
    not the request's own settings: max_tokens, temperature) 0."""
    if isinstance(value, dict):
        return {k: _redact_value(v, k, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, None, depth + 1) for v in value]
    if isinstance(value, str):
        return value if key in KEPT_KEYS else GONE
    if isinstance(value, int | float) and not isinstance(value, bool) and depth > 1:
        return 0
    return value


def shape(args: object) -> object:
    """Arguments with their values gone, keys and shape kept: a JSON value's strings
    become "…" and its numbers 0; text (whole or a fragment of JSON) lexed the same way,
    so a call half-streamed keeps its keys too."""
    if isinstance(args, str):
        return _shape_text(args)
    if isinstance(args, dict):
        return {k: shape(v) for k, v in args.items()}
    if isinstance(args, list):
        return [shape(v) for v in args]
    if isinstance(args, bool) or args is None:
        return args
    if isinstance(args, int | float):
        return 0
    return GONE


def _shape_text(text: str) -> str:
    """JSON text (maybe cut short) with each string that is not an object's key written
    "…" and each number 0; anything outside JSON's grammar goes as "…" too."""
    out: list[str] = []
    stack: list[str] = []  # "{" or "["
    key_next = False  # in an object, the next string is a key
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j, closed = i + 1, False
            while j < n:
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == '"':
                    closed = True
                    break
                j += 1
            literal = text[i : j + 1] if closed else text[i:]
            if key_next:
                out.append(literal)
            else:
                out.append('"…"' if closed else '"…')
            i = j + 1
            continue
        if ch in "{[":
            stack.append(ch)
            key_next = ch == "{"
            out.append(ch)
        elif ch in "}]":
            if stack:
                stack.pop()
            key_next = False
            out.append(ch)
        elif ch == ":":
            key_next = False
            out.append(ch)
        elif ch == ",":
            key_next = bool(stack) and stack[-1] == "{"
            out.append(ch)
        elif ch in " \t\r\n":
            out.append(ch)
        elif ch in "-0123456789":
            while i + 1 < n and text[i + 1] in "-+.eE0123456789":
                i += 1
            out.append("0")
        elif text.startswith(("true", "false", "null"), i):
            word = next(w for w in ("true", "false", "null") if text.startswith(w, i))
            out.append(word)
            i += len(word) - 1
        else:  # not JSON: the rest is text of the conversation
            out.append(GONE)
            break
        i += 1
    return "".join(out)


def _secrets(source: Source, analysis: Analysis) -> Secrets:
    """Every credential the input holds (its command line's, a HAR's, each request's), as
    its reader found them (inputs/masking.py: what it reads is masked with them already;
    the report's own strings are masked with them again)."""
    values: list[str] = list(source.known)
    for info in analysis.exchanges:
        try:
            found = source.exchange(info.exchange).secrets
        except (KeyError, IndexError, ValueError):
            continue
        values += found.values if found is not None else []
    return Secrets(values)


def _mask(report: Report, secrets: Secrets) -> int:
    """Every string of the report with the credentials masked; how many were."""
    if not secrets:
        return 0
    total = 0

    def walk(value: Any) -> Any:
        nonlocal total
        if isinstance(value, str):
            masked, n = secrets.text(value)
            total += n
            return masked
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        if hasattr(value, "__dataclass_fields__"):
            for name in value.__dataclass_fields__:
                setattr(value, name, walk(getattr(value, name)))
        return value

    walk(report)
    return total


def each_state(report: Report) -> Iterator[tuple[StreamReport, FrameView]]:
    for s in report.streams:
        for state in s.states:
            yield s, state


def write(
    path: str,
    fmt: str,
    exchange: int | None,
    frame: int | None,
    redact: bool,
    response: int | None = None,
) -> Any:
    """`export --format md|html`: the report's bytes, as an Export (fixtures.py)."""
    from .fixtures import Export

    # (the Markdown shows one frame: only that one's tables are made)
    report = build(path, exchange, redact, frame if fmt == "md" else False, response)
    if fmt == "md":
        from .report_md import render
    else:
        from .report_html import render
    data = render(report, frame).encode("utf-8", "backslashreplace")
    frames = sum(s.frames for s in report.streams)
    return Export(data, frames, frames, report.masked)
