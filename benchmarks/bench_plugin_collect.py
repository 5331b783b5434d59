"""Does the installed pytest plugin slow down a test suite that does not use it?

    .venv/bin/python benchmarks/bench_plugin_collect.py [--tests 500] [--runs 15]

Installing streamscope registers its pytest plugin (entry point `pytest11`), so it loads
in every pytest run of the environment. This writes a suite of N tests (50 files of N/50
tests, plain asserts, no streamscope) to a temp dir and times `pytest --collect-only -q`
on it, in a fresh process each time, with the plugin (as installed) and without it
(`-p no:streamscope`, as if streamscope were not installed). The two take turns, so drift
on the machine weighs on both alike. It prints each side's median wall and CPU time
(user + system, which other load on the machine moves far less) and the ratios, with
over without: 1.00 is no cost. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = 50


def write_suite(folder: Path, tests: int) -> None:
    per_file = max(1, tests // FILES)
    for f in range(FILES):
        body = "".join(
            f"\n\ndef test_{f}_{t}():\n    assert {t} + 1 == {t + 1}\n" for t in range(per_file)
        )
        (folder / f"test_mod{f}.py").write_text('"""A test file."""' + body)


def collect(folder: Path, *extra: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one `pytest --collect-only` process: CPU (user + system) is
    what the plugin could add, and moves far less than wall time on a shared machine."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*command, *extra], cwd=folder, capture_output=True, text=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"pytest failed:\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_suite(folder, args.tests)
        # the plugin must really be there, or the comparison means nothing
        plugins = subprocess.run(
            [sys.executable, "-m", "pytest", "--trace-config", "--collect-only", "-q"],
            cwd=folder,
            capture_output=True,
            text=True,
        ).stdout
        if "streamscope.pytest_plugin" not in plugins:
            sys.exit("the streamscope plugin is not registered in this Python")
        collect(folder)  # warm the file cache and the bytecode
        collect(folder, "-p", "no:streamscope")
        with_plugin: list[tuple[float, float]] = []
        without: list[tuple[float, float]] = []
        for i in range(args.runs):
            pair = [(with_plugin, ()), (without, ("-p", "no:streamscope"))]
            for times, extra in pair if i % 2 == 0 else pair[::-1]:
                times.append(collect(folder, *extra))
    print(f"pytest --collect-only, {args.tests} tests, median of {args.runs} runs each")
    print("                                   wall      CPU (user+sys)")
    medians = []
    for label, runs in (
        ("with the streamscope plugin", with_plugin),
        ("without (-p no:streamscope)", without),
    ):
        wall = statistics.median(t[0] for t in runs)
        cpu = statistics.median(t[1] for t in runs)
        medians.append((wall, cpu))
        print(f"  {label + ':':31} {wall * 1000:7.1f} ms {cpu * 1000:7.1f} ms")
    (wa, ca), (wb, cb) = medians
    print(f"  ratio, with / without:        {wa / wb:7.3f}    {ca / cb:7.3f}")


if __name__ == "__main__":
    main()
