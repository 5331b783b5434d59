"""Write screenshots/*.svg (and .png where rsvg-convert exists) of the replay's screens.

    .venv/bin/python scripts/screenshots.py

Each shot opens a bundled sample recording at its size (100x30, or 80x24 for the small
terminal ones), presses the keys a person would, and saves what the terminal shows.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from streamscope.tui.app import ReplayApp  # noqa: E402
from streamscope.tui.screens import ExchangesScreen, RequestScreen, StreamScreen  # noqa: E402

OUT = os.path.join(ROOT, "screenshots")
SIZE = (100, 30)

# name -> (sample, exchange, keys, the screen to wait for, size)
SHOTS = {
    "exchanges": ("buggy-agent-uuid.jsonl", None, [], ExchangesScreen, SIZE),
    # the invented id in the request, where the contract broke, on a small terminal
    "conversation": ("buggy-agent-uuid.jsonl", None, ["down", "enter"], StreamScreen, (80, 24)),
    "stream-80x24": ("alibaba-empty-id.jsonl", 1, ["end"], StreamScreen, (80, 24)),
    "stream-at-anomaly": (
        "alibaba-empty-id.jsonl",
        1,
        ["right_square_bracket"],
        StreamScreen,
        SIZE,
    ),
    "strategies": ("parallel-index-0.jsonl", 1, ["end", "s", "s"], StreamScreen, SIZE),
    "repair": ("dashscope-truncated-args.jsonl", 1, ["end"], StreamScreen, SIZE),
    "help": ("openai.jsonl", 1, ["question_mark"], StreamScreen, SIZE),
    # Anthropic Messages: the SDK's glued input beside robust's two messages
    "anthropic-spliced": ("anthropic-spliced-message.jsonl", 1, ["end"], StreamScreen, SIZE),
    # an agent that makes up a tool_use_id, in the request, on a small terminal
    "anthropic-request": ("anthropic-buggy-agent.jsonl", 2, [], StreamScreen, (80, 24)),
    # the Responses API: both ids, and the client that sends deltas to the last item
    "responses-interleaved": (
        "responses-interleaved.jsonl",
        1,
        ["right_square_bracket", "s", "s"],
        StreamScreen,
        SIZE,
    ),
    # an agent that unwrapped the parallel wrapper, in the request's input items
    "responses-request": ("responses-parallel-wrapper.jsonl", 2, [], StreamScreen, SIZE),
    # Gemini: streamed arguments path by path, the thoughtSignature beside its call
    "gemini-stream": ("gemini-streamed-args.jsonl", 1, ["end"], StreamScreen, SIZE),
    # an agent that dropped the signature, in the request's contents
    "gemini-request": ("gemini-signature-dropped.jsonl", 2, [], RequestScreen, SIZE),
    # Ollama's native chat: two calls of one tool with no ids, on a small terminal
    "ollama-stream": ("ollama-two-calls.jsonl", 1, ["end"], StreamScreen, (80, 24)),
}


async def shoot(
    name: str, sample: str, exchange: int | None, keys: list[str], ready: type, size: tuple
) -> str:
    app = ReplayApp(os.path.join(ROOT, "recordings", sample), exchange)
    async with app.run_test(size=size) as pilot:
        for _ in range(400):  # the list or the stream, and the analysis (contract, worst)
            if isinstance(app.screen, (ready, ExchangesScreen)) and app.summaries is not None:
                break
            await pilot.pause(0.025)
        for key in keys:
            await pilot.press(key)
        for _ in range(400):
            if isinstance(app.screen, ready):
                break
            await pilot.pause(0.025)
        await pilot.pause(0.3)
        path = os.path.join(OUT, f"{name}.svg")
        app.save_screenshot(path)
    return path


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    converter = shutil.which("rsvg-convert")
    for name, (sample, exchange, keys, ready, size) in SHOTS.items():
        svg = asyncio.run(shoot(name, sample, exchange, keys, ready, size))
        print(svg)
        if converter:
            png = svg[:-4] + ".png"
            subprocess.run([converter, "-w", "1300", svg, "-o", png], check=True)
            print(png)
    if not converter:
        print("rsvg-convert not found (Debian: librsvg2-bin): SVG only")


if __name__ == "__main__":
    main()
