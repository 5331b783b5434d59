"""The clients people ship for Anthropic Messages, each a fold over the same events.

Each differs from robust in the one way the trap it stands for says, and reads the rest
as robust does: blocks keyed by `index` within their message (a message_start begins a
new table), the start's `input` standing alone when no fragment carries text. The
engine hands them the events already read (`start`, `fragment`, `stop`, `message`);
`anthropic-sdk` (sdk_model.py) reads the frames itself, as the real SDK does.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.calls import Call, Slot, StrategyError
from .. import typed
from .robust import TOOL_BLOCKS, start_text

_ABSENT = object()


class FoldSlot(Slot):
    __slots__ = ("start_input",)  # the start's input, kept aside from the fragments


class Fold(typed.Fold):
    """Base: tool blocks in the order they began, keyed by index within their message."""

    def __init__(self) -> None:
        super().__init__()
        self.slots: list[FoldSlot] = []
        self.by_index: dict[int, FoldSlot | None] = {}  # None: the index holds a non-tool block
        self.message = -1

    def message_start(self, n: int) -> None:
        self.message += 1
        self.by_index = {}

    def start(self, n: int, index: int, block: dict[Any, Any]) -> None:
        if block.get("type") not in TOOL_BLOCKS:
            self.by_index[index] = None
            return
        slot = FoldSlot(max(self.message, 0), index, n, block.get("id"), block.get("name"))
        slot.type = block.get("type")
        slot.start_input = block.get("input", _ABSENT)  # type: ignore[attr-defined]
        self.by_index[index] = slot
        self.slots.append(slot)

    def target(self, index: int) -> FoldSlot | None:
        return self.by_index.get(index)

    def fragment(self, n: int, index: int, text: str) -> None:
        slot = self.target(index)
        if slot is not None:
            slot.parts.append(text)
            slot.fragments += 1
            slot.last = n

    def stop(self, n: int, index: int) -> None:
        pass

    def arguments(self, slot: FoldSlot) -> str:
        text = "".join(slot.parts)
        if text or slot.start_input is _ABSENT:  # type: ignore[attr-defined]
            return text
        return start_text(slot.start_input)  # type: ignore[attr-defined]

    def call(self, slot: FoldSlot) -> Call:
        s = slot
        call = Call(s.choice, s.index, s.id, s.type, s.name, "", s.fragments, s.first, s.last)
        call.arguments = self.arguments(s)
        return call


class StartConcat(Fold):
    """Glues the start's `input` (`{}`) to the fragments: `{}{"city": "Paris"}`.

    Stands for envoyproxy/ai-gateway#1465 (and gateways translating Anthropic to Chat
    Completions the same way)."""

    name = "start-concat"

    def arguments(self, slot: FoldSlot) -> str:
        head = "" if slot.start_input is _ABSENT else start_text(slot.start_input)  # type: ignore[attr-defined]
        return head + "".join(slot.parts)


class LastBlock(Fold):
    """Sends every fragment to the last tool block started, whatever its index says.

    Stands for clients that track "the current tool call" instead of the block index
    (the routing bug of NousResearch/hermes-agent#108209 and LibreChat#10647)."""

    name = "last-block"

    def __init__(self) -> None:
        super().__init__()
        self.last: FoldSlot | None = None

    def start(self, n: int, index: int, block: dict[Any, Any]) -> None:
        super().start(n, index, block)
        slot = self.by_index.get(index)
        if slot is not None:
            self.last = slot

    def target(self, index: int) -> FoldSlot | None:
        return self.last


class Truthy(Fold):
    """Skips fragments that are not truthy (`if (delta.partial_json)`) and parses the
    input at the block's stop with JSON.parse, so a tool whose only fragment is `""` (a
    no-argument tool) fails with "Unexpected end of JSON input".

    Stands for theopenco/llmgateway#2468, activeagents/activeagent#299 and
    ItzCrazyKns/Vane#1160."""

    name = "truthy"

    def fragment(self, n: int, index: int, text: str) -> None:
        if text:
            super().fragment(n, index, text)

    def arguments(self, slot: FoldSlot) -> str:
        return "".join(slot.parts)

    def stop(self, n: int, index: int) -> None:
        slot = self.by_index.get(index)
        if slot is None or self.error is not None:
            return
        text = "".join(slot.parts)
        if not text:
            self.error = StrategyError("SyntaxError: Unexpected end of JSON input", n)
            return
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            self.error = StrategyError(
                f"SyntaxError: the input of block {index} is not valid JSON", n
            )
