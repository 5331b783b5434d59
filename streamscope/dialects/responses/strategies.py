"""The clients people ship for the OpenAI Responses API, each a fold over the same events.

Each differs from robust in the one way the trap it stands for says: calls are the
`function_call` / `custom_tool_call` items added, in the order they were added, each
with its `call_id` and name from `response.output_item.added`, and its arguments the
item's own text plus the deltas that reach it. The engine hands them the events already
read (`added`, `fragment`, `done`); `openai-sdk` (sdk_model.py) reads the frames itself,
as the real SDK does.
"""

from __future__ import annotations

from typing import Any

from ...core.calls import Call, Slot, StrategyError
from ...text import cut, quote
from .. import typed
from .robust import CALL_ITEMS


class FoldSlot(Slot):
    __slots__ = ("item_id", "head")
    item_id: object
    head: str  # the added item's own text

    def text(self) -> str:
        return self.head + "".join(self.parts)

    def to_call(self) -> Call:
        call = super().to_call()
        call.item_id = self.item_id
        return call


class Fold(typed.Fold[FoldSlot]):
    """Base: call items in the order added, deltas routed by item_id, else output_index."""

    def __init__(self) -> None:
        super().__init__()
        self.slots: list[FoldSlot] = []
        self.by_index: dict[int, FoldSlot | None] = {}  # None: a non-call item
        self.by_id: dict[str, FoldSlot | None] = {}

    def added(self, n: int, index: int, item: dict[Any, Any]) -> None:
        item_id = item.get("id")
        kind = item.get("type")
        if kind not in CALL_ITEMS:
            self.by_index[index] = None
            if isinstance(item_id, str):
                self.by_id[item_id] = None
            return
        slot = FoldSlot(0, index, n, item.get("call_id"), item.get("name"))
        slot.type = kind
        slot.item_id = item_id
        head = item.get("input" if kind == "custom_tool_call" else "arguments")
        slot.head = head if isinstance(head, str) else ""
        self.slots.append(slot)
        self.by_index[index] = slot
        if isinstance(item_id, str):
            self.by_id[item_id] = slot

    def target(self, index: object, item_id: object) -> FoldSlot | None:
        if isinstance(item_id, str) and item_id in self.by_id:
            return self.by_id[item_id]
        return self.by_index.get(index) if type(index) is int else None

    def fragment(self, n: int, index: object, item_id: object, text: str) -> None:
        slot = self.target(index, item_id)
        if slot is not None:
            slot.parts.append(text)
            slot.fragments += 1
            slot.last = n

    def done(self, n: int, index: object, item_id: object, value: object) -> None:
        """A `.done` event's whole value (these clients ignore it)."""


class DeltasOnly(Fold):
    """Builds each call from its deltas and ignores `.done`, `output_item.done` and the
    completed response, so arguments sent only in `.done` come out `""`.

    Stands for the LiteLLM Responses bridge (BerriAI/litellm#27144), earendil-works/pi#2745
    and Wei-Shaw/sub2api#6629."""

    name = "deltas-only"


class CurrentItem(Fold):
    """Sends every delta to the call item added last, whatever its item_id and
    output_index say, so interleaved parallel calls pile into the last one.

    Stands for can1357/oh-my-pi#1880 (llama.cpp's `/v1/responses`) and openai/codex#30876."""

    name = "current-item"

    def target(self, index: object, item_id: object) -> FoldSlot | None:
        return self.slots[-1] if self.slots else None


class StrictDone(Fold):
    """Builds each call from its deltas and raises at a `.done` whose whole value differs
    from them, with the error kimi-code raises (its ChatProviderError's words).

    Stands for MoonshotAI/kimi-code#1455 (and Wei-Shaw/sub2api#7272's empty `.done`)."""

    name = "strict-done"

    def done(self, n: int, index: object, item_id: object, value: object) -> None:
        slot = self.target(index, item_id)
        if slot is None or self.error is not None or not isinstance(value, str):
            return
        built = slot.text()
        if value != built:
            self.error = StrategyError(
                "ChatProviderError: OpenAI Responses final function-call arguments for "
                f"stream index {_shown(slot.item_id)} do not match the streamed argument "
                "deltas.",
                n,
                f".done of output {slot.index} says {cut(quote(value), 40)}, the deltas "
                f"built {cut(quote(built), 40)}",
            )


def _shown(item_id: object) -> str:
    """An item id as a JavaScript template string shows it (kimi-code's message)."""
    return item_id if isinstance(item_id, str) else quote(item_id)
