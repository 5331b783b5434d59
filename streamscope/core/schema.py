"""Does a payload fit the openai package's `ChatCompletionChunk` types?

A hand-written mirror of openai/types/chat/chat_completion_chunk.py, kept pure so the
core needs no pydantic. It answers with the first violation, as a path and a reason.
Custom (freeform) tool calls are accepted as the analysis contract says: `type: "custom"`
with `custom: {name, input}` strings (openai 3.57's chunk types declare only functions).
"""

from __future__ import annotations

import json

_FINISH = {"stop", "length", "tool_calls", "content_filter", "function_call"}
_ROLES = {"developer", "system", "user", "assistant", "tool"}


_JSON_TYPES = {dict: "object", list: "array", int: "number", float: "number", bool: "boolean"}


def _j(v: object) -> str:
    return json.dumps(v, ensure_ascii=False)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt_str(v: object) -> bool:
    return v is None or isinstance(v, str)


def chunk_violation(payload: object) -> str | None:
    """None when `payload` is a valid chat.completion.chunk, else what is wrong."""
    if not isinstance(payload, dict):
        return f"the payload is a JSON {type(payload).__name__}, not an object"
    if "error" in payload and "choices" not in payload:
        err = payload["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        return f"the provider sent an error instead of a chunk: {_j(msg)}"
    for key, check, want in (
        ("id", lambda v: isinstance(v, str), "a string"),
        ("created", _is_int, "an integer"),
        ("model", lambda v: isinstance(v, str), "a string"),
    ):
        if key not in payload:
            return f"{key} is missing"
        if not check(payload[key]):
            return f"{key} is {_j(payload[key])}, not {want}"
    if payload.get("object") != "chat.completion.chunk":
        if "object" not in payload:
            return "object is missing"
        return f'object is {_j(payload["object"])}, not "chat.completion.chunk"'
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
        return ".index is missing" if "index" not in choice else f".index is {_j(choice['index'])}"
    fr = choice.get("finish_reason")
    if fr is not None and fr not in _FINISH:
        return f".finish_reason {_j(fr)} is not one of the SDK's values"
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return ".delta is missing" if "delta" not in choice else ".delta is not an object"
    for key in ("content", "refusal"):
        if not _opt_str(delta.get(key)):
            return f".delta.{key} is {_j(delta[key])}, not a string"
    role = delta.get("role")
    if role is not None and role not in _ROLES:
        return f".delta.role {_j(role)} is not a role"
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
        return ".index is missing" if "index" not in call else f".index is {_j(call['index'])}"
    if not _opt_str(call.get("id")):
        return f".id is {_j(call['id'])}, not a string"
    t = call.get("type")
    if t is not None and t not in ("function", "custom"):
        return f'.type is {_j(t)}, not "function" or "custom"'
    for obj, keys in (("function", ("name", "arguments")), ("custom", ("name", "input"))):
        fn = call.get(obj)
        if fn is None:
            continue
        if not isinstance(fn, dict):
            return f".{obj} is not an object"
        for key in keys:
            if not _opt_str(fn.get(key)):
                return f".{obj}.{key} is a JSON {_JSON_TYPES.get(type(fn[key]), 'value')}, not a string"
    return None
