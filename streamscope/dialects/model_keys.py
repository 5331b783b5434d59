"""Keys pydantic cannot write, for the emulations of SDKs whose models it dumps.

A key holding a lone surrogate (sent as a JSON escape such as "\\ud800", which Python's json
reads) is kept as sent when the SDK constructs a model holding it; pydantic raises
UnicodeEncodeError, the one Python's own encoder raises (same message), when it dumps that
model (`to_dict()`, `model_dump()`). A model's own keys are written (its fields are ASCII:
only its extras can raise, the first of them sent first), and so are those of the models
nested in it, fields before extras; keys inside a value that is no model (an extra's
object, a dict field such as a tool's `input`) never raise. Which values are models is the
SDK's types' to say: `write_model` writes the keys of the models it is told of and leaves
the rest to the real class (Unmodeled) when a key deeper down might raise.

Must not import pydantic or any SDK.
"""

from __future__ import annotations

import re
from typing import Any

from streamscope.core.calls import Unmodeled

__all__ = ["escapes", "unwritable", "unwritable_deep", "write_keys", "write_model"]

# \uD800..\uDFFF, hex digits in either case (also after an escaped backslash, text that
# reads as `\ud800`: that only opens the gate early)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]").search
DEEPER = "a key pydantic cannot write (a lone surrogate) inside a value the SDK dumps"


def escapes(before: bool, data: str) -> bool:
    """The gate every emulation keeps (`_escapes`, updated from each frame it reads in
    full) before it looks at the models the SDK dumps key by key (`write_keys`,
    `write_model`): shut until a frame's JSON text may read as a string holding a lone
    surrogate, open from then on (`before`: it was open). Only an escape `\\uD800`..`\\uDFFF`
    makes one (bytes that are not UTF-8 are read as U+FFFD). While it is shut, a frame pays
    one scan of its text in C; once open, none."""
    return before or _SURROGATE_ESCAPE(data) is not None


def unwritable(key: str) -> bool:
    """A key pydantic cannot write when it dumps a model holding it."""
    if key.isascii():
        return False
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unwritable_deep(value: object) -> bool:
    """Some key anywhere in `value` that pydantic may fail to write."""
    if isinstance(value, dict):
        return any(map(unwritable, value)) or any(map(unwritable_deep, value.values()))
    if isinstance(value, list):
        return any(map(unwritable_deep, value))
    return False


def write_keys(d: dict[Any, Any]) -> None:
    """pydantic writing the own keys of a model the SDK dumps: the first that cannot be
    written raises (keys inside its values are not looked at)."""
    for key in d:
        if not key.isascii():
            key.encode("utf-8")


def write_model(
    d: dict[Any, Any], lists: tuple[str, ...] = (), models: tuple[str, ...] = ()
) -> None:
    """pydantic dumping the model constructed from `d`, where the value of each field named
    in `lists` is a list of models (when it is a list: its objects' own keys) and that of
    each in `models` a model (when it is an object: its own keys), written in that order
    (each list's field is declared before each model's, in the models this reads: Response
    and Message), then `d`'s own keys. Unmodeled when a key that cannot be written lies
    anywhere else below `d`: whether it is written depends on the SDK's types."""
    for key, value in d.items():
        if key in lists and type(value) is list:
            for entry in value:
                if type(entry) is dict:
                    _only_own(entry)
                elif unwritable_deep(entry):
                    raise Unmodeled(DEEPER)
        elif key in models and type(value) is dict:
            _only_own(value)
        elif unwritable_deep(value):
            raise Unmodeled(DEEPER)
    for key in lists:
        value = d.get(key)
        if type(value) is list:
            for entry in value:
                if type(entry) is dict:
                    write_keys(entry)
    for key in models:
        value = d.get(key)
        if type(value) is dict:
            write_keys(value)
    write_keys(d)


def _only_own(d: dict[Any, Any]) -> None:
    """Unmodeled when a key pydantic cannot write is inside one of `d`'s values."""
    if any(map(unwritable_deep, d.values())):
        raise Unmodeled(DEEPER)
