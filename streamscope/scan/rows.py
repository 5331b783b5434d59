"""The per-file analysis as rows: a plain function, a path (or bytes) in, rows out.

No I/O besides reading the file, no global state: a process pool, Ray or Spark can run
it as it is. The rows say what `inspect --json` says of the same file (the same
`analyze`), flattened into four tables a database can hold.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import asdict, field
from urllib.parse import urlsplit

import orjson

from ..analysis import analyze
from ..analysis.driver import EMPTY_CASSETTE
from ..core import jsonio
from ..core.calls import arguments_text
from ..core.engine import StreamResult
from ..core.record import record
from ..inputs import ExchangeInfo
from ..recording.format import RecordingError


@record(slots=True)
class ExchangeRow:
    file: str
    exchange: int
    stream: bool
    dialect: str | None
    host: str | None
    model: str | None
    status: int | None
    ended: str | None
    frames: int
    calls: int
    anomaly_kinds: list[str]
    contract_kinds: list[str]
    started_ns: int | None  # the request's time in the recording (None: no request)
    duration_ms: float | None  # request to end line (None: no end line)
    turn: int | None = None  # a WebSocket session's response (a row each), None: not one
    # its framing, as `inspect --json` names it ("sse", "aws-eventstream"; None: no stream)
    framing: str | None = None


@record(slots=True)
class CallRow:
    file: str
    exchange: int
    position: int  # in the order the calls began, from 0
    id: str | None
    name: str | None
    type: str | None
    arguments_chars: int
    repaired: bool  # the arguments did not parse
    turn: int | None = None


@record(slots=True)
class AnomalyRow:
    file: str
    exchange: int
    kind: str
    severity: str
    frame: int
    count: int
    cut_by_client: bool
    message: str
    turn: int | None = None


@record(slots=True)
class ContractRow:
    file: str
    exchange: int
    stream: int | None
    kind: str
    severity: str
    message: str
    turn: int | None = None  # the session's response whose request it is about


@record(slots=True)
class FileRows:
    """One file's rows, or the one line saying why it could not be read."""

    file: str
    format: str | None = None
    error: str | None = None
    exchanges: list[ExchangeRow] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)
    anomalies: list[AnomalyRow] = field(default_factory=list)
    contract: list[ContractRow] = field(default_factory=list)
    # what a scan says of the file as a whole (a cassette whose streams are all empty)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> FileRows:
        return cls(
            d["file"],
            d["format"],
            d["error"],
            [ExchangeRow(**r) for r in d["exchanges"]],
            [CallRow(**r) for r in d["calls"]],
            [AnomalyRow(**r) for r in d["anomalies"]],
            [ContractRow(**r) for r in d["contract"]],
            list(d.get("notes") or []),
        )


_SURROGATE = re.compile("[\ud800-\udfff]")


def file_text(path: str) -> str:
    """A path as every output of a scan names it (rows, --jsonl, the tables, Parquet, the
    summary): the bytes a name that is not UTF-8 holds (`os` gives them as surrogates,
    which no encoder writes) as `\\xff`, the rest as it is; a terminal is shown it
    through `visible`, as any file-derived text."""
    if _SURROGATE.search(path) is None:
        return path
    try:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", path)


def dumps(value: dict) -> bytes:
    """A row as `--jsonl` prints it (core/jsonio.dumps): a string that is no Unicode (a
    lone surrogate, as a JSON `\\ud800` in a recording decodes to) as that escape, never
    the end of the output, and C1 controls and bidi overrides escaped too, never raw on
    a terminal; each the same string read back."""
    return jsonio.dumps(value, shown=True)


def stored(value: dict) -> bytes:
    """A row as DuckDB reads it in: a lone surrogate, which no UTF-8 column can hold, as
    the text `\\ud800` (DuckDB refuses the escape)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return jsonio.dumps(_clean(value))


def _clean(value: object) -> object:
    if isinstance(value, str):
        return file_text(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _text(value: object) -> str | None:
    """An id or name as a column holds it (a provider may send any JSON value)."""
    return value if value is None or isinstance(value, str) else str(value)


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname or None
    except ValueError:
        return None


def analyze_file(path: str | os.PathLike[str], name: str | None = None) -> FileRows:
    """Every exchange of `path` as rows; never raises for a bad file (`error` says why).
    `name` is the file as the rows name it (default: `path`)."""
    file = name if name is not None else file_text(os.fspath(path))
    try:
        a = analyze(path)
    except RecordingError as e:
        return FileRows(file, error=file_text(str(e)))
    except OSError as e:
        return FileRows(file, error=f"{file}: {e.strerror or e}")
    except Exception as e:  # a bug must cost one file, not the scan
        return FileRows(file, error=file_text(f"{file}: internal error: {type(e).__name__}: {e}"))
    out = FileRows(file, a.format)
    out.notes = [n for n in a.notes if n == EMPTY_CASSETTE]
    streams: dict[int, list[StreamResult]] = {}
    for one in a.streams:  # (a WebSocket session has one per response: a row each)
        streams.setdefault(one.exchange, []).append(one)
    infos = a.exchanges or [ExchangeInfo(s.exchange, stream=True) for s in a.streams]
    contract: dict[tuple[int, int | None], list[str]] = {}
    for f in a.contract:
        contract.setdefault((f.exchange, f.turn), []).append(f.kind)
        out.contract.append(
            ContractRow(file, f.exchange, f.stream, f.kind, f.severity, f.message, f.turn)
        )
    for info in infos:
        found: list[StreamResult | None] = [*streams.get(info.exchange, [])]
        for s in found or [None]:
            _rows(out, file, info, s, contract)
    return out


def _rows(
    out: FileRows,
    file: str,
    info: ExchangeInfo,
    s: StreamResult | None,
    contract: dict[tuple[int, int | None], list[str]],
) -> None:
    """The rows of one exchange, or of one response of a session."""
    turn = s.turn if s is not None else None
    duration = None
    if info.end_ns is not None and info.start_ns:
        duration = (info.end_ns - info.start_ns) / 1e6
    row = ExchangeRow(
        file,
        info.exchange,
        s is not None,
        s.dialect if s is not None else info.dialect,
        _host(info.url),
        info.model,
        info.status,
        s.ended if s is not None else info.end_reason,
        s.frames if s is not None else 0,
        len(s.tool_calls) if s is not None else 0,
        [x.kind for x in s.anomalies] if s is not None else [],
        contract.get((info.exchange, turn), []),
        info.start_ns or None,
        duration,
        turn,
        s.framing if s is not None else None,
    )
    out.exchanges.append(row)
    if s is None:
        return
    for i, (c, r) in enumerate(zip(s.tool_calls, s.repairs, strict=True)):
        args = arguments_text(c.arguments)
        out.calls.append(
            CallRow(
                file,
                info.exchange,
                i,
                _text(c.id),
                _text(c.name),
                _text(c.type),
                len(args),
                r is not None,
                turn,
            )
        )
    for x in s.anomalies:
        out.anomalies.append(
            AnomalyRow(
                file,
                info.exchange,
                x.kind,
                x.severity,
                x.frame,
                x.count,
                x.cut_by_client,
                x.text(),
                turn,
            )
        )


def analyze_bytes(data: bytes, name: str) -> FileRows:
    """`analyze_file` of a file's content (an engine that hands over bytes: Spark's
    binaryFile, an object store). The content is read from a private temporary file."""
    fd, tmp = tempfile.mkstemp(prefix="streamscope-scan-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        rows = analyze_file(tmp, name)
        if rows.error is not None:  # said of the file the caller named, not the copy
            rows.error = rows.error.replace(tmp, name)
        return rows
    finally:
        os.unlink(tmp)
