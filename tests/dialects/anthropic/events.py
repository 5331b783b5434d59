"""Anthropic Messages events for tests: small builders, SSE bodies, one engine pass."""

from __future__ import annotations

from typing import Any

import orjson

from streamscope.core.engine import StreamResult
from streamscope.core.frames import Frame, Truncation, parse_payload
from streamscope.dialects.anthropic.engine import AnthropicEngine
from streamscope.framing.sse import decode_body

WEATHER_TOOL = {"name": "get_weather", "input_schema": {"type": "object"}}


def message_start(mid: str = "msg_1", **extra: Any) -> dict:
    message = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
        **extra,
    }
    return {"type": "message_start", "message": message}


def tool_start(
    index: int, tid: str = "toolu_a", name: str = "get_weather", kind: str = "tool_use", **block
) -> dict:
    content = {"type": kind, "id": tid, "name": name, "input": {}, **block}
    return {"type": "content_block_start", "index": index, "content_block": content}


def text_start(index: int, kind: str = "text") -> dict:
    content = {"type": kind, kind if kind != "redacted_thinking" else "data": ""}
    return {"type": "content_block_start", "index": index, "content_block": content}


def json_delta(index: int, text: Any) -> dict:
    delta = {"type": "input_json_delta", "partial_json": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def text_delta(index: int, text: str) -> dict:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }


def block_stop(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str | None = "tool_use") -> dict:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 20},
    }


MESSAGE_STOP = {"type": "message_stop"}
PING = {"type": "ping"}


def tool_call(
    index: int = 1,
    tid: str = "toolu_a",
    name: str = "get_weather",
    parts=("", '{"city": ', '"Paris"}'),
) -> list[dict]:
    """A tool block: its start, its fragments, its stop."""
    return [tool_start(index, tid, name), *(json_delta(index, p) for p in parts), block_stop(index)]


def text_block(index: int = 0, text: str = "Let me look.") -> list[dict]:
    return [text_start(index), text_delta(index, text), block_stop(index)]


def message(*blocks: list[dict], stop: str | None = "tool_use", mid: str = "msg_1") -> list[dict]:
    """A whole message: message_start, the blocks, message_delta, message_stop."""
    body = [e for block in blocks for e in block]
    return [message_start(mid), *body, message_delta(stop), MESSAGE_STOP]


WEATHER = message(text_block(), tool_call())


def event_name(event: Any) -> str | None:
    return (
        event.get("type")
        if isinstance(event, dict) and isinstance(event.get("type"), str)
        else None
    )


def sse(events: list[Any], named: bool = True) -> bytes:
    """An SSE body: `event: <type>` (when `named`) and `data:` per event; a str is sent as
    the data as it is."""
    out = []
    for e in events:
        data = e if isinstance(e, str) else orjson.dumps(e).decode()
        name = event_name(e) if named else None
        out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    return "".join(out).encode()


def frames(events: list[Any], named: bool = True) -> list[Frame]:
    return decode_body(sse(events, named))[0]


def run(
    events: list[Any],
    tools: list | None = None,
    named: bool = True,
    truncation: Truncation | None = None,
    engine_class: type = AnthropicEngine,
    **end: Any,
) -> StreamResult:
    """One engine pass over `events`, as an SSE body with event names (unless `named` is
    False); `end`: finish()'s end_reason, end_error, status, expect_done."""
    engine = engine_class(1, tools)
    for frame in frames(events, named):
        engine.feed(frame)
    return engine.finish(truncation, **end)


def frame_of(n: int, event: Any, name: str | None = None) -> Frame:
    data = event if isinstance(event, str) else orjson.dumps(event).decode()
    return Frame(n, data, parse_payload(data), event=name or event_name(event))


def kinds(result: StreamResult) -> set[str]:
    return {a.kind for a in result.anomalies}


def calls(result: StreamResult) -> list[tuple]:
    return [(c.choice, c.index, c.id, c.name, c.type, c.arguments) for c in result.tool_calls]
