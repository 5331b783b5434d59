"""streamscope's own reading of an Anthropic Messages stream (`robust`), and the anomaly
rules beside it.

A body holds one message or several (programmatic tool calling sends a message_start /
message_stop pair per step). Within a message, `content_block_start` opens block `index`
(a text, thinking or tool block; tool blocks are `tool_use`, `server_tool_use` and
`mcp_tool_use`), deltas name the block they extend, `content_block_stop` closes it. A
call is a tool block: its id, name and type come once, in the start; its arguments are
its `input_json_delta.partial_json` fragments concatenated as sent. The start's `input`
is not glued to them: it stands alone when every fragment is empty (a no-argument tool
sends `{}` and one `""`; a server tool may carry its whole input in the start).

Where the bytes allow two readings the rule below takes one and says so: a second
message_start while a message is open starts a new message (the official SDK glues the
new message's deltas onto the first message's blocks); a delta for a block that already
stopped extends that block, the only one its index can name.
"""

from __future__ import annotations

from typing import Any, final

import orjson

from ...core import events as ev
from ...core.anomalies import AnomalyLog
from ...core.calls import Call, Slot, freeze
from ...core.events import FieldEvent
from ...core.frames import Frame
from ...text import cut, json_type, quote
from ..typed import event_object, id_and_name, named_index

# (tuples: a `type` sent as a list or an object is compared, never hashed)
TOOL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
# Event types of the Messages API (data `type`, and the SSE `event:` name).
# Deltas the API defines that build no call, text or reasoning: a thinking block's
# signature, a text block's citations, a (beta) compaction block's summary.
_NO_CALL_DELTAS = ("signature_delta", "citations_delta", "compaction_delta")

EVENTS = (
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
)
_ABSENT = object()  # a key the start did not carry


def start_text(value: object) -> str:
    """A start's `input` as the compact JSON text robust reports when no fragment follows."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # nested past orjson's writer: Python's writes what was parsed
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@final
class ToolBlock(Slot):
    """A tool block being assembled: the call, plus what its start carried."""

    __slots__ = ("start_input", "open", "nonempty")

    def __init__(
        self, message: int, index: int, frame: int, block: dict[Any, Any], log: AnomalyLog
    ) -> None:
        what = f"content_block_start of block {index}: its"
        bid, name = id_and_name(log, frame, block, ("id", "name"), what, message, index)
        super().__init__(message, index, frame, bid, name)
        self.type = block.get("type")
        self.start_input: object = block.get("input", _ABSENT)
        self.open = True
        self.nonempty = False  # a non-empty fragment arrived

    def arguments(self) -> object:
        if self.nonempty or self.start_input is _ABSENT:
            return self.text()
        return start_text(self.start_input)

    def start_carries(self) -> bool:
        """The start's input holds something ({"a": 1}), not the `{}` placeholder."""
        value = self.start_input
        return value is not _ABSENT and value != {} and value is not None


class TextBlock:
    """A text or thinking block (or another kind that is not a call)."""

    __slots__ = ("kind", "open", "first")

    def __init__(self, kind: object, frame: int) -> None:
        self.kind = kind
        self.open = True
        self.first = frame


Block = ToolBlock | TextBlock


class Message:
    """One message of the body: its blocks by index, what it said, how it stopped."""

    __slots__ = (
        "number",
        "frame",
        "id",
        "blocks",
        "calls",
        "stop_reason",
        "stop_frame",
        "stopped",
        "content",
        "reasoning",
        "frozen",
    )

    def __init__(self, number: int, frame: int, mid: object = None) -> None:
        self.number = number
        self.frame = frame
        self.id = mid  # the message's id, as message_start gave it
        self.blocks: dict[int, Block] = {}
        self.calls: list[ToolBlock] = []
        self.stop_reason: object = None
        self.stop_frame = 0
        self.stopped = 0  # the message_stop frame
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.frozen = (0, 0)  # leading chunks of content, reasoning shared with copies

    def copy(self, slots: dict[int, ToolBlock]) -> Message:
        self.frozen = (freeze(self.content, self.frozen[0]), freeze(self.reasoning, self.frozen[1]))
        new = Message.__new__(Message)
        new.number, new.frame, new.id, new.frozen = self.number, self.frame, self.id, self.frozen
        new.stop_reason, new.stop_frame, new.stopped = (
            self.stop_reason,
            self.stop_frame,
            self.stopped,
        )
        new.content, new.reasoning = list(self.content), list(self.reasoning)
        new.calls = [slots[id(b)] for b in self.calls]
        new.blocks = {
            i: slots[id(b)] if isinstance(b, ToolBlock) else _copy_text(b)
            for i, b in self.blocks.items()
        }
        return new


def _copy_text(block: TextBlock) -> TextBlock:
    new = TextBlock(block.kind, block.first)
    new.open = block.open
    return new


def _said(message: Message, kind: object, block: dict[Any, Any]) -> None:
    """The text a text or thinking block carries whole, added to what the message says."""
    if kind == "text" or kind == "thinking":
        text = block.get(kind)
        if isinstance(text, str) and text:
            (message.content if kind == "text" else message.reasoning).append(text)


class Robust:
    """The robust reading plus every per-frame anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log
        self.messages: list[Message] = []
        self.cur: Message | None = None
        self.calls: list[ToolBlock] = []  # every tool block, in the order they began
        self.by_id: dict[object, ToolBlock] = {}  # id -> the first block carrying it
        self.prev: ToolBlock | None = None  # the block the latest fragment went to
        self.events: list[FieldEvent] | None = None  # set to a list to collect events
        self.done_frame = 0  # the last message's message_stop
        self.error_payload: str | None = None
        self.unnamed = 0  # frames with no SSE event name
        self.first_unnamed = 0

    # -- frames -------------------------------------------------------------------------

    def fragment(self, n: int, index: int, text: str) -> bool:
        """A plain `input_json_delta` fragment for block `index` of the current message:
        taken in a few steps when nothing about it calls for a rule; False otherwise (the
        caller feeds the whole frame)."""
        cur = self.cur
        block = cur.blocks.get(index) if cur is not None else None
        if (
            type(block) is not ToolBlock
            or not block.open
            or not text
            or block.fragments == 0
            or (not block.nonempty and block.start_carries())
            or (self.prev is not block and self.prev is not None)
        ):
            return False
        block.parts.append(text)
        block.nonempty = True
        block.fragments += 1
        block.built(n)
        return True

    def text(self, index: int, text: str) -> bool:
        """A plain `text_delta` for open text block `index` of the current message: taken
        at once; False when a rule must look (the caller feeds the whole frame)."""
        cur = self.cur
        if cur is None:
            return False
        block = cur.blocks.get(index)
        if type(block) is not TextBlock or not block.open or block.kind != "text":
            return False
        if text:
            cur.content.append(text)
        return True

    def unnamed_at(self, n: int) -> None:
        """Frame `n` came with no event name (`event-name-missing`, at the stream's end)."""
        self.unnamed += 1
        self.first_unnamed = self.first_unnamed or n

    def feed(self, frame: Frame) -> None:
        n, log = frame.number, self.log
        payload = event_object(frame, log)
        if payload is None:
            return
        kind = payload.get("type")
        name = frame.event
        if name is None:
            self.unnamed_at(n)
        elif name != kind and (name in EVENTS or kind in EVENTS):
            log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"event: {cut(quote(name), 30)} carries data of type {cut(quote(kind), 30)}; "
                    "the official SDK follows the data's type, clients that dispatch on the event "
                    "name do not"
                ),
            )
        if kind == "content_block_delta":
            self._delta(n, payload)
        elif kind == "content_block_start":
            self._start(n, payload)
        elif kind == "content_block_stop":
            self._stop(n, payload)
        elif kind == "message_start":
            self._message_start(n, payload)
        elif kind == "message_delta":
            self._message_delta(n, payload)
        elif kind == "message_stop":
            message = self._message(n, "message_stop")
            message.stopped = self.done_frame = n
            if self.events is not None:
                self.events.append(
                    FieldEvent(n, ev.MESSAGE_END, message.number, words=ev.BLOCK_WORDS)
                )
        elif kind == "error":
            error = payload.get("error")
            said = error.get("message") if isinstance(error, dict) else error
            log.add(
                "provider-error",
                n,
                lambda: f"the provider sent an error in the stream: {cut(quote(said), 120)}",
            )
            self.error_payload = self.error_payload or str(said)
        elif kind != "ping":
            log.add(
                "event-unknown",
                n,
                lambda: (
                    f"an event of type {cut(quote(kind), 40)}, which the Messages API does not "
                    "define: the official SDK ignores it; clients that reject unknown events stop"
                ),
            )

    def _message(self, n: int, what: str) -> Message:
        """The message under way; one begins when an event comes before any message_start."""
        if self.cur is None:
            self.log.add(
                "event-schema-violation",
                n,
                f"{what} before any message_start: the official SDK raises; robust reads it "
                "as the start of a message",
            )
            self._begin(n)
        assert self.cur is not None
        return self.cur

    def _begin(self, n: int, mid: object = None) -> Message:
        message = self.cur = Message(len(self.messages), n, mid)
        self.messages.append(message)
        self.done_frame = 0
        self.prev = None
        return message

    def _message_start(self, n: int, payload: dict[Any, Any]) -> None:
        body = payload.get("message")
        body = body if isinstance(body, dict) else {}
        mid = body.get("id")
        cur = self.cur
        if cur is not None and not cur.stopped:
            again = not cur.blocks and mid is not None and mid == cur.id
            self.log.add(
                "message-start-repeated",
                n,
                f"a second message_start while message {cur.number} (frame {cur.frame}) is "
                "open: the official SDK keeps the first message and glues the new message's "
                "fragments onto its blocks; "
                + (
                    "it repeats the open message's id before any block: robust reads one message"
                    if again
                    else "robust starts a new message"
                ),
            )
            if again:
                return
        message = self._begin(n, mid)
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.MESSAGE, message.number, None, "id", None, mid, -1, ev.BLOCK_WORDS)
            )
        content = body.get("content")
        if isinstance(content, list):  # blocks the message starts with, whole
            for index, block in enumerate(content):
                if isinstance(block, dict):
                    self._whole(n, message, index, block)
        if body.get("stop_reason") is not None:
            message.stop_reason, message.stop_frame = body["stop_reason"], n

    def _whole(self, n: int, message: Message, index: int, block: dict[Any, Any]) -> None:
        """A block message_start carries complete (programmatic tool calling sends a
        message per call this way): a call with its whole input, stopped."""
        kind = block.get("type")
        if kind not in TOOL_BLOCKS:
            closed = message.blocks[index] = TextBlock(kind, n)
            closed.open = False
            _said(message, kind, block)
            return
        tool = self._tool(n, message, index, block)
        tool.open = False

    def _index(self, n: int, payload: dict[Any, Any], what: str) -> int | None:
        bad = ": it names no block (the official SDK raises or picks another one); robust skips it"
        missing = ": it names no block; robust skips it"
        return named_index(self.log, n, payload, "index", what, bad, missing)

    def _start(self, n: int, payload: dict[Any, Any]) -> None:
        index = self._index(n, payload, "content_block_start")
        if index is None:
            return
        message = self._message(n, "content_block_start")
        block = payload.get("content_block")
        if not isinstance(block, dict):
            self.log.add(
                "event-schema-violation",
                n,
                f"content_block_start for block {index} carries no content_block object",
            )
            block = {}
        earlier = message.blocks.get(index)
        if earlier is not None:
            first = earlier.first
            self.log.add(
                "block-index-reused",
                n,
                f"block {index} starts again in message {message.number} (first at frame "
                f"{first}): clients that key blocks by index merge the two; robust keeps them apart",
                message.number,
                index,
            )
        kind = block.get("type")
        if kind not in TOOL_BLOCKS:
            message.blocks[index] = TextBlock(kind, n)
            _said(message, kind, block)  # a start may carry the first text
            return
        self._tool(n, message, index, block)

    def _tool(self, n: int, message: Message, index: int, block: dict[Any, Any]) -> ToolBlock:
        tool = ToolBlock(message.number, index, n, block, self.log)
        message.blocks[index] = tool
        message.calls.append(tool)
        self.calls.append(tool)
        bid = tool.id
        if isinstance(bid, str) and bid:
            first = self.by_id.get(bid)
            if first is None:
                self.by_id[bid] = tool
            else:
                self.log.add(
                    "id-reused",
                    n,
                    f"block {index} carries id {quote(bid)}, as block {first.index} of message "
                    f"{first.choice} did: the tool results cannot tell them apart",
                    message.number,
                    index,
                )
        if self.events is not None:
            events, m = self.events, message.number
            events.append(FieldEvent(n, ev.NEW_CALL, m, index, "", words=ev.BLOCK_WORDS))
            for field, value in (("type", tool.type), ("id", tool.id), ("name", tool.name)):
                events.append(
                    FieldEvent(n, ev.SET, m, index, field, None, value, -1, ev.BLOCK_WORDS)
                )
            if tool.start_input is not _ABSENT:
                events.append(
                    FieldEvent(
                        n, ev.SET, m, index, "input", None, tool.start_input, -1, ev.BLOCK_WORDS
                    )
                )
        return tool

    def _open_block(self, n: int, index: int, what: str) -> Block | None:
        """The block a delta or stop names, or None (reported) when there is none."""
        cur = self.cur
        block = cur.blocks.get(index) if cur is not None else None
        if block is None:
            self.log.add(
                "block-delta-without-start",
                n,
                f"a {what} for block {index}, which no content_block_start opened"
                + (f" in message {cur.number}" if cur is not None else "")
                + ": clients that index the content list crash or drop it; robust skips it",
                cur.number if cur is not None else None,
                index,
            )
            return None
        assert cur is not None  # (the block is one of its)
        if not block.open:
            self.log.add(
                "block-delta-without-start",
                n,
                f"a {what} for block {index} after its content_block_stop: "
                + (
                    "robust extends that block, the only one its index names"
                    if what == "delta"
                    else "it ends nothing"
                ),
                cur.number,
                index,
            )
        return block

    def _delta(self, n: int, payload: dict[Any, Any]) -> None:
        index = self._index(n, payload, "content_block_delta")
        if index is None:
            return
        block = self._open_block(n, index, "delta")
        if block is None:
            return
        delta = payload.get("delta")
        kind = delta.get("type") if isinstance(delta, dict) else None
        message = self.cur
        assert message is not None
        log = self.log
        if kind == "input_json_delta" and isinstance(delta, dict):  # (it has a kind: it is one)
            text = delta.get("partial_json")
            if type(block) is not ToolBlock:
                log.add(
                    "event-schema-violation",
                    n,
                    f"an input_json_delta for block {index}, a {cut(quote(block.kind), 20)} block: "
                    "robust skips it",
                )
            elif not isinstance(text, str):
                log.add(
                    "event-schema-violation",
                    n,
                    lambda: (
                        f"partial_json of block {index} is "
                        + (f"a JSON {json_type(text)}" if "partial_json" in delta else "missing")
                        + ", not a string: the official SDK raises; robust skips it"
                    ),
                    message.number,
                    index,
                )
            else:
                self._json(n, message, block, text)
        elif (kind == "text_delta" or kind == "thinking_delta") and isinstance(delta, dict):
            key = "text" if kind == "text_delta" else "thinking"
            text = delta.get(key)
            wanted = "text" if kind == "text_delta" else "thinking"
            if not isinstance(text, str) or getattr(block, "kind", None) != wanted:
                log.add(
                    "event-schema-violation",
                    n,
                    lambda: (
                        f"a {kind} for block {index} "
                        + (
                            f"whose {key} is not a string"
                            if not isinstance(text, str)
                            else f"of kind {cut(quote(getattr(block, 'kind', 'tool')), 20)}"
                        )
                        + ": robust skips it"
                    ),
                )
                return
            if text:
                (message.content if key == "text" else message.reasoning).append(text)
                if self.events is not None:
                    op = ev.CONTENT if key == "text" else ev.REASONING
                    self.events.append(
                        FieldEvent(
                            n, op, message.number, index, key, None, text, -1, ev.BLOCK_WORDS
                        )
                    )
        elif kind not in _NO_CALL_DELTAS:
            log.add(
                "event-unknown" if isinstance(delta, dict) else "event-schema-violation",
                n,
                lambda: (
                    f"a delta of type {cut(quote(kind), 30)} for block {index}, which the Messages "
                    "API does not define: robust skips it"
                    if isinstance(delta, dict)
                    else f"content_block_delta for block {index} carries no delta object"
                ),
            )

    def _json(self, n: int, message: Message, block: ToolBlock, text: str) -> None:
        log, index = self.log, block.index
        if block.fragments == 0 and text == "":
            log.add(
                "partial-json-empty",
                n,
                f'block {index}\'s first fragment is "": clients that test it for truth or '
                'JSON.parse it ("Unexpected end of JSON input") fail',
                message.number,
                index,
            )
        if text and not block.nonempty and block.start_carries():
            log.add(
                "block-start-input-nonempty",
                n,
                lambda: (
                    f"block {index}'s start carries input {cut(quote(start_text(block.start_input)), 40)} "
                    "and fragments follow: clients that glue the start's input to the fragments "
                    "send it twice; robust takes the fragments"
                ),
                message.number,
                index,
            )
        prev = self.prev
        if prev is not None and prev is not block and block.fragments > 0:
            log.add(
                "interleaved",
                n,
                f"fragments of blocks {prev.index} and {index} alternate: clients that route "
                "fragments to the latest block mix them up",
                message.number,
            )
        self.prev = block
        block.fragments += 1
        block.built(n)
        if text:
            block.parts.append(text)
            block.nonempty = True
        if self.events is not None:
            self.events.append(
                FieldEvent(
                    n, ev.APPEND, message.number, index, "input", None, text, -1, ev.BLOCK_WORDS
                )
            )

    def _stop(self, n: int, payload: dict[Any, Any]) -> None:
        index = self._index(n, payload, "content_block_stop")
        if index is None:
            return
        block = self._open_block(n, index, "stop")
        if block is None or not block.open:
            return
        block.open = False
        if type(block) is ToolBlock:
            block.built(n)  # the stop completes the input (the SDK parses it there)
        if self.events is not None:
            cur = self.cur
            assert cur is not None  # (the block is one of its)
            self.events.append(FieldEvent(n, ev.STOP, cur.number, index, "", words=ev.BLOCK_WORDS))

    def _message_delta(self, n: int, payload: dict[Any, Any]) -> None:
        message = self._message(n, "message_delta")
        delta = payload.get("delta")
        if not isinstance(delta, dict) or "stop_reason" not in delta:
            return
        reason = delta["stop_reason"]
        if reason is None:
            return
        message.stop_reason, message.stop_frame = reason, n
        if self.events is not None:
            self.events.append(
                FieldEvent(
                    n,
                    ev.FINISH,
                    message.number,
                    None,
                    "stop_reason",
                    None,
                    reason,
                    -1,
                    ev.BLOCK_WORDS,
                )
            )

    # -- the state, for the faces ------------------------------------------------------

    def results(self) -> list[Call]:
        return [b.to_call() for b in self.calls]

    def copy(self, log: AnomalyLog) -> Robust:
        new = Robust.__new__(Robust)
        new.log = log
        slots = {id(b): b.__deepcopy__({}) for b in self.calls}
        new.calls = [slots[id(b)] for b in self.calls]
        new.messages = [m.copy(slots) for m in self.messages]
        new.cur = new.messages[-1] if self.cur is not None else None
        new.by_id = {k: slots[id(b)] for k, b in self.by_id.items()}
        new.prev = slots[id(self.prev)] if self.prev is not None else None
        new.events = None
        new.done_frame, new.error_payload = self.done_frame, self.error_payload
        new.unnamed, new.first_unnamed = self.unnamed, self.first_unnamed
        return new
