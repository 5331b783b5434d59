"""The replay's keys as a person presses them: `streamscope replay` in tmux at 80x24, each
key sent with `tmux send-keys`, timed until the pane stops changing.

    .venv/bin/python benchmarks/bench_replay_keys.py [--rounds N] [--only NAME]

Shapes (written to benchmarks/out/ if absent): one stream of 20,000 calls, each whole in
one chunk (End, a step back, far jumps with g); one Gemini chunk of 3,000 candidates, each
with a call (End, ?, Escape, Home); an Anthropic `partial_json` of 50,000 `[` then 50,000
`]` (End, stepping, `a`). The pane is read with `tmux capture-pane` every 5 ms; a key's
time is from its send to the last change before 0.4 s without one, so it includes tmux's
own relay and the poll (about 5-15 ms). The goal: every key within 100 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from benchmarks.gen import (  # noqa: E402
    GEMINI_REQUEST,
    gemini_candidates_chunk,
    single_chunk_calls_events,
    write_recording,
    write_sse,
)

OUT = os.path.join(HERE, "out")
SESSION = "streamscope-bench-keys"
QUIET = 0.4  # seconds without a change: the pane has settled
GEMINI = "http://127.0.0.1:1/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def deep_partial_json(depth: int) -> list[bytes]:
    def event(e: dict) -> bytes:
        return b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"

    def delta(text: str) -> bytes:
        return event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": text},
            }
        )

    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude"}
    message |= {"content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    return [
        event({"type": "message_start", "message": message}),
        event({"type": "content_block_start", "index": 0, "content_block": block}),
        delta('{"a":' + "[" * depth),
        delta("]" * depth + "}"),
        event({"type": "content_block_stop", "index": 0}),
        event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 5},
            }
        ),
        event({"type": "message_stop"}),
    ]


def shapes() -> dict[str, tuple[str, list[str]]]:
    """name -> (file, the keys pressed in turn)."""
    os.makedirs(OUT, exist_ok=True)
    calls = os.path.join(OUT, "single-chunk-calls-20k.sse")
    if not os.path.exists(calls):
        write_sse(calls, single_chunk_calls_events(20_000))
    gemini = os.path.join(OUT, "replay-gemini-3000-candidates.jsonl")
    if not os.path.exists(gemini):
        write_recording(gemini, 1, 0, gemini_candidates_chunk(3_000), GEMINI, GEMINI_REQUEST)
    deep = os.path.join(OUT, "replay-anthropic-deep-partial-json.sse")
    if not os.path.exists(deep):
        write_sse(deep, deep_partial_json(50_000))
    far = ["g", "7000", "Enter", "g", "15000", "Enter", "g", "300", "Enter"]
    return {
        "20,000 single-chunk calls": (calls, ["End", "Left", "Home", *far, "Right"]),
        "one chunk of 3,000 Gemini candidates": (
            gemini,
            ["End", "?", "Escape", "Home", "Right", "Left", "End"],
        ),
        "partial_json 50,000 deep": (
            deep,
            ["End", "Home", "Right", "Right", "Right", "a", "Escape"],
        ),
    }


def _pane() -> str:
    out = subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", SESSION], capture_output=True, text=True
    )
    return out.stdout


def _settled(before: str, timeout: float) -> tuple[float | None, str]:
    """Seconds from now to the pane's last change before it stayed still QUIET s."""
    start = time.perf_counter()
    last, changed = before, None
    while time.perf_counter() - start < timeout:
        now = _pane()
        if now != last:
            last, changed = now, time.perf_counter()
        elif changed is not None and time.perf_counter() - changed > QUIET:
            break
        time.sleep(0.005)
    return (None if changed is None else changed - start), last


def run(path: str, keys: list[str]) -> tuple[float, list[tuple[str, float | None]]]:
    """Time to the first settled screen, then each key's time (None: nothing changed)."""
    subprocess.run(["tmux", "kill-session", "-t", SESSION], stderr=subprocess.DEVNULL)
    command = f"{sys.executable} -m streamscope replay {path}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", SESSION, "-x", "80", "-y", "24", command],
        cwd=ROOT,
        check=True,
    )
    try:
        # the stream screen is up (its footer shows) and its stream read whole (its top
        # line no longer says "reading N%"); then the analysis, which runs after it
        started = time.perf_counter()
        screen = ""
        while time.perf_counter() - started < 180:
            screen = _pane()
            lines = screen.splitlines()
            if lines and "Help" in screen and " · reading " not in lines[0]:
                break
            time.sleep(0.05)
        opened = time.perf_counter() - started
        _settled(screen, timeout=30)
        out = []
        for key in keys:
            before = _pane()
            subprocess.run(["tmux", "send-keys", "-t", SESSION, key], check=True)
            took, _ = _settled(before, timeout=30)
            out.append((key, took))
        return opened, out
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="the shapes whose name holds this")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench_replay_keys: tmux is not installed")
    load = os.getloadavg()[0]
    print(f"replay keys in tmux at 80x24, {args.rounds} rounds, load average {load:.1f}")
    for name, (path, keys) in shapes().items():
        if args.only not in name:
            continue
        rounds = [run(path, keys) for _ in range(args.rounds)]
        print(f"  {name}: read and shown in {statistics.median(r[0] for r in rounds):.2f} s")
        for i, key in enumerate(keys):
            times = [r[1][i][1] for r in rounds]
            shown = [t for t in times if t is not None]
            said = f"{statistics.median(shown) * 1000:6.0f} ms" if shown else "    no change"
            worst = f"(worst {max(shown) * 1000:.0f})" if len(shown) > 1 else ""
            print(f"    {key:>8} {said} {worst}")


if __name__ == "__main__":
    main()
