"""streamscope's own reading of an OpenAI Responses API stream (`robust`), and the anomaly
rules beside it.

A stream holds one response. `response.output_item.added` opens output item
`output_index`; a call is a `function_call` or `custom_tool_call` item, with two ids:
its item `id` (`fc_...`, what the deltas name as `item_id`) and its `call_id` (what the
tool output must echo, the call's `id` here). Its arguments (a custom call's input) are
the item's own text plus its deltas concatenated as sent; `.done`, `output_item.done`
and `response.completed`'s output state the whole value again. A delta finds its item
by `item_id`, else by `output_index`.

Where the deltas and a stated whole value disagree, robust takes the whole value the
server states last, as the SDK does, unless it is "" (a gateway that sends `.done`
empty): then it keeps the deltas. Both are reported (`args-done-mismatch`, or
`args-done-only` when the deltas carried nothing). Once `output_item.done` has closed an
item it is the item's own last word: what the final output says otherwise (arguments,
`call_id`, name) is reported, not taken. The final output names a call by its item `id`,
else (a gateway that rotates item ids) by its `call_id`.

An item that is not a call (a message, reasoning, a built-in tool's call) is followed as
far as its identity: an `id` or `call_id` that changes at its `output_item.done`, where the
openai SDK raises, is reported; so is a response id a lifecycle event changes, at the
first event that changes it.
"""

from __future__ import annotations

from typing import Any, final

from ...core import events as ev
from ...core.anomalies import AnomalyLog
from ...core.calls import Call, Slot
from ...core.events import FieldEvent
from ...core.frames import INVALID, Frame
from ...text import cut, json_type, quote
from ..typed import event_object, id_and_name, is_index, named_index

# (tuples: a `type` sent as a list or an object is compared, never hashed)
CALL_ITEMS = ("function_call", "custom_tool_call")
SEARCH_CALL = "tool_search_call"
ENDS = ("response.completed", "response.incomplete", "response.failed")
# delta and done events of a call's text, and the field each carries it in
DELTAS = ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta")
DONES = (
    ("response.function_call_arguments.done", "arguments"),
    ("response.custom_tool_call_input.done", "input"),
)


def done_field(kind: object) -> str | None:
    """The field a done event of a call's text carries it in; None for any other type."""
    return next((field for done, field in DONES if done == kind), None)


TEXTS = ("response.output_text.delta", "response.refusal.delta")
REASONING = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
WORDS = ("output", "response")  # a call's key and its container, in FieldEvent's words


# What a whole item may restate about a call: (key, kind, the call's attribute, what a
# change does to clients).
_IDENTITY = (
    (
        "call_id",
        "id-changed",
        "id",
        "the tool output must echo one of them; clients that key calls by call_id lose track",
    ),
    ("id", "id-changed", "item_id", "deltas that name the first item id no longer find it"),
    ("name", "name-changed", "name", "clients that dispatch at the item's start run another tool"),
)


def _field(item: dict[Any, Any]) -> str:
    """Where an item carries its text: a custom call's `input`, else `arguments`."""
    return "input" if item.get("type") == "custom_tool_call" else "arguments"


@final
class CallItem(Slot):
    """A call item being assembled: its deltas, and the whole values stated for it."""

    __slots__ = ("item_id", "freeform", "head", "stated", "stated_at", "open", "said", "whole")

    def __init__(self, index: int, frame: int, item: dict[Any, Any], log: AnomalyLog) -> None:
        what = f"output {index}'s"
        call_id, name = id_and_name(log, frame, item, ("call_id", "name"), what, 0, index)
        super().__init__(0, index, frame, call_id, name)
        self.type = item.get("type")
        self.item_id = item.get("id")
        self.freeform = self.type == "custom_tool_call"
        head = item.get(_field(item))
        self.head = head if isinstance(head, str) else ""  # the item's own text, at added
        self.stated: str | None = None  # the last whole value stated (.done, item done...)
        self.stated_at = 0
        self.open = True
        self.said = False  # a disagreement was reported
        self.whole = False  # first seen whole (output_item.done, the final output), never added

    def streamed(self) -> str:
        """The item's own text and its deltas, as sent."""
        return self.head + self.text()

    def arguments(self) -> object:
        streamed, stated = self.streamed(), self.stated
        if stated is None or stated == streamed:
            return streamed
        return streamed if stated == "" else stated

    def to_call(self) -> Call:
        call = super().to_call()
        call.item_id = self.item_id
        return call


class OtherItem:
    """An output item that is not a call: a message, reasoning, a built-in tool call."""

    __slots__ = ("kind", "open", "first", "item_id", "call_id", "client")

    def __init__(
        self, kind: object, frame: int, item_id: object = None, call_id: object = None
    ) -> None:
        self.kind = kind
        self.open = True
        self.first = frame
        self.item_id = item_id
        self.call_id = call_id  # a built-in tool call's, as added
        self.client = False  # a tool search the client runs: its output echoes the call_id


def client_search(item: dict[Any, Any]) -> bool:
    """A tool search the client runs (`"execution": "client"`): not a call robust reads (it
    has no name and its arguments are an object), but the client answers it by its
    `call_id` with a `tool_search_output`, as it answers a call."""
    return item.get("type") == SEARCH_CALL and item.get("execution") == "client"


Item = CallItem | OtherItem


class Robust:
    """The robust reading plus every per-frame anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log
        self.items: dict[int, Item] = {}  # by output_index
        self.by_id: dict[str, Item] = {}  # by item id
        self.calls: list[CallItem] = []  # in the order they began
        self.call_ids: dict[str, CallItem] = {}  # call_id -> the first call carrying it
        self.prev: CallItem | None = None  # the item the latest delta went to
        self.events: list[FieldEvent] | None = None  # set to a list to collect events
        self.seq: int | None = None  # the last sequence_number
        self.response_id: object = None  # the first a lifecycle event carries
        self.response_from = ""  # the event that carried it
        self.status: object = None  # completed, incomplete, failed
        self.status_frame = 0
        self.reason: object = None  # incomplete_details.reason
        self.done_frame = 0  # the frame of the response's end event
        self.error_payload: str | None = None
        self.content: list[str] = []
        self.reasoning: list[str] = []

    # -- frames -------------------------------------------------------------------------

    def fragment(self, n: int, p: dict[Any, Any], index: int, text: str) -> bool:
        """A plain argument delta of the item under way, in sequence: taken in a few steps
        when no rule has anything to say; False otherwise (the caller feeds the whole
        frame)."""
        item, seq, item_id = self.prev, p.get("sequence_number"), p.get("item_id")
        if (
            item is None
            or not text
            or self.items.get(index) is not item  # (a later item took its output index)
            or item_id != item.item_id
            or (
                item_id is not None
                and (type(item_id) is not str or self.by_id.get(item_id) is not item)
            )
            or not item.open
            or item.stated is not None
            or (
                seq is not None
                and (type(seq) is not int or self.seq is None or seq != self.seq + 1)
            )
        ):
            return False
        if seq is not None:
            self.seq = seq
        item.parts.append(text)
        item.fragments += 1
        item.built(n)
        return True

    def feed(self, frame: Frame) -> None:
        n, log = frame.number, self.log
        if frame.payload is INVALID and frame.data.strip() == "[DONE]":
            log.add(
                "event-unknown",
                n,
                "data: [DONE], Chat Completions' end marker, which the Responses API does not "
                "send: the openai SDK stops reading at it",
            )
            return
        payload = event_object(frame, log)
        if payload is None:
            return
        kind = payload.get("type")
        name = frame.event
        if name is not None and name != kind:
            log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"event: {cut(quote(name), 40)} carries data of type {cut(quote(kind), 40)}; "
                    "the openai SDK follows the data's type"
                ),
            )
        self._sequence(n, payload.get("sequence_number"))
        if kind in DELTAS:
            self._delta(n, payload)
        elif kind == "response.output_item.added":
            self._added(n, payload)
        elif (field := done_field(kind)) is not None:
            self._done(n, payload, field, str(kind))
        elif kind == "response.output_item.done":
            self._item_done(n, payload)
        elif kind in TEXTS or kind in REASONING:
            text = payload.get("delta")
            if isinstance(text, str) and text:
                (self.content if kind in TEXTS else self.reasoning).append(text)
                if self.events is not None:
                    op = ev.CONTENT if kind in TEXTS else ev.REASONING
                    self.events.append(FieldEvent(n, op, 0, None, "delta", None, text, -1, WORDS))
        elif kind in ENDS:
            self._end(n, payload, str(kind))
        elif kind in ("response.created", "response.in_progress", "response.queued"):
            response = payload.get("response")
            if isinstance(response, dict):
                self._response_identity(n, str(kind), response)
        elif kind == "error":
            error = payload.get("error", payload)
            message = error.get("message") if isinstance(error, dict) else error
            log.add(
                "provider-error",
                n,
                lambda: f"the provider sent an error in the stream: {cut(quote(message), 120)}",
            )
            self.error_payload = self.error_payload or str(message)
        elif not (isinstance(kind, str) and kind.startswith("response.")):
            log.add(
                "event-unknown",
                n,
                lambda: (
                    f"an event of type {cut(quote(kind), 40)}, which the Responses API does not "
                    "define: the openai SDK passes it on; clients that reject unknown events stop"
                ),
            )

    def _sequence(self, n: int, seq: object) -> None:
        if type(seq) is not int:
            return
        last = self.seq
        if last is not None and seq != last + 1:
            self.log.add(
                "sequence-disorder",
                n,
                lambda: (
                    f"sequence_number {seq} after {last}: "
                    + ("it goes back" if seq <= last else f"{seq - last - 1} skipped")
                    + "; clients that order or dedupe events by it drop or reorder them"
                ),
            )
        self.seq = seq

    def _response_identity(self, n: int, kind: str, response: dict[Any, Any]) -> None:
        """The response id a lifecycle event (created, queued, in_progress, or the end)
        carries: the first one that states one is the response's; any later one that
        carries another (GitHub Copilot's gateway gives each event a new one) is named
        there, where the openai SDK raises."""
        rid = response.get("id")
        held, said = self.response_id, self.response_from
        if not said:  # the first lifecycle event: its id (or none) is the snapshot's
            self.response_id, self.response_from = rid, kind
            return
        if rid == held:
            return
        self.log.add(
            "event-schema-violation",
            n,
            lambda: (
                f"{kind} carries "
                + (f"response id {cut(quote(rid), 40)}" if "id" in response else "no response id")
                + f" where {said} "
                + (f"said {cut(quote(held), 40)}" if held is not None else "carried none")
                + ": the openai SDK raises (lifecycle response identity changed); robust "
                "keeps the first"
            ),
        )

    def _index(self, n: int, payload: dict[Any, Any], what: str) -> int | None:
        return named_index(self.log, n, payload, "output_index", what)

    def _added(self, n: int, payload: dict[Any, Any]) -> None:
        index = self._index(n, payload, "response.output_item.added")
        item = payload.get("item")
        if index is None:
            return
        if not isinstance(item, dict):
            self.log.add(
                "event-schema-violation",
                n,
                f"response.output_item.added at output {index} carries no item object",
            )
            return
        if index in self.items:
            self.log.add(
                "event-schema-violation",
                n,
                f"output {index} is added again (first at frame {self.items[index].first}): "
                "the openai SDK raises; robust reads the new item there",
            )
        kind = item.get("type")
        if kind not in CALL_ITEMS:
            other = self.items[index] = OtherItem(kind, n, item.get("id"), item.get("call_id"))
            other.client = client_search(item)
            if isinstance(item.get("id"), str):
                self.by_id[item["id"]] = other
            return
        self._call(n, index, item)

    def _call(self, n: int, index: int, item: dict[Any, Any]) -> CallItem:
        call = CallItem(index, n, item, self.log)
        self.items[index] = call
        if isinstance(call.item_id, str):
            self.by_id[call.item_id] = call
        self.calls.append(call)
        cid = call.id
        if isinstance(cid, str) and cid:
            first = self.call_ids.setdefault(cid, call)
            if first is not call:
                self.log.add(
                    "id-reused",
                    n,
                    f"output {index} carries call_id {quote(cid)}, as output {first.index} did: "
                    "the tool outputs cannot tell them apart",
                    0,
                    index,
                )
        if self.events is not None:
            events = self.events
            events.append(FieldEvent(n, ev.NEW_CALL, 0, index, "", words=WORDS))
            for field, value in (
                ("type", call.type),
                ("item_id", call.item_id),
                ("call_id", call.id),
                ("name", call.name),
            ):
                events.append(FieldEvent(n, ev.SET, 0, index, field, None, value, -1, WORDS))
        return call

    def _target(self, n: int, payload: dict[Any, Any], what: str) -> Item | None:
        """The item a delta or done names: by item_id, else by output_index."""
        item_id, index = payload.get("item_id"), payload.get("output_index")
        found = self.by_id.get(item_id) if isinstance(item_id, str) else None
        at = self.items.get(index) if is_index(index) else None
        if found is None and at is None:
            self.log.add(
                "delta-unknown-item",
                n,
                lambda: (
                    f"a {what} for item {cut(quote(item_id), 40)} at output {cut(quote(index), 20)}, "
                    "which no response.output_item.added opened: clients that look the item up "
                    "crash or drop it (the openai SDK raises); robust skips it"
                ),
                0,
                index if is_index(index) else None,
            )
            return None
        if found is not None and at is not None and found is not at:
            self.log.add(
                "event-schema-violation",
                n,
                f"a {what} names item {cut(quote(item_id), 40)} (output {getattr(found, 'index', '?')}) "
                f"and output {index}, another item: robust follows the item_id",
            )
        return found if found is not None else at

    def _delta(self, n: int, payload: dict[Any, Any]) -> None:
        what = "delta"
        item = self._target(n, payload, what)
        if item is None:
            return
        text = payload.get("delta")
        log = self.log
        if type(item) is not CallItem:
            log.add(
                "event-schema-violation",
                n,
                f"an argument delta for a {cut(quote(item.kind), 30)} item: robust skips it",
            )
            return
        if not isinstance(text, str):
            log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"the delta of output {item.index} is "
                    + (f"a JSON {json_type(text)}" if "delta" in payload else "missing")
                    + ", not a string: robust skips it"
                ),
                0,
                item.index,
            )
            return
        if not item.open:
            log.add(
                "event-schema-violation",
                n,
                f"a delta for output {item.index} after its response.output_item.done: robust "
                "adds it to that item",
                0,
                item.index,
            )
        if text == "":
            log.add(
                "delta-empty",
                n,
                f'an argument delta of output {item.index} is "": bridges that require text in '
                "each delta stop on it",
                0,
                item.index,
            )
        prev = self.prev
        if prev is not None and prev is not item and item.fragments > 0:
            log.add(
                "items-interleaved",
                n,
                f"deltas of outputs {prev.index} and {item.index} alternate: clients that send "
                "deltas to the item added last mix them up",
            )
        self.prev = item
        item.fragments += 1
        item.built(n)
        if text:
            item.parts.append(text)
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.APPEND, 0, item.index, _word(item), None, text, -1, WORDS)
            )

    def _state(
        self, n: int, item: CallItem, value: object, where: str, binding: bool = True
    ) -> None:
        """A whole value stated for `item` (`where`: the event that stated it). It is taken
        when `binding` (the item is not closed yet), else only compared."""
        if not isinstance(value, str):
            if value is not None:
                self.log.add(
                    "event-schema-violation",
                    n,
                    f"{where} states the {_word(item)} of output {item.index} as a JSON "
                    f"{json_type(value)}, not a string: robust ignores it",
                    0,
                    item.index,
                )
            return
        held = item.streamed() if binding else item.arguments()
        if value != held and not item.said and (held or not value or not binding):
            item.said = True
            if not binding:
                taken = "keeps what response.output_item.done stated, the item's own last word"
            elif value == "":
                taken = "keeps the deltas"
            else:
                taken = "takes the stated value, as the SDK does"
            built = "the deltas built" if binding else "the item was done with"
            self.log.add(
                "args-done-mismatch",
                n,
                lambda: (
                    f"{where} states the {_word(item)} of output {item.index} as "
                    f"{cut(quote(value), 50)}, {built} {cut(quote(held), 50)}: strict clients "
                    f"abort (the final arguments do not match the deltas); robust {taken}"
                ),
                0,
                item.index,
            )
        if not binding:
            return
        if item.stated is None:
            item.stated_at = n  # where the whole value was first stated
        item.stated = value
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.SET, 0, item.index, _word(item), None, value, -1, WORDS)
            )

    def _identity(
        self, n: int, item: CallItem, whole: dict[Any, Any], where: str, binding: bool
    ) -> None:
        """The call_id and name a whole item states: a change is reported, and taken
        while the item is not closed (output_item.done states the call as it stands)."""
        at_done = where == "response.output_item.done"
        for key, kind, attr, why in _IDENTITY:
            if key not in whole:
                continue
            value, held = whole[key], getattr(item, attr)
            if value == held or value is None:
                continue
            took = binding and isinstance(value, str)
            self.log.add(
                kind,
                n,
                lambda key=key, value=value, held=held, took=took, why=why: (  # type: ignore[misc]
                    f"{where} gives output {item.index} {key} {cut(quote(value), 40)}, where "
                    f"it was {cut(quote(held), 40)}: {why}"
                    # (the SDK checks an item's identity at its own done, not the final output)
                    + (" (the openai SDK raises)" if at_done and key == "call_id" else "")
                    + "; robust takes "
                    + ("the new one, as the item's own last word" if took else "the earlier one")
                ),
                0,
                item.index,
            )
            if took:
                setattr(item, attr, value)
                if attr == "item_id":
                    self.by_id[value] = item
                if self.events is not None:
                    self.events.append(
                        FieldEvent(n, ev.SET, 0, item.index, key, None, value, -1, WORDS)
                    )

    def _renamed(self, n: int, index: int, held: object, value: object, where: str) -> None:
        """An item whose id changes between its added and its done."""
        if value is not None and held is not None and value != held:
            self.log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"{where} gives output {index} item id {cut(quote(value), 40)}, where it was "
                    f"added as {cut(quote(held), 40)}: the openai SDK raises (completed output "
                    "item identity changed)"
                ),
                0,
                index,
            )

    def _recalled(
        self, n: int, index: int, known: OtherItem, item: dict[Any, Any], where: str
    ) -> None:
        """An item that is not a call whose call_id changes between its added and its done:
        the openai SDK raises on it as on a call's. A tool search the client runs is
        answered by that call_id, so two of them are a call's changed id (`id-changed`);
        for any other item the client's answer is not ours to say, and the change is a
        field that does not fit (`event-schema-violation`)."""
        value, held = item.get("call_id"), known.call_id
        if value is None or value == held:
            return
        search = known.client or client_search(item)
        why = (
            "the tool_search_output must echo one of them, and clients that key the search by "
            "call_id lose track"
            if search
            else "clients that key the item by call_id lose track"
        )
        self.log.add(
            "id-changed" if search else "event-schema-violation",
            n,
            lambda: (
                f"{where} gives output {index} ({cut(quote(known.kind), 30)}) call_id "
                f"{cut(quote(value), 40)}, where it was added with {cut(quote(held), 40)}: {why} "
                "(the openai SDK raises: completed output item identity changed)"
            ),
            0,
            index,
        )

    def _done(self, n: int, payload: dict[Any, Any], field: str, kind: str) -> None:
        item = self._target(n, payload, "done")
        if type(item) is CallItem:
            if item.open:
                item.built(n)  # it states the whole value
            self._state(n, item, payload.get(field), kind, item.open)

    def _item_done(self, n: int, payload: dict[Any, Any]) -> None:
        index = self._index(n, payload, "response.output_item.done")
        item = payload.get("item")
        if index is None or not isinstance(item, dict):
            return
        known = self.items.get(index)
        if known is None and item.get("type") in CALL_ITEMS:
            known = self._call(n, index, item)  # a call stated whole, never added
            known.whole = True
        if known is None:
            return
        was_open, known.open = known.open, False
        if type(known) is CallItem and was_open:
            known.built(n)  # the done closes the call, and may restate it
        if type(known) is OtherItem:
            where = "response.output_item.done"
            self._renamed(n, index, known.item_id, item.get("id"), where)
            self._recalled(n, index, known, item, where)
        if type(known) is CallItem:
            where = "response.output_item.done"
            self._identity(n, known, item, where, was_open)
            self._state(n, known, item.get(_field(item)), where, was_open)
            if self.events is not None:
                self.events.append(FieldEvent(n, ev.STOP, 0, index, "", words=WORDS))

    def _end(self, n: int, payload: dict[Any, Any], kind: str) -> None:
        response = payload.get("response")
        problems = []
        if not isinstance(response, dict):
            problems.append(
                "no response object"
                if response is None
                else f"a response that is a JSON {json_type(response)}"
            )
            response = {}
        for key, want in (("status", str), ("output", list)):
            if key in response and not isinstance(response[key], want):
                problems.append(f"{key} a JSON {json_type(response[key])}")
        if problems:
            self.log.add(
                "event-schema-violation",
                n,
                f"{kind} with {', '.join(problems)}: clients that read the final response fail",
            )
        self._response_identity(n, kind, response)
        self.status = response.get("status", kind.rsplit(".", 1)[1])
        self.status_frame = self.done_frame = n
        details = response.get("incomplete_details")
        self.reason = details.get("reason") if isinstance(details, dict) else None
        if kind == "response.failed":
            error = response.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            self.log.add(
                "provider-error",
                n,
                lambda: f"the response failed: {cut(quote(message), 120)}",
            )
            self.error_payload = self.error_payload or str(message)
        output = response.get("output")
        by_item = {c.item_id: c for c in self.calls if isinstance(c.item_id, str)}
        by_call: dict[str, CallItem] = {}
        for c in self.calls:
            if isinstance(c.id, str) and c.id:
                by_call.setdefault(c.id, c)
        stated: set[int] = set()  # the calls the output states
        for position, item in enumerate(output if isinstance(output, list) else ()):
            if not isinstance(item, dict) or item.get("type") not in CALL_ITEMS:
                continue
            item_id, cid = item.get("id"), item.get("call_id")
            known = by_item.get(item_id) if isinstance(item_id, str) else None
            if known is None and isinstance(cid, str) and cid in by_call:
                # an item id that changed (GitHub Copilot's gateway rotates them): the call
                # is still the one with its call_id, as the SDK knows a call
                same = by_call[cid]
                if id(same) not in stated and same.type == item.get("type"):
                    known = same
            binding = known is None or known.open  # an item done keeps its own last word
            if known is None:  # a call only the final output holds
                known = self._call(n, position, item)
                known.whole = True
            if binding:
                known.built(n)  # the output states the call as it stands
            where = f"{kind}'s output"
            self._identity(n, known, item, where, binding)
            self._state(n, known, item.get(_field(item)), where, binding)
            known.open = False
            stated.add(id(known))
        if isinstance(output, list):
            for call in self.calls:
                if id(call) not in stated:
                    self.log.add(
                        "final-output-mismatch",
                        n,
                        f"{kind}'s output leaves out the call at output {call.index} "
                        f"({cut(quote(call.name), 30)}) the stream carried: clients that take the "
                        "final response's output (the openai SDK's get_final_response) lose it; "
                        "robust keeps it",
                        0,
                        call.index,
                    )
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.FINISH, 0, None, "status", None, self.status, -1, WORDS)
            )

    # -- the state, for the faces ------------------------------------------------------

    def results(self) -> list[Call]:
        return [c.to_call() for c in self.calls]

    def copy(self, log: AnomalyLog) -> Robust:
        new = Robust.__new__(Robust)
        slots = {id(c): c.__deepcopy__({}) for c in self.calls}

        def mapped(item: Item) -> Item:
            if type(item) is CallItem:
                return slots[id(item)]
            other = OtherItem(item.kind, item.first, item.item_id, item.call_id)
            other.open, other.client = item.open, item.client
            return other

        others: dict[int, Item] = {}

        def one(item: Item) -> Item:
            key = id(item)
            if key not in others:
                others[key] = mapped(item)
            return others[key]

        new.log = log
        new.items = {k: one(v) for k, v in self.items.items()}
        new.by_id = {k: one(v) for k, v in self.by_id.items()}
        new.calls = [slots[id(c)] for c in self.calls]
        new.call_ids = {k: slots[id(c)] for k, c in self.call_ids.items()}
        new.prev = slots[id(self.prev)] if self.prev is not None else None
        new.events = None
        for name in (
            "seq",
            "response_id",
            "response_from",
            "status",
            "status_frame",
            "reason",
            "done_frame",
            "error_payload",
        ):
            setattr(new, name, getattr(self, name))
        new.content, new.reasoning = list(self.content), list(self.reasoning)
        return new


def _word(item: CallItem) -> str:
    return "input" if item.freeform else "arguments"
