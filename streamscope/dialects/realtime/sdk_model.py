"""A pure-Python, linear-time emulation of what a user of the `openai` package's realtime
client collects as calls: the `openai-sdk` strategy of the Realtime API.

The openai package gives no call accumulator for the Realtime API: `client.realtime
.connect()` (and the beta API's `client.beta.realtime.connect()`) hands the user typed
events, each message parsed by `RealtimeConnection.parse_event`: `json.loads` of the
message's bytes, then `construct_type_unchecked` into `RealtimeServerEvent`, which
validates nothing (every field is held as sent; a missing one reads as None; a message
that is no JSON object is handed on as the value itself). Users collect the calls from
those events; the way emulated here is the openai-agents SDK's (its
`OpenAIRealtimeWebSocketModel._handle_output_item`, which its RealtimeSession runs the
tools from): at each `response.output_item.added` or `response.output_item.done` whose
`item.type == "function_call"` and `item.status == "completed"`, one call with
`item.call_id or ""`, `item.name or ""`, `item.arguments or ""` and `item.id or ""`.
Argument deltas, `.done` and `response.done` are not read; a call whose item is done
with another status (`incomplete`, a cancelled response) is not run.

What the user's loop raises stops it, as it stops theirs: the `json.JSONDecodeError` of
a message that is no JSON, and the AttributeError of reading `event.type` on a message
that is no object, or `event.item.type` on an item that is none (null, missing, a
string).

Shapes that raise `Unmodeled` (the real parse answers, see
streamscope.dialects.realtime.oracle): a `_fields_set` or `_BaseModel__cls` key anywhere
(construct() binds them as parameters); JSON nested more than 500 levels (json.loads'
recursion limit depends on the caller's stack); a message whose bytes are not UTF-8, or
that the WebSocket framing could not read whole (the client's websockets connection
fails on those, which is not reproduced).

Verified against openai 3.63.0 by tests/dialects/realtime/test_realtime_sdk_model.py,
which runs the real parse beside this module.

Must not import openai, pydantic, jiter, httpx, httpx2, anthropic, textual or rich.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import INVALID, Frame

ITEM_EVENTS = ("response.output_item.added", "response.output_item.done")
_CONSTRUCT_PARAMS = ("_fields_set", "_BaseModel__cls")
_MAX_DEPTH = 500


def _nesting(value: object) -> int:
    """How deep a parsed JSON value nests (an object or array is one level)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        node, depth = todo.pop()
        if type(node) is dict:
            children: Any = node.values()
        elif type(node) is list:
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        todo.extend((v, depth + 1) for v in children if type(v) in (dict, list))
    return deepest


def unmodeled(frame: Frame) -> str | None:
    """Why the emulation does not answer for this frame (None: it does)."""
    if frame.bad_utf8:
        return "a message whose bytes are not UTF-8"
    if frame.invalid is not None:
        return f"a message the WebSocket framing could not read whole ({frame.invalid})"
    data = frame.data
    if any(key in data for key in _CONSTRUCT_PARAMS):
        return "a '_fields_set' or '_BaseModel__cls' key, which BaseModel.construct binds"
    brackets = data.count("[") + data.count("{")  # (a cheap bound on the nesting)
    if (
        brackets > _MAX_DEPTH
        and frame.payload is not INVALID
        and _nesting(frame.payload) > _MAX_DEPTH
    ):
        return f"JSON nested more than {_MAX_DEPTH} levels deep"
    return None


def _no_attribute(value: object, name: str) -> AttributeError:
    """The AttributeError Python raises reading `value.name` on a plain value."""
    return AttributeError(f"'{type(value).__name__}' object has no attribute '{name}'")


def _or_empty(value: object) -> object:
    return value if value else ""


class RealtimeSdkEmulation:
    """Feed frames in order; `finish` gives the calls, or what the user's loop raised."""

    __slots__ = ("found", "error")

    def __init__(self) -> None:
        self.found: list[Call] = []
        self.error: StrategyError | None = None

    def feed(self, frame: Frame) -> None:
        if self.error is not None:
            return
        why = unmodeled(frame)
        if why is not None:
            raise Unmodeled(why)
        n, event = frame.number, frame.payload
        if type(event) is not dict or event.get("type") in ITEM_EVENTS:
            # what the user's code reads of it, as json.loads reads it: orjson declines
            # NaN and reads an integer past 64 bits as a float (a dict of another type is
            # read for its `type` alone, a string either way)
            try:
                event = json.loads(frame.data.encode("utf-8", "surrogatepass"))
            except (ValueError, RecursionError) as exc:
                self.error = StrategyError.from_exception(exc, n)
                return
        if type(event) is not dict:
            self.error = StrategyError.from_exception(_no_attribute(event, "type"), n)
            return
        kind = event.get("type")
        if not (kind == ITEM_EVENTS[0] or kind == ITEM_EVENTS[1]):
            return
        item = event.get("item")
        if type(item) is not dict:
            self.error = StrategyError.from_exception(_no_attribute(item, "type"), n)
            return
        if item.get("type") == "function_call" and item.get("status") == "completed":
            arguments = _or_empty(item.get("arguments"))
            self.found.append(
                Call(
                    choice=0,
                    index=event.get("output_index"),
                    id=_or_empty(item.get("call_id")),
                    type="function_call",
                    name=_or_empty(item.get("name")),
                    arguments=list(arguments) if type(arguments) is list else arguments,
                    fragments=0,
                    first_frame=n,
                    last_frame=n,
                    item_id=_or_empty(item.get("id")),
                )
            )

    def calls(self) -> list[Call]:
        return list(self.found)

    def finish(self, last_frame: int) -> list[Call] | StrategyError:
        return self.error if self.error is not None else self.calls()

    def copy(self) -> RealtimeSdkEmulation:
        new = RealtimeSdkEmulation()
        new.found, new.error = list(self.found), self.error
        return new
