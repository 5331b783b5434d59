"""How an exported pytest module reads an SDK's event or chunk as the dict its embedded
`accumulate` is given: `to_dict()`, and where pydantic cannot write the model (a key
holding a lone surrogate, which JSON sends as an escape and Python's json reads: pydantic
raises UnicodeEncodeError), the same dict walked off the model. Every template that reads
the openai or anthropic SDK's models interpolates this one source (`as_dict`), so the rule
lives here alone; the module it lands in stays standalone (it names only the SDK)."""

from __future__ import annotations

# The functions, for an SDK whose models derive from `{package}.BaseModel` (openai's and
# anthropic's: the same Stainless base, whose `to_dict()` is model_dump(by_alias=True,
# exclude_unset=True)). A str.format template of `package`: its own braces doubled.
_SOURCE = '''def _as_dict(value):
    """`value.to_dict()` (a value that is no model, as it is); where pydantic cannot write
    one of its keys (one holding a lone surrogate, which JSON sends as an escape: it raises
    UnicodeEncodeError), the same dict read off the model, every key and value as the SDK
    read it."""
    if not hasattr(value, "to_dict"):
        return value
    try:
        return value.to_dict()
    except UnicodeEncodeError:
        return _plain(value)


def _plain(value):
    """A model as `to_dict()` writes it: the fields it was sent, by their API names (bar
    any its model never dumps), and its extras; nested models walked the same."""
    if isinstance(value, {package}.BaseModel):
        fields = type(value).model_fields
        return {{
            (fields[k].alias or k) if k in fields else k: _plain(v)
            for k, v in value
            # (extras are in no fields set)
            if k not in fields or (k in value.model_fields_set and not fields[k].exclude)
        }}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {{k: _plain(v) for k, v in value.items()}}
    return value
'''


def as_dict(package: str) -> str:
    """The source of `_as_dict(value)` (and the `_plain` it falls back on) for the models
    of the SDK imported as `package` ("openai", "anthropic"), which the module imports."""
    return _SOURCE.format(package=package)


def as_dict_in_template(package: str) -> str:
    """`as_dict(package)` for a str.format template: its braces doubled."""
    return as_dict(package).replace("{", "{{").replace("}", "}}")
