"""The client strategies of the contract: folds over the same deltas, one per real client.

Each strategy sees every JSON chunk (`feed`) and answers with its calls or the
exception it raised. `robust`, streamscope's own reading, lives in robust.py
because it also names the anomalies; `openai-sdk` lives in sdk_model.py.
Arguments are kept as lists of fragments and joined only when asked, so a
strategy costs the same per frame at frame 80,000 as at frame 10.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...core.calls import NOTHING, Call, Slot, StrategyError, show_dirty
from ...core.frames import INVALID, Frame
from ...core.shared import ChunkedList, LayeredDict
from .run import Run


def _custom(delta: object) -> dict[Any, Any] | None:
    """A custom (freeform) call's `custom: {name, input}` read as `{name, arguments}`."""
    if not isinstance(delta, dict) or delta.get("function") is not None:
        return None
    custom = delta.get("custom")
    if not isinstance(custom, dict):
        return None
    out = {}
    if "name" in custom:
        out["name"] = custom["name"]
    if "input" in custom:
        out["arguments"] = custom["input"]
    return out


def _fn(delta: dict[Any, Any]) -> dict[Any, Any]:
    """The delta's function object, or its custom object read the same way."""
    fn = delta.get("function")
    if isinstance(fn, dict):
        return fn
    return _custom(delta) or {}


def _take_nonempty(slot: Slot, delta: dict[Any, Any]) -> None:
    """type and name from non-empty strings (last wins); arguments concatenated."""
    fn = _fn(delta)
    value = delta.get("type")
    if isinstance(value, str) and value:
        slot.type = value
    value = fn.get("name")
    if isinstance(value, str) and value:
        slot.name = value
    if "arguments" in fn:
        slot.add_arguments(fn["arguments"])


class CSlot(Slot):
    """A client strategy's slot: where its holder keeps it, so a copy on write (`own`)
    puts the copy there."""

    __slots__ = ("seat", "key")

    def __init__(self, key: Any, seat: int, *args: Any) -> None:
        super().__init__(*args)
        self.key = key  # its key in the strategy's map of slots
        self.seat = seat  # its position in the strategy's `slots`


class Strategy:
    """Base: per-choice slots in the order their calls began.

    Copies share their slots (copy on write): a strategy changes only the slots of its
    own generation (`gen`, renewed by every copy and `seal`), and copies any other slot
    into its own lists before it first changes it (`own`). So a copy costs its lists of
    references, not its calls, and a slot not of the generation never changes again: its
    Call is made once (`Slot.shown`)."""

    name = ""

    def __init__(self) -> None:
        self.slots: ChunkedList[CSlot] = ChunkedList()
        self.error: StrategyError | None = None
        self.gen = object()
        # Per seat, the Call last shown; `_dirty`: the seats where it may not be the
        # slot's (new, copied to change, or of this generation). A frame's calls are this
        # list copied with its dirty seats made again: at 20,000 calls a step back made
        # every Call's lookup again, 10 ms a strategy.
        self._calls: ChunkedList[Call | None] = ChunkedList()
        self._dirty: set[int] = set()

    def _keyed(self) -> LayeredDict[Any, CSlot]:
        """The strategy's map of its slots by key."""
        raise NotImplementedError

    def _new_slot(self, key: Any, *args: Any) -> CSlot:
        slot = CSlot(key, len(self.slots), *args)
        slot.owner = self.gen
        self._dirty.add(slot.seat)
        self.slots.append(slot)
        self._calls.append(None)
        self._keyed()[key] = slot
        return slot

    def own(self, slot: CSlot) -> CSlot:
        """`slot`, to change: copied first if it is shared with a copy."""
        if slot.owner is self.gen:
            return slot
        new = slot.clone(self.gen)
        self.slots[slot.seat] = new
        self._dirty.add(slot.seat)
        self._keyed()[slot.key] = new
        return new

    def seal(self) -> None:
        """From here on, the slots as they are stay as they are (a view was made of them):
        a change copies the slot first."""
        self.gen = object()

    def feed(self, frame: Frame) -> None:
        if self.error is not None or not isinstance(frame.payload, dict):
            return
        choices = frame.payload.get("choices")
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                c = choice.get("index", 0)
                for entry in calls:
                    if isinstance(entry, dict):
                        self.tool(frame.number, c if isinstance(c, int) else 0, entry)

    def tool(self, frame: int, choice: int, delta: dict[Any, Any]) -> None:
        raise NotImplementedError

    def fast_args(self, frame: int, index: int, text: str) -> bool:
        """A plain argument fragment for an existing call at choice 0 / `index`.

        Returns False when this strategy needs the whole frame (`feed`) instead.
        """
        try:
            slot = self._fast_slot(index)
        except KeyError:
            return False
        if slot.value is not NOTHING:
            return False
        slot = self.own(slot)
        slot.parts.append(text)
        slot.fragments += 1
        slot.last = frame
        return True

    def fast_content(self, frame: int, text: str) -> bool:
        """A plain content fragment at choice 0: no strategy here accumulates content."""
        return True

    def extend(self, run: Run) -> None:
        """The plain fragments taken since `fast_args` / `fast_content` accepted their call
        (or the content) and nothing else happened."""
        for index, texts in run.args.items():
            slot = self.own(self._fast_slot(index))
            slot.parts.extend(texts)
            slot.fragments += len(texts)
            slot.last = run.lasts[index]

    def _fast_slot(self, index: int) -> CSlot:
        """The slot a plain fragment for `index` goes to (KeyError: none, take the frame)."""
        raise KeyError(index)

    def calls(self) -> list[Call]:
        self._dirty = show_dirty(self.slots, self._calls, self._dirty, self.gen)
        return self._calls.tolist()  # type: ignore[return-value]  # (no seat is None now)

    def result(self) -> list[Call] | StrategyError:
        return self.error if self.error is not None else self.calls()

    def copy(self) -> Strategy:
        """A copy that shares the slots (see the class): its lists and maps are its own.
        The Calls shown are brought up to date first, so the copies of a replay's
        snapshot (a step back resumes from one) show them without making them again."""
        self._dirty = show_dirty(self.slots, self._calls, self._dirty, self.gen, changing=False)
        new = copy.copy(self)
        for name, value in list(vars(new).items()):
            if isinstance(value, (list, dict, set, ChunkedList, LayeredDict)):
                setattr(new, name, value.copy())
        self.gen, new.gen = object(), object()
        return new


class IndexKeyed(Strategy):
    """Key by (choice, index); subclasses decide which field values are taken."""

    def __init__(self) -> None:
        super().__init__()
        self.by_key: LayeredDict[tuple[Any, ...], CSlot] = LayeredDict()

    def _keyed(self) -> LayeredDict[Any, CSlot]:
        return self.by_key

    def slot(self, frame: int, choice: int, delta: dict[Any, Any]) -> CSlot:
        index = delta.get("index")
        key = (choice, index if isinstance(index, (int, str, type(None))) else repr(index))
        slot = self.by_key.get(key)
        slot = self._new_slot(key, choice, index, frame, "", "") if slot is None else self.own(slot)
        slot.fragments += 1
        slot.last = frame
        return slot

    def _fast_slot(self, index: int) -> CSlot:
        return self.by_key[(0, index)]


class Guarded(IndexKeyed):
    """Set id / name / type from any non-empty string, last one wins (crow-cli, seed section 5)."""

    name = "guarded"

    def tool(self, frame: int, choice: int, delta: dict[Any, Any]) -> None:
        slot = self.slot(frame, choice, delta)
        value = delta.get("id")
        if isinstance(value, str) and value:
            slot.id = value
        _take_nonempty(slot, delta)


class Naive(IndexKeyed):
    """Overwrite id / name / type whenever the key is present, even "" or null (seed section 2)."""

    name = "naive"

    def tool(self, frame: int, choice: int, delta: dict[Any, Any]) -> None:
        slot = self.slot(frame, choice, delta)
        fn = _fn(delta)
        if "id" in delta:
            slot.id = delta["id"]
        if "type" in delta:
            slot.type = delta["type"]
        if "name" in fn:
            slot.name = fn["name"]
        if "arguments" in fn:
            slot.add_arguments(fn["arguments"])


class ById(Strategy):
    """Key by the delta's id, else by the last non-empty id of the choice (seed section 8)."""

    name = "by-id"

    def __init__(self) -> None:
        super().__init__()
        self.by_key: LayeredDict[tuple[Any, ...], CSlot] = LayeredDict()
        self.last_id: dict[int, str] = {}

    def _keyed(self) -> LayeredDict[Any, CSlot]:
        return self.by_key

    def tool(self, frame: int, choice: int, delta: dict[Any, Any]) -> None:
        value = delta.get("id")
        if isinstance(value, str) and value:
            key = value
            self.last_id[choice] = value
        else:
            key = self.last_id.get(choice, "")
        slot = self.by_key.get((choice, key))
        if slot is None:
            slot = self._new_slot((choice, key), choice, delta.get("index"), frame, key, "")
        else:
            slot = self.own(slot)
        slot.fragments += 1
        slot.last = frame
        _take_nonempty(slot, delta)

    def _fast_slot(self, index: int) -> CSlot:
        return self.by_key[(0, self.last_id.get(0, ""))]

    def extend(self, run: Run) -> None:
        # every plain fragment goes to the call of the last id, whatever its index
        if run.order:
            slot = self.own(self._fast_slot(0))
            slot.parts.extend(run.order)
            slot.fragments += len(run.order)
            slot.last = run.args_last


class APIError(Exception):
    """Stands for openai.APIError (reported by name, like every exception here)."""


def _attr(obj: object, name: str) -> object:
    """Attribute access as on the openai package's lenient models: missing is None."""
    if isinstance(obj, dict):
        return obj.get(name)
    raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")


class OpenAIDocs(Strategy):
    """The function-calling guide's snippet, run on the SDK's chunk objects:

        for chunk in stream:
            for tool_call in chunk.choices[0].delta.tool_calls or []:
                index = tool_call.index
                if index not in final_tool_calls:
                    final_tool_calls[index] = tool_call
                final_tool_calls[index].function.arguments += tool_call.function.arguments

    The first delta is stored and then appended to itself, so opener arguments count
    twice; only the first choice is read. A custom call is read the same way, through
    `custom.name` / `custom.input` (the contract's reading of custom calls). Its exceptions are Python's own, raised on the same types. It reads the
    stream through the SDK, so it stops at [DONE] and raises on a non-JSON payload.
    """

    name = "openai-docs"

    def __init__(self) -> None:
        super().__init__()
        self.final: LayeredDict[tuple[Any, ...], CSlot] = LayeredDict()
        # per slot seat, the stored opener's function object (any value the chunk sent;
        # read, never changed: copies share it)
        self.openers: ChunkedList[object] = ChunkedList()
        self.done = False

    def _keyed(self) -> LayeredDict[Any, CSlot]:
        return self.final

    def feed(self, frame: Frame) -> None:
        if self.error is not None or self.done:
            return
        if frame.payload is INVALID:
            if frame.data.startswith("[DONE]"):
                self.done = True
                return
            try:
                json.loads(frame.data)
            except (ValueError, RecursionError) as exc:  # what the SDK's json.loads raises
                self.error = StrategyError.from_exception(exc, frame.number)
            return
        payload = frame.payload
        try:
            error = payload.get("error") if isinstance(payload, dict) else None
            if error:  # the SDK's Stream raises before the snippet sees the chunk
                message = error.get("message") if isinstance(error, dict) else None
                raise APIError(
                    message
                    if message and isinstance(message, str)
                    else "An error occurred during streaming"
                )
            # `chunk.choices[0]`: the snippet reads the first choice only (and a usage-only
            # chunk with no choices makes it raise IndexError)
            choice = _attr(payload, "choices")[0]  # type: ignore[index]
            calls = _attr(_attr(choice, "delta"), "tool_calls") or []
            c = _attr(choice, "index")
            for tool_call in calls:  # type: ignore[attr-defined]
                self._one(frame.number, c if isinstance(c, int) else 0, tool_call)
        except Exception as exc:  # the snippet's own failure, reported with its frame
            self.error = StrategyError.from_exception(exc, frame.number)

    def _one(self, frame: int, choice: int, tool_call: object) -> None:
        index = _attr(tool_call, "index")
        hash(index)  # an unhashable index fails `index not in final` as in Python
        key = (choice, index)
        slot = self.final.get(key)
        custom = _custom(tool_call)  # the snippet adapted to custom calls reads `custom.input`
        if slot is None:
            fn = custom if custom is not None else _attr(tool_call, "function")
            slot = self._new_slot(key, choice, index, frame, _attr(tool_call, "id"))
            self.openers.append(fn)  # (at slot.seat: the slot was the last made)
            slot.type = _attr(tool_call, "type")
            slot.name = _attr(fn, "name") if isinstance(fn, dict) else None
            held = _attr(fn, "arguments")  # read from the stored object, as Python would
            slot.value = held if not isinstance(held, str) else NOTHING
            if isinstance(held, str):
                slot.parts.append(held)
        else:
            slot = self.own(slot)
        # `final[index].function.arguments += tool_call.function.arguments`
        stored_fn = self.openers[slot.seat]
        _attr(stored_fn, "arguments")
        right = _attr(custom if custom is not None else _attr(tool_call, "function"), "arguments")
        if slot.value is NOTHING and isinstance(right, str):
            slot.parts.append(right)
        else:
            left = "" if slot.value is NOTHING else slot.value
            if type(left) is list:  # grown in place as the snippet grows its own: a copy,
                left = list(left)  # since the frame's list is every strategy's to read
            left += right  # type: ignore[operator]  # raises exactly as the snippet would
            slot.parts, slot.value = [], left
        slot.fragments += 1
        slot.last = frame

    def _fast_slot(self, index: int) -> CSlot:
        return self.final[(0, index)]

    def extend(self, run: Run) -> None:
        if self.error is None and not self.done:
            super().extend(run)

    def fast_args(self, frame: int, index: int, text: str) -> bool:
        if self.error is not None or self.done:
            return True  # stopped: nothing more to do
        slot = self.final.get((0, index))
        if slot is None or not isinstance(self.openers[slot.seat], dict):
            return False
        return super().fast_args(frame, index, text)
