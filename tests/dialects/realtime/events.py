"""OpenAI Realtime server events for tests: small builders, sessions of messages, one
engine pass over a turn's messages as frames."""

from __future__ import annotations

import itertools
import json
from typing import Any

import orjson

from streamscope.core.engine import StreamResult
from streamscope.core.frames import Frame
from streamscope.dialects.realtime.engine import RealtimeEngine
from streamscope.framing.ndjson import LineDecoder
from streamscope.framing.session import WsMessage, frame_of

from ..anthropic.events import calls, kinds

WEATHER_TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
TIME_TOOL = {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
ARGS = ('{"city": ', '"Paris"}')
_UNSET: Any = object()


def item(
    item_id: str = "item_1",
    call_id: Any = "call_1",
    name: Any = "get_weather",
    arguments: Any = "",
    status: str = "in_progress",
    kind: str = "function_call",
) -> dict:
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": kind,
        "status": status,
        "name": name,
        "call_id": call_id,
        "arguments": arguments,
    }


def created(rid: str = "resp_1") -> dict:
    response = {"id": rid, "object": "realtime.response", "status": "in_progress", "output": []}
    return {"type": "response.created", "response": response}


def added(index: int, what: dict, rid: str = "resp_1") -> dict:
    return {
        "type": "response.output_item.added",
        "response_id": rid,
        "output_index": index,
        "item": what,
    }


def item_done(index: int, what: dict, rid: str = "resp_1") -> dict:
    return {
        "type": "response.output_item.done",
        "response_id": rid,
        "output_index": index,
        "item": what,
    }


def delta(
    index: int, text: Any, item_id: str = "item_1", call_id: Any = "call_1", rid: str = "resp_1"
) -> dict:
    return {
        "type": "response.function_call_arguments.delta",
        "response_id": rid,
        "item_id": item_id,
        "output_index": index,
        "call_id": call_id,
        "delta": text,
    }


def args_done(
    index: int,
    text: Any,
    item_id: str = "item_1",
    call_id: Any = "call_1",
    name: Any = _UNSET,
    rid: str = "resp_1",
) -> dict:
    """`.done` as GA sends it (with `name`); name=None leaves it out, as the beta API does."""
    event = {
        "type": "response.function_call_arguments.done",
        "response_id": rid,
        "item_id": item_id,
        "output_index": index,
        "call_id": call_id,
        "arguments": text,
    }
    if name is not None:
        event["name"] = "get_weather" if name is _UNSET else name
    return event


def call(
    index: int = 0,
    item_id: str = "item_1",
    call_id: str = "call_1",
    name: str = "get_weather",
    parts: tuple = ARGS,
    done: str | None = None,
    rid: str = "resp_1",
    beta: bool = False,
) -> list[dict]:
    """A function call item: added, its deltas, its .done and output_item.done (each
    stating `done`, the deltas joined unless given)."""
    whole = "".join(parts) if done is None else done
    return [
        added(index, item(item_id, call_id, name), rid),
        *(delta(index, p, item_id, call_id, rid) for p in parts),
        args_done(index, whole, item_id, call_id, None if beta else name, rid),
        item_done(index, item(item_id, call_id, name, whole, "completed"), rid),
    ]


def message_item(
    index: int = 0,
    text: str = "Let me look.",
    item_id: str = "item_m",
    rid: str = "resp_1",
    beta: bool = False,
) -> list[dict]:
    """An assistant message item and its text (the beta API's names when `beta`)."""
    what = {
        "id": item_id,
        "object": "realtime.item",
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    kind = "response.text.delta" if beta else "response.output_text.delta"
    return [
        added(index, what, rid),
        {
            "type": kind,
            "response_id": rid,
            "item_id": item_id,
            "output_index": index,
            "content_index": 0,
            "delta": text,
        },
        item_done(index, {**what, "status": "completed"}, rid),
    ]


def done(output: Any, status: str = "completed", rid: str = "resp_1", **details: Any) -> dict:
    response = {"id": rid, "object": "realtime.response", "status": status, "output": output}
    if details:
        response["status_details"] = {"type": status, **details}
    return {"type": "response.done", "response": response}


def response(
    *items: list[dict], status: str = "completed", rid: str = "resp_1", end: bool = True
) -> list[dict]:
    """A whole response: created, the items' events, and response.done holding every item
    as its output_item.done stated it; event ids in order."""
    body = [e for events in items for e in events]
    output = [
        e["item"]
        for e in body
        if isinstance(e, dict)
        and e.get("type") == "response.output_item.done"
        and isinstance(e.get("item"), dict)
    ]
    return numbered([created(rid), *body, *([done(output, status, rid)] if end else [])])


_ids = itertools.count(1)


def numbered(events: list[Any]) -> list[Any]:
    """The events with an `event_id` each (dict events only, as copies)."""
    return [
        {"event_id": f"event_{next(_ids)}", **e}
        if isinstance(e, dict) and "event_id" not in e
        else e
        for e in events
    ]


WEATHER = response(message_item(0), call(1))
SENT_ITEM = item(arguments="".join(ARGS), status="completed")  # the call as output_item.done has it
TWO_CALLS = response(call(0), call(1, "item_2", "call_2", "get_time", ('{"tz": ', '"UTC"}')))


def data(event: Any) -> bytes:
    if isinstance(event, str):
        return event.encode()
    try:
        return orjson.dumps(event)
    except TypeError:  # an integer past 64 bits: JSON holds it, orjson does not write it
        return json.dumps(event).encode()


def body(events: list[Any]) -> bytes:
    """The events as JSON lines (how a client logs a session's server events)."""
    return b"".join(data(e) + b"\n" for e in events)


def messages(
    pairs: list[tuple[str, Any]], start: int = 1_000_000, step: int = 1_000_000
) -> list[WsMessage]:
    """Text messages (sender, event or raw text), `step` ns apart."""
    return [
        WsMessage(sender, "text", data(event), start + k * step)
        for k, (sender, event) in enumerate(pairs)
    ]


def frames(events: list[Any]) -> list[Frame]:
    """A turn's server messages as the session gives them to the engine."""
    out: list[Frame] = []
    for m in messages([("server", e) for e in events]):
        out.append(frame_of(m, len(out) + 1, 0, out[-1].end if out else 0))
    return out


def lines(events: list[Any]) -> list[Frame]:
    decoder = LineDecoder()
    return decoder.feed(body(events), 0) + decoder.flush()


def run(events: list[Any], tools: list | None = None, **end: Any) -> StreamResult:
    """One RealtimeEngine pass over `events`, as one turn's server messages; `end`:
    finish()'s end_reason, end_error, status, expect_done."""
    engine = RealtimeEngine(1, tools)
    for frame in frames(events):
        engine.feed(frame)
    return engine.finish(**end)


def client_output(call_id: Any, output: str = '{"temp": 18}') -> dict:
    return {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": call_id, "output": output},
    }


def loads(text: str) -> Any:
    return json.loads(text)


__all__ = ["calls", "kinds"]
