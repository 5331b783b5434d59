"""How an exported pytest module reads an SDK's event or chunk as the dict its embedded
`accumulate` is given: the SDK's own dump of it (`to_dict()`, google-genai's
`model_dump(mode="json", ...)`), and where pydantic cannot write the model's keys (one
holding a lone surrogate, which JSON sends as an escape and Python's json reads: a
Stainless `to_dict()` raises UnicodeEncodeError, a JSON-mode dump writes each such key
mangled, U+FFFD for its every byte), the same dict walked off the model, each key as sent.
Every template that reads an SDK's models interpolates this one source (`as_dict`), so
the rule lives here alone; the module it lands in stays standalone (it names only the
SDK, and pydantic, which the SDK brings). `reader` is the same function in this process,
for an oracle that reads the SDK's models as a dict."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

# The functions, for an SDK whose models derive from `{base}`, dumped with `{dump}`,
# which writes what model_dump(**{options}) does. A str.format template: its own braces
# doubled.
_SOURCE = '''def _as_dict(value):
    """`value.{dump}` (a value that is no model, as it is); where pydantic
    cannot write one of its keys (one holding a lone surrogate, which JSON sends as an
    escape: it raises UnicodeEncodeError or writes the key mangled), the same dict read
    off the model, every key as the SDK read it."""
    if not isinstance(value, {base}):
        return value
    if _keyed(value):
        return _plain(value)
    return value.{dump}


# What `{dump}` writes, as model_dump's options
_DUMP = {options}


def _keyed(value):
    """Whether a key in `value` (a model's extras, a dict's, at any depth) holds a lone
    surrogate."""
    if isinstance(value, list):
        return any(_keyed(v) for v in value)
    if isinstance(value, {base}):
        return any(_lone(k) or _keyed(v) for k, v in value)
    if isinstance(value, dict):
        return any(_lone(k) or _keyed(v) for k, v in value.items())
    return False


def _lone(key):
    return isinstance(key, str) and any("\\ud800" <= c <= "\\udfff" for c in key)


def _plain(value, config=None):
    """A model as its dump (`_DUMP`) writes it: the fields it writes, by their API
    names, and its extras; a field holding such a key walked the same, any other as the
    model writes it (`config`: the model's, whose JSON-mode settings a value in it
    follows)."""
    if isinstance(value, {base}):
        fields, out = type(value).model_fields, {{}}
        for k, v in value:
            field = fields.get(k)
            if field is None:  # an extra
                out[k] = _plain(v, value.model_config)
                continue
            if (
                field.exclude
                or (_DUMP.get("exclude_unset") and k not in value.model_fields_set)
                or (_DUMP.get("exclude_none") and v is None)
            ):
                continue
            name = k
            if _DUMP.get("by_alias"):
                name = field.serialization_alias or field.alias or k
            if _DUMP.get("mode") == "json" and not _keyed(v):
                out[name] = value.model_dump(include={{k}}, **_DUMP)[name]
            else:
                out[name] = _plain(v, value.model_config)
        return out
    if isinstance(value, list):
        return [_plain(v, config) for v in value]
    if isinstance(value, dict):
        return {{k: _plain(v, config) for k, v in value.items()}}
{leaf}'''

# How `_plain` writes a value in a free-form field (a JSON value): as it is, or where the
# dump is JSON mode's, as that writes it (NaN as null, unless the model says otherwise)
_AS_IT_IS = "    return value\n"
_AS_JSON = """    import pydantic_core

    return pydantic_core.to_jsonable_python(
        value, inf_nan_mode=(config or {}).get("ser_json_inf_nan", "null")
    )
"""

# (the BaseModel, as source; the dump; its options; how a free-form value is written) of
# each SDK that is no Stainless one
_SDKS = {
    "google.genai": (
        "pydantic.BaseModel",
        "model_dump(**_DUMP)",
        '{"mode": "json", "by_alias": True, "exclude_none": True}',
        _AS_JSON,
    ),
}


def as_dict(package: str) -> str:
    """The source of `_as_dict(value)` (and the functions it falls back on) for the models
    of the SDK imported as `package`, which the module imports: a Stainless one's
    ("openai", "anthropic": `to_dict()`, model_dump(by_alias=True, exclude_unset=True)),
    or google-genai's ("google.genai": the module imports pydantic too)."""
    base, dump, options, leaf = _SDKS.get(
        package,
        (
            f"{package}.BaseModel",
            "to_dict()",
            '{"by_alias": True, "exclude_unset": True}',
            _AS_IT_IS,
        ),
    )
    return _SOURCE.format(base=base, dump=dump, options=options, leaf=leaf)


def as_dict_in_template(package: str) -> str:
    """`as_dict(package)` for a str.format template: its braces doubled."""
    return as_dict(package).replace("{", "{{").replace("}", "}}")


@cache
def reader(package: str) -> Callable[[Any], Any]:
    """`as_dict(package)`'s `_as_dict`, run here (the SDK and pydantic imported now)."""
    import importlib

    importlib.import_module(package)
    top = package.partition(".")[0]
    scope: dict[str, Any] = {"pydantic": importlib.import_module("pydantic")}
    scope[top] = importlib.import_module(top)
    exec(compile(as_dict(package), f"<sdk_dict {package}>", "exec"), scope)
    read: Callable[[Any], Any] = scope["_as_dict"]
    return read
