"""What the `anthropic-sdk` emulation (AnthropicSdkEmulation) costs per frame.

Frames are built as the engine hands them (`Frame.payload` parsed by orjson, `Frame.event`
the SSE event name); each stream is fed whole, then finished, the best of several rounds
(CPU time of this process, so other work on the machine moves it less):

- one tool input of 20,000 fragments of 10-12 bytes (`"item 123", `);
- the same cut off before its end (max_tokens inside a tool input): read as partial JSON;
- 2,000 small tool calls in one message, each a start, three fragments and a stop;
- 20,000 text deltas in one text block.

Then the whole engine: `inspect --json` on a 20,000-frame Anthropic tool stream (one tool
input of short lines) against a Chat Completions stream of as many frames
(benchmarks/gen.py's), in µs a frame and as a ratio (the project's goal: at most 1.5x).

    .venv/bin/python benchmarks/bench_anthropic_sdk.py [--rounds N]

Files go to benchmarks/out/ (git-ignored).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import orjson

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.gen import stream_events, write_sse  # noqa: E402
from streamscope.analysis import analyze  # noqa: E402
from streamscope.core.frames import Frame  # noqa: E402
from streamscope.core.report import report_json  # noqa: E402
from streamscope.dialects.anthropic.sdk_model import AnthropicSdkEmulation  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")

START = {
    "type": "message_start",
    "message": {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "bench-model",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
}


def tool_start(index: int) -> dict:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def fragment(index: int, text: str) -> dict:
    delta = {"type": "input_json_delta", "partial_json": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def stop(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


def frames(events: list[dict]) -> list[Frame]:
    out = []
    for number, event in enumerate(events, 1):
        data = orjson.dumps(event).decode()
        out.append(Frame(number, data, orjson.loads(data), event=event["type"]))
    return out


def long_input(fragments: int, *, cut: bool = False) -> list[Frame]:
    pieces = ['{"items": [', *(f'"item {i}", ' for i in range(fragments)), '"end"]}']
    events = [START, tool_start(0), *(fragment(0, p) for p in pieces)]
    if cut:
        events = events[:-1]
    else:
        events.append(stop(0))
    return frames(events)


def many_calls(calls: int) -> list[Frame]:
    events = [START]
    for i in range(calls):
        pieces = ('{"city": ', f'"Paris {i}", ', '"days": 3}')
        events += [tool_start(i), *(fragment(i, p) for p in pieces), stop(i)]
    return frames(events)


def text_deltas(count: int) -> list[Frame]:
    text = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    deltas = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "word "},
        }
    ] * count
    return frames([START, text, *deltas, stop(0)])


def per_frame(stream: list[Frame], rounds: int) -> float:
    """The best round's cost of feeding `stream` and finishing it, in µs per frame."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        emu = AnthropicSdkEmulation()
        for frame in stream:
            emu.feed(frame)
        emu.finish(stream[-1].number)
        best = min(best, time.process_time() - start)
    return best / len(stream) * 1e6


def sse_event(event: dict) -> bytes:
    return f"event: {event['type']}\ndata: ".encode() + orjson.dumps(event) + b"\n\n"


def anthropic_body(frames: int) -> list[bytes]:
    """A tool stream of `frames` events: one input of short lines, as a model writes a file."""
    pieces = ['{"content": "', *(f"line {i} of it\\n" for i in range(frames - 6)), '"}']
    ending = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}
    events = [START, tool_start(0), *(fragment(0, p) for p in pieces), stop(0), ending]
    return [sse_event(e) for e in [*events, {"type": "message_stop"}]]


def inspect_per_frame(path: str, frames: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        a = analyze(path)
        orjson.dumps(report_json(a.source, a.format, a.streams, a.contract))
        best = min(best, time.process_time() - start)
    return best / frames * 1e6


def engines(rounds: int, frames: int = 20_000) -> None:
    os.makedirs(OUT, exist_ok=True)
    anthropic, chat = os.path.join(OUT, "anthropic-tool.sse"), os.path.join(OUT, "chat-tool.sse")
    write_sse(anthropic, anthropic_body(frames))
    write_sse(chat, stream_events(frames))
    a = inspect_per_frame(anthropic, frames, rounds)
    c = inspect_per_frame(chat, frames, rounds)
    print(f"inspect, {frames:,} frames: Anthropic {a:.2f} µs a frame, Chat Completions {c:.2f}")
    print(f"  ratio {a / c:.2f} (goal: at most 1.5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    shapes = {
        "one tool input, 20,000 fragments": long_input(20_000),
        "the same, cut off before its end": long_input(20_000, cut=True),
        "2,000 tool calls of 3 fragments": many_calls(2_000),
        "20,000 text deltas": text_deltas(20_000),
    }
    for name, stream in shapes.items():
        print(f"{name:36s} {per_frame(stream, rounds):6.2f} µs a frame ({len(stream)} frames)")
    engines(max(rounds // 2, 1))


if __name__ == "__main__":
    main()
