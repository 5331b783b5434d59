"""Write screenshots/*.svg (and .png where rsvg-convert exists) of the replay's screens.

    .venv/bin/python scripts/screenshots.py

Each shot opens a bundled sample recording at 100x30, presses the keys a person would,
and saves what the terminal shows.
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
from streamscope.tui.screens import ExchangesScreen, StreamScreen  # noqa: E402

OUT = os.path.join(ROOT, "screenshots")
SIZE = (100, 30)

# name -> (sample, exchange, keys, the screen to wait for)
SHOTS = {
    "exchanges": ("buggy-agent-uuid.jsonl", None, [], ExchangesScreen),
    "stream-at-anomaly": ("alibaba-empty-id.jsonl", 1, ["right_square_bracket"], StreamScreen),
    "strategies": ("parallel-index-0.jsonl", 1, ["end", "s", "s"], StreamScreen),
    "repair": ("dashscope-truncated-args.jsonl", 1, ["end"], StreamScreen),
    "help": ("openai.jsonl", 1, ["question_mark"], StreamScreen),
}


async def shoot(name: str, sample: str, exchange: int | None, keys: list[str], ready: type) -> str:
    app = ReplayApp(os.path.join(ROOT, "recordings", sample), exchange)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(400):
            if isinstance(app.screen, ready):
                break
            await pilot.pause(0.025)
        if ready is ExchangesScreen:  # let the analysis fill its columns
            for _ in range(400):
                if str(app.screen.query_one("#exchanges").get_cell_at((0, 8))) != "…":
                    break
                await pilot.pause(0.025)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.2)
        path = os.path.join(OUT, f"{name}.svg")
        app.save_screenshot(path)
    return path


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    converter = shutil.which("rsvg-convert")
    for name, (sample, exchange, keys, ready) in SHOTS.items():
        svg = asyncio.run(shoot(name, sample, exchange, keys, ready))
        print(svg)
        if converter:
            png = svg[:-4] + ".png"
            subprocess.run([converter, "-w", "1300", svg, "-o", png], check=True)
            print(png)
    if not converter:
        print("rsvg-convert not found (Debian: librsvg2-bin): SVG only")


if __name__ == "__main__":
    main()
