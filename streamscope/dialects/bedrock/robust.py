"""streamscope's own reading of a Bedrock Converse stream (`robust`), and the anomaly rules
beside it.

A stream is one message: `messageStart`, its blocks, `messageStop` (the stop reason), then
`metadata` (usage). Blocks are keyed by `contentBlockIndex`. A toolUse block (a call) opens
with a `contentBlockStart` carrying its `toolUseId` and `name` (and `type:
server_tool_use` for a tool Bedrock runs itself), its input comes as `toolUse.input` text
fragments, concatenated as sent, and a `contentBlockStop` closes it. A text or reasoning
block has no start: its first delta opens it. A server tool's result is a block of its own
(`start.toolResult`), no call.

Each frame is one event: its name the `:event-type` header (an exception's
`:exception-type`), its payload the event's object as sent (with the `p` padding every
event carries, which nothing reads). A chunk log of what botocore yields
(`{"contentBlockDelta": {...}}` a line) is read the same way, each line's one key naming
its event.

Where the bytes allow two readings the rule below takes one and says so: a second start
at one index begins a new block there (the earlier call stays, stopped); a toolUse delta
at an index no start opened is skipped (it carries no id or name to call); a stopped
toolUse block that received no input text has input `{}` (a tool without arguments), as
the Converse API sends it back.
"""

from __future__ import annotations

from typing import Any, final

from ...core import events as ev
from ...core.anomalies import AnomalyLog
from ...core.calls import Call, Slot, freeze
from ...core.events import FieldEvent
from ...core.frames import Frame
from ...core.record import record
from ...text import cut, json_type, quote
from ..typed import event_object, id_and_name, named_index

# The ConverseStream events (the `:event-type` of its messages).
EVENTS = (
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
)
# The exceptions it names in its model (`:exception-type` of `:message-type: exception`).
EXCEPTIONS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)
SERVER = "server_tool_use"  # toolUse.type of a tool Bedrock runs itself
CLIENT = "toolUse"  # the type reported for a call the client runs (the start sends none)
# Delta members, by the kind of block they extend (a citation goes with its text).
FAMILY = {
    "text": "text",
    "citation": "text",
    "reasoningContent": "reasoning",
    "toolUse": "toolUse",
    "toolResult": "toolResult",
    "image": "image",
}


@record(frozen=True, slots=True)
class Event:
    """One frame as an event: its name, its object, and whether it is an exception (or a
    `:message-type: error` message), whose `message` says what went wrong."""

    name: str | None
    body: dict[Any, Any]
    exception: bool = False


def message_type(frame: Frame) -> str | None:
    """The frame's `:message-type` header (None: it came without headers, as a saved SSE
    or a chunk log does)."""
    if not frame.headers:
        return None
    for h in frame.headers:
        if h.name == ":message-type":
            return h.value if isinstance(h.value, str) else None
    return None


# What Bedrock adds beside a model's event in InvokeModelWithResponseStream, whatever the
# model (`amazon-bedrock-invocationMetrics` on the last, `amazon-bedrock-guardrailAction`).
BEDROCK_OWN = "amazon-bedrock-"


def keyed_event(payload: object) -> tuple[str, dict[Any, Any]] | None:
    """(name, object) of an event written as boto3 yields it, `{"messageStop": {...}}`
    (one key naming it, Bedrock's own keys beside it or not); None otherwise."""
    if type(payload) is not dict:
        return None
    keys = [k for k in payload if not (isinstance(k, str) and k.startswith(BEDROCK_OWN))]
    if len(keys) != 1:
        return None
    key, inner = keys[0], payload[keys[0]]
    if (key in EVENTS or key in EXCEPTIONS) and type(inner) is dict:
        return key, inner
    return None


def read_event(frame: Frame, payload: dict[Any, Any]) -> Event:
    """The event a frame whose payload is an object carries."""
    name = frame.event
    kind = message_type(frame)
    if name is None and kind in (None, "event"):
        # what botocore yields, logged a line each, {"contentBlockDelta": {...}}, and what
        # Amazon Nova streams through InvokeModelWithResponseStream, a chunk's event each
        # (its last with Bedrock's `amazon-bedrock-invocationMetrics` beside it)
        keyed = keyed_event(payload)
        if keyed is not None:
            key, inner = keyed
            return Event(key, inner, key in EXCEPTIONS)
    if kind is None:  # no headers (a saved SSE): an exception says so by its name
        return Event(name, payload, isinstance(name, str) and name.endswith("Exception"))
    if kind == "error":
        said = {h.name: h.value for h in frame.headers}.get(":error-message")
        return Event(name, {"message": said} if said is not None else payload, True)
    return Event(name, payload, kind == "exception")


def quick_delta(frame: Frame) -> tuple[int, str, str, dict[Any, Any]] | None:
    """(block index, "text" or "toolUse", the string, the delta) of a contentBlockDelta
    event message (or one saved without headers) whose one delta member is a text, or a
    toolUse holding only its input string; None for any other frame."""
    p = frame.payload
    if frame.event != "contentBlockDelta" or type(p) is not dict or frame.invalid is not None:
        return None
    index, delta = p.get("contentBlockIndex"), p.get("delta")
    if type(index) is not int or index < 0 or type(delta) is not dict or len(delta) != 1:
        return None
    if frame.bad_utf8 or (frame.headers and message_type(frame) != "event"):
        return None
    text = delta.get("text")
    if type(text) is str:
        return index, "text", text, delta
    tool = delta.get("toolUse")
    if type(tool) is dict and len(tool) == 1 and type(text := tool.get("input")) is str:
        return index, "toolUse", text, delta
    return None


def exception_words(event: Event) -> str:
    """An exception event in words: its type and its message."""
    said = event.body.get("message")
    return f"{cut(quote(event.name), 40)}: {cut(quote(said), 120)}"


@final
class ToolBlock(Slot):
    """A toolUse block being assembled: the call, and whether it is still open."""

    __slots__ = ("open", "nonempty")

    def __init__(self, index: int, frame: int, tool: dict[Any, Any], log: AnomalyLog) -> None:
        what = f"contentBlockStart of block {index}: its toolUse's"
        tid, name = id_and_name(log, frame, tool, ("toolUseId", "name"), what, 0, index)
        super().__init__(0, index, frame, tid, name)
        kind = tool.get("type")
        self.type = CLIENT if kind is None else kind
        self.open = True
        self.nonempty = False  # a fragment carried text

    @property
    def server(self) -> bool:
        return self.type == SERVER

    def arguments(self) -> object:
        # a stopped block with no input text is a tool without arguments: `{}`
        if not self.nonempty and not self.open:
            return "{}"
        return self.text()


UNTYPED = ""  # the family of a block whose start named none, until its first delta


class TextBlock:
    """A block that is no call: text, reasoning, a server tool's result, an image."""

    __slots__ = ("family", "open", "first", "started")

    def __init__(self, family: str, frame: int, started: bool) -> None:
        self.family = family
        self.open = True
        self.first = frame
        self.started = started  # opened by a contentBlockStart (else by its first delta)


Block = ToolBlock | TextBlock


def _copy_text(block: TextBlock) -> TextBlock:
    new = TextBlock(block.family, block.first, block.started)
    new.open = block.open
    return new


class Robust:
    """The robust reading plus every per-frame anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log
        self.blocks: dict[int, Block] = {}
        self.calls: list[ToolBlock] = []  # every toolUse block, in the order they began
        self.by_id: dict[object, ToolBlock] = {}
        self.last_start: Block | None = None  # the block the latest contentBlockStart opened
        self.prev: ToolBlock | None = None  # the block the latest fragment went to
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.frozen = (0, 0)
        self.started = 0  # the messageStart frame
        self.stop_reason: object = None
        self.done_frame = 0  # the messageStop frame
        self.metadata_frame = 0
        self.error_payload: str | None = None
        self.events: list[FieldEvent] | None = None  # set to a list to collect events

    # -- frames -------------------------------------------------------------------------

    def feed(self, frame: Frame) -> Event | None:
        """Read one frame; the event it carries (None: it carries none), which the client
        folds read next."""
        payload = event_object(frame, self.log)
        if payload is None:
            return None
        event = read_event(frame, payload)
        self.event(frame.number, event)
        return event

    def event(self, n: int, event: Event) -> None:
        log, name, body = self.log, event.name, event.body
        if event.exception:
            log.add(
                "provider-error",
                n,
                lambda: f"the stream carries the exception {exception_words(event)}",
            )
            said = body.get("message")
            self.error_payload = self.error_payload or f"{name}: {said}"
            return
        if name in EVENTS:
            self._after_stop(n, name)
        if name == "contentBlockDelta":
            self._delta(n, body)
        elif name == "contentBlockStart":
            self._start(n, body)
        elif name == "contentBlockStop":
            self._stop(n, body)
        elif name == "messageStart":
            if self.started:
                log.add(
                    "event-schema-violation",
                    n,
                    f"a second messageStart (the first at frame {self.started}): a Converse "
                    "stream holds one message; robust reads on as one",
                )
            else:
                self.started = n
        elif name == "messageStop":
            self.stop_reason, self.done_frame = body.get("stopReason"), n
            if self.events is not None:
                self.events.append(
                    FieldEvent(
                        n,
                        ev.FINISH,
                        0,
                        None,
                        "stopReason",
                        None,
                        self.stop_reason,
                        -1,
                        ev.BLOCK_WORDS,
                    )
                )
        elif name == "metadata":
            self.metadata_frame = self.metadata_frame or n
        else:
            log.add(
                "event-unknown",
                n,
                lambda: (
                    f"an event named {cut(quote(name), 40)}, which ConverseStream does not "
                    "define: botocore drops it; robust skips it"
                ),
            )

    def _after_stop(self, n: int, name: str) -> None:
        if self.metadata_frame:
            after = f"metadata (frame {self.metadata_frame})"
        elif self.done_frame and name != "metadata":
            after = f"messageStop (frame {self.done_frame})"
        else:
            return
        self.log.add(
            "event-after-stop",
            n,
            f"{name} after {after}: clients that stop reading there lose it; robust reads it",
        )

    def _index(self, n: int, body: dict[Any, Any], what: str) -> int | None:
        skips = ": it names no block; robust skips it"
        return named_index(self.log, n, body, "contentBlockIndex", what, skips, skips)

    def _start(self, n: int, body: dict[Any, Any]) -> None:
        index = self._index(n, body, "contentBlockStart")
        if index is None:
            return
        start = body.get("start")
        if not isinstance(start, dict):
            self.log.add(
                "event-schema-violation",
                n,
                f"contentBlockStart for block {index} carries no start object: robust skips it",
            )
            return
        earlier = self.blocks.get(index)
        if earlier is not None:
            self.log.add(
                "block-index-reused",
                n,
                f"block {index} starts again (first at frame {earlier.first}): clients that key "
                "blocks by contentBlockIndex merge the two; robust keeps them apart",
                0,
                index,
            )
            if isinstance(earlier, ToolBlock):
                earlier.open = False
        tool = start.get("toolUse")
        if isinstance(tool, dict):
            self._tool(n, index, tool)
            return
        family = next((FAMILY[k] for k in start if k in FAMILY), None)
        if family is None and start:
            member = next(iter(start))
            self.log.add(
                "event-unknown",
                n,
                lambda: (
                    f"contentBlockStart for block {index} starts {cut(quote(member), 30)}, "
                    "which ConverseStream does not define: robust reads it as a block that "
                    "is no call"
                ),
            )
            family = member if isinstance(member, str) else "?"
        # an empty start (`"start": {}`) names no type: its first delta tells it, as in
        # the clients, which read every start without a toolUse as no call
        block = TextBlock(family or UNTYPED, n, True)
        self.blocks[index] = block
        self.last_start = block

    def _tool(self, n: int, index: int, tool: dict[Any, Any]) -> None:
        block = ToolBlock(index, n, tool, self.log)
        self.blocks[index] = block
        self.calls.append(block)
        self.last_start = block
        if block.server:
            self.log.add(
                "server-tool-use",
                n,
                f"block {index} ({cut(quote(block.name), 30)}) is a server_tool_use: Bedrock "
                "runs it and streams its result; a client that runs it or answers it with a "
                "toolResult of its own sends a turn the API did not ask for",
                0,
                index,
            )
        bid = block.id
        if isinstance(bid, str) and bid:
            first = self.by_id.get(bid)
            if first is None:
                self.by_id[bid] = block
            else:
                self.log.add(
                    "id-reused",
                    n,
                    f"block {index} carries toolUseId {quote(bid)}, as block {first.index} "
                    "did: their toolResults cannot tell them apart",
                    0,
                    index,
                )
        if self.events is not None:
            events = self.events
            events.append(FieldEvent(n, ev.NEW_CALL, 0, index, "", words=ev.BLOCK_WORDS))
            for field, value in (("type", block.type), ("id", block.id), ("name", block.name)):
                events.append(
                    FieldEvent(n, ev.SET, 0, index, field, None, value, -1, ev.BLOCK_WORDS)
                )

    def _delta(self, n: int, body: dict[Any, Any]) -> None:
        index = self._index(n, body, "contentBlockDelta")
        if index is None:
            return
        delta = body.get("delta")
        member = next((k for k in delta if k in FAMILY), None) if isinstance(delta, dict) else None
        if member is None or not isinstance(delta, dict):
            self.log.add(
                "event-unknown" if isinstance(delta, dict) else "event-schema-violation",
                n,
                lambda: (
                    f"a delta for block {index} of members {cut(quote(list(delta)), 40)}, none "
                    "of which ConverseStream defines: robust skips it"
                    if isinstance(delta, dict)
                    else f"contentBlockDelta for block {index} carries no delta object"
                ),
            )
            return
        family = FAMILY[member]
        block = self.blocks.get(index)
        if family == "toolUse":
            self._input(n, index, block, delta[member])
            return
        if isinstance(block, TextBlock) and block.family == UNTYPED:
            block.family = family
        if block is None:  # a text or reasoning block opens with its first delta
            block = self.blocks[index] = TextBlock(family, n, False)
            last = self.last_start
            if isinstance(last, ToolBlock) and last.index != index:
                self.log.add(
                    "text-after-tool-start",
                    n,
                    f"{family} block {index} opens with its first delta (text blocks have no "
                    f"contentBlockStart) after toolUse block {last.index} started: clients that "
                    "send deltas to the last started block glue this text onto that call",
                    0,
                    index,
                )
        elif isinstance(block, ToolBlock) or block.family != family:
            was = "toolUse" if isinstance(block, ToolBlock) else block.family
            self.log.add(
                "block-type-changed",
                n,
                f"a {member} delta for block {index}, a {was} block: clients that merge deltas "
                f"by contentBlockIndex mix the two; robust keeps the {member} apart",
                0,
                index,
            )
        elif not block.open:
            self._reopened(n, index)
        self._said(n, index, member, delta[member])

    def quick(self, n: int, index: int, member: str, text: str) -> bool:
        """A `text` or `toolUse` input delta (`member`) of an open block of its kind, before
        the message stopped, where no rule has anything to say: taken in a few steps (False:
        the whole event goes through every rule)."""
        if self.done_frame or self.metadata_frame:
            return False
        block = self.blocks.get(index)
        if member == "text":
            if type(block) is not TextBlock or block.family != "text" or not block.open:
                return False
            if text:
                self.content.append(text)
            return True
        if type(block) is not ToolBlock or not block.open:
            return False
        prev = self.prev
        if prev is not None and prev is not block and block.fragments > 0:
            return False  # (interleaved: said by the rule)
        self.prev = block
        block.fragments += 1
        block.built(n)
        if text:
            block.parts.append(text)
            block.nonempty = True
        return True

    def _said(self, n: int, index: int, member: str, value: object) -> None:
        """What a text or reasoning delta adds to what the message says."""
        if member == "text":
            text = value
            target, op = self.content, ev.CONTENT
        elif member == "reasoningContent" and isinstance(value, dict):
            text = value.get("text")
            target, op = self.reasoning, ev.REASONING
            if text is None:
                return  # a signature or redacted content: nothing said
        else:
            return  # a citation, a server tool's result, an image
        if not isinstance(text, str):
            self.log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"a {member} delta for block {index} whose text is a JSON "
                    f"{json_type(text)}, not a string: robust skips it"
                ),
            )
            return
        if text:
            target.append(text)
            if self.events is not None:
                self.events.append(
                    FieldEvent(n, op, 0, index, member, None, text, -1, ev.BLOCK_WORDS)
                )

    def _reopened(self, n: int, index: int) -> None:
        self.log.add(
            "event-schema-violation",
            n,
            f"a delta for block {index} after its contentBlockStop: robust extends that block, "
            "the only one its index names",
        )

    def _input(self, n: int, index: int, block: Block | None, value: object) -> None:
        log = self.log
        untyped = isinstance(block, TextBlock) and block.family == UNTYPED
        if block is None or untyped:
            opened = (
                "whose contentBlockStart named no toolUse"
                if untyped
                else ("which no contentBlockStart opened")
            )
            log.add(
                "tool-delta-without-start",
                n,
                f"a toolUse delta for block {index}, {opened}: it carries no toolUseId or "
                "name to call; robust skips it (clients that append it to the current call "
                "glue it on)",
                0,
                index,
            )
            return
        if not isinstance(block, ToolBlock):
            log.add(
                "block-type-changed",
                n,
                f"a toolUse delta for block {index}, a {block.family} block: clients that merge "
                "deltas by contentBlockIndex glue the input onto the text; robust skips it",
                0,
                index,
            )
            return
        text = value.get("input") if isinstance(value, dict) else None
        if not isinstance(text, str):
            log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"toolUse.input of block {index} is "
                    + (
                        f"a JSON {json_type(text)}"
                        if isinstance(value, dict) and "input" in value
                        else "missing"
                    )
                    + ", not a string: robust skips it"
                ),
                0,
                index,
            )
            return
        if not block.open:
            self._reopened(n, index)
        prev = self.prev
        if prev is not None and prev is not block and block.fragments > 0:
            log.add(
                "interleaved",
                n,
                f"input fragments of blocks {prev.index} and {index} alternate: clients that "
                "keep one current tool use mix them up",
                0,
            )
        self.prev = block
        block.fragments += 1
        block.built(n)
        if text:
            block.parts.append(text)
            block.nonempty = True
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.APPEND, 0, index, "input", None, text, -1, ev.BLOCK_WORDS)
            )

    def _stop(self, n: int, body: dict[Any, Any]) -> None:
        index = self._index(n, body, "contentBlockStop")
        if index is None:
            return
        block = self.blocks.get(index)
        if block is None:  # (an empty text block's stop, or a stray one: no call's)
            self.log.add(
                "event-schema-violation",
                n,
                f"a contentBlockStop for block {index}, which no start or delta opened: it "
                "ends nothing",
            )
            return
        if not block.open:
            self.log.add(
                "event-schema-violation",
                n,
                f"a second contentBlockStop for block {index}: it ends nothing",
            )
            return
        block.open = False
        if type(block) is ToolBlock:
            block.built(n)  # the stop completes the input (`{}` when no fragment came)
        if self.events is not None:
            self.events.append(FieldEvent(n, ev.STOP, 0, index, "", words=ev.BLOCK_WORDS))

    # -- the state, for the faces ------------------------------------------------------

    def results(self) -> list[Call]:
        return [b.to_call() for b in self.calls]

    def copy(self, log: AnomalyLog) -> Robust:
        new = Robust.__new__(Robust)
        new.log = log
        slots = {id(b): b.__deepcopy__({}) for b in self.calls}
        new.calls = [slots[id(b)] for b in self.calls]
        new.blocks = {
            i: slots[id(b)] if isinstance(b, ToolBlock) else _copy_text(b)
            for i, b in self.blocks.items()
        }
        last = self.last_start
        # (only whether it is a toolUse block matters to the rules: a text one is a copy)
        new.last_start = (
            slots[id(last)]
            if isinstance(last, ToolBlock)
            else _copy_text(last)
            if last is not None
            else None
        )
        new.by_id = {k: slots[id(b)] for k, b in self.by_id.items()}
        new.prev = slots[id(self.prev)] if self.prev is not None else None
        self.frozen = (freeze(self.content, self.frozen[0]), freeze(self.reasoning, self.frozen[1]))
        new.frozen = self.frozen
        new.content, new.reasoning = list(self.content), list(self.reasoning)
        new.started, new.stop_reason, new.done_frame = (
            self.started,
            self.stop_reason,
            self.done_frame,
        )
        new.metadata_frame, new.error_payload = self.metadata_frame, self.error_payload
        new.events = None
        return new
