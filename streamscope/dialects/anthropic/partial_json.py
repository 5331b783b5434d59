"""`jiter.from_json(buf, partial_mode=True)` for a buffer that grows, without jiter.

anthropic's MessageStream re-parses a tool block's whole input buffer with jiter on every
`input_json_delta` (quadratic in the input). `PartialJson` reads each byte once (a number or
literal still open at the end is read again when its next bytes come, at most a few thousand
bytes) and says, after every piece, what jiter would: the error message it raises, or (only
when asked) the value it returns.

jiter's partial mode (checked against jiter 0.19 by
tests/dialects/anthropic/test_anthropic_sdk_model.py):

* Only the top-level value is parsed; whatever follows it is ignored (`{} x`, `truex`).
* Inside an array or object, running out of input ends every open container with the members
  completed so far: an unfinished string, literal (`tru`) or number (`1.`, `-`, `1e+`) is left
  out, a finished number at the very end is kept (`[1, 2` -> [1, 2]), an open container
  is kept (`{"a": [` -> {"a": []}), a key without a value is left out.
* Inside a container, a byte that is neither `,` nor its closer where one of them is due
  (`[1 2]`, `{"a": 1]`) also ends it; the enclosing container then reads that same byte, so
  `[{"a": 1]` -> [{"a": 1}] and `{"a": [1}` -> {"a": [1]}.
* Every other error raises, inside containers too: trailing comma, key not a string, missing
  colon, bad value, bad literal, bad number, bad escape, lone surrogate escape, control
  character in a string, nesting deeper than 200. At the top level an unfinished value raises
  too ("EOF while parsing a string/value", at the end of the buffer).
* Positions are byte offsets: "line L column C" as jiter's LinePosition::find counts them
  (a newline at the error byte counts on the next line, column 0; at the end of the buffer
  the column is not advanced past the last byte).

The value is rebuilt as JSON text (members copied byte for byte, containers closed where
jiter closes them) and read with `json.loads`, whose numbers, escapes, NaN/Infinity and
duplicate keys (last value, first position) come out as jiter's do.

`quick_value` reads a whole buffer at C speed instead, when it can vouch for it: an object
or array that json.loads reads whole, or one cut inside its last member (where json.loads
stops says which member, and whether a longer text can finish it), holding nothing the two
read differently. Then no prefix of it but a whitespace-only one raises in jiter, so none
of the deltas that built it did, and jiter's value is json.loads' of the complete members,
closed.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSON_WS", "MAX_NUMBER", "PartialJson", "TooLong", "quick_value"]

# jiter gives up on integers longer than 4300 bytes with an error we do not reproduce.
MAX_NUMBER = 4000
_DEPTH_LIMIT = 200  # jiter's recursion limit: a member nested deeper raises

JSON_WS = " \t\r\n"  # JSON's whitespace, the only whitespace jiter and json.loads skip
_NL = b"\n"
_WS = re.compile(rb"[ \t\r\n]*")
_PLAIN = re.compile(rb'[^"\\\x00-\x1f]*')
_DIGITS = re.compile(rb"[0-9]*")


def _end(pattern: re.Pattern[bytes], t: bytes, i: int) -> int:
    """Where `pattern` stops matching at t[i] (each pattern it is given matches the empty
    string too, so it always matches)."""
    m = pattern.match(t, i)
    assert m is not None
    return m.end()


_SIMPLE_ESCAPES = frozenset(b'"\\/bfnrt')
_HEX = frozenset(b"0123456789abcdefABCDEF")

# where the reader is: expecting the top-level value, inside an array / object, inside a token
_TOP, _A_FIRST, _A_NEXT, _A_AFTER, _O_FIRST, _O_COLON, _O_VALUE, _O_NEXT, _O_AFTER = range(9)
_STRING, _NUMBER, _DONE = range(9, 12)  # _NUMBER: a number or literal being read
_ARRAY, _OBJECT = 0, 1
_AFTER = {_ARRAY: _A_AFTER, _OBJECT: _O_AFTER}
_CLOSER = {_ARRAY: b"]", _OBJECT: b"}"}

# a token's fate once the buffer ends
_OPEN_OK, _OPEN_BAD = "kept if the input ends here", "unfinished"


class TooLong(Exception):
    """A number longer than MAX_NUMBER bytes: jiter's big-number limit is not modelled."""


class _Error(Exception):
    def __init__(self, kind: str, index: int) -> None:
        self.kind, self.index = kind, index


class _More(Exception):
    """The token at `start` (absolute offset) needs more bytes."""

    def __init__(self, start: int) -> None:
        self.start = start


def position(data: bytes, index: int) -> str:
    """jiter's LinePosition::find, as its error messages print it."""
    if index >= len(data):
        line, column = data.count(_NL) + 1, len(data) - (data.rfind(_NL) + 1)
    else:
        line = data.count(_NL, 0, index + 1) + 1
        column = index + 1 - (data.rfind(_NL, 0, index + 1) + 1)
    return f"line {line} column {column}"


class PartialJson:
    """The reader's state after the bytes fed so far; `copy()` shares the text read."""

    __slots__ = (
        "_tail",
        "_base",
        "_mode",
        "_stack",
        "_members",
        "_key",
        "_out",
        "_frozen",
        "_str",
        "_str_is_key",
        "_token",
        "_error",
        "_size",
    )

    def __init__(self) -> None:
        self._tail = b""  # bytes not yet consumed: an unfinished number, literal or escape
        self._base = 0  # absolute offset of _tail[0]
        self._mode = _TOP
        self._stack: list[int] = []  # open containers, outermost first
        self._members: list[bool] = []  # each open container has a member in `_out`
        self._key = b""  # an object key waiting for its value
        self._out: list[bytes] = []  # the value's JSON text so far (closers not yet added)
        self._frozen = 0  # leading entries of `_out` shared with copies
        self._str: list[bytes] = []  # the string being read, from its opening quote
        self._str_is_key = False
        self._token: bytes | None = None  # a number at the end that the input may extend
        self._error: tuple[str, int] | None = None
        self._size = 0

    # -- public -------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        self._size += len(data)
        if self._error is not None or self._mode == _DONE or not data:
            return
        text = self._tail + data
        base = self._base
        self._token = None
        try:
            keep = self._read(text, base)
        except _Error as exc:
            self._error = (exc.kind, exc.index)
            keep = len(text)
        except _More as more:
            keep = more.start - base
        self._tail = text[keep:]
        self._base = base + keep

    def error(self) -> tuple[str, int] | None:
        """jiter's error for the bytes fed so far, as (what, byte index), or None.

        `position(data, index)` turns the index into jiter's "line L column C"."""
        if self._error is not None:
            return self._error
        if self._mode == _DONE or self._stack:
            return None
        if self._mode == _TOP:
            kind = "EOF while parsing a value"
        elif self._mode == _STRING:
            kind = "EOF while parsing a string"
        elif self._token is not None:  # a finished number: jiter returns it
            return None
        else:
            kind = "EOF while parsing a value"
        return kind, self._size

    def value(self) -> object:
        """What jiter returns (only meaningful when `error` is None)."""
        out = self._out
        if len(out) - self._frozen > 1:
            out[self._frozen :] = [b"".join(out[self._frozen :])]
        text = b"".join(out)
        if self._token is not None:
            text += self._prefix() + self._token
        closers = b"".join(_CLOSER[kind] for kind in reversed(self._stack))
        return json.loads(text + closers)

    def copy(self) -> PartialJson:
        out = self._out
        if len(out) - self._frozen > 1:
            out[self._frozen :] = [b"".join(out[self._frozen :])]
        self._frozen = len(out)
        if len(self._str) > 1:
            self._str[:] = [b"".join(self._str)]
        new = PartialJson.__new__(PartialJson)
        for name in PartialJson.__slots__:
            setattr(new, name, getattr(self, name))
        new._stack = list(self._stack)
        new._members = list(self._members)
        new._out = list(out)
        new._str = list(self._str)
        return new

    # -- the reader ---------------------------------------------------------------------

    def _read(self, t: bytes, base: int) -> int:
        """Consume `t` (absolute offset `base`); returns how much of it is consumed."""
        i, n = 0, len(t)
        while i < n:
            mode = self._mode
            if mode == _DONE:
                return n
            if mode == _STRING:
                i = self._string(t, i, base)
                continue
            if mode == _NUMBER:
                i = self._value(t, i, base)
                continue
            i = _end(_WS, t, i)
            if i == n:
                break
            c = t[i]
            if mode == _TOP:
                i = self._value(t, i, base)
            elif mode in (_A_FIRST, _A_NEXT):
                if c == 93:  # ]
                    if mode == _A_NEXT:
                        raise _Error("trailing comma", base + i)
                    i = self._close(i + 1)
                else:
                    i = self._member(t, i, base)
            elif mode == _O_VALUE:
                i = self._member(t, i, base)
            elif mode in (_A_AFTER, _O_AFTER):
                closer = 93 if mode == _A_AFTER else 125  # ] or }
                if c == 44:  # ,
                    self._mode = _A_NEXT if mode == _A_AFTER else _O_NEXT
                    i += 1
                elif c == closer:
                    i = self._close(i + 1)
                else:  # jiter ends the container here; its parent reads the same byte
                    i = self._close(i)
            elif mode in (_O_FIRST, _O_NEXT):
                if c == 34:  # "
                    self._start_string(key=True)
                    i += 1
                elif c == 125 and mode == _O_FIRST:
                    i = self._close(i + 1)
                elif c == 125:
                    raise _Error("trailing comma", base + i)
                else:
                    raise _Error("key must be a string", base + i)
            elif mode == _O_COLON:
                if c != 58:  # :
                    raise _Error("expected `:`", base + i)
                self._mode = _O_VALUE
                i += 1
        return n

    def _member(self, t: bytes, i: int, base: int) -> int:
        if len(self._stack) > _DEPTH_LIMIT:
            raise _Error("recursion limit exceeded", base + i)
        return self._value(t, i, base)

    def _value(self, t: bytes, i: int, base: int) -> int:
        """A value starting at `i` (or a number / literal being read again from `i`)."""
        c = t[i]
        if self._mode != _NUMBER:
            if c == 91 or c == 123:  # [ {
                self._commit(b"[" if c == 91 else b"{")
                kind = _ARRAY if c == 91 else _OBJECT
                self._stack.append(kind)
                self._members.append(False)
                self._mode = _A_FIRST if kind == _ARRAY else _O_FIRST
                return i + 1
            if c == 34:
                self._start_string(key=False)
                return i + 1
        end = _scalar(t, i, base)
        if isinstance(end, str):  # _OPEN_OK or _OPEN_BAD: `t` ends inside the token
            if len(t) - i > MAX_NUMBER:
                raise TooLong
            self._mode = _NUMBER
            if end is _OPEN_OK:
                self._token = t[i:]
            raise _More(base + i)
        if end - i > MAX_NUMBER:
            raise TooLong
        self._commit(t[i:end])
        return end

    def _start_string(self, *, key: bool) -> None:
        self._mode = _STRING
        self._str = [b'"']
        self._str_is_key = key

    def _string(self, t: bytes, i: int, base: int) -> int:
        """Read string content from `i`; returns the index after the closing quote."""
        n, seg = len(t), i
        while True:
            i = _end(_PLAIN, t, i)
            if i == n:
                self._str.append(t[seg:])
                return n
            c = t[i]
            if c == 34:
                self._str.append(t[seg : i + 1])
                text = b"".join(self._str)
                self._str = []
                if self._str_is_key:
                    self._key = text
                    self._mode = _O_COLON
                else:
                    self._commit(text)
                return i + 1
            if c < 32:
                raise _Error(
                    "control character (\\u0000-\\u001F) found while parsing a string", base + i
                )
            end = _escape(t, i, base)
            if end is None:  # keep the unfinished escape for the next piece
                self._str.append(t[seg:i])
                raise _More(base + i)
            i = end

    def _prefix(self) -> bytes:
        """What goes before a member of the innermost container in the rebuilt text."""
        if not self._stack:
            return b""
        comma = b"," if self._members[-1] else b""
        if self._stack[-1] == _OBJECT:
            return comma + self._key + b":"
        return comma

    def _commit(self, text: bytes) -> None:
        """A value is complete (or a container opened): it is now part of the result."""
        if self._stack:
            self._out.append(self._prefix() + text)
            self._members[-1] = True
            if text[0] not in b"[{":
                self._mode = _AFTER[self._stack[-1]]
        else:
            self._out.append(text)
            if text[0] not in b"[{":
                self._mode = _DONE

    def _close(self, i: int) -> int:
        kind = self._stack.pop()
        self._members.pop()
        self._out.append(_CLOSER[kind])
        self._mode = _AFTER[self._stack[-1]] if self._stack else _DONE
        return i


def _scalar(t: bytes, i: int, base: int) -> int | str:
    """A literal or number at `i`: its end, or _OPEN_OK / _OPEN_BAD when `t` ends inside."""
    c = t[i]
    if c == 110:  # n
        return _word(t, i, b"null", base)
    if c == 116:  # t
        return _word(t, i, b"true", base)
    if c == 102:  # f
        return _word(t, i, b"false", base)
    if c == 78:  # N
        return _word(t, i, b"NaN", base)
    j = i + 1 if c == 45 else i  # -
    if j == len(t):
        return _OPEN_BAD
    d = t[j]
    if d == 73:  # I
        return _word(t, j, b"Infinity", base)
    if d == 48:  # 0
        j += 1
        if j < len(t) and 48 <= t[j] <= 57:
            raise _Error("invalid number", base + j)
    elif 49 <= d <= 57:
        j = _end(_DIGITS, t, j + 1)
    elif c == 45:
        raise _Error("invalid number", base + j)
    else:
        raise _Error("expected value", base + i)
    if j == len(t):
        return _OPEN_OK
    if t[j] == 46:  # .
        digits = _need_digits(t, j + 1, base)
        if isinstance(digits, str) or digits == len(t):  # (the str is _OPEN_BAD)
            return _OPEN_BAD if isinstance(digits, str) else _OPEN_OK
        j = digits
    if t[j] in b"eE":
        j += 1
        if j < len(t) and t[j] in b"+-":
            j += 1
        digits = _need_digits(t, j, base)
        if isinstance(digits, str) or digits == len(t):
            return _OPEN_BAD if isinstance(digits, str) else _OPEN_OK
        j = digits
    return j


def _need_digits(t: bytes, j: int, base: int) -> int | str:
    """At least one digit at `j`, then any more: the index after them."""
    if j == len(t):
        return _OPEN_BAD
    if not 48 <= t[j] <= 57:
        raise _Error("invalid number", base + j)
    return _end(_DIGITS, t, j + 1)


def _word(t: bytes, i: int, word: bytes, base: int) -> int | str:
    """jiter's consume_ident: `word` at `i` (its first byte already matched)."""
    for k in range(1, len(word)):
        if i + k == len(t):
            return _OPEN_BAD
        if t[i + k] != word[k]:
            raise _Error("expected ident", base + i + k)
    return i + len(word)


def _escape(t: bytes, i: int, base: int) -> int | None:
    """The escape at `i` (a backslash): the index after it, or None if `t` ends inside it."""
    n = len(t)
    if i + 1 == n:
        return None
    e = t[i + 1]
    if e in _SIMPLE_ESCAPES:
        return i + 2
    if e != 117:  # u
        raise _Error("invalid escape", base + i + 1)
    code = _hex4(t, i + 1, base)
    if code is None:
        return None
    last = i + 5
    if 0xDC00 <= code <= 0xDFFF:
        raise _Error("lone leading surrogate in hex escape", base + last)
    if not 0xD800 <= code <= 0xDBFF:
        return last + 1
    # a high surrogate: jiter looks at the next two bytes for `\u`
    if n <= last + 1:
        return None
    if t[last + 1] != 92:  # \
        raise _Error("unexpected end of hex escape", base + last + 1)
    if n == last + 2:
        return None
    if t[last + 2] != 117:
        raise _Error("unexpected end of hex escape", base + last + 2)
    low = _hex4(t, last + 2, base)
    if low is None:
        return None
    if not 0xDC00 <= low <= 0xDFFF:
        raise _Error("lone leading surrogate in hex escape", base + last + 6)
    return last + 7


def _hex4(t: bytes, u: int, base: int) -> int | None:
    """jiter's parse_u4 after the `u` at `u`: all four bytes must be there before any is judged."""
    if len(t) < u + 5:
        return None
    for k in range(1, 5):
        if t[u + k] not in _HEX:
            raise _Error("invalid escape", base + u + k)
    return int(t[u + 1 : u + 5], 16)


# --- a whole buffer at C speed ---------------------------------------------------------------

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * (MAX_NUMBER // 4)  # a number past MAX_NUMBER bytes has such a run of digits
_ALL_BUT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_CLOSERS = str.maketrans("[{", "]}")
_NUMBER_BYTES = "0123456789+-.eE"
# A member's beginning that a longer text can finish, where json.loads stopped at the end:
_OPEN_STRING = re.compile(
    r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*(?:\\(?:u[0-9a-fA-F]{0,3})?)?'
)
_OPEN_WORD = re.compile(r"-?|t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?")
_OPEN_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.|(?:\.[0-9]+)?[eE][+-]?)")
_OPEN_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{0,4}")  # json.loads stops at one ending the text


def quick_value(text: str) -> dict[Any, Any] | list[Any] | None:
    """jiter's partial-mode value of `text` read at C speed, or None when this cannot vouch
    for it (the byte reader must say).

    It vouches for a text that begins a JSON object or array: a whole one json.loads parses
    (then anything after it, which jiter does not read), or the beginning of a longer one,
    its last member unfinished. Then jiter accepts every prefix of it that is not whitespace
    only (tests/dialects/anthropic/test_anthropic_sdk_model.py checks this against jiter),
    and its value is the
    members complete so far, closed, as json.loads reads them, so long as the text holds
    nothing the two read differently (`_risky`) and does not nest deeper than jiter reads."""
    start = len(text) - len(text.lstrip(JSON_WS))
    if start == len(text) or text[start] not in "[{" or _risky(text):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as stop:
        return _value_so_far(text, stop)
    except (ValueError, RecursionError):  # an int too long, nested too deep for Python
        return None
    # a whole value: jiter's too, unless it nests deeper than jiter reads
    few = text.count("[") + text.count("{") <= _DEPTH_LIMIT
    return value if few or _open_containers(text) == "" else None


def _value_so_far(text: str, stop: json.JSONDecodeError) -> dict[Any, Any] | list[Any] | None:
    """The complete members of `text`, closed, read with json.loads, where it `stop`ped."""
    head = _complete_part(text, stop)
    if head is None:
        return None
    still_open = _open_containers(head)
    if still_open is None:
        return None
    try:
        closed: dict[Any, Any] | list[Any] = json.loads(head + still_open[::-1].translate(_CLOSERS))
        return closed
    except (ValueError, RecursionError):
        return None


def _risky(text: str) -> bool:
    """Whether `text` may hold what json.loads and jiter read differently: an escape of a
    surrogate (jiter refuses a lone one), NaN or Infinity, a number too long for PartialJson.
    NaN, Infinity and digits in strings are read alike: only those outside count."""
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return True
    if not (
        "NaN" in text
        or "Infinity" in text
        or (len(text) > MAX_NUMBER and _LONG_RUN in text.encode("utf-8").translate(_DIGITS_AS_ZERO))
    ):
        return False
    outside = _outside_strings(_without_escapes(text))
    return (
        b"NaN" in outside
        or b"Infinity" in outside
        or _LONG_RUN in outside.translate(_DIGITS_AS_ZERO)
    )


def _without_escapes(text: str) -> bytes:
    """`text` as UTF-8 without its escaped backslashes and quotes (for a text json.loads reads
    up to a point: up to there every backslash is in a string, each escaping what follows,
    paired from the left as `replace` takes them)."""
    return text.encode("utf-8").replace(b"\\\\", b"").replace(b'\\"', b"")


def _outside_strings(data: bytes) -> bytes:
    """What is outside the strings of `data` (escapes taken away): every other stretch
    between quotes. Joined, so it may put two things side by side that were not."""
    return b"".join(data.split(b'"')[::2])


def _complete_part(text: str, stop: json.JSONDecodeError) -> str | None:
    """`text` up to the end of its last complete member (or of a container's opening), when
    json.loads `stop`ped at a member that a longer text can finish (or after a whole
    value); None when it stopped at anything else."""
    why, at = stop.msg, stop.pos
    if why == "Invalid \\uXXXX escape" and _OPEN_ESCAPE.fullmatch(text, at - 1):
        # a string ending within (or just after) a \u escape: json.loads says where it began
        # once that escape is replaced by a plain character
        try:
            json.loads(text[: at - 1] + "x")
        except json.JSONDecodeError as inner:
            why, at = inner.msg, inner.pos
        except (ValueError, RecursionError):
            return None
        if why != "Unterminated string starting at":
            return None
    rest, head = text[at:], text[:at]
    finishable: re.Match[str] | bool | None
    if why == "Extra data":  # a whole value: jiter reads no further
        return head
    if why == "Unterminated string starting at":
        finishable = _OPEN_STRING.fullmatch(rest)
    elif why == "Expecting value":
        finishable = _OPEN_WORD.fullmatch(rest)
    elif why == "Expecting ',' delimiter" and rest and head[-1] in _NUMBER_BYTES:
        # json.loads read a number as far as it is one (`1` of `1.`, `1.5` of `1.5e+`)
        head = head.rstrip(_NUMBER_BYTES)
        finishable = _OPEN_NUMBER.fullmatch(text, len(head))
    elif why in _STOPS_AT_THE_END:
        finishable = not rest
    else:
        return None
    if not finishable:
        return None
    return _without_dangling(head.rstrip(JSON_WS), key=why == "Expecting ':' delimiter")


# where json.loads stops, at the end of the text, after a whole member, a key, a `{` or a `,`
_STOPS_AT_THE_END = (
    "Expecting ',' delimiter",
    "Expecting ':' delimiter",
    "Expecting property name enclosed in double quotes",
)


def _without_dangling(head: str, *, key: bool) -> str:
    """`head` without what jiter leaves out at the end: a key without its value (`key`: the
    text ends with one; or it ends with one and its colon) and a comma."""
    if head.endswith(":"):
        head, key = head[:-1].rstrip(JSON_WS), True
    if key:
        head = head[: _string_start(head)].rstrip(JSON_WS)
    return head[:-1] if head.endswith(",") else head


def _string_start(text: str) -> int:
    """Where the string that ends `text` begins: the last quote before its closing one that
    no backslash escapes."""
    at = len(text) - 1
    while True:
        at = text.rfind('"', 0, at)
        if at < 0:  # none (json.loads read a key there): nothing is left, and nothing read
            return 0
        before = at
        while text[before - 1] == "\\":
            before -= 1
        if (at - before) % 2 == 0:
            return at


def _open_containers(text: str) -> str | None:
    """The containers still open at the end of `text` (the beginning of a JSON text that
    json.loads read up to its end, no string open there), outermost first: "" for a whole
    value; None when they may nest deeper than jiter reads (its limit is on the depth of
    every member, closed or not)."""
    # brackets and quotes only, then no strings (quotes next to each other hold no bracket,
    # and taking two away keeps every other quote's parity)
    data = _without_escapes(text).translate(None, _ALL_BUT_STRUCTURE).replace(b'""', b"")
    if b'"' in data:  # strings with brackets in them
        data = _outside_strings(data)
    # one replace takes away the containers that hold nothing, so it makes them at most one
    # level shallower: the replaces that took something bound the depth of the closed ones
    height = 0
    while True:
        before = data
        for empty in (b"[]", b"{}"):
            shorter = data.replace(empty, b"")
            if shorter != data:
                data, height = shorter, height + 1
        if data == before:
            break
        if height > _DEPTH_LIMIT:
            return None
    return data.decode() if height + len(data) <= _DEPTH_LIMIT else None
