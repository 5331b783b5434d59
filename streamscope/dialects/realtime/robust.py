"""streamscope's own reading of an OpenAI Realtime stream (`robust`), and the anomaly rules
beside it.

A stream is one turn of a session: a response, from `response.created` to
`response.done`, with the session's events that came with it (a saved file of a whole
session's server events holds several responses, read in order, each call under its
response's number). `response.output_item.added` opens output item `output_index`; a
call is a `function_call` item with two ids: its item `id` (`item_...`, what the
argument events name as `item_id`) and its `call_id` (what the client's
`function_call_output` must echo, the call's `id` here). Its arguments are the item's own
text plus its `response.function_call_arguments.delta` events concatenated as sent;
`response.function_call_arguments.done`, `response.output_item.done` and
`response.done`'s `output` state the whole value again. An argument event finds its item
by `item_id`, else by `output_index` within the response.

Where the deltas and a stated whole value disagree, robust takes the whole value the
server states last (the server's own record of the item), unless it is "" (a bridge that
sends `.done` empty): then it keeps the deltas. Once `output_item.done` has closed an item
it is the item's own last word: what `response.done`'s output says otherwise is reported,
not taken. The beta API's event names (`response.text.delta`, `response.audio_transcript
.delta`) read as the GA names (`response.output_text.delta`,
`response.output_audio_transcript.delta`); the text of a response is its text, or the
transcript of its audio.
"""

from __future__ import annotations

from typing import Any, final

from ...core import events as ev
from ...core.anomalies import AnomalyLog
from ...core.calls import Call, Slot
from ...core.events import FieldEvent
from ...core.frames import Frame
from ...text import cut, json_type, quote
from ..typed import event_object, id_and_name, is_index, named_index

CALL = "function_call"
CREATED, RESPONSE_DONE = "response.created", "response.done"
ADDED, ITEM_DONE = "response.output_item.added", "response.output_item.done"
DELTA = "response.function_call_arguments.delta"
ARGS_DONE = "response.function_call_arguments.done"
# the text a response says: GA's names, then the beta API's; an audio answer's transcript
TEXTS = (
    "response.output_text.delta",
    "response.text.delta",
    "response.output_audio_transcript.delta",
    "response.audio_transcript.delta",
)
# Every server event the openai package's realtime types define (openai 3.57: GA's
# RealtimeServerEvent and the beta API's): the ones robust reads above, and these, which
# carry nothing of a call.
QUIET = frozenset(
    (
        "conversation.created",
        "conversation.item.added",
        "conversation.item.created",
        "conversation.item.deleted",
        "conversation.item.done",
        "conversation.item.input_audio_transcription.completed",
        "conversation.item.input_audio_transcription.delta",
        "conversation.item.input_audio_transcription.failed",
        "conversation.item.input_audio_transcription.segment",
        "conversation.item.retrieved",
        "conversation.item.truncated",
        "input_audio_buffer.cleared",
        "input_audio_buffer.committed",
        "input_audio_buffer.dtmf_event_received",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.timeout_triggered",
        "mcp_list_tools.completed",
        "mcp_list_tools.failed",
        "mcp_list_tools.in_progress",
        "output_audio_buffer.cleared",
        "output_audio_buffer.started",
        "output_audio_buffer.stopped",
        "rate_limits.updated",
        "response.audio.delta",
        "response.audio.done",
        "response.audio_transcript.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_call.in_progress",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.output_audio.delta",
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.output_text.done",
        "response.text.done",
        "session.created",
        "session.updated",
        "transcription_session.updated",
    )
)
WORDS = ("output", "response")  # a call's key and its container, in FieldEvent's words

# What an event may restate about a call: (key, kind, the call's attribute, what a change
# does to clients).
_CALL_ID = (
    "call_id",
    "id-changed",
    "id",
    "the function_call_output must echo the call_id the server holds for the item; a client "
    "that takes it from this event answers another call (the server rejects it: "
    "invalid_tool_call_id)",
)
_NAME = ("name", "name-changed", "name", "clients that dispatch on this event run another tool")
_ITEM_ID = ("id", "id-changed", "item_id", "events that name the first item id no longer find it")


@final
class CallItem(Slot):
    """A function call item being assembled: its deltas, and the whole values stated for it."""

    __slots__ = ("item_id", "head", "stated", "stated_at", "open", "said", "dones", "whole")

    def __init__(
        self, response: int, index: int, frame: int, item: dict[Any, Any], log: AnomalyLog
    ) -> None:
        what = f"output {index}'s"
        call_id, name = id_and_name(log, frame, item, ("call_id", "name"), what, response, index)
        super().__init__(response, index, frame, call_id, name)
        self.type = item.get("type")
        self.item_id = item.get("id")
        head = item.get("arguments")
        self.head = head if isinstance(head, str) else ""  # the item's own text, at added
        self.stated: str | None = None  # the last whole value stated (.done, item done...)
        self.stated_at = 0
        self.open = True
        self.said = False  # a disagreement was reported
        self.dones = 0  # the done events of its own that came (.done, output_item.done)
        self.whole = False  # first seen whole (output_item.done, response.done), never added

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
    """An output item that is not a function call: a message, an MCP call."""

    __slots__ = ("kind", "open", "first", "item_id")

    def __init__(self, kind: object, frame: int, item_id: object = None) -> None:
        self.kind = kind
        self.open = True
        self.first = frame
        self.item_id = item_id


Item = CallItem | OtherItem


class Robust:
    """The robust reading plus every per-frame anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log
        self.items: dict[int, Item] = {}  # the current response's, by output_index
        self.by_id: dict[str, Item] = {}  # by item id (unique in a session)
        self.calls: list[CallItem] = []  # in the order they began
        self.call_ids: dict[str, CallItem] = {}  # call_id -> the first call carrying it
        self.prev: CallItem | None = None  # the item the latest delta went to
        self.events: list[FieldEvent] | None = None  # set to a list to collect events
        self.responses = 0  # responses begun: the current one is number responses - 1
        self.ids: list[object] = []  # each response's id, as response.created gave it
        self.unfinished: dict[int, int] = {}  # response -> its first frame, until its done
        self.response_id: object = None  # the first response's
        self.status: object = None  # the last response.done's: completed, incomplete...
        self.status_frame = 0
        self.reason: object = None  # its status_details.reason
        self.done_frame = 0  # the frame of the last response.done
        self.error_payload: str | None = None
        self.content: list[str] = []

    # -- frames -------------------------------------------------------------------------

    def fragment(self, n: int, p: dict[Any, Any], index: int, text: str) -> bool:
        """A plain argument delta of the item under way: taken in a few steps when no rule
        has anything to say; False otherwise (the caller feeds the whole frame)."""
        item, item_id = self.prev, p.get("item_id")
        if (
            item is None
            or not text
            or type(item_id) is not str
            or item_id != item.item_id
            or self.by_id.get(item_id) is not item
            or self.items.get(index) is not item
            or not item.open
            or item.stated is not None
            or p.get("call_id", item.id) != item.id
        ):
            return False
        item.parts.append(text)
        item.fragments += 1
        item.built(n)
        return True

    def feed(self, frame: Frame) -> None:
        n, log = frame.number, self.log
        payload = event_object(frame, log)
        if payload is None:
            return
        kind = payload.get("type")
        if kind == DELTA:
            self._delta(n, payload)
        elif kind == ADDED:
            self._added(n, payload)
        elif kind == ARGS_DONE:
            self._args_done(n, payload)
        elif kind == ITEM_DONE:
            self._item_done(n, payload)
        elif kind in TEXTS:
            self._began(n)
            text = payload.get("delta")
            if isinstance(text, str) and text:
                self.content.append(text)
                if self.events is not None:
                    event = FieldEvent(n, ev.CONTENT, self.current, None, "delta", None, text)
                    event.words = WORDS
                    self.events.append(event)
        elif kind == CREATED:
            self._created(n, payload)
        elif kind == RESPONSE_DONE:
            self._end(n, payload)
        elif kind == "error":
            self._error(n, payload)
        elif isinstance(kind, str) and kind in QUIET:  # (a list sent as the type: unknown)
            if kind.startswith("response."):
                self._began(n)
        else:
            log.add(
                "event-unknown",
                n,
                lambda: (
                    f"an event of type {cut(quote(kind), 40)}, which the Realtime API's types "
                    "do not define: the openai SDK hands it on untyped; clients that reject "
                    "unknown events stop"
                ),
            )

    # -- the responses ------------------------------------------------------------------

    @property
    def current(self) -> int:
        """The number of the response under way (0 first)."""
        return max(self.responses - 1, 0)

    def _began(self, n: int) -> int:
        """The response an event of a response belongs to: the current one, or one begun
        here when none did (a stream that starts after its response.created)."""
        if not self.responses:
            self.responses = 1
            self.ids.append(None)
            self.unfinished[0] = n
        return self.current

    def _created(self, n: int, payload: dict[Any, Any]) -> None:
        response = payload.get("response")
        rid = response.get("id") if isinstance(response, dict) else None
        if self.responses:
            self.log.add(
                "responses-in-one-stream",
                n,
                lambda: (
                    f"response {self.responses + 1} ({cut(quote(rid), 30)}) begins in this "
                    "stream: read in order, each call under its response's number (the "
                    "response column of inspect's call table); record the session to read "
                    "each as a stream"
                ),
            )
        self.responses += 1
        self.ids.append(rid)
        self.unfinished[self.current] = n
        self.items = {}  # output indexes start again in each response
        if self.response_id is None:
            self.response_id = rid

    def _index(self, n: int, payload: dict[Any, Any], what: str) -> int | None:
        return named_index(self.log, n, payload, "output_index", what)

    def _added(self, n: int, payload: dict[Any, Any]) -> None:
        response = self._began(n)
        index = self._index(n, payload, ADDED)
        item = payload.get("item")
        if index is None:
            return
        if not isinstance(item, dict):
            self.log.add(
                "event-schema-violation",
                n,
                f"{ADDED} at output {index} carries no item object",
            )
            return
        item_id = item.get("id")
        known = self.by_id.get(item_id) if isinstance(item_id, str) else None
        if known is not None or index in self.items:
            first = (known or self.items[index]).first
            self.log.add(
                "event-schema-violation",
                n,
                f"output {index} (item {cut(quote(item_id), 40)}) is added again (first at "
                f"frame {first}): robust reads the new item there",
            )
        if item.get("type") != CALL:
            other = self.items[index] = OtherItem(item.get("type"), n, item_id)
            if isinstance(item_id, str):
                self.by_id[item_id] = other
            return
        self._call(n, response, index, item)

    def _call(self, n: int, response: int, index: int, item: dict[Any, Any]) -> CallItem:
        call = CallItem(response, index, n, item, self.log)
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
                    "the function_call_outputs cannot tell them apart",
                    response,
                    index,
                )
        if self.events is not None:
            events = self.events
            events.append(FieldEvent(n, ev.NEW_CALL, response, index, "", words=WORDS))
            for field, value in (
                ("item_id", call.item_id),
                ("call_id", call.id),
                ("name", call.name),
            ):
                events.append(FieldEvent(n, ev.SET, response, index, field, None, value, -1, WORDS))
        return call

    def _target(self, n: int, payload: dict[Any, Any], what: str) -> Item | None:
        """The item an argument event names: by item_id, else by output_index."""
        item_id, index = payload.get("item_id"), payload.get("output_index")
        found = self.by_id.get(item_id) if isinstance(item_id, str) else None
        at = self.items.get(index) if is_index(index) else None
        if found is None and (at is None or isinstance(item_id, str)):
            followed = (
                f"robust follows its output_index to output {index}"
                if at is not None
                else "robust skips it"
            )
            self.log.add(
                "delta-unknown-item",
                n,
                lambda: (
                    f"a {what} for item {cut(quote(item_id), 40)} at output {cut(quote(index), 20)}, "
                    f"which no {ADDED} opened: clients that look calls up by item_id drop it "
                    f"or crash; {followed}"
                ),
                self.current,
                index if is_index(index) else None,
            )
            if at is None:
                return None
        if found is not None and at is not None and found is not at:
            self.log.add(
                "event-schema-violation",
                n,
                f"a {what} names item {cut(quote(item_id), 40)} (output "
                f"{getattr(found, 'index', '?')}) and output {index}, another item: robust "
                "follows the item_id",
            )
        return found if found is not None else at

    def _delta(self, n: int, payload: dict[Any, Any]) -> None:
        self._began(n)
        item = self._target(n, payload, "function_call_arguments.delta")
        if item is None:
            return
        log = self.log
        if type(item) is not CallItem:
            log.add(
                "event-schema-violation",
                n,
                f"an argument delta for a {cut(quote(item.kind), 30)} item: robust skips it",
            )
            return
        text = payload.get("delta")
        if not isinstance(text, str):
            log.add(
                "event-schema-violation",
                n,
                lambda: (
                    f"the delta of output {item.index} is "
                    + (f"a JSON {json_type(text)}" if "delta" in payload else "missing")
                    + ", not a string: robust skips it"
                ),
                item.choice,
                item.index,
            )
            return
        if not item.open:
            log.add(
                "event-schema-violation",
                n,
                f"a delta for output {item.index} after its {ITEM_DONE}: robust adds it to "
                "that item",
                item.choice,
                item.index,
            )
        self._identity(n, item, payload, DELTA, (_CALL_ID,), True)
        self.prev = item
        item.fragments += 1
        item.built(n)
        if text:
            item.parts.append(text)
        if self.events is not None:
            self.events.append(
                FieldEvent(
                    n, ev.APPEND, item.choice, item.index, "arguments", None, text, -1, WORDS
                )
            )

    def _state(
        self, n: int, item: CallItem, value: object, where: str, binding: bool = True
    ) -> None:
        """A whole value stated for `item` (`where`: the event that stated it). It is taken
        while `binding` (the item is not closed yet), else only compared."""
        if not isinstance(value, str):
            if value is not None:
                self.log.add(
                    "event-schema-violation",
                    n,
                    f"{where} states the arguments of output {item.index} as a JSON "
                    f"{json_type(value)}, not a string: robust ignores it",
                    item.choice,
                    item.index,
                )
            return
        held = item.streamed() if binding else item.arguments()
        if value != held and not item.said and (held or not value or not binding):
            item.said = True
            if not binding:
                taken = f"keeps what {ITEM_DONE} stated, the item's own last word"
            elif value == "":
                taken = "keeps the deltas"
            else:
                taken = "takes the stated value, the server's record of the item"
            built = "the deltas built" if binding else "the item was done with"
            self.log.add(
                "args-done-mismatch",
                n,
                lambda: (
                    f"{where} states the arguments of output {item.index} as "
                    f"{cut(quote(value), 50)}, {built} {cut(quote(held), 50)}: clients that "
                    f"build calls from the deltas run other arguments; robust {taken}"
                ),
                item.choice,
                item.index,
            )
        if not binding:
            return
        if item.stated is None:
            item.stated_at = n  # where the whole value was first stated
        item.stated = value
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.SET, item.choice, item.index, "arguments", None, value, -1, WORDS)
            )

    def _identity(
        self,
        n: int,
        item: CallItem,
        whole: dict[Any, Any],
        where: str,
        keys: tuple[tuple[str, str, str, str], ...],
        binding: bool,
    ) -> None:
        """The call_id, name (and item id) an event states: a change is reported; a value
        where the call had none is taken, and a changed one while the item is not closed
        when the event is the item's own record (`binding`)."""
        for key, kind, attr, why in keys:
            if key not in whole:
                continue
            value, held = whole[key], getattr(item, attr)
            if value == held:
                continue
            if value is None or value == "":
                if attr != "item_id" and held not in ("", None):
                    self._emptied(n, item, key, value, where)
                continue
            if held in ("", None) and isinstance(value, str):  # the first one sent
                setattr(item, attr, value)
                self._rekey(n, item, key, attr, value)
                continue
            # (the item's own records: output_item.done, response.done's output)
            took = binding and isinstance(value, str) and where not in (DELTA, ARGS_DONE)
            self.log.add(
                kind,
                n,
                lambda key=key, value=value, held=held, took=took, why=why: (  # type: ignore[misc]
                    f"{where} gives output {item.index} {key} {cut(quote(value), 40)}, where "
                    f"it was {cut(quote(held), 40)}: {why}; robust takes "
                    + ("the new one, the item's own record" if took else "the earlier one")
                ),
                item.choice,
                item.index,
            )
            if took:
                setattr(item, attr, value)
                self._rekey(n, item, key, attr, value)

    def _emptied(self, n: int, item: CallItem, key: str, value: object, where: str) -> None:
        """An event states the call's call_id or name as "" or null: robust keeps the one
        it has; a client that takes every value it reads loses it."""
        kind = "id-empty-overwrite" if key == "call_id" else "name-empty-overwrite"
        self.log.add(
            kind,
            n,
            lambda: (
                f"{where} gives output {item.index} {key} {quote(value)} after "
                f"{cut(quote(item.id if key == 'call_id' else item.name), 40)}: a client that "
                f"takes the {key} from this event loses it; robust keeps the one it had"
            ),
            item.choice,
            item.index,
        )

    def _rekey(self, n: int, item: CallItem, key: str, attr: str, value: str) -> None:
        if attr == "item_id":
            self.by_id[value] = item
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.SET, item.choice, item.index, key, None, value, -1, WORDS)
            )

    def _args_done(self, n: int, payload: dict[Any, Any]) -> None:
        self._began(n)
        item = self._target(n, payload, "function_call_arguments.done")
        if type(item) is not CallItem:
            return
        item.dones += 1
        if item.open:
            item.built(n)  # it states the whole value
        self._identity(n, item, payload, ARGS_DONE, (_CALL_ID, _NAME), item.open)
        self._state(n, item, payload.get("arguments"), ARGS_DONE, item.open)

    def _item_done(self, n: int, payload: dict[Any, Any]) -> None:
        response = self._began(n)
        index = self._index(n, payload, ITEM_DONE)
        item = payload.get("item")
        if index is None or not isinstance(item, dict):
            return
        item_id = item.get("id")
        known = self.by_id.get(item_id) if isinstance(item_id, str) else None
        known = known or self.items.get(index)
        if known is None and item.get("type") == CALL:
            known = self._call(n, response, index, item)  # a call stated whole, never added
            known.whole = True
        if known is None:
            return
        was_open, known.open = known.open, False
        if type(known) is not CallItem:
            return
        known.dones += 1
        if was_open:
            known.built(n)  # the done closes the call, and may restate it
        self._identity(n, known, item, ITEM_DONE, (_CALL_ID, _NAME, _ITEM_ID), was_open)
        self._state(n, known, item.get("arguments"), ITEM_DONE, was_open)
        if self.events is not None:
            self.events.append(FieldEvent(n, ev.STOP, response, index, "", words=WORDS))

    def _end(self, n: int, payload: dict[Any, Any]) -> None:
        log = self.log
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
            if response.get(key) is not None and not isinstance(response[key], want):
                problems.append(f"{key} a JSON {json_type(response[key])}")
        if problems:
            log.add(
                "event-schema-violation",
                n,
                f"{RESPONSE_DONE} with {', '.join(problems)}: clients that read the final "
                "response fail",
            )
        rid = response.get("id")
        which = next(
            (r for r in reversed(self.unfinished) if rid is not None and self.ids[r] == rid),
            None,
        )
        if which is None:
            which = next(reversed(self.unfinished), None) if self.unfinished else None
        if which is None:  # a response.done with no response under way
            which = self._began(n) if not self.responses else self.current
        self.unfinished.pop(which, None)
        status = response.get("status")
        self.status = status
        self.status_frame = self.done_frame = n
        details = response.get("status_details")
        details = details if isinstance(details, dict) else {}
        self.reason = details.get("reason")
        if status == "failed":
            error = details.get("error")
            message = error.get("message", error.get("code")) if isinstance(error, dict) else error
            log.add(
                "provider-error",
                n,
                lambda: f"the response failed: {cut(quote(message), 120)}",
            )
            self.error_payload = self.error_payload or str(message)
        mine = [c for c in self.calls if c.choice == which]
        self._output(n, which, response, mine)
        if mine and status is not None and status != "completed":
            why = f" ({quote(self.reason)})" if self.reason is not None else ""
            log.add(
                "stop-reason-mismatch",
                n,
                f"{len(mine)} call{'s' if len(mine) != 1 else ''} made but the response's "
                f"status is {cut(quote(status), 30)}{why}: their arguments may be cut short, "
                "and clients that run calls only from a completed response skip them",
                which,
            )
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.FINISH, which, None, "status", None, status, -1, WORDS)
            )

    def _output(self, n: int, which: int, response: dict[Any, Any], mine: list[CallItem]) -> None:
        """The calls response.done's output states: compared with the streamed ones, a
        call it alone holds taken, a streamed one it leaves out reported."""
        output = response.get("output")
        stated: set[int] = set()
        where = f"{RESPONSE_DONE}'s output"
        for position, item in enumerate(output if isinstance(output, list) else ()):
            if not isinstance(item, dict) or item.get("type") != CALL:
                continue
            item_id = item.get("id")
            found = self.by_id.get(item_id) if isinstance(item_id, str) else None
            known = found if type(found) is CallItem else None
            binding = known is None or known.open  # an item done keeps its own last word
            if known is None:  # a call only the final output holds
                known = self._call(n, which, position, item)
                known.whole = True
            if binding:
                known.built(n)  # the output states the call as it stands
            self._identity(n, known, item, where, (_CALL_ID, _NAME), binding)
            self._state(n, known, item.get("arguments"), where, binding)
            known.open = False
            stated.add(id(known))
        if output is not None and not isinstance(output, list):
            return  # (said above: a schema violation)
        if output is None:
            said = f"{RESPONSE_DONE} carries no output"
        elif not output:
            said = f"{where} is empty"
        else:
            said = f"{where} leaves it out"
        for call in mine:
            if id(call) not in stated:
                self.log.add(
                    "final-output-mismatch",
                    n,
                    f"the stream carried a call at output {call.index} "
                    f"({cut(quote(call.name), 30)}) and {said}: clients that take the calls "
                    "from response.done (the Realtime guide's way) lose it; robust keeps it",
                    which,
                    call.index,
                )

    def _error(self, n: int, payload: dict[Any, Any]) -> None:
        error = payload.get("error", payload)
        if isinstance(error, dict):
            message = error.get("message")
            code = error.get("code") or error.get("type")
        else:
            message, code = error, None
        during = "mid-response" if self.unfinished else "between responses"
        named = f" ({cut(quote(code), 40)})" if isinstance(code, str) else ""
        self.log.add(
            "provider-error",
            n,
            lambda: (
                f"the server sent an error event {during}{named}: {cut(quote(message), 120)}; "
                "the session stays open after most errors"
            ),
        )
        self.error_payload = self.error_payload or str(message)

    # -- the state, for the faces ------------------------------------------------------

    def results(self) -> list[Call]:
        return [c.to_call() for c in self.calls]

    def copy(self, log: AnomalyLog) -> Robust:
        new = Robust.__new__(Robust)
        slots = {id(c): c.__deepcopy__({}) for c in self.calls}
        others: dict[int, Item] = {}

        def one(item: Item) -> Item:
            if type(item) is CallItem:
                return slots[id(item)]
            key = id(item)
            if key not in others:
                other = OtherItem(item.kind, item.first, item.item_id)
                other.open = item.open
                others[key] = other
            return others[key]

        new.log = log
        new.items = {k: one(v) for k, v in self.items.items()}
        new.by_id = {k: one(v) for k, v in self.by_id.items()}
        new.calls = [slots[id(c)] for c in self.calls]
        new.call_ids = {k: slots[id(c)] for k, c in self.call_ids.items()}
        new.prev = slots[id(self.prev)] if self.prev is not None else None
        new.events = None
        for name in (
            "responses",
            "response_id",
            "status",
            "status_frame",
            "reason",
            "done_frame",
            "error_payload",
        ):
            setattr(new, name, getattr(self, name))
        new.ids = list(self.ids)
        new.unfinished = dict(self.unfinished)
        new.content = list(self.content)
        return new
