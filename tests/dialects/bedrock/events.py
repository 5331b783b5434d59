"""Bedrock ConverseStream events for tests: builders, event stream bodies, one engine pass."""

from __future__ import annotations

import json
from typing import Any

from streamscope.core.engine import StreamResult
from streamscope.core.frames import Frame
from streamscope.dialects.bedrock.engine import BedrockEngine
from streamscope.framing.aws_eventstream import EventStreamDecoder, encode

from ..anthropic.events import calls, kinds

PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"


class Raw:
    """An event whose payload is sent as these bytes (not JSON, a bad CRC...)."""

    def __init__(self, name: str | None, payload: bytes, kind: str = "event", crc: bool = True):
        self.name, self.payload, self.kind, self.crc = name, payload, kind, crc


def event(name: str, body: dict | None = None, pad: int = 4) -> tuple[str, dict]:
    """One event: its :event-type and its payload (with the `p` padding Bedrock sends)."""
    return name, {**(body or {}), "p": PAD[:pad]}


def start() -> tuple[str, dict]:
    return event("messageStart", {"role": "assistant"})


def tool(index: int, tid: Any = "tooluse_a1", name: Any = "get_weather", kind: Any = None):
    use: dict = {"toolUseId": tid, "name": name}
    if kind is not None:
        use["type"] = kind
    return event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": use}})


def inp(index: int, text: Any) -> tuple[str, dict]:
    return event(
        "contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": text}}}
    )


def text(index: int, said: Any) -> tuple[str, dict]:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": said}})


def think(index: int, said: str) -> tuple[str, dict]:
    return event(
        "contentBlockDelta",
        {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": said}}},
    )


def stop(index: int) -> tuple[str, dict]:
    return event("contentBlockStop", {"contentBlockIndex": index})


def end(reason: Any = "tool_use") -> tuple[str, dict]:
    return event("messageStop", {"stopReason": reason})


def metadata() -> tuple[str, dict]:
    return event(
        "metadata",
        {
            "usage": {"inputTokens": 412, "outputTokens": 53, "totalTokens": 465},
            "metrics": {"latencyMs": 1210},
        },
    )


def exception(name: str = "throttlingException", said: str = "Too many requests") -> Raw:
    return Raw(name, json.dumps({"message": said}).encode(), "exception")


def message(e: Any) -> bytes:
    """One event stream message for an event (a Raw one as it says)."""
    if isinstance(e, Raw):
        key = ":exception-type" if e.kind == "exception" else ":event-type"
        headers = [(":message-type", 7, e.kind), (":content-type", 7, "application/json")]
        if e.name is not None:
            headers.insert(0, (key, 7, e.name))
        raw = encode(headers, e.payload)
        return raw if e.crc else raw[:-1] + bytes([raw[-1] ^ 0xFF])
    name, body = e
    payload = json.dumps(body, separators=(",", ":")).encode()
    return encode(
        [
            (":event-type", 7, name),
            (":content-type", 7, "application/json"),
            (":message-type", 7, "event"),
        ],
        payload,
    )


def body(events: list[Any]) -> bytes:
    return b"".join(message(e) for e in events)


def frames(events: list[Any]) -> list[Frame]:
    decoder = EventStreamDecoder()
    out: list[Frame] = []
    for e in events:
        out += decoder.feed(message(e), 0)
    return out


WEATHER_TOOLS = [
    {
        "toolSpec": {
            "name": "get_weather",
            "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
        }
    }
]
# What Claude on Bedrock streams: text block 0 (no start), then toolUse block 1.
WEATHER = [
    start(),
    text(0, "Let me check "),
    text(0, "the weather."),
    stop(0),
    tool(1),
    inp(1, ""),
    inp(1, '{"city":'),
    inp(1, ' "Paris"}'),
    stop(1),
    end("tool_use"),
    metadata(),
]


def run(events: list[Any], tools: list | None = None, **end_: Any) -> StreamResult:
    """One BedrockEngine pass over `events`, as the messages of an event stream body."""
    engine = BedrockEngine(1, tools)
    decoder = EventStreamDecoder()
    for frame in decoder.feed(body(events), 0):
        engine.feed(frame)
    return engine.finish(decoder.finish(), **end_)


__all__ = ["calls", "kinds"]
