"""streamscope's own reading of a stream (`robust`), and the anomaly rules beside it.

Each rule below exists for a quirk of the reference notes; the README's "How
streamscope reads a stream" lists them in the same order. Ids, names and types are
kept exactly as sent: the first non-empty value wins, "" or null never erases it,
nothing is ever invented. Where the bytes allow two readings, the rule that decides
reports `call-boundary-ambiguous` naming the reading it took.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import orjson

from ...core import events as ev
from ...core import jsonio
from ...core.anomalies import AnomalyLog
from ...core.calls import NOTHING, Call, Slot, freeze, show_dirty
from ...core.engine import at_index
from ...core.events import FieldEvent
from ...core.frames import BAD_UTF8, INVALID, NOT_READ, Frame, Sentinel
from ...core.shared import ChunkedList, LayeredDict
from ...text import cut, json_type, quote
from .run import Run
from .schema import violation

_MISSING = Sentinel("no index")  # a tool-call delta without an "index" key (or with null)
MAX_DEPTH = 1024  # orjson's nesting limit: a deeper payload is kept as text, never parsed


# The rules' tests on one delta, shared with facts.py (what --minimal's judge knows of a
# frame without running the engine): one home for each.


def choice_of(choice: dict[Any, Any]) -> int:
    """The choice a delta belongs to: its integer index, 0 when it has none."""
    c = choice.get("index", 0)
    return c if isinstance(c, int) and not isinstance(c, bool) else 0


def index_kind(raw: object) -> str | None:
    """index-missing (no index, or null), index-invalid (not a non-negative integer), or None."""
    if raw is None:
        return "index-missing"
    if not (isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0):
        return "index-invalid"
    return None


def carries_nothing(d: dict[Any, Any]) -> bool:
    """A tool call delta that starts nothing and adds nothing: no id, no name, no
    arguments (null and "" are none), from `function` or else `custom`."""
    idv = d.get("id")
    if isinstance(idv, str) and idv:
        return False
    body = d.get("function")
    if not isinstance(body, dict):
        body = d.get("custom")
    if not isinstance(body, dict):
        return True
    args = body.get("arguments" if isinstance(d.get("function"), dict) else "input")
    return not sets_name(body.get("name")) and args in (None, "")


def void_entry(d: dict[Any, Any]) -> bool:
    """An entry with an invalid index that carries nothing: an anomaly, and no call
    (openai-go rejects such a chunk; a bare {"index": -2} after the stream finished)."""
    return index_kind(d.get("index")) == "index-invalid" and carries_nothing(d)


def lacks_function(d: dict[Any, Any]) -> bool:
    """No function object (null counts as none), nor a custom one to read instead."""
    return d.get("function") is None and not isinstance(d.get("custom"), dict)


def sets_finish(value: object) -> bool:
    """A finish_reason that sets the choice's (null and "" do not)."""
    return value is not None and value != ""


def sets_name(value: object) -> bool:
    """A name that names a call: only a non-empty string does."""
    return isinstance(value, str) and value != ""


def _not_json(data: str) -> str:
    """Why a payload is not read as JSON, in words (nesting past the parser's limit is named)."""
    try:
        jsonio.loads(data)
    except orjson.JSONDecodeError as e:
        if "depth limit" in str(e) or "recursion" in str(e).lower():
            return (
                f"data {quote(data, 40)} nests deeper than {MAX_DEPTH} levels: read as text "
                "(Python's json, and so the openai SDK, raises RecursionError on it)"
            )
    return f"data {quote(data, 60)} is not JSON"


def _complete(text: str) -> bool:
    """Does `text` parse as one JSON value? (Cheap: only asked on rare shapes.)"""
    try:
        jsonio.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


class RSlot(Slot):
    __slots__ = ("nchars", "latched", "concat", "pos", "freeform", "keys", "ids")
    name: str  # "" until a name arrives; robust takes string names only

    def __init__(self, choice: int, index: object, frame: int, pos: int):
        super().__init__(choice, index, frame, "", "")
        self.nchars = 0  # length of the argument text, without joining it
        self.latched = False  # arguments arrive as growing snapshots
        self.concat: list[str] | None = None  # while latched: the plain concatenation too
        self.pos = pos  # the call's position in its choice
        self.freeform = False  # a custom call: its input is free text, not JSON
        # the by_index keys and ids it was filed under: where a copy on write replaces it
        self.keys: tuple[object, ...] = ()
        self.ids: tuple[str, ...] = ()


def _done(slot: RSlot) -> bool:
    """Are the call's arguments complete (a non-string value, or text that parses)?

    A custom call's input is free text with no end marker: any text counts as complete.
    """
    if slot.freeform:
        return slot.nchars > 0 or slot.value is not NOTHING
    return slot.value is not NOTHING or (slot.nchars > 0 and _complete(slot.text()))


class ChoiceState:
    __slots__ = (
        "calls",
        "by_index",
        "max_index",
        "last",
        "prev",
        "finish",
        "finish_frame",
        "roles",
        "content",
        "reasoning",
        "refusal",
        "active",
        "rank",
        "by_id",
        "frozen",
        "shown",
        "dirty",
    )

    def __init__(self, rank: int = 0) -> None:
        self.calls: ChunkedList[RSlot] = ChunkedList()
        # per position, the Call last shown, and where it may be out of date (core.calls.
        # show_dirty): a frame's calls are a copy of the list, not a lookup per call
        self.shown: ChunkedList[Call | None] = ChunkedList()
        self.dirty: set[int] = set()
        self.by_index: LayeredDict[object, RSlot] = LayeredDict()
        self.rank = rank  # the choice's place among the choices, in order of appearance
        # id -> the latest call (by position) that carries it: a lookup, not a scan per call
        self.by_id: LayeredDict[str, RSlot] = LayeredDict()
        self.max_index = -1
        self.last: RSlot | None = None  # the call the latest tool delta went to
        self.prev: RSlot | None = None
        self.finish: str | None = None
        self.finish_frame = 0
        self.roles = 0
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.active = False  # the choice carried anything at all
        self.frozen = (0, 0, 0)  # leading chunks of content, reasoning, refusal shared with copies

    def copy(self) -> ChoiceState:
        """For engine copies: the text lists as a few shared chunks (see freeze), not as
        lists as long as the stream; the calls shared (copy on write, see Robust.own), and
        the lists and maps of them sharing their unchanged parts (core/shared.py)."""
        f = self.frozen
        self.frozen = (
            freeze(self.content, f[0]),
            freeze(self.reasoning, f[1]),
            freeze(self.refusal, f[2]),
        )
        new = ChoiceState.__new__(ChoiceState)
        for name in ChoiceState.__slots__:
            value = getattr(self, name)
            if isinstance(value, (list, dict, set, ChunkedList, LayeredDict)):
                value = value.copy()
            setattr(new, name, value)
        return new


class Robust:
    """The robust strategy plus every per-frame anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog, declared: frozenset[str] | None = None) -> None:
        self.log = log
        self.declared = declared  # tool names the request declared, when known
        self.choices: dict[int, ChoiceState] = {}
        # id -> the first call carrying it, choices in order of appearance, then position
        self.first_by_id: LayeredDict[str, RSlot] = LayeredDict()
        self.events: list[FieldEvent] | None = None  # set to a list to collect events
        self.done_frame = 0
        self.last_frame = 0
        self.error_payload: str | None = None
        # copy on write: the slots of this generation are this reading's to change; any
        # other is shared with a copy and copied first (`own`). Renewed by copy and seal.
        self.gen = object()

    def copy(self, log: AnomalyLog) -> Robust:
        """A copy that shares the calls (see `own`), with `log` for its anomalies (the
        Calls shown brought up to date first: the copies of a snapshot show them as
        they are, not made again)."""
        for st in self.choices.values():
            st.dirty = show_dirty(st.calls, st.shown, st.dirty, self.gen, changing=False)
        new = copy.copy(self)
        new.log = log
        new.choices = {c: st.copy() for c, st in self.choices.items()}
        new.first_by_id = self.first_by_id.copy()
        new.events = None if self.events is None else list(self.events)
        self.gen, new.gen = object(), object()
        return new

    def seal(self) -> None:
        """The slots as they are stay so (a view was made of them): a change copies first."""
        self.gen = object()

    def own(self, st: ChoiceState, slot: RSlot) -> RSlot:
        """`slot` (a call of choice `st`), to change: if it is shared with a copy, a copy
        of it put everywhere this reading holds it."""
        if slot.owner is self.gen:
            return slot
        new = slot.clone(self.gen)
        st.calls[slot.pos] = new
        st.dirty.add(slot.pos)
        by_index, by_id, first_by_id = st.by_index, st.by_id, self.first_by_id
        for key in slot.keys:
            if by_index.get(key) is slot:
                by_index[key] = new
        for idv in slot.ids:
            if by_id.get(idv) is slot:
                by_id[idv] = new
            if first_by_id.get(idv) is slot:
                first_by_id[idv] = new
        if st.last is slot:
            st.last = new
        if st.prev is slot:
            st.prev = new
        return new

    def _file(self, st: ChoiceState, key: object, slot: RSlot) -> RSlot:
        """Put `slot` under `key` of its choice's calls by index."""
        slot = self.own(st, slot)
        st.by_index[key] = slot
        if key not in slot.keys:
            slot.keys += (key,)
        return slot

    # -- frames -------------------------------------------------------------------------

    def feed(self, frame: Frame, problem: object = NOT_READ) -> None:
        """`problem`: violation(frame.payload, frame.data), when the caller has it."""
        n = self.last_frame = frame.number
        payload = frame.payload
        if frame.invalid is not None:  # what the framing found (its payload is no event)
            self.log.add("frame-invalid", n, frame.invalid)
            return
        if frame.bad_utf8:
            self.log.add("invalid-utf8", n, BAD_UTF8)
        if payload is INVALID:
            if frame.is_done:
                self.done_frame = self.done_frame or n
            else:
                self.log.add("chunk-invalid-json", n, lambda: _not_json(frame.data))
            return
        error = payload.get("error") if isinstance(payload, dict) else None
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            self.log.add(
                "provider-error",
                n,
                lambda: f"the provider sent an error in the stream: {cut(quote(message), 120)}",
            )
            self.error_payload = self.error_payload or str(message)
            if isinstance(payload, dict) and "choices" not in payload:  # (error: it is one)
                return
        if problem is NOT_READ:
            problem = violation(payload, frame.data)
        if problem is not None:
            self.log.add("chunk-schema-violation", n, problem)  # type: ignore[arg-type]
        if not isinstance(payload, dict):
            return
        choices = payload.get("choices")
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            c = choice_of(choice)
            if "index" in choice and index_kind(choice["index"]) == "index-invalid":
                raw = choice["index"]
                read_as = "" if type(raw) is int else f"; robust reads it as choice {c}"
                self.log.add(
                    "index-invalid",
                    n,
                    f"choice index {quote(raw)} is not a non-negative integer{read_as}",
                    c,
                )
            st = self.choices.get(c)
            if st is None:
                st = self.choices[c] = ChoiceState(len(self.choices))
            st.active = True
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(n, c, st, delta)
            finish = choice.get("finish_reason")
            if sets_finish(finish):
                if st.finish is not None:
                    self.log.add(
                        "finish-repeated",
                        n,
                        f"finish_reason {quote(finish)} again (first at frame "
                        f"{st.finish_frame}): a client that acts on each finish runs the calls twice",
                        c,
                    )
                else:
                    st.finish_frame = n
                st.finish = finish
                if self.events is not None:
                    self.events.append(
                        FieldEvent(n, ev.FINISH, c, None, "finish_reason", None, finish)
                    )

    def _delta(self, n: int, c: int, st: ChoiceState, delta: dict[Any, Any]) -> None:
        log = self.log
        if delta.get("role") is not None:
            st.roles += 1
            if st.roles == 2:
                log.add(
                    "role-repeated",
                    n,
                    lambda: (
                        f"role {quote(delta['role'])} sent again; the openai SDK builds "
                        '"assistantassistant..."'
                    ),
                    c,
                )
        content = delta.get("content")
        calls = delta.get("tool_calls")
        late = st.finish is not None and (bool(content) or bool(calls))
        if late:
            log.add(
                "delta-after-finish",
                n,
                lambda: (
                    f"choice {c} still sends deltas after finish_reason at frame {st.finish_frame}"
                ),
                c,
            )
        if isinstance(content, str) and content:
            st.content.append(content)
            if self.events is not None:
                self.events.append(FieldEvent(n, ev.CONTENT, c, None, "content", None, content))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            st.refusal.append(refusal)
        for key in ("reasoning_content", "reasoning"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                st.reasoning.append(text)
                if self.events is not None:
                    self.events.append(FieldEvent(n, ev.REASONING, c, None, key, None, text))
        if isinstance(calls, list) and calls:
            seen: set[Any] = set()
            for entry in calls:
                if isinstance(entry, dict):
                    self._tool(n, c, st, entry, seen)

    # -- tool-call deltas ---------------------------------------------------------------

    def _tool(self, n: int, c: int, st: ChoiceState, d: dict[Any, Any], seen: set[Any]) -> None:
        log = self.log
        raw_index = d.get("index")
        invalid = index_kind(raw_index)
        if raw_index is None:
            key: object = _MISSING
            log.add(
                "index-missing",
                n,
                "a tool call delta has no index; index-keyed clients merge or crash "
                "(openai SDK: TypeError)",
                c,
                None,
            )
        else:
            key = (
                raw_index
                if isinstance(raw_index, int) and not isinstance(raw_index, bool)
                else repr(raw_index)
            )
            if invalid is not None and carries_nothing(d):  # (void_entry)
                log.add(
                    "index-invalid",
                    n,
                    lambda: (
                        f"index {quote(raw_index)} is not a non-negative integer, and the "
                        "entry carries no id, name or arguments: no call is made of it"
                    ),
                    c,
                    raw_index,
                )
                return
            if invalid is not None:  # (it has an index: not index-missing)
                log.add(
                    "index-invalid",
                    n,
                    lambda: f"index {quote(raw_index)} is not a non-negative integer",
                    c,
                    raw_index,
                )
            if key in seen:
                log.add(
                    "same-index-twice-in-chunk",
                    n,
                    lambda: (
                        f"two entries {at_index(raw_index)} in one chunk; they are read in order"
                    ),
                    c,
                    raw_index,
                )
            seen.add(key)

        idv = d.get("id")
        # A function call carries `function: {name, arguments}`, a custom (freeform) call
        # `custom: {name, input}`: read alike, the input as free text.
        fn = d.get("function")
        fn = fn if isinstance(fn, dict) else None
        custom = d.get("custom") if fn is None else None
        custom = custom if isinstance(custom, dict) else None
        body, args_key = (fn, "arguments") if custom is None else (custom, "input")
        name = body.get("name") if body is not None else None
        has_id = isinstance(idv, str) and idv != ""
        has_name = sets_name(name)

        slot, created = self._target(
            n, c, st, key, raw_index, idv if has_id else None, name if has_name else None
        )
        slot = self.own(st, slot)
        if created:
            self._note(n, ev.NEW_CALL, slot, "", None, None)
        if st.prev is not None and st.prev is not slot and slot.fragments > 0:
            self._interleaved(c, slot, [n])
        st.prev = st.last = slot
        slot.fragments += 1
        slot.last = n

        if custom is not None:
            slot.freeform = True
        if lacks_function(d):
            log.add(
                "function-missing",
                n,
                lambda: (
                    f"the tool call delta {at_index(raw_index)} has no function (or custom) object "
                    "(the openai SDK asserts)"
                ),
                c,
                slot.index,
            )
        if created and "type" not in d:
            log.add(
                "type-missing",
                n,
                lambda: f"the call {at_index(raw_index)} began with no type",
                c,
                slot.index,
            )

        if "id" in d:
            self._id(n, c, st, slot, idv, created)
        if "type" in d:
            self._type(n, c, slot, d["type"])
        if body is not None:
            if "name" in body:
                self._name(n, c, slot, name, created)
            if args_key in body:
                self._arguments(n, c, slot, body[args_key], created)

    def _new(self, n: int, c: int, st: ChoiceState, index: object) -> RSlot:
        slot = RSlot(c, index, n, len(st.calls))
        slot.owner = self.gen
        st.dirty.add(slot.pos)
        st.calls.append(slot)
        st.shown.append(None)
        return slot

    def _target(
        self,
        n: int,
        c: int,
        st: ChoiceState,
        key: object,
        index: object,
        idv: str | None,
        name: str | None,
    ) -> tuple[RSlot, bool]:
        log = self.log
        if key is _MISSING:
            if idv is not None:
                slot = st.by_id.get(idv)
                if slot is not None:
                    return slot, False
                return self._new(n, c, st, None), True
            if name is not None or st.last is None:
                return self._new(n, c, st, None), True
            if len(st.calls) > 1:
                log.add(
                    "call-boundary-ambiguous",
                    n,
                    lambda: (
                        f"a delta with no index, id or name could belong to any of "
                        f"{len(st.calls)} calls; robust attached it to the latest one (call {st.last.pos + 1})"  # type: ignore[union-attr]
                    ),
                    c,
                    None,
                )
            return st.last, False

        slot = st.by_index.get(key)
        if idv is not None and (slot is None or (slot.id and idv != slot.id)):
            # A known id under an index that is not its call's continues that call while its
            # arguments are incomplete, whichever call the index held before (Vertex's Gemini
            # opens two calls, then streams each under the other's index). Once the arguments
            # are complete it is another call reusing the id (id-reused, reported when set).
            other = st.by_id.get(idv)
            if other is not None and (name is None or name == other.name) and not _done(other):
                log.add(
                    "index-moved",
                    n,
                    lambda: (
                        f"call {quote(idv)} (opened {at_index(other.index)}) continues {at_index(index)}"
                    ),
                    c,
                    other.index,
                )
                return self._file(st, key, other), False
        if slot is None:
            if isinstance(key, int) and key >= 0:
                if key > st.max_index + 1:
                    log.add(
                        "index-gap",
                        n,
                        lambda: (
                            f"the first call at index {key} skips "
                            + (
                                f"indexes {st.max_index + 1}..{key - 1}"
                                if key - st.max_index > 2
                                else f"index {key - 1}"
                            )
                            + "; clients that use index as a list position crash (openai SDK: "
                            + ("IndexError" if key <= sys.maxsize else "OverflowError")
                            + ") or build empty calls"
                        ),
                        c,
                        key,
                    )
                st.max_index = max(st.max_index, key)
            slot = self._file(st, key, self._new(n, c, st, index))
            return slot, True

        # An index that already has a call: a continuation, or a new call reusing it?
        new_id = idv is not None and slot.id and idv != slot.id
        new_name = idv is None and name is not None and slot.name and name != slot.name
        if not (new_id or new_name):
            return slot, False  # the common case: a plain continuation
        done = _done(slot)
        if new_id and (name is not None or done):
            reason = f"a new id {quote(idv)}" + (f" and name {quote(name)}" if name else "")
            log.add(
                "index-reused",
                n,
                lambda: (
                    f"{reason} {at_index(index)}, already used by {quote(slot.id)}; "  # type: ignore[union-attr]
                    "index-keyed clients merge the two calls"
                ),
                c,
                index,
            )
        elif new_name and done and not self._fragment(slot, name):  # type: ignore[arg-type]
            log.add(
                "index-reused",
                n,
                lambda: (
                    f"name {quote(name)} {at_index(index)} after a complete call {quote(slot.name)}"  # type: ignore[union-attr]
                ),
                c,
                index,
            )
            log.add(
                "call-boundary-ambiguous",
                n,
                lambda: (
                    f"no id tells whether {quote(name)} renames the call {at_index(index)} or starts "
                    "another; robust read a new call"
                ),
                c,
                index,
            )
        else:
            return slot, False
        slot = self._file(st, key, self._new(n, c, st, index))
        return slot, True

    def _fragment(self, slot: RSlot, name: str) -> bool:
        """Is `name` the next piece of the call's name (rather than another name)?"""
        joined = f"{slot.name}{name}"
        if self.declared:
            return any(d.startswith(joined) for d in self.declared)
        return slot.nchars == 0 and slot.value is NOTHING

    def _id(self, n: int, c: int, st: ChoiceState, slot: RSlot, idv: object, created: bool) -> None:
        log = self.log
        if idv is None or idv == "":
            if slot.id:
                log.add(
                    "id-empty-overwrite",
                    n,
                    lambda: (
                        f"id {quote(idv)} after {quote(slot.id)}: a client that overwrites on every present "
                        "field loses the id"
                    ),
                    c,
                    slot.index,
                )
                self._note(n, ev.OVERWRITE, slot, "id", slot.id, idv)
            else:
                self._note(n, ev.IGNORED, slot, "id", slot.id, idv)
        elif not isinstance(idv, str):
            self._note(n, ev.IGNORED, slot, "id", slot.id, idv)
        elif not slot.id:
            slot.id = idv
            other = self._index_id(st, slot, idv)
            if other is not None:
                log.add(
                    "id-reused",
                    n,
                    lambda: (
                        f"id {quote(idv)} already names the call {at_index(other.index)}; "
                        "clients keyed by id merge them, and tool results cannot tell them apart"
                    ),
                    c,
                    slot.index,
                )
            self._note(n, ev.SET, slot, "id", None, idv)
        elif idv == slot.id:
            if not created:
                log.add(
                    "id-repeated",
                    n,
                    lambda: (
                        f"id {quote(idv)} repeated; concatenating clients (openai SDK) build "
                        f"{quote(idv + idv)}"
                    ),
                    c,
                    slot.index,
                )
                self._note(n, ev.IGNORED, slot, "id", slot.id, idv)
        else:
            log.add(
                "id-changed",
                n,
                lambda: (
                    f"id {quote(idv)} on the call that began as {quote(slot.id)}; robust keeps the "
                    "first, last-wins clients send back the other"
                ),
                c,
                slot.index,
            )
            self._note(n, ev.OVERWRITE, slot, "id", slot.id, idv)

    def _index_id(self, st: ChoiceState, slot: RSlot, idv: str) -> RSlot | None:
        """File `slot` under its new id; the first other call that already carries it."""
        if idv not in slot.ids:
            slot.ids += (idv,)
        latest = st.by_id.get(idv)
        if latest is None or latest.pos < slot.pos:
            st.by_id[idv] = slot
        first = self.first_by_id.get(idv)
        if first is None or (st.rank, slot.pos) < (self.choices[first.choice].rank, first.pos):
            self.first_by_id[idv] = slot
        return first

    def _type(self, n: int, c: int, slot: RSlot, value: object) -> None:
        if value is None or value == "":
            self.log.add(
                "type-empty-or-null",
                n,
                lambda: (
                    f"type {quote(value)} on the call {at_index(slot.index)}: the openai SDK's stream helper "
                    'fails its `type == "function"` assertion'
                ),
                c,
                slot.index,
            )
            self._note(n, ev.OVERWRITE if slot.type else ev.IGNORED, slot, "type", slot.type, value)
        elif slot.type is None:
            slot.type = value
            self._note(n, ev.SET, slot, "type", None, value)

    def _name(self, n: int, c: int, slot: RSlot, name: object, created: bool) -> None:
        log = self.log
        if name is None or name == "":
            if slot.name:
                log.add(
                    "name-empty-overwrite",
                    n,
                    lambda: (
                        f"name {quote(name)} after {quote(slot.name)}: a client that overwrites on every present "
                        f"field calls tool {quote(name)}"
                    ),
                    c,
                    slot.index,
                )
                self._note(n, ev.OVERWRITE, slot, "name", slot.name, name)
            else:
                self._note(n, ev.IGNORED, slot, "name", slot.name, name)
            return
        if not isinstance(name, str):
            return
        if not slot.name:
            slot.name = name
            self._note(n, ev.SET, slot, "name", None, name)
        elif name == slot.name:
            log.add(
                "name-repeated",
                n,
                lambda: (
                    f"name {quote(name)} repeated; concatenating clients (openai SDK) build "
                    f"{quote(name + name)}"
                ),
                c,
                slot.index,
            )
            self._note(n, ev.IGNORED, slot, "name", slot.name, name)
        elif self._fragment(slot, name):
            old = slot.name
            slot.name = old + name
            log.add(
                "name-fragmented",
                n,
                lambda: (
                    f"name arrives in pieces ({quote(old)} + {quote(name)}); last-wins clients keep "
                    f"only {quote(name)}"
                ),
                c,
                slot.index,
            )
            self._note(n, ev.SET, slot, "name", old, slot.name)
        else:
            log.add(
                "name-changed",
                n,
                lambda: (
                    f"name {quote(name)} on the call named {quote(slot.name)}; robust keeps the first"
                ),
                c,
                slot.index,
            )
            self._note(n, ev.OVERWRITE, slot, "name", slot.name, name)

    def _arguments(self, n: int, c: int, slot: RSlot, args: object, created: bool) -> None:
        log = self.log
        if args is None:
            return
        field = "input" if slot.freeform else "arguments"
        if not isinstance(args, str):
            log.add(
                "args-not-string",
                n,
                lambda: (
                    f"{field} is a JSON {json_type(args)} ({cut(quote(args), 42)}), not a string; "
                    "kept as sent"
                ),
                c,
                slot.index,
            )
            if slot.value is NOTHING and not slot.nchars:
                slot.value = args
                self._note(n, ev.SET, slot, field, None, args)
            return
        if not args:
            return
        if created:
            log.add(
                "args-opener-nonempty",
                n,
                lambda: (
                    f"the call's first delta already carries {field} {cut(quote(args), 42)}; "
                    "the docs snippet counts them twice"
                ),
                c,
                slot.index,
            )
        if slot.value is not NOTHING:
            return
        if slot.freeform:  # free text: no re-sent copy or snapshot can be told from a fragment
            slot.parts.append(args)
            slot.nchars += len(args)
            self._note(n, ev.APPEND, slot, field, None, args)
            return
        have = slot.nchars
        if have and args[0] in "{[":
            current = slot.text()
            if _complete(current) and (
                args == current or (_complete(args) and jsonio.loads(args) == jsonio.loads(current))
            ):
                log.add(
                    "args-resent",
                    n,
                    lambda: (
                        f"the complete arguments are sent again; concatenating clients build "
                        f"{cut(quote(current + args), 70)}"
                    ),
                    c,
                    slot.index,
                )
                self._note(n, ev.IGNORED, slot, "arguments", current, args)
                return
            if len(args) > have >= 2 and args.startswith(current):
                if not slot.latched:
                    slot.latched = True
                    slot.concat = [current]
                    log.add(
                        "args-cumulative",
                        n,
                        lambda: (
                            f"arguments {cut(quote(args), 42)} repeat the text so far and extend it; "
                            "robust takes each as the whole text, appending clients duplicate it"
                        ),
                        c,
                        slot.index,
                    )
                assert slot.concat is not None  # (set when it latched)
                slot.concat.append(args)
                slot.parts = [args]
                slot.nchars = len(args)
                self._note(n, ev.REPLACE, slot, "arguments", current, args)
                return
        if slot.concat is not None:
            slot.concat.append(args)
        slot.parts.append(args)
        slot.nchars += len(args)
        self._note(n, ev.APPEND, slot, "arguments", None, args)

    def _note(self, n: int, op: str, slot: RSlot, field: str, old: object, new: object) -> None:
        """A field event of `slot` at frame `n`, kept only while the replay collects them."""
        if self.events is not None:
            self.events.append(
                FieldEvent(n, op, slot.choice, slot.index, field, old, new, slot.pos)
            )

    def _interleaved(self, c: int, slot: RSlot, frames: list[int]) -> None:
        """Fragments went back to `slot` from another call at `frames`: the message is
        built once, at the first sighting; after it a switch is a count."""
        if not self.log.again("interleaved", frames, c):
            self.log.add(
                "interleaved",
                frames[0],
                lambda: (
                    f"fragments of different calls alternate (back to the call {at_index(slot.index)})"
                ),
                c,
                None,
            )
            if len(frames) > 1:
                self.log.again("interleaved", frames[1:], c)

    # -- the fast path: a plain fragment of a call or content under way ------------------

    def fast_args(self, frame: int, index: int, text: str) -> bool:
        st = self.choices.get(0)
        if st is None or st.finish is not None:
            return False
        slot = st.by_index.get(index)
        if slot is None or slot.value is not NOTHING or slot.latched or slot.index != index:
            return False  # (a call that moved index is read the slow way)
        if slot.nchars and text[:1] in ("{", "["):
            return False  # maybe the arguments re-sent, or a growing snapshot of them
        slot = self.own(st, slot)
        if slot is not st.prev:
            if st.prev is not None and slot.fragments > 0:
                self._interleaved(0, slot, [frame])
            st.prev = st.last = slot
        self.last_frame = frame
        slot.parts.append(text)
        slot.nchars += len(text)
        slot.fragments += 1
        slot.last = frame
        return True

    def fast_content(self, frame: int, text: str) -> bool:
        st = self.choices.get(0)
        if st is None or st.finish is not None:
            return False
        self.last_frame = frame
        if text:
            st.content.append(text)
        return True

    def extend(self, run: Run) -> None:
        st = self.choices[0]
        by_index = st.by_index
        for index, texts in run.args.items():
            slot = self.own(st, by_index[index])
            slot.parts.extend(texts)
            slot.nchars += sum(map(len, texts))
            slot.fragments += len(texts)
            slot.last = run.lasts[index]
        if run.args:
            st.prev = st.last = by_index[run.cur]
        if run.switches:
            self._interleaved(0, by_index[run.first_switch], run.switches)
        st.content.extend(filter(None, run.content))  # as the slow path: no empty parts
        self.last_frame = run.last

    def settle(self, slot: RSlot) -> RSlot:
        """End of a call: a snapshot reading that does not parse where plain concatenation
        does was a wrong guess (a nested object can repeat its opening text): concatenate.
        Returns the slot as it now is (a copy of a shared one, when it changed)."""
        if not slot.latched or slot.concat is None or _complete(slot.text()):
            return slot
        joined = "".join(slot.concat)
        if _complete(joined):
            slot = self.own(self.choices[slot.choice], slot)
            slot.parts, slot.nchars, slot.latched = [joined], len(joined), False
            self.log.discard("args-cumulative", slot.choice, slot.index)
            self.log.add(
                "call-boundary-ambiguous",
                slot.last,
                lambda: (
                    f"the arguments of the call {at_index(slot.index)} looked like growing snapshots, but only "
                    "their concatenation parses; robust concatenated them"
                ),
                slot.choice,
                slot.index,
            )
        return slot

    # -- results ------------------------------------------------------------------------

    def slots(self) -> list[RSlot]:
        """Every call in the order calls began (choices in order)."""
        out: list[RSlot] = []
        for c in sorted(self.choices):
            out.extend(self.choices[c].calls)
        out.sort(key=lambda s: (s.first, s.choice, s.pos))
        return out

    def calls(self) -> list[Call]:
        gen = self.gen
        held = [st for st in self.choices.values() if st.calls]
        if len(held) == 1:  # one choice's calls: in the order they began, as they are held
            st = held[0]
            st.dirty = show_dirty(st.calls, st.shown, st.dirty, gen)
            return st.shown.tolist()  # type: ignore[return-value]  # (none is None now)
        return [s.shown(gen) for s in self.slots()]
