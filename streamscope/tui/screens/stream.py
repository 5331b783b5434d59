"""One stream, frame by frame: the calls, another client's, the frames, the request."""

from __future__ import annotations

import gc
import threading
from bisect import bisect_left, bisect_right

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import (
    ContentSwitcher,
)

from ...analysis.driver import AnswerSummary, ResultLine
from ...core.anomalies import INFO
from ...dialects.base import Turn
from ...inputs.encoding import request_json
from ...recording.format import Request
from ...text import past_the_end, quote, visible
from ..messages import FrameSelected, OpenTurn, RecordingGrew, StreamRead
from ..model import FrameState, StreamModel
from ..session import Session
from ..widgets import (
    CallTable,
    ConversationView,
    FrameDetail,
    FrameList,
    InfoLine,
    RobustLabel,
    StrategyLabel,
    Timeline,
    TrapLine,
    results_panel,
    robust_label,
)
from ..widgets.ask_line import AskLine, number_answered
from ..widgets.key_footer import KeyFooter
from .bindings import STREAM
from .text_screen import TextScreen

# A frame whose state would take longer than this (a jump on a stream of thousands of
# calls: the engine copy it resumes from holds every call) is computed in a thread: the
# keys go on answering, the newest frame asked for wins.
QUICK = 0.03  # seconds


class StreamScreen(Screen):
    """One stream, frame by frame."""

    BINDINGS = STREAM

    # What the screen is showing. The widgets are bound to these (data_bind) and repaint
    # themselves when they change: the screen never pushes into them. `var`, not
    # `reactive`: the screen draws nothing itself, and a reactive's change would repaint
    # the whole screen on every step.
    frame: var[int] = var(0, init=False)
    strategy: var[int] = var(0, init=False)  # which other client, in the dialect's order
    speed: var[float] = var(1.0, init=False)
    playing: var[bool] = var(False, init=False)
    filter_text: var[str] = var("", init=False)
    rows: var[list[int]] = var(list, init=False)  # the frames the filter shows
    state: var[FrameState | None] = var(None, init=False)  # the stream at `frame`
    version: var[int] = var(0, init=False)  # counts the times the model grew
    # the request that continues the stream, once analysed (a string: why there is none)
    answer: var[AnswerSummary | str | None] = var(None, init=False)

    def __init__(
        self,
        session: Session,
        model: StreamModel,
        title: str,
        start: int = 0,
        request: Request | None = None,
        turn: tuple[Turn, int] | None = None,
    ) -> None:
        """`turn`: the stream is a response of a WebSocket session: (its turn, how many
        responses the session has)."""
        super().__init__()
        self.session = session
        self.model = model
        self.request = request  # the request that asked for this stream (recordings only)
        self.turn: Turn | None = turn[0] if turn is not None else None
        self.turns = turn[1] if turn is not None else 0
        self.title_text = title
        self.set_reactive(StreamScreen.frame, max(0, min(start, model.total)))
        self.set_reactive(StreamScreen.rows, list(range(1, model.total + 1)))
        self._total = model.total  # the stream's frames when the rows were last set
        self.timer = None
        self._frozen = False  # this screen froze the collector (see _hold_still)
        self._wanted: int | None = None  # the frame the computing thread is to show
        self._computing = False  # a thread computes states (see _compute)
        self._lock = threading.Lock()

    def watch_frame(self, frame: int) -> None:
        if not self.is_mounted:  # the first state is computed on mount
            return
        with self._lock:
            # while a thread computes, every frame asked for goes to it: it feeds the
            # engine `at` would feed
            quick = not self._computing and self.model.cost(frame) <= QUICK
            if not quick:
                self._wanted = frame
                start, self._computing = not self._computing, True
        if quick:
            self.state = self.model.view(self.model.at(frame))
        elif start:
            self.run_worker(self._compute, thread=True, group="state", exit_on_error=False)

    def _compute(self) -> None:
        """In a thread: the state at the newest frame asked for, until none is waiting."""
        model = self.model
        while True:
            with self._lock:
                n = self._wanted
                if n is None or not self.is_attached:
                    self._computing = False
                    return
            state = model.at(n, lambda n=n: self._wanted != n)  # type: ignore[misc]
            if state is None:  # another frame was asked for meanwhile
                continue
            model.view(state)
            try:
                self.app.call_from_thread(self._arrived, n, state)
            except RuntimeError:  # the app is closing
                with self._lock:
                    self._computing = False
                return

    def _arrived(self, n: int, state: FrameState) -> None:
        with self._lock:
            if self._wanted != n:  # another frame was asked for meanwhile
                return
            self._wanted = None
        self.state = state

    def watch_filter_text(self, text: str) -> None:
        self.rows = rows = self.filtered()
        if text and rows and self.frame not in self.query_one(FrameList).rows_index():
            i = bisect_left(rows, self.frame)  # the nearest frame the filter shows
            near = [rows[j] for j in (i - 1, i) if 0 <= j < len(rows)]
            self.frame = min(near, key=lambda f: (abs(f - self.frame), f))

    def compose(self) -> ComposeResult:
        S = StreamScreen
        yield InfoLine(
            self.model,
            self.title_text,
            self.session.follow,
            self.session.input.approximate_times,  # type: ignore[union-attr]
            id="info",
        ).data_bind(S.frame, S.speed, S.playing, S.filter_text, S.rows, S.version, S.state)
        yield Timeline(self.model, id="timeline").data_bind(S.frame, S.version)
        yield RobustLabel(robust_label(self.app.size.width - 2), id="robust-label")
        yield CallTable(id="robust").data_bind(S.state)
        yield TrapLine(id="traps").data_bind(S.state)
        yield StrategyLabel(id="strategy-label").data_bind(S.state, S.strategy)
        yield CallTable(other=True, id="other").data_bind(S.state, S.strategy)
        with Horizontal(id="body"):
            yield FrameList(self.model, id="frames").data_bind(S.frame, S.rows)
            with ContentSwitcher(initial="detail-scroll", id="right"):
                with VerticalScroll(id="detail-scroll"):
                    yield FrameDetail(self.model, id="detail").data_bind(
                        S.state, S.version, S.answer
                    )
                with VerticalScroll(id="conversation-scroll"):
                    yield ConversationView(id="conversation")
        yield AskLine()
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one(FrameList).focus()
        # the first paint shows the first frame (not an empty screen, then the frame)
        self.state = self.model.view(self.model.at(self.frame))
        self.call_after_refresh(self.model.shown.set)  # the reading worker goes on then
        if self.model.result is not None:  # read whole before it opened (short streams)
            self._hold_still()
        view = self.query_one(ConversationView)
        if self.request is None and self.turn is None:
            self.answer = "the input holds the stream only, no request after it"
            view.update(Text("This input holds the stream only, not the request.", style="dim"))
            return
        if self.turn is not None and self.turn.request is None:
            view.update(Text("No client message opened this response.", style="dim"))
            self.session.when_analysed(self._answered)
            return
        view.show(self._body(), self.model.told, self.model.exchange, None, turn=self._turn())
        self.session.when_analysed(self._analysed)

    def _body(self) -> object:
        """The request's body: the exchange's, or the client message that opened the turn."""
        if self.turn is not None:
            return self.turn.request
        return request_json(self.request) if self.request is not None else None

    def _turn(self) -> int | None:
        return self.turn.turn if self.turn is not None else None

    def _analysed(self, summaries: dict) -> None:
        """The contract is known: show it in the request, and open on it if it broke."""
        views = self.query(ConversationView) if self.is_attached else ()
        if not views or self._body() is None:  # (the screen is gone, or going)
            return
        views.first().show(
            self._body(),
            self.model.told,
            self.model.exchange,
            summaries,
            self.session.analysis_error,
            self._turn(),
        )
        row = summaries.get(self.model.exchange)
        self._answered(summaries)
        mine = row.response(self._turn()) if row is not None else None
        # a break opens the request; an info finding (a stream pairing could not check) not
        if mine is not None and any(f.severity != INFO for f in mine.findings):
            self.query_one("#right", ContentSwitcher).current = "conversation-scroll"
            self.add_class("-request")

    def _answered(self, summaries: dict) -> None:
        """What answers the stream's calls: the request after it, or in a session the
        client messages after the response."""
        if not self.is_attached:
            return
        row = summaries.get(self.model.exchange)
        mine = row.response(self._turn()) if row is not None else None
        answer = mine.answer if mine is not None else None
        if self.turn is not None:
            none = "no later client message of the session answers these calls"
        else:
            none = "no later request in the recording answers these calls"
        self.answer = answer or none

    def action_request(self) -> None:
        """Show the request (the conversation) in place of the frame detail, or back."""
        right = self.query_one("#right", ContentSwitcher)
        showing = right.current == "conversation-scroll"
        right.current = "detail-scroll" if showing else "conversation-scroll"
        self.set_class(not showing, "-request")  # the request takes more of the width

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
        rows = self.rows  # sorted frame numbers
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
            number = number_answered(value)
            if number is not None and number <= self.model.total:
                self.go(number)
            elif number is not None:  # the frame kept, as --frame refuses it
                self.notify(past_the_end(number, self.model.total), severity="warning")
            elif value:
                self.notify(
                    f"{value!r} is not a frame number (0-{self.model.total})", severity="warning"
                )

        self.query_one(AskLine).ask(f"Go to frame (0-{self.model.total})", done)

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

        self.query_one(AskLine).ask(
            "Filter frames (text of the summary or an anomaly kind; empty: all)"
            + (f"; now {quote(self.filter_text)}" if self.filter_text else ""),
            done,
        )

    @on(RecordingGrew)
    @on(StreamRead)
    def _grew(self, event: RecordingGrew | StreamRead) -> None:
        """The model has new frames (read in the background, or --follow); at the last
        frame, follow to the newest."""
        at_end = self.frame >= self._total
        self._total = self.model.total
        self.rows = self.filtered()
        self.version += 1
        if at_end:
            self.frame = self.model.total
        if isinstance(event, RecordingGrew) and self.request is not None:
            self.session.when_analysed(self._analysed)
        if self.model.result is not None and not self._frozen:
            self._hold_still()

    # A long stream's frames live as long as its screen: a full pass of the garbage
    # collector walking them (100 ms over 300k frames) came during key presses; so did
    # one over a big recording's exchanges (50-70 ms over 1000 of them, whatever the
    # stream's length). Once the stream is read, what exists is frozen (gc.freeze: left
    # out of collections) until the last screen that froze it goes.
    _holding = 0  # stream screens holding the collector still

    def _hold_still(self) -> None:
        self._frozen = True
        StreamScreen._holding += 1
        gc.freeze()

    def on_unmount(self) -> None:
        if self._frozen:
            self._frozen = False
            StreamScreen._holding -= 1
            if not StreamScreen._holding:
                gc.unfreeze()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The response keys are a WebSocket session's response's only; while a question
        is asked, the keys are the answer's (n, p and space are letters of a filter)."""
        # (asked while the screen is still being composed, or torn down: no AskLine yet)
        ask = next(iter(self.query(AskLine)), None)
        if ask is not None and ask.asking:
            return False
        return self.turn is not None if action == "turn" else True

    def action_turn(self, direction: int) -> None:
        """The session's next (1) or previous (-1) response, in place of this one."""
        assert self.turn is not None
        k = self.turn.turn - 1 + direction  # (turns are numbered from 1, in order)
        if not 0 <= k < self.turns:
            self.notify(
                "no further response" if direction > 0 else "no earlier response", timeout=2
            )
            return
        self.post_message(OpenTurn(self.model.exchange, k, 0, replace=True))

    def action_strategy(self) -> None:
        self.strategy = (self.strategy + 1) % (len(self.model.dialect.strategies) - 1)

    def action_speed(self, factor: float) -> None:
        self.speed = min(64.0, max(1 / 64, self.speed * factor))

    def action_play(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
            self.playing = False
            return
        if self.neighbour(self.frame, 1) is None:  # at the end: play from the start
            self.frame = 0
        self._schedule()

    def _schedule(self) -> None:
        """Wait until the next frame the filter shows, at the recorded timing."""
        nxt = self.neighbour(self.frame, 1)
        if nxt is None:
            self.timer = None
            self.playing = False
            return
        t, now = self.model.time(nxt), self.model.time(self.frame) if self.frame else 0
        gap = t - now if t is not None and now is not None else None
        delay = (gap / 1e9 if gap is not None else 0.05) / self.speed
        self.timer = self.set_timer(min(max(delay, 0.001), 5.0), self._tick)  # type: ignore[assignment]
        self.playing = True

    def _tick(self) -> None:
        if self.timer is None:
            return
        self.frame = self.neighbour(self.frame, 1) or self.frame
        self._schedule()

    def action_arguments(self) -> None:
        state = self.state
        if state is None or state.number != self.frame:
            self.notify(f"frame {self.frame} is still being worked out", timeout=2)
            return
        calls = state.engine.calls_now()
        key = self.model.dialect.terms.key
        text = Text()
        for c in calls:
            text.append(
                f"{quote(c.name)} (id {quote(c.id)}, {key} {quote(c.index)})\n", style="bold"
            )
            text.append(
                f"{visible(c.arguments) if isinstance(c.arguments, str) else quote(c.arguments)}\n\n"
            )
        if not calls:
            text = Text("no calls yet\n")
        result = self.model.result
        if result is not None and result.tool_calls:  # what the tools gave, once it ended
            text.append("\n")
            text.append(results_panel(result.tool_calls, self.answer, ResultLine.LONG))
        self.app.push_screen(TextScreen(f"Arguments at frame {self.frame}", text))
