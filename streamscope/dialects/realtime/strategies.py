"""The clients people ship for the OpenAI Realtime API, each a fold over the same events.

Each differs from robust in the one way the trap it stands for says. The engine hands
them the events already read: `fragment` for an argument delta, `event` for any other
event object; `openai-sdk` (sdk_model.py) reads the frames itself, as the openai
package's client does.
"""

from __future__ import annotations

import copy
from typing import Any

from ...core.calls import Call, Slot
from .. import typed
from .robust import ADDED, ARGS_DONE, CALL, CREATED, DELTA, ITEM_DONE, RESPONSE_DONE


def _text(value: object) -> object:
    """A value as such a client holds it: as sent, "" when none came."""
    return "" if value is None else value


class FoldSlot(Slot):
    __slots__ = ("item_id", "head", "stated", "open")
    item_id: object
    head: str  # the added item's own text
    stated: object  # a whole value stated (None: none)
    open: bool

    def text(self) -> str:
        return self.head + "".join(self.parts)

    def arguments(self) -> object:
        stated = self.stated
        return stated if isinstance(stated, str) and stated else self.text()

    def to_call(self) -> Call:
        call = super().to_call()
        call.type = CALL
        call.item_id = self.item_id
        return call


def _slot(response: int, index: object, n: int, item: dict[Any, Any], item_id: object) -> FoldSlot:
    slot = FoldSlot(response, index, n, _text(item.get("call_id")), _text(item.get("name")))
    slot.item_id = item_id
    head = item.get("arguments")
    slot.head = head if isinstance(head, str) else ""
    slot.stated = None
    slot.open = True
    return slot


class Fold(typed.Fold[FoldSlot]):
    """Base: what every fold tracks, the response under way (0 first)."""

    def __init__(self) -> None:
        super().__init__()
        self.slots: list[FoldSlot] = []
        self.responses = 0

    @property
    def response(self) -> int:
        return max(self.responses - 1, 0)

    def copy(self) -> Fold:
        # (no deepcopy: the values a fold keeps are parsed JSON, shared, never changed; a
        # deep copy of one nested 1,000 levels would exceed Python's recursion limit)
        new = copy.copy(self)
        memo: dict[Any, Any] = {}
        new.slots = [s.__deepcopy__(memo) for s in self.slots]
        self._copied(new, memo)
        return new

    def _copied(self, new: Any, memo: dict[Any, Any]) -> None:
        """The fold's own maps, in the copy `new` (`memo`: each slot's copy by id)."""

    def fragment(self, n: int, index: object, item_id: object, text: str) -> None:
        """An argument delta (`text` a string)."""

    def event(self, n: int, kind: object, p: dict[Any, Any]) -> None:
        """Any other event object."""
        if kind == CREATED:
            self.responses += 1


class EveryDone(Fold):
    """Runs a call at every done event that carries one: `response.function_call_arguments
    .done`, `response.output_item.done` and each function_call of `response.done`'s
    output, so a call the server states done three times (as it does) runs three times.
    Each run is a call here, in the order they ran.

    Stands for openai/openai-realtime-api-beta#31 ("Tool is called repeatedly") and
    livekit/agents#2223 (function_tools_executed more than once per call)."""

    name = "every-done"

    def __init__(self) -> None:
        super().__init__()
        # item_id -> the (call_id, name) it was added with
        self.added: dict[str, tuple[object, object]] = {}

    def _copied(self, new: Any, memo: dict[Any, Any]) -> None:
        new.added = dict(self.added)

    def _run(self, n: int, index: object, item: dict[Any, Any], item_id: object) -> None:
        slot = _slot(self.response, index, n, item, _text(item_id))
        slot.stated = item.get("arguments")
        slot.open = False
        self.slots.append(slot)

    def event(self, n: int, kind: object, p: dict[Any, Any]) -> None:
        super().event(n, kind, p)
        item = p.get("item")
        if kind == ADDED and isinstance(item, dict) and isinstance(item.get("id"), str):
            self.added[item["id"]] = (item.get("call_id"), item.get("name"))
        elif kind == ARGS_DONE:
            item_id = p.get("item_id")
            known = self.added.get(item_id) if isinstance(item_id, str) else None
            added_call_id, added_name = known or (None, None)
            # (the beta API's .done names no function: the added item does)
            name = p["name"] if isinstance(p.get("name"), str) else added_name
            call_id = p.get("call_id", added_call_id)
            fields = {"call_id": call_id, "name": name, "arguments": p.get("arguments")}
            self._run(n, p.get("output_index"), fields, item_id)
        elif kind == ITEM_DONE and isinstance(item, dict) and item.get("type") == CALL:
            self._run(n, p.get("output_index"), item, item.get("id"))
        elif kind == RESPONSE_DONE:
            response = p.get("response")
            output = response.get("output") if isinstance(response, dict) else None
            for position, entry in enumerate(output if isinstance(output, list) else ()):
                if isinstance(entry, dict) and entry.get("type") == CALL:
                    self._run(n, position, entry, entry.get("id"))

    def call(self, slot: FoldSlot) -> Call:
        call = slot.to_call()
        call.arguments = _text(slot.stated)
        return call


class ItemIdOnly(Fold):
    """Keys calls by `item_id` and sends the item id back as the call's id: the `call_id`
    is never read, so every function_call_output names a call the server does not know
    ("Tool call ID ... not found in conversation", invalid_tool_call_id). Arguments are
    the deltas of that item_id (a delta without one is lost), or the whole value its
    `.done` or `output_item.done` states.

    Stands for the item-id-for-call-id mistake of Alishahryar1/free-claude-code#1189
    (Responses events, the same two ids) and the server's answer to it in
    livekit/agents#3344."""

    name = "item-id-only"

    def __init__(self) -> None:
        super().__init__()
        self.by_id: dict[str, FoldSlot | None] = {}  # None: an item that is no call

    def _copied(self, new: Any, memo: dict[Any, Any]) -> None:
        new.by_id = {k: None if v is None else memo[id(v)] for k, v in self.by_id.items()}

    def _find(self, n: int, index: object, item_id: object) -> FoldSlot | None:
        if not isinstance(item_id, str):
            return None
        if item_id not in self.by_id:  # calls[item_id] += delta: a call of its own
            slot = _slot(self.response, index, n, {}, item_id)
            self.slots.append(slot)
            self.by_id[item_id] = slot
        return self.by_id[item_id]

    def fragment(self, n: int, index: object, item_id: object, text: str) -> None:
        slot = self._find(n, index, item_id)
        if slot is not None:
            slot.parts.append(text)
            slot.fragments += 1
            slot.last = n

    def event(self, n: int, kind: object, p: dict[Any, Any]) -> None:
        super().event(n, kind, p)
        item = p.get("item")
        if kind == ADDED and isinstance(item, dict):
            item_id = item.get("id")
            if not isinstance(item_id, str):
                return
            if item.get("type") != CALL:
                self.by_id[item_id] = None
                return
            added = _slot(self.response, p.get("output_index"), n, item, item_id)
            self.slots.append(added)
            self.by_id[item_id] = added
        elif kind == DELTA:
            text = p.get("delta")
            if isinstance(text, str):
                self.fragment(n, p.get("output_index"), p.get("item_id"), text)
        elif kind == ARGS_DONE:
            slot = self._find(n, p.get("output_index"), p.get("item_id"))
            if slot is not None and slot.open:
                slot.stated = p.get("arguments")
                if not slot.name and isinstance(p.get("name"), str):
                    slot.name = p["name"]
        elif kind == ITEM_DONE and isinstance(item, dict) and item.get("type") == CALL:
            slot = self._find(n, p.get("output_index"), item.get("id"))
            if slot is not None and slot.open:
                slot.stated = item.get("arguments")
                if not slot.name:
                    slot.name = _text(item.get("name"))
                slot.open = False

    def call(self, slot: FoldSlot) -> Call:
        call = slot.to_call()
        call.id = slot.item_id  # the trap: the item id goes back as the call's id
        return call


class ResponseDoneOnly(Fold):
    """Takes the calls from `response.done`'s `output` alone, as the Realtime guide
    shows ("response.done will also have the complete data we need to call our
    function"); a server that leaves `output` empty or null (huggingface/speech-to-speech
    #416, fixed in #435) makes it run none, and a response that never ends runs none.

    Stands for the guide's pattern and the clients reported in speech-to-speech#416."""

    name = "response-done-only"

    def event(self, n: int, kind: object, p: dict[Any, Any]) -> None:
        super().event(n, kind, p)
        if kind != RESPONSE_DONE:
            return
        response = p.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        for position, entry in enumerate(output if isinstance(output, list) else ()):
            if isinstance(entry, dict) and entry.get("type") == CALL:
                slot = _slot(self.response, position, n, entry, entry.get("id"))
                slot.stated = entry.get("arguments")
                slot.open = False
                self.slots.append(slot)

    def call(self, slot: FoldSlot) -> Call:
        call = slot.to_call()
        call.arguments = _text(slot.stated)
        return call
