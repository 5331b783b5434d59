"""`inspect`'s text report against `inspect --json` on 20,000 calls (each whole in one
chunk, one truncated): whole commands in subprocesses, the median of a few runs each,
alternated; the text written to a pipe, as in a CI log.

    .venv/bin/python benchmarks/bench_text_report.py [--runs N] [--calls N]

Files go to benchmarks/out/ (git-ignored). The goal: the text within 1.5x of the JSON.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.gen import single_chunk_truncated_events, write_sse  # noqa: E402


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "streamscope", *args], stdout=subprocess.PIPE, check=True)
    return time.perf_counter() - start


def main() -> None:
    argv = sys.argv[1:]
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    calls = int(argv[argv.index("--calls") + 1]) if "--calls" in argv else 20_000
    os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
    path = os.path.join(HERE, "out", f"text-report-{calls}.sse")
    write_sse(path, single_chunk_truncated_events(calls))
    text, json = [], []
    for _ in range(runs):
        json.append(timed(["inspect", "--json", path]))
        text.append(timed(["inspect", path]))
    t, j = statistics.median(text), statistics.median(json)
    print(
        f"{calls:,} calls: inspect {t:.2f} s, inspect --json {j:.2f} s: {t / j:.2f}x (goal <= 1.5x)"
    )


if __name__ == "__main__":
    main()
