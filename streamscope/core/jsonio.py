"""JSON from a stream or a recording read, and JSON written: the one home of both rules.

Reading (`loads`): orjson first, for speed. It refuses some JSON that Python's `json`
(and so the openai SDK) reads: a lone surrogate escape (`"\\ud800"`, which a model sends
when it cuts an emoji in two) and an integer too long for a double (orjson reads one
past 64 bits as a float, and refuses one past 1e308). Those are read again with the
stdlib. What JSON forbids stays refused: `NaN`, `Infinity` and `-Infinity`, a number
that only reads as infinity, and nesting past orjson's 1024 levels (never handed to the
stdlib's recursive reader, which would raise RecursionError instead).

Writing (`dumps`): orjson first. It refuses a string holding a lone surrogate, an
integer past 64 bits and nesting past 255 levels, all of which a value read from a
stream may hold; those documents are written by the stdlib, a lone surrogate as its
`\\ud800` escape (valid JSON, read back as the same string). `shown=True`, for JSON that
may reach a terminal (stdout): DEL, C1 controls and the bidirectional overrides and
isolates (`text.CONTROL_IN_JSON`; JSON's writers escape C0 themselves) are written as
`\\u0085`-style escapes too. In JSON they can only stand inside a string, so the text
reads back as the same value.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import orjson

from ..text import CONTROL_IN_JSON

JSONDecodeError = orjson.JSONDecodeError  # what `loads` raises (a ValueError)

# What orjson may refuse that the stdlib reads: a surrogate escape, a raw surrogate (a
# str that is no UTF-8), a number orjson cannot hold. Text without one is refused at once.
_MAY_READ = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]|[0-9]{20}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_INT = re.compile("[0-9]{20}")


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """`data` as JSON, read as Python's `json` reads it but for what JSON forbids (above);
    raises JSONDecodeError (orjson's own, its message kept) when it is not JSON."""
    try:
        return orjson.loads(data)
    except JSONDecodeError as refused:
        value = reread(data, str(refused))
        if value is REFUSED:
            raise  # (re-raised bare: no frame keeps the error, so no reference cycle)
        return value


REFUSED = object()


def reread(data: str | bytes | bytearray | memoryview, refusal: str) -> Any:
    """What the stdlib reads of `data` that orjson refused (saying `refusal`); REFUSED
    when the refusal stands. For a caller that tried orjson itself (a hot path)."""
    if "depth limit" in refusal:
        return REFUSED
    if not isinstance(data, str):
        try:
            data = bytes(data).decode("utf-8")  # as orjson: UTF-8 or nothing
        except UnicodeDecodeError:
            return REFUSED
    if _MAY_READ.search(data) is None:
        return REFUSED
    return _stdlib_loads(data)


def exact(data: str) -> Any:
    """The stdlib's reading of `data` where orjson may have rounded a number (it reads an
    integer past 64 bits as a float), else REFUSED. Too dear for every frame (a scan costs
    about 3x orjson's parse): for a caller about to report a number as not an integer."""
    if _LONG_INT.search(data) is None:
        return REFUSED
    return _stdlib_loads(data)


def _stdlib_loads(data: str) -> Any:
    try:
        return json.loads(data, parse_constant=_forbidden, parse_float=_finite)
    except (ValueError, RecursionError):
        return REFUSED


def _forbidden(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} reads as infinity")
    return value


def dumps(
    value: object,
    *,
    indent: bool = False,
    sort_keys: bool = False,
    newline: bool = False,
    shown: bool = False,
) -> bytes:
    """`value` as JSON bytes (UTF-8): compact, or indented by two; keys sorted if asked;
    a newline after it if asked; `shown`: safe to print (above). Raises TypeError for a
    value that is no JSON (a set, an object), as orjson does."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        out = orjson.dumps(value, option=option | (orjson.OPT_APPEND_NEWLINE if newline else 0))
    except orjson.JSONEncodeError:  # a lone surrogate, an int past 64 bits, deep nesting
        text = _stdlib(value, indent, sort_keys)
        text = _escaped(text, CONTROL_IN_JSON if shown else _SURROGATE)
        return text.encode() + (b"\n" if newline else b"")
    if shown and (found := CONTROL_IN_JSON.search(text := out.decode())) is not None:
        return _escaped(text, CONTROL_IN_JSON, found.start()).encode()
    return out


def _stdlib(value: object, indent: bool, sort_keys: bool) -> str:
    """The stdlib's JSON of `value`, laid out as orjson's (NaN and infinities as null)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * 1024))  # 1024 levels read, and the caller's own
    try:
        try:
            return _stdlib_dumps(value, indent, sort_keys)
        except ValueError:  # a float NaN or infinity: null, as orjson writes it
            return _stdlib_dumps(_finite_only(value), indent, sort_keys)
    finally:
        sys.setrecursionlimit(limit)


def _stdlib_dumps(value: object, indent: bool, sort_keys: bool) -> str:
    return json.dumps(
        value,
        ensure_ascii=False,  # UTF-8 kept, as orjson; a lone surrogate escaped after
        allow_nan=False,
        sort_keys=sort_keys,
        indent=2 if indent else None,
        separators=(",", ": ") if indent else (",", ":"),
    )


def _finite_only(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_only(v) for v in value]
    return value


def _escaped(text: str, pattern: re.Pattern[str], start: int = 0) -> str:
    """JSON text with each character `pattern` matches as its `\\uXXXX` escape: one that
    JSON's writers leave raw can only stand inside a string, where the escape reads back
    as the same character."""
    if start == 0 and pattern.search(text) is None:
        return text
    return text[:start] + pattern.sub(_u, text[start:])


def _u(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"
