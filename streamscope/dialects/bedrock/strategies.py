"""The clients people ship for Bedrock's Converse stream, each a fold over the same events.

Each differs from robust in the one way the trap it stands for says, and reads the rest as
robust does: toolUse blocks keyed by `contentBlockIndex`, opened by their start, their
input the `toolUse.input` fragments concatenated (`{}` for a stopped block that got none).
The engine hands them the events already read (robust.Event); `strands` (sdk_model.py)
reads them as botocore parses them, as the real client does.
"""

from __future__ import annotations

from typing import Any

from ...core.calls import Call, Slot
from .. import typed
from .robust import CLIENT, Event


class FoldSlot(Slot):
    __slots__ = ("stopped",)
    stopped: bool

    def arguments(self) -> object:
        text = self.text()
        return "{}" if not text and self.stopped else text


class Fold(typed.Fold[FoldSlot]):
    """Base: toolUse blocks in the order they began, keyed by contentBlockIndex."""

    def __init__(self) -> None:
        super().__init__()
        self.by_index: dict[int, FoldSlot] = {}
        self.stop_reason: object = None

    def event(self, n: int, event: Event) -> None:
        if event.exception:
            return
        body, name = event.body, event.name
        index = body.get("contentBlockIndex")
        if name == "messageStop":
            self.stop_reason = body.get("stopReason")
            return
        if type(index) is not int:
            return
        if name == "contentBlockStart":
            start = body.get("start")
            tool = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(tool, dict):
                self.start(n, index, tool)
            else:
                self.other_start(index)
        elif name == "contentBlockDelta":
            delta = body.get("delta")
            if not isinstance(delta, dict):
                return
            tool = delta.get("toolUse")
            if isinstance(tool, dict) and isinstance(tool.get("input"), str):
                self.fragment(n, index, tool["input"])
            elif isinstance(delta.get("text"), str):
                self.text(n, index, delta["text"])
        elif name == "contentBlockStop":
            slot = self.by_index.get(index)
            if slot is not None:
                slot.stopped = True

    def start(self, n: int, index: int, tool: dict[Any, Any]) -> None:
        tid, name, kind = tool.get("toolUseId"), tool.get("name"), tool.get("type")
        slot = FoldSlot(0, index, n, "" if tid is None else tid, "" if name is None else name)
        slot.type = CLIENT if kind is None else kind
        slot.stopped = False
        self.by_index[index] = slot
        self.slots.append(slot)

    def other_start(self, index: int) -> None:
        self.by_index.pop(index, None)

    def target(self, index: int) -> FoldSlot | None:
        return self.by_index.get(index)

    def fragment(self, n: int, index: int, text: str) -> None:
        slot = self.target(index)
        if slot is not None:
            slot.parts.append(text)
            slot.fragments += 1
            slot.last = n

    def text(self, n: int, index: int, text: str) -> None:
        pass  # the text the message says: no call's


class LastStart(Fold):
    """Sends every delta to the block the last contentBlockStart opened, whatever its
    contentBlockIndex says. Text blocks send no start, so a text block after a toolUse
    block has its text glued onto the call's input (`{"city":"Paris"}Checking now.`).

    Stands for NousResearch/hermes-agent#108209 (deltas keyed by arrival and the last
    start: text glued onto a toolUse block, which is then dropped on replay) and
    danny-avila/LibreChat#10647 (LangChain's merge of deltas across content types)."""

    name = "last-start"

    def __init__(self) -> None:
        super().__init__()
        self.last: FoldSlot | None = None

    def start(self, n: int, index: int, tool: dict[Any, Any]) -> None:
        super().start(n, index, tool)
        self.last = self.slots[-1]

    def other_start(self, index: int) -> None:
        super().other_start(index)
        self.last = None

    def target(self, index: int) -> FoldSlot | None:
        return self.last

    def text(self, n: int, index: int, text: str) -> None:
        if self.last is not None:
            self.fragment(n, index, text)


class StartOnly(Fold):
    """Takes each call from its contentBlockStart and never folds the `toolUse.input`
    deltas in: every streamed call runs with `{}`.

    Stands for crewAIInc/crewAI#6152 (issue #6149: Bedrock streaming tool calls executed
    with empty arguments) and zendev-sh/goai#5."""

    name = "start-only"

    def fragment(self, n: int, index: int, text: str) -> None:
        slot = self.target(index)
        if slot is not None:
            slot.fragments += 1
            slot.last = n

    def call(self, slot: FoldSlot) -> Call:
        call = slot.to_call()
        call.arguments = "{}"
        return call


class StopOnEndTurn(Fold):
    """Trusts messageStop's stopReason: at `end_turn` the agent loop ends the turn, and
    the calls the message streamed are never run (nor answered).

    Stands for the agent loops written `if stop_reason != "tool_use": return`
    (shareAI-lab/learn-claude-code#458 keeps that loop on purpose), which models that stop
    with `end_turn` after a toolUse block defeat; strands-agents overrides such a stop to
    `tool_use` in `handle_message_stop` ("Some models return end_turn even when tool calls
    are present") for that reason."""

    name = "stop-on-end-turn"

    def calls(self) -> list[Call]:
        if self.stop_reason == "end_turn":
            return []
        return super().calls()
