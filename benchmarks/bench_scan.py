"""How much faster is `scan -j 2` than one process, and does its memory grow with the
number of files?

One run prints:
- the throughput (files a second) of `streamscope scan` over 2,000 generated recordings
  (benchmarks/gen_scan.py: half of them the bundled samples, all four dialects and
  input kinds, the other half agent runs of 3 exchanges of RUN_FRAMES frames in each
  dialect; hosts and models varied) with `-j 1` (the analysis in the one process) and
  `-j 2`, the best of two runs each, alternated so a shared machine's load hits both
  alike, and their ratio (the goal: at least 1.7 on 2 cores);
- that both summaries agree, and that their totals are those of `analyze` (what
  `inspect --json` prints) of each file;
- the same ratio on the files from 500 to 2,000 alone (the 500-file run's time
  subtracted), where the fixed start-up (imports, starting workers) drops out;
- peak memory (max RSS) of the scan at 500 and at 2,000 files, `-j 1` (everything in
  one process) and `-j 2` (the largest of the parent and its workers, which it reaps),
  and the ratio 2,000 / 500 (flat is 1.0).

    .venv/bin/python benchmarks/bench_scan.py [--files N]

Files go to benchmarks/out/ (git-ignored).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.gen_scan import make_folder  # noqa: E402
from streamscope.analysis import analyze  # noqa: E402

OUT = os.path.join(HERE, "out")
RUN_FRAMES = 150
SCAN = [sys.executable, "-m", "streamscope", "scan"]


def folder(n: int) -> str:
    path = os.path.join(OUT, f"scan-{n}-{RUN_FRAMES}")
    if not os.path.isdir(path) or sum(len(f) for _, _, f in os.walk(path)) != n:
        shutil.rmtree(path, ignore_errors=True)
        make_folder(path, n, RUN_FRAMES)
    return path


def run(path: str, jobs: int) -> tuple[float, int, str]:
    """Seconds, max RSS (KiB) and stdout of one scan in a child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*SCAN, path, "-j", str(jobs)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    out = proc.stdout.read().decode()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    assert status == 0, f"scan exited with {status}"
    return seconds, usage.ru_maxrss, out


def expected_totals(path: str) -> tuple[int, int]:
    """Exchanges and streams of every file under `path`, from `analyze` of each."""
    exchanges = streams = 0
    for folder, _, names in os.walk(path):
        for name in names:
            a = analyze(os.path.join(folder, name))
            exchanges += len(a.exchanges or a.streams)
            streams += len(a.streams)
    return exchanges, streams


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    n, m = args.files, args.files // 4
    big, small = folder(n), folder(m)
    run(big, 2)  # warm the page cache
    best: dict[tuple[str, int], float] = {}
    rss: dict[tuple[str, int], int] = {}
    outs: dict[int, str] = {}
    for _ in range(2):  # alternated, best of two: a shared machine's load hits all alike
        for path in (small, big):
            for jobs in (1, 2):
                seconds, peak, out = run(path, jobs)
                key = (path, jobs)
                best[key] = min(best.get(key, seconds), seconds)
                rss[key] = max(rss.get(key, 0), peak)
                if path == big:
                    outs[jobs] = out
    body = {j: o.split("\n", 1)[1] for j, o in outs.items()}
    assert body[1] == body[2], "-j 1 and -j 2 summaries differ"
    head = outs[2].splitlines()[0]
    got = re.search(r"(\d+) exchanges, (\d+) streams", head)
    assert got and tuple(map(int, got.groups())) == expected_totals(big), head
    print(f"scan of {n} files: {head}")
    print("  the same summary with -j 1 and -j 2; totals checked against analyze() of each file")
    t1, t2 = best[big, 1], best[big, 2]
    print(f"  -j 1: {t1:.2f} s ({n / t1:.0f} files/s)   -j 2: {t2:.2f} s ({n / t2:.0f} files/s)")
    print(f"  throughput -j 2 / -j 1, whole runs: {t1 / t2:.2f}x (goal >= 1.7x on 2 cores)")
    # the files from m to n alone: start-up (imports, workers) drops out
    d1, d2 = t1 - best[small, 1], t2 - best[small, 2]
    print(f"  throughput -j 2 / -j 1, files {m} to {n} (no start-up): {d1 / d2:.2f}x")
    for jobs in (1, 2):
        a, b = rss[small, jobs], rss[big, jobs]
        print(
            f"  peak RSS -j {jobs} (largest process): {a / 1024:.0f} MiB at {m} files, "
            f"{b / 1024:.0f} MiB at {n} files ({b / a:.2f}x)"
        )


if __name__ == "__main__":
    main()
