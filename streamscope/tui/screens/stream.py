"""One stream, frame by frame: the calls, another client's, the frames, the request."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import (
    ContentSwitcher,
    Footer,
    Static,
)

from ...core.calls import StrategyError
from ...core.engine import STRATEGY_NAMES
from ...recording.format import Request
from ...text import plural, quote, visible
from ..messages import FrameSelected, RecordingGrew, StreamRead
from ..model import StreamModel
from ..session import Session
from ..widgets import (
    CallTable,
    ConversationView,
    FrameDetail,
    FrameList,
    Timeline,
    ms,
    strategy_label,
)
from .bindings import BACK, HELP
from .prompt import Prompt
from .text_screen import TextScreen

OTHERS = [s for s in STRATEGY_NAMES if s != "robust"]


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

    # What the screen is showing; widgets and the info line watch these.
    frame: reactive[int] = reactive(0, init=False)
    strategy: reactive[int] = reactive(0, init=False)  # which other client, in OTHERS
    speed: reactive[float] = reactive(1.0, init=False)
    filter_text: reactive[str] = reactive("", init=False)

    def __init__(
        self,
        session: Session,
        model: StreamModel,
        title: str,
        start: int = 0,
        request: Request | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.model = model
        self.request = request  # the request that asked for this stream (recordings only)
        self.title_text = title
        self.set_reactive(StreamScreen.frame, max(0, min(start, model.total)))
        self.timer = None

    def watch_frame(self) -> None:
        self.refresh_frame()

    def watch_strategy(self) -> None:
        self.refresh_frame()

    def watch_speed(self) -> None:
        self.show_info()

    def watch_filter_text(self, text: str) -> None:
        frames = self.query_one(FrameList)
        frames.set_rows(self.filtered())
        rows = frames.rows
        if text and rows and self.frame not in frames.rows_index():
            i = bisect_left(rows, self.frame)  # the nearest frame the filter shows
            near = [rows[j] for j in (i - 1, i) if 0 <= j < len(rows)]
            self.frame = min(near, key=lambda f: (abs(f - self.frame), f))
        self.show_info()

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
        self.call_after_refresh(self.model.shown.set)  # the reading worker goes on then
        view = self.query_one(ConversationView)
        if self.request is None:
            view.update(Text("This input holds the stream only, not the request.", style="dim"))
            return
        view.show(self.request.json_body(), self.model.exchange, None)
        self.session.when_analysed(self._analysed)

    def _analysed(self, summaries: dict) -> None:
        """The contract is known: show it in the request, and open on it if it broke."""
        if not self.is_attached or self.request is None:
            return
        self.query_one(ConversationView).show(
            self.request.json_body(), self.model.exchange, summaries, self.session.analysis_error
        )
        mine = summaries.get(self.model.exchange)
        if mine is not None and mine.findings:
            self.query_one("#right", ContentSwitcher).current = "conversation-scroll"
            self.add_class("-request")

    def action_request(self) -> None:
        """Show the request (the conversation) in place of the frame detail, or back."""
        right = self.query_one("#right", ContentSwitcher)
        showing = right.current == "conversation-scroll"
        right.current = "detail-scroll" if showing else "conversation-scroll"
        self.set_class(not showing, "-request")  # the request takes more of the width

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
                    f"{e.field} {quote(e.new, 48)} kept {quote(e.old, 48)}",  # ids whole
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
        self.show_info()

    def show_info(self) -> None:
        """The line on top: where we are, playing, reading, the filter."""
        model, n = self.model, self.frame
        t = model.time(n) if n else None
        playing = f" · playing ×{self.speed:g}" if self.timer is not None else ""
        if model.reading is not None:
            playing += f" · reading {model.reading:.0%}"
        elif model.end.get("end_reason") == "unfinished":
            open_ = " · open (still being written)" if self.session.follow else " · unfinished"
            playing += open_
        shown = (
            f" · filter {quote(self.filter_text)}: "
            f"{plural(len(self.query_one(FrameList).rows), 'frame')}"
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
            self.session.when_analysed(self._analysed)

    def action_strategy(self) -> None:
        self.strategy = (self.strategy + 1) % len(OTHERS)

    def action_speed(self, factor: float) -> None:
        self.speed = min(64.0, max(1 / 64, self.speed * factor))

    def action_play(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
            self.show_info()
            return
        if self.neighbour(self.frame, 1) is None:  # at the end: play from the start
            self.frame = 0
        self._schedule()

    def _schedule(self) -> None:
        """Wait until the next frame the filter shows, at the recorded timing."""
        nxt = self.neighbour(self.frame, 1)
        if nxt is None:
            self.timer = None
            self.show_info()
            return
        t, now = self.model.time(nxt), self.model.time(self.frame) if self.frame else 0
        gap = t - now if t is not None and now is not None else None
        delay = (gap / 1e9 if gap is not None else 0.05) / self.speed
        self.timer = self.set_timer(min(max(delay, 0.001), 5.0), self._tick)
        self.show_info()

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
