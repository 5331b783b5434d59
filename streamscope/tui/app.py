"""`streamscope replay`: the Textual app. A thin face over the engine (see model.py)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import get_current_worker

from ..analysis.driver import WEBSOCKET, ExchangeSummary, FollowingChild
from ..dialects import dialect, request_facts
from ..dialects.base import Turn
from ..inputs import RECORDING, ExchangeInfo, Source, describe_numbers, open_input
from ..inputs.reads import Reads
from ..inputs.session import TurnReads, turn_end
from ..recording.copies import name_of
from ..text import visible
from .keyboard import KeyboardApp
from .messages import OpenExchange, OpenTurn, Progressed, RecordingGrew, StreamRead
from .model import StreamModel, count_frames
from .screens import (
    ExchangesScreen,
    Loading,
    RequestScreen,
    SessionScreen,
    StreamScreen,
    TextScreen,
    Waiting,
    help_text,
)
from .session import Session, Summaries
from .session_rows import Layout, layout

if TYPE_CHECKING:
    from ..recording.ahead import Ahead

# --follow: how often the file's size is looked at (cheap), and the least time between two
# readings of what was appended (each reads the new lines and analyses the exchanges they
# touched again): a file that was quiet shows its new line within LOOK_EVERY seconds, one
# that keeps growing is read once a second.
LOOK_EVERY, GROW_EVERY = 0.2, 1.0
PROGRESS_EVERY = 0.1  # a loading bar's least time between two updates
# A stream of at most this many reads and bytes is read as it is opened, without a
# loading screen: a few milliseconds, where showing the loading screen and switching from
# it took 130 ms of each Enter on an exchange (one read of 3,000 Gemini candidates, 400
# KB, takes a second: its loading screen stays).
AT_ONCE, AT_ONCE_BYTES = 2_000, 128 * 1024


def no_responses(source: str, exchange: int) -> str:
    return f"{source}: exchange {exchange} is no WebSocket session, it has no responses"


def frame_of_session(source: str, exchange: int) -> str:
    name = f"{name_of(source)}#{exchange}"
    return (
        f"{source}: exchange {exchange} is a WebSocket session: --frame is "
        f"a frame of one of its responses ({name}.N or --response N names it)"
    )


def response_beyond(source: str, exchange: int, responses: int, turn: int) -> str:
    has = f"responses 1-{responses}" if responses else "no responses"
    return f"{source}: exchange {exchange} is a WebSocket session with {has}, not response {turn}"


def frame_beyond(source: str, asked: int, total: int) -> str:
    """--frame past the stream's end, said as export says --frames."""
    return f"{source}: --frame {asked}: the stream has frames 1-{total}"


def being_created(path: str) -> bool:
    """No file yet (`replay --follow` started before `record`), an empty file, or one
    whose first line is not whole yet: a recording the recorder has not yet given its
    header (False when it cannot be read: opening it says why)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return len(head) < 1 << 16 and b"\n" not in head


def waiting_for(path: str) -> str:
    """What the screen says while a followed recording is not written yet."""
    name = name_of(path)
    if not os.path.lexists(path):
        return f"Waiting for {name} to be created … (q quits)"
    return f"Waiting for {name}'s first line … (q quits)"


class ReplayApp(KeyboardApp):
    CSS_PATH = "streamscope.tcss"
    TITLE = "streamscope replay"
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]
    # classes on the screen, for the stylesheet: from 24 lines the timeline keeps its three
    # (below, one), and the stream 10 frame rows beside two calls in each table
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (24, "-short"), (34, "-tall")]

    def __init__(
        self,
        source: str,
        exchange: int | None = None,
        frame: int = 0,
        follow: bool = False,
        response: int | None = None,
        ahead: Ahead | None = None,
    ) -> None:
        """`response`: of exchange `exchange`, a WebSocket session, open this response.
        `ahead`: the recording's index, being scanned in a child process."""
        super().__init__()
        self.source = os.fspath(source)
        self.response = response
        # RecordingError for bad input, before any screen; then open what can be read.
        # Followed and still being created (not there yet, empty, its header not whole):
        # opened once its first line is there (`load`), as a recording until then.
        # followed, a file being written: its unreadable lines are skipped (said once);
        # else every line is read as inspect reads it (see `read_before_screen`)
        self._tolerant = follow
        try:
            opened = None if follow and being_created(self.source) else self._open()
        except BaseException:  # (said by the caller: the scan is not wanted)
            if ahead is not None:
                ahead.close()
            raise
        if ahead is not None:
            if opened is not None and opened.kind == RECORDING:
                opened.ahead = ahead
            else:
                ahead.close()
        self.format = opened.kind if opened is not None else RECORDING
        self.recorded = opened is None or opened.recorded  # exchanges, not one stream
        self.exchange = exchange
        self.start_frame = frame
        self.asked_frame: int | None = frame or None  # --frame, checked once the stream is read
        self.failure: str | None = None  # the one line said on leaving with status 2
        # what the screens read and ask, in one object
        self.session = Session(opened, follow, start_analysis=self.analyse)  # type: ignore[arg-type]
        self._follow_size = 0
        self._indexed = False  # --follow: growth is looked for once the file was indexed
        self._grown_at = 0.0  # when the last growth was read (time.monotonic)
        self.awaited: int | None = None  # --follow --exchange N before N is written
        self.following: FollowingChild | None = None  # --follow's analysis, once started
        # seconds of reading before a stream is first shown (its first frames: the screen
        # comes sooner), then between screen updates
        self.read_slices = (0.01, 1.0)
        # streams being read in the background: the analysis waits for them (it would take
        # the core the reading worker runs on, and a long stream is read first)
        self._reading = 0
        self._read_done = threading.Condition()

    def _open(self) -> Source:
        return open_input(self.source, tolerant=self._tolerant, check=not self._tolerant)

    def read_before_screen(self, progress: Callable[[int, int], None] | None = None) -> None:
        """A recording not followed is read whole now, before any screen, each line as
        inspect reads it: a line inspect refuses is its RecordingError here (one line, exit
        status 2). The index this scan builds is the one the screens read (one read of the
        file; a cut-off last line is kept as inspect keeps it)."""
        if not self.follow and self.format == RECORDING:
            self.input.index(progress)

    @property
    def input(self) -> Source:
        """The opened input (a followed recording still being created: once it has its
        first line, which the loading screen waits for before anything else)."""
        opened = self.session.input
        assert opened is not None, "the input is opened before it is read"
        return opened

    @property
    def follow(self) -> bool:
        return self.session.follow

    @property
    def infos(self) -> list[ExchangeInfo]:
        return self.session.infos

    @property
    def summaries(self) -> Summaries | None:
        return self.session.summaries

    def on_mount(self) -> None:
        name = name_of(self.source)
        if self.session.input is None:
            self.push_screen(Waiting(waiting_for(self.source)))
        else:
            self.push_screen(Loading(f"Reading {name} …"))
        self.load()
        if self.follow:  # a new line is shown well within a second of being written
            self.set_interval(LOOK_EVERY, self._check_growth)

    # -- loading -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def load(self) -> None:
        loading = self.screen
        progress = self._progress(loading)

        try:
            if self.session.input is None and not self._first_line(loading):
                return  # the app is leaving
            if self.recorded:
                size = os.path.getsize(self.source)  # before: what comes during is new
                self.session.infos = self.input.infos(progress)
                self._follow_size, self._indexed = size, True
            self.call_from_thread(self._loaded)
        except Exception as exc:  # RecordingError, OSError: one line, exit 2
            self.call_from_thread(self.fail, exc)

    def _progress(self, loading: Screen) -> Callable[[int, int], None]:
        """A worker's progress, for `loading`'s bar: shown every PROGRESS_EVERY seconds at
        most, and the worker does not wait for it (it waited for every block's repaint:
        a quarter of the 300,000-frame recording's 0.6 s of indexing)."""
        last = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if isinstance(loading, Loading) and (now - last >= PROGRESS_EVERY or done >= total):
                last = now
                loading.post_message(Progressed(done, total))

        return progress

    def _session_asked(self, info: ExchangeInfo) -> bool:
        """A response is asked of a WebSocket session only, and a frame of a session's
        response, not of the session (False: said why, and leaving)."""
        session = info.framing == WEBSOCKET
        if self.response is not None and not session:
            self.fail(no_responses(self.source, info.exchange))
            return False
        if session and self.response is None and self.asked_frame is not None:
            self.fail(frame_of_session(self.source, info.exchange))
            return False
        return True

    def _first_line(self, loading: Screen) -> bool:
        """--follow on a recording still being created: wait for its first line, then
        open it (RecordingError if it is not readable then). False: the app is leaving."""
        worker = get_current_worker()
        said = waiting_for(self.source)
        while being_created(self.source):
            if worker.is_cancelled:
                return False
            if isinstance(loading, Loading) and waiting_for(self.source) != said:
                said = waiting_for(self.source)  # created: now its first line
                self.call_from_thread(loading.say, said)
            time.sleep(LOOK_EVERY / 4)
        opened = self._open()
        self.session.input = opened
        self.format, self.recorded = opened.kind, opened.recorded
        if isinstance(loading, Loading):
            self.call_from_thread(loading.say, f"Reading {name_of(self.source)} …")
        return True

    def _loaded(self) -> None:
        for error in self.input.errors:  # skipped lines: said once, the rest is opened
            self._skipped(error)
        cut = self.input.stopped_at
        if cut is not None and not self.follow:  # (followed: the line is being written)
            self.notify(visible(cut.message), title="cut off", severity="warning", timeout=30)
        if not self.recorded:
            if self.exchange not in (None, 1):  # known only now when it was followed empty
                self.fail(
                    f"{self.source}: a {self.format} file holds one stream (exchange 1), "
                    f"not {self.exchange}"
                )
                return
            if self.response is not None:
                self.fail(f"{self.source}: a {self.format} file holds one stream, no session")
                return
            self.open_stream(1, replace=True)
            return
        numbers = [i.exchange for i in self.infos]
        if self.exchange is not None:
            if self.follow and self.exchange > max(numbers, default=0):
                # not written yet: the list until it is, then it opens (`_grew`)
                self.awaited = self.exchange
                self.switch_screen(ExchangesScreen(self.session))
                return
            if self.exchange not in numbers:
                self.fail(
                    f"{self.source}: there is no exchange {self.exchange} ({describe_numbers(numbers)})"
                )
                return
            if not self._session_asked(self.input.exchange(self.exchange).info):
                return
            self.open_stream(self.exchange, replace=True, turn=self.response)
        elif len(numbers) == 1 and not self.follow:  # following: more exchanges may come
            self.open_stream(numbers[0], replace=True)
        else:
            self.switch_screen(ExchangesScreen(self.session))

    # -- the analysis of every exchange (anomalies, contract), run once in a child process --

    @work(thread=True, group="analyse")
    def analyse(self) -> None:
        """The analysis runs in another process: on a big recording it takes seconds of
        CPU, and in this one it would hold the interpreter lock the screen needs.
        Following a recording, that process stays: on growth it reads only what was
        appended and re-analyses only the exchanges it touched (see `grow`). It starts
        once no stream is being read in the background (on two cores the two would share
        one while anything else runs)."""
        from ..analysis.driver import summarize_in_child

        worker = get_current_worker()
        with self._read_done:
            while self._reading and not worker.is_cancelled:
                self._read_done.wait(0.1)
        if worker.is_cancelled:
            return
        try:
            if self.follow and self.format == RECORDING:
                self.following = FollowingChild(self.source)
                with self.following.lock:  # a growth's update waits for the first one
                    rows = self.following.update()
                    self.call_from_thread(self.session.analysed, {r.exchange: r for r in rows})
                return
            rows = summarize_in_child(self.source)
        except Exception as exc:  # shown, never a traceback; the screens say what is missing
            error = visible(str(exc))
            self.call_from_thread(self.notify, f"analysis failed: {error}", severity="error")
            self.call_from_thread(self.session.analysed, {}, error)
            return
        self.call_from_thread(self.session.analysed, {r.exchange: r for r in rows})

    def on_unmount(self) -> None:
        if self.following is not None:
            self.following.close()
        opened = self.session.input
        if opened is not None and opened.ahead is not None:
            opened.ahead.close()  # (a scan the app left before it was done)

    def on_open_exchange(self, message: OpenExchange) -> None:
        self.open_stream(message.exchange, turn=message.turn)

    def on_open_turn(self, message: OpenTurn) -> None:
        self.open_turn(message.exchange, message.turn, message.frame, message.replace)

    def open_stream(self, exchange: int, replace: bool = False, turn: int | None = None) -> None:
        """Open exchange `exchange`: its stream, its request and response, or its session
        (`turn`: that response of the session, 1-based, instead)."""
        ex = self.input.exchange(exchange)
        info = ex.info
        if self.recorded and info.framing == WEBSOCKET:
            self._show_loading(f"Reading the session of exchange {exchange} …", replace)
            self.read_session(exchange, turn)
            return
        if self.recorded and ex.response is not None and not info.stream:
            screen = RequestScreen(self.session, ex)  # not a stream: request and response
            if replace:
                self.switch_screen(screen)
            else:
                self.push_screen(screen)
            return
        model = StreamModel(
            ex.reads,
            exchange,
            info.tools,
            info.response_format,
            self.end_of(info),
            growing=self.follow,
            told=ex.dialect(),
            chunk_log=self.input.chunk_log(info),
            timed=not self.input.untimed,
            check=info.dialect_check(),
        )
        if self._at_once(ex.reads):
            # read here, at once: no loading screen shown for the moment it would be up
            try:
                model.build()
            except Exception as exc:  # OSError (the file went away): one line, exit 2
                self.fail(exc)
                return
            self._built(model, exchange, push=not replace)
            model.shown.set()  # (no reading worker waits for the first paint)
            return
        loading = self._show_loading(f"Reading exchange {exchange} …", replace)
        self.build(model, loading, exchange)

    def _at_once(self, reads: Reads) -> bool:
        """A stream small enough to read as it is opened (a few milliseconds)."""
        if self.follow or self.asked_frame is not None or len(reads) > AT_ONCE:
            return False
        size = reads.byte_size()
        return size is not None and size <= AT_ONCE_BYTES

    def _show_loading(self, what: str, replace: bool) -> Loading:
        if replace and isinstance(self.screen, Loading):  # the file's: it says so instead
            loading = self.screen
            loading.say(what)
        else:
            loading = Loading(what)
            if replace:
                self.switch_screen(loading)
            else:
                self.push_screen(loading)
        return loading

    # -- WebSocket sessions ----------------------------------------------------------------

    @work(thread=True, group="build")
    def read_session(self, exchange: int, turn: int | None) -> None:
        """Read the session's messages and turns (every message line), then show them, or
        its response `turn` (1-based)."""
        try:
            ex = self.input.exchange(exchange)
            ws = ex.session()
        except Exception as exc:  # RecordingError, OSError: one line, exit 2
            self.call_from_thread(self.fail, exc)
            return
        if ws is not None:  # (it is: the exchange's framing is a session's)
            laid = layout(ws.messages, ws.turns) if turn is None else None
            self.call_from_thread(self._session_read, exchange, turn, laid)

    def _session_read(self, exchange: int, turn: int | None, laid: Layout | None) -> None:
        ex = self.input.exchange(exchange)
        ws = ex.session()
        assert ws is not None
        if turn is not None:
            if not 1 <= turn <= len(ws.turns):
                self.fail(response_beyond(self.source, exchange, len(ws.turns), turn))
                return
            self.open_turn(exchange, turn - 1, self.start_frame, replace=True)
            return
        self.switch_screen(SessionScreen(self.session, ex, ws, laid))

    def open_turn(self, exchange: int, k: int, frame: int = 0, replace: bool = False) -> None:
        """Open response k (0-based, among the session's turns) of session `exchange` at
        `frame`, read as inspect reads it: its request's tools, its end as the session's."""
        ex = self.input.exchange(exchange)
        ws = ex.session()
        assert ws is not None
        turn, info = ws.turns[k], ex.info
        facts = request_facts(dialect(ws.dialect), info.url, turn.request)
        end = turn_end(turn, k == len(ws.turns) - 1, info.end_reason, info.end_error, info.status)
        if self.format == RECORDING and info.end_ns is None:
            end["end_reason"] = "unfinished"
        model = StreamModel(
            TurnReads(turn),
            exchange,
            turn.tools or facts.tools or info.tools,
            facts.response_format,
            end,
            told=ws.dialect,
            turn=turn.turn,
        )
        self.start_frame = frame
        loading = self._show_loading(
            f"Reading response {turn.turn} of exchange {exchange} …", replace
        )
        self.build(model, loading, exchange, (turn, len(ws.turns)))

    @work(thread=True, group="build")
    def build(
        self,
        model: StreamModel,
        loading: Loading,
        exchange: int,
        turn: tuple[Turn, int] | None = None,
    ) -> None:
        """Read a first slice and show it, then the rest, the screen growing as it comes."""
        progress = self._progress(loading)

        with self._read_done:
            self._reading += 1
        try:
            model.start()
            # all of it when --frame must be checked against the stream's length, or the
            # stream opens at a frame (a session's message)
            first, then = self.read_slices
            whole = self.asked_frame is not None or self.start_frame
            done = model.read(progress, None if whole else first)
            if done:
                model.conclude()
            self.call_from_thread(self._built, model, exchange, turn)
            # the first frame is painted before the rest is read: the read holds the GIL
            model.shown.wait(5)
            while not done:
                time.sleep(0.02)  # between slices the screen has the interpreter to itself
                done = model.read(None, then)
                if done:
                    model.conclude()
                if not self.call_from_thread(self._stream_read, model):
                    return  # the stream's screen was left: stop reading it
        except Exception as exc:  # OSError (the file went away): one line, exit 2
            self.call_from_thread(self.fail, exc)
        finally:
            with self._read_done:
                self._reading -= 1
                self._read_done.notify_all()

    def _stream_read(self, model: StreamModel) -> bool:
        """More of the stream is in: tell its screen (False when it is not shown)."""
        screen = self.screen
        if not (isinstance(screen, StreamScreen) and screen.model is model):
            return False
        screen.post_message(StreamRead())
        if model.result is not None:
            self._say_error(model)
        return True

    def _say_error(self, model: StreamModel) -> None:
        if model.error is not None:
            self.notify(
                f"{visible(str(model.error))}: the stream is shown up to there",
                title="a line cannot be read",
                severity="error",
                timeout=30,
            )

    def fail(self, exc: BaseException | str) -> None:
        """Leave with exit status 2; the command says `failure`, one line (Textual's exit
        message would be wrapped at the terminal's width)."""
        self.failure = visible(f"streamscope: {exc}")
        self.exit(return_code=2)

    def frame_error(self) -> str | None:
        """--frame past the end of the stream it opens, said before the screen is drawn
        (a followed file can still grow to it: checked once its stream is read)."""
        asked = self.asked_frame
        if asked is None or self.follow:
            return None
        reads: Reads
        if self.recorded:
            exchange = self.exchange
            if exchange is None:  # the one exchange opens directly; of several, none does
                numbers = [i.exchange for i in self.input.infos()]
                if len(numbers) != 1:
                    return None
                exchange = numbers[0]
            ex = self.input.exchange(exchange)
            if ex.info.framing == WEBSOCKET:
                ws = ex.session()
                if ws is None:
                    return None  # the screen's checks say what is wrong
                if self.response is None:
                    return frame_of_session(self.source, exchange)
                if not 1 <= self.response <= len(ws.turns):
                    return response_beyond(self.source, exchange, len(ws.turns), self.response)
                reads = TurnReads(ws.turns[self.response - 1])
            elif self.response is not None:
                return no_responses(self.source, exchange)
            elif ex.response is not None and not ex.info.stream:
                return None  # no stream: the request and response are shown
            else:
                reads = ex.reads
        else:
            reads = self.input.exchange(1).reads
        total = count_frames(reads)
        return frame_beyond(self.source, asked, total) if asked > total else None

    def _built(
        self,
        model: StreamModel,
        exchange: int,
        turn: tuple[Turn, int] | None = None,
        push: bool = False,
    ) -> None:
        """Show the stream read (in place of its loading screen; `push`: over the screen
        it was opened from)."""
        name = name_of(self.source)
        title = f"{name} · exchange {exchange}" if self.recorded else name
        if turn is not None:
            title += f" · response {turn[0].turn} of {turn[1]}"
        if self.asked_frame is not None and self.asked_frame > model.total:
            said = frame_beyond(self.source, self.asked_frame, model.total)
            model.shown.set()  # never painted: the reading worker need not wait for it
            stack = self.screen_stack
            if isinstance(stack[-1], Loading) and len(stack) > 1:
                stack = stack[:-1]
            if not isinstance(stack[-1], ExchangesScreen):
                self.fail(said)
                return
            # opened from the list (`replay FILE --frame F`, several exchanges): said, and
            # the list kept; the exchange opens at its start when asked again
            self.asked_frame, self.start_frame = None, 0
            if isinstance(self.screen, Loading):
                self.pop_screen()
            self.notify(
                visible(f"{said} (exchange {exchange}); Enter opens it at its start"),
                title="no such frame",
                severity="error",
                timeout=30,
            )
            return
        self.asked_frame = None
        start = self.start_frame or (model.total if self.follow else 0)  # following: newest
        self.start_frame = 0
        request = self.input.exchange(exchange).request if self.recorded and turn is None else None
        screen = StreamScreen(self.session, model, title, start, request, turn)
        if push:
            self.push_screen(screen)
        else:
            self.switch_screen(screen)
        if model.result is not None:
            self._say_error(model)

    def _check_growth(self) -> None:
        """--follow: when the recording grew, index what was appended, in a worker."""
        try:
            size = os.path.getsize(self.source)
        except OSError:
            return
        now = time.monotonic()
        if (
            size != self._follow_size
            and self.format == RECORDING
            and self._indexed
            and now - self._grown_at >= GROW_EVERY
        ):
            self._follow_size, self._grown_at = size, now
            screen = self.screen
            self.grow(screen.model if isinstance(screen, StreamScreen) else None)

    @work(thread=True, exclusive=True, group="grow")
    def grow(self, model: StreamModel | None) -> None:
        """Read only the new lines: the exchanges they touched are brought up to date,
        new ones added, the open stream's model fed its new reads, and the analysis of
        the exchanges that changed brought in."""
        try:
            skipped = len(self.input.errors)
            if not self.input.refresh():
                return
            for error in self.input.errors[skipped:]:  # said as the lines at the start were
                self.call_from_thread(self._skipped, error)
            infos = [self.input.exchange(n).info for n in self.input.numbers()]
            if model is not None:
                info = next(i for i in infos if i.exchange == model.exchange)
                model.extend(self.end_of(info))
            following = self.following
            if following is None:  # not analysed yet: the first analysis reads it all
                self.call_from_thread(self._grew, infos, None)
                return
            with following.lock:
                rows = following.update()
                self.call_from_thread(self._grew, infos, rows)
        except Exception as exc:  # the file went away or turned bad: said, not a traceback
            self.call_from_thread(
                self.notify, f"following stopped: {visible(str(exc))}", severity="error"
            )

    def _skipped(self, error: Exception) -> None:
        self.notify(visible(str(error)), title="skipped a line", severity="error", timeout=30)

    def _grew(self, infos: list[ExchangeInfo], rows: list[ExchangeSummary] | None) -> None:
        self.session.grew(infos, rows)
        self.screen.post_message(RecordingGrew())
        wanted = self.awaited  # opened once answered: its screen depends on the response
        if wanted is not None and any(
            i.exchange == wanted and (i.status is not None or i.end_ns is not None) for i in infos
        ):
            self.awaited = None
            if isinstance(self.screen, ExchangesScreen):  # not when one was opened meanwhile
                self.open_stream(wanted, turn=self.response)

    def end_of(self, info: ExchangeInfo) -> dict:
        """How the exchange ended, for the engine ('unfinished' while it is still open)."""
        end = {"end_reason": info.end_reason, "status": info.status}
        if self.format == RECORDING and info.end_ns is None:
            end["end_reason"] = "unfinished"
        return end

    # -- app-wide actions ------------------------------------------------------------------

    def action_help(self) -> None:
        model = getattr(self.screen, "model", None)  # a stream's screen: its dialect's clients
        text = help_text(model.dialect.strategies[1:]) if model is not None else help_text()
        self.push_screen(TextScreen("streamscope replay: help", text))

    def action_back(self) -> None:  # type: ignore[override]
        if len(self.screen_stack) > 2:
            self.pop_screen()
        else:
            self.exit()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for binding in screen.BINDINGS:
            if not (isinstance(binding, Binding) and binding.description):
                continue
            action = binding.action
            # (not those the screen turns off: a session's response keys on an HTTP stream)
            if screen.check_action(action.split("(", 1)[0], ()) is not False:
                yield SystemCommand(
                    binding.description,
                    f"{binding.tooltip} (key {binding.key_display or binding.key})",
                    lambda action=action, screen=screen: self.run_action(action, screen),
                )
