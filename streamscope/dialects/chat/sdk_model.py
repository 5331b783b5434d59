"""A pure-Python, linear-time emulation of the `openai` SDK's chat-completions stream helper.

The `openai-sdk` strategy reports what `client.chat.completions.stream(...)` builds: the SDK's
`Stream` (stop at the first `[DONE]` data, `sse.json()`, raise `APIError` on a truthy `error`
key, `construct_type` into a `ChatCompletionChunk`), `ChatCompletionStream` (skip chunks whose
`object` is not "chat.completion.chunk"), `ChatCompletionStreamState.handle_chunk` (snapshot
accumulation via `accumulate_delta`, plus the events it builds) and `get_final_completion()`.

The real class re-dumps and re-constructs the whole message through pydantic on every chunk
(hundreds of microseconds a frame, copying the growing message each time). This module
reproduces its observable result (the tool calls, or the exception and the frame that raised
it) with plain data: growing strings are kept as lists of parts and joined lazily. The model
round trip (`model_dump` -> `accumulate_delta` -> `construct_type`) is an identity here except
that a missing key and an explicit `None` are interchangeable, and `accumulate_delta` treats
those two the same way, so the plain state behaves exactly like the snapshot; and that
pydantic cannot write a key holding a lone surrogate, so a dump raises where the SDK writes
a model holding one (`streamscope.dialects.model_keys`: once a frame has an escape that may
make one, `_escapes`, the chunks are looked at key by key). Where that argument does not
hold (pydantic coercions, jiter partial parsing, logprobs, rich response formats, ...) we
raise `Unmodeled` and the caller falls back to the real class
(`streamscope.dialects.chat.oracle.run_real_sdk`).

Verified against openai 3.63.0 (VERIFIED_OPENAI, from dialects/versions.py), the version
the test extra pins: the differential test (tests/dialects/chat/test_sdk_model.py) runs the
real class beside this module on every bundled sample and on random quirky streams, so moving
the pin to a release that changes the accumulator fails CI before a user sees a wrong answer.
The oracle (`oracle.py`) imports private openai names: a release that moves them fails
the same test.

Must not import openai, pydantic, jiter, httpx or textual.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, overload

from streamscope.core.calls import Call, StrategyError, Unmodeled, freeze
from streamscope.core.frames import INVALID, Frame
from streamscope.core.shared import ChunkedList, LayeredSet
from streamscope.dialects.chat import strict
from streamscope.dialects.chat.run import Run
from streamscope.dialects.model_keys import escapes, unwritable, unwritable_deep, write_keys
from streamscope.dialects.versions import VERIFIED

__all__ = ["VERIFIED_OPENAI", "SdkEmulation", "Unmodeled", "custom_fields"]

# The openai releases whose ChatCompletionStreamState this emulation was checked against.
VERIFIED_OPENAI = (VERIFIED["openai"],)


def custom_fields(custom: object) -> tuple[object, object]:
    """(name, input) of a snapshot entry's `custom` object: the SDK accumulates a custom
    call's `custom` key like any other (input concatenated) and keeps it as an extra."""
    if isinstance(custom, dict):
        return custom.get("name"), custom.get("input")
    return None, None


# Stand-ins carrying the SDK's exception class names (StrategyError prints type(exc).__name__).
class APIError(Exception):
    pass


class LengthFinishReasonError(Exception):
    pass


class ContentFilterFinishReasonError(Exception):
    pass


# `BaseModel.construct(__cls, _fields_set=None, **values)`: these keys in a dict the SDK
# constructs into a model would bind to its parameters instead of becoming fields.
_CONSTRUCT_PARAMS = ("_fields_set", "_BaseModel__cls")
# ChoiceDelta's declared fields, in the order `to_dict()` emits them (extras follow).
_DELTA_FIELDS = ("audio", "content", "function_call", "refusal", "role", "tool_calls")
_DELTA_FIELD_SET = frozenset(_DELTA_FIELDS)
_TOOL_FIELDS = frozenset(("index", "id", "function", "type"))
_FN_FIELDS = frozenset(("arguments", "name"))
# Message fields typed as models whose construction may coerce values (pydantic lax mode).
_COERCING_MESSAGE_KEYS = ("audio", "annotations")
_USAGE_FIELDS = (
    "completion_tokens",
    "prompt_tokens",
    "total_tokens",
    "completion_tokens_details",
    "prompt_tokens_details",
)
_USAGE_DETAILS = {
    "completion_tokens_details": (
        "CompletionTokensDetails",
        (
            "accepted_prediction_tokens",
            "audio_tokens",
            "reasoning_tokens",
            "rejected_prediction_tokens",
            "text_tokens",
        ),
    ),
    "prompt_tokens_details": (
        "PromptTokensDetails",
        ("audio_tokens", "cache_write_tokens", "cached_tokens", "image_tokens", "text_tokens"),
    ),
}


def _guard(d: dict[Any, Any]) -> None:
    for key in _CONSTRUCT_PARAMS:
        if key in d:
            raise Unmodeled(f"a {key!r} key, which BaseModel.construct binds as a parameter")


def _guard_deep(value: object) -> None:
    """Everything the SDK constructs before the `object` filter, for chunks we then skip."""
    if isinstance(value, dict):
        _guard(value)
        for v in value.values():
            _guard_deep(v)
    elif isinstance(value, list):
        for v in value:
            _guard_deep(v)


def _write_delta(delta: dict[Any, Any]) -> None:
    """`choice.delta.to_dict()`: a model's fields before its extras, nested models as they
    come: function_call, then each tool-call entry (its function, then its own keys), then
    the delta's own keys. (`_parse_choices` checked these are objects where not null.) An
    object holding only fields has nothing to raise on: not looked at key by key."""
    fc = delta.get("function_call")
    if fc is not None and not _FN_FIELDS.issuperset(fc):
        write_keys(fc)
    for entry in delta.get("tool_calls") or ():
        fn = entry.get("function")
        if fn is not None and not _FN_FIELDS.issuperset(fn):
            write_keys(fn)
        if not _TOOL_FIELDS.issuperset(entry):
            write_keys(entry)
    if not _DELTA_FIELD_SET.issuperset(delta):
        write_keys(delta)


_UNWRITABLE_LOGPROBS = "a logprobs key pydantic cannot write (a lone surrogate)"
# The fields of ChoiceLogprobs, ChatCompletionTokenLogprob and TopLogprob: an object that
# holds only these keys holds no construct parameter and nothing pydantic cannot write, and
# is not looked at key by key (logprobs come on every frame of a stream that asks for them).
_LOGPROBS_FIELDS = frozenset(("content", "refusal"))
_TOKEN_FIELDS = frozenset(("token", "bytes", "logprob", "top_logprobs"))
_TOP_FIELDS = frozenset(("token", "bytes", "logprob"))


def check_logprobs(logprobs: object) -> None:
    """A choice's `logprobs` the emulation may ignore, or Unmodeled.

    The SDK keeps logprobs beside the message (`choice_snapshot.logprobs.content.extend`)
    and builds events of them; neither touches the message or the tool calls, so they
    change nothing the emulation reports unless their shape makes the SDK raise: an
    object whose `content` and `refusal` are each null or a list of objects is what it
    extends and constructs without fail. (The real class re-constructs the whole logprobs
    snapshot at every chunk, quadratic in the stream: the emulation must not fall back
    to it for ordinary logprobs.) A key of one of these models that pydantic cannot
    write (`unwritable`) raises when the snapshot holding it is written, in this chunk
    or at the end: left to the real class."""
    if type(logprobs) is not dict:
        raise Unmodeled("logprobs that are not an object")
    if not _LOGPROBS_FIELDS.issuperset(logprobs):  # (fields only: nothing to look at)
        _guard(logprobs)  # a ChoiceLogprobs
        if any(map(unwritable, logprobs)):
            raise Unmodeled(_UNWRITABLE_LOGPROBS)
    for key in ("content", "refusal"):
        entries = logprobs.get(key)
        if entries is None:
            continue
        if type(entries) is not list:
            raise Unmodeled(f"logprobs.{key} that is not a list")
        for entry in entries:
            if type(entry) is not dict:
                raise Unmodeled(f"a logprobs.{key} entry that is not an object")
            if not _TOKEN_FIELDS.issuperset(entry):
                _guard(entry)  # a ChatCompletionTokenLogprob
                if any(map(unwritable, entry)):
                    raise Unmodeled(_UNWRITABLE_LOGPROBS)
            top = entry.get("top_logprobs")
            if type(top) is list:
                for alt in top:
                    if type(alt) is dict and not _TOP_FIELDS.issuperset(alt):
                        _guard(alt)  # a TopLogprob; nothing below it is a model
                        if any(map(unwritable, alt)):
                            raise Unmodeled(_UNWRITABLE_LOGPROBS)


# --- plain data helpers -------------------------------------------------------------------


class _Str:
    """A growing string as parts; joined (and compacted) only when read."""

    __slots__ = ("parts", "n", "frozen")

    def __init__(self, s: str) -> None:
        self.parts = [s]
        self.n = len(s)
        self.frozen = 0  # leading chunks of `parts` shared with copies (strategies.freeze)

    def add(self, s: str) -> None:
        if s:
            self.parts.append(s)
            self.n += len(s)

    def extend(self, texts: list[str]) -> None:
        self.parts.extend(filter(None, texts))
        self.n += sum(map(len, texts))

    def value(self) -> str:
        parts = self.parts
        if len(parts) == 1:
            return parts[0]
        joined = "".join(parts)
        self.parts = [joined]
        self.frozen = 0
        return joined

    def copy(self) -> _Str:
        """For snapshots: the chunks are shared, the text is not copied."""
        self.frozen = freeze(self.parts, self.frozen)
        new = _Str.__new__(_Str)
        new.parts, new.n, new.frozen = list(self.parts), self.n, self.frozen
        return new


@overload
def _jcopy(v: dict[Any, Any]) -> dict[Any, Any]: ...
@overload
def _jcopy(v: list[Any]) -> list[Any]: ...
@overload
def _jcopy(v: object) -> object: ...
def _jcopy(v: object) -> object:
    if isinstance(v, dict):
        return {k: _jcopy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jcopy(x) for x in v]
    return v


def _store(v: object) -> object:
    """A delta value as a slot holds it: strings growable, containers unshared with the frame."""
    if isinstance(v, str):
        return _Str(v)
    if isinstance(v, (dict, list)):
        return _jcopy(v)
    return v


def _out(v: object) -> object:
    if type(v) is _Str:
        return v.value()
    if isinstance(v, (dict, list)):
        return _jcopy(v)
    return v


def _scopy(v: object) -> object:
    """Copy of a slot value for snapshots (strings are immutable once joined)."""
    if type(v) is _Str:
        return v.copy()
    return _jcopy(v)


def _has_indexed(value: object) -> bool:
    return isinstance(value, list) and any(isinstance(e, dict) and "index" in e for e in value)


def _list_merge(acc: list[Any], delta: list[Any]) -> None:
    """accumulate_delta's list branch, on plain (already copied) data."""
    if all(isinstance(x, (str, int, float)) for x in acc) and (acc or not _has_indexed(delta)):
        acc.extend(delta)
        return
    for entry in delta:
        if not isinstance(entry, dict):
            raise TypeError(f"Unexpected list delta entry is not a dictionary: {entry}")
        try:
            index = entry["index"]
        except KeyError as exc:
            raise RuntimeError(
                f"Expected list delta entry to have an `index` key; {entry}"
            ) from exc
        if not isinstance(index, int):
            raise TypeError(
                f"Unexpected, list delta entry `index` value is not an integer; {index}"
            )
        try:
            acc_entry = acc[index]
        except IndexError:
            acc.insert(index, entry)
        else:
            if not isinstance(acc_entry, dict):
                raise TypeError("not handled yet")
            acc[index] = _acc_plain(acc_entry, entry)


def _acc_plain(acc: dict[Any, Any], delta: dict[Any, Any]) -> dict[Any, Any]:
    """openai.lib.streaming._deltas.accumulate_delta, verbatim semantics, plain data."""
    for key, dv in delta.items():
        if key not in acc or acc[key] is None:
            if _has_indexed(dv):
                acc[key] = []
            else:
                acc[key] = dv
                continue
        av = acc[key]
        if key == "index" or key == "type":
            acc[key] = dv
            continue
        if isinstance(av, str) and isinstance(dv, str):  # noqa: SIM114 (kept as the SDK has it)
            av += dv
        elif isinstance(av, (int, float)) and isinstance(dv, (int, float)):
            av += dv
        elif isinstance(av, dict) and isinstance(dv, dict):
            av = _acc_plain(av, dv)
        elif isinstance(av, list) and isinstance(dv, list):
            _list_merge(av, dv)
        acc[key] = av
    return acc


def _merge(acc: object, v: object) -> object:
    """accumulate_delta for one key (not index/type) whose accumulator is a slot value."""
    if acc is None:
        if not _has_indexed(v):
            return _store(v)
        acc = []
    if type(acc) is _Str:
        if type(v) is str:
            acc.add(v)
        return acc
    if isinstance(acc, (int, float)) and isinstance(v, (int, float)):
        return acc + v
    if isinstance(acc, dict) and isinstance(v, dict):
        return _acc_plain(acc, _jcopy(v))
    if isinstance(acc, list) and isinstance(v, list):
        _list_merge(acc, _jcopy(v))
    return acc


def _merge_key(slots: dict[Any, Any], key: str, v: object) -> None:
    if key == "index" or key == "type":
        slots[key] = _store(v)
    else:
        slots[key] = _merge(slots.get(key), v)


def _entry_repr(entry: dict[Any, Any]) -> dict[Any, Any]:
    """A tool-call delta entry as `ChoiceDeltaToolCall.to_dict()` orders it (fields, extras)."""
    out = {}
    for k in ("index", "id", "function", "type"):
        if k in entry:
            v = entry[k]
            if k == "function" and isinstance(v, dict):
                v = {
                    **{f: v[f] for f in ("arguments", "name") if f in v},
                    **{f: x for f, x in v.items() if f not in _FN_FIELDS},
                }
            out[k] = v
    for k, v in entry.items():
        if k not in _TOOL_FIELDS:
            out[k] = v
    return out


def _eq_name(slot: object, name: object) -> bool:
    """`input_name == snapshot_name` without joining a long name unless lengths agree."""
    if type(slot) is _Str:
        return type(name) is str and slot.n == len(name) and slot.value() == name
    return name == slot


def _usage_suffix(usage: object) -> str:
    """The ` - {completion.usage}` part of LengthFinishReasonError's message."""
    if usage is None:
        return ""
    if isinstance(usage, dict):
        return " - " + _usage_repr(usage)
    if isinstance(usage, (int, float, str, list)) and not usage:
        return ""
    raise Unmodeled("usage that is neither an object nor falsy")


def _usage_repr(usage: dict[Any, Any]) -> str:
    if any(k not in _USAGE_FIELDS for k in usage):
        raise Unmodeled("usage with extra keys")
    parts = []
    for k in _USAGE_FIELDS:
        v = usage.get(k)
        if k in _USAGE_DETAILS and v is not None:
            if not isinstance(v, dict):
                raise Unmodeled("usage details that are not objects")
            cls, fields = _USAGE_DETAILS[k]
            if any(f not in fields for f in v):
                raise Unmodeled("usage details with extra keys")
            inner = []
            for f in fields:
                x = v.get(f)
                if x is not None and (type(x) is not int):
                    raise Unmodeled("non-integer usage counts")
                inner.append(f"{f}={x!r}")
            parts.append(f"{k}={cls}({', '.join(inner)})")
            continue
        if v is not None and type(v) is not int:
            raise Unmodeled("non-integer usage counts")
        parts.append(f"{k}={v!r}")
    return f"CompletionUsage({', '.join(parts)})"


# --- snapshot state -----------------------------------------------------------------------


class _Fn:
    __slots__ = ("arguments", "name", "extras")

    def __init__(self) -> None:
        self.arguments: object = None
        self.name: object = None
        self.extras: dict[Any, Any] | None = None

    @classmethod
    def from_delta(cls, d: dict[Any, Any]) -> _Fn:
        fn = cls()
        for k, v in d.items():
            if k == "arguments":
                fn.arguments = _store(v)
            elif k == "name":
                fn.name = _store(v)
            else:
                if fn.extras is None:
                    fn.extras = {}
                fn.extras[k] = _store(v)
        return fn

    def merge(self, d: dict[Any, Any]) -> None:
        # to_dict() order: arguments, name, then extras
        if "arguments" in d:
            v = d["arguments"]
            a = self.arguments
            if type(a) is _Str and type(v) is str:
                a.add(v)
            else:
                self.arguments = _merge(a, v)
        if "name" in d:
            v = d["name"]
            a = self.name
            if type(a) is _Str and type(v) is str:
                a.add(v)
            else:
                self.name = _merge(a, v)
        if len(d) > ("arguments" in d) + ("name" in d):
            if self.extras is None:
                self.extras = {}
            for k, v in d.items():
                if k not in _FN_FIELDS:
                    _merge_key(self.extras, k, v)

    def copy(self) -> _Fn:
        fn = _Fn()
        fn.arguments = _scopy(self.arguments)
        fn.name = _scopy(self.name)
        fn.extras = None if self.extras is None else {k: _scopy(v) for k, v in self.extras.items()}
        return fn


class _Tool:
    """One snapshot tool-call entry (a ParsedFunctionToolCall), plus attribution."""

    __slots__ = (
        "index",
        "id",
        "type",
        "fn",
        "extras",
        "frags",
        "first",
        "last",
        "born",
        "tgen",
        "ptype",
        "fgen",
        "fkey",
        "owner",
        "call",
    )

    def __init__(self) -> None:
        self.index: object = None
        self.id: object = None
        self.type: object = None
        self.fn: _Fn | None = None
        self.extras: dict[Any, Any] | None = None
        self.frags = 1
        self.first = 0
        self.last = 0
        # accumulate-call generation that created it / that first overwrote its type, and
        # the type before that overwrite: what the SDK's `previous_tool_calls` still hold
        self.born = 0
        self.tgen = 0
        self.ptype: object = None
        self.fgen = 0  # generation whose merge first gave it a function object
        self.fkey = False  # a delta that built it in its creating call had a "function" key
        # copy on write (see SdkEmulation._own): the generation of the emulation that may
        # change it in place, and its Call once it cannot change (with the choice it was of)
        self.owner: object = None
        self.call: tuple[object, Call] | None = None

    @classmethod
    def from_delta(cls, e: dict[Any, Any], frame: int, gen: int) -> _Tool:
        t = cls()
        t.first = t.last = frame
        t.born = gen
        for k, v in e.items():
            if k == "index":
                t.index = v
            elif k == "id":
                t.id = _store(v)
            elif k == "function":
                t.fkey = True
                t.fn = None if v is None else _Fn.from_delta(v)
            elif k == "type":
                t.type = _jcopy(v)
            else:
                if t.extras is None:
                    t.extras = {}
                t.extras[k] = _store(v)
        return t

    def clone(self, owner: object) -> _Tool:
        """Copy on write: a copy of this shared entry for the emulation of generation
        `owner` to change (the generations it was built in kept: its choice keeps its own)."""
        t = _Tool()
        t.index = self.index
        t.id = _scopy(self.id)
        t.type = _jcopy(self.type)
        t.fn = None if self.fn is None else self.fn.copy()
        t.extras = None if self.extras is None else {k: _scopy(v) for k, v in self.extras.items()}
        t.frags, t.first, t.last = self.frags, self.first, self.last
        t.born, t.tgen, t.ptype, t.fgen, t.fkey = (
            self.born,
            self.tgen,
            self.ptype,  # (a replaced value, never changed in place)
            self.fgen,
            self.fkey,
        )
        t.owner = owner
        if self.fn is not None and type(self.fn.arguments) is _Str:
            # the copy grows, this never again: the copy takes the list with room for more
            # fragments, this the compact one (a replay keeps hundreds of such entries)
            mine, its = self.fn.arguments, t.fn.arguments  # type: ignore[union-attr]
            mine.parts, its.parts = its.parts, mine.parts  # type: ignore[union-attr]
        return t


def _shown(t: _Tool, choice: object, cow: object, changing: bool) -> Call | None:
    """Entry `t`'s Call in choice `choice`: made once for an entry no one changes in place
    (not of generation `cow`); None for one that is, when not `changing` (not shown now)."""
    kept = t.call
    mine = t.owner is cow
    if kept is not None and kept[0] is choice and not mine:
        return kept[1]
    if mine and not changing:
        return None
    fn = t.fn
    if fn is not None:
        name, arguments = _out(fn.name), _out(fn.arguments)
    else:
        name, arguments = custom_fields(_out((t.extras or {}).get("custom")))
    call = Call(
        choice=choice,  # type: ignore[arg-type]
        index=t.index,
        id=_out(t.id),
        type=_out(t.type),
        name=name,
        arguments=arguments,
        fragments=t.frags,
        first_frame=t.first,
        last_frame=t.last,
    )
    if not mine:
        t.call = (choice, call)
    return call


class _Choice:
    """One snapshot choice (a ParsedChoice) and its ChoiceEventState."""

    __slots__ = (
        "index",
        "finish_reason",
        "msg",
        "tools",
        "transient",
        "raw",
        "hazard",
        "gen",
        "shown",
        "dirty",
        "whole",
    )

    def __init__(self, index: object, finish_reason: object) -> None:
        self.index = index
        self.finish_reason = finish_reason
        self.raw = False  # an initial choice never replaced: its `message` is None
        self.hazard = False  # holds a "function" tool call whose `function` is None
        self.gen = 0  # generation of the last accumulate call on this choice
        self.msg: dict[Any, Any] = {}  # message keys other than tool_calls, strings as _Str
        self.tools: list[_Tool] | None = None
        # a delta set `parsed` / function `parsed_arguments`, which the next model_dump drops
        self.transient = False
        # per position of `tools`, the Call last shown (`show`), and the positions where it
        # may be out of date: an entry put there since (new, or copied to change) or one
        # this emulation changes in place; `whole`: the entries moved, make every Call
        self.shown: ChunkedList[Call | None] = ChunkedList()
        self.dirty: set[int] = set()
        self.whole = True

    def changed(self, i: int) -> None:
        """Another entry was put at position `i` of `tools` (read as a list reads it)."""
        self.dirty.add(i if i >= 0 else i + len(self.tools or ()))

    def show(self, cow: object, changing: bool = True) -> list[Call]:
        """The calls of `tools`, made again only where they may have changed (at 20,000
        calls a look at every entry took 3 ms a frame shown). `changing` False (before a
        copy) leaves the entries of generation `cow` to be made when shown."""
        tools = self.tools or []
        live: set[int] = set()
        if self.whole or len(self.shown) > len(tools):
            made: list[Call | None] = [None] * len(tools)
            index = self.index
            for i, t in enumerate(tools):
                made[i] = _shown(t, index, cow, changing)
                if t.owner is cow:
                    live.add(i)
            self.shown = ChunkedList(made)
            self.whole = False
        else:
            shown, index = self.shown, self.index
            # (entries appended since are the positions past the Calls shown)
            dirty = self.dirty.union(range(len(shown), len(tools)))
            shown.extend([None] * (len(tools) - len(shown)))
            for i in dirty:
                t = tools[i]
                if t.owner is cow:
                    live.add(i)
                    if not changing:
                        continue
                shown[i] = _shown(t, index, cow, True)
        self.dirty = live
        return self.shown.tolist() if changing else []  # type: ignore[return-value]

    def copy(self) -> _Choice:
        c = _Choice(self.index, _jcopy(self.finish_reason))
        c.msg = {k: _scopy(v) for k, v in self.msg.items()}
        c.tools = None if self.tools is None else list(self.tools)  # shared: SdkEmulation._own
        c.gen = self.gen  # (the generations its entries were built in are theirs still)
        c.transient = self.transient
        c.raw = self.raw
        c.hazard = self.hazard
        c.shown, c.dirty, c.whole = self.shown.copy(), set(self.dirty), self.whole
        return c


class _EventState:
    """ChoiceEventState: only the tool-call bookkeeping can raise."""

    __slots__ = ("cur", "done")

    def __init__(self) -> None:
        self.cur: object = None
        self.done: LayeredSet[Any] = LayeredSet()  # (a copy shares it: core/shared.py)

    def copy(self) -> _EventState:
        s = _EventState()
        s.cur = self.cur
        s.done = self.done.copy()
        return s


# --- the emulation ------------------------------------------------------------------------


class SdkEmulation:
    """ChatCompletionStreamState fed the way `client.chat.completions.stream()` feeds it."""

    __slots__ = (
        "_tools_in",
        "_parseable",
        "_unmodeled",
        "_halted",
        "_error",
        "_why",
        "_choices",
        "_states",
        "_usage",
        "_gen",
        "_shift",
        "_watch",
        "_hz",
        "_pa_seen",
        "_cow",
        "_escapes",
    )

    def __init__(
        self, input_tools: list[Any] | None = None, response_format: object | None = None
    ) -> None:
        self._unmodeled: str | None = None
        self._tools_in: list[Any] = []
        self._parseable = False
        if response_format is not None and not isinstance(response_format, dict):
            # a class: content is partially parsed with jiter and validated with pydantic
            self._unmodeled = "rich response_format"
        if input_tools is not None:
            try:
                self._tools_in = list(input_tools)
            except TypeError:
                self._unmodeled = "input_tools not iterable"
            for t in self._tools_in:
                if not isinstance(t, dict) or "type" not in t:
                    self._unmodeled = "input tool without a type"
                elif t["type"] == "function" and not isinstance(t.get("function"), dict):
                    self._unmodeled = "function input tool without a function object"
                elif t["type"] == "function" and t["function"].get("strict"):
                    self._parseable = True
        self._halted = False  # [DONE] seen or an exception raised: later frames are ignored
        self._error: StrategyError | None = None
        self._why: str | None = None  # why the SDK raises, where a strict tool explains it
        self._choices: list[_Choice] | None = None  # None until a chunk is accepted
        self._states: list[_EventState] = []
        self._usage: object = None
        self._gen = 0
        self._shift = False
        self._watch: list[_Tool] = []  # tools whose "function" type was overwritten this call
        self._hz: list[_Tool] = []  # tools made "function" without a function object this call
        self._pa_seen = False  # some function delta carried `parsed_arguments` (transient)
        # copy on write: the tool entries of this generation are this emulation's to change;
        # any other is shared with a copy and copied first (`_own`). Renewed by copy and seal.
        self._cow = object()
        # the gate (model_keys.escapes): the chunks the SDK dumps are looked at key by key
        # (`write_keys`) once a frame had an escape that may make a lone surrogate
        self._escapes = False

    # -- public API -------------------------------------------------------------------

    def feed(self, frame: Frame) -> None:
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        if self._halted:
            return
        try:
            self._feed(frame)
        except Unmodeled as exc:
            self._unmodeled = str(exc)
            raise
        except RecursionError as exc:
            # absurdly deep JSON: where it overflows depends on the caller's stack depth
            self._unmodeled = "recursion limit"
            raise Unmodeled(self._unmodeled) from exc
        except Exception as exc:
            self._error = StrategyError.from_exception(exc, frame.number, self._why)
            self._halted = True

    def feed_all(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            self.feed(frame)

    def finish(self, last_frame: int) -> list[Call] | StrategyError:
        """What `get_final_completion()` returns (as calls) or raises, at `last_frame`."""
        if self._unmodeled is not None:
            raise Unmodeled(self._unmodeled)
        if self._error is not None:
            return self._error
        try:
            return self._final()
        except Unmodeled:
            raise
        except Exception as exc:
            return StrategyError.from_exception(exc, last_frame, self._why)

    @property
    def error(self) -> StrategyError | None:
        """The exception a frame raised, if any (the stream stops there)."""
        return self._error

    def calls(self) -> list[Call]:
        """The snapshot's tool calls after the frames fed so far (cheap: strings are joined once).

        Choices in snapshot order (`choice` is the snapshot choice's `index`), then entries in
        list order. After a frame raised (see `error`) this is the state that frame left
        half-applied, which need not match the SDK's own half-applied snapshot.
        """
        out: list[Call] = []
        for cs in self._choices or ():
            if cs.tools:  # (a raw choice has none)
                out.extend(cs.show(self._cow))
        return out

    def copy(self) -> SdkEmulation:
        # the Calls shown brought up to date first: the copies of a replay's snapshot show
        # them without making them again
        for cs in self._choices or ():
            if cs.tools:
                cs.show(self._cow, changing=False)
        new = SdkEmulation.__new__(SdkEmulation)
        new._tools_in = self._tools_in
        new._parseable = self._parseable
        new._unmodeled = self._unmodeled
        new._halted = self._halted
        new._error = self._error
        new._why = self._why
        new._choices = None if self._choices is None else [c.copy() for c in self._choices]
        new._states = [s.copy() for s in self._states]
        new._usage = self._usage  # the frame's own value, never mutated
        new._gen = self._gen
        new._shift = False
        new._watch = []
        new._hz = []
        new._pa_seen = self._pa_seen
        new._escapes = self._escapes
        self._cow, new._cow = object(), object()
        return new

    def seal(self) -> None:
        """The entries as they are stay so (their calls were shown): a change copies first."""
        self._cow = object()

    def _own(self, cs: _Choice, i: int) -> _Tool:
        """Entry `i` of `cs.tools`, to change: a copy of it first if it is shared."""
        tools = cs.tools
        assert tools is not None
        t = tools[i]
        if t.owner is not self._cow:
            t = tools[i] = t.clone(self._cow)
            cs.changed(i)
        return t

    def snapshot(self) -> SdkEmulation:
        return self.copy()

    def restore(self, snapshot: SdkEmulation) -> None:
        src = snapshot.copy()  # keep `snapshot` reusable
        for name in SdkEmulation.__slots__:
            setattr(self, name, getattr(src, name))

    # -- the engine's fast path -------------------------------------------------------
    # A plain frame (streamscope.dialects.chat.engine._plain: a valid chunk, one choice 0 with no
    # finish_reason, logprobs, usage or moderation, whose delta is exactly one argument
    # fragment for an existing index, or one content fragment) does nothing in the SDK but
    # concatenate, unless one of the conditions below says otherwise; then the whole frame
    # goes through `feed`.

    def _fast_choice(self) -> tuple[_Choice, _EventState] | None:
        if self._unmodeled is not None or self._parseable or self._choices is None:
            return None
        if not self._choices or not self._states:
            return None
        cs, st = self._choices[0], self._states[0]
        if cs.raw or cs.transient or cs.hazard or cs.finish_reason or cs.index != 0:
            return None
        return cs, st

    def fast_args(self, frame: int, index: int, text: str) -> bool:
        if self._halted and self._unmodeled is None:
            return True  # stopped at [DONE] or an exception: later frames change nothing
        got = self._fast_choice()
        if got is None:
            return False
        cs, st = got
        tools = cs.tools
        if not tools or index >= len(tools):
            return False
        t = tools[index]
        fn = t.fn
        if fn is None or type(fn.arguments) is not _Str:
            return False
        cur = st.cur
        if cur != index and cur is not None:
            # _build_events: a fragment of another call ends the current one (its done
            # event), which cannot raise when that call has its function object (no strict
            # tool here: _fast_choice checked `_parseable`)
            if type(cur) is not int or not 0 <= cur < len(tools):
                return False
            was = tools[cur]
            if was.type == "function" and was.fn is None:
                return False
            st.done.add(cur)
        st.cur = index
        self._gen += 1
        cs.gen = self._gen
        self._usage = None
        t = self._own(cs, index)
        t.fn.arguments.add(text)  # type: ignore[union-attr]
        t.frags += 1
        t.last = frame
        return True

    def fast_content(self, frame: int, text: str) -> bool:
        if self._halted and self._unmodeled is None:
            return True
        got = self._fast_choice()
        if got is None:
            return False
        cs, _ = got
        content = cs.msg.get("content")
        if type(content) is not _Str:
            return False
        self._gen += 1
        cs.gen = self._gen
        self._usage = None
        content.add(text)
        return True

    def extend(self, run: Run) -> None:
        """Fragments `fast_args` / `fast_content` accepted the first of (nothing else since)."""
        if self._halted:
            return
        cs, st = self._choices[0], self._states[0]  # type: ignore[index]
        for index, texts in run.args.items():
            t = self._own(cs, index)
            t.fn.arguments.extend(texts)  # type: ignore[union-attr]
            t.frags += len(texts)
            t.last = run.lasts[index]
        if run.content:
            cs.msg["content"].extend(run.content)
        if run.args:
            st.done.update(run.left)  # each call a switch went away from had its done event
            st.cur = run.cur
        self._gen += len(run.order) + len(run.content)
        cs.gen = self._gen

    # -- Stream / ChatCompletionStream ------------------------------------------------

    def _feed(self, frame: Frame) -> None:
        data = frame.data
        if data.startswith("[DONE]"):
            self._halted = True
            return
        # (frame.payload may be the stdlib's reading, which keeps a lone surrogate)
        self._escapes = escapes(self._escapes, data)
        p = frame.payload
        if p is INVALID:
            p = json.loads(data)  # what sse.json() does; raises JSONDecodeError
        event = frame.event
        if event and event.startswith("thread."):
            # wrapped as {"data": ..., "event": ...} (extras, not constructed): no `object`, so
            # ChatCompletionStream skips it
            return
        if type(p) is not dict:
            # construct_type returns it as-is (a list: each object constructed), then `.object`
            _guard_deep(p)
            raise AttributeError(f"'{type(p).__name__}' object has no attribute 'object'")
        err = p.get("error")
        if err:
            message = err.get("message") if isinstance(err, dict) else None
            if not message or not isinstance(message, str):
                message = "An error occurred during streaming"
            raise APIError(message)
        if p.get("object") != "chat.completion.chunk":
            _guard_deep(p)
            return
        self._handle_chunk(p, frame.number)

    # -- ChatCompletionStreamState.handle_chunk --------------------------------------

    def _parse_choices(self, p: dict[Any, Any]) -> list[Any] | None:
        """Validate what we model of a chunk before touching any state."""
        _guard(p)
        if p.get("moderation") is not None:
            raise Unmodeled("moderation")
        usage = p.get("usage")
        if isinstance(usage, (dict, list)):
            _guard_deep(usage)  # CompletionUsage and its details are constructed
            if unwritable_deep(usage):
                # the snapshot keeps the last chunk's usage and writes it at the end
                raise Unmodeled("a usage key pydantic cannot write (a lone surrogate)")
        choices = p.get("choices")
        if choices is None:
            return None
        if type(choices) is not list:
            raise Unmodeled("choices is not a list")
        for ch in choices:
            if type(ch) is not dict:
                raise Unmodeled("a choice that is not an object")
            _guard(ch)
            idx = ch.get("index")
            if idx is not None and type(idx) is not int:
                raise Unmodeled("a choice index that is not an integer")
            logprobs = ch.get("logprobs")
            if logprobs is not None:
                check_logprobs(logprobs)
            delta = ch.get("delta")
            if delta is None:
                continue
            if type(delta) is not dict:
                raise Unmodeled("a delta that is not an object")
            _guard(delta)
            for key in _COERCING_MESSAGE_KEYS:
                if delta.get(key) is not None:
                    raise Unmodeled(f"delta.{key}")
            fc = delta.get("function_call")
            if fc is not None:
                if type(fc) is not dict:
                    raise Unmodeled("function_call that is not an object")
                _guard(fc)
            tcs = delta.get("tool_calls")
            if tcs is None:
                continue
            if type(tcs) is not list:
                raise Unmodeled("tool_calls is not a list")
            for e in tcs:
                if type(e) is not dict:
                    raise Unmodeled("a tool-call delta that is not an object")
                _guard(e)
                i = e.get("index")
                if i is not None and type(i) is not int:
                    # pydantic may coerce it ("0" -> 0) when the whole list validates
                    raise Unmodeled("a tool-call index that is not an integer")
                f = e.get("function")
                if f is not None:
                    if type(f) is not dict:
                        raise Unmodeled("a tool-call function that is not an object")
                    _guard(f)
                    if "parsed_arguments" in f:
                        self._pa_seen = True
        return choices

    def _handle_chunk(self, p: dict[Any, Any], frame: int) -> None:
        choices = self._parse_choices(p)
        if self._choices is None:
            self._initial(p, choices, frame)
        else:
            self._accumulate(p, choices, frame)
        self._build_events(choices, frame)

    def _initial(self, p: dict[Any, Any], choices: list[Any] | None, frame: int) -> None:
        """_convert_initial_chunk_into_snapshot."""
        # chunk.to_dict() first: the chunk's fields (its choices, each delta before the
        # choice's own keys), then its own keys (usage and logprobs are never reached here:
        # `_parse_choices` left such keys in them to the real class)
        if self._escapes:
            for ch in choices or ():
                delta = ch.get("delta")
                if delta is not None:
                    _write_delta(delta)
                write_keys(ch)
            write_keys(p)
        if "choices" not in p:
            raise KeyError("choices")  # data["choices"] on chunk.to_dict()
        if choices is None:
            raise TypeError("'NoneType' object is not iterable")
        # `choices` starts as the dumped chunk choices; each is replaced at its `index`
        slots: list[_Choice | None] = [None] * len(choices)
        for ch in choices:
            cs = self._new_choice(ch, frame)
            slots[ch.get("index")] = cs  # natural TypeError / IndexError, like the SDK's
        for i, cs in enumerate(slots):  # type: ignore[assignment]
            if cs is None:
                # never replaced (two choices shared an index): a ParsedChoice without a message
                ch = choices[i]
                if "message" in ch:
                    raise Unmodeled("an unreplaced initial choice carrying a message")
                slots[i] = cs = _Choice(ch.get("index"), ch.get("finish_reason"))
                cs.raw = True
        self._choices = slots  # type: ignore[assignment]
        self._usage = p.get("usage")

    def _new_choice(self, ch: dict[Any, Any], frame: int) -> _Choice:
        # {**choice.model_dump(exclude={"delta"}), "message": ...(choice.delta.to_dict())}
        escaped = self._escapes
        if escaped:
            write_keys(ch)
        delta = ch.get("delta")
        if delta is None:
            raise AttributeError("'NoneType' object has no attribute 'to_dict'")
        if escaped:
            _write_delta(delta)
        cs = _Choice(ch.get("index"), ch.get("finish_reason"))
        self._acc_message(cs, delta, frame)
        return cs

    def _accumulate(self, p: dict[Any, Any], choices: list[Any] | None, frame: int) -> None:
        """_accumulate_chunk for a chunk after the first."""
        if choices is None:
            raise TypeError("'NoneType' object is not iterable")
        snap = self._choices
        assert snap is not None
        for ch in choices:
            idx = ch.get("index")
            try:
                cs = snap[idx]
            except IndexError:
                cs = self._new_choice(ch, frame)
                snap.append(cs)
            else:
                if cs.raw:
                    raise AttributeError("'NoneType' object has no attribute 'tool_calls'")
                delta = ch.get("delta")
                if delta is None:
                    raise AttributeError("'NoneType' object has no attribute 'to_dict'")
                # (model_dump of the message snapshot first: every key it holds came in a
                # delta written before, so it cannot raise)
                if self._escapes:
                    _write_delta(delta)
                self._acc_message(cs, delta, frame)

            fr = ch.get("finish_reason")
            if fr:
                cs.finish_reason = fr
                if self._parseable:  # a strict tool is declared
                    if fr in ("length", "content_filter"):
                        self._why = strict.cut(fr)
                    if fr == "length":
                        raise LengthFinishReasonError(
                            "Could not parse response content as the length limit was reached"
                            + _usage_suffix(self._usage)
                        )
                    if fr == "content_filter":
                        raise ContentFilterFinishReasonError(
                            "Could not parse response content as the request was rejected"
                            " by the content filter"
                        )

            tcs = ch["delta"].get("tool_calls")
            if tcs:
                tools = cs.tools or []
                for e in tcs:
                    t = tools[e.get("index")]  # natural TypeError / IndexError
                    if t.type == "function":
                        fn = t.fn
                        if fn is None:
                            raise AttributeError("'NoneType' object has no attribute 'name'")
                        if self._tools_in:
                            tool = self._input_tool(fn.name)
                            if (
                                tool
                                and tool.get("function", {}).get("strict")
                                and _truthy(fn.arguments)
                            ):
                                raise Unmodeled("jiter partial parse of strict tool arguments")
        self._usage = p.get("usage")

    def _acc_message(self, cs: _Choice, delta: dict[Any, Any], frame: int) -> None:
        """accumulate_delta(message snapshot, delta.to_dict()) + the parsed_arguments re-add."""
        self._gen += 1
        gen = cs.gen = self._gen
        self._shift = False
        watch = self._watch
        watch.clear()
        self._hz.clear()
        if cs.transient:
            cs.msg.pop("parsed", None)
            for i, t in enumerate(cs.tools or ()):
                if t.fn is not None and t.fn.extras and "parsed_arguments" in t.fn.extras:
                    self._own(cs, i).fn.extras.pop("parsed_arguments")  # type: ignore[union-attr]
            cs.transient = False
        if len(delta) == 1:
            items: Iterable[Any] = delta.items()
        else:
            items = [(k, delta[k]) for k in _DELTA_FIELDS if k in delta]
            items += [(k, v) for k, v in delta.items() if k not in _DELTA_FIELD_SET]
        for k, v in items:
            if k == "tool_calls":
                if v is not None:
                    self._acc_tools(cs, v, frame, gen)
            else:
                if k == "parsed":
                    cs.transient = True
                _merge_key(cs.msg, k, v)
        tools = cs.tools
        if tools is None:
            return
        # The re-add loop: for each previous tool (by position) that was a function,
        # `assert new_tool.type == "function"` then
        # `new_tool.function.parsed_arguments = prev_tool.function.parsed_arguments`.
        # It can only fail if an entry was shifted, a function's type was overwritten, or a
        # function without a `function` object existed before this call (cs.hazard).
        if self._shift or watch or cs.hazard:
            prev = [t for t in tools if t.born != gen]
            for i, pt in enumerate(prev):
                ptype = pt.ptype if pt.tgen == gen else pt.type
                if ptype != "function":
                    continue
                new = tools[i]
                if new.type != "function":
                    raise AssertionError
                if pt.fn is None or pt.fgen == gen or new.fn is None:
                    raise AttributeError("'NoneType' object has no attribute 'parsed_arguments'")
        # no exception: only entries created or retyped in this call can be hazards now
        cs.hazard = any(t.type == "function" and t.fn is None for t in self._hz)

    def _acc_tools(self, cs: _Choice, v: list[Any], frame: int, gen: int) -> None:
        tools = cs.tools
        if self._pa_seen and any(
            type(f := e.get("function")) is dict and "parsed_arguments" in f for e in v
        ):
            cs.transient = True
        if tools is None:
            if not _has_indexed(v):
                # _has_indexed_entries first-value rule: the list is taken as-is
                cs.tools = [self._new_tool(e, frame, gen) for e in v]
                cs.whole = True
                return
            tools = cs.tools = []
            cs.whole = True
        elif not tools and not _has_indexed(v):
            tools.extend(self._new_tool(e, frame, gen) for e in v)
            cs.whole = True
            return
        for e in v:
            if "index" not in e:
                raise RuntimeError(
                    f"Expected list delta entry to have an `index` key; {_entry_repr(e)}"
                )
            idx = e["index"]
            if idx is None:
                raise TypeError(
                    "Unexpected, list delta entry `index` value is not an integer; None"
                )
            try:
                t = tools[idx]
            except IndexError:
                if idx < 0 and tools:
                    self._shift = True  # list.insert puts it at 0, shifting the old entries
                tools.insert(idx, self._new_tool(e, frame, gen))
                if idx < 0:
                    cs.whole = True  # (past the end, it was appended: `show` sees it)
                continue
            if t.owner is not self._cow:  # shared with a copy: changed as a copy of its own
                t = tools[idx] = t.clone(self._cow)
                cs.changed(idx)
            self._merge_tool(t, e, frame, gen)

    def _new_tool(self, e: dict[Any, Any], frame: int, gen: int) -> _Tool:
        t = _Tool.from_delta(e, frame, gen)
        t.owner = self._cow
        if t.type == "function" and t.fn is None:
            self._hz.append(t)
        return t

    def _merge_tool(self, t: _Tool, e: dict[Any, Any], frame: int, gen: int) -> None:
        t.frags += 1
        t.last = frame
        known = 0
        if "index" in e:
            known += 1
            t.index = e["index"]
        if "id" in e:
            known += 1
            v = e["id"]
            a = t.id
            if type(a) is _Str and type(v) is str:
                a.add(v)
            else:
                t.id = _merge(a, v)
        if "function" in e:
            known += 1
            t.fkey = True
            f = e["function"]
            if f is not None:
                if t.fn is None:
                    t.fn = _Fn.from_delta(f)
                    t.fgen = gen  # the SDK's previous tool still has function None
                else:
                    t.fn.merge(f)
        if "type" in e:
            known += 1
            if t.born != gen:
                if t.tgen != gen:
                    t.tgen = gen
                    t.ptype = t.type
                if t.ptype == "function":
                    self._watch.append(t)
            t.type = _jcopy(e["type"])
            if t.type == "function" and t.fn is None:
                self._hz.append(t)
        if len(e) > known:
            if t.extras is None:
                t.extras = {}
            for k, v in e.items():
                if k not in _TOOL_FIELDS:
                    _merge_key(t.extras, k, v)

    def _build_events(self, choices: list[Any] | None, frame: int) -> None:
        """The parts of _build_events / ChoiceEventState.get_done_events that can raise."""
        snap = self._choices
        assert snap is not None
        states = self._states
        for ch in choices or ():
            idx = ch.get("index")
            try:
                st = states[idx]
            except IndexError:
                st = _EventState()
                states.append(st)
            cs = snap[idx]  # natural IndexError
            if cs.raw:
                raise Unmodeled("events on a choice without a message")  # unreachable
            tcs = ch["delta"].get("tool_calls")
            if tcs:
                tools = cs.tools
                if tools is None:
                    raise AssertionError
                for e in tcs:
                    t = tools[e.get("index")]
                    if t.type == "function":
                        if e.get("function") is None:
                            raise AssertionError
                        if t.fn is None:
                            raise AttributeError("'NoneType' object has no attribute 'name'")
            if cs.finish_reason and st.cur is not None and st.cur not in st.done:
                self._tool_done(st, cs, st.cur)
            for e in tcs or ():
                i = e.get("index")
                if st.cur != i and st.cur is not None:
                    self._tool_done(st, cs, st.cur)
                st.cur = i

    def _tool_done(self, st: _EventState, cs: _Choice, i: object) -> None:
        """_add_tool_done_event."""
        if i in st.done:
            return
        st.done.add(i)
        if cs.tools is None:
            raise AssertionError
        t = cs.tools[i]  # type: ignore[call-overload]
        if t.type == "function":
            self._parse_arguments(t.fn)

    def _parse_arguments(self, fn: _Fn | None) -> None:
        """parse_function_tool_arguments (only its exceptions matter)."""
        if fn is None:
            raise AttributeError("'NoneType' object has no attribute 'name'")
        if not self._tools_in:
            return
        tool = self._input_tool(fn.name)
        if not tool or not tool["function"].get("strict"):
            return
        try:
            json.loads(_out(fn.arguments))  # type: ignore[arg-type]
        except (ValueError, TypeError):
            self._why = strict.parsed(_out(fn.name))
            raise

    def _input_tool(self, name: object) -> dict[Any, Any] | None:
        """get_input_tool_by_name."""
        for t in self._tools_in:
            if t["type"] == "function" and _eq_name(name, t.get("function", {}).get("name")):
                return t  # type: ignore[no-any-return]
        return None

    # -- get_final_completion -----------------------------------------------------------

    def _final(self) -> list[Call]:
        if self._choices is None:
            raise AssertionError  # current_completion_snapshot before any chunk
        for cs in self._choices:
            if cs.finish_reason == "length":
                raise LengthFinishReasonError(
                    "Could not parse response content as the length limit was reached"
                    + _usage_suffix(self._usage)
                )
            if cs.finish_reason == "content_filter":
                raise ContentFilterFinishReasonError(
                    "Could not parse response content as the request was rejected by the"
                    " content filter"
                )
            if cs.raw:
                raise AttributeError("'NoneType' object has no attribute 'tool_calls'")
            for t in cs.tools or ():
                if t.type == "function":
                    if t.fn is None:
                        # `{**tool_call.to_dict()["function"], ...}`: to_dict() keeps only set
                        # fields, and every field is set once the entry has been re-dumped
                        if t.fkey or t.born != cs.gen:
                            raise TypeError("'NoneType' object is not a mapping")
                        raise KeyError("function")
                    self._parse_arguments(t.fn)
                elif t.type == "custom":
                    # the snapshot holds ParsedFunctionToolCall, so `tool_call.custom.name`
                    # (for the log warning) looks up an extra
                    extras = t.extras or {}
                    if "custom" not in extras:
                        raise AttributeError(
                            "'ParsedFunctionToolCall' object has no attribute 'custom'"
                        )
                    raise AttributeError(
                        f"'{type(_out(extras['custom'])).__name__}' object has no attribute 'name'"
                    )
        return self.calls()


def _truthy(v: object) -> bool:
    if type(v) is _Str:
        return v.n > 0
    return bool(v)
