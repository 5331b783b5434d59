"""How long does a user wait for streamscope to start, against Python starting at all?

One run prints, for each command, the median wall time of N whole runs (a new process
each, as a user types it) and its ratio to `python -c pass` measured in the same run
(the runs of all the commands take turns, so a shared machine's load mostly cancels out):
- `streamscope --version` (goal: within 3x): the command line alone, no dialect read;
- `streamscope --help`;
- `streamscope inspect recordings/openai.jsonl` (goal: within 5x): one Chat Completions
  exchange, the text report;
- `streamscope inspect --json recordings/anthropic-tool-use.jsonl`: Anthropic Messages,
  the contract's JSON;
- and, for reference, `python -c` importing what any command cannot start without (click,
  orjson, dataclasses) and nothing of streamscope's.

Each command runs once first with bytecode writing on, so every module is read from its
`.pyc` as in an installed package (a checkout run with PYTHONDONTWRITEBYTECODE=1 would
compile every module on every start: about twice as slow). `python -X importtime -m
streamscope ...` shows where the time goes.

    .venv/bin/python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def streamscope() -> list[str]:
    """The console script beside this interpreter (what a user runs), else `-m`."""
    script = os.path.join(os.path.dirname(sys.executable), "streamscope")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "streamscope"]


FLOOR = "import click, orjson, dataclasses"


def commands() -> list[tuple[str, list[str]]]:
    s = streamscope()
    return [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        # orjson alone: at import it imports dataclasses, uuid, datetime, enum and json
        ("python -c 'import orjson'", [sys.executable, "-c", "import orjson"]),
        # the floor under every command: its libraries imported, nothing of streamscope's
        ("python -c 'import click, orjson, dataclasses'", [sys.executable, "-c", FLOOR]),
        ("streamscope --version", [*s, "--version"]),
        ("streamscope --help", [*s, "--help"]),
        ("streamscope inspect recordings/openai.jsonl", [*s, "inspect", "recordings/openai.jsonl"]),
        (
            "streamscope inspect --json recordings/anthropic-tool-use.jsonl",
            [*s, "inspect", "--json", "recordings/anthropic-tool-use.jsonl"],
        ),
    ]


def once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (median)")
    runs = parser.parse_args().runs
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    todo = commands()
    for _, argv in todo:  # warm: .pyc written, files in the page cache
        once(argv, env)
    times: dict[str, list[float]] = {name: [] for name, _ in todo}
    for _ in range(runs):
        for name, argv in todo:
            times[name].append(once(argv, env))
    base = statistics.median(times[todo[0][0]])
    print(f"start-up, median of {runs} runs each ({os.cpu_count()} cores)")
    for name, _ in todo:
        t = statistics.median(times[name])
        print(f"  {name:<62} {t * 1000:7.1f} ms  {t / base:5.1f}x")


if __name__ == "__main__":
    main()
