"""Write screenshots/*.svg (and .png where rsvg-convert exists) of the replay's screens.

    .venv/bin/python scripts/screenshots.py [NAME ...]   (no names: every shot)

Each shot opens a bundled sample recording at its size (100x30, or 80x24 for the small
terminal ones), presses the keys a person would, and saves what the terminal shows. The
WebSocket session's is made by tests/session_samples.py (Codex's two responses over one
socket after an HTTP stream); recordings/codex-websocket.jsonl holds a session too, of
three responses, alone in its file.

The report shots (REPORTS) write `export --format html` of a sample and open it in
headless Chromium (tests/browser.py: Debian's chromium) at a frame, as PNG.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from streamscope.tui.app import ReplayApp  # noqa: E402
from streamscope.tui.screens import (  # noqa: E402
    ExchangesScreen,
    RequestScreen,
    SessionScreen,
    StreamScreen,
)
from tests.session_samples import codex_after_http  # noqa: E402

OUT = os.path.join(ROOT, "screenshots")
SIZE = (100, 30)


def _session(folder: Path) -> Path:
    """Codex's session whose second response leaves the first's call unanswered."""
    return codex_after_http(folder, answer_call=False)


# name -> (sample (or what writes it into a folder), exchange, keys, the screen to wait
# for, size)
SHOTS: dict[str, tuple[str | Callable[[Path], Path], int | None, list[str], type, tuple]] = {
    "exchanges": ("buggy-agent-uuid.jsonl", None, [], ExchangesScreen, SIZE),
    # the invented id in the request, where the contract broke, on a small terminal
    "conversation": ("buggy-agent-uuid.jsonl", None, ["down", "enter"], StreamScreen, (80, 24)),
    "stream-80x24": ("alibaba-empty-id.jsonl", 1, ["end"], StreamScreen, (80, 24)),
    # g asks for a frame in the keys' line, the frames in sight
    "go-to-frame-80x24": ("alibaba-empty-id.jsonl", 1, ["g", "5"], StreamScreen, (80, 24)),
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
    # Bedrock Converse: the text block with no start after the call, glued onto it by
    # the client that sends deltas to the last started block
    "bedrock-stream": (
        "bedrock-text-without-start.jsonl",
        1,
        ["right_square_bracket", "s"],
        StreamScreen,
        SIZE,
    ),
    # Ollama's native chat: two calls of one tool with no ids, on a small terminal
    "ollama-stream": ("ollama-two-calls.jsonl", 1, ["end"], StreamScreen, (80, 24)),
    # a WebSocket session: every message under its response, the contract across them
    "websocket-session": (_session, 3, ["down"] * 4, SessionScreen, SIZE),
}


# name -> (sample, the frame the page opens at): the HTML report, in Chromium
REPORTS: dict[str, tuple[str, str]] = {
    # the alibaba sample at its `id: ""` frame: naive's overwritten id and name marked
    "report-at-finding": ("alibaba-empty-id.jsonl", "exchange=1&frame=2"),
}


# name -> (A, B, keys, size): `replay A B`, the direct stream beside the one through
# LiteLLM, at the step where the rewritten id first differs (80x24 stacked, 200x50 side by side)
PAIRS: dict[str, tuple[str, str, list[str], tuple[int, int]]] = {
    f"side-by-side-{w}x{h}": (
        "gateway-direct.jsonl",
        "gateway-litellm.jsonl",
        ["right_square_bracket"],
        (w, h),
    )
    for w, h in ((80, 24), (200, 50))
}


async def shoot_pair(name: str, a: str, b: str, keys: list[str], size: tuple) -> str:
    from streamscope.tui.sidebyside import open_pair

    app = open_pair(
        (os.path.join(ROOT, "recordings", a), None), (os.path.join(ROOT, "recordings", b), None)
    )
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3)
        path = os.path.join(OUT, f"{name}.svg")
        app.save_screenshot(path)
    return path


def shoot_report(name: str, sample: str, fragment: str, folder: Path) -> str | None:
    from streamscope.export.report import write
    from tests.browser import CHROMIUM, screenshot

    if CHROMIUM is None:
        print(f"{name}: no chromium (Debian: apt-get install chromium): skipped")
        return None
    page = folder / f"{name}.html"
    # (the sample named as in the repository: a report says the path it was given)
    source = os.path.relpath(os.path.join(ROOT, "recordings", sample))
    page.write_bytes(write(source, "html", None, None, False).data)
    png = Path(OUT) / f"{name}.png"
    screenshot(page, png, fragment, "1280,1150")
    return str(png)


async def shoot(
    name: str, sample: str, exchange: int | None, keys: list[str], ready: type, size: tuple
) -> str:
    app = ReplayApp(sample, exchange)
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
    folder = Path(tempfile.mkdtemp(prefix="screenshots-"))
    asked = sys.argv[1:]
    every = [*SHOTS, *PAIRS, *REPORTS]
    unknown = [n for n in asked if n not in every]
    if unknown:
        sys.exit(f"no such shot: {', '.join(unknown)} (shots: {', '.join(every)})")
    for name, (report_sample, fragment) in REPORTS.items():
        if not asked or name in asked:
            made = shoot_report(name, report_sample, fragment, folder)
            if made is not None:
                print(made)

    def replayed(name: str) -> str:
        sample, exchange, keys, ready, size = SHOTS[name]
        path = (
            os.path.join(ROOT, "recordings", sample) if isinstance(sample, str) else sample(folder)
        )
        return asyncio.run(shoot(name, str(path), exchange, keys, ready, size))

    def paired(name: str) -> str:
        return asyncio.run(shoot_pair(name, *PAIRS[name]))

    shots = [(n, replayed) for n in SHOTS] + [(n, paired) for n in PAIRS]
    for name, take in shots:
        if asked and name not in asked:
            continue
        svg = take(name)
        print(svg)
        if converter:
            png = svg[:-4] + ".png"
            subprocess.run([converter, "-w", "1300", svg, "-o", png], check=True)
            print(png)
    if not converter:
        print("rsvg-convert not found (Debian: librsvg2-bin): SVG only")


if __name__ == "__main__":
    main()
