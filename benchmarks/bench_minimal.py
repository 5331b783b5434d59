"""`export --minimal` against `inspect --json` on the shapes whose quirk is not at an end:
whole commands in subprocesses, the median of a few runs each, alternated.

    .venv/bin/python benchmarks/bench_minimal.py [--runs N] [--only NAME] [--timeout S]

Files go to benchmarks/out/ (git-ignored). The goal: every ratio at most 3x.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.gen import (  # noqa: E402
    BEDROCK_REQUEST,
    GEMINI_REQUEST,
    RESPONSES_REQUEST,
    anthropic_tool_blocks_events,
    bedrock_tool_blocks_events,
    gemini_partial_calls_array,
    gemini_partial_calls_events,
    interleaved_every_events,
    ollama_calls_lines,
    responses_calls_events,
    single_chunk_truncated_events,
    write_realtime_websocket,
    write_recording,
    write_responses_websocket,
    write_sse,
)

OUT = os.path.join(HERE, "out")
GEMINI = (
    "http://127.0.0.1:1/v1/projects/p/locations/us-central1/publishers/google/models/m:"
    "streamGenerateContent?alt=sse"
)
GEMINI_ARRAY = "http://127.0.0.1:1/v1beta/models/m:streamGenerateContent"
RESPONSES = "http://127.0.0.1:1/v1/responses"
BEDROCK = "http://127.0.0.1:1/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"


def shapes() -> dict[str, str]:
    os.makedirs(OUT, exist_ok=True)
    out = {}
    for name, events in (
        ("interleaved 5k, id '' on every continuation", interleaved_every_events(5_000)),
        ("interleaved 50k, id '' on every continuation", interleaved_every_events(50_000)),
        ("20,000 single-chunk calls, call 777 truncated", single_chunk_truncated_events(20_000)),
        (
            "1,500 Anthropic tool blocks, the middle one truncated",
            anthropic_tool_blocks_events(1_500),
        ),
    ):
        path = os.path.join(OUT, "minimal-" + name.split(",")[0].replace(" ", "-") + ".sse")
        write_sse(path, events)
        out[name] = path
    path = os.path.join(OUT, "minimal-gemini-3000.jsonl")
    write_recording(path, 1, 0, gemini_partial_calls_events(3_000), GEMINI, GEMINI_REQUEST)
    out["3,000 Gemini partialArgs chunks, the middle call nameless"] = path
    # the same shapes in the other wires
    path = os.path.join(OUT, "minimal-bedrock-1500.jsonl")
    write_recording(
        path,
        1,
        0,
        bedrock_tool_blocks_events(1_500),
        BEDROCK,
        BEDROCK_REQUEST,
        "application/vnd.amazon.eventstream",
    )
    out["Bedrock event stream: 1,500 toolUse blocks, the middle one truncated"] = path
    path = os.path.join(OUT, "minimal-responses-sse.jsonl")
    events = responses_calls_events(830)
    write_recording(path, 1, 0, events, RESPONSES, RESPONSES_REQUEST)
    out["Responses SSE: 830 calls (5k events), the middle one truncated"] = path
    path = os.path.join(OUT, "minimal-responses-ws.jsonl")
    write_responses_websocket(path, 830)
    out["Responses over WebSocket: 830 calls (5k events), the middle one truncated"] = path
    path = os.path.join(OUT, "minimal-realtime-ws.jsonl")
    write_realtime_websocket(path, 830)
    out["Realtime over WebSocket: 830 calls (5k events), the middle one truncated"] = path
    path = os.path.join(OUT, "minimal-ollama.ndjson")
    with open(path, "wb") as f:
        f.writelines(ollama_calls_lines(20_000))
    out["Ollama NDJSON: 20,000 single-line calls, the middle one nameless"] = path
    path = os.path.join(OUT, "minimal-gemini-array.jsonl")
    write_recording(
        path,
        1,
        0,
        gemini_partial_calls_array(3_000),
        GEMINI_ARRAY,
        GEMINI_REQUEST,
        "application/json",
    )
    out["Gemini JSON array: 3,000 partialArgs chunks, the middle call nameless"] = path
    return out


def timed(args: list[str], timeout: float) -> float:
    """The command's wall time, to the millisecond: waited for with a blocking wait (a
    `subprocess.run(timeout=...)` polls, waking at most every 50 ms, which rounded each
    time up by as much), killed by a timer past `timeout`."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamscope", *args], stdout=subprocess.DEVNULL)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        code = proc.wait()
    finally:
        timer.cancel()
    took = time.perf_counter() - start
    if code < 0:  # (killed by the timer)
        return float("inf")
    if code:
        raise subprocess.CalledProcessError(code, args)
    return took


def main() -> None:
    argv = sys.argv[1:]
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    timeout = float(argv[argv.index("--timeout") + 1]) if "--timeout" in argv else 300
    only = argv[argv.index("--only") + 1] if "--only" in argv else ""
    for name, path in shapes().items():
        if only not in name:
            continue
        inspect, minimal = [], []
        for _ in range(runs):
            inspect.append(timed(["inspect", "--json", path], timeout))
            minimal.append(timed(["export", "--minimal", path], timeout))
        i, m = statistics.median(inspect), statistics.median(minimal)
        print(
            f"{name}: export --minimal {m:.3f} s, inspect --json {i:.3f} s: {m / i:.2f}x (goal <= 3x)"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
