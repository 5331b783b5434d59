"""What the replay shows, computed without Textual: one stream, frame by frame.

`StreamModel.build` reads the stream once: it keeps, per frame, its time and what its
one-line summary is made of (most frames of a long stream are one plain fragment: the
fragment is kept and the line built only for the rows shown), and every `every` frames a
copy of the engine (copies share the text before them) and of the decoder. `at(n)` then
resumes from the nearest copy, so any jump decodes and accumulates at most `every` frames.

On a stream of thousands of calls a copy itself is costly (it holds every call): `cost(n)`
tells what `at(n)` would take, and `compute(n)` does the same work on private copies, so
the replay can do a costly jump in a thread while its keys go on answering.
"""

from __future__ import annotations

import threading
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from itertools import chain
from typing import Any, overload

from ..core.collector import paused
from ..core.engine import Engine, Strategies, StreamResult
from ..core.events import FieldEvent
from ..core.frames import Frame
from ..core.record import record
from ..dialects import Dialect, dialect, open_engine
from ..dialects import worst as most_severe
from ..dialects.base import loaded
from ..dialects.mismatch import DialectCheck
from ..inputs.reads import Reads
from ..recording.format import RecordingError

SNAPSHOTS = 512  # engine copies kept at most (about: they are taken at read boundaries)
# A step back resumes from the snapshot before it and feeds on: a few hundred frames at
# 20,000 calls. After End and after a far jump, copies are kept TRAIL frames apart just
# before the frame shown (at most TRAILS of them), so the steps back that follow resume
# close by.
TRAIL, TRAILS = 48, 12
_SUMMED = -2  # FrameSummaries: the frame's summary is kept whole, not a plain fragment
_INT_LIMIT = 1 << 31  # what a C int (array "i") holds


class FrameSummaries(Sequence[str]):
    """Per frame, its one-line summary (the dialect's `summarize`), built when asked: a
    plain fragment (most frames of a long stream) is kept as the fragment and its call
    index, and only the rows on screen (or a filter) pay for the line."""

    __slots__ = ("texts", "calls", "summarize", "plain_summary")

    def __init__(self, told: Dialect) -> None:
        self.texts: list[str] = []  # the summary, or the plain frame's fragment
        self.calls = array("i")  # the plain fragment's call index (-1: content), or _SUMMED
        self.summarize = loaded(told.summarize)
        self.plain_summary = loaded(told.plain_summary)

    def add(self, frame: Frame, plain: tuple[int, str] | None) -> None:
        # (an index past what array("i") holds, 2^64 in a hostile file: summarised whole)
        if plain is None or not -1 <= plain[0] < _INT_LIMIT:
            self.texts.append(self.summarize(frame))
            self.calls.append(_SUMMED)
        else:
            self.texts.append(plain[1])
            self.calls.append(plain[0])

    def __len__(self) -> int:
        return len(self.calls)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        index = self.calls[i]  # IndexError past the end, as a list
        text = self.texts[i]
        return text if index == _SUMMED else self.plain_summary(index, text)


@record(slots=True)
class Snapshot:
    frames: int  # frames fed so far
    next_read: int  # the read to resume from
    engine: Engine
    decoder: object
    took: float = 0.0  # seconds its copy took (copying it again costs about as much)
    # the frames of the read before `next_read` that come after `frames`, decoded: a
    # snapshot kept for steps back may lie inside a read (a block of a plain file holds
    # hundreds of frames)
    pending: tuple[Frame, ...] = ()
    # a copy tidies the engine it copies (joins its fragments): one copy at a time
    lock: threading.Lock = field(default_factory=threading.Lock)


@record(slots=True)
class FrameState:
    """The stream after frame `number`: the engine, and what that frame did."""

    number: int
    frame: Frame | None
    engine: Engine
    events: list[FieldEvent] = field(default_factory=list)
    # every strategy's calls here, made once (`StreamModel.view`): the engine goes on to
    # the next frames when stepping, these stay what they were at this one
    views: Strategies | None = field(default=None, repr=False)

    def strategy_calls(self) -> Strategies:
        if self.views is None:
            self.views = self.engine.strategy_calls()
        return self.views


class StreamModel:
    def __init__(
        self,
        reads: Reads,
        exchange: int = 1,
        tools: list | None = None,
        response_format: object | None = None,
        end: dict | None = None,
        every: int = 256,
        thin: bool = True,
        growing: bool = False,
        told: str | None = None,
        chunk_log: bool = False,
        timed: bool = True,
        check: DialectCheck | None = None,
        turn: int | None = None,
    ) -> None:
        """`told`: the stream's dialect (None: none fits, read as Chat Completions);
        `turn`: the WebSocket session's response this stream is (None: no session's);
        `timed`: the input keeps times (a cassette keeps none: every frame's is unknown);
        `check`: the look at its events that says when they are another dialect's than
        its request names (ExchangeInfo.dialect_check), fed as it is read."""
        self.reads = reads
        self.told = told
        self.check = check
        self.dialect = dialect(told)
        self.chunk_log = chunk_log
        self.exchange = exchange
        self.turn = turn
        self.tools = tools
        self.response_format = response_format
        self.end = end or {}
        self.every = every
        self.thin = thin  # copies thin out where they cost more than the feeding (below)
        self.growing = growing  # --follow: an unfinished stream is still being written
        self.timed = timed
        self.times = array("q")  # per frame: ns from the request (-1: unknown)
        # per frame: ns since the frame before (0 when either time is unknown), for the
        # timeline's heat bar: kept as read, so a redraw takes maxima of slices, no loop
        self.gaps = array("q")
        self.read_offsets = array("q")  # per read: where it starts in the body
        self.summaries = FrameSummaries(self.dialect)
        self.snapshots: list[Snapshot] = []
        self.result: StreamResult | None = None
        self.anomaly_frames: list[int] = []  # sorted frames where an anomaly was first seen
        # severity -> the sorted frames whose most severe anomaly has it (the timeline's
        # ticks, found per column by bisection instead of a pass over every marked frame)
        self.tick_frames: dict[str, array] = {}
        self.error: RecordingError | None = None  # a line of the stream that could not be read
        self._live: tuple | None = None  # the engine and decoder, while the stream can grow
        self._next_read = self._since = self._last_len = 0
        # when the feeding since the last snapshot began, and what that copy took
        self._fed_from = self._copy_took = 0.0
        self._feeding = 0.0  # seconds spent feeding frames (copies left out): a frame's cost
        # the most calls a frame's tables were made of yet, at which frame, and what making
        # them took per call (see `view`)
        self._most_calls, self._most_at, self._view_rate = 0, 1, 0.0
        self.shown = threading.Event()  # set once a screen has painted the stream
        self._end_state: FrameState | None = None  # the last frame's, once the stream ended
        # the last state `at` gave and the frames after it: stepping on feeds it further
        self._cursor: tuple[FrameState, Iterator[Frame]] | None = None
        self._trail: list[Snapshot] = []  # the snapshots kept for steps back (TRAIL)
        self._keeping = threading.Lock()

    def _engine(self) -> Engine:
        return open_engine(
            self.told, self.exchange, self.tools, self.response_format, chunk_log=self.chunk_log
        )

    @property
    def total(self) -> int:
        return len(self.times)

    def build(self, progress: Callable[[int, int], None] | None = None) -> StreamResult:
        """One pass over the stream (call it from a worker thread for big streams)."""
        self.start()
        self.read(progress)
        return self.conclude()

    def start(self) -> None:
        """Before the first read: the engine, the decoder and the frame-0 snapshot."""
        self._live = (self._engine(), self.reads.decoder())
        engine, decoder = self._live
        self.snapshots = [Snapshot(0, 0, engine.copy(), decoder.copy())]
        self._next_read = self._since = 0

    def extend(self, end: dict | None = None) -> int:
        """The stream grew (--follow): feed the reads added since, update how it ended.
        Returns how many frames were added."""
        before = self.total
        if end is not None:
            self.end = end
        if self._live is not None and self.error is None:
            self.read()
            self.conclude()
        return self.total - before

    def read(
        self, progress: Callable[[int, int], None] | None = None, seconds: float | None = None
    ) -> bool:
        """Feed the reads not fed yet (for about `seconds` at most, when given): the frames
        can be shown while the rest is read. True when every read is in."""
        engine, decoder = self._live  # type: ignore[misc]
        n_reads, since = len(self.reads), self._since
        # a copy shares the text before it with the copies before it (strategies.freeze),
        # so copies are cheap: about 512 at most, a jump re-feeds a few hundred frames
        every = max(self.every, n_reads // SNAPSHOTS)
        times, gaps, summaries = self.times, self.gaps, self.summaries
        feed, add, plain_fragment = engine.feed, summaries.add, loaded(self.dialect.plain)
        before = times[-1] if times else 0
        offset = self.read_offsets[-1] + self._last_len if self.read_offsets else 0
        stop = None if seconds is None else time.monotonic() + seconds
        clock = time.perf_counter
        if not self._fed_from:
            self._fed_from = clock()
        began, copying, fed = clock(), 0.0, len(times)
        reads = self.reads.reads_from(self._next_read, n_reads)
        check = self.check
        for i in range(self._next_read, n_reads):
            try:
                data, t = next(reads)
            except RecordingError as e:  # the stream is shown up to the line that broke
                self.error = e
                self.reads.stop = i  # type: ignore[attr-defined]  # only recordings raise
                break
            self.read_offsets.append(offset)
            offset += len(data)
            self._last_len = len(data)
            for frame in decoder.feed(data, t):
                plain = plain_fragment(frame.payload)  # read once: the engine and the summary
                feed(frame, plain)
                add(frame, plain)
                if check is not None and not check.feed(frame):
                    check = self.check = None  # the request's dialect's events
                t_ns = -1 if frame.time_ns is None or not self.timed else frame.time_ns
                times.append(t_ns)
                gaps.append(t_ns - before if t_ns >= 0 and before >= 0 else 0)
                before = t_ns
                since += 1
            if since >= every and (not self.thin or clock() - self._fed_from >= self._copy_took):
                # at a read boundary (resume is exact), and after at least as long feeding
                # as the last copy took: a copy grows with the calls (a stream of 5,000
                # calls spent 7 of its 8 s of reading copying), so on such a stream the
                # copies thin out and cost at most what the feeding does
                copied = clock()
                with paused():  # (a full pass falling in it made a copy 10x dearer)
                    snap = Snapshot(len(times), i + 1, engine.copy(), decoder.copy())
                self._fed_from = now = clock()
                snap.took = self._copy_took = now - copied
                copying += now - copied
                self.snapshots.append(snap)
                since = 0
            self._next_read = i + 1
            if progress is not None and i % 512 == 0:
                progress(i + 1, n_reads)
            if stop is not None and times and time.monotonic() > stop:
                break
        self._since = since
        if len(times) > fed:
            self._feeding += clock() - began - copying
        if progress is not None:
            progress(self._next_read, n_reads)
        return self._next_read >= n_reads or self.error is not None

    @property
    def reading(self) -> float | None:
        """While reads are still being fed (no result yet): the share done, else None."""
        if self.result is not None:
            return None
        return self._next_read / max(len(self.reads), 1)

    @property
    def marks(self) -> Mapping[int, Sequence[str]]:
        """Frame -> the anomaly kinds first seen there (those seen so far, while reading)."""
        if self.result is not None:
            return self.result.anomaly_frames
        return self._live[0].log.marks() if self._live is not None else {}

    def _flushed(self, engine: Engine, frames: list[Frame]) -> None:
        """The frames only the body's end completes (a framing's flush), fed as `read`
        feeds the others."""
        times = self.times
        before = times[-1] if times else 0
        plain_fragment = loaded(self.dialect.plain)
        for frame in frames:
            plain = plain_fragment(frame.payload)
            engine.feed(frame, plain)
            self.summaries.add(frame, plain)
            if self.check is not None and not self.check.feed(frame):
                self.check = None
            t_ns = -1 if frame.time_ns is None or not self.timed else frame.time_ns
            times.append(t_ns)
            self.gaps.append(t_ns - before if t_ns >= 0 and before >= 0 else 0)
            before = t_ns

    def conclude(self) -> StreamResult:
        """Every read is in: how the stream ended, its anomalies and repairs."""
        engine, decoder = self._live  # type: ignore[misc]
        # a stream still being written goes on: its result is computed on copies
        live = self.end.get("end_reason") == "unfinished"
        if live:
            engine, decoder = engine.copy(), decoder.copy()
        else:
            self._live = None
        if live and self.growing:  # not ended yet: no end-of-stream verdicts
            if self.check is not None:
                self.check.file(engine.log, copy=True)
            seen = {(a.kind, a.choice, a.frame) for a in engine.log.entries()}
            marks = {f: list(kinds) for f, kinds in engine.log.frames().items()}
            result = engine.finish(None)
            result.anomalies = [a for a in result.anomalies if (a.kind, a.choice, a.frame) in seen]
            result.anomaly_frames = marks
        else:
            self._flushed(engine, decoder.flush())
            if self.check is not None:
                self.check.file(engine.log, copy=live)
            ended = self.reads.ended(decoder.finish())  # (a chunk log holds no end marker)
            result = engine.finish(ended, **self.end, expect_done=not self.chunk_log)
        marked = sorted(f for f, kinds in result.anomaly_frames.items() if kinds and f > 0)
        self.tick_frames = _by_worst(marked, result.anomaly_frames)
        self.anomaly_frames = marked
        if not live and self.total:  # End is the most visited frame: its state, kept ready
            snap = [s for s in self.snapshots if s.frames < self.total][-1]
            # (and the copies for the steps back from it: this runs off the screen's thread)
            trail = range(snap.frames + TRAIL, self.total, TRAIL)
            end = self._feed_keeping(self.total, snap, trail)[0]
            self._end_state = end if end is None else self.view(end)
        self.result = result
        return result

    @overload
    def at(self, n: int) -> FrameState: ...
    @overload
    def at(self, n: int, stop: Callable[[], bool]) -> FrameState | None: ...
    def at(self, n: int, stop: Callable[[], bool] | None = None) -> FrameState | None:
        """The state after frame `n` (0: before the first frame); None once `stop()`
        (asked every 256 frames fed) says it is no longer wanted.

        Stepping forward feeds on from the last state asked for (no copy of the engine,
        whose copy grows with the stream); other jumps resume from the nearest snapshot.
        One thread at a time: stepping feeds the engine of the state given last.
        """
        n = max(0, min(n, self.total))
        known = self._known(n)
        if known is not None:
            return known
        snap = self._snapshot_before(n)
        cursor, self._cursor = self._cursor, None
        found = None
        if cursor is not None and snap.frames <= cursor[0].number < n:
            state, frames = cursor
            # (its frames may end before n: --follow read more since they were opened)
            found = self._feed_to(n, state.engine, frames, stop)
        if found is None:
            if stop is not None and stop():
                return None
            if n - snap.frames > 2 * TRAIL:  # a far jump: one copy kept for the steps back
                found, frames = self._feed_keeping(n, snap, (n - TRAIL,), stop)
            else:
                engine, frames = self._resume(snap)
                found = self._feed_to(n, engine, frames, stop)
        if found is None:
            if stop is not None and stop():
                return None
            raise IndexError(f"frame {n} is not in the stream")
        self._cursor = (found, frames)
        return found

    def cost(self, n: int) -> float:
        """About how many seconds showing frame `n` takes: the engine copy `at` resumes
        from (if any), the frames it feeds, the calls the tables are made of."""
        n = max(0, min(n, self.total))
        end, cursor = self._end_state, self._cursor
        if n == 0 or (end is not None and end.number == n):  # (the end's calls made ahead)
            return 0.0
        if cursor is not None and cursor[0].number == n:
            return 0.0 if cursor[0].views is not None else self._view_cost(n)
        per_frame = self._feeding / max(self.total, 1)
        snap = self._snapshot_before(n)
        if cursor is not None and snap.frames <= cursor[0].number < n:
            feeding = (n - cursor[0].number) * per_frame
        else:
            feeding = snap.took + (n - snap.frames) * per_frame
        return feeding + self._view_cost(n)

    def view(self, state: FrameState) -> FrameState:
        """Make `state`'s strategy calls now, timed: on a stream of thousands of calls,
        making them is most of what showing a frame costs."""
        if state.views is None:
            began = time.perf_counter()
            views = state.strategy_calls()
            # the calls shown stay as they are: feeding on copies a call before changing
            # it, so the next frame's views remake only the calls that changed
            state.engine.seal()
            took = time.perf_counter() - began
            calls = max((len(v) for v in views.values() if isinstance(v, list)), default=0)
            rate = took / max(calls, 1)
            # as many calls again, made for less, were mostly made before (a copy shares
            # the Calls of its sealed calls): the estimate keeps what making them anew costs
            if calls > self._most_calls or (calls == self._most_calls and rate > self._view_rate):
                self._most_calls, self._most_at = calls, max(state.number, 1)
                self._view_rate = rate
        return state

    def _view_cost(self, n: int) -> float:
        """What making the calls at frame `n` takes: the most calls seen yet, or more past
        the frame they were seen at (as many more as frames more)."""
        calls = self._most_calls * max(1.0, n / self._most_at)
        if self.result is not None:
            calls = min(calls, max(len(self.result.tool_calls), self._most_calls))
        return calls * self._view_rate

    def _known(self, n: int) -> FrameState | None:
        """The state after frame `n` when it costs nothing to give: before the first
        frame, the last frame's (kept), the one `at` gave last."""
        if n == 0:
            return FrameState(0, None, self._resume(self.snapshots[0])[0])
        end, cursor = self._end_state, self._cursor
        if end is not None and end.number == n:
            return end
        if cursor is not None and cursor[0].number == n:
            return cursor[0]
        return None

    def _snapshot_before(self, n: int) -> Snapshot:
        """The last snapshot before frame n (the first one, for frame 0)."""
        i = bisect_left(self.snapshots, n, key=lambda s: s.frames)
        return self.snapshots[max(i - 1, 0)]

    def _resume(self, snap: Snapshot) -> tuple[Engine, Iterator[Frame]]:
        engine, decoder = self._copies(snap)
        frames = self.reads.frames(snap.next_read, decoder)
        return engine, chain(snap.pending, frames) if snap.pending else frames

    def _copies(self, snap: Snapshot) -> tuple[Engine, Any]:
        """The engine and decoder of `snap`, copied to feed on."""
        with snap.lock, paused():
            return snap.engine.copy(), snap.decoder.copy()  # type: ignore[attr-defined]

    def _feed_to(
        self,
        n: int,
        engine: Engine,
        frames: Iterator[Frame],
        stop: Callable[[], bool] | None = None,
    ) -> FrameState | None:
        """Feed `frames` to `engine` up to frame `n` (None: not in them, or `stop()` said
        so, asked every 256 frames)."""
        for frame in frames:
            if stop is not None and not frame.number & 255 and stop():
                return None
            engine.collect_events = frame.number == n
            events = engine.feed(frame)
            if frame.number == n:
                engine.collect_events = False
                return FrameState(n, frame, engine, events or [])
        return None

    def _feed_keeping(
        self,
        n: int,
        snap: Snapshot,
        marks: Iterable[int],
        stop: Callable[[], bool] | None = None,
    ) -> tuple[FrameState | None, Iterator[Frame]]:
        """`_feed_to(n, *_resume(snap))` and the frames after n, keeping a snapshot at each
        of `marks` (frame numbers, ascending) on the way (the screen's thread and the
        reading worker may both call it)."""
        engine, decoder = self._copies(snap)
        wanted = iter(marks)
        mark = next(wanted, None)
        reads = self.reads
        n_reads = len(reads)

        def frames() -> Iterator[tuple[Frame, int, list[Frame], int]]:
            # each frame, the read after its own (-1: the decoder's last frames, flushed
            # after every read, where no snapshot is kept), where it is in its read's
            for frame in snap.pending:
                yield frame, -1, [], 0
            for i, (data, t) in enumerate(
                reads.reads_from(snap.next_read, n_reads), snap.next_read
            ):
                got = list(decoder.feed(data, t))  # (the decoder is past the whole read)
                for k, frame in enumerate(got):
                    yield frame, i + 1, got, k
            for frame in decoder.flush():
                yield frame, -1, [], 0

        feeding = frames()
        for frame, after, got, k in feeding:
            if stop is not None and not frame.number & 255 and stop():
                break
            engine.collect_events = frame.number == n
            events = engine.feed(frame)
            if frame.number == n:
                engine.collect_events = False
                return FrameState(n, frame, engine, events or []), (f[0] for f in feeding)
            if mark is not None and after > 0 and frame.number >= mark:
                copied = time.perf_counter()
                with paused():
                    kept = Snapshot(frame.number, after, engine.copy(), decoder.copy())
                kept.took = time.perf_counter() - copied
                kept.pending = tuple(got[k + 1 :])
                self._keep(kept)
                while mark is not None and mark <= frame.number:
                    mark = next(wanted, None)
        return None, iter(())

    def _keep(self, snap: Snapshot) -> None:
        """Add a snapshot for the steps back (the oldest such one goes past TRAILS)."""
        with self._keeping:  # (a list read without the lock is whole before or after)
            at = bisect_left(self.snapshots, snap.frames, key=lambda s: s.frames)
            if at < len(self.snapshots) and self.snapshots[at].frames == snap.frames:
                return  # (one is there already)
            self.snapshots.insert(at, snap)
            self._trail.append(snap)
            if len(self._trail) > TRAILS:
                self.snapshots.remove(self._trail.pop(0))

    def replayed(self) -> Iterator[list[FieldEvent]]:
        """Per frame, from the first, what robust did there (its events), fed once on a
        fresh engine: a pass over the stream that leaves the model's own state alone."""
        engine, frames = self._resume(self.snapshots[0])
        engine.collect_events = True
        for frame in frames:
            yield engine.feed(frame) or []

    def raw(self, frame: Frame) -> list[bytes]:
        """The frame's bytes as received, one piece per read they arrived in."""
        pieces = []
        for i in range(frame.first_read, frame.last_read + 1):
            data, _ = self.reads.read(i)
            at = self.read_offsets[i]
            lo, hi = max(frame.start - at, 0), min(frame.end - at, len(data))
            if hi > lo:
                pieces.append(data[lo:hi])
        return pieces

    def frame(self, n: int) -> Frame:
        return self.at(n).frame  # type: ignore[return-value]

    def time(self, n: int) -> int | None:
        t = self.times[n - 1] if 1 <= n <= self.total else -1
        return None if t < 0 else t

    def gap(self, n: int) -> int | None:
        """ns since the previous frame (or since the request, for frame 1)."""
        t = self.time(n)
        if t is None:
            return None
        before = self.time(n - 1) if n > 1 else 0
        return None if before is None else t - before


def _by_worst(frames: list[int], marks: Mapping[int, Sequence[str]]) -> dict[str, array]:
    """Severity -> which of `frames` (sorted) have their most severe anomaly at it."""
    out: dict[str, array] = {}
    worst: dict[tuple[str, ...], str] = {}  # a frame's kinds are mostly one shared tuple
    for f in frames:
        kinds = tuple(marks[f])
        level = worst.get(kinds)
        if level is None:
            level = worst[kinds] = most_severe(kinds)  # type: ignore[assignment]
        got = out.get(level)  # type: ignore[arg-type]
        if got is None:
            got = out[level] = array("q")  # type: ignore[index]
        got.append(f)
    return out


def count_frames(reads: Reads) -> int:
    """The frames a StreamModel of `reads` shows: up to a line that cannot be read, as
    `StreamModel.read` stops there, then what the decoder holds at the end."""
    decoder, n = reads.decoder(), 0
    try:
        for data, t in reads.reads_from(0, len(reads)):
            n += sum(1 for _ in decoder.feed(data, t))
    except RecordingError:
        pass
    return n + sum(1 for _ in decoder.flush())
