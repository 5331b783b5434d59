"""The replay's screens: exchanges, one stream, and the small modal ones."""

from __future__ import annotations

import os
from bisect import bisect_left, bisect_right

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    ContentSwitcher,
    DataTable,
    Footer,
    Input,
    Label,
    ProgressBar,
    Static,
)

from ..core.calls import StrategyError
from ..core.engine import STRATEGY_NAMES
from ..inputs import Exchange, ExchangeInfo
from ..recording.format import Request
from ..text import cut, plural, quote, visible
from .conversation import response
from .messages import FrameSelected, RecordingGrew, StreamRead
from .model import StreamModel
from .widgets import (
    MARK,
    SEVERITY_STYLE,
    CallTable,
    ConversationView,
    FrameDetail,
    FrameList,
    Timeline,
    ms,
    severity,
    strategy_label,
    worst,
)

OTHERS = [s for s in STRATEGY_NAMES if s != "robust"]
HELP = Binding(
    "question_mark",
    "app.help",
    "Help",
    key_display="?",
    id="help",
    tooltip="every key, and how to read the screen",
)
BACK = Binding("q", "app.back", "Back", id="back", tooltip="back to the exchanges, or quit")


class Loading(Screen):
    """A progress bar while a big input is indexed or a stream is read."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="loading"):
            yield Label(self.what)
            yield ProgressBar(total=100, show_eta=False, id="progress")

    def progress(self, done: int, total: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)


class ExchangesScreen(Screen):
    """One row per exchange; Enter opens its stream (or its request and response)."""

    BINDINGS = [
        Binding(
            "enter",
            "open",
            "Open",
            id="open",
            tooltip="open the selected exchange: its stream, or its request and response",
        ),
        Binding("q", "app.back", "Quit", id="back", tooltip="leave streamscope"),
        HELP,
    ]
    COLUMNS = ("#", "method", "path", "model", "status", "took", "frames", "calls", "worst")

    def __init__(self, infos: list[ExchangeInfo], errors: list | None = None) -> None:
        super().__init__()
        self.infos = infos
        self.errors = errors or []  # lines of the recording that could not be read
        self.summaries: dict | None = None
        self._width = 0

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                f"{visible(os.path.basename(self.app.source))} · {plural(len(self.infos), 'exchange')} · Enter opens one",
                style="bold",
            ),
            id="title",
        )
        if self.errors:
            said = "; ".join(visible(str(e)) for e in self.errors[:3])
            more = f" (and {len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
            yield Static(
                Text(f"✗ skipped {plural(len(self.errors), 'unreadable line')}: {said}{more}"),
                id="errors",
            )
        yield DataTable(id="exchanges", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._rows()
        self.query_one(DataTable).focus()
        self.app.with_summaries(self.fill)

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._rows()

    def _rows(self) -> None:
        """(Re)fill the table: narrow, the method goes and path and model are cut to what
        the width leaves beside `worst`, which is kept whole."""
        self._width = self.size.width
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        wide = self._width >= 100
        for col in self.COLUMNS:
            if wide or col != "method":
                table.add_column(col, key=col)
        worst_cells = [self._worst(info) for info in self.infos]
        worst_w = max([len(c.plain) for c in worst_cells] + [5])
        # the other columns and every cell's padding of 2, the scrollbar
        budget = max(self._width - worst_w - (46 if wide else 38), 12)
        path_w = max(6, min(22, budget // 2))
        model_w = max(6, min(16, budget - path_w))
        for info, worst_cell in zip(self.infos, worst_cells, strict=True):
            path = visible(info.url.split("://", 1)[-1])
            path = "/" + path.split("/", 1)[1] if "/" in path else path
            path = path if len(path) <= path_w else "…" + path[-(path_w - 1) :]
            took = ms(info.end_ns - info.start_ns) if info.end_ns is not None else "open"
            s = self.summaries.get(info.exchange) if self.summaries is not None else None
            frames = (
                "…"
                if self.summaries is None
                else "—"
                if s is None or not s.stream
                else str(s.frames)
            )
            calls = (
                "…"
                if self.summaries is None
                else ""
                if s is None or not s.stream
                else str(len(s.calls))
            )
            table.add_row(
                str(info.exchange),
                *([visible(info.method)] if wide else []),
                path,
                cut(visible(info.model or ""), model_w),
                str(info.status or ""),
                took,
                frames,
                calls,
                worst_cell,
                key=str(info.exchange),
            )
        if self.infos:
            table.move_cursor(row=min(max(cursor, 0), len(self.infos) - 1))

    def _worst(self, info: ExchangeInfo) -> Text:
        """The worst of the stream's anomalies and the request's contract findings, by kind
        (a contract break named first), or why a non-stream exchange failed."""
        if self.app.follow and info.end_ns is None:  # still being written: no verdict yet
            return Text("open", style="dim")
        if self.summaries is None:
            return Text("…")
        s = self.summaries.get(info.exchange)
        if s is None:
            return Text("")
        if not s.stream:
            if s.failure:
                return Text(
                    f"✗ {visible(s.failure.split(': ', 1)[0])}", style=SEVERITY_STYLE["error"]
                )
            return Text("not a stream", style="dim")
        level = worst(s.kinds)
        if level is None:
            return Text("clean", style="green")
        contract = [k for k, _ in s.findings]
        at_level = sorted(
            {k for k in s.kinds if severity(k) == level}, key=lambda k: (k not in contract, k)
        )
        more = f" +{len(at_level) - 1}" if len(at_level) > 1 else ""
        return Text(f"{MARK[level]} {at_level[0]}{more}", style=SEVERITY_STYLE[level])

    def fill(self, summaries: dict) -> None:
        if self.is_attached:
            self.summaries = summaries
            self._rows()

    @on(RecordingGrew)
    def _grew(self) -> None:
        """--follow: new exchanges, and the open ones' new state; the analysis again."""
        self.infos = self.app.infos
        self._rows()
        self.app.with_summaries(self.fill)

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            exchange = int(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
            self.app.open_stream(exchange)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.app.open_stream(int(event.row_key.value))


class RequestScreen(Screen):
    """An exchange that is not a stream: its request (the conversation) and its response."""

    BINDINGS = [
        BACK,
        HELP,
    ]

    def __init__(self, exchange: Exchange) -> None:
        super().__init__()
        self.exchange = exchange

    def compose(self) -> ComposeResult:
        ex, info = self.exchange, self.exchange.info
        yield Static(
            Text(
                f"{visible(os.path.basename(self.app.source))} · exchange {ex.number} · "
                f"not a stream · HTTP {info.status if info.status is not None else '(none)'}",
                style="bold",
            ),
            id="title",
        )
        with VerticalScroll(id="request-scroll"):
            yield Static(id="response")
            yield ConversationView(id="conversation")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#request-scroll").focus()
        self.query_one(ConversationView).show(self._body(), self.exchange.number, None)
        self.app.with_summaries(self._analysed)

    def _body(self) -> object:
        return self.exchange.request.json_body() if self.exchange.request is not None else None

    def _analysed(self, summaries: dict) -> None:
        if not self.is_attached:
            return
        ex = self.exchange
        mine = summaries.get(ex.number)
        reads = ex.reads
        body = b"".join(reads.read(i)[0] for i in range(min(len(reads), 4096)))
        failure = mine.failure if mine is not None else None
        self.query_one("#response", Static).update(
            response(ex.info.status, ex.info.headers, body, failure)
        )
        self.query_one(ConversationView).show(self._body(), ex.number, summaries)


class StreamScreen(Screen):
    """One stream, frame by frame."""

    BINDINGS = [
        Binding(
            "right,n",
            "step(1)",
            "Next",
            id="next",
            tooltip="the next frame (within the filter)",
            priority=True,
        ),
        Binding(
            "left,p",
            "step(-1)",
            "Prev",
            id="prev",
            tooltip="the previous frame (within the filter)",
            priority=True,
            show=False,
        ),
        Binding(
            "right_square_bracket",
            "anomaly(1)",
            "Anomaly",
            key_display="]",
            id="next_anomaly",
            tooltip="the next frame with an anomaly",
        ),
        Binding(
            "left_square_bracket",
            "anomaly(-1)",
            "Previous anomaly",
            key_display="[",
            tooltip="the previous frame with an anomaly",
            show=False,
            id="prev_anomaly",
        ),
        Binding(
            "home",
            "jump(0)",
            "First",
            tooltip="before the first frame",
            show=False,
            id="first",
            priority=True,
        ),
        Binding(
            "end",
            "jump(-1)",
            "Last",
            tooltip="the last frame, with the repair panel",
            show=False,
            id="last",
            priority=True,
        ),
        Binding("g", "goto", "Go to", tooltip="go to a frame by its number", show=False, id="goto"),
        Binding(
            "space",
            "play",
            "Play",
            tooltip="play or pause at the recorded timing",
            key_display="spc",
            id="play",
            priority=True,
        ),
        Binding(
            "plus,equals_sign",
            "speed(2)",
            "Faster",
            tooltip="play twice as fast",
            key_display="+",
            show=False,
            id="faster",
        ),
        Binding(
            "minus",
            "speed(0.5)",
            "Slower",
            tooltip="play half as fast",
            key_display="-",
            show=False,
            id="slower",
        ),
        Binding(
            "s",
            "strategy",
            "Client",
            tooltip="show the next client strategy beside robust",
            id="strategy",
        ),
        Binding(
            "slash",
            "filter",
            "Filter",
            tooltip="show only frames whose summary or anomaly kind has some text",
            key_display="/",
            id="filter",
        ),
        Binding(
            "a",
            "arguments",
            "Arguments",
            tooltip="every call's arguments at this frame, whole",
            show=False,
            id="arguments",
        ),
        Binding(
            "r",
            "request",
            "Request",
            tooltip="the request: messages, tools, parameters, contract findings",
            id="request",
        ),
        HELP,
        BACK,
    ]

    def __init__(
        self, model: StreamModel, title: str, start: int = 0, request: Request | None = None
    ) -> None:
        super().__init__()
        self.model = model
        self.request = request  # the request that asked for this stream (recordings only)
        self.title_text = title
        self.frame = max(0, min(start, model.total))
        self.strategy = 0
        self.speed = 1.0
        self.timer = None
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield Static(id="info")
        yield Timeline(self.model, id="timeline")
        yield Static(
            Text("robust: streamscope's reading", style="bold")
            + Text(" · green: this frame changed it · ⚠ a trap", style="dim"),
            id="robust-label",
        )
        yield CallTable(id="robust")
        yield Static(id="traps")
        yield Static(id="strategy-label")
        yield CallTable(id="other")
        with Horizontal(id="body"):
            yield FrameList(self.model, id="frames")
            with ContentSwitcher(initial="detail-scroll", id="right"):
                with VerticalScroll(id="detail-scroll"):
                    yield FrameDetail(id="detail")
                with VerticalScroll(id="conversation-scroll"):
                    yield ConversationView(id="conversation")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(FrameList).focus()
        self.call_after_refresh(self.refresh_frame)
        view = self.query_one(ConversationView)
        if self.request is None:
            view.update(Text("This input holds the stream only, not the request.", style="dim"))
            return
        view.show(self.request.json_body(), self.model.exchange, None)
        self.app.with_summaries(self._analysed)

    def _analysed(self, summaries: dict) -> None:
        """The contract is known: show it in the request, and open on it if it broke."""
        if not self.is_attached or self.request is None:
            return
        self.query_one(ConversationView).show(
            self.request.json_body(), self.model.exchange, summaries
        )
        mine = summaries.get(self.model.exchange)
        if mine is not None and mine.findings:
            self.query_one("#right", ContentSwitcher).current = "conversation-scroll"

    def action_request(self) -> None:
        """Show the request (the conversation) in place of the frame detail, or back."""
        right = self.query_one("#right", ContentSwitcher)
        showing = right.current == "conversation-scroll"
        right.current = "detail-scroll" if showing else "conversation-scroll"

    # -- showing a frame ------------------------------------------------------------------

    def refresh_frame(self) -> None:
        model, n = self.model, self.frame
        state = model.at(n)
        strategies = state.engine.strategy_calls()
        robust = strategies["robust"]
        name = OTHERS[self.strategy]
        other = strategies[name]
        self.query_one("#robust", CallTable).show(robust, state.events)
        traps = self.query_one("#traps", Static)
        caught = [
            e
            for e in state.events
            if e.op in ("overwrite", "ignored") and e.field in ("id", "name", "type")
        ]
        traps.display = bool(caught)
        if not robust:  # a text answer: show what it says so far
            texts = [c for c in state.engine.robust.choices.values() if c.content]
            if texts:
                said = "".join(texts[0].content)
                traps.display = True
                traps.update(Text("content so far: ", style="bold") + Text(quote(said, 160)))
        if caught:  # the old and new value of every trap this frame held
            line = Text("⚠ this frame: ", style="bold yellow")
            for i, e in enumerate(caught):
                if i:
                    line.append(" · ")
                line.append(
                    f"{e.field} {quote(e.new, 24)} kept {quote(e.old, 28)}",
                    style="yellow" if e.op == "overwrite" else "cyan",
                )
            traps.update(line)
        label = self.query_one("#strategy-label", Static)
        table = self.query_one("#other", CallTable)
        label.update(strategy_label(name, other, n) + Text(" · s: next strategy", style="dim"))
        if isinstance(other, list):
            table.display = True
            table.show(other, compare=robust)
        else:
            table.display = False
            if not isinstance(other, StrategyError):
                label.update(
                    Text(f"{name}: not available here ({visible(str(other))})", style="yellow")
                )
        # the repair panel is about a stream that ended, not one still being written
        at_end = n == model.total and not (
            model.growing and model.end.get("end_reason") == "unfinished"
        )
        self.query_one(FrameDetail).show(model, n, state.frame, state.events, repairs=at_end)
        frames = self.query_one(FrameList)
        frames.show(n)
        timeline = self.query_one(Timeline)
        timeline.current = n
        timeline.refresh()
        t = model.time(n) if n else None
        playing = f" · playing ×{self.speed:g}" if self.timer is not None else ""
        if model.reading is not None:
            playing += f" · reading {model.reading:.0%}"
        elif model.end.get("end_reason") == "unfinished":
            playing += " · open (still being written)" if self.app.follow else " · unfinished"
        shown = (
            f" · filter {quote(self.filter_text)}: {plural(len(frames.rows), 'frame')}"
            if self.filter_text
            else ""
        )
        self.query_one("#info", Static).update(
            Text(
                f"{visible(self.title_text)} · frame {n}/{model.total} · {ms(t)}{playing}{shown}",
                style="bold",
            )
        )

    def go(self, n: int) -> None:
        self.frame = max(0, min(n, self.model.total))
        self.refresh_frame()

    @on(FrameSelected)
    def _picked(self, event: FrameSelected) -> None:
        self.go(event.frame)

    # -- actions -------------------------------------------------------------------------

    def neighbour(self, frame: int, direction: int) -> int | None:
        """The next (direction 1) or previous (-1) frame the filter shows, None if none."""
        if not self.filter_text:
            n = frame + direction
            return n if 0 <= n <= self.model.total else None
        rows = self.query_one(FrameList).rows  # sorted frame numbers
        i = bisect_right(rows, frame) if direction > 0 else bisect_left(rows, frame) - 1
        return rows[i] if 0 <= i < len(rows) else None

    def action_step(self, delta: int) -> None:
        n = self.neighbour(self.frame, delta)
        if n is not None:
            self.go(n)

    def action_anomaly(self, direction: int) -> None:
        model = self.model  # while the stream is read: the anomalies seen so far
        marks = model.anomaly_frames if model.result else sorted(f for f in list(model.marks) if f)
        target = [f for f in marks if (f > self.frame if direction > 0 else f < self.frame)]
        if target:
            self.go(target[0] if direction > 0 else target[-1])
        else:
            self.notify("no further anomaly" if direction > 0 else "no earlier anomaly", timeout=2)

    def action_jump(self, where: int) -> None:
        self.go(self.model.total if where < 0 else where)

    def action_goto(self) -> None:
        def done(value: str | None) -> None:
            if value and value.strip().isdigit():
                self.go(int(value))
            elif value:
                self.notify(
                    f"{value!r} is not a frame number (0-{self.model.total})", severity="warning"
                )

        self.app.push_screen(Prompt(f"Go to frame (0-{self.model.total})"), done)

    def filtered(self) -> list[int]:
        """The frames the filter shows (every frame when there is none)."""
        model = self.model
        if not self.filter_text:
            return list(range(1, model.total + 1))
        needle = self.filter_text.lower()
        marks = model.marks
        return [
            n
            for n in range(1, model.total + 1)
            if needle in model.summaries[n - 1].lower()
            or any(needle in k for k in marks.get(n, []))
        ]

    def action_filter(self) -> None:
        def done(value: str | None) -> None:
            if value is None:
                return
            self.filter_text = value.strip()
            frames = self.query_one(FrameList)
            frames.set_rows(self.filtered())
            rows = frames.rows
            if self.filter_text and rows and self.frame not in frames.rows_index():
                i = bisect_left(rows, self.frame)  # the nearest frame the filter shows
                near = [rows[j] for j in (i - 1, i) if 0 <= j < len(rows)]
                self.frame = min(near, key=lambda f: (abs(f - self.frame), f))
            self.refresh_frame()

        self.app.push_screen(
            Prompt(
                "Filter frames (text of the summary or an anomaly kind; empty: all)"
                + (f"; now {quote(self.filter_text)}" if self.filter_text else "")
            ),
            done,
        )

    @on(RecordingGrew)
    @on(StreamRead)
    def _grew(self, event: RecordingGrew | StreamRead) -> None:
        """The model has new frames (read in the background, or --follow); at the last
        frame, follow to the newest."""
        frames = self.query_one(FrameList)
        at_end = self.frame >= frames.total
        frames.set_rows(self.filtered())
        if at_end:
            self.frame = self.model.total
        self.query_one(Timeline).refresh()
        self.refresh_frame()
        if isinstance(event, RecordingGrew) and self.request is not None:
            self.app.with_summaries(self._analysed)

    def action_strategy(self) -> None:
        self.strategy = (self.strategy + 1) % len(OTHERS)
        self.refresh_frame()

    def action_speed(self, factor: float) -> None:
        self.speed = min(64.0, max(1 / 64, self.speed * factor))
        self.refresh_frame()

    def action_play(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
            self.refresh_frame()
            return
        if self.neighbour(self.frame, 1) is None:  # at the end: play from the start
            self.frame = 0
        self._schedule()

    def _schedule(self) -> None:
        """Wait until the next frame the filter shows, at the recorded timing."""
        nxt = self.neighbour(self.frame, 1)
        if nxt is None:
            self.timer = None
            self.refresh_frame()
            return
        t, now = self.model.time(nxt), self.model.time(self.frame) if self.frame else 0
        gap = t - now if t is not None and now is not None else None
        delay = (gap / 1e9 if gap is not None else 0.05) / self.speed
        self.timer = self.set_timer(min(max(delay, 0.001), 5.0), self._tick)
        self.refresh_frame()

    def _tick(self) -> None:
        if self.timer is None:
            return
        self.frame = self.neighbour(self.frame, 1) or self.frame
        self._schedule()

    def action_arguments(self) -> None:
        state = self.model.at(self.frame)
        calls = state.engine.robust.calls()
        text = Text()
        for c in calls:
            text.append(f"{quote(c.name)} (id {quote(c.id)}, index {c.index})\n", style="bold")
            text.append(
                f"{visible(c.arguments) if isinstance(c.arguments, str) else quote(c.arguments)}\n\n"
            )
        self.app.push_screen(
            TextScreen(f"Arguments at frame {self.frame}", text if calls else Text("no calls yet"))
        )


class Prompt(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question)
            yield Input(value=self.value, id="answer")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.heading = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.heading, style="bold"))
            with VerticalScroll():
                yield Static(self.body)
            yield Label(Text("escape or q closes", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)


KEYS = (
    ("→ n  ← p", "next / previous frame (within the filter, if one is set)"),
    ("] [", "next / previous frame with an anomaly"),
    ("home end", "before the first frame / the last frame (the repair panel)"),
    ("g", "go to a frame by number"),
    ("space", "play / pause at the recorded timing"),
    ("+ -", "play faster / slower"),
    ("s", "show the next client strategy (guarded, naive, openai-sdk, openai-docs, by-id)"),
    ("/", "filter frames by summary text or anomaly kind; an empty filter shows all"),
    ("a", "every call's arguments, whole"),
    ("r", "the request: messages, tools, parameters and the contract's findings"),
    ("enter", "open the selected exchange (exchanges screen)"),
    ("ctrl+p", "command palette: every action by name"),
    ("?", "this help"),
    ("q", "back, or quit"),
)
READING = (
    "robust is streamscope's reading of the stream; green cells are what this frame "
    "changed, ⚠ yellow marks a value a naive client would have overwritten, ≠ red marks "
    "where another client's table differs from robust. The frame list marks anomalies "
    "(✗ error, ! warning, i info); the timeline shows gaps between frames (taller: longer) "
    "and ▲ anomaly frames. In the request (r), a green id is one an earlier stream "
    "assembled, a red one is where the contract broke, with the finding's words under it."
)


def help_text() -> RenderableType:
    """The keys and how to read the screen, as text that reflows to any width."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold cyan", no_wrap=True)
    keys.add_column(ratio=1)
    for key, what in KEYS:
        keys.add_row(key, what)
    return Group(
        Text("Keys", style="bold"),
        keys,
        Text(""),
        Text("Reading the screen", style="bold"),
        Text(READING),
    )
