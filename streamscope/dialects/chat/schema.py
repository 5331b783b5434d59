"""Does a payload fit the openai package's `ChatCompletionChunk` types?

A hand-written mirror of openai/types/chat/chat_completion_chunk.py, kept pure so the
core needs no pydantic. It answers with the first violation, as a path and a reason.
Custom (freeform) tool calls are accepted as the analysis contract says: `type: "custom"`
with `custom: {name, input}` strings (openai 3.57's chunk types declare only functions).
"""

from __future__ import annotations

from ...core import jsonio
from ...text import json_type, quote

_FINISH = {"stop", "length", "tool_calls", "content_filter", "function_call"}
_ROLES = {"developer", "system", "user", "assistant", "tool"}


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt_str(v: object) -> bool:
    return v is None or isinstance(v, str)


def violation(payload: object, data: str) -> str | None:
    """`chunk_violation(payload)`, judged on the numbers as sent: orjson reads an integer
    past 64 bits as a float, which would read as a `created` or an `index` that is no
    integer. Only a payload found wrong is read again (`data`: its text)."""
    problem = chunk_violation(payload)
    if problem is None:
        return None
    exact = jsonio.exact(data)
    return problem if exact is jsonio.REFUSED else chunk_violation(exact)


def chunk_violation(payload: object) -> str | None:
    """None when `payload` is a valid chat.completion.chunk, else what is wrong."""
    if not isinstance(payload, dict):
        return f"the payload is a JSON {json_type(payload)}, not an object"
    if "error" in payload and "choices" not in payload:
        err = payload["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        return f"the provider sent an error instead of a chunk: {quote(msg)}"
    for key, check, want in (
        ("id", lambda v: isinstance(v, str), "a string"),
        ("created", _is_int, "an integer"),
        ("model", lambda v: isinstance(v, str), "a string"),
    ):
        if key not in payload:
            return f"{key} is missing"
        if not check(payload[key]):
            return f"{key} is {quote(payload[key])}, not {want}"
    if payload.get("object") != "chat.completion.chunk":
        if "object" not in payload:
            return "object is missing"
        return f'object is {quote(payload["object"])}, not "chat.completion.chunk"'
    choices = payload.get("choices")
    if not isinstance(choices, list):
        return "choices is missing" if "choices" not in payload else "choices is not a list"
    for i, choice in enumerate(choices):
        found = _choice(choice)
        if found:
            return f"choices[{i}]{found}"
    return None


def _choice(choice: object) -> str | None:
    if not isinstance(choice, dict):
        return " is not an object"
    if not _is_int(choice.get("index")):
        return (
            ".index is missing" if "index" not in choice else f".index is {quote(choice['index'])}"
        )
    fr = choice.get("finish_reason")
    if fr is not None and (not isinstance(fr, str) or fr not in _FINISH):
        return f".finish_reason {quote(fr)} is not one of the SDK's values"
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return ".delta is missing" if "delta" not in choice else ".delta is not an object"
    for key in ("content", "refusal"):
        if not _opt_str(delta.get(key)):
            return f".delta.{key} is {quote(delta[key])}, not a string"
    role = delta.get("role")
    if role is not None and (not isinstance(role, str) or role not in _ROLES):
        return f".delta.role {quote(role)} is not a role"
    calls = delta.get("tool_calls")
    if calls is None:
        return None
    if not isinstance(calls, list):
        return ".delta.tool_calls is not a list"
    for j, call in enumerate(calls):
        found = _tool_call(call)
        if found:
            return f".delta.tool_calls[{j}]{found}"
    return None


def _tool_call(call: object) -> str | None:
    if not isinstance(call, dict):
        return " is not an object"
    if not _is_int(call.get("index")):
        return ".index is missing" if "index" not in call else f".index is {quote(call['index'])}"
    if not _opt_str(call.get("id")):
        return f".id is {quote(call['id'])}, not a string"
    t = call.get("type")
    if t is not None and t not in ("function", "custom"):
        return f'.type is {quote(t)}, not "function" or "custom"'
    for obj, keys in (("function", ("name", "arguments")), ("custom", ("name", "input"))):
        fn = call.get(obj)
        if fn is None:
            continue
        if not isinstance(fn, dict):
            return f".{obj} is not an object"
        for key in keys:
            if not _opt_str(fn.get(key)):
                return f".{obj}.{key} is a JSON {json_type(fn[key])}, not a string"
    return None
