"""How fast is `inspect --json`, against the floor of merely parsing the same file?

One run prints:
- throughput of `inspect --json` on long single streams (5k, 20k, 80k frames) as a
  ratio to the orjson floor: reading the same file and orjson-parsing every line and
  every event payload in it, the least any tool must do. Marginal figures subtract the
  5k-frame run from the 80k-frame run, so fixed costs (imports, the report) drop out;
- the growth of the per-frame cost: the marginal cost per frame from 20k to 80k frames
  over that from 5k to 20k (1.0 means linear; quadratic work shows as ~4);
- peak memory (max RSS) of `streamscope inspect --json` on a 1000-exchange, 1M-frame
  recording (about 330 MB), in a child process.

    .venv/bin/python benchmarks/bench_inspect.py [--quick]

--quick skips the 1M-frame recording. Files go to benchmarks/out/ (git-ignored).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.gen import write_recording  # noqa: E402
from streamscope.analysis import analyze  # noqa: E402
from streamscope.core.report import report_json  # noqa: E402

OUT = os.path.join(HERE, "out")


def floor(path: str) -> float:
    start = time.perf_counter()
    loads = orjson.loads
    with open(path, "rb") as f:
        for line in f:
            d = loads(line)
            data = d.get("data")
            if data:
                for event in data.split("\n\n"):
                    if event.startswith("data: {"):
                        loads(event[6:])
    return time.perf_counter() - start


def inspect_json(path: str) -> float:
    start = time.perf_counter()
    a = analyze(path)
    orjson.dumps(report_json(a.source, a.format, a.streams, a.contract))
    return time.perf_counter() - start


def best(fn, path: str, runs: int) -> float:
    return min(fn(path) for _ in range(runs))


def main() -> None:
    quick = "--quick" in sys.argv
    os.makedirs(OUT, exist_ok=True)
    sizes = [5_000, 20_000, 80_000]
    t_floor, t_inspect = {}, {}
    print("frames   floor us/frame   inspect us/frame   throughput vs floor")
    for n in sizes:
        path = os.path.join(OUT, f"stream-{n}.jsonl")
        write_recording(path, 1, n)
        t_floor[n] = best(floor, path, 5)
        t_inspect[n] = best(inspect_json, path, 3)
        print(
            f"{n:>6}   {t_floor[n] * 1e6 / n:>14.2f}   {t_inspect[n] * 1e6 / n:>16.2f}   {t_floor[n] / t_inspect[n]:>19.2f}"
        )
    a, b, c = sizes
    marginal = (t_floor[c] - t_floor[a]) / (t_inspect[c] - t_inspect[a])
    low = (t_inspect[b] - t_inspect[a]) / (b - a)
    high = (t_inspect[c] - t_inspect[b]) / (c - b)
    print(f"marginal throughput vs floor ({a}->{c} frames): {marginal:.2f}  (goal >= 0.33)")
    print(f"per-frame cost growth (20k-80k over 5k-20k): {high / low:.2f}  (goal <= 1.5)")
    if quick:
        return
    big = os.path.join(OUT, "recording-1M.jsonl")
    if not os.path.exists(big):
        print("writing the 1000-exchange, 1M-frame recording ...", flush=True)
        write_recording(big, 1000, 1000)
    size = os.path.getsize(big) / 2**20
    cmd = [sys.executable, "-m", "streamscope", "inspect", "--json", big]
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(cmd, stdout=sink, check=True)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"1M frames, 1000 exchanges, {size:.0f} MiB: inspect --json {took:.1f} s, peak memory {peak:.0f} MiB (goal < 256)"
    )


if __name__ == "__main__":
    main()
