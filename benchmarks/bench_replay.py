"""First paint and jump times of `streamscope replay` on the 1000-exchange, 1M-frame recording.

    .venv/bin/python benchmarks/bench_replay.py

Runs the app headless (Textual's run_test) in a child process and prints: time to the
first screen (the loading screen with its progress bar), time until the exchanges list
is shown, time to open one stream, jump times to random frames (model only, and the
whole screen update), and the child's peak memory. Writes the recording first if
benchmarks/out/ does not have it (bench_inspect.py makes the same file).
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


async def measure(path: str) -> dict:
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import ExchangesScreen, Loading, StreamScreen

    out: dict = {}
    start = time.perf_counter()
    app = ReplayApp(path)
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
        total = screen.model.total
        rng = random.Random(7)
        model_ms, screen_ms = [], []
        for _ in range(50):
            n = rng.randint(1, total)
            t = time.perf_counter()
            screen.model.at(n)
            model_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            screen.go(n)
            await pilot.pause()
            screen_ms.append((time.perf_counter() - t) * 1000)
        out["frames_in_stream"] = total
        out["jump_model_ms_p50"] = statistics.median(model_ms)
        out["jump_model_ms_max"] = max(model_ms)
        out["jump_screen_ms_p50"] = statistics.median(screen_ms)
        out["jump_screen_ms_max"] = max(screen_ms)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    if "--child" in sys.argv:
        print(json.dumps(asyncio.run(measure(sys.argv[-1]))))
        return
    if not os.path.exists(BIG):
        from benchmarks.gen import write_recording

        os.makedirs(os.path.dirname(BIG), exist_ok=True)
        print("writing the 1000-exchange, 1M-frame recording ...", flush=True)
        write_recording(BIG, 1000, 1000)
    done = subprocess.run(
        [sys.executable, __file__, "--child", BIG], capture_output=True, text=True, check=True
    )
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"1M frames in {r['exchanges']} exchanges ({os.path.getsize(BIG) / 2**20:.0f} MiB)")
    print(
        f"first screen (loading, progress bar)  {r['first_screen_s'] * 1000:7.0f} ms   (goal: within 1 s)"
    )
    print(f"exchanges listed                      {r['exchanges_listed_s'] * 1000:7.0f} ms")
    print(
        f"open a {r['frames_in_stream']}-frame stream                {r['open_stream_s'] * 1000:7.0f} ms"
    )
    print(
        f"jump to a random frame, model         {r['jump_model_ms_p50']:7.1f} ms p50, {r['jump_model_ms_max']:.1f} ms max"
    )
    print(
        f"jump to a random frame, whole screen  {r['jump_screen_ms_p50']:7.1f} ms p50, "
        f"{r['jump_screen_ms_max']:.1f} ms max   (goal: within 100 ms)"
    )
    print(
        f"peak memory                           {r['peak_rss_mib']:7.0f} MiB   (goal: under 512 MiB)"
    )


if __name__ == "__main__":
    main()
