"""Repairing tool-call `arguments` that do not parse as JSON.

At the end of a stream every call whose `arguments` fail `json.loads` is repaired two
ways, and both are reported:

`crow` -- exactly what crow-cli does, quirks included:

1. `json.loads(arguments)`; if that fails,
2. count unmatched `{` and `[` over the raw text (a plain count of `{` minus `}` and of
   `[` minus `]`; *not* string-aware, so brackets inside strings are counted), append
   one `}` per unmatched `{` and THEN one `]` per unmatched `[` (a negative count
   appends nothing), and parse again;
3. if that still fails -- or nothing was appended -- fall back to `"{}"`.

Actions: `"closed-brackets"` (result is the text with the closers appended) or
`"fallback-empty-object"` (result `"{}"`). `changed_meaning` is None for crow: the
contract prints none.

`best` -- keeps as much data as honestly possible, and says when it had to guess.
The result is the ORIGINAL TEXT with a minimal suffix added and/or pieces removed,
never a re-dump, so the user sees their own bytes. The scan is a single linear,
string-aware pass (escapes understood, brackets inside strings ignored) that follows
stdlib `json` grammar (so `NaN`, `Infinity` and `-Infinity` are values, as for
`json.loads`). Decisions, in the order they are applied:

* Input with no data at all (`""`, or only whitespace per `str.isspace`) -> `"{}"`,
  action `"empty"`, changed_meaning False: there was nothing to lose.
* The top-level value must start with `{` or `[` (after JSON whitespace). Anything
  else -- leading prose (`Sure! {...}`), a code fence, a truncated top-level string or
  scalar -- falls back to `"{}"` (`"fallback-empty-object"`): guessing where the JSON
  starts is not honest. Likewise any syntax error *inside* the value (e.g. a missing
  comma, a raw control character in a string, an invalid escape) falls back: such a
  text was not merely cut short, and we cannot know what was meant.
* `"dropped-trailing-comma"`: a comma directly before a closer (`{"a": 1,}`) is
  removed. Meaning is unchanged.
* When the input ends inside the top-level value (the stream was cut):

  - `"closed-string"`: a cut string *value* is closed with `"`. A dangling escape is
    removed first (a lone `\\`, or a cut `\\u00`), and so is a complete `\\uD8xx`
    high-surrogate escape left without its low half (half a character).
  - `"dropped-cut-literal"`: a value that is only a prefix of a literal or number
    (`tru`, `nul`, `-`, `1.`, `1e`, `1e+`, `-Inf`) is removed.
  - `"dropped-dangling-key"`: an object member without a complete value is removed
    together with its leading comma: a key cut inside its string (`{"a": 1, "b`), a
    key without colon (`{"a": 1, "b"`), a key with colon but no value
    (`{"a": 1, "b":`), or a key whose cut literal was just dropped (`{"a": tru`).
  - `"dropped-trailing-comma"`: the input ends after a comma (`{"a": 1,`); the comma
    is removed. Meaning is unchanged.
  - `"closed-brackets"`: every open container is closed, innermost first, in
    correct nesting order (`[{"a": [` -> `[{"a": []}]`).

* When the top-level value is complete but text follows it:

  - `"dropped-duplicate"`: the tail is nothing but one or more values *identical* to
    the first (compared as parsed JSON, type-strictly, so whitespace differences do
    not matter but `1` vs `1.0` vs `true` do): the first is kept, changed_meaning
    False, since no information is lost.
  - `"dropped-trailing-data"`: anything else (a second, different object, `hope
    that helps`, a stray `}`): the tail is dropped, changed_meaning True.

* `"fallback-empty-object"`: nothing honest can be kept -> `"{}"`, changed_meaning
  True (the input had data and all of it is dropped). This is also the safety net:
  if the repaired text does not parse with `json.loads` (e.g. nesting deeper than
  the stdlib parser's recursion limit) the result is the fallback.

When several actions apply they are joined with `"+"` in the order applied (listed
above): fixes inside the text in scan order, then the end-of-input fixes from the
innermost token outwards (`closed-string` / `dropped-cut-literal`, then
`dropped-dangling-key` / `dropped-trailing-comma`), then `closed-brackets`, or the
tail fix. Each name appears once. Example: `{"a": tru` ->
`dropped-cut-literal+dropped-dangling-key+closed-brackets`, result `{}`.

`changed_meaning` is True whenever best had to guess: it closed a truncated string,
dropped data (a cut literal, a dangling key, a different trailing value or text,
everything in a fallback), or kept a number that the input ended in (`{"a": 12`
becomes `{"a": 12}`, but the number may have been `123`: any value cut by the end of
input is a guess). Closing brackets after complete values (`{"a": [1, true`, or
`{"a": 12 ` where whitespace ended the number), removing a trailing comma, dropping
an identical duplicate and `empty` are False.

Both `crow_repair` and `best_repair` return action `"none"` with the text unchanged
when given text that already parses; `repair` returns None for it instead, since the
contract only repairs arguments that do not parse.

`double_encoded` flags arguments that parse as a JSON *string* whose content is a
JSON object (`"{\\"city\\": \\"Paris\\"}"`). These parse, so they are never repaired.

Pure stdlib; linear time in the length of the input.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from .record import record

__all__ = [
    "CLOSED_BRACKETS",
    "CLOSED_STRING",
    "DROPPED_CUT_LITERAL",
    "DROPPED_DANGLING_KEY",
    "DROPPED_DUPLICATE",
    "DROPPED_TRAILING_COMMA",
    "DROPPED_TRAILING_DATA",
    "EMPTY",
    "FALLBACK",
    "NONE",
    "Repair",
    "RepairResult",
    "best_repair",
    "crow_repair",
    "double_encoded",
    "parses",
    "repair",
]

NONE = "none"
EMPTY = "empty"
CLOSED_BRACKETS = "closed-brackets"
CLOSED_STRING = "closed-string"
DROPPED_CUT_LITERAL = "dropped-cut-literal"
DROPPED_DANGLING_KEY = "dropped-dangling-key"
DROPPED_TRAILING_COMMA = "dropped-trailing-comma"
DROPPED_TRAILING_DATA = "dropped-trailing-data"
DROPPED_DUPLICATE = "dropped-duplicate"
FALLBACK = "fallback-empty-object"

_GUESSES = frozenset(
    {CLOSED_STRING, DROPPED_CUT_LITERAL, DROPPED_DANGLING_KEY, DROPPED_TRAILING_DATA, FALLBACK}
)


@record(frozen=True, slots=True)
class RepairResult:
    """One repair of one arguments string: what was done and the JSON text it gave."""

    action: str
    result: str
    changed_meaning: bool | None = None  # None for crow: the contract prints none


@record(frozen=True, slots=True)
class Repair:
    """Both repairs of arguments that did not parse."""

    crow: RepairResult
    best: RepairResult

    def to_json(self) -> dict[Any, Any]:
        return {
            "crow": {"action": self.crow.action, "result": self.crow.result},
            "best": {
                "action": self.best.action,
                "result": self.best.result,
                "changed_meaning": self.best.changed_meaning,
            },
        }


def parses(arguments: str) -> bool:
    """Whether stdlib `json.loads` accepts `arguments` (crow's own test)."""
    return _parses_short(arguments) if len(arguments) <= _SHORT else _parses(arguments)


def _parses(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except (ValueError, RecursionError):
        return False
    return True


# Short arguments keep their answer: a `--minimal` search reads the same calls' arguments
# at the end of every candidate (hundreds of candidates of hundreds of calls).
_SHORT = 1024  # (4 MiB held at most)
_parses_short = functools.lru_cache(maxsize=4096)(_parses)


def repair(arguments: str) -> Repair | None:
    """Both repairs, or None when `arguments` already parse."""
    if parses(arguments):
        return None
    return Repair(crow=_crow(arguments), best=_best(arguments))


def crow_repair(arguments: str) -> RepairResult:
    """crow-cli's repair (action `"none"` if the text already parses)."""
    if parses(arguments):
        return RepairResult(NONE, arguments)
    return _crow(arguments)


def best_repair(arguments: str) -> RepairResult:
    """The honest repair (action `"none"` if the text already parses)."""
    if parses(arguments):
        return RepairResult(NONE, arguments, False)
    return _best(arguments)


def double_encoded(arguments: str) -> bool:
    """Whether `arguments` is a JSON string whose content is itself a JSON object."""
    # Only text that opens with a quote (after JSON whitespace) decodes to a string: the
    # rest needs no parse, which costs as much as the arguments are long.
    if arguments.lstrip(" \t\n\r")[:1] != '"':
        return False
    try:
        outer = json.loads(arguments)
    except (ValueError, RecursionError):
        return False
    if not isinstance(outer, str):
        return False
    try:
        inner = json.loads(outer)
    except (ValueError, RecursionError):
        return False
    return isinstance(inner, dict)


# --- crow --------------------------------------------------------------------------


def _crow(arguments: str) -> RepairResult:
    braces = arguments.count("{") - arguments.count("}")
    brackets = arguments.count("[") - arguments.count("]")
    candidate = arguments + "}" * braces + "]" * brackets  # negative counts append ""
    if candidate != arguments and parses(candidate):
        return RepairResult(CLOSED_BRACKETS, candidate)
    return RepairResult(FALLBACK, "{}")


# --- best --------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
# A string body: unescaped chars other than controls, or valid escapes (unrolled loop,
# linear, never backtracks since nothing follows it in the pattern).
_STRING_BODY = re.compile(r'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*')
_ESCAPE_PREFIX = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
# Every prefix of a number that can still grow into one.
_NUMBER_PREFIX = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][-+]?[0-9]*)?|\.|[eE][-+]?[0-9]*)?)?"
)
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")


def _end(pattern: re.Pattern[str], s: str, i: int = 0) -> int:
    """Where `pattern` stops matching at s[i] (each pattern it is given matches the empty
    string too, so it always matches)."""
    m = pattern.match(s, i)
    assert m is not None
    return m.end()


_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_MAX_LITERAL = max(map(len, _LITERALS))
_DECODER = json.JSONDecoder()

# What the scanner expects next.
_VALUE = 0  # a value: top level, after ':' in an object, after ',' in an array
_VALUE_OR_CLOSE = 1  # right after '['
_KEY = 2  # after ',' in an object
_KEY_OR_CLOSE = 3  # right after '{'
_COLON = 4
_COMMA_OR_CLOSE = 5

# Token scan statuses.
_DONE, _CUT, _BAD = 0, 1, 2


def _fallback() -> RepairResult:
    return RepairResult(FALLBACK, "{}", True)


def _best(s: str) -> RepairResult:
    if not s.strip():
        return RepairResult(EMPTY, "{}", False)
    scanned = _scan(s)
    if scanned is None:
        return _fallback()
    text, actions, guessed = scanned
    if not parses(text):  # safety net, e.g. nesting beyond json's recursion limit
        return _fallback()
    names = list(dict.fromkeys(actions))
    changed = guessed or any(a in _GUESSES for a in names)
    return RepairResult("+".join(names) or NONE, text, changed)


def _scan(s: str) -> tuple[str, list[str], bool] | None:
    """Scan `s` once; return (repaired text, actions, guessed a cut number) or None."""
    n = len(s)
    i = _end(_WS, s)
    if i == n or s[i] not in "{[":
        return None
    # Open containers: [is_object, cut, comma]. `cut` is where the text can be cut to
    # drop the member in progress (just after the opener or the last complete member),
    # `comma` the position of the last comma seen in it.
    stack: list[list[Any]] = []
    removed: list[int] = []  # positions of trailing commas removed, increasing
    actions: list[str] = []
    guessed = False
    state = _VALUE
    cut_string = -1  # EOF inside a string value: keep s[:cut_string], then add '"'
    cut_key = False  # EOF inside a key string
    cut_literal = -1  # EOF inside a literal/number prefix starting here

    while True:
        i = _end(_WS, s, i)
        if i == n:
            break
        c = s[i]
        if state == _COMMA_OR_CLOSE:
            frame = stack[-1]
            if c == ",":
                frame[2] = i
                state = _KEY if frame[0] else _VALUE
                i += 1
                continue
            if c != ("}" if frame[0] else "]"):
                return None
        elif state in (_KEY, _KEY_OR_CLOSE):
            if c == '"':
                end, status = _string(s, i)
                if status == _BAD:
                    return None
                if status == _CUT:
                    cut_key = True
                    break
                i = end
                state = _COLON
                continue
            if c != "}":
                return None
            if state == _KEY:
                removed.append(stack[-1][2])
                actions.append(DROPPED_TRAILING_COMMA)
        elif state == _COLON:
            if c != ":":
                return None
            state = _VALUE
            i += 1
            continue
        else:  # _VALUE or _VALUE_OR_CLOSE
            if c == "{" or c == "[":
                stack.append([c == "{", i + 1, -1])
                state = _KEY_OR_CLOSE if c == "{" else _VALUE_OR_CLOSE
                i += 1
                continue
            if c == "]" and stack and not stack[-1][0]:
                if state == _VALUE:  # '[1,]'
                    removed.append(stack[-1][2])
                    actions.append(DROPPED_TRAILING_COMMA)
            elif c == '"':
                end, status = _string(s, i)
                if status == _BAD:
                    return None
                if status == _CUT:
                    cut_string = end
                    break
                i = end
                stack[-1][1] = i
                state = _COMMA_OR_CLOSE
                continue
            else:
                end, status = _scalar(s, i)
                if status == _BAD:
                    return None
                if status == _CUT:
                    cut_literal = i
                    break
                if end == n and s[i] in "-0123456789" and not s.startswith("-Infinity", i):
                    guessed = True  # a number the input ended in may have been longer
                i = end
                stack[-1][1] = i
                state = _COMMA_OR_CLOSE
                continue
        # Close the innermost container at s[i].
        stack.pop()
        i += 1
        if not stack:
            return _tail(s, i, removed, actions)
        stack[-1][1] = i
        state = _COMMA_OR_CLOSE

    # The input ended inside the top-level value.
    frame = stack[-1]
    if cut_string >= 0:
        actions.append(CLOSED_STRING)
        text = _splice(s, cut_string, removed) + '"'
    elif cut_key:
        actions.append(DROPPED_DANGLING_KEY)
        text = _splice(s, frame[1], removed)
    else:
        end = n
        if cut_literal >= 0:
            actions.append(DROPPED_CUT_LITERAL)
            end = cut_literal
        if state == _COLON or (state == _VALUE and frame[0]):
            actions.append(DROPPED_DANGLING_KEY)
            end = frame[1]
        elif state in (_KEY, _VALUE):
            actions.append(DROPPED_TRAILING_COMMA)
            end = frame[1]
        text = _splice(s, end, removed)
    actions.append(CLOSED_BRACKETS)
    closers = "".join("}" if f[0] else "]" for f in reversed(stack))
    return text + closers, actions, guessed


def _string(s: str, i: int) -> tuple[int, int]:
    """Scan the string opening at s[i].

    Returns (index after the closing quote, _DONE), or (where to cut the content,
    _CUT) when the input ends inside it, or (i, _BAD).
    """
    end = _end(_STRING_BODY, s, i + 1)
    if end < len(s):
        if s[end] == '"':
            return end + 1, _DONE
        if not (s[end] == "\\" and _ESCAPE_PREFIX.fullmatch(s, end)):
            return i, _BAD  # control character or invalid escape
    # Cut inside the string (possibly inside an escape, which s[:end] drops). A final
    # complete high-surrogate escape is half a character: drop it too.
    start = end - 6
    if start > i and _HIGH_SURROGATE.fullmatch(s, start, end):
        run = 0
        while s[start - run] == "\\":
            run += 1
        if run % 2:  # the backslash starts an escape, it is not an escaped backslash
            end = start
    return end, _CUT


def _scalar(s: str, i: int) -> tuple[int, int]:
    """Scan a literal or number at s[i]: (end, _DONE), (i, _CUT) or (i, _BAD)."""
    n = len(s)
    for literal in _LITERALS:
        if s.startswith(literal, i):
            return i + len(literal), _DONE
    if n - i < _MAX_LITERAL:
        rest = s[i:]
        if any(literal.startswith(rest) for literal in _LITERALS):
            return i, _CUT
    m = _NUMBER.match(s, i)
    if m and m.end() == n:
        return n, _DONE
    if _end(_NUMBER_PREFIX, s, i) == n:  # '1.', '1e', '1e+', '-'
        return i, _CUT
    if m:
        return m.end(), _DONE
    return i, _BAD


def _splice(s: str, end: int, removed: list[int]) -> str:
    """s[:end] without the characters at the `removed` positions."""
    if not removed:
        return s[:end]
    parts = []
    prev = 0
    for p in removed:
        if p >= end:
            break
        parts.append(s[prev:p])
        prev = p + 1
    parts.append(s[prev:end])
    return "".join(parts)


def _tail(s: str, end: int, removed: list[int], actions: list[str]) -> tuple[str, list[str], bool]:
    """The top-level value ends at s[end]; deal with whatever follows it."""
    head = _splice(s, end, removed)
    n = len(s)
    pos = _end(_WS, s, end)
    if pos < n:
        actions.append(
            DROPPED_DUPLICATE if _only_duplicates(head, s, pos) else DROPPED_TRAILING_DATA
        )
    return head, actions, False


def _only_duplicates(head: str, s: str, pos: int) -> bool:
    """Whether s[pos:] is nothing but whitespace-separated copies of the value `head`."""
    try:
        first = _canonical(json.loads(head))
        n = len(s)
        while pos < n:
            value, pos = _DECODER.raw_decode(s, pos)
            if _canonical(value) != first:
                return False
            pos = _end(_WS, s, pos)
    except (ValueError, RecursionError):
        return False
    return True


def _canonical(value: object) -> str:
    """A type-strict canonical form: 1, 1.0 and true differ; key order does not."""
    return json.dumps(value, sort_keys=True)
