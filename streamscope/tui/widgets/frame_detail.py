"""The current frame in detail: what it did, its bytes, its JSON; the repair panel."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.text import Text
from textual.reactive import reactive

from ...analysis.driver import AnswerSummary
from ...core import events as ev
from ...core.calls import Call
from ...core.events import FieldEvent
from ...core.repair import Repair
from ...dialects import dialect
from ...framing import FRAMINGS, SSE
from ...marks import MARK, STYLE
from ...text import cut, plural, quote, visible
from ..model import FrameState, StreamModel
from .common import ROWS, and_more
from .rendered import RenderedStatic
from .tool_results import results_panel

_JSON = JSONHighlighter()


class FrameDetail(RenderedStatic):
    """The frame as received (read boundaries shown), its JSON, and what it did; after
    the last frame of a stream that ended, the repair panel."""

    state: reactive[FrameState | None] = reactive(None, init=False)
    version: reactive[int] = reactive(0, init=False)  # the model grew (read on, --follow)
    # the request that continues the stream (a string: why there is none; None: not known)
    answer: reactive[AnswerSummary | str | None] = reactive(None, init=False)

    def __init__(self, model: StreamModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model

    def _watch_any(self) -> None:
        state, model = self.state, self.model
        if state is None:
            return
        n = state.number
        # the repair panel is about a stream that ended, not one still being written
        at_end = n == model.total and not (
            model.growing and model.end.get("end_reason") == "unfinished"
        )
        self.show(model, n, state.frame, state.events, repairs=at_end)

    watch_state = watch_version = watch_answer = _watch_any

    def show(
        self, model: StreamModel, n: int, frame, events: list[FieldEvent], repairs: bool
    ) -> None:
        parts: list[RenderableType] = []
        result = model.result  # None while the stream is still being read
        if repairs and result is not None:  # after the last frame, the repair is the news
            key = dialect(result.dialect).terms.key
            parts.append(repair_panel(result.tool_calls, result.repairs, key))
            if result.tool_calls:  # then the tools ran: what the next request sent
                parts.append(results_panel(result.tool_calls, self.answer))
        if n == 0:
            parts.append(Text(f"{told_as(model)}\n", style="bold"))
            parts.append(
                Text(
                    "Before the first frame. → or n steps forward; ? lists every key.", style="dim"
                )
            )
        if frame is not None:
            what = Text(f"What frame {n} did\n", style="bold")
            if events:
                for e in events[:ROWS]:
                    style = (
                        "yellow" if e.op == ev.OVERWRITE else ("cyan" if e.op == ev.IGNORED else "")
                    )
                    what.append(f"  {visible(e.describe(model.turn))}\n", style=style)
                and_more(what, len(events), "changes", "the call tables show every call")
            else:
                why = "the end of the stream" if frame.is_done else "nothing to accumulate"
                what.append(f"  {why}\n", style="dim")
            parts.append(what)
            first_seen = [a for a in result.anomalies if a.frame == n] if result else []
            if first_seen:
                note = Text("Anomalies first seen here\n", style="bold")
                for a in first_seen[:ROWS]:
                    note.append(f"  {MARK[a.severity]} {a.kind}", style=STYLE[a.severity])
                    note.append(f"  {visible(a.text())}\n")
                and_more(note, len(first_seen), "anomalies", "inspect lists every one")
                parts.append(note)
            pieces = model.raw(frame)
            raw = Text(
                f"As received, in {plural(len(pieces), 'read')} (┆ marks a read boundary)\n",
                style="bold",
            )
            left = SHOWN  # a frame of megabytes is shown in part: laid out whole, it took a minute
            for i, piece in enumerate(pieces):
                if i:
                    raw.append("┆", style="bold magenta")
                raw.append(
                    visible(
                        # (bytes that are no UTF-8, as a binary framing sends, as \xNN)
                        piece[:left].decode("utf-8", "backslashreplace").replace("\r", "\\r"),
                        lines=True,
                    )
                    .replace("\t", "\\t")
                    .replace("\n", "↵\n"),
                    style="dim",
                )
                left -= min(left, len(piece))
                if not left:
                    break
            size = sum(map(len, pieces))
            if size > SHOWN:
                raw.append(f"\n{_more(size - SHOWN, n)}\n", style="italic")
            parts.append(raw)
            if frame.is_json:
                parts.append(Text("Parsed", style="bold"))
                shown, more = _pretty(frame.payload, frame.data)
                pretty = Text(visible(shown, lines=True))
                _JSON.highlight(pretty)  # regex highlighting: cheap enough for every frame
                parts.append(pretty)
                if more:
                    parts.append(Text(f"… the rest of its JSON {_whole(n)}", style="italic"))
        self.show_rendered(Group(*parts))


SHOWN = 4_000  # bytes of a frame as received, and characters of its JSON, shown


def told_as(model: StreamModel) -> str:
    """The stream's dialect and framing in words: "Bedrock Converse in the AWS event
    stream" (SSE, what most streams are, goes unsaid)."""
    told = model.dialect.title
    name = getattr(model.reads, "framing", None)
    if name is not None and name != SSE and name in FRAMINGS:
        told += f" in {FRAMINGS[name].title}"
    return told


def _more(size: int, n: int) -> str:
    return f"… {size:,} bytes more {_whole(n)}"


def _whole(n: int) -> str:
    return f"(export --frames {n}-{n} writes the frame whole)"


def _pretty(payload: object, data: str) -> tuple[str, bool]:
    """A frame's JSON, indented, its first SHOWN characters, and whether there is more;
    past Python's nesting limit, its data as received. Encoded piece by piece and stopped
    there: indenting all of one chunk of 3,000 Gemini candidates took a quarter second."""
    out: list[str] = []
    size = 0
    try:
        for piece in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(payload):
            out.append(piece)
            size += len(piece)
            if size > SHOWN:
                return "".join(out)[:SHOWN], True
    except RecursionError:
        return data[:SHOWN], len(data) > SHOWN
    return "".join(out), False


LONG = 2000  # characters of arguments the repair panel shows (`a` shows them whole)


def repair_panel(
    calls: list[Call], fixes: list[Repair | None], key: str = "index"
) -> RenderableType:
    text = Text("Repair (after the last frame)\n", style="bold")
    broken = [(c, f) for c, f in zip(calls, fixes, strict=True) if f is not None]
    if not calls:
        text.append("  the stream made no tool calls: no arguments to repair\n", style="dim")
        return text
    if not broken:
        text.append("  every call's arguments parse: nothing to repair\n", style="green")
        return text
    for call, fix in broken[:ROWS]:
        text.append(
            f"  call {quote(call.name)} (id {quote(call.id)}) at {key} {quote(call.index)}\n",
            style="bold",
        )
        text.append("    raw   ", style="dim")
        text.append(f"{visible(cut(str(call.arguments), LONG))}\n")
        text.append("    crow  ", style="dim")
        text.append(f"{visible(cut(fix.crow.result, LONG))}  ({fix.crow.action})\n")
        meaning = "CHANGED MEANING" if fix.best.changed_meaning else "kept meaning"
        text.append("    best  ", style="dim")
        text.append(f"{visible(cut(fix.best.result, LONG))}  ({fix.best.action}, ")
        text.append(meaning, style="bold red" if fix.best.changed_meaning else "green")
        text.append(")\n")
    and_more(text, len(broken), "calls repaired", "inspect shows every repair")
    return text
