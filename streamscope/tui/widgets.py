"""The stream screen's parts: frame list, timeline, call tables, frame detail."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.events import Click
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from ..core import events as ev
from ..core.anomalies import KINDS, SEVERITY_ORDER
from ..core.calls import Call, StrategyError
from ..core.contract import KINDS as CONTRACT_KINDS
from ..core.events import FieldEvent
from ..core.repair import Repair
from ..text import plural, quote, visible
from .conversation import conversation
from .messages import FrameSelected
from .model import StreamModel

_JSON = JSONHighlighter()
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
MARK = {"error": "✗", "warning": "!", "info": "i"}


def severity(kind: str) -> str | None:
    """An anomaly's or a contract finding's severity (None for a kind neither knows)."""
    known = KINDS.get(kind) or CONTRACT_KINDS.get(kind)
    return known[0] if known else None


def worst(kinds: list[str]) -> str | None:
    """The most severe severity among anomaly and contract kinds (None when there are none)."""
    levels = [s for s in map(severity, kinds) if s is not None]
    return min(levels, key=SEVERITY_ORDER.__getitem__) if levels else None


def ms(ns: int | None) -> str:
    if ns is None:
        return "—"
    return f"{ns / 1e6:,.0f}ms" if ns < 10e9 else f"{ns / 1e9:,.1f}s"


class FrameList(ScrollView, can_focus=True):
    """Every frame (or the filtered ones): number, time, gap, summary, anomaly marks.

    Lines are rendered on demand, so a stream of a million frames costs nothing to show.
    """

    DEFAULT_CSS = "FrameList { scrollbar-size-vertical: 1; }"

    def __init__(self, model: StreamModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.rows: list[int] = list(range(1, model.total + 1))
        self._total = model.total
        self.current = 0
        self.virtual_size = Size(1, len(self.rows))  # lines are cut to the width: no side scroll

    @property
    def total(self) -> int:
        """The stream's frames when the rows were last set (--follow adds more)."""
        return self._total

    def set_rows(self, rows: list[int]) -> None:
        self._total = self.model.total
        self.rows = rows
        self.virtual_size = Size(1, len(rows))
        self.refresh()

    def show(self, frame: int) -> None:
        self.current = frame
        if frame in self.rows_index():
            y = self.rows_index()[frame]
            top = self.scroll_offset.y
            height = max(self.size.height, 1)
            if not top <= y < top + height:
                self.scroll_to(y=max(0, y - height // 2), animate=False)
        self.refresh()

    def rows_index(self) -> dict[int, int]:
        cached = getattr(self, "_index", None)
        if cached is None or cached[0] is not self.rows:
            cached = (self.rows, {f: i for i, f in enumerate(self.rows)})
            self._index = cached
        return cached[1]

    def render_line(self, y: int) -> Strip:
        row = self.scroll_offset.y + y
        width = self.size.width
        if row >= len(self.rows):
            return Strip.blank(width)
        n = self.rows[row]
        model = self.model
        kinds = model.marks.get(n, [])
        level = worst(kinds)
        mark = MARK[level] if level else " "
        t, gap = model.time(n), model.gap(n)
        digits = len(str(model.total))
        head = f"{mark}{n:>{digits}} {ms(t):>7} {('+' + ms(gap)) if gap is not None else '':>7} "
        text = model.summaries[n - 1]
        base = Style(reverse=True, bold=True) if n == self.current else Style()
        segments = [
            Segment(mark, base + Style.parse(SEVERITY_STYLE[level]) if level else base),
            Segment(head[1:], base + Style(dim=n != self.current)),
            Segment(text[: max(0, width - len(head))], base),
        ]
        return Strip(segments).adjust_cell_length(width, base)

    def on_click(self, event: Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
            self.post_message(FrameSelected(self.rows[row]))


class Timeline(Widget):
    """Inter-frame gaps as a heat bar, ticks at anomaly frames, a cursor at this frame."""

    DEFAULT_CSS = "Timeline { height: 3; }"
    BARS = " ▁▂▃▄▅▆▇█"

    def __init__(self, model: StreamModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.current = 0
        self._cache: tuple = ((), [], {}, 0)  # (key, levels, column -> worst, top gap)

    def _columns(self, cols: int) -> tuple[list[int], dict[int, str | None], int]:
        """Per column: the bar's level and the worst anomaly ticked there, and the largest
        gap; computed once per stream length and width (one pass over the frame times),
        so moving the cursor costs nothing on a long stream."""
        model = self.model
        total = model.total
        key = (total, cols, len(model.anomaly_frames), model.result is None)
        if self._cache[0] == key:
            return self._cache[1], self._cache[2], self._cache[3]
        gaps, before = [], 0
        for t in model.times:
            gaps.append(t - before if t >= 0 and before >= 0 else 0)
            before = t
        peaks = []
        for col in range(cols):  # a short stream spreads each frame over several columns
            lo = col * total // cols
            peaks.append(max(gaps[lo : max(lo + 1, (col + 1) * total // cols)] or [0]))
        top = max(peaks) if peaks else 0
        levels = [max(1, int(8 * p / top)) if top else 1 for p in peaks]
        ticked: dict[int, list[str]] = {}
        for f in model.anomaly_frames:  # each anomaly frame ticks the column where it starts
            ticked.setdefault((f - 1) * cols // total, []).extend(model.marks.get(f, []))
        worst_at = {col: worst(kinds) for col, kinds in ticked.items()}
        self._cache = (key, levels, worst_at, top)
        return levels, worst_at, top

    def render(self) -> RenderableType:
        model = self.model
        total = model.total
        width = max(self.size.width - 1, 10)
        bar, ticks = Text(), Text()
        cols = width if total else 1
        levels, ticked, top = self._columns(cols) if total else ([1], {}, 0)
        here_col = (self.current - 1) * cols // total if self.current else -1
        for col, level in enumerate(levels):
            here = col == here_col
            style = (
                "reverse"
                if here
                else ("red" if level >= 6 else "yellow" if level >= 3 else "green")
            )
            bar.append(self.BARS[level], style)
            if col in ticked:
                ticks.append("▲", SEVERITY_STYLE.get(ticked[col] or "", ""))
            else:
                ticks.append("┃" if here else " ", "bold")
        first = model.time(1)
        last = model.time(total)
        fps = f"{total / (last / 1e9):,.0f} frames/s" if last else "no timing"
        stats = Text(
            f"first frame {ms(first)} · total {ms(last)} · {plural(total, 'frame')} · {fps} · "
            f"largest gap {ms(top)} · ▲ anomalies",
            style="dim",
        )
        if self.size.height < 3:  # one line: the bar, anomaly columns marked on it
            for col, level in ticked.items():
                if 0 <= col < len(bar) and col != here_col:
                    bar.stylize(SEVERITY_STYLE.get(level or "", "") + " reverse", col, col + 1)
            return bar
        return Group(bar, ticks, stats)


def _cell(value: object, width: int = 0) -> str:
    return quote(value, width) if value is not None else "null"


class CallTable(Static):
    """One strategy's calls at the current frame, fitted to the width (long values cut)."""

    DEFAULT_CSS = "CallTable { height: auto; }"
    COLUMNS = ("c", "idx", "id", "type", "name", "arguments", "frags")

    def show(
        self,
        calls: list[Call],
        events: list[FieldEvent] = (),  # type: ignore[assignment]
        compare: list[Call] | None = None,
    ) -> None:
        """Rows for `calls`; cells `events` touched are highlighted; cells unlike `compare` marked."""
        table = Table(
            box=None, padding=(0, 1), expand=True, show_edge=False, header_style="bold dim"
        )
        # ids are what a person compares: shown whole (folded past 40 columns), args cut
        both = (*calls, *(compare or []))
        longest = max([len(_cell(c.id)) for c in both] + [4])
        name = max([len(_cell(c.name)) for c in both] + [4])
        for col in self.COLUMNS:
            table.add_column(
                col,
                no_wrap=col != "id",
                overflow="fold" if col == "id" else "ellipsis",
                ratio={"arguments": 4, "name": 2}.get(col),
                min_width={"id": min(longest + 1, 41), "name": min(name + 1, 16)}.get(col),
                max_width={"c": 2, "idx": 4, "type": 10, "frags": 5}.get(col),
            )
        touched: dict[tuple[int, str], FieldEvent] = {}
        for e in events:
            if e.call >= 0:
                field = "arguments" if e.field == "input" else e.field  # a custom call's input
                touched[(e.call, field or ("call" if e.op == ev.NEW_CALL else ""))] = e
        for i, call in enumerate(calls):
            other = compare[i] if compare is not None and i < len(compare) else None
            values = {
                "c": call.choice,
                "idx": call.index,
                "id": call.id,
                "type": call.type,
                "name": call.name,
                "arguments": call.arguments,
                "frags": call.fragments,
            }
            cells = []
            for col in self.COLUMNS:
                value = values[col]
                if col in ("c", "frags"):
                    shown = str(value)
                elif col == "arguments" and isinstance(value, str):
                    shown = visible(value)
                else:
                    shown = _cell(value)
                text = Text(shown)
                event = touched.get((i, col))
                if event is not None:  # the frame detail says what happened in words
                    if event.op == ev.OVERWRITE:
                        text = Text("⚠", style="bold yellow") + Text(
                            shown, style="bold black on yellow"
                        )
                    elif event.op == ev.IGNORED:
                        text.stylize("cyan")
                    else:
                        text.stylize("bold green reverse")
                elif (i, "call") in touched:
                    text.stylize("green")
                if compare is not None and col in ("id", "type", "name", "arguments"):
                    theirs = None if other is None else getattr(other, col)
                    if other is None or theirs != value:
                        text = Text("≠", style="bold red") + text
                        text.stylize("red")
                cells.append(text)
            table.add_row(*cells)
        if compare is not None and len(compare) > len(calls):
            table.add_row(
                "",
                "",
                Text(
                    f"≠ robust has {plural(len(compare) - len(calls), 'more call')}",
                    style="bold red",
                ),
            )
        if not calls and (compare is None or not compare):
            table.add_row("", "", Text("no calls yet", style="dim"))
        self.update(table)


class FrameDetail(Static):
    """The frame as received (read boundaries shown), its JSON, and what it did."""

    def show(
        self, model: StreamModel, n: int, frame, events: list[FieldEvent], repairs: bool
    ) -> None:
        parts: list[RenderableType] = []
        result = model.result  # None while the stream is still being read
        if repairs and result is not None:  # after the last frame, the repair is the news
            parts.append(repair_panel(result.tool_calls, result.repairs))
        if n == 0:
            parts.append(
                Text(
                    "Before the first frame. → or n steps forward; ? lists every key.", style="dim"
                )
            )
        if frame is not None:
            what = Text(f"What frame {n} did\n", style="bold")
            if events:
                for e in events:
                    style = (
                        "yellow" if e.op == ev.OVERWRITE else ("cyan" if e.op == ev.IGNORED else "")
                    )
                    what.append(f"  {visible(e.describe())}\n", style=style)
            else:
                why = "the end of the stream" if frame.is_done else "nothing to accumulate"
                what.append(f"  {why}\n", style="dim")
            parts.append(what)
            first_seen = [a for a in result.anomalies if a.frame == n] if result else []
            if first_seen:
                note = Text("Anomalies first seen here\n", style="bold")
                for a in first_seen:
                    note.append(f"  {MARK[a.severity]} {a.kind}", style=SEVERITY_STYLE[a.severity])
                    note.append(f"  {visible(a.text())}\n")
                parts.append(note)
            pieces = model.raw(frame)
            raw = Text(
                f"As received, in {plural(len(pieces), 'read')} (┆ marks a read boundary)\n",
                style="bold",
            )
            for i, piece in enumerate(pieces):
                if i:
                    raw.append("┆", style="bold magenta")
                raw.append(
                    visible(piece.decode("utf-8", "replace").replace("\r", "\\r"), lines=True)
                    .replace("\t", "\\t")
                    .replace("\n", "↵\n"),
                    style="dim",
                )
            parts.append(raw)
            if frame.is_json:
                parts.append(Text("Parsed", style="bold"))
                pretty = Text(visible(_pretty(frame.payload, frame.data), lines=True))
                _JSON.highlight(pretty)  # regex highlighting: cheap enough for every frame
                parts.append(pretty)
        self.update(Group(*parts))


def _pretty(payload: object, data: str) -> str:
    """A frame's JSON, indented; past Python's nesting limit, its data as received."""
    try:
        return json.dumps(payload, indent=2, ensure_ascii=False)
    except RecursionError:
        return data


def repair_panel(calls: list[Call], fixes: list[Repair | None]) -> RenderableType:
    text = Text("Repair (after the last frame)\n", style="bold")
    broken = [(c, f) for c, f in zip(calls, fixes, strict=True) if f is not None]
    if not calls:
        text.append("  the stream made no tool calls: no arguments to repair\n", style="dim")
        return text
    if not broken:
        text.append("  every call's arguments parse: nothing to repair\n", style="green")
        return text
    for call, fix in broken:
        text.append(
            f"  call {quote(call.name)} (id {quote(call.id)}) at index {call.index}\n", style="bold"
        )
        text.append("    raw   ", style="dim")
        text.append(f"{visible(str(call.arguments))}\n")
        text.append("    crow  ", style="dim")
        text.append(f"{visible(fix.crow.result)}  ({fix.crow.action})\n")
        meaning = "CHANGED MEANING" if fix.best.changed_meaning else "kept meaning"
        text.append("    best  ", style="dim")
        text.append(f"{visible(fix.best.result)}  ({fix.best.action}, ")
        text.append(meaning, style="bold red" if fix.best.changed_meaning else "green")
        text.append(")\n")
    return text


def strategy_label(name: str, got: object, n: int) -> Text:
    if isinstance(got, StrategyError):
        return Text(f"{name}: raised {visible(got.error)} at frame {got.frame}", style="bold red")
    return Text(f"{name} at frame {n} (≠ marks what differs from robust)", style="bold")


class ConversationView(Static):
    """The request of one exchange: messages, tools, parameters and the contract's findings."""

    def show(self, body: object, exchange: int, summaries: dict | None) -> None:
        """`summaries`: the analysis of every exchange (None while it runs)."""
        if summaries is None:
            head = Text("checking the contract across the recording …\n\n", style="dim")
            self.update(head + conversation(body, [], {}))
            return
        mine = summaries.get(exchange)
        findings = [(k, w) for k, w in mine.findings] if mine is not None else []
        earlier = {
            quote(cid): (s.exchange, name)
            for s in summaries.values()
            if s.exchange < exchange
            for cid, name in s.calls
        }
        self.update(conversation(body, findings, earlier))
