"""Arguments as they were sent: a line's JSON read again without losing a digit.

Frames are parsed with orjson, which reads an integer past 64 bits as a float (a 30-digit
id loses its last digits) and refuses a number past a double's range (`1e400`, valid
JSON). Ollama sends a call's arguments as an object, and robust reports them as the
compact JSON text of that object as sent: so a line that carries calls is read again
here, numbers kept as their text, keys in the order sent (duplicates too), and written
back without the insignificant spaces. Only lines with calls pay for it.
"""

from __future__ import annotations

import json
from typing import Any


class Number(str):
    """A JSON number, as its text."""

    __slots__ = ()


class Pairs(list[tuple[str, Any]]):
    """A JSON object as its members in the order sent (duplicate keys kept)."""

    __slots__ = ()

    def get(self, key: str, default: Any = None) -> Any:
        """The member a JSON reader keeps (the last of duplicates), as orjson reads it."""
        for k, v in reversed(self):
            if k == key:
                return v
        return default


def _constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")  # NaN, Infinity: Python's extension, not JSON


_DECODER = json.JSONDecoder(
    object_pairs_hook=Pairs, parse_int=Number, parse_float=Number, parse_constant=_constant
)


def read(data: str) -> Any:
    """`data` as exact JSON values (Pairs, Number, str, list, bool, None); None when it
    is not JSON or nests deeper than Python reads (the caller has orjson's reading)."""
    try:
        return _DECODER.decode(data)
    except (ValueError, RecursionError):
        return None


def plain(value: Any) -> Any:
    """An exact value as the JSON value a reader holds (dicts, ints, floats), for a line
    orjson refused only for a number's size; None when it nests too deep."""
    try:
        return _plain(value)
    except RecursionError:
        return None


def _plain(value: Any) -> Any:
    if isinstance(value, Pairs):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Number):
        return float(value) if any(c in value for c in ".eE") else int(value)
    return value


def write(value: Any) -> str | None:
    """An exact value as compact JSON text: numbers as sent, keys in the order sent,
    strings as JSON writes them (UTF-8 kept); None when it nests deeper than Python
    writes."""
    try:
        return "".join(_write(value, []))
    except RecursionError:
        return None


def _write(value: Any, out: list[str]) -> list[str]:
    if isinstance(value, Number):
        out.append(value)
    elif isinstance(value, Pairs):
        out.append("{")
        for k, (key, member) in enumerate(value):
            if k:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(member, out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for k, item in enumerate(value):
            if k:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, str):
        out.append(_string(value))
    else:  # bool, None
        out.append(json.dumps(value))
    return out


def _string(text: str) -> str:
    """A string as JSON writes it, UTF-8 kept; a lone surrogate (which `\\ud800` sends and
    no UTF-8 text can hold) stays the escape it came as."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(text)
    return json.dumps(text, ensure_ascii=False)
