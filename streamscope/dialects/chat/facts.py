"""What a Chat Completions frame surely does to the engine, worked out from the frame
alone: the facts `--minimal`'s judge (export/minimize.py) reads to reject a candidate
without running the engine.

Each fact follows a rule of this dialect's own code, and names it: Robust.feed and
Robust._tool (robust.py), the per-delta predicates they share with this module
(`index_kind`, `void_entry`, `lacks_function`, `choice_of`, `sets_finish`, `sets_name`), and the docs
snippet (strategies.OpenAIDocs). A hypothesis test holds every rule to the engine's
full answer (tests/test_minimize_judge.py), so a rule that drifts from its source fails.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...core.frames import INVALID, NOT_READ, parse_payload, read_sent
from ...core.record import record
from ...core.repair import parses
from .engine import plain_fragment
from .robust import choice_of, index_kind, lacks_function, sets_finish, sets_name, void_entry
from .schema import violation


@record(frozen=True, slots=True, eq=False)  # eq=False: compared by identity, in C
class Parsed:
    """What the judge knows of one frame text, worked out once per text."""

    payload: object
    plain: object  # plain_fragment(payload), handed to the engine
    problem: object  # violation(payload, data) when Robust.feed reads it, handed on; or NOT_READ
    forced: frozenset[str]  # warning and error kinds the engine files for it, whatever the context
    finishes: bool  # it may set a choice's finish_reason
    may: frozenset[str]  # the kinds of NEEDS it may make the engine file
    opens: bool  # Robust.feed surely reads a tool call delta of it: a call exists after it
    names: bool  # it may name a call
    # what Robust._tool reads of each tool call delta of it, in order (see _Entry)
    calls: tuple[_Entry, ...]
    # OpenAIDocs.feed raises on it, unless it stopped before (an earlier frame that is
    # not JSON: [DONE], or its own error): not an object, an error, no choice to read
    docs_raise: bool
    # one choice, its tool call deltas objects with a non-negative integer index and a
    # function with string arguments: the docs snippet and robust read the same deltas
    # alike (see docs_differs)
    simple: bool
    # the text as its framing reads it, where the frame's bytes are not UTF-8 (the data is
    # as sent: core.frames.as_sent); None: the data itself
    utf8: str | None = None


def parsed(data: str, payload: object = None) -> Parsed:
    """`data` as sent (core.frames.as_sent); `payload`: parse_payload of its reading, when
    the caller has it."""
    text, bad = read_sent(data)
    if payload is None:  # JSON null parses to None too: parsing it again costs nothing
        payload = parse_payload(text)
    # (StreamEngine.feed reads a frame whose bytes are not UTF-8 whole, never as a fragment)
    plain = None if bad else plain_fragment(payload)
    forced: set[str] = {"invalid-utf8"} if bad else set()  # (Robust.feed files it first)
    data = text
    problem: object = NOT_READ
    # Both kinds are filed by Robust.feed, which every frame with no plain fragment goes
    # through (engine.feed), before any state is read; the log never takes them back.
    error_only = _error_only(payload)
    if plain is None:
        if payload is INVALID:
            if data.strip() != "[DONE]":  # Frame.is_done
                forced.add("chunk-invalid-json")
        elif not error_only:  # what Robust.feed checks the schema of
            problem = violation(payload, data)
            if problem is not None:
                forced.add("chunk-schema-violation")
    read = [] if error_only else _read(payload)  # a plain fragment's too
    if plain is None and not error_only and _bad_choice_index(payload):
        forced.add("index-invalid")  # (Robust.feed reads every choice's index)
    for _, entry in read:
        forced.update(_entry_kinds(entry))  # (none for a plain fragment)
    # an entry with an invalid index that carries nothing is filed, and is no call
    read = [(c, entry) for c, entry in read if not void_entry(entry)]
    entries = [entry for _, entry in read]
    return Parsed(
        payload,
        plain,
        problem,
        frozenset(forced),
        _finishes(payload),
        _may(entries),
        plain is None and bool(read),
        any(_named(e.get(k)) for e in entries for k in ("function", "custom")),
        tuple(_entry(c, entry) for c, entry in read),
        payload is not INVALID and _docs_raises(payload),
        _simple(payload),
        text if bad else None,
    )


def _simple(payload: object) -> bool:
    if not isinstance(payload, dict) or payload.get("error"):
        return False
    choices = payload.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return False
    choice = choices[0]
    delta = choice.get("delta")
    if isinstance(choice.get("index"), bool) or not isinstance(delta, dict):
        return False  # (the snippet keys a choice indexed True apart from 0; robust does not)
    calls = delta.get("tool_calls")
    return calls is None or (
        isinstance(calls, list)
        and all(
            isinstance(c, dict)
            and type(c.get("index")) is int
            and c["index"] >= 0
            and isinstance(fn := c.get("function"), dict)
            and isinstance(fn.get("arguments"), str)
            for c in calls
        )
    )


def _docs_raises(payload: object) -> bool:
    """Does OpenAIDocs.feed surely raise on this payload (parsed JSON)? Its snippet reads
    `chunk.choices[0].delta.tool_calls`, then `function.arguments` of each, and adds
    the arguments to those stored: None (absent, or null) raises TypeError."""
    if not isinstance(payload, dict) or payload.get("error"):
        return True  # the SDK raises on an error, the snippet on what has no choices
    choices = payload.get("choices")
    if choices is None or choices == []:
        return True
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        return False  # (it may raise too: not followed)
    delta = choices[0].get("delta")
    if not isinstance(delta, dict):
        return True  # `None.tool_calls`
    calls = delta.get("tool_calls")
    return isinstance(calls, list) and any(
        isinstance(c, dict)
        and isinstance(fn := c.get("function"), dict)
        and fn.get("arguments") is None
        for c in calls
    )


def _error_only(payload: object) -> bool:
    """Robust.feed reads nothing more of an error payload without choices."""
    return isinstance(payload, dict) and bool(payload.get("error")) and "choices" not in payload


def _choices(payload: object) -> list[Any]:
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return choices if isinstance(choices, list) else []


def _read(payload: object) -> list[tuple[int, dict[Any, Any]]]:
    """(choice, tool call delta) for each delta Robust.feed hands to Robust._tool, in order
    (the caller has ruled out an error payload without choices, which it stops at)."""
    out: list[tuple[int, dict[Any, Any]]] = []
    for choice in _choices(payload):
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta")
        calls = delta.get("tool_calls") if isinstance(delta, dict) else None
        if isinstance(calls, list):
            c = choice_of(choice)
            out.extend((c, e) for e in calls if isinstance(e, dict))
    return out


def _bad_choice_index(payload: object) -> bool:
    """A choice Robust.feed reads has an index that is present and not a non-negative
    integer (null is left to the schema check)."""
    return any(
        isinstance(choice, dict)
        and "index" in choice
        and index_kind(choice["index"]) == "index-invalid"
        for choice in _choices(payload)
    )


def _entry_kinds(entry: dict[Any, Any]) -> set[str]:
    """Warning and error kinds Robust._tool files for `entry`, whatever came before."""
    if void_entry(entry):
        return {"index-invalid"}  # and nothing else: it is no call
    out = set()
    kind = index_kind(entry.get("index"))
    if kind is not None:
        out.add(kind)
    if lacks_function(entry):
        out.add("function-missing")
    return out


@record(frozen=True, slots=True)
class _Entry:
    """What Robust._tool reads of one tool call delta, for calls_file."""

    choice: int  # as Robust.feed normalizes it
    key: object  # Robust._tool's key of the index; None when it has none
    number: int  # the index when a non-negative integer, else -1
    id: str | None  # a non-empty string id, else None
    name: str | None  # a non-empty string name (of the function, or else of the custom body)
    filled: bool  # its arguments may leave the call's arguments other than ""
    custom: bool  # read as a custom call: its input is free text
    args: object  # its function's arguments as sent (None when absent)
    # it has no id, or a function with no name (absent, or null): a call the docs
    # snippet begins with it holds None there, which robust never holds
    bare: bool


def _entry(c: int, entry: dict[Any, Any]) -> _Entry:
    raw = entry.get("index")
    integer = isinstance(raw, int) and not isinstance(raw, bool)
    key = None if raw is None else raw if integer else repr(raw)
    fn = entry.get("function")
    fn = fn if isinstance(fn, dict) else None
    custom = entry.get("custom") if fn is None else None
    custom = custom if isinstance(custom, dict) else None
    body = fn if custom is None else custom
    idv, name = entry.get("id"), body.get("name") if body is not None else None
    return _Entry(
        c,
        key,
        raw if integer and isinstance(raw, int) and raw >= 0 else -1,
        idv if isinstance(idv, str) and idv else None,
        name if isinstance(name, str) and name else None,
        # Robust._arguments skips None and ""; anything else is text or a value kept
        fn is not None and fn.get("arguments") not in (None, ""),
        custom is not None,
        fn.get("arguments") if fn is not None else None,
        entry.get("id") is None or fn is None or fn.get("name") is None,
    )


def docs_differs(facts: list[Parsed]) -> bool:
    """Does the openai-docs snippet surely build other calls than robust on frames of
    these facts? On simple frames (one choice, no [DONE], nothing it raises on) it
    stores each call's first delta and then adds that delta's arguments to it: its
    calls hold every fragment once and each call's first one twice, where robust keeps
    each fragment once at the most (a re-sent one or a snapshot less); and a call keeps
    the first delta's id and name, None when absent or null, where robust holds "" or a
    string. So a call whose first delta carries arguments, or lacks an id or a name,
    makes the two differ."""
    if not all(got.simple for got in facts):
        return False
    first: set[tuple[int, object]] = set()  # (choice, index) of the calls begun
    for got in facts:
        for e in got.calls:
            if (e.choice, e.key) not in first:
                if e.args or e.bare:  # the first delta of a call
                    return True
                first.add((e.choice, e.key))
    return False


def docs_raise(facts: list[Parsed]) -> bool:
    """Does the openai-docs strategy surely raise on frames of these facts, in order?"""
    for got in facts:
        if got.payload is INVALID:  # [DONE] stops it (else it raised: unknown, stop here)
            return False
        if got.docs_raise:
            return True
    return False


class _Group:
    """The tool call deltas of one choice at one index, as calls_file follows them."""

    __slots__ = ("ids", "names", "filled", "parts", "joined")

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.names: set[str] = set()
        self.filled = False  # arguments other than null or "", or a custom call
        self.parts: list[str] = []  # the non-empty string arguments, in order
        # every argument a string, none after the first non-empty one opening with { or [
        self.joined = True

    def add(self, e: _Entry) -> None:
        if e.id is not None:
            self.ids.add(e.id)
        if e.name is not None:
            self.names.add(e.name)
        if e.filled or e.custom:
            self.filled = True
        args = e.args
        if e.custom or (args is not None and not isinstance(args, str)):
            self.joined = False
        elif args:
            if self.parts and args[0] in "{[":
                self.joined = False
            self.parts.append(args)


def _named(body: object) -> bool:
    return sets_name(body.get("name") if isinstance(body, dict) else None)


def _finishes(payload: object) -> bool:
    """Can Robust.feed set a finish_reason from this payload (it alone sets one)?"""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return isinstance(choices, list) and any(
        isinstance(c, dict) and sets_finish(c.get("finish_reason")) for c in choices
    )


# Kinds that one rule files, each only from a frame with a tool call delta that has the
# field it overwrites, present and null or "" (Robust._id, Robust._name): a candidate
# with no such frame cannot show them.
NEEDS = ("id-empty-overwrite", "name-empty-overwrite")


def _may(entries: list[dict[Any, Any]]) -> frozenset[str]:
    out = set()
    for entry in entries:
        if _emptied(entry, "id"):
            out.add("id-empty-overwrite")
        # Robust reads the name from `function`, or from `custom` when that is no object
        if any(_emptied(entry.get(k), "name") for k in ("function", "custom")):
            out.add("name-empty-overwrite")
    return frozenset(out)


def _emptied(holder: object, key: str) -> bool:
    return isinstance(holder, dict) and key in holder and holder[key] in (None, "")


def surely(facts: Iterable[Parsed]) -> tuple[set[str], set[str]]:
    """(kinds the engine surely files for `frames`, the kinds of NEEDS it may file).

    Only what the engine files whatever else the stream holds counts as sure: a
    frame's forced kinds; finish-reason-missing when no frame can set a finish_reason
    (engine.finish files it for every choice left without one, or for no choice);
    name-missing when a frame opens a call and none can name one (a call's name is
    only ever set from a non-empty string). `facts`: the frames' facts (each distinct
    text's once is enough: every fact is a union over the frames)."""
    filed: set[str] = set()
    may: set[str] = set()
    finishes = opens = names = False
    for got in facts:
        if got.forced:
            filed |= got.forced
        if got.may:
            may |= got.may
        finishes = finishes or got.finishes
        opens = opens or got.opens
        names = names or got.names
    if not finishes:
        filed.add("finish-reason-missing")
    if opens and not names:
        filed.add("name-missing")
    return filed, may


def calls_file(facts: list[Parsed]) -> set[str]:
    """Kinds the engine surely files for a stream of these frames, in this order, by
    following Robust._target's routing of tool call deltas to calls where it is sure.

    index-gap: the first delta of a choice at an index k >= 0 makes a call there
    (nothing sits at k yet; an id routes it elsewhere only when an earlier delta of
    the choice carried that id), and k is beyond every index seen before, plus one.
    name-missing, args-empty: the deltas of a choice at one index k go to calls that
    only deltas at k reach (one or more, when an id or name starts another call at
    k), when no delta of the choice lacks an index (Robust would attach it to the
    latest call) and no id they carry is carried at another index too (an id routes
    a delta to its call whatever the index). Each such call then ends with no name
    when none of them names one, and with arguments "" when none of them carries
    arguments other than null or "" and none is custom.
    args-invalid-json: so too when those deltas carry one id and one name at the
    most (one call, then), none is custom, and their arguments are strings of which
    none but the first non-empty one opens with "{" or "[" (Robust reads such a one
    as maybe re-sent or a snapshot): the call's arguments are their concatenation,
    filed when it is not "" and stdlib json does not parse it."""
    filed: set[str] = set()
    top: dict[int, int] = {}  # choice -> the highest index >= 0 seen
    ids: dict[int, set[str]] = {}  # choice -> the ids its deltas carried
    groups: dict[tuple[int, object], _Group] = {}  # (choice, key) -> its deltas
    unkeyed: set[int] = set()  # choices with a delta that has no index
    for got in facts:
        for e in got.calls:
            c, key, number, idv = e.choice, e.key, e.number, e.id
            seen = ids.get(c)
            if seen is None:
                seen = ids[c] = set()
            if key is None:
                unkeyed.add(c)
            else:
                group = groups.get((c, key))
                if group is None:
                    if number > top.get(c, -1) + 1 and (idv is None or idv not in seen):
                        filed.add("index-gap")
                    group = groups[c, key] = _Group()
                group.add(e)
                if number > top.get(c, -1):
                    top[c] = number
            if idv is not None:
                seen.add(idv)
    if groups:
        owners: dict[tuple[int, str], int] = {}  # (choice, id) -> how many keys carry it
        for (c, _), group in groups.items():
            for idv in group.ids:
                owners[c, idv] = owners.get((c, idv), 0) + 1
        for (c, _), group in groups.items():
            if c in unkeyed or any(owners[c, idv] > 1 for idv in group.ids):
                continue
            if not group.names:
                filed.add("name-missing")
            if not group.filled:
                filed.add("args-empty")
            elif group.joined and len(group.ids) <= 1 and len(group.names) <= 1:
                text = "".join(group.parts)
                if text and not parses(text):
                    filed.add("args-invalid-json")
    return filed
