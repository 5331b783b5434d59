"""A pure-Python, linear-time emulation of the `openai` SDK's Responses ResponseStream.

The `openai-sdk` strategy of the Responses API reports what `client.responses.stream(...)`
builds from a stream: the SDK's `Stream` (stop at data starting `[DONE]`; `sse.json()`;
raise `APIError` on a truthy `error` key; an event named `thread.*` is wrapped as
`{"data": ..., "event": ...}`; any other event name is ignored), `construct_type` into a
`ResponseStreamEvent`, then `ResponseStreamState.handle_event` / `accumulate_event` and
`get_final_response()`.

What it models, as openai 3.63.0 does it:

* Every event before a `response.created` raises RuntimeError; the first one's `response`
  makes the snapshot (its `output` items are the first output items, at their positions;
  an `output` that is a string or an object is enumerated as the SDK does: its characters
  or keys become output items). A later lifecycle event (created / queued / in_progress /
  completed / failed / incomplete) must carry the snapshot's `id`.
* `response.output_item.added` appends its item to the snapshot's output (a function_call
  or message item as a new object, anything else as the event's own item) under its
  `output_index`; an index seen before raises. An item of any other type is held as sent:
  a `custom_tool_call` keeps the `input` it was added with, since the SDK applies no
  `response.custom_tool_call_input.delta`.
* `response.function_call_arguments.delta` does `arguments += delta` on the snapshot item at
  its `output_index` (Python's `+=`, whatever the types) and raises AssertionError when that
  item is not a function_call; `.done` events, custom tool input events and unknown event
  types change nothing. `response.content_part.added` and `response.output_text.delta` /
  `.done` are followed as far as the exceptions they raise (a message's content list, each
  part's type and the type of its text).
* `response.output_item.done` records its item as the completed item at its `output_index`,
  with the SDK's identity checks (type, id and call_id); a later created / queued /
  in_progress event replaces completed items of the same identity.
* `responses.stream(tools=...)` converts the input tools first, raising (reported at frame
  0) on a Chat Completions `function` shape or a tool it cannot read.
* `response.completed` checks every added item is completed or in its output, and sets the
  final response: its own `output`, or, when it has none, the completed items in index
  order; parsing it reads the `arguments` of a function call to a strict input tool with
  json.loads. `get_final_response()` raises RuntimeError when none came.
* pydantic cannot write a key holding a lone surrogate (streamscope.dialects.model_keys):
  UnicodeEncodeError where the SDK dumps a model holding one: the first response.created's
  response, a function_call or message item added, a content part added to a message,
  and at response.completed (parse_response) each output_text part, message and function
  call, then the response. Once a frame read again has an escape that may make one
  (`_escapes`), those models are looked at key by key.
* Attribute, index, key and type errors on malformed events, with the SDK's messages:
  models are held as the JSON objects they were constructed from (a missing declared field
  and a null read as None), and anything that was not an object is held as the value
  itself, so reading an attribute of it raises what the SDK raises.

A call is each `function_call` or `custom_tool_call` item: mid-stream (`calls`) of the
snapshot's output, with `index` its output_index, `fragments` the argument deltas applied
to it, `first_frame` the frame that brought it and `last_frame` the last delta; at the end
(`finish`) of `get_final_response().output`, with `index` its position there and
`first_frame` = `last_frame` the frame whose data the item is (the `response.completed`
event, or the `output_item.done` / lifecycle event that completed it) and `fragments` 0:
the final output is never built from the deltas.

How it stays linear and cheap: the usual frames, argument and output_text deltas
(`_plain_delta`) and events whose fields the SDK never reads, are taken as orjson parsed
them (json.loads reads those shapes alike; the keys construct() would bind are looked for
in them as in any frame); any other frame is parsed again with json.loads, as `sse.json()` does. An
argument delta is appended to a list of parts joined only when read; copies share the
joined parts (`freeze`). Nothing is re-dumped or re-constructed per event.

Shapes that raise `Unmodeled` (the real class answers, see
streamscope.dialects.responses.oracle):

* an `output_index` or `content_index` the SDK reads that is a bool, a whole float or a
  string with a digit in it: pydantic's lax int coercion turns it into an int exactly when
  the whole event validates against its model;
* a `_fields_set` or `_BaseModel__cls` key anywhere in an event, which
  `BaseModel.construct` binds as a parameter;
* NaN in an item's type, id or call_id (the SDK's identity dicts hash NaN by object);
* a key pydantic cannot write deeper in a model the SDK dumps than an item's, a content
  part's, the usage's or the response's own keys (which values are models is the SDK's
  types' to say);
* JSON nested more than 200 levels deep (pydantic's and Python's recursion limits);
* frames whose bytes were not UTF-8 (the SDK's decoder raises on the bytes we no longer
  have).

Verified against openai 3.63.0 (VERIFIED_OPENAI_RESPONSES) by
tests/dialects/responses/test_responses_sdk_model.py, which runs the real class beside this
module.

Must not import openai, pydantic, jiter, httpx, httpx2, anthropic, textual or rich.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from streamscope.core.calls import Call, StrategyError, Unmodeled, freeze
from streamscope.core.frames import Frame
from streamscope.dialects.model_keys import escapes, write_model
from streamscope.dialects.versions import VERIFIED

__all__ = ["TOOL_ITEMS", "VERIFIED_OPENAI_RESPONSES", "ResponsesSdkEmulation", "Unmodeled"]

# The openai releases whose ResponseStream this emulation was checked against.
VERIFIED_OPENAI_RESPONSES = (VERIFIED["openai"],)

TOOL_ITEMS = ("function_call", "custom_tool_call")
ARGUMENTS_DELTA = "response.function_call_arguments.delta"
TEXT_DELTA = "response.output_text.delta"
# items whose identity is their call_id alone (ResponseStreamState's _output_identity)
_CALL_IDENTITY = ("function_call", "custom_tool_call", "shell_call", "shell_call_output")
_RESTATING = ("response.created", "response.queued", "response.in_progress")
_LIFECYCLE = (*_RESTATING, "response.completed", "response.failed", "response.incomplete")
# the event types whose fields ResponseStreamState reads
_READ = frozenset(
    (
        *_LIFECYCLE,
        ARGUMENTS_DELTA,
        TEXT_DELTA,
        "response.output_text.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
    )
)
_CONSTRUCT_PARAMS = ("_fields_set", "_BaseModel__cls")
_MAX_DEPTH = 200


# Stand-in carrying the SDK's exception class name (StrategyError prints type(exc).__name__).
class APIError(Exception):
    pass


def _guard(payload: object) -> None:
    """Unmodeled for what construct() binds as a parameter, or nesting too deep to follow."""
    todo: list[tuple[object, int]] = [(payload, 0)]
    while todo:
        value, depth = todo.pop()
        if depth > _MAX_DEPTH:
            raise Unmodeled(f"JSON nested more than {_MAX_DEPTH} levels deep")
        if type(value) is dict:
            for key in _CONSTRUCT_PARAMS:
                if key in value:
                    raise Unmodeled(f"a {key!r} key, which BaseModel.construct binds")
            todo.extend((v, depth + 1) for v in value.values() if type(v) in (dict, list))
        else:
            todo.extend((v, depth + 1) for v in value if type(v) in (dict, list))  # type: ignore[attr-defined]


def _plain_delta(payload: dict[Any, Any], kind: object) -> bool:
    """A delta as the API sends it (an argument or output_text delta): int indexes, a string
    delta, no error, no logprobs.

    Then json.loads reads the data as orjson did (`payload` is orjson's reading of the same
    text: the two differ only on big integers and NaN, which cannot change these fields)
    and no construct parameter is in it (nothing nested in it is constructed)."""
    return (
        type(payload.get("output_index")) is int
        and type(payload.get("delta")) is str
        and (kind == ARGUMENTS_DELTA or type(payload.get("content_index")) is int)
        and not payload.get("logprobs")
        and not payload.get("error")
        and "_fields_set" not in payload
        and "_BaseModel__cls" not in payload
    )


def _index(event: dict[Any, Any], key: str) -> object:
    """An index field as the SDK reads it (raw, since pydantic coerces it only sometimes)."""
    value = event.get(key)
    kind = type(value)
    if kind is bool or (
        (type(value) is float and value.is_integer())
        or (type(value) is str and any(c.isdigit() for c in value))
    ):
        raise Unmodeled(f"a {kind.__name__} {key} (pydantic's int coercion, when it validates)")
    return value


def _grow(held: object, piece: object) -> object:
    """`held += piece` as the SDK does it, on a stand-in where only the type matters: a
    string stays "" (a list is the emulation's own copy, grown in place)."""
    if type(held) is str:
        if type(piece) is str:
            return held
        held += piece  # type: ignore[operator]  # raises the SDK's TypeError
    held += piece  # type: ignore[operator]
    return held


def _stand_in(value: object) -> object:
    if type(value) is str:
        return ""
    if type(value) is list:
        return []
    return value


# --- the models the SDK builds, held as what it reads of them ------------------------------


class _Model:
    """An item the SDK constructed from a JSON object. Its attributes are the object's keys
    (None when missing or null), as `getattr(item, key, None)` reads them on the model."""

    __slots__ = ("fields", "type", "id", "call_id", "frame")

    def __init__(self, fields: dict[Any, Any], frame: int) -> None:
        self.fields = fields
        self.type = fields.get("type")
        self.id = fields.get("id")
        self.call_id = fields.get("call_id")
        self.frame = frame  # the frame whose data it is

    def held(self) -> object:
        """What a call's `arguments` reports: a function call's arguments, a custom one's input."""
        return self.fields.get("arguments" if self.type == "function_call" else "input")

    def call(self, index: object, first: int, fragments: int, last: int) -> Call:
        held = self.held()
        return Call(
            choice=0,
            index=index,
            id=self.call_id,
            type=self.type,
            name=self.fields.get("name"),
            arguments=list(held) if type(held) is list else held,
            fragments=fragments,
            first_frame=first,
            last_frame=last,
            item_id=self.id,
        )

    def copy(self) -> _Model:
        return self  # never changed once built


class _FunctionCall(_Model):
    """A snapshot function_call item: its arguments grow by `+=` with every delta."""

    __slots__ = ("parts", "value", "frozen", "fragments", "last")

    def __init__(self, fields: dict[Any, Any], frame: int) -> None:
        super().__init__(fields, frame)
        arguments = fields.get("arguments")
        self.parts: list[str] | None = [arguments] if type(arguments) is str else None
        self.value = list(arguments) if type(arguments) is list else arguments
        self.frozen = 0  # leading parts shared with copies
        self.fragments = 0
        self.last = frame

    def add(self, piece: object, frame: int) -> None:
        parts = self.parts
        if parts is not None and type(piece) is str:
            parts.append(piece)
        elif parts is not None:
            _grow("", piece)  # raises the SDK's TypeError
        else:
            self.value = _grow(self.value, piece)
        self.fragments += 1
        self.last = frame

    def held(self) -> object:
        parts = self.parts
        if parts is None:
            return self.value
        if len(parts) > 1:
            self.parts = parts = ["".join(parts)]
            self.frozen = 0
        return parts[0]

    def copy(self) -> _FunctionCall:
        new = _FunctionCall.__new__(_FunctionCall)
        new.fields, new.type, new.id, new.call_id = self.fields, self.type, self.id, self.call_id
        new.frame, new.fragments, new.last = self.frame, self.fragments, self.last
        if self.parts is not None:
            self.frozen = freeze(self.parts, self.frozen)
            new.parts, new.frozen = list(self.parts), self.frozen
        else:
            new.parts, new.frozen = None, 0
        new.value = list(self.value) if type(self.value) is list else self.value
        return new


class _Part:
    """A content part of a snapshot message: its type, and a stand-in for its text."""

    __slots__ = ("type", "text")

    def __init__(self, fields: dict[Any, Any]) -> None:
        self.type = fields.get("type")
        self.text = _stand_in(fields.get("text"))

    def copy(self) -> _Part:
        new = _Part.__new__(_Part)
        new.type = self.type
        new.text = list(self.text) if type(self.text) is list else self.text
        return new


def _content_entry(value: object) -> object:
    return _Part(value) if type(value) is dict else value


class _Message(_Model):
    """A snapshot message item: its content list grows with content parts and text."""

    __slots__ = ("content",)

    def __init__(self, fields: dict[Any, Any], frame: int) -> None:
        super().__init__(fields, frame)
        content = fields.get("content")
        self.content = [_content_entry(v) for v in content] if type(content) is list else content

    def copy(self) -> _Message:
        new = _Message.__new__(_Message)
        new.fields, new.type, new.id, new.call_id = self.fields, self.type, self.id, self.call_id
        new.frame = self.frame
        content = self.content
        if type(content) is list:
            content = [v.copy() if type(v) is _Part else v for v in content]
        new.content = content
        return new


def _event_item(value: object, frame: int) -> object:
    """An item as an event holds it: a model of an object, else the value itself."""
    return _Model(value, frame) if type(value) is dict else value


def _snapshot_item(value: object, frame: int) -> object:
    """An item as the snapshot holds it (constructed again from its dict)."""
    if type(value) is not dict:
        return value
    kind = value.get("type")
    if kind == "function_call":
        return _FunctionCall(value, frame)
    if kind == "message":
        return _Message(value, frame)
    return _Model(value, frame)


def _output_identity(item: object) -> tuple[object, object, object]:
    call_id = getattr(item, "call_id", None)
    kind = item.type  # type: ignore[attr-defined]  # the SDK's AttributeError on a non-model
    identity = (kind, None, call_id) if kind in _CALL_IDENTITY else (kind, item.id, call_id)  # type: ignore[attr-defined]
    for value in identity:
        if type(value) is float and value != value:
            raise Unmodeled("NaN in an item's identity (hashed by object in the SDK's dicts)")
    return identity


def _compatible_output_id(previous: object, replacement: object) -> bool:
    previous_id = getattr(previous, "id", None)
    return previous_id == getattr(replacement, "id", None) or (
        previous_id is None and previous.type in TOOL_ITEMS  # type: ignore[attr-defined]
    )


def _model_copy(item: object) -> None:
    """`model_copy(item, deep=True)`: only a non-model raises."""
    if not isinstance(item, _Model):
        item.model_copy  # type: ignore[attr-defined]  # noqa: B018


def _write_item(fields: dict[Any, Any]) -> None:
    """`item.to_dict()` of a function_call or message item (a message's content parts are
    models: ResponseOutputMessage declares `content` first)."""
    write_model(fields, lists=("content",) if fields.get("type") == "message" else ())


def _write_response(response: dict[Any, Any]) -> None:
    """`response.to_dict()`: its output items and its usage are models (Response declares
    `output` before `usage`)."""
    write_model(response, lists=("output",), models=("usage",))


def _response(event: dict[Any, Any]) -> object:
    """The event's `response`: a dict stands for the model constructed from it."""
    return event.get("response")


def _response_field(response: object, key: str) -> object:
    """`getattr(event.response, key, None)`."""
    return response.get(key) if type(response) is dict else None


# --- input tools (lib/_parsing/_responses.py) ------------------------------------------------


def _make_tools(tools: object) -> list[Any]:
    """`_make_tools`, as written: what `responses.stream(tools=...)` does with the tools
    before the request (raising on a Chat Completions function tool: from JSON it cannot be
    the `pydantic_function_tool()` it wants)."""
    out = []
    for tool in tools:  # type: ignore[attr-defined]
        if tool["type"] == "namespace":
            out.append({**tool, "tools": list(tool["tools"])})
        elif tool["type"] != "function" or "function" not in tool:
            out.append(tool)
        else:
            raise Exception(
                "Expected Chat Completions function tool shape to be created using "
                "`openai.pydantic_function_tool()`"
            )
    return out


def _input_tool(tools: list[Any], name: object, namespace: object) -> object:
    """`get_input_tool_by_name`, as written."""
    if namespace is not None:
        for tool in tools:
            if tool["type"] == "namespace" and tool["name"] == namespace:
                for nested in tool["tools"]:
                    if nested["type"] == "function" and nested["name"] == name:
                        return nested
                return None
    if namespace is not None and namespace != name:
        return None
    for tool in tools:
        if tool["type"] == "function" and tool.get("name") == name:
            return tool
    return None


# --- the emulation ---------------------------------------------------------------------------


class ResponsesSdkEmulation:
    """ResponseStream fed the way `client.responses.stream()` feeds it, one SSE event at a
    time; `input_tools` are the request's `tools`, as given to `responses.stream(tools=...)`."""

    __slots__ = (
        "_tools",
        "_unmodeled",
        "_halted",
        "_error",
        "_done",
        "_started",
        "_id",
        "_output",
        "_items",
        "_completed",
        "_positions",
        "_final",
        "_escapes",
    )

    def __init__(self, input_tools: list[Any] | None = None) -> None:
        self._unmodeled: str | None = None
        self._halted = False  # an exception was raised: later frames are never read
        self._error: StrategyError | None = None
        self._tools: list[Any] | None = None
        if input_tools is not None:
            try:
                self._tools = _make_tools(input_tools)
            except Exception as exc:  # raised by responses.stream(), before any frame
                self._error = StrategyError.from_exception(exc, 0)
                self._halted = True
        self._done = False  # a [DONE]: the SDK reads no further
        self._started = False  # a response.created made the snapshot
        self._id: object = None  # the snapshot's id
        self._output: object = None  # the snapshot's output: a list, or what it was instead
        self._items: dict[Any, Any] = {}  # _output_items: output_index -> snapshot item
        self._completed: dict[Any, Any] = {}  # _completed_output: output_index -> item
        self._positions: dict[Any, Any] = {}  # _completed_positions: identity -> output_index
        self._final: list[Any] | None = None  # the final response's output items
        # the gate (model_keys.escapes): the models the SDK dumps are looked at key by key
        # (`write_model`) once a frame read again had an escape that may make a lone surrogate
        self._escapes = False

    # -- public API -------------------------------------------------------------------

    def feed(self, frame: Frame) -> None:
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        if self._halted or self._done:
            return
        payload = frame.payload
        try:
            if (
                type(payload) is dict
                and self._started
                and not frame.bad_utf8
                and not (frame.event and frame.event.startswith("thread."))
            ):
                self._feed_parsed(payload, frame)
            else:
                self._feed(frame)
        except Unmodeled as exc:
            self._unmodeled = str(exc)
            raise
        except RecursionError as exc:
            self._unmodeled = "recursion limit"  # where it overflows depends on the stack
            raise Unmodeled(self._unmodeled) from exc
        except Exception as exc:
            self._error = StrategyError.from_exception(exc, frame.number)
            self._halted = True

    def feed_all(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            self.feed(frame)

    @property
    def error(self) -> StrategyError | None:
        """The exception a frame raised, if any (the stream stops there)."""
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        return self._error

    def calls(self) -> list[Call]:
        """The function and custom tool call items of the snapshot's output after the frames
        fed so far (not the SDK's after an exception: it stopped there)."""
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        output = self._output
        if type(output) is not list:
            return []
        index_of = {id(item): index for index, item in self._items.items()}
        out = []
        for item in output:
            if isinstance(item, _Model) and item.type in TOOL_ITEMS:
                index = index_of.get(id(item))
                if type(item) is _FunctionCall:
                    out.append(item.call(index, item.frame, item.fragments, item.last))
                else:
                    out.append(item.call(index, item.frame, 0, item.frame))
        return out

    def finish(self, last_frame: int) -> list[Call] | StrategyError:
        """What `get_final_response()` gives (as calls) or raises, at `last_frame`."""
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        if self._error is not None:
            return self._error
        if self._final is None:
            return StrategyError(
                "RuntimeError: Didn't receive a `response.completed` event.", last_frame
            )
        return [
            item.call(position, item.frame, 0, item.frame)
            for position, item in enumerate(self._final)
            if isinstance(item, _Model) and item.type in TOOL_ITEMS
        ]

    def copy(self) -> ResponsesSdkEmulation:
        new = ResponsesSdkEmulation.__new__(ResponsesSdkEmulation)
        for name in ResponsesSdkEmulation.__slots__:
            setattr(new, name, getattr(self, name))
        if type(self._output) is list:
            copies = {
                id(item): item.copy() if isinstance(item, _Model) else item for item in self._output
            }
            new._output = [copies[id(item)] for item in self._output]
            new._items = {k: copies.get(id(v), v) for k, v in self._items.items()}
        else:
            new._items = dict(self._items)
        new._completed, new._positions = dict(self._completed), dict(self._positions)
        return new

    # -- Stream.__stream__ ------------------------------------------------------------

    def _feed_parsed(self, payload: dict[Any, Any], frame: Frame) -> None:
        """After response.created, most frames as orjson read them, not parsed again."""
        kind = payload.get("type")
        if kind == ARGUMENTS_DELTA and _plain_delta(payload, kind):
            self._arguments_delta(payload["output_index"], payload["delta"], frame.number)
        elif kind == TEXT_DELTA and _plain_delta(payload, kind):
            self._text_delta(payload)
        elif type(kind) is str and kind not in _READ and not payload.get("error"):
            # an event whose fields the SDK never reads: only what construct() binds counts,
            # and orjson and json.loads read the same keys
            _guard(payload)
        else:
            self._feed(frame)

    def _feed(self, frame: Frame) -> None:
        if frame.bad_utf8:
            raise Unmodeled("bytes that are not UTF-8 (the SDK's decoder raises on them)")
        data = frame.data
        if data.startswith("[DONE]"):
            self._done = True
            return
        self._escapes = escapes(self._escapes, data)
        name = frame.event
        # sse.json() is json.loads (raising JSONDecodeError); frame.payload is orjson's
        # reading, which differs from it (integers past 64 bits become floats, NaN is refused)
        payload = json.loads(data)
        if name and name.startswith("thread."):
            # the Assistants special case: wrapped, so the event has no type
            self._handle({"data": payload, "event": name}, frame.number)
            return
        if type(payload) is dict:
            error = payload.get("error")
            if error:
                message = error.get("message") if type(error) is dict else None
                if not message or type(message) is not str:
                    message = "An error occurred during streaming"
                raise APIError(message)
            _guard(payload)
            self._handle(payload, frame.number)
            return
        if type(payload) is list:
            _guard(payload)  # its objects are constructed, as models of the first variant
        payload.type  # noqa: B018  # the SDK's AttributeError

    # -- ResponseStreamState.handle_event / accumulate_event --------------------------

    def _handle(self, event: dict[Any, Any], frame: int) -> None:
        kind = event.get("type")
        if not self._started:
            self._create(event, kind, frame)
        elif kind == ARGUMENTS_DELTA:
            self._arguments_delta(_index(event, "output_index"), event.get("delta"), frame)
            return
        elif kind == "response.output_item.added":
            self._added(event, frame)
        elif kind == "response.output_item.done":
            self._item_done(event, frame)
        elif kind == "response.content_part.added":
            output = self._output_item(_index(event, "output_index"))
            if output.type == "message":  # type: ignore[attr-defined]
                append = output.content.append  # type: ignore[attr-defined]
                part = event.get("part")
                if type(part) is not dict:
                    part.to_dict  # type: ignore[union-attr]  # noqa: B018
                if self._escapes:
                    write_model(part)  # type: ignore[arg-type]  # event.part.to_dict()
                append(_Part(part))  # type: ignore[arg-type]
        elif kind == TEXT_DELTA:
            self._text_delta(event)
        elif kind == "response.output_text.done":
            self._text_part(event)
        elif kind in _LIFECYCLE:
            self._lifecycle(event, kind, frame)
        if kind in _RESTATING or kind in ("response.failed", "response.incomplete"):
            self._restated(event, kind)

    def _create(self, event: dict[Any, Any], kind: object, frame: int) -> None:
        """`_create_initial_response`: the first event must be a response.created."""
        if kind != "response.created":
            raise RuntimeError(f"Expected to have received `response.created` before `{kind}`")
        response = _response(event)
        if type(response) is not dict:
            response.to_dict  # type: ignore[attr-defined]  # noqa: B018
        if self._escapes:
            _write_response(response)  # type: ignore[arg-type]
        output = response.get("output")  # type: ignore[attr-defined]
        if output is None:
            output = []
        elif type(output) is list:
            output = [_snapshot_item(value, frame) for value in output]
        items = dict(enumerate(output))  # the SDK's TypeError
        self._id = response.get("id")  # type: ignore[attr-defined]
        self._output, self._items, self._started = output, items, True

    def _output_item(self, output_index: object) -> object:
        """`_get_output_item`."""
        try:
            return self._items[output_index]
        except KeyError:
            raise RuntimeError(
                f"Received a content event for output index {output_index} before receiving "
                "its output item"
            ) from None

    def _arguments_delta(self, output_index: object, piece: object, frame: int) -> None:
        output = self._output_item(output_index)
        if output.type == "function_call":  # type: ignore[attr-defined]
            output.add(piece, frame)  # type: ignore[attr-defined]
        else:
            raise AssertionError  # handle_event: assert output.type == "function_call"

    def _added(self, event: dict[Any, Any], frame: int) -> None:
        item = event.get("item")
        if item is None:
            return
        output_index = _index(event, "output_index")
        if output_index in self._items:
            raise RuntimeError(f"Duplicate response output index {output_index}.")
        kind = item.type if type(item) is not dict else item.get("type")
        append = self._output.append  # type: ignore[attr-defined]
        if kind in ("function_call", "message"):
            if self._escapes:
                _write_item(item)  # event.item.to_dict()
            entry = _snapshot_item(item, frame)
        else:
            entry = _Model(item, frame)
        append(entry)
        self._items[output_index] = entry

    def _item_done(self, event: dict[Any, Any], frame: int) -> None:
        output_index = _index(event, "output_index")
        item = _event_item(event.get("item"), frame)
        added = self._items.get(output_index)
        if added is not None and (
            _output_identity(added) != _output_identity(item)
            or not _compatible_output_id(added, item)
        ):
            raise RuntimeError("Completed output item identity changed.")
        identity = _output_identity(item)
        position = self._positions.get(identity)
        if position is not None and position != output_index:
            raise RuntimeError("Response snapshot has conflicting output identities.")
        previous = self._completed.get(output_index)
        if previous is not None:
            del self._positions[_output_identity(previous)]
        self._completed[output_index] = item
        self._positions[identity] = output_index

    def _content(self, event: dict[Any, Any]) -> object:
        """The content part an output_text event points at; asserts it is output_text."""
        output = self._output_item(_index(event, "output_index"))
        assert output.type == "message"  # type: ignore[attr-defined]
        content = output.content[_index(event, "content_index")]  # type: ignore[attr-defined]
        assert content.type == "output_text"
        return content

    def _text_delta(self, event: dict[Any, Any]) -> None:
        output = self._output_item(_index(event, "output_index"))
        if output.type == "message":  # type: ignore[attr-defined]
            content = output.content[_index(event, "content_index")]  # type: ignore[attr-defined]
            assert content.type == "output_text"
            content.text = _grow(content.text, event.get("delta"))
        self._content(event)  # handle_event reads it again, asserting

    def _text_part(self, event: dict[Any, Any]) -> None:
        self._content(event)

    def _lifecycle(self, event: dict[Any, Any], kind: object, frame: int) -> None:
        response = _response(event)
        if _response_field(response, "id") != self._id:
            raise RuntimeError("Lifecycle response identity changed.")
        if kind in _RESTATING:
            self._replace(_response_field(response, "output"), frame)
        elif kind == "response.completed":
            self._complete(response, frame)

    def _replace(self, output: object, frame: int) -> None:
        """A restating lifecycle event replaces completed items of the same identity."""
        replacements: dict[Any, Any] = {}
        for value in output or []:  # type: ignore[attr-defined]
            item = _event_item(value, frame)
            identity = _output_identity(item)
            if identity in replacements:
                raise RuntimeError("Response snapshot has conflicting output identities.")
            replacements[identity] = item
        for identity, replacement in replacements.items():
            index = self._positions.get(identity)
            if index is not None:
                if not _compatible_output_id(self._completed[index], replacement):
                    raise RuntimeError("Response snapshot has conflicting output identities.")
                self._completed[index] = replacement

    def _complete(self, response: object, frame: int) -> None:
        output = _response_field(response, "output")
        final = [_event_item(value, frame) for value in output] if type(output) is list else output
        final_items = {_output_identity(item): item for item in (final or [])}  # type: ignore[attr-defined]
        for completed in self._completed.values():
            match = final_items.get(_output_identity(completed))
            if match is not None and not _compatible_output_id(completed, match):
                raise RuntimeError("Completed response output identity changed.")
        for index, item in self._items.items():
            match = final_items.get(_output_identity(item))
            if index not in self._completed and (
                match is None or not _compatible_output_id(item, match)
            ):
                raise RuntimeError("Cannot complete response with unfinished output items.")
        if output is None:
            if type(response) is not dict:
                response.model_copy  # type: ignore[attr-defined]  # noqa: B018
            final = [self._completed[index] for index in sorted(self._completed)]
        self._final = self._parse(final)
        if self._escapes:
            # parse_response ends in response.to_dict(): its output is the final items
            _write_response({**response, "output": [item.fields for item in self._final]})  # type: ignore[dict-item]

    def _parse(self, output: object) -> list[Any]:
        """`parse_response`: what it reads of each item, raising where it raises."""
        escaped = self._escapes
        for item in output or []:  # type: ignore[attr-defined]
            kind = item.type
            if kind == "message":
                for part in item.fields.get("content") or []:
                    if type(part) is not dict:
                        part.type  # noqa: B018  # the SDK's AttributeError
                    elif escaped and part.get("type") == "output_text":
                        write_model(part)  # item.to_dict()
                if escaped:
                    _write_item(item.fields)  # output.to_dict()
            elif kind == "function_call":
                if escaped:
                    _write_item(item.fields)  # output.to_dict(), before the arguments
                if self._tools is not None:
                    self._parse_arguments(item.fields)
        return list(output or [])  # type: ignore[call-overload, no-any-return]

    def _parse_arguments(self, fields: dict[Any, Any]) -> None:
        """`parse_function_tool_arguments`: a strict tool's arguments go through json.loads."""
        tool = _input_tool(self._tools, fields.get("name"), fields.get("namespace"))  # type: ignore[arg-type]
        if tool and tool.get("strict"):  # type: ignore[attr-defined]
            json.loads(fields.get("arguments"))  # type: ignore[arg-type]

    def _restated(self, event: dict[Any, Any], kind: object) -> None:
        """handle_event's lifecycle branch: a response without output is given one."""
        response = _response(event)
        if _response_field(response, "output") is not None:
            return
        if kind in ("response.failed", "response.incomplete"):
            completed, items = self._completed, self._items
            for index in sorted(items.keys() | completed.keys()):
                _model_copy(completed[index] if index in completed else items[index])
        if type(response) is not dict:
            setattr(response, "output", [])  # noqa: B010  # the SDK's AttributeError
