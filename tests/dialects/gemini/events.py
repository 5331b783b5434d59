"""Gemini chunks for tests: candidates, parts, whole and streamed calls."""

from __future__ import annotations

from typing import Any

from streamscope.core.engine import StreamResult
from streamscope.dialects.gemini.engine import GeminiEngine

from ..anthropic.events import calls, frames, kinds, sse
from ..anthropic.events import run as run_with

_UNSET: Any = object()


def call(name: Any = _UNSET, args: Any = _UNSET, id: Any = _UNSET, sig: Any = None) -> dict:
    """A functionCall part."""
    fc: dict = {}
    for key, value in (("name", name), ("args", args), ("id", id)):
        if value is not _UNSET:
            fc[key] = value
    part: dict = {"functionCall": fc}
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def opening(name: str, sig: Any = None, id: Any = _UNSET) -> dict:
    part = call(name, id=id, sig=sig)
    part["functionCall"]["willContinue"] = True
    return part


def partial(*args: dict, more: bool = True) -> dict:
    fc: dict = {"partialArgs": list(args)}
    if more:
        fc["willContinue"] = True
    return {"functionCall": fc}


CLOSING = {"functionCall": {}}


def arg(path: str, value: Any, more: bool = False) -> dict:
    """One partialArg, its value's key told by its type."""
    if isinstance(value, str):
        out: dict = {"jsonPath": path, "stringValue": value}
    elif isinstance(value, bool):
        out = {"jsonPath": path, "boolValue": value}
    elif value is None:
        out = {"jsonPath": path, "nullValue": "NULL_VALUE"}
    else:
        out = {"jsonPath": path, "numberValue": value}
    if more:
        out["willContinue"] = True
    return out


def text(words: str, thought: bool = False) -> dict:
    return {"text": words, "thought": True} if thought else {"text": words}


def chunk(*parts: dict, finish: str | None = None, index: Any = _UNSET, **top: Any) -> dict:
    cand: dict = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        cand["finishReason"] = finish
    if index is not _UNSET:
        cand["index"] = index
    return {"candidates": [cand], **top}


WEATHER_TOOL = [{"functionDeclarations": [{"name": "get_weather"}, {"name": "get_time"}]}]
WEATHER = [
    chunk(text("Let me look.")),
    chunk(call("get_weather", {"city": "Paris"})),
    chunk(finish="STOP", usageMetadata={"promptTokenCount": 9}),
]
STREAMED = [
    chunk(opening("create_event")),
    chunk(partial(arg("$.title", "Team ", more=True))),
    chunk(partial(arg("$.title", "sync"))),
    chunk(partial(arg("$.who[0].name", "Ana"), arg("$.who[0].age", 31), arg("$.remote", True))),
    chunk(CLOSING),
    chunk(finish="STOP"),
]
STREAMED_ARGS = '{"title":"Team sync","who":[{"name":"Ana","age":31}],"remote":true}'


def run(events: list[Any], tools: list | None = None, **options: Any) -> StreamResult:
    """One GeminiEngine pass over `events` (no SSE event names, as Gemini sends)."""
    return run_with(events, tools, named=False, engine_class=GeminiEngine, **options)


__all__ = ["calls", "frames", "kinds", "sse"]
