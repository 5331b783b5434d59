"""A pure-Python, linear-time emulation of the `anthropic` SDK's MessageStream.

The `anthropic-sdk` strategy reports what `client.messages.stream(...)` builds from a stream:
the SDK's `Stream` (skip `ping` and unnamed events, raise `APIStatusError` on `event: error`,
naming the exchange's path and `request-id` where a recording holds them: an `SdkExchange`, as
the request's `response_format`), skip empty data, `sse.json()`, `construct_type` into a RawMessageStreamEvent), then
`MessageStream` (events before the first `message_start` pass through untouched, then
`accumulate_event` and `build_events` on the snapshot) and `get_final_message()`.

A request the SDK's beta client sent (`client.beta.messages.stream(...)`, which posts to
`/v1/messages?beta=true`: the SdkExchange's `beta`) is read as its `BetaMessageStream` reads it,
which differs in what it accumulates in four ways, modelled here:

* `mcp_tool_use` is a type of its own (BetaMCPToolUseBlock) and in its TRACKS_TOOL_INPUT:
  its `input_json_delta`s build its input as a `tool_use`'s do;
* a `fallback` block's start sets the snapshot's model from its `to.model`: a `to` that is
  not an object raises AttributeError;
* a `compaction_delta` reads its block's `type` (a content entry that is no object
  raises), and sets a `compaction` block's content;
* with `fine-grained-tool-streaming-2025-05-14` in the request's `anthropic-beta` header,
  jiter parses tool input in `partial_mode="trailing-strings"` (an unfinished string is
  kept): not modelled, the real class answers (Unmodeled) once a tool input is parsed.

The message_delta fields it copies besides (`context_management`, `input_transformations`,
`usage.iterations`, `usage.fallback_credit`) change no call and raise nothing the plain
stream does not. The plain client sends `anthropic-beta` headers too (`extra_headers`, or a
gateway's), but its MessageStream never reads them: only the `?beta=true` query says beta.

What it models, as anthropic 2.17.0 does it:

* A second `message_start` is ignored: the snapshot stays, later blocks append to the first
  message's content, and deltas index into it.
* `content_block_start` appends its block whatever its `index`; deltas and stops look the
  block up as `content[index]`, Python list indexing (negative indexes, bools, IndexError).
* Input buffers are keyed by the event's `index` value, not by block: `-1` and the last
  position are two buffers for one block, and one buffer may feed a later block.
* `input_json_delta` reaches only `tool_use` / `server_tool_use` blocks (TRACKS_TOOL_INPUT);
  `mcp_tool_use` is not a MessageStream type at all (BetaMessageStream's: above): it is built
  as a text block whose type is "mcp_tool_use" and keeps its start `input`. Each delta appends to the buffer and, when it
  is not empty, replaces the block's `input` with jiter's partial parse of the whole buffer,
  or raises its ValueError (read late, below).
* text / thinking / citations deltas: only the exceptions their `+=` and `.append` raise on
  ill-typed values (the same Python operations, on stand-ins of the same types).
* Attribute and index errors on malformed events and messages, with the SDK's messages.
* pydantic cannot write a key holding a lone surrogate (streamscope.dialects.model_keys):
  UnicodeEncodeError where the SDK dumps a model holding one, the first message_start's
  message and each content_block_start's block. Once a frame read again has an escape that
  may make one (`_escapes`), those models are looked at key by key. Such a key also fails
  the event's validation, so a whole float index is no longer coerced (`_index`).

A tool block (type tool_use, server_tool_use or mcp_tool_use) becomes a Call: `index` its
position in the content, `arguments` its `input` as compact JSON (`arguments_text`), None
when the block holds no input (`input` missing or null, which the SDK cannot tell apart),
`fragments` the input_json_delta events applied to it.

How it stays linear and exact:

* The frames the API sends for almost everything (a block's delta of one string field, its
  start and stop, `_read_as_sent`) are taken as orjson read them: json.loads would read the
  same, and no construct parameter can be in them. Any other frame is read again with
  json.loads, as `sse.json()` does, and walked for construct parameters.
* The SDK parses a whole tool input buffer at every delta (quadratic). Here a delta is only
  appended to its buffer with its frame number (`_Buffer.append`), and the buffers are read
  when something needs them: `calls`, `error`, `finish`, a buffer about to feed another
  block, and before any outcome a later frame brings (an exception or Unmodeled), since the
  earliest failing delta wins and after it the SDK reads nothing more. Copies share the
  unread deltas (append-only).
* Reading a buffer: `partial_json.quick_value` reads the whole text with json.loads when it
  can vouch that no prefix of it raises in jiter and that jiter reads it alike (an object or
  array, whole or cut inside its last member, holding nothing the two read differently);
  otherwise `partial_json.PartialJson`, which reads each byte once, reads the unread deltas
  one by one and finds the first that fails (and keeps reading that buffer from then on).
  So a stream looked at only at its end (as the engine reads one) reads each buffer once,
  in C; one looked at after every frame reads a growing buffer again each time, in C, as
  rendering its `input` for `calls` always did.

Shapes that raise `Unmodeled` (the real class answers, see
streamscope.dialects.anthropic.oracle):

* a content_block_delta / content_block_stop `index` that is a whole float of 2**53 or more,
  a string with a digit in it, or a whole float with a citations_delta: whether the SDK sees
  it as an int depends on pydantic's lax int coercion of the whole event;
* a message_start whose `message.content` is neither a list nor null;
* a JSON array with objects in it as an event after message_start (the SDK's TypeError
  prints them as constructed models);
* a `_fields_set` or `_BaseModel__cls` key, which `BaseModel.construct` binds as a parameter;
* a key pydantic cannot write deeper in a message or block than its own keys, its content
  blocks' and its usage's (which values are models is the SDK's types' to say);
* a number longer than 4000 bytes in a tool input (jiter's big-number limit), met when the
  buffer is read (so `error`, `calls` and `finish` may raise it too);
* frames whose bytes were not UTF-8 (the SDK's decoder raises on the bytes we no longer
  have); JSON nested deep enough to exhaust Python's recursion limit.

Verified against anthropic 2.17.0 (VERIFIED_ANTHROPIC) by
tests/dialects/anthropic/test_anthropic_sdk_model.py, which runs the real class beside this module.

Must not import anthropic, pydantic, jiter, httpx, httpx2, openai, textual or rich.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeGuard

from streamscope.core.calls import Call, StrategyError, Unmodeled
from streamscope.core.frames import Frame
from streamscope.dialects.anthropic.partial_json import (
    JSON_WS,
    MAX_NUMBER,
    PartialJson,
    TooLong,
    position,
    quick_value,
)
from streamscope.dialects.anthropic.wire import FINE_GRAINED, PLAIN, BetaStream, SdkExchange
from streamscope.dialects.model_keys import escapes, unwritable, write_model
from streamscope.dialects.versions import VERIFIED

__all__ = [
    "FINE_GRAINED",
    "PLAIN",
    "VERIFIED_ANTHROPIC",
    "AnthropicSdkEmulation",
    "BetaStream",
    "SdkExchange",
    "Unmodeled",
    "arguments_text",
    "is_tool_block",
]

# The anthropic releases whose MessageStream this emulation was checked against.
VERIFIED_ANTHROPIC = (VERIFIED["anthropic"],)

TOOL_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")
# MessageStream's TRACKS_TOOL_INPUT classes, by the block type that constructs them
_TRACKS_INPUT = ("tool_use", "server_tool_use")
# ... and BetaMessageStream's
_BETA_TRACKS_INPUT = ("tool_use", "server_tool_use", "mcp_tool_use")
# the string field each delta type needs for the event to validate (pydantic, lax mode)
_DELTA_FIELD = {
    "text_delta": "text",
    "input_json_delta": "partial_json",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
}
_CONSTRUCT_PARAMS = ("_fields_set", "_BaseModel__cls")
_EXACT_FLOAT = 2.0**53
_NOT_SET = object()


def is_tool_block(block_type: object) -> bool:
    return block_type in TOOL_TYPES


# json.dumps(value, ensure_ascii=False, separators=(",", ":")) without building an encoder
# for every call
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def arguments_text(value: object) -> str | None:
    """A tool block's `input` as a Call's arguments: compact JSON, None for no input."""
    if value is None:
        return None
    return _COMPACT.encode(value)


# Stand-in carrying the SDK's exception class name (StrategyError prints type(exc).__name__).
class APIStatusError(Exception):
    pass


def status_error_message(body: object, sent: SdkExchange = PLAIN) -> str:
    """The message of the APIStatusError an `event: error` raises: `make_status_error`'s for
    the stream's 200 response, `body` the event's JSON, or its data where that is no JSON.

    It names the path the request was posted to and the response's `request-id` header
    (`sent`, where the recording holds the request and response). A stream alone (a chunk
    log, an SSE body) holds neither: it is read as the SDK's own client would have sent it,
    to `/v1/messages` (its beta client's `?beta=true` is no part of the path), and with no
    such header, so only the body's `request_id` is named."""
    text = _first_string(_property(body, "error", "message"), body)
    details = _property(body, "error", "details") if text else None
    if text is None and body == "":
        message = "200 status code (no body)"
    else:
        message = text or _COMPACT.encode(body)
    values = {
        "error_code": _first_string(_property(body, "error", "details", "error_code")),
        "request_id": _first_string(sent.request_id, _property(body, "request_id")),
        "path": sent.path,
        "type": _first_string(_property(body, "error", "type")),
    }
    message += " (" + ", ".join(f"{label}: {value}" for label, value in values.items() if value)
    message += ")"
    if details is not None and (not isinstance(details, dict) or details.keys() - {"error_code"}):
        message += "\n\n" + json.dumps(details, indent=2, ensure_ascii=False)
    return message


def _property(value: object, *path: str) -> object:
    """`extract_property`: `value` followed through nested objects, None where one is missing."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _first_string(*values: object) -> str | None:
    return next((value for value in values if isinstance(value, str) and value), None)


class _Failed(Exception):
    """A delta read late failed: the stream stopped at its frame."""

    def __init__(self, frame: int, exc: Exception) -> None:
        self.frame, self.exc = frame, exc


def _name(value: object) -> str:
    """The type name an AttributeError on the constructed value prints."""
    return type(value).__name__


def _guard(payload: dict[Any, Any]) -> None:
    todo: list[object] = [payload]
    while todo:
        value = todo.pop()
        if type(value) is dict:
            for key in _CONSTRUCT_PARAMS:
                if key in value:
                    raise Unmodeled(f"a {key!r} key, which BaseModel.construct binds")
            todo.extend(v for v in value.values() if type(v) in (dict, list))
        else:
            todo.extend(v for v in value if type(v) in (dict, list))  # type: ignore[attr-defined]


def _read_as_sent(payload: object) -> TypeGuard[dict[Any, Any]]:
    """Whether an event is one of the shapes the API sends for almost every frame: a block's
    delta of one string field, its stop, its start with string fields and an empty input,
    with an int index and no other key.

    Then json.loads reads the data as orjson did (`payload` is orjson's reading of the same
    text, and no big integer or NaN, where the two differ, fits these shapes) and no
    construct parameter (see _guard) is in it: the payload stands as read."""
    if type(payload) is not dict or type(payload.get("index")) is not int:
        return False
    kind = payload.get("type")
    if kind == "content_block_delta":
        delta = payload.get("delta")
        if len(payload) != 3 or type(delta) is not dict or len(delta) != 2:
            return False
        kind = delta.get("type")
        if kind == "input_json_delta":  # the most frequent by far
            return type(delta.get("partial_json")) is str
        field = _DELTA_FIELD.get(kind) if type(kind) is str else None
        return field is not None and type(delta.get(field)) is str
    if kind == "content_block_stop":
        return len(payload) == 2
    if kind == "content_block_start":
        block = payload.get("content_block")
        return len(payload) == 3 and type(block) is dict and all(map(_plain_field, block.items()))
    return False


def _plain_field(item: tuple[str, object]) -> bool:
    key, value = item
    if type(value) is str or value is None:
        # (a key that is not ASCII may be one pydantic cannot write: read again)
        return key not in _CONSTRUCT_PARAMS and key.isascii()
    return key == "input" and type(value) is dict and not value


def _stand_in(value: object) -> object:
    """A text / thinking field's value, reduced to what `+=` on it depends on: its type."""
    if type(value) is str:
        return ""
    if type(value) is list:
        return []
    return value


def _grow(field: object, piece: object) -> object:
    """`field += piece` as the SDK does it, on a stand-in (same exceptions, same result type)."""
    if type(field) is str:
        if type(piece) is str:
            return field
        field += piece  # type: ignore[operator]  # raises the SDK's TypeError
    elif type(field) is list:
        probe: list[Any] = []
        probe += piece  # type: ignore[arg-type]
    else:
        field += piece  # type: ignore[operator]
    return field


# --- the snapshot's content ----------------------------------------------------------------


class _Raw:
    """A content entry that is not a model (a message_start content item that is no object)."""

    __slots__ = ("kind",)

    def __init__(self, value: object) -> None:
        self.kind = _name(value)

    @property
    def type(self) -> object:
        raise AttributeError(f"'{self.kind}' object has no attribute 'type'")

    def copy(self) -> _Raw:
        return self


class _Block:
    """A content block as the snapshot holds it, with what Call needs."""

    __slots__ = (
        "type",
        "tracks_input",
        "id",
        "name",
        "input",
        "text",
        "thinking",
        "citations",
        "first",
        "fragments",
        "last",
        "source",
        "rendered",
    )

    def __init__(
        self, d: dict[Any, Any], frame: int, tracks: tuple[str, ...] = _TRACKS_INPUT
    ) -> None:
        # construct() turns a null field into its default (None): same as a missing key
        self.type = d.get("type")
        self.id = d.get("id")
        self.name = d.get("name")
        self.input = d.get("input")
        self.text = _stand_in(d.get("text"))
        self.thinking = _stand_in(d.get("thinking"))
        citations = d.get("citations")
        self.citations = [None] * len(citations) if type(citations) is list else citations
        self.tracks_input = self.type in tracks
        self.first = self.last = frame
        self.fragments = 0
        self.source: _Buffer | None = None  # its input is this buffer's current parse
        self.rendered: object = _NOT_SET  # arguments_text(self.input), once computed

    def arguments(self) -> str | None:
        if self.source is not None:
            return self.source.arguments()
        if self.rendered is _NOT_SET:
            self.rendered = arguments_text(self.input)
        return self.rendered  # type: ignore[return-value]

    def settle(self) -> None:
        """Its buffer is about to grow for another block: keep the value it has now."""
        assert self.source is not None
        self.rendered = self.source.arguments()
        self.source = None

    def call(self, position: int) -> Call:
        return Call(
            choice=0,
            index=position,
            id=self.id,
            type=self.type,
            name=self.name,
            arguments=self.arguments(),
            fragments=self.fragments,
            first_frame=self.first,
            last_frame=self.last,
        )

    def copy(self) -> _Block:
        new = _Block.__new__(_Block)
        for name in _Block.__slots__:
            setattr(new, name, getattr(self, name))
        if type(self.citations) is list:
            new.citations = list(self.citations)
        return new


class _Unread:
    """Deltas appended to a buffer and not read yet, with their frames. Append-only, so a
    buffer and its copies share it, each owning a leading part (`_Buffer.count`); only the
    buffer that made it appends to it (copies fork first), so a copy read in another thread
    (the TUI's snapshots) sees its part unchanged."""

    __slots__ = ("pieces", "frames")

    def __init__(self, pieces: list[str] | None = None, frames: list[int] | None = None) -> None:
        self.pieces = pieces if pieces is not None else []
        self.frames = frames if frames is not None else []

    def fork(self, count: int) -> _Unread:
        return _Unread(self.pieces[:count], self.frames[:count])


class _Buffer:
    """One of MessageStream's `json_bufs` entries: the text, and jiter's reading of it.

    The SDK parses the whole buffer at every non-empty delta and raises at the first one
    that is not acceptable partial JSON. Here a delta is only appended (`append`); `read`
    reads the deltas appended since the last read, when something needs the value or the
    outcome, and finds the first one that fails: at C speed when `quick_value` vouches for
    the whole text, else byte by byte (PartialJson, kept from then on)."""

    __slots__ = (
        "text",
        "value",
        "reader",
        "unread",
        "count",
        "borrowed",
        "failure",
        "target",
        "cached",
    )

    def __init__(self) -> None:
        self.text = ""  # the deltas read so far (none of them failed)
        self.value: object = None  # jiter's value of `text`, while there is no reader
        self.reader: PartialJson | None = None  # the byte reader, once needed: has read `text`
        self.unread = _Unread()
        self.count = 0  # leading entries of `unread` that are this buffer's
        self.borrowed = False  # `unread` is the buffer's this one was copied from
        self.failure: tuple[int, Exception] | None = None  # (frame, what the SDK raised)
        self.target: _Block | None = None  # the block whose input it last set
        self.cached: tuple[int, str | None] | None = None

    def append(self, piece: str, frame: int) -> None:
        unread = self.unread
        if self.borrowed:
            unread = self.unread = unread.fork(self.count)
            self.borrowed = False
        unread.pieces.append(piece)
        unread.frames.append(frame)
        self.count += 1

    def read(self) -> tuple[int, Exception] | None:
        """Read the unread deltas: (frame, exception) for the first one the SDK raises on."""
        if self.failure is not None or not self.count:
            return self.failure
        pieces = self.unread.pieces[: self.count]
        text = self.text + "".join(pieces)
        # a first delta of whitespace only raises: the byte reader says how
        if self.reader is None and (self.text or pieces[0].strip(JSON_WS)):
            value = quick_value(text)
            if value is not None:  # no prefix of `text` raises
                self.text, self.value = text, value
                self._all_read()
                return None
        self.failure = self._read_bytes(text, pieces)
        if self.failure is None:
            self.text = text
            self._all_read()
        return self.failure

    def _all_read(self) -> None:
        self.unread, self.count, self.borrowed = _Unread(), 0, False

    def _read_bytes(self, text: str, pieces: list[str]) -> tuple[int, Exception] | None:
        """Read the unread deltas one by one with the byte reader, as jiter would each."""
        reader = self.reader
        if reader is None:  # `text` was read, and no delta in it failed
            reader = self.reader = PartialJson()
            reader.feed(self.text.encode("utf-8"))
        end = len(self.text)
        for piece, frame in zip(pieces, self.unread.frames, strict=False):
            end += len(piece)
            try:
                reader.feed(piece.encode("utf-8"))
            except TooLong as exc:
                return frame, exc
            failure = reader.error()
            if failure is not None:
                return frame, _parse_error(text[:end], failure)
        return None

    def arguments(self) -> str | None:
        """The input it gives, as text (every delta read; None once one failed)."""
        if self.failure is not None:
            return None
        if self.cached is None or self.cached[0] != len(self.text):
            value = self.value if self.reader is None else self.reader.value()
            self.cached = (len(self.text), arguments_text(value))
        return self.cached[1]

    def copy(self) -> _Buffer:
        new = _Buffer.__new__(_Buffer)
        new.text, new.value, new.failure = self.text, self.value, self.failure
        new.reader = None if self.reader is None else self.reader.copy()
        new.unread, new.count, new.borrowed = self.unread, self.count, True
        new.target, new.cached = self.target, self.cached
        return new


def _parse_error(text: str, failure: tuple[str, int]) -> ValueError:
    """What MessageStream raises when jiter cannot read a tool input buffer."""
    what, at = failure
    return ValueError(
        "Unable to parse tool parameter JSON from model. Please retry your request "
        f"or adjust your prompt. Error: {what} at {position(text.encode('utf-8'), at)}. "
        f"JSON: {text}"
    )


def _entry(value: object, frame: int, tracks: tuple[str, ...]) -> _Block | _Raw:
    return _Block(value, frame, tracks) if type(value) is dict else _Raw(value)


# --- the emulation ---------------------------------------------------------------------------


class AnthropicSdkEmulation:
    """MessageStream fed the way `client.messages.stream()` feeds it, one SSE event at a time;
    for a `beta` request, BetaMessageStream as `client.beta.messages.stream()` feeds it."""

    __slots__ = (
        "_unmodeled",
        "_halted",
        "_error",
        "_started",
        "_content",
        "_usage",
        "_bufs",
        "_sent",
        "_beta",
        "_tracks",
        "_escapes",
    )

    def __init__(self, sent: SdkExchange = PLAIN) -> None:
        self._sent = sent
        self._beta = beta = sent.beta
        self._tracks = _TRACKS_INPUT if beta is None else _BETA_TRACKS_INPUT
        self._unmodeled: str | None = None
        self._halted = False  # an exception was raised: later frames are never read
        self._error: StrategyError | None = None
        self._started = False  # a message_start made the snapshot
        self._content: list[_Block | _Raw] | None = None
        self._usage: str | None = None  # the snapshot's usage: None for a model, else its type
        self._bufs: dict[object, _Buffer] = {}
        # the gate (model_keys.escapes): the models the SDK dumps are looked at key by key
        # (`write_model`) once a frame read again had an escape that may make a lone surrogate
        self._escapes = False

    # -- public API -------------------------------------------------------------------

    def feed(self, frame: Frame) -> None:
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        if self._halted:
            return
        try:
            self._feed(frame)
        except _Failed as failed:
            self._stop(failed.frame, failed.exc)
        except Exception as exc:
            self._stop(frame.number, exc)

    def feed_all(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            self.feed(frame)

    @property
    def error(self) -> StrategyError | None:
        """The exception a frame raised, if any (the stream stops there).

        Reads the unread tool input deltas first, so it raises Unmodeled when one of them
        does (as `calls` and `finish` do)."""
        self._catch_up()
        return self._error

    def calls(self) -> list[Call]:
        """The tool blocks of `current_message_snapshot` after the frames fed so far (not
        the SDK's after an `error`: it stopped there)."""
        self._catch_up()
        return [
            entry.call(position)
            for position, entry in enumerate(self._content or ())
            if type(entry) is _Block and is_tool_block(entry.type)
        ]

    def finish(self, last_frame: int) -> list[Call] | StrategyError:
        """What `get_final_message()` gives (as calls) or raises, at `last_frame`."""
        self._catch_up()
        if self._error is not None:
            return self._error
        if not self._started:
            return StrategyError("AssertionError", last_frame)  # no message_start: no snapshot
        return self.calls()

    # -- outcomes: the first failing delta wins, wherever it is read ------------------

    def _read_all(self) -> tuple[int, Exception] | None:
        """Read every buffer's unread deltas: the first that fails, as (frame, exception)."""
        first = None
        for buf in self._bufs.values():
            failure = buf.read()
            if failure is not None and (first is None or failure[0] < first[0]):
                first = failure
        return first

    def _catch_up(self) -> None:
        """Read what is unread, as the SDK read each delta when it came."""
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        if not self._halted:
            failure = self._read_all()
            if failure is not None:
                self._stop(*failure)

    def _read_or_fail(self) -> None:
        """Within a frame: read what is unread; raise _Failed if a delta failed before it."""
        failure = self._read_all()
        if failure is not None:
            raise _Failed(*failure)

    def _stop(self, frame: int, exc: Exception) -> None:
        """`exc` stopped the stream at `frame`, unless an unread delta failed before it."""
        failure = self._read_all()
        if failure is not None and failure[0] <= frame:
            frame, exc = failure
        if isinstance(exc, TooLong):
            self._unmodeled = f"a number longer than {MAX_NUMBER} bytes in a tool input"
            raise Unmodeled(self._unmodeled) from exc
        if isinstance(exc, RecursionError):
            # where it overflows depends on the caller's stack depth
            self._unmodeled = "recursion limit"
            raise Unmodeled(self._unmodeled) from exc
        if isinstance(exc, Unmodeled):
            self._unmodeled = str(exc)
            raise exc
        self._error = StrategyError.from_exception(exc, frame)
        self._halted = True

    def copy(self) -> AnthropicSdkEmulation:
        new = AnthropicSdkEmulation.__new__(AnthropicSdkEmulation)
        new._unmodeled, new._halted, new._error = self._unmodeled, self._halted, self._error
        new._started, new._usage = self._started, self._usage
        new._sent, new._beta = self._sent, self._beta
        new._tracks, new._escapes = self._tracks, self._escapes
        blocks: dict[int, _Block] = {}
        if self._content is None:
            new._content = None
        else:
            new._content = [entry.copy() for entry in self._content]
            for old, entry in zip(self._content, new._content, strict=True):
                blocks[id(old)] = entry  # type: ignore[assignment]
        bufs = {id(buf): buf.copy() for buf in self._bufs.values()}
        new._bufs = {key: bufs[id(buf)] for key, buf in self._bufs.items()}
        for buf in bufs.values():
            if buf.target is not None:
                buf.target = blocks[id(buf.target)]
        for entry in new._content or ():
            if type(entry) is _Block and entry.source is not None:
                entry.source = bufs[id(entry.source)]
        return new

    # -- Stream.__stream__ ------------------------------------------------------------

    def _feed(self, frame: Frame) -> None:
        if frame.bad_utf8:
            raise Unmodeled("bytes that are not UTF-8 (the SDK's decoder raises on them)")
        event = frame.event or None
        if event is None or event == "ping":
            return
        data = frame.data
        if event == "error":
            try:
                body: object = json.loads(data)
            except Exception:
                body = data
            raise APIStatusError(status_error_message(body, self._sent))
        if not data:
            return
        payload = frame.payload
        if self._started and _read_as_sent(payload):  # most frames: no need to parse again
            if payload["type"] == "content_block_delta":
                self._block_delta(payload, frame.number)
            else:
                self._accumulate(payload, frame.number)
            return
        self._escapes = escapes(self._escapes, data)
        # sse.json() is json.loads (raising JSONDecodeError); frame.payload is orjson's reading,
        # which differs from it (integers past 64 bits become floats, NaN is refused)
        payload = json.loads(data)
        if type(payload) is not dict:
            raise self._not_a_model(payload)
        _guard(payload)
        self._accumulate(payload, frame.number)

    def _not_a_model(self, payload: object) -> Exception:
        """An event the SDK cannot construct as a model: what MessageStream raises on it."""
        if not self._started:
            return AttributeError(f"'{_name(payload)}' object has no attribute 'type'")
        if type(payload) is list and any(type(v) is dict for v in payload):
            return Unmodeled("an array of objects as an event after message_start")
        return TypeError(
            f"Unexpected event runtime type, after deserialising twice - {payload} - "
            f"{type(payload)}"
        )

    # -- MessageStream.__stream__: accumulate_event, build_events ----------------------

    def _accumulate(self, event: dict[Any, Any], frame: int) -> None:
        kind = event.get("type")
        if not self._started:
            if kind == "message_start":
                self._message_start(event, frame)
            return  # anything else before message_start passes through untouched
        if kind == "content_block_start":
            self._block_start(event, frame)
        elif kind == "content_block_delta":
            self._block_delta(event, frame)
        elif kind == "content_block_stop":
            self._content[_index(event)].type  # type: ignore[call-overload, index]  # noqa: B018
        elif kind == "message_delta":
            self._message_delta(event)
        # a second message_start, message_stop, unknown types: the snapshot is unchanged

    def _message_start(self, event: dict[Any, Any], frame: int) -> None:
        message = event.get("message")
        if type(message) is not dict:
            raise AttributeError(f"'{_name(message)}' object has no attribute 'to_dict'")
        content = message.get("content")
        if content is not None and type(content) is not list:
            raise Unmodeled("a message_start whose content is not a list")
        if self._escapes:
            # event.message.to_dict(): its content blocks and its usage are models (Message
            # declares `content` before `usage`)
            write_model(message, lists=("content",), models=("usage",))
        if content is not None:
            self._content = [_entry(value, frame, self._tracks) for value in content]
        usage = message.get("usage")
        self._usage = None if type(usage) is dict else _name(usage)
        self._started = True

    def _block_start(self, event: dict[Any, Any], frame: int) -> None:
        append = self._content.append  # type: ignore[union-attr]  # None: the SDK's AttributeError
        block = event.get("content_block")
        if type(block) is not dict:
            raise AttributeError(f"'{_name(block)}' object has no attribute 'to_dict'")
        if self._escapes:
            write_model(block)  # event.content_block.to_dict()
        append(_Block(block, frame, self._tracks))
        if self._beta is not None and block.get("type") == "fallback":
            # BetaMessageStream: `current_snapshot.model = event.content_block.to.model`
            to = block.get("to")
            if type(to) is not dict:
                raise AttributeError(f"'{_name(to)}' object has no attribute 'model'")

    def _block_delta(self, event: dict[Any, Any], frame: int) -> None:
        delta = event.get("delta")
        index = event.get("index")
        if type(index) is not int:
            index = _index(event, delta, self._beta is not None)
        entry = self._content[index]  # type: ignore[call-overload, index]  # the SDK's TypeError / IndexError
        if type(delta) is not dict:
            raise AttributeError(f"'{_name(delta)}' object has no attribute 'type'")
        kind = delta.get("type")
        if kind == "input_json_delta":
            if type(entry) is _Block and entry.tracks_input:
                self._input_json(index, entry, delta.get("partial_json"), frame)
        elif kind == "text_delta":
            if entry.type == "text":
                entry.text = _grow(entry.text, delta.get("text"))
        elif kind == "thinking_delta":
            if entry.type == "thinking":
                entry.thinking = _grow(entry.thinking, delta.get("thinking"))
        elif kind == "citations_delta":
            if entry.type == "text":
                citations = entry.citations
                if not citations:
                    entry.citations = [None]
                else:
                    citations.append(None)  # the SDK's AttributeError when not a list
        elif kind == "signature_delta" or (kind == "compaction_delta" and self._beta is not None):
            entry.type  # noqa: B018  # only the type check can raise

    def _input_json(self, index: object, block: _Block, piece: object, frame: int) -> None:
        if type(piece) is not str:
            raise TypeError("encoding without a string argument")  # bytes(piece, "utf-8")
        if not piece.isascii():
            piece.encode("utf-8")  # the SDK's UnicodeEncodeError on a lone surrogate
        buf = self._bufs.get(index)
        if buf is None:
            buf = self._bufs[index] = _Buffer()
        if piece or buf.text or buf.count:  # the SDK parses the buffer when it is not empty
            if self._beta is not None and self._beta.fine_grained:
                raise Unmodeled(
                    f"tool input parsed in jiter's trailing-strings mode ({FINE_GRAINED})"
                )
            target = buf.target
            if target is not block:
                if target is not None and target.source is buf:
                    # the buffer is about to grow for another block: keep that one's value
                    self._read_or_fail()
                    target.settle()
                buf.target = block
            block.source = buf
            if piece:
                buf.append(piece, frame)
        block.fragments += 1
        block.last = frame

    def _message_delta(self, event: dict[Any, Any]) -> None:
        delta = event.get("delta")
        if type(delta) is not dict:
            raise AttributeError(f"'{_name(delta)}' object has no attribute 'stop_reason'")
        usage = event.get("usage")
        if type(usage) is not dict:
            raise AttributeError(f"'{_name(usage)}' object has no attribute 'output_tokens'")
        if self._usage is not None:
            raise AttributeError(f"'{self._usage}' object has no attribute 'output_tokens'")


def _index(event: dict[Any, Any], delta: object = _NOT_SET, beta: bool = False) -> object:
    """The event's `index` as the SDK sees it: lax-validated to an int when the whole event
    validates (a content_block_stop does; a content_block_delta when its delta does; neither
    when its own keys or its delta's hold one pydantic cannot read, a lone surrogate).
    Other values are kept as sent, and `content[index]` raises on them as it does in the SDK."""
    raw = event.get("index")
    if type(raw) is float and raw.is_integer():
        if abs(raw) >= _EXACT_FLOAT:
            raise Unmodeled("a large whole float index (pydantic's int coercion)")
        validates = delta is _NOT_SET or _delta_validates(delta, beta)
        if validates and any(map(unwritable, event)):
            validates = False
        if validates and type(delta) is dict and any(map(unwritable, delta)):
            validates = False
        return int(raw) if validates else raw
    if type(raw) is str and any(c.isdigit() for c in raw):
        raise Unmodeled("a numeric string index (pydantic's int coercion)")
    return raw


def _delta_validates(delta: object, beta: bool = False) -> bool:
    """Whether a content_block_delta with a valid index validates (so its index is coerced)."""
    if type(delta) is not dict:
        return False
    kind = delta.get("type")
    if kind == "citations_delta" or (beta and kind == "compaction_delta"):
        raise Unmodeled(f"a whole float index with a {kind} (pydantic validation)")
    field = _DELTA_FIELD.get(kind) if type(kind) is str else None
    return field is not None and type(delta.get(field)) is str
