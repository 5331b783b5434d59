"""Showing untrusted text on a terminal: the one helper every face (and the core's messages) uses.

A recording is untrusted input. An ESC inside a tool name could retitle the terminal or
clear the screen, so every string that came from a recording or a request is passed
through `visible` (or `quote`, which JSON-quotes first) before it is printed: C0 and C1
control characters, ESC and DEL become `\\x1b`-style text. JSON output is never passed
through here: it stays exact, the same set written as JSON's own `\\u0085` escapes
(`CONTROL_IN_JSON`, core/jsonio.py).

A leaf module (stdlib only): the core imports it for its messages.
"""

from __future__ import annotations

import json
import re
import sys

# C0 (0x00-0x1f), DEL (0x7f) and C1 (0x80-0x9f). JSON escapes C0 itself, not DEL or C1.
# Lone surrogates too: JSON can carry them, no terminal encoding can write them. And the
# bidirectional embeddings, overrides and isolates, which reorder what a line shows (a
# name that reads as another: "Trojan Source").
_BIDI = "\u202a-\u202e\u2066-\u2069"
_BEYOND_C0 = f"\x7f-\x9f\ud800-\udfff{_BIDI}"  # those JSON writers leave raw
CONTROL = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
_CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_BEYOND_C0}]")
# CONTROL less C0, which JSON's writers escape themselves: what JSON shown on a terminal
# writes as `\u0085`-style escapes (core/jsonio.py), inside a string the same value.
CONTROL_IN_JSON = re.compile(f"[{_BEYOND_C0}]")
_ELLIPSIS = "…"


def _hex(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, lines: bool = False) -> str:
    """`text` with control characters shown as `\\xNN` (keeping tab and newline if `lines`)."""
    pattern = _CONTROL_BUT_LINES if lines else CONTROL
    return pattern.sub(_hex, text) if pattern.search(text) else text


def cut(text: str, width: int = 0) -> str:
    """`text` cut to `width` characters with an ellipsis (0: no limit)."""
    return text if not width or len(text) <= width else text[: width - 1] + _ELLIPSIS


def quote(value: object, width: int = 0) -> str:
    """A value as JSON (strings in quotes, `null` for none), safe to print, cut to `width`."""
    if width and isinstance(value, str) and len(value) > width:
        value = value[:width]  # escaping only lengthens: the cut result is the same, sooner
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        text = "<nested too deeply to show>"
    except (TypeError, ValueError):
        text = visible(str(value))
    return cut(visible(text), width)


def as_text(value: object) -> str | None:
    """The text a value stands for: a string itself, text parts (`{"text": ...}`, as tool
    results send them: Anthropic's text blocks, the Responses API's input_text parts)
    their texts joined by a space; None: it is no text (shown as JSON)."""
    if isinstance(value, list) and value and all(_text_part(p) for p in value):
        return " ".join(p["text"] for p in value)
    return value if isinstance(value, str) else None


def one_line(value: object, width: int = 0) -> str:
    """A value on one line, safe, cut to `width` (0: whole): its text (as_text), anything
    else as JSON; a line break shows as ↵ (a tool result's output, in a cell or a list)."""
    text = as_text(value)
    if text is None:
        return quote(value, width)
    value = text
    if width and len(value) > 2 * width:  # (a megabyte of output is not joined whole)
        value = value[: 2 * width]
    text = value.replace("\r\n", "\n").replace("\n", "↵")
    return cut(visible(text), width)


def _text_part(part: object) -> bool:
    return isinstance(part, dict) and isinstance(part.get("text"), str)


def param(name: object, value: object, width: int = 0) -> str:
    """A request's field as `name=value`, the value as JSON cut to `width` (`stream=true`,
    `model="gpt-4o"`): the request view and a session's client messages alike."""
    return f"{visible(str(name))}={quote(value, width)}"


def word(value: object, width: int = 24) -> str:
    """A short value as a word: a number or short string as itself (made safe), else as
    JSON cut to `width` (frame summaries: `true`, never Python's `True`)."""
    if (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and len(value) <= width
    ):
        return visible(str(value))
    return quote(value, width)


def plural(n: int, word: str, words: str | None = None) -> str:
    """ "1 frame", "2 frames" (or the irregular plural given)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def past_the_end(frame: int, total: int) -> str:
    """A frame asked for past a stream's end, as a link's error and replay's `g` say it."""
    if total < 1:
        return f"frame {frame} is past the end: the stream has no frames"
    if total == 1:
        return f"frame {frame} is past the end: the stream has frame 1 only"
    return f"frame {frame} is past the end: the stream has frames 1-{total}"


def times(kind: str, n: int) -> str:
    """A finding's kind and how often it was seen, as every face says it: "id-repeated ×4",
    the kind alone once."""
    return f"{kind} ×{n}" if n > 1 else kind


def say(message: str) -> None:
    """streamscope speaks on stderr, one safe line (a recorded child owns stdout)."""
    print(f"streamscope: {visible(message)}", file=sys.stderr, flush=True)


def json_type(value: object) -> str:
    """A JSON value's type as JSON names it (object, array, ...), not as Python does."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(  # type: ignore[call-overload]
        type(value), "null" if value is None else "value"
    )
