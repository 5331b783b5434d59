"""The arguments of a Gemini call streamed as `partialArgs`: each names a place in the
arguments object by a JSON path (`$.a.b[0]`, `$['odd key']`) and gives it a typed
value; a string arrives in pieces for the same path (the piece before says
`willContinue`). `ArgTree` builds the object they describe, keys in the order they
first arrive, and writes it as compact JSON text.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, overload

from ...text import json_type, quote, visible
from ..typed import compact

# The deepest path read; deeper ones are reported, not followed (a reader must not
# recurse without bound on untrusted input).
MAX_DEPTH = 200
# A member name after a dot: RFC 9535's shorthand, and any other character but the
# path's own punctuation (a name with a hyphen is common and unambiguous).
_NAME = re.compile(r"[^.\[\]'\"\s]+")
_INDEX = re.compile(r"\[(0|[1-9][0-9]{0,8})\]")


def steps(path: object) -> tuple[Any, ...] | str:
    """A path's steps (member names and array indexes), or why it does not parse."""
    if not isinstance(path, str):
        return "the jsonPath is not a string"
    return _steps(path) if len(path) <= _CACHED else _parse(path)


_CACHED = 4096  # longer paths are parsed each time, never kept


@functools.lru_cache(maxsize=1024)  # a stream names few paths, many times each
def _steps(path: str) -> tuple[Any, ...] | str:
    return _parse(path)


def _parse(path: str) -> tuple[Any, ...] | str:
    if not path.startswith("$"):
        return "a jsonPath starts with $"
    out: list[str | int] = []
    at, end = 1, len(path)
    while at < end:
        if len(out) >= MAX_DEPTH:
            return f"the path is deeper than {MAX_DEPTH} steps"
        c = path[at]
        if c == ".":
            m = _NAME.match(path, at + 1)
            if m is None:
                return f"no member name after the dot at character {at + 1}"
            out.append(m.group())
            at = m.end()
        elif c == "[":
            m = _INDEX.match(path, at)
            if m is not None:
                out.append(int(m.group(1)))
                at = m.end()
                continue
            name, at = _quoted(path, at + 1)
            if name is None or at >= end or path[at] != "]":
                return f"no index or quoted name in the brackets at character {at + 1}"
            out.append(name)
            at += 1
        else:
            return f"unexpected {path[at]!r} at character {at + 1}"
    return tuple(out)


def _quoted(path: str, at: int) -> tuple[str | None, int]:
    """A quoted member name ('...' or "...", with JSON's escapes) from `at`; None if none."""
    if at >= len(path) or path[at] not in "'\"":
        return None, at
    quote, k = path[at], at + 1
    out: list[str] = []
    while k < len(path):
        c = path[k]
        if c == quote:
            return "".join(out), k + 1
        if c == "\\" and k + 1 < len(path):
            nxt = path[k + 1]
            if nxt == "'":
                out.append("'")
                k += 2
                continue
            if nxt == "u" and k + 6 <= len(path):
                try:
                    out.append(json.loads(f'"{path[k : k + 6]}"'))
                except ValueError:
                    return None, k
                k += 6
                continue
            try:
                out.append(json.loads(f'"\\{nxt}"'))
            except ValueError:
                return None, k
            k += 2
            continue
        out.append(c)
        k += 1
    return None, k


class Text:
    """A string value arriving in pieces."""

    __slots__ = ("pieces", "more", "path")

    def __init__(self, piece: str, more: bool, path: tuple[Any, ...] = ()) -> None:
        self.pieces = [piece]
        self.more = more  # the last piece said another follows (willContinue)
        self.path = path  # where it is in the arguments


# A partialArg's typed value: (the JSON value, a string?) or why it carries none.
def value_of(arg: dict[Any, Any]) -> tuple[object, bool] | str:
    for key in ("stringValue", "numberValue", "boolValue", "nullValue"):
        if key in arg:
            v = arg[key]
            if key == "stringValue" and isinstance(v, str):
                return v, True
            if key == "numberValue" and type(v) in (int, float):
                return v, False
            if key == "boolValue" and type(v) is bool:
                return v, False
            if key == "nullValue" and v in ("NULL_VALUE", None, 0):
                return None, False
            return f"{key} holds {_type(v)}"
    return "it carries no stringValue, numberValue, boolValue or nullValue"


def _type(v: object) -> str:
    return f"a JSON {json_type(v)}"


class ArgTree:
    """The object a streamed call's partialArgs build so far."""

    __slots__ = ("root", "paths", "last")

    def __init__(self) -> None:
        self.root: dict[Any, Any] = {}
        self.paths = 0  # partialArgs applied
        self.last: Text | None = None  # the string set or extended last (for `extend`)

    def put(self, path: tuple[Any, ...], value: object, text: bool, more: bool) -> str | None:
        """Set (or, for a string piece after one that said willContinue, extend) the value
        at `path`; why it cannot be, or None."""
        if not path:
            return "the path names the arguments object itself, not a place in it"
        node: dict[Any, Any] | list[Any] = self.root
        for k, step in enumerate(path[:-1]):
            child = _child(node, step)
            if isinstance(child, str):
                return child
            if child is None:
                made: dict[Any, Any] | list[Any] = {} if isinstance(path[k + 1], str) else []
                _set(node, step, made)
                child = made
            elif not isinstance(child, (dict, list)):
                return f"it points into {_kind(child)} at {_show(path[: k + 1])}"
            node = child
        last = path[-1]
        if isinstance(last, str) != isinstance(node, dict):
            return f"{_show(path[:-1])} is {_kind(node)}, not {'an object' if isinstance(last, str) else 'an array'}"
        old = _child(node, last)
        if isinstance(old, str):
            return old
        self.paths += 1
        if text:
            assert isinstance(value, str)  # (value_of gives text for a string only)
            if isinstance(old, Text) and old.more:
                old.pieces.append(value)
                old.more = more
                self.last = old
                return None
            new = Text(value, more, path)
            _set(node, last, new)
            self.last = new
        else:
            _set(node, last, value)
            self.last = None
        if old is not None:
            return f"{_show(path)} was set before: the later value is kept"
        return None

    def extend(self, path: str, piece: str, more: bool) -> bool:
        """`put` of the next piece of the string set last, when `path` names it and it
        said more would follow: the usual frame of a long streamed string, in a few steps.
        False when it is anything else (then `put` decides)."""
        last = self.last
        if last is None or not last.more or len(path) > _CACHED or _steps(path) != last.path:
            return False
        last.pieces.append(piece)
        last.more = more
        self.paths += 1
        return True

    def text(self) -> str:
        """The arguments as compact JSON, keys in the order they arrived."""
        return compact(_plain(self.root)) or "{}"  # (paths are at most MAX_DEPTH deep)

    def copy(self) -> ArgTree:
        new = ArgTree()
        memo: dict[int, Text] = {}
        new.root = _copy(self.root, memo)
        new.paths = self.paths
        new.last = memo.get(id(self.last)) if self.last is not None else None
        return new


def _child(node: dict[Any, Any] | list[Any], step: str | int) -> object:
    """The value at `step` of `node`; None if there is none yet; a str saying why a step
    cannot be taken (an index past the end would leave holes)."""
    if isinstance(node, dict):
        return node.get(step)
    if isinstance(step, str):
        return f"a member name ({step!r}) of an array"
    if step < len(node):
        return node[step]
    if step > len(node):
        return f"index {step} skips over {step - len(node)} unset entr{'y' if step - len(node) == 1 else 'ies'}"
    return None


def _set(node: dict[Any, Any] | list[Any], step: str | int, value: object) -> None:
    if isinstance(node, dict):
        node[step] = value
    elif step == len(node):
        node.append(value)
    else:
        assert isinstance(step, int)  # (put turns a member name of an array away first)
        node[step] = value


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return (
        "a string"
        if isinstance(value, Text)
        else "a " + ("null" if value is None else type(value).__name__)
    )


def _show(path: tuple[Any, ...]) -> str:
    """A path as JSONPath text, safe to print (names that need it quoted)."""
    out = "$"
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _SHORT.fullmatch(step):
            out += f".{step}"
        else:
            out += f"[{quote(step)}]"
    return visible(out)


_SHORT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _plain(node: object) -> object:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, Text):
        return "".join(node.pieces)
    return node


@overload
def _copy(node: dict[Any, Any], memo: dict[int, Text]) -> dict[Any, Any]: ...
@overload
def _copy(node: object, memo: dict[int, Text]) -> object: ...
def _copy(node: object, memo: dict[int, Text]) -> object:
    if isinstance(node, dict):
        return {k: _copy(v, memo) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v, memo) for v in node]
    if isinstance(node, Text):
        new = memo[id(node)] = Text("".join(node.pieces), node.more, node.path)
        return new
    return node
