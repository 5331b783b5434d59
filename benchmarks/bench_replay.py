"""First paint and jump times of `streamscope replay`: on the 1000-exchange, 1M-frame
recording, and on one stream of 300,000 frames (three parallel calls, interleaved).

    .venv/bin/python benchmarks/bench_replay.py [--runs=3]

Runs the app headless (Textual's run_test) in a child process per recording and prints:
for the 1000 x 1000 recording, time to the first screen (the loading screen with its
progress bar), time until the exchanges list is shown, time to open one stream, jump
times to random frames once the analysis is done (model only, and until the screen
settles: see Terminal); for the long stream, time until its first frame is on screen,
until the background read is done (beside `inspect`'s time on the same file), End and
random jumps until the screen settles (a key press through Pilot costs the harness
~85 ms of its own, printed beside them); each child's peak memory. Each figure is the
median over rounds (3 by default), each round a child per recording and an `inspect` of
the long stream.
Writes the recordings first if benchmarks/out/ does not have them.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
BIG = os.path.join(HERE, "out", "recording-1M.jsonl")
LONG = os.path.join(HERE, "out", "recording-300k-interleaved.jsonl")
CALLS = os.path.join(HERE, "out", "single-chunk-calls-20k.sse")
LAUNCHED = 0.0  # when the parent launched this child process (time.time())


def interleaved(frames: int, calls: int = 3) -> list[bytes]:
    """One stream: `calls` parallel calls opened together, their argument fragments
    interleaved in short bursts (as providers stream parallel tool use)."""
    from benchmarks.gen import _event

    def fragment(i: int, text: str) -> bytes:
        return _event({"tool_calls": [{"index": i, "function": {"arguments": text}}]})

    out = [_event({"role": "assistant", "content": None})]
    for i in range(calls):
        call = {"index": i, "id": f"call_{i}", "type": "function"}
        out.append(_event({"tool_calls": [call | {"function": {"name": "write_file"}}]}))
    out += [fragment(i, '{"text": "') for i in range(calls)]
    words, bursts = ["lorem ", "ipsum ", "dolor ", "sit "], (1, 2, 1, 1, 3)
    body, k, turn = frames - len(out) - calls - 2, 0, 0
    while k < body:
        for _ in range(min(bursts[turn % len(bursts)], body - k)):
            out.append(fragment(turn % calls, words[k % 4]))
            k += 1
        turn += 1
    out += [fragment(i, '"}') for i in range(calls)]
    out += [_event({}, "tool_calls"), b"data: [DONE]\n\n"]
    return out


class Terminal:
    """When the screen settles after a step, as a person would see it.

    Headless, Textual computes each update it would send the terminal (every widget
    rendered, the compositor's chops) but skips turning it into bytes; here each update is
    turned into them too, as a real terminal's driver does, and timed. A step may be
    followed by more updates (a size that changed asks for a second layout pass) that
    repaint the same cells: the step's time runs to the last update that changed a cell,
    found by replaying each update on a grid of cells, off the clock.
    """

    def __init__(self, app) -> None:
        from rich.segment import ControlType

        self.move = ControlType.CURSOR_MOVE_TO
        self.cells: dict[tuple[int, int], tuple] = {}
        self.changes: list[float] = []  # when each update that changed a cell was sent
        self.spent = 0.0  # seconds of replaying updates on the grid, not the app's
        display = app._display

        def timed(screen, update) -> None:
            display(screen, update)
            if update is None:
                return
            update.render_segments(app.console)  # the bytes the terminal would get
            sent = time.perf_counter()
            if self._replay(update.__rich_console__(app.console, app.console.options)):
                self.changes.append(sent - self.spent)
            self.spent += time.perf_counter() - sent

        app._display = timed

    def _replay(self, segments) -> bool:
        cells, changed, x, y = self.cells, False, 0, 0
        for text, style, control in segments:
            if control:
                for code in control:
                    if code[0] == self.move:
                        x, y = code[1], code[2]
                continue
            for char in text:
                if char == "\n":
                    continue
                if cells.get((x, y)) != (char, style):
                    cells[x, y] = (char, style)
                    changed = True
                x += 1
        return changed

    def start(self) -> float:
        self.changes.clear()
        self.spent = 0.0
        return time.perf_counter()

    def settled_ms(self, since: float) -> float:
        """Milliseconds from `since` (start()) to the last update that changed a cell."""
        return (self.changes[-1] - since) * 1000 if self.changes else 0.0

    def answered_ms(self, since: float) -> float:
        """Milliseconds from `since` (start()) to the first update that changed a cell."""
        return (self.changes[0] - since) * 1000 if self.changes else 0.0


async def measure_long(path: str, ahead=None) -> dict:
    """One long stream: first frame, the background read, End and random jumps (`ahead`:
    its index being scanned in a child process, as `streamscope replay` has it)."""
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import StreamScreen

    async def until(condition) -> None:
        # asyncio's sleep, not Pilot's pause: each pause also waits on every widget and
        # forces a screen update, which while the stream is read (hundreds of polls) is
        # work the app would not do on its own
        while not condition():
            await asyncio.sleep(0.002)

    out: dict = {}
    start = time.perf_counter()
    app = ReplayApp(path, exchange=1, ahead=ahead)
    app.read_before_screen()  # (as `streamscope replay` reads it: every line, before the screen)
    terminal = Terminal(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(lambda: isinstance(app.screen, StreamScreen))
        screen = app.screen
        await until(screen.model.shown.is_set)  # set once the first frame is painted
        out["first_frame_s"] = time.perf_counter() - start
        # from the launch of this process (interpreter start and imports included), as a
        # user who types `streamscope replay FILE` waits for it
        out["first_frame_launch_s"] = time.time() - LAUNCHED
        await until(lambda: screen.model.result is not None)
        out["read_done_s"] = time.perf_counter() - start
        # the analysis (contract findings, in a child process) starts once the stream is
        # read; End and jumps are measured after it, with nothing else running
        await until(lambda: app.session.summaries is not None)
        out["analysed_s"] = time.perf_counter() - start
        total = out["frames_in_stream"] = screen.model.total
        # End's action, as the jumps below call `go`, timed until the screen settles (see
        # Terminal); a key press through Pilot costs the harness itself ~85 ms more (it
        # waits for the app to go idle twice over), printed beside it
        t = time.perf_counter()
        await pilot.press("z")  # a key nothing is bound to
        await pilot.pause()
        out["key_press_ms"] = (time.perf_counter() - t) * 1000
        t = terminal.start()
        screen.action_jump(-1)
        await pilot.pause()
        out["end_ms"] = terminal.settled_ms(t)
        assert screen.frame == total
        rng = random.Random(7)
        jumps = []
        for _ in range(10):
            n = rng.randint(1, total)
            t = terminal.start()
            screen.go(n)
            await pilot.pause()
            jumps.append(terminal.settled_ms(t))
        out["jump_ms_p50"] = statistics.median(jumps)
        out["jump_ms_max"] = max(jumps)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


async def measure_calls(path: str) -> dict:
    """One stream of 20,000 calls: End, a step back from it and random jumps, each timed
    until the screen answers (the frame number moves: costly frames are worked out in a
    thread) and until the frame's calls are on screen."""
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import StreamScreen

    out: dict = {}
    app = ReplayApp(path, exchange=1)
    terminal = Terminal(app)
    async with app.run_test(size=(100, 30)) as pilot:
        while not isinstance(app.screen, StreamScreen):
            await asyncio.sleep(0.005)
        screen = app.screen
        while screen.model.result is None:
            await asyncio.sleep(0.01)
        await pilot.pause()
        out["frames_in_stream"] = total = screen.model.total

        async def step(n: int) -> tuple[float, float]:
            t = terminal.start()
            screen.go(n)
            while not terminal.changes:
                await asyncio.sleep(0.001)
            while screen.state is None or screen.state.number != n:
                await asyncio.sleep(0.002)
            await pilot.pause()
            return terminal.answered_ms(t), terminal.settled_ms(t)

        _, out["end_ms"] = await step(total)
        out["back_answered_ms"], out["back_shown_ms"] = await step(total - 1)
        rng = random.Random(7)
        answered, shown = [], []
        for _ in range(10):
            n = rng.randint(1, total - 2)
            c = screen.model.cost(n)
            a, b = await step(n)
            if os.environ.get("BENCH_DEBUG"):
                print(n, round(c * 1000), round(a), round(b), file=sys.stderr)
            answered.append(a)
            shown.append(b)
        out["jump_answered_ms_max"] = max(answered)
        out["jump_shown_ms_p50"] = statistics.median(shown)
        out["jump_shown_ms_max"] = max(shown)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


async def measure(path: str) -> dict:
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import ExchangesScreen, Loading, StreamScreen

    out: dict = {}
    start = time.perf_counter()
    app = ReplayApp(path)
    terminal = Terminal(app)
    async with app.run_test(size=(100, 30)) as pilot:
        while not isinstance(app.screen, (Loading, ExchangesScreen)):
            await pilot.pause(0.001)
        out["first_screen_s"] = time.perf_counter() - start
        while not isinstance(app.screen, ExchangesScreen):
            await pilot.pause(0.005)
        await pilot.pause()
        out["exchanges_listed_s"] = time.perf_counter() - start
        out["exchanges"] = app.screen.query_one("#exchanges").row_count
        t = time.perf_counter()
        app.open_stream(500)
        while not isinstance(app.screen, StreamScreen):
            await pilot.pause(0.002)
        await pilot.pause()
        out["open_stream_s"] = time.perf_counter() - t
        screen = app.screen
        # the jumps are timed once the analysis (contract findings, a child process whose
        # results then fill the exchanges list and the request view) is in, as on the long
        # stream: nothing else running
        while app.session.summaries is None:
            await asyncio.sleep(0.01)
        out["analysed_s"] = time.perf_counter() - start
        await pilot.pause()
        total = screen.model.total
        rng = random.Random(7)
        model_ms, screen_ms = [], []
        for _ in range(50):
            n = rng.randint(1, total)
            t = time.perf_counter()
            screen.model.at(n)
            model_ms.append((time.perf_counter() - t) * 1000)
            t = terminal.start()
            screen.go(n)
            await pilot.pause()
            screen_ms.append(terminal.settled_ms(t))
        out["frames_in_stream"] = total
        out["jump_model_ms_p50"] = statistics.median(model_ms)
        out["jump_model_ms_max"] = max(model_ms)
        out["jump_screen_ms_p50"] = statistics.median(screen_ms)
        out["jump_screen_ms_max"] = max(screen_ms)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def child(which: str, path: str) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, which, f"--launched={time.time()!r}", path],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    global LAUNCHED
    for arg in sys.argv:
        if arg.startswith("--launched="):
            LAUNCHED = float(arg.split("=", 1)[1])
    if "--child" in sys.argv:
        print(json.dumps(asyncio.run(measure(sys.argv[-1]))))
        return
    if "--child-long" in sys.argv:
        # as `streamscope replay` starts: the index scan forked before the TUI is imported,
        # every line checked as inspect checks it
        from streamscope.recording.ahead import scan_ahead

        ahead = scan_ahead(sys.argv[-1], tolerant=False, check=True)
        print(json.dumps(asyncio.run(measure_long(sys.argv[-1], ahead))))
        return
    if "--child-calls" in sys.argv:
        print(json.dumps(asyncio.run(measure_calls(sys.argv[-1]))))
        return
    from benchmarks.gen import single_chunk_calls_events, write_recording, write_sse

    os.makedirs(os.path.dirname(BIG), exist_ok=True)
    if not os.path.exists(BIG):
        print("writing the 1000-exchange, 1M-frame recording ...", flush=True)
        write_recording(BIG, 1000, 1000)
    if not os.path.exists(LONG):
        print("writing the 300k-frame interleaved stream ...", flush=True)
        import benchmarks.gen as gen

        events, gen.stream_events = gen.stream_events, interleaved
        try:
            write_recording(LONG, 1, 300_000)
        finally:
            gen.stream_events = events
    if not os.path.exists(CALLS):
        write_sse(CALLS, single_chunk_calls_events(20_000))
    runs = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("--runs=")), 3)
    # Rounds, each a child per recording and an `inspect` of the long stream: this VM's
    # speed drifts by half within a minute, so each figure is the median over the rounds
    # (the range beside it), and the read is held to the median inspect.
    big: list[dict] = []
    long: list[dict] = []
    calls: list[dict] = []
    inspect_s: list[float] = []
    for _ in range(runs):
        big.append(child("--child", BIG))
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "streamscope", "inspect", LONG], capture_output=True, check=False
        )
        inspect_s.append(time.perf_counter() - t)
        long.append(child("--child-long", LONG))
        calls.append(child("--child-calls", CALLS))

    def fig(rs: list[dict], key: str, scale: float = 1.0, digits: int = 0) -> str:
        """The median of `key` over the rounds, and its range."""
        values = sorted(r[key] * scale for r in rs)
        mid, lo, hi = statistics.median(values), values[0], values[-1]
        return f"{mid:7.{digits}f}" + (f" ({lo:.{digits}f}-{hi:.{digits}f})" if runs > 1 else "")

    r = big[0]
    print(f"median of {runs} rounds (range in brackets)\n")
    print(f"1M frames in {r['exchanges']} exchanges ({os.path.getsize(BIG) / 2**20:.0f} MiB)")
    print(
        f"first screen (loading, progress bar)  {fig(big, 'first_screen_s', 1000)} ms   (goal: within 1 s)"
    )
    print(f"exchanges listed                      {fig(big, 'exchanges_listed_s', 1000)} ms")
    print(
        f"open a {r['frames_in_stream']}-frame stream                {fig(big, 'open_stream_s', 1000)} ms"
    )
    print(f"analysis done                         {fig(big, 'analysed_s', 1, 1)} s")
    print(
        f"jump to a random frame, model         {fig(big, 'jump_model_ms_p50', 1, 1)} ms p50, max {fig(big, 'jump_model_ms_max', 1, 1).strip()} ms"
    )
    print(
        f"jump to a random frame, whole screen  {fig(big, 'jump_screen_ms_p50', 1, 1)} ms p50, max {fig(big, 'jump_screen_ms_max', 1, 1).strip()} ms   (goal: within 100 ms)"
    )
    print(
        f"peak memory                           {fig(big, 'peak_rss_mib')} MiB   (goal: under 512 MiB)"
    )
    r = long[0]
    inspect = statistics.median(inspect_s)
    print(
        f"\none stream of {r['frames_in_stream']:,} frames, 3 interleaved calls ({os.path.getsize(LONG) / 2**20:.0f} MiB)"
    )
    print(
        f"first frame on screen, from launch    {fig(long, 'first_frame_launch_s', 1000)} ms   (goal: within 1 s; after the imports: {fig(long, 'first_frame_s', 1000).strip()} ms)"
    )
    print(
        f"whole stream read (background)        {fig(long, 'read_done_s', 1, 1)} s    (goal: inspect's {inspect:.1f} s + 2 s; inspect {min(inspect_s):.1f}-{max(inspect_s):.1f} s)"
    )
    print(f"analysis done (after the read)        {fig(long, 'analysed_s', 1, 1)} s")
    print(
        f"End                                   {fig(long, 'end_ms')} ms   (goal: within 100 ms; a Pilot key press alone: {fig(long, 'key_press_ms').strip()} ms)"
    )
    print(
        f"jump to a random frame, whole screen  {fig(long, 'jump_ms_p50')} ms p50, max {fig(long, 'jump_ms_max').strip()} ms   (goal: within 100 ms)"
    )
    print(
        f"peak memory                           {fig(long, 'peak_rss_mib')} MiB   (goal: under 512 MiB)"
    )
    r = calls[0]
    print(
        f"\none stream of 20,000 calls, each whole in one chunk ({r['frames_in_stream']:,} frames)"
    )
    print(
        f"End                                   {fig(calls, 'end_ms')} ms   (goal: within 100 ms)"
    )
    print(
        f"a step back from End: answered        {fig(calls, 'back_answered_ms')} ms   (goal: within 100 ms; the calls shown after {fig(calls, 'back_shown_ms').strip()} ms)"
    )
    print(
        f"random jumps: answered, at most       {fig(calls, 'jump_answered_ms_max')} ms   (goal: within 100 ms)"
    )
    print(
        f"random jumps: the calls shown         {fig(calls, 'jump_shown_ms_p50')} ms p50, max {fig(calls, 'jump_shown_ms_max').strip()} ms"
    )
    print(f"peak memory                           {fig(calls, 'peak_rss_mib')} MiB")


if __name__ == "__main__":
    main()
