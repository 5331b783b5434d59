"""`streamscope export` of a WebSocket session: the exchange whose response is its `101`,
its `message` lines one per frame.

Every format says something true of it. `recording` copies the session's lines (its
frames as recorded, masked as the recorder masks them); `session` writes it as JSON, turn
by turn; `pytest` writes a module that plays it back to the dialect's own SDK over a
local WebSocket (session_pytest.py); `sse` and `chunks` write one turn's stream, so a
session of several turns needs `--turn`. `--turn K` keeps turn K alone in every format;
`--minimal` keeps the turns and the frames that carry the findings
(session_minimal.py).

The session is read here as the driver reads it (messages reassembled from the frames,
split into turns by the dialect, each turn read by its engine, the session's contract
checked over its turns), but from the frames masked: what a fixture holds is what its
findings are about.
"""

from __future__ import annotations

import copy
import os
from dataclasses import field

import orjson

from .. import __version__
from ..analysis.driver import read_turns
from ..core import jsonio
from ..core.anomalies import SERIOUS
from ..core.contract import Finding
from ..core.engine import UNFINISHED, StreamResult
from ..core.record import record
from ..dialects import Dialect, dialect, request_facts, session_turns
from ..dialects.base import Turn
from ..framing.session import CONTROL, Reassembler, WsMessage
from ..inputs import Exchange, Source
from ..inputs.encoding import read_request
from ..inputs.masking import mask_frames
from ..recording.format import (
    OPCODE_NUMBERS,
    End,
    Header,
    Message,
    Request,
    Response,
    line_json,
    text_or_b64,
)
from ..recording.mask import Masking, Secrets, mask_request

# The formats that write a whole session; sse and chunks write one turn's stream.
SESSION_FORMATS = ("recording", "session", "pytest")


@record(slots=True)
class Entry:
    """One message of the session being written: the message (its payload masked), the
    recorded frame lines it was made of (masked; None: written anew as one frame), and
    the turn that holds it in the reading it came from (None: no turn does)."""

    message: WsMessage
    frames: list[Message] | None
    turn: int | None = None
    masked: int = 0  # credentials export masked in it (beside those its recording had)

    @property
    def control(self) -> bool:
        return self.message.opcode in CONTROL


@record(slots=True)
class Reading:
    """A session's entries read as the driver reads a session: its turns, each one's
    stream, the contract's findings over them, and each turn's label (the number it has
    in the recorded session: a selection keeps the numbers it was asked by)."""

    turns: list[Turn]
    results: list[StreamResult]
    findings: list[Finding]
    labels: list[int]
    placed: list[int | None]  # for each entry, the number of the turn holding it

    def label(self, turn: Turn) -> int:
        return self.labels[turn.turn - 1]


@record(slots=True)
class View:
    """The session of one exchange, opened for export."""

    source: Source
    exchange: Exchange
    told: Dialect
    entries: list[Entry]  # every message, control ones too, in order
    secrets: Secrets
    start_ns: int  # the handshake request's time (times are written from it)
    end_reason: str
    end_error: str | None
    reading: Reading = field(init=False)

    def __post_init__(self) -> None:
        self.reading = read(self, self.entries)
        labels = self.reading.labels
        for entry, k in zip(self.entries, self.reading.placed, strict=True):
            entry.turn = None if k is None else labels[k - 1]

    @property
    def number(self) -> int:
        return self.exchange.number

    def where(self) -> str:
        return f"exchange {self.number}"


def is_session(ex: Exchange) -> bool:
    return ex.info.framing == "websocket" and ex.session() is not None


def open_view(source: Source, ex: Exchange) -> View:
    """The session of exchange `ex`: its frames reassembled and read (as recorded: what
    is written is masked last, `masked_entries`)."""
    assert ex.index is not None  # a session is only ever in a recording
    session = ex.session()
    assert session is not None
    lines = list(ex.index.messages(ex.number))
    req = ex.request
    secrets = ex.secrets or (  # (its reader's: the request it holds is masked)
        Secrets.of_request(req.url, req.headers, read_request(req).data)
        if req is not None
        else Secrets([])
    )
    entries = [Entry(m, frames) for m, frames in _messages(lines)]
    end = ex.end
    return View(
        source,
        ex,
        dialect(session.dialect),
        entries,
        secrets,
        req.t_ns if req is not None else ex.info.start_ns,
        end.reason if end is not None else UNFINISHED,
        end.error if end is not None else None,
    )


def masked_entries(view: View, entries: list[Entry]) -> list[Entry]:
    """The entries with the credentials the handshake carried masked (each peer's frames
    as one body: mask_frames), each counting those masked in it."""
    if not view.secrets:
        return entries
    frames = [list(e.frames) if e.frames is not None else _lines_of(e) for e in entries]
    masked, _ = mask_frames(view.secrets, [f for fs in frames for f in fs])
    out = [copy.copy(e) for e in entries]
    at = 0
    for e, fs in zip(out, frames, strict=True):
        mine, at = masked[at : at + len(fs)], at + len(fs)
        if all(m is f for m, f in zip(mine, fs, strict=True)):
            continue
        e.masked += sum(m.masked - f.masked for m, f in zip(mine, fs, strict=True))
        e.message = copy.copy(e.message)
        e.message.data = b"".join(f.data_bytes for f in mine)
        if e.frames is not None:
            e.frames = mine
    return out


def _messages(lines: list[Message]) -> list[tuple[WsMessage, list[Message]]]:
    """The messages the frames make (as inputs/session.py reassembles them), each with
    the frame lines it was made of."""
    joiner = Reassembler()
    out: list[tuple[WsMessage, list[Message]]] = []
    open_: dict[str, list[Message]] = {}  # by sender: the data message's frames so far
    last = 0
    for line in lines:
        last = line.t_ns
        got = joiner.feed(
            line.sender, line.opcode, line.fin, line.data_bytes, line.t_ns, line.compressed
        )
        if isinstance(line.opcode, int) or line.opcode in CONTROL:
            out += [(m, [line]) for m in got]  # a message of its own
            continue
        mine = open_.get(line.sender, [])
        if line.opcode != "continuation" and mine:  # the open message ended unfinished
            out.append((got.pop(0), mine))
            mine = []
        mine.append(line)
        open_[line.sender] = mine
        if got:  # its last frame
            out.append((got[0], mine))
            open_[line.sender] = []
    for m in joiner.finish(last):
        out.append((m, open_.get(m.sender, [])))
    return out


def read(view: View, entries: list[Entry]) -> Reading:
    """`entries` read as a session: split into turns by the dialect, each turn read by its
    engine, the session's contract checked over them (on this session alone)."""
    messages = [e.message for e in entries]
    turns = session_turns(view.told, messages, view.start_ns)
    info = copy.copy(view.exchange.info)  # (reading a turn may set its model)
    results = read_turns(info, turns, view.end_reason, view.end_error, info.status)
    findings: list[Finding] = []
    if view.told.session_contract is not None:
        findings, _ = view.told.session_contract(1, turns, results, {})
    # the numbers the turns had where the entries came from (a reading of the whole
    # session: 1..n)
    before = list(dict.fromkeys(e.turn for e in entries if e.turn is not None))
    labels = before if len(before) == len(turns) else [t.turn for t in turns]
    return Reading(turns, results, findings, labels, place(messages, turns))


def place(messages: list[WsMessage], turns: list[Turn]) -> list[int | None]:
    """For each message, the turn that holds it (None: none does): a client message its
    turn sent (or opened it: the turn's request), a server message one of its frames,
    each turn's frames met in order."""
    client = {id(m): t.turn for t in turns for m in t.client}
    frames = [list(reversed(t.frames)) for t in turns]  # what is left of each, last first
    unopened = [t for t in turns if t.request is not None]
    out: list[int | None] = []
    for m in messages:
        turn: int | None = None
        if m.opcode in CONTROL:
            pass
        elif m.sender == "client":
            turn = client.get(id(m))
            if turn is None and unopened:
                try:
                    body = jsonio.loads(m.data) if m.opcode == "text" else None
                except orjson.JSONDecodeError:
                    body = None
                if body is not None and body == unopened[0].request:
                    turn = unopened.pop(0).turn
        else:
            text = m.data.decode("utf-8", "replace")
            for t, left in zip(turns, frames, strict=True):
                if left and left[-1].data == text:
                    left.pop()
                    turn = t.turn
                    break
        out.append(turn)
    return out


def select(view: View, turn: int | None) -> list[Entry]:
    """The entries of turn `turn` (and the closes; None: every entry)."""
    if turn is None:
        return list(view.entries)
    labels = view.reading.labels
    if turn not in labels:
        raise ValueError(f"{view.where()}'s session has {_turns_words(labels)}, not turn {turn}")
    return [e for e in view.entries if e.turn == turn or e.message.opcode == "close"]


def _turns_words(labels: list[int]) -> str:
    if not labels:
        return "no turn"
    return f"one turn ({labels[0]})" if len(labels) == 1 else f"turns {labels_words(labels)}"


def labels_words(labels: list[int]) -> str:
    """ "1-3", "1, 4", "2"."""
    if len(labels) > 1 and labels == list(range(labels[0], labels[-1] + 1)):
        return f"{labels[0]}-{labels[-1]}"
    return ", ".join(map(str, labels))


def masked(entries: list[Entry]) -> int:
    """Credentials export masked in these entries."""
    return sum(e.masked for e in entries)


def one_turn(view: View, turn: int | None, fmt: str) -> Turn:
    """The turn a one-stream format writes: `turn`, or the session's only one."""
    reading = view.reading
    if not reading.turns:
        raise ValueError(f"{view.where()} is a WebSocket session with no turn: no stream to write")
    if turn is None:
        if len(reading.turns) == 1:
            return reading.turns[0]
        raise ValueError(
            f"{view.where()} is a WebSocket session of {_turns_words(reading.labels)}: "
            f"--format {fmt} writes one turn's stream, choose it with --turn "
            f"(or --format {', '.join(SESSION_FORMATS)} for the whole session)"
        )
    select(view, turn)  # (names the turns there are when there is no such one)
    return reading.turns[reading.labels.index(turn)]


def turn_tools(view: View, t: Turn) -> list | None:
    """The tools in force for the turn (as the driver hands them its engine)."""
    facts = request_facts(view.told, view.exchange.info.url, t.request)
    return t.tools or facts.tools or view.exchange.info.tools


# -- the session as a recording ------------------------------------------------------------


def recording(view: View, entries: list[Entry], whole: bool) -> bytes:
    """The session as a recording of one exchange: its handshake, its `101`, a `message`
    line per frame (a message written anew as one frame), its end line (at its recorded
    time when the session is `whole`, else at its last message's)."""
    source, ex = view.source, view.exchange
    header = source.header
    assert header is not None  # (a session is only ever in a recording)
    lines: list[dict] = [Header(created=header.created, notes=header.notes).to_json()]
    t0 = view.start_ns
    masking = Masking()
    req, resp = ex.request, ex.response
    if req is not None:
        got = mask_request(masking, 1, req.url, req.headers, req.body_bytes, stored=req.decoded)
        masked = req.masked + got.masked
        lines.append(
            Request.of(
                1, 0, req.method, got.url, got.headers, got.body, masked, got.decoded, req.redacted
            ).to_json()
        )
    if resp is not None:
        headers, n = masking.headers(1, resp.headers)
        lines.append(Response(1, resp.t_ns - t0, resp.status, headers, resp.masked + n).to_json())
    last = resp.t_ns if resp is not None else t0
    for e in entries:
        for line in _lines_of(e):
            line.exchange, line.t_ns = 1, line.t_ns - t0
            lines.append(line.to_json())
        last = max(last, e.message.t_ns)
    if ex.end is not None:
        _, error, n = masking.end(1, ex.end.error)
        masked = ex.end.masked + n
        end_t = ex.end.t_ns if whole else last
        lines.append(End(1, end_t - t0, ex.end.reason, error, masked).to_json())
    return b"".join(line_json(line) for line in lines)


def _lines_of(e: Entry) -> list[Message]:
    """An entry's frame lines: as recorded, or its message as one frame."""
    if e.frames is not None:
        return [copy.copy(line) for line in e.frames]
    m = e.message
    opcode = m.opcode if isinstance(m.opcode, int) else OPCODE_NUMBERS[m.opcode]
    return [Message.of(1, m.t_ns, m.sender, opcode, True, m.data)]


# -- the session as JSON -------------------------------------------------------------------


def session_json(view: View, entries: list[Entry]) -> bytes:
    """The session fixture: every message with its time (ns from the handshake), turn by
    turn, each turn's calls as streamscope's robust reading assembles them and its
    warning and error kinds; the messages no turn holds, the closes and the contract."""
    reading = read(view, entries)
    t0 = view.start_ns
    fixture = view.told.fixture
    turns: dict[int, dict] = {}
    for t, result in zip(reading.turns, reading.results, strict=True):
        turns[t.turn] = {
            "turn": t.turn,
            "recorded_turn": reading.label(t),
            "t_ns": t.start_ns - t0,
            "ended": t.ended,
            "final": t.frames[-1].event if t.ended and t.frames else None,
            "messages": [],
            "calls": [fixture.expected(c) for c in result.tool_calls],
            "anomalies": sorted({a.kind for a in result.anomalies if a.severity in SERIOUS}),
        }
    outside: list[dict] = []
    closes: list[dict] = []
    for seq, (e, holder) in enumerate(zip(entries, reading.placed, strict=True), 1):
        m = e.message
        if m.close is not None:
            code, reason = m.close
            closes.append({"from": m.sender, "t_ns": m.t_ns - t0, "code": code, "reason": reason})
            continue
        if e.control:
            continue  # pings and pongs
        item = _message_json(seq, m, t0)
        (turns[holder]["messages"] if holder is not None else outside).append(item)
    req = view.exchange.request
    url = Masking().request(1, req.url, req.headers, b"")[0] if req is not None else None
    end = view.exchange.end
    doc = {
        "format": "streamscope-session",
        "version": 1,
        "exported_by": f"streamscope {__version__}",
        "source": os.fsencode(view.source.path).decode("utf-8", "replace"),
        "exchange": view.number,
        "dialect": view.told.name,
        "url": url,
        "turns": list(turns.values()),
        "outside": outside,
        "closes": closes,
        "contract": [
            {
                "kind": f.kind,
                "severity": f.severity,
                "turn": f.turn,
                "message": f.message,
            }
            for f in reading.findings
        ],
        "end": None if end is None else {"reason": end.reason, "t_ns": end.t_ns - t0},
    }
    return jsonio.dumps(doc, indent=True, newline=True)


def _message_json(seq: int, m: WsMessage, t0: int) -> dict:
    key, text = text_or_b64("data", m.data)
    item: dict = {"seq": seq, "from": m.sender, "t_ns": m.t_ns - t0, key: text}
    if m.opcode != "text":
        item["opcode"] = m.opcode
    if m.invalid is not None:
        item["invalid"] = m.invalid
    if not m.complete:
        item["complete"] = False
    return item


def frames_of(entries: list[Entry]) -> int:
    """The server's data messages among `entries` (a turn's frames)."""
    return sum(1 for e in entries if e.message.sender == "server" and not e.control)
