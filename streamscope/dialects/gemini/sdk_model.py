"""The `parts` strategy: what users of the `google-genai` SDK collect from a stream.

`client.models.generate_content_stream(...)` yields each chunk as a
`GenerateContentResponse` and assembles nothing across chunks; `chunk.function_calls`
lists the `functionCall` parts of the chunk's first candidate. Its users gather them:

    calls = [fc for chunk in stream for fc in chunk.function_calls or []]

and run each with `fc.args or {}`. So every part is a call of its own: a whole call is
right, a streamed call comes out as its opening part, each `partialArgs` part and its
closing part, with the arguments nowhere. A call's `id` is `fc.id` (`""` for None), its
arguments `json.dumps(fc.args or {})` compact, keys in the order sent, and its
thoughtSignature its part's, as the stream sent it: the SDK keeps the part whole
(`Part.thought_signature`, as bytes), and a user's next request sends back the chunk's
`content`, the signature with it.

What this emulation declines (`Unmodeled`: the real SDK answers, oracle.py): a frame
whose data is not a JSON object (the SDK raises `json.JSONDecodeError` or fails to
validate), a frame with an SSE event name or bytes that are not UTF-8 (its own line
reader treats them otherwise), an `error` key, and any field of a candidate of another
type than the SDK's models declare, or a `thoughtSignature` that is not base64 (the SDK
holds it as bytes): pydantic's validation decides those.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import INVALID, Frame
from .strategies import args_text


def _declined(what: str) -> Unmodeled:
    return Unmodeled(f"google-genai's handling of {what} is not emulated")


class PartsEmulation:
    """Feed frames; `calls()` mid-stream, `finish()` at the end."""

    def __init__(self) -> None:
        # (frame, id, name, arguments, thoughtSignature) of every part collected: Calls
        # are made when asked
        self.found: list[tuple[int, str, str, str, object]] = []
        self.error: StrategyError | None = None

    def copy(self) -> PartsEmulation:
        new = copy.copy(self)
        new.found = list(self.found)
        return new

    def piece(self, n: int) -> None:
        """`feed` of a chunk whose one part only adds a string piece to a streamed call: a
        part with no name and no args, as the SDK's users collect it."""
        self.found.append((n, "", "", "{}", None))

    def feed(self, frame: Frame) -> None:
        p = frame.payload
        if p is INVALID or type(p) is not dict:
            raise _declined("data that is not a JSON object")
        if frame.event is not None or frame.bad_utf8:
            raise _declined("an event name or bytes that are not UTF-8")
        if "error" in p:
            raise _declined("an error object")
        cands = p.get("candidates")
        if cands is None:
            return
        if type(cands) is not list:
            raise _declined("candidates that are not an array")
        for k, cand in enumerate(cands):
            parts = _parts(cand)
            if k:
                continue  # (checked as the SDK validates it; its calls are not listed)
            for part in parts:
                fc = part.get("functionCall")
                if fc is None:
                    continue
                fid, name = fc.get("id"), fc.get("name")
                signature = part.get("thoughtSignature")
                self.found.append((frame.number, fid or "", name or "", args_text(fc), signature))

    def calls(self) -> list[Call]:
        out = []
        for k, (n, fid, name, args, signature) in enumerate(self.found):
            call = Call(0, k, fid, "functionCall", name, args, fragments=1)  # whole, one part
            call.first_frame = call.last_frame = n
            call.signature = signature
            out.append(call)
        return out

    def finish(self, frames: int) -> list[Call] | StrategyError:
        return self.error or self.calls()


_TYPES = {"text": str, "thought": bool, "finishReason": str, "index": int}


def _parts(cand: object) -> list[dict[Any, Any]]:
    """A candidate's parts, each checked as far as the SDK's models type them; Unmodeled
    for a value pydantic would decide on."""
    if type(cand) is not dict:
        raise _declined("a candidate that is not an object")
    for key in ("finishReason", "index"):
        if cand.get(key) is not None and type(cand[key]) is not _TYPES[key]:
            raise _declined(f"a {key} of another type")
    content = cand.get("content")
    if content is None:
        return []
    if type(content) is not dict:
        raise _declined("content that is not an object")
    parts = content.get("parts")
    if parts is None:
        return []
    if type(parts) is not list:
        raise _declined("parts that are not an array")
    for part in parts:
        if type(part) is not dict:
            raise _declined("a part that is not an object")
        for key in ("text", "thought"):
            if part.get(key) is not None and type(part[key]) is not _TYPES[key]:
                raise _declined(f"a part's {key} of another type")
        signature = part.get("thoughtSignature")
        if signature is not None and not _base64(signature):
            raise _declined("a thoughtSignature that is not base64")
        fc = part.get("functionCall")
        if fc is None:
            continue
        if type(fc) is not dict:
            raise _declined("a functionCall that is not an object")
        fid, name, args = fc.get("id"), fc.get("name"), fc.get("args")
        if not (fid is None or isinstance(fid, str)) or not (name is None or isinstance(name, str)):
            raise _declined("an id or name that is not a string")
        if not (args is None or type(args) is dict):
            raise _declined("args that are not an object")
        if not (fc.get("willContinue") is None or type(fc["willContinue"]) is bool):
            raise _declined("a willContinue that is not a boolean")
        partial = fc.get("partialArgs")
        if partial is not None and not (
            type(partial) is list and all(_partial_arg(a) for a in partial)
        ):
            raise _declined("partialArgs of other types than its model declares")
    return parts


_PARTIAL: dict[str, Callable[[object], bool]] = {
    "jsonPath": lambda v: isinstance(v, str),
    "stringValue": lambda v: isinstance(v, str),
    "numberValue": lambda v: type(v) in (int, float),
    "boolValue": lambda v: type(v) is bool,
    "nullValue": lambda v: v == "NULL_VALUE",
    "willContinue": lambda v: type(v) is bool,
}


def _partial_arg(arg: object) -> bool:
    return type(arg) is dict and all(
        arg[key] is None or ok(arg[key]) for key, ok in _PARTIAL.items() if key in arg
    )


def _base64(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        base64.b64decode(value, validate=True)
    except ValueError:
        return False
    return True
