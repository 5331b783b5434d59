"""An OpenAI Responses stream as the API sends it, for the recorder and playback tests.

`POST /v1/responses` with `"stream": true` is answered with named events, each
`event: <type>` + `data: <json>` + a blank line, `sequence_number` counting from 0, and no
`data: [DONE]`: the last event is `response.completed` (or `response.incomplete`,
`response.failed`), whose data carries the whole response again.

Turn 1 (a request whose input carries no `function_call_output`) streams a function call:
`response.created`, `response.in_progress`, `response.output_item.added` with the call's
`arguments: ""`, `response.function_call_arguments.delta` fragments, `.done`,
`response.output_item.done`, then the final event with the call in `output`. Turn 2 (the
call's output sent back, in `input` beside the call item or after `previous_response_id`)
streams a text answer: a message item, its output_text part, `response.output_text.delta`
pieces, `.done`s and the final event.
"""

from __future__ import annotations

from typing import Any

import orjson

MODEL = "gpt-4.1-2025-04-14"
RESPONSE_IDS = (
    "resp_68c1d2e3f4a5819098b7c6d5e4f3a2b10c9d8e7f6a5b4c3d",
    "resp_68c1d2e5a7b981909f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c",
)
ITEM_ID = "fc_68c1d2e4b8c48190a1b2c3d4e5f6a7b80c1d2e3f4a5b6c7d"
MESSAGE_ID = "msg_68c1d2e6c9d08190b2c3d4e5f6a7b8c90d1e2f3a4b5c6d7e"
CALL_ID = "call_kV2Jq8wXn4TzR7mY1pLs9bHd"
ARGUMENTS = {"city": "Paris", "unit": "celsius"}
OUTPUT = "14 °C, partly cloudy"
ANSWER = "It's 14 °C and partly cloudy in Paris."
QUESTION = [{"role": "user", "content": "What's the weather in Paris?"}]
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
        "strict": True,
    }
]
# How each final event ends the response: its status and what says why.
ENDS = {
    "completed": {},
    "incomplete": {"incomplete_details": {"reason": "max_output_tokens"}},
    "failed": {"error": {"code": "server_error", "message": "The model failed to respond."}},
}


def event(kind: str, sequence: int, **fields: Any) -> bytes:
    """One SSE event: `event: <kind>`, its data `{"type": <kind>, "sequence_number": ...}`."""
    data = orjson.dumps({"type": kind, "sequence_number": sequence, **fields})
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


def response(turn: int, status: str, output: list[dict], previous: str | None = None) -> dict:
    """The response object the lifecycle events carry, as the API echoes the request."""
    done = status != "in_progress"
    return {
        "id": RESPONSE_IDS[turn - 1],
        "object": "response",
        "created_at": 1757500000 + turn,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": previous,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default" if done else "auto",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": TOOLS,
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": _usage(turn) if done else None,
        "user": None,
        "metadata": {},
    }


def _usage(turn: int) -> dict:
    inputs, outputs = (82, 23) if turn == 1 else (131, 14)
    return {
        "input_tokens": inputs,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": outputs,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inputs + outputs,
    }


class _Turn:
    """Numbers the events of one response, and wraps them in its lifecycle."""

    def __init__(self, turn: int, previous: str | None) -> None:
        self.turn, self.previous, self.events = turn, previous, []

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append(event(kind, len(self.events), **fields))

    def start(self) -> None:
        for kind in ("response.created", "response.in_progress"):
            self.add(kind, response=response(self.turn, "in_progress", [], self.previous))

    def end(self, output: list[dict], how: str) -> list[bytes]:
        body = {**response(self.turn, how, output, self.previous), **ENDS[how]}
        self.add(f"response.{how}", response=body)
        return self.events


def function_call_events(how: str = "completed", previous: str | None = None) -> list[bytes]:
    """Turn 1: the call to get_weather, its arguments in fragments."""
    arguments = orjson.dumps(ARGUMENTS).decode()
    call = {"id": ITEM_ID, "type": "function_call", "status": "in_progress", "arguments": ""}
    call |= {"call_id": CALL_ID, "name": "get_weather"}
    turn = _Turn(1, previous)
    turn.start()
    turn.add("response.output_item.added", output_index=0, item=call)
    for i in range(0, len(arguments), 7):  # `{"city"`, `:"Paris`, ...
        fragment = {"item_id": ITEM_ID, "output_index": 0, "delta": arguments[i : i + 7]}
        turn.add("response.function_call_arguments.delta", **fragment, obfuscation="xQ3r")
    turn.add(
        "response.function_call_arguments.done",
        item_id=ITEM_ID,
        output_index=0,
        arguments=arguments,
    )
    done = {**call, "status": "completed", "arguments": arguments}
    turn.add("response.output_item.done", output_index=0, item=done)
    return turn.end([done], how)


def answer_events(previous: str | None = None) -> list[bytes]:
    """Turn 2: the answer, in output_text deltas."""
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    message = {"id": MESSAGE_ID, "type": "message", "status": "in_progress", "content": []}
    message["role"] = "assistant"
    where = {"item_id": MESSAGE_ID, "output_index": 0, "content_index": 0}
    turn = _Turn(2, previous)
    turn.start()
    turn.add("response.output_item.added", output_index=0, item=message)
    turn.add("response.content_part.added", **where, part=part)
    for piece in (ANSWER[:4], ANSWER[4:12], ANSWER[12:27], ANSWER[27:]):
        turn.add("response.output_text.delta", **where, delta=piece, logprobs=[], obfuscation="k9")
    turn.add("response.output_text.done", **where, text=ANSWER, logprobs=[])
    part = {**part, "text": ANSWER}
    turn.add("response.content_part.done", **where, part=part)
    done = {**message, "status": "completed", "content": [part]}
    turn.add("response.output_item.done", output_index=0, item=done)
    return turn.end([done], "completed")


def _answers_a_call(request: dict) -> bool:
    items = request.get("input")
    return isinstance(items, list) and any(
        isinstance(item, dict) and item.get("type") == "function_call_output" for item in items
    )


def events_for(request: dict, how: str = "completed") -> list[bytes]:
    """The turn a request asks for: the answer once its input carries the call's output.
    `how` ends turn 1 (`incomplete`, `failed`; anything else: `completed`)."""
    previous = request.get("previous_response_id")
    if _answers_a_call(request):
        return answer_events(previous)
    return function_call_events(how if how in ENDS else "completed", previous)


def call_item() -> dict:
    """The function call as turn 1's output holds it (and as an agent sends it back)."""
    arguments = orjson.dumps(ARGUMENTS).decode()
    return {
        "id": ITEM_ID,
        "type": "function_call",
        "status": "completed",
        "arguments": arguments,
        "call_id": CALL_ID,
        "name": "get_weather",
    }


def follow_up() -> list[dict]:
    """The second request's input without previous_response_id: the question, the call
    as the model made it, and its output."""
    result = {"type": "function_call_output", "call_id": CALL_ID, "output": OUTPUT}
    return [*QUESTION, call_item(), result]
