"""Why openai-python's stream helper raises where the request declares a strict tool.

`client.chat.completions.stream()` (its ChatCompletionStreamState) takes a function tool
declared `"strict": true` (openai-agents declares its tools so) as input it must parse: it
parses the call's arguments with jiter's partial mode at every delta that adds to them,
with `json.loads` when the call is done (a delta of another call, or a finish_reason) and
again in `get_final_completion()`, and it raises at finish_reason `length` or
`content_filter` rather than hand back calls it could not parse. A tool that is not strict
is never parsed. These are the words the openai-sdk strategy gives with such an
exception (StrategyError.why), in the emulation and from the real package alike.

Must not import openai (the core's hygiene).
"""

from __future__ import annotations

from typing import Any

HELPER = "openai-python's stream helper"


def strict_names(tools: object) -> list[str]:
    """The names of the function tools `tools` declares strict (the helper's test: a
    truthy `function.strict`)."""
    if not isinstance(tools, list):
        return []
    out = []
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) and t.get("type") == "function" else None
        if isinstance(fn, dict) and fn.get("strict") and isinstance(fn.get("name"), str):
            out.append(fn["name"])
    return out


def _tool(name: object) -> str:
    return f"`{name}`" if isinstance(name, str) and name else "the call's tool"


def parsed(name: object) -> str:
    """The call of `name` (a strict tool) is done and its arguments are not JSON."""
    return (
        f"{_tool(name)} is declared strict, so {HELPER} parses its arguments with json.loads "
        "when the call ends (a finish_reason, another call's delta) and raises when they are "
        "not JSON"
    )


def partial(name: object) -> str:
    """A delta of a strict tool's call made arguments that cannot begin a JSON value."""
    return (
        f"{_tool(name)} is declared strict, so {HELPER} parses its arguments at every delta "
        "(jiter, partial mode) and raises when they cannot be the start of JSON"
    )


def cut(reason: str) -> str:
    """finish_reason `reason` (length, content_filter) with a strict tool declared."""
    return (
        f"the request declares a strict tool, so {HELPER} raises at finish_reason {reason} "
        "rather than return calls it could not parse"
    )


_CUT = {"LengthFinishReasonError": "length", "ContentFilterFinishReasonError": "content_filter"}


def of_sdk(exc: BaseException, tools: object) -> str | None:
    """Why the installed openai package raised `exc` (None: not for a strict tool), told
    from where in it the exception was raised."""
    if not strict_names(tools):
        return None
    frames: list[Any] = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for f in frames:
        if f.f_code.co_name == "parse_function_tool_arguments":
            return parsed(getattr(f.f_locals.get("function"), "name", None))
    last = frames[-1] if frames else None
    if last is None or last.f_code.co_name != "_accumulate_chunk":
        return None  # get_final_completion's own checks raise with or without strict tools
    if type(exc).__name__ in _CUT:
        return cut(_CUT[type(exc).__name__])
    if isinstance(exc, ValueError):  # jiter's partial parse, called from there
        snapshot = last.f_locals.get("tool_call_snapshot")
        return partial(getattr(getattr(snapshot, "function", None), "name", None))
    return None
