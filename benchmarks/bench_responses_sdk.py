"""What the Responses API's SDK emulation (ResponsesSdkEmulation) costs per frame.

Frames are built as the engine hands them (`Frame.payload` parsed by orjson, `Frame.event`
the SSE event name); each stream is fed whole, then finished, the best of several rounds
(CPU time of this process, so other work on the machine moves it less):

- one function call of 20,000 argument deltas of 10-12 bytes (`"item 123", `);
- the same with a copy() taken every 100 frames (as the TUI keeps snapshots);
- 2,000 function calls, each added, three deltas, .done and output_item.done;
- 20,000 output_text deltas in one message.

    .venv/bin/python benchmarks/bench_responses_sdk.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import orjson

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from streamscope.core.frames import Frame  # noqa: E402
from streamscope.dialects.responses.sdk_model import ResponsesSdkEmulation  # noqa: E402

RESPONSE = {"id": "resp_bench", "object": "response", "status": "in_progress", "output": []}


def created() -> dict:
    return {"type": "response.created", "sequence_number": 0, "response": RESPONSE}


def completed() -> dict:
    body = {k: v for k, v in RESPONSE.items() if k != "output"} | {"status": "completed"}
    return {"type": "response.completed", "sequence_number": 1, "response": body}


def function_call(index: int, arguments: str = "") -> dict:
    return {
        "type": "function_call",
        "id": f"fc_{index}",
        "call_id": f"call_{index}",
        "name": "f",
        "arguments": arguments,
        "status": "in_progress",
    }


def item_event(kind: str, index: int, item: dict) -> dict:
    return {"type": kind, "sequence_number": 1, "output_index": index, "item": item}


def delta(index: int, text: str, kind: str = "response.function_call_arguments.delta") -> dict:
    event = {"type": kind, "sequence_number": 1, "item_id": f"fc_{index}", "output_index": index}
    return event | {"delta": text, "obfuscation": "aZ9x"}


def call_events(index: int, pieces: list[str]) -> list[dict]:
    whole = "".join(pieces)
    done = {"type": "response.function_call_arguments.done", "sequence_number": 1}
    done |= {"item_id": f"fc_{index}", "output_index": index, "arguments": whole}
    return [
        item_event("response.output_item.added", index, function_call(index)),
        *(delta(index, p) for p in pieces),
        done,
        item_event("response.output_item.done", index, function_call(index, whole)),
    ]


def frames(events: list[dict]) -> list[Frame]:
    out = []
    for number, event in enumerate(events, 1):
        data = orjson.dumps(event).decode()
        out.append(Frame(number, data, orjson.loads(data), event=event["type"]))
    return out


def long_call(fragments: int) -> list[Frame]:
    pieces = ['{"items": [', *(f'"item {i}", ' for i in range(fragments)), '"end"]}']
    return frames([created(), *call_events(0, pieces), completed()])


def many_calls(calls: int) -> list[Frame]:
    events = [created()]
    for i in range(calls):
        events += call_events(i, ['{"city": ', f'"Paris {i}", ', '"days": 3}'])
    return frames([*events, completed()])


def text_deltas(count: int) -> list[Frame]:
    message = {"type": "message", "id": "msg", "role": "assistant", "content": []}
    part = {"type": "response.content_part.added", "sequence_number": 1, "output_index": 0}
    part |= {"content_index": 0, "item_id": "msg", "part": {"type": "output_text", "text": ""}}
    text = delta(0, "word ", "response.output_text.delta") | {"content_index": 0, "logprobs": []}
    return frames(
        [
            created(),
            item_event("response.output_item.added", 0, message),
            part,
            *[text] * count,
            item_event("response.output_item.done", 0, message),
            completed(),
        ]
    )


def per_frame(stream: list[Frame], rounds: int, copy_every: int = 0) -> float:
    """The best round's cost of feeding `stream` and finishing it, in µs per frame."""
    best = float("inf")
    for _ in range(rounds):
        copies = []
        start = time.process_time()
        emu = ResponsesSdkEmulation()
        for frame in stream:
            emu.feed(frame)
            if copy_every and frame.number % copy_every == 0:
                copies.append(emu.copy())
        emu.finish(stream[-1].number)
        best = min(best, time.process_time() - start)
    return best / len(stream) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    long = long_call(20_000)
    shapes = {
        "one call, 20,000 argument deltas": (long, 0),
        "the same, a copy every 100 frames": (long, 100),
        "2,000 calls of 3 deltas": (many_calls(2_000), 0),
        "20,000 output_text deltas": (text_deltas(20_000), 0),
    }
    for name, (stream, every) in shapes.items():
        cost = per_frame(stream, rounds, every)
        print(f"{name:36s} {cost:6.2f} µs a frame ({len(stream)} frames)")


if __name__ == "__main__":
    main()
