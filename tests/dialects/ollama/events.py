"""Ollama `/api/chat` lines for tests: builders, NDJSON bodies, one engine pass."""

from __future__ import annotations

import json
from typing import Any

from streamscope.core.engine import StreamResult
from streamscope.core.frames import Frame
from streamscope.dialects.ollama.engine import OllamaEngine
from streamscope.framing.ndjson import LineDecoder

from ..anthropic.events import calls, kinds

_UNSET: Any = object()


def call(
    name: Any = "get_weather", args: Any = _UNSET, id: Any = _UNSET, index: Any = _UNSET
) -> dict:
    """A tool_calls entry."""
    fn: dict = {}
    if index is not _UNSET:
        fn["index"] = index
    if name is not _UNSET:
        fn["name"] = name
    fn["arguments"] = {"city": "Paris"} if args is _UNSET else args
    entry: dict = {"function": fn}
    if id is not _UNSET:
        entry = {"id": id, **entry}
    return entry


def line(
    content: str = "", *calls_: dict, done: bool = False, thinking: str | None = None, **top: Any
) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if calls_:
        message["tool_calls"] = list(calls_)
    return {
        "model": "qwen3:8b",
        "created_at": "2025-07-07T20:22:19.184789Z",
        "message": message,
        "done": done,
        **top,
    }


def final(reason: str = "stop", *calls_: dict) -> dict:
    return line("", *calls_, done=True, done_reason=reason, prompt_eval_count=26, eval_count=12)


def body(lines: list[Any]) -> bytes:
    """An NDJSON body: one line each (a str is sent as it is)."""
    return b"".join(
        (x if isinstance(x, str) else json.dumps(x, separators=(",", ":"))).encode() + b"\n"
        for x in lines
    )


def lines(lines_: list[Any]) -> list[Frame]:
    """The frames of an NDJSON body, read as a chunk log is."""
    decoder = LineDecoder()
    out: list[Frame] = []
    for raw in body(lines_).splitlines(keepends=True):
        out += decoder.feed(raw, 0)
    return out


WEATHER_TOOL = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
]
# current servers: text, the call in a done: false line, then the final line
WEATHER = [line("Let me look."), line("", call(id="call_a1")), final()]
# older servers: the call in the done: true line, no id
OLDER = [line(""), final("stop", call())]


def run(events: list[Any], tools: list | None = None, **end: Any) -> StreamResult:
    """One OllamaEngine pass over `events`, as the lines of an NDJSON body."""
    engine = OllamaEngine(1, tools)
    for frame in lines(events):
        engine.feed(frame)
    return engine.finish(**end)


__all__ = ["calls", "kinds"]
