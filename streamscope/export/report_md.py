"""`export --format md`: one stream's report for an issue comment (GitHub-flavoured
Markdown), under GitHub's 65,536 characters: the request, robust's call table at the
finding's frame and each client's beside it, the anomalies at their frames, what each
client builds, the contract.

Every recorded value is written as JSON (`text.quote`: control characters visible) and
then escaped for a GFM table cell (`esc`): only what Markdown or HTML would read as
markup there, so the raw text reads as itself and renders as the same text: no table
cell split by a `|`, no tag, no entity, no code span, no emphasis, no link, no math,
no mention.
"""

from __future__ import annotations

import re

from ..text import cut, plural, quote, visible
from .report import Cell, Finding, FrameView, Report, StreamReport, Table

LIMIT = 65000  # characters; GitHub's comment holds 65,536
CUT = (
    "\n> **Cut here**: the report is longer than an issue comment holds "
    "(`streamscope export --format html` writes it whole).\n"
)
# what GFM reads as markup in a table cell, each with how it is written as text:
# `|` (splits the cell), `\\` and `` ` `` (escapes, code spans), `*` `~` `$` (emphasis,
# strikethrough, math) backslash-escaped; `<` and `&` (tags, entities) as references;
# `_` only at a word's edge (GFM emphasises no `_` inside a word: get_weather stays);
# `](` / `][` (a link's middle); `@` opening a name (a mention); line ends of any kind.
_MARKUP = re.compile(
    r"[|\\`*~$]|[<&]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|\](?=[(\[])"
    r"|(?<![0-9A-Za-z])@(?=[0-9A-Za-z])|[\r\n\u2028\u2029]"
)
_REFERENCE = {"<": "&lt;", "&": "&amp;", "@": "&#64;"}


def _escaped(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _REFERENCE:
        return _REFERENCE[ch]
    if ch in "\r\n\u2028\u2029":
        return f"&#{ord(ch)};"
    return "\\" + ch


def esc(text: str) -> str:
    """Text as a GFM table cell renders it literally (and as it reads raw)."""
    return _MARKUP.sub(_escaped, text)


def val(value: object, width: int = 300) -> str:
    """A recorded value, quoted and escaped (`quote` makes line breaks `\\n`)."""
    return esc(quote(value, width))


def txt(text: str, width: int = 600) -> str:
    """Recorded text (a finding's message, which quotes values), escaped, on one line."""
    return esc(cut(visible(text), width))


def pick(report: Report, frame: int | None) -> tuple[StreamReport, FrameView | None]:
    """The stream shown (the first with a finding, else the first holding a call, else
    the first) and its state at `frame` (default: its first finding's; a stream with
    calls and no finding: its end)."""
    streams = report.streams
    stream = next(
        (s for s in streams if s.anomalies), next((s for s in streams if s.calls), streams[0])
    )
    want = stream.finding_frame if frame is None else frame
    if frame is not None and not 1 <= frame <= stream.frames:
        raise ValueError(f"--frame {frame}: the stream has frames 1-{stream.frames}")
    kept = [st for st in stream.states if st.number <= want]
    return stream, (kept[-1] if kept else None)


def why_shown(report: Report, stream: StreamReport) -> str:
    """Why this stream of several is the one shown (pick's rule), as words after its
    name: " of 3 (the first with a finding)"; "" when it is the only one."""
    if len(report.streams) < 2:
        return ""
    if stream.anomalies:
        why = "the first with a finding"
    elif stream.calls:
        why = "none has a finding: the first with a call"
    else:
        why = "none has a finding or a call: the first"
    at, of = report.streams.index(stream) + 1, len(report.streams)
    if stream.turn is not None:
        at, of = stream.turn, sum(s.exchange == stream.exchange for s in report.streams)
        shown = f"Response {at} of {of} shown"
        other = "`--turn R` or `FILE#N.R` names another"
    else:
        shown = f"Stream {at} of {of} shown (exchange {stream.exchange})"
        other = "`--exchange N` or `FILE#N` names another"
    return f"{shown}: {why} ({other})."


def request_line(req: dict) -> str:
    """What the request was, in words: its method and URL (a session's response: the
    client message that opened it, the handshake's URL beside it), or that none was
    recorded."""
    if not req.get("recorded", True):
        return "no request recorded (a stream's body alone)"
    line = f"{txt(req['method'], 20)} {txt(req['url'], 400)}"
    if req.get("message"):  # (the handshake's status is the session's too)
        status = f" → {req['status']}" if req["status"] is not None else ""
        return f"the client message `{txt(req['message'], 60)}` (session: {line}{status})"
    return line


def render(report: Report, frame: int | None = None) -> str:
    stream, state = pick(report, frame)
    req = stream.request
    where = f"exchange {stream.exchange}" + (f", response {stream.turn}" if stream.turn else "")
    lines = [f"### streamscope: {where} of {val(report.source)}", ""]
    why = why_shown(report, stream)
    if why:
        lines += [f"_{why}_", ""]
    if report.redacted:
        lines += [
            "_Redacted: the conversation's text, tool results and argument values are left out._",
            "",
        ]
    said = [request_line(req)]
    if req["model"] is not None:
        said.append(f"model {val(req['model'], 100)}")
    if req["status"] is not None and not req.get("message"):
        said.append(f"status {req['status']}")
    said += [
        esc(stream.dialect),
        esc(stream.framing),
        f"{stream.frames} frames",
        f"ended {esc(stream.ended)}",
    ]
    lines += ["**Request**: " + " · ".join(said), ""]
    if req["tools"]:
        lines += ["**Tools declared**: " + ", ".join(val(t, 100) for t in req["tools"]), ""]
    at_lines: list[str] = []  # the finding's table, shortened to fit
    table_title = ""
    tables: dict[str, Table] = {}
    if state is not None:
        marks = ", ".join(f"`{k}`" for k in state.marks)
        at = f"frame {state.number}" + (
            f" ({state.time_ms} ms)" if state.time_ms is not None else ""
        )
        if stream.calls or any(t.calls for t in state.tables.values()):
            table_title = f"The calls at {at}"
            tables = state.tables
            at_lines = [f"#### {table_title}" + (f": {marks}" if marks else ""), ""]
        else:
            at_lines = [
                f"#### At {at}" + (f": {marks}" if marks else ""),
                "",
                "No tool call in this stream: no client builds one.",
            ]
        texts = _texts(state.text, state.reasoning, at)
    anomalies = [_grouped(g) for g in group(stream.anomalies)] or ["- none"]
    end = ["", "#### What each client builds (end of stream)", ""]
    end += _clients_table(stream.clients)
    end += _texts(stream.content, stream.reasoning, "the end")
    end += ["", "#### The contract (the requests that carry the calls back)", ""]
    end += [f"- {f.severity} · `{f.kind}`: {txt(f.message)}" for f in report.contract] or [
        "- no finding"
    ]
    if report.masked:
        end += ["", f"_{report.masked} credential(s) the requests carried masked._"]
    for note in [*report.notes, *stream.notes]:
        end += ["", f"_{esc(note)}_"]
    # the conclusions (what each client builds, the contract) are always whole: the
    # finding's table and the anomalies share what is left, each shortened if it must be
    room = LIMIT - _size(lines) - _size(end) - len(SHORTENED) - 400
    listed = ["#### Anomalies", ""]
    cut_notes: list[str] = []
    most = None
    if tables:
        for most in (None, 50, 20, 10, 5, 3, 2, 1):
            body = _calls_table(tables, most, stream.columns)
            if _size(body) + min(_size(anomalies), room // 4) <= room:
                break
        if most is not None:
            cut_notes.append(f"{table_title} (each client's first {plural(most, 'call')})")
        at_lines += body
    if state is not None:
        at_lines += texts
        at_lines.append("")
    left = room - _size(at_lines)
    kept = _fit(anomalies, left)
    if len(kept) < len(anomalies):
        cut_notes.append(f"Anomalies ({len(kept)} of {len(anomalies)} lines)")
        kept.append(f"- … {len(anomalies) - len(kept)} more (cut)")
    lines += at_lines + listed + kept + end
    if cut_notes:
        lines += ["", SHORTENED + "; ".join(cut_notes) + "."]
    return _within(lines)


SHORTENED = (
    "> **Shortened** to fit an issue comment (`streamscope export --format html` writes it whole): "
)


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _fit(lines: list[str], room: int) -> list[str]:
    """The first of `lines` that fit in `room` characters."""
    out: list[str] = []
    for line in lines:
        room -= len(line) + 1
        if room < 0:
            break
        out.append(line)
    return out


_SHAPE = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?')


def group(anomalies: list[Finding]) -> list[list[Finding]]:
    """The anomalies, those of one kind, severity and message shape (its quoted values
    and numbers aside) together, in the order each group first appears."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for a in anomalies:
        groups.setdefault((a.kind, a.severity, _SHAPE.sub("…", a.message)), []).append(a)
    return list(groups.values())


def _grouped(g: list[Finding]) -> str:
    """One line for a group: `kind ×N (frames a, b, c, …)`, its first message."""
    a = g[0]
    if len(g) == 1:
        return f"- frame {a.frame} · {a.severity} · `{a.kind}`: {txt(a.message)}"
    frames = [str(x.frame) for x in g]
    shown = ", ".join(frames[:8]) + (f", … {frames[-1]}" if len(frames) > 8 else "")
    return f"- {a.severity} · `{a.kind}` ×{len(g)} (frames {shown}): first {txt(a.message)}"


def _texts(text: str, reasoning: str, at: str) -> list[str]:
    """The text the model wrote (and its reasoning) by `at`, one escaped line each."""
    out: list[str] = []
    for title, said in (("Reasoning", reasoning), ("Text", text)):
        if said:
            out += ["", f"**{title} at {at}**: {txt(said, 2000)}"]
    return out


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


DEFAULT_COLUMNS = [["choice", "choice"], ["index", "index"], ["id", "id"], ["name", "name"]]


def _calls_table(
    tables: dict[str, Table], most: int | None = None, columns: list[list[str]] | None = None
) -> list[str]:
    """Every strategy's calls at the frame, robust first (`most`: each one's first
    `most` calls), in the dialect's `columns` (StreamReport.columns); a client's call
    that differs from robust's is marked."""
    fields = [f for _, f in columns or DEFAULT_COLUMNS]
    robust = tables.get("robust")
    head = ["client", *(esc(label) for label, _ in columns or DEFAULT_COLUMNS)]
    head += ["arguments", "fragments", "vs robust"]
    out = [_row(head), _row(["---"] * len(head))]
    blank = [""] * len(fields)

    def said(name: str, what: str, mark: str = "") -> str:
        return _row([esc(name), *blank, what, "", mark])

    for name, table in tables.items():
        if table.calls is None:
            out.append(said(name, f"raised: {val(table.error, 300)}", "**raised** ⚠"))
            continue
        if not table.calls:
            out.append(said(name, "(no call yet)"))
        base = robust.calls if robust is not None and robust.calls is not None else []
        shown = table.calls if most is None else table.calls[:most]
        for i, c in enumerate(shown):
            other = base[i] if i < len(base) else None
            cells = _cells(c, other if name != "robust" else None, fields)
            out.append(_row([esc(name), *cells]))
        more = table.more + len(table.calls) - len(shown)
        if more:
            out.append(said(name, f"… {more} more calls"))
    return out


def _cells(c: Cell, robust: Cell | None, fields: list[str]) -> list[str]:
    def mark(field: str) -> str:
        value = getattr(c, field)
        # arguments as their text (a string's quotes and escapes would hide its JSON)
        text = field == "arguments" and isinstance(value, str) and value != ""
        got = txt(value, 300) if text else val(value, 40 if field == "signature" else 300)
        if robust is not None and getattr(robust, field) != getattr(c, field):
            return f"**{got}** ⚠"
        return got

    compared = [f for f in fields if f not in ("choice", "index")] + ["arguments"]
    differs = robust is not None and any(getattr(robust, f) != getattr(c, f) for f in compared)
    shown = [
        str(c.choice) if f == "choice" else val(c.index, 40) if f == "index" else mark(f)
        for f in fields
    ]
    return [*shown, mark("arguments"), str(c.fragments), "differs" if differs else ""]


def _clients_table(tables: dict[str, Table]) -> list[str]:
    head = ["client", "calls", "ids", "names", "differs from robust", "what differs"]
    out = [_row(head), _row(["---"] * len(head))]
    for name, t in tables.items():
        if t.calls is None:
            out.append(
                _row([esc(name), f"raised: {val(t.error, 300)}", "", "", "**yes**", "raises"])
            )
            continue
        differs = "" if t.differs is None else ("**yes**" if t.differs else "no")
        out.append(
            _row(
                [
                    esc(name),
                    str(len(t.calls) + t.more),
                    ", ".join(val(c.id, 80) for c in t.calls),
                    ", ".join(val(c.name, 80) for c in t.calls),
                    differs,
                    txt(t.said, 600),
                ]
            )
        )
    return out


def _within(lines: list[str]) -> str:
    """The lines joined, cut (at a line, said) to stay within LIMIT."""
    out: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > LIMIT - len(CUT):
            return "\n".join(out) + "\n" + CUT
        out.append(line)
        size += len(line) + 1
    return "\n".join(out) + "\n"
