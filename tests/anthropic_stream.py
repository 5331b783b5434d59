"""An Anthropic Messages stream as the API sends it, for the recorder and playback tests.

Turn 1 streams a text block, then a `tool_use` block whose input starts as `{}` and comes
in `input_json_delta` fragments (the first one empty, as the API sends it), and stops
with `stop_reason: "tool_use"`; turn 2 (a request carrying the `tool_result`) streams
the answer. Each event is `event: <type>` + `data: <json>` + a blank line; `message_stop`
is the last.
"""

from __future__ import annotations

import orjson

MODEL = "claude-sonnet-4-5"
TOOL_ID = "toolu_01D7FLrfh4GYq7yT1ULFeyMV"
TOOL_INPUT = {"city": "Paris", "unit": "celsius"}
ANSWER = "It's 14 °C and partly cloudy in Paris."
TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    }
]
QUESTION = [{"role": "user", "content": "What's the weather in Paris?"}]


def event(kind: str, **fields: object) -> bytes:
    """One SSE event: `event: <kind>`, its data `{"type": <kind>, ...fields}`, a blank line."""
    data = orjson.dumps({"type": kind, **fields})
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


def _start(message_id: str, input_tokens: int) -> bytes:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return event("message_start", message=message)


def _block(index: int, block: dict, deltas: list[dict]) -> list[bytes]:
    return [
        event("content_block_start", index=index, content_block=block),
        *(event("content_block_delta", index=index, delta=d) for d in deltas),
        event("content_block_stop", index=index),
    ]


def _text(index: int, pieces: list[str]) -> list[bytes]:
    return _block(
        index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces]
    )


def _end(stop_reason: str, output_tokens: int) -> list[bytes]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return [
        event("message_delta", delta=delta, usage={"output_tokens": output_tokens}),
        event("message_stop"),
    ]


def tool_use_events() -> list[bytes]:
    """Turn 1: a little text, then the tool call, its input in fragments."""
    text = orjson.dumps(TOOL_INPUT).decode()
    fragments = ["", text[:9], text[9:22], text[22:]]
    block = {"type": "tool_use", "id": TOOL_ID, "name": "get_weather", "input": {}}
    deltas = [{"type": "input_json_delta", "partial_json": f} for f in fragments]
    return [
        _start("msg_01XFDUDYJgAACzvnptvVoYEL", 472),
        *_text(0, ["I'll check ", "the weather."]),
        event("ping"),
        *_block(1, block, deltas),
        *_end("tool_use", 89),
    ]


def answer_events() -> list[bytes]:
    """Turn 2: the answer, after the tool result."""
    return [
        _start("msg_01Aq9w938a90dw8q3nbGcQd4", 581),
        *_text(0, [ANSWER[:12], ANSWER[12:]]),
        *_end("end_turn", 15),
    ]


def events_for(request: dict) -> list[bytes]:
    """The turn a request asks for: the answer once it carries a tool_result."""
    for message in request.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return answer_events()
    return tool_use_events()


def follow_up(tool_input: dict) -> list[dict]:
    """The second request's messages: the call as the assistant made it, and its result."""
    call = {"type": "tool_use", "id": TOOL_ID, "name": "get_weather", "input": tool_input}
    result = {"type": "tool_result", "tool_use_id": TOOL_ID, "content": "14 °C, partly cloudy"}
    return [
        *QUESTION,
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "I'll check the weather."}, call],
        },
        {"role": "user", "content": [result]},
    ]
