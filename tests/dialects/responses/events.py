"""OpenAI Responses API events for tests: small builders, SSE bodies, one engine pass."""

from __future__ import annotations

from typing import Any

from streamscope.core.engine import StreamResult
from streamscope.dialects.responses.engine import ResponsesEngine

from ..anthropic.events import calls, event_name, frames, kinds, sse
from ..anthropic.events import run as run_with

WEATHER_TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
ARGS = ('{"city": ', '"Paris"}')


def item(
    kind: str = "function_call",
    item_id: str = "fc_1",
    call_id: str = "call_1",
    name: str = "get_weather",
    text: str = "",
    status: str = "in_progress",
) -> dict:
    field = "input" if kind == "custom_tool_call" else "arguments"
    return {
        "type": kind,
        "id": item_id,
        "call_id": call_id,
        "name": name,
        field: text,
        "status": status,
    }


def added(index: int, what: dict) -> dict:
    return {"type": "response.output_item.added", "output_index": index, "item": what}


def item_done(index: int, what: dict) -> dict:
    return {"type": "response.output_item.done", "output_index": index, "item": what}


def delta(index: int, text: Any, item_id: str = "fc_1", custom: bool = False) -> dict:
    kind = "custom_tool_call_input" if custom else "function_call_arguments"
    return {
        "type": f"response.{kind}.delta",
        "item_id": item_id,
        "output_index": index,
        "delta": text,
    }


def args_done(index: int, text: Any, item_id: str = "fc_1", custom: bool = False) -> dict:
    kind, field = (
        ("custom_tool_call_input", "input") if custom else ("function_call_arguments", "arguments")
    )
    return {"type": f"response.{kind}.done", "item_id": item_id, "output_index": index, field: text}


def call(
    index: int = 0,
    item_id: str = "fc_1",
    call_id: str = "call_1",
    name: str = "get_weather",
    parts: tuple = ARGS,
    done: str | None = None,
    kind: str = "function_call",
) -> list[dict]:
    """A call item: added, its deltas, its .done and output_item.done (each stating
    `done`, the deltas joined unless given)."""
    custom = kind == "custom_tool_call"
    whole = "".join(parts) if done is None else done
    return [
        added(index, item(kind, item_id, call_id, name)),
        *(delta(index, p, item_id, custom) for p in parts),
        args_done(index, whole, item_id, custom),
        item_done(index, item(kind, item_id, call_id, name, whole, "completed")),
    ]


def message_item(index: int = 0, text: str = "Let me look.", item_id: str = "msg_1") -> list[dict]:
    what = {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "content": [],
        "status": "in_progress",
    }
    return [
        added(index, what),
        {
            "type": "response.output_text.delta",
            "item_id": item_id,
            "output_index": index,
            "content_index": 0,
            "delta": text,
        },
        item_done(index, {**what, "status": "completed"}),
    ]


def reasoning_item(index: int = 0, item_id: str = "rs_1") -> list[dict]:
    what = {"type": "reasoning", "id": item_id, "summary": []}
    return [added(index, what), item_done(index, what)]


def created(rid: str = "resp_1") -> dict:
    return {
        "type": "response.created",
        "response": {"id": rid, "object": "response", "status": "in_progress", "output": []},
    }


def completed(
    output: list[dict], status: str = "completed", rid: str = "resp_1", kind: str = ""
) -> dict:
    kind = kind or {"completed": "response.completed", "failed": "response.failed"}.get(
        status, "response.incomplete"
    )
    return {
        "type": kind,
        "response": {"id": rid, "object": "response", "status": status, "output": output},
    }


def response(
    *items: list[dict], status: str = "completed", rid: str = "resp_1", end: bool = True
) -> list[dict]:
    """A whole response: created, the items' events, and the end event holding every item
    as its output_item.done stated it; sequence numbers in order."""
    body = [e for events in items for e in events]
    output = [
        e["item"]
        for e in body
        if isinstance(e, dict) and e.get("type") == "response.output_item.done"
    ]
    events = [created(rid), *body, *([completed(output, status, rid)] if end else [])]
    return numbered(events)


def numbered(events: list[Any], start: int = 0) -> list[Any]:
    """The events with sequence_number 0, 1, 2... (dict events only, as copies)."""
    out, n = [], start
    for e in events:
        if isinstance(e, dict) and isinstance(e.get("type"), str):
            e = {**e, "sequence_number": n}
            n += 1
        out.append(e)
    return out


WEATHER = response(message_item(0), call(1))


def run(events: list[Any], tools: list | None = None, **options: Any) -> StreamResult:
    """One ResponsesEngine pass over `events` (anthropic_events.run's options)."""
    return run_with(events, tools, engine_class=ResponsesEngine, **options)


__all__ = ["calls", "event_name", "frames", "kinds", "sse"]
