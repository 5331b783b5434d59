"""The `ollama-python` strategy: what users of the `ollama` package collect from a stream.

`client.chat(..., stream=True)` reads the body line by line (`httpx` `iter_lines`),
parses each with `json.loads`, raises `ResponseError(error)` on a line whose `error` is
truthy, and validates the rest into a `ChatResponse` (pydantic), which keeps no call
id: `Message.ToolCall` holds `function.name` and `function.arguments` only. Its users
gather every line's calls:

    calls = [tc for chunk in stream for tc in chunk.message.tool_calls or []]

So each entry is a call, with `""` for an id whatever the line sent, and the arguments
the dict `json.loads` built (the last of duplicate keys, exact integers), shown as
compact JSON.

What this emulation declines (`Unmodeled`: the real client answers, oracle.py): a frame
with an SSE event name, bytes that are not UTF-8 or a character `iter_lines` would cut
the line at, an error that is not plain text, and any field of another type than the
package's models declare (a missing `message` or name, arguments that are not an
object): pydantic's validation decides those.
"""

from __future__ import annotations

import copy
import json

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import INVALID, Frame

# What str.splitlines (and so httpx's iter_lines) ends a line at.
BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_STRINGS = ("model", "created_at", "done_reason")
_INTS = (
    "total_duration",
    "load_duration",
    "prompt_eval_count",
    "prompt_eval_duration",
    "eval_count",
    "eval_duration",
)


def _declined(what: str) -> Unmodeled:
    return Unmodeled(f"the ollama package's handling of {what} is not emulated")


def arguments_json(args: object) -> str:
    """A call's arguments as its users hold them (a dict), written as compact JSON."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


class OllamaPythonEmulation:
    """Feed frames; `calls()` mid-stream, `finish()` at the end."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str, str]] = []  # (frame, name, arguments)
        self.error: StrategyError | None = None

    def copy(self) -> OllamaPythonEmulation:
        new = copy.copy(self)
        new.found = list(self.found)
        return new

    def feed(self, frame: Frame) -> None:
        if self.error is not None:
            return  # the stream raised: the user's loop is over
        if frame.event is not None or frame.bad_utf8 or not BREAKS.isdisjoint(frame.data):
            raise _declined("an event name, bytes that are not UTF-8 or a line break in a line")
        n, part = frame.number, frame.payload
        if part is INVALID or _calls_in(part):
            try:  # json.loads keeps what orjson does not (exact integers, NaN)
                part = json.loads(frame.data)
            except json.JSONDecodeError as exc:
                self.error = StrategyError.from_exception(exc, n)
                return
            except RecursionError:
                raise _declined("nesting past Python's recursion limit") from None
        if type(part) is not dict:
            self.error = StrategyError(
                f"AttributeError: '{type(part).__name__}' object has no attribute 'get'", n
            )
            return
        err = part.get("error")
        if err:
            if not isinstance(err, str) or _parses(err):
                raise _declined("an error that is not plain text")
            self.error = StrategyError(f"ResponseError: {err} (status code: -1)", n)
            return
        for key in _STRINGS:
            if part.get(key) is not None and not isinstance(part[key], str):
                raise _declined(f"a {key} of another type")
        for key in _INTS:
            if part.get(key) is not None and type(part[key]) is not int:
                raise _declined(f"a {key} of another type")
        if part.get("done") is not None and type(part["done"]) is not bool:
            raise _declined("a done of another type")
        if part.get("logprobs") is not None:
            raise _declined("logprobs")
        message = part.get("message")
        if type(message) is not dict or not isinstance(message.get("role"), str):
            raise _declined("a line without a message and its role")
        for key in ("content", "thinking", "tool_name"):
            if message.get(key) is not None and not isinstance(message[key], str):
                raise _declined(f"a message {key} of another type")
        if message.get("images") is not None:
            raise _declined("images")
        calls = message.get("tool_calls")
        if calls is None:
            return
        if type(calls) is not list:
            raise _declined("tool_calls that are not an array")
        found = []
        for tc in calls:
            fn = tc.get("function") if type(tc) is dict else None
            if type(fn) is not dict or not isinstance(fn.get("name"), str):
                raise _declined("a tool call without a function and its name")
            if type(fn.get("arguments")) is not dict:
                raise _declined("arguments that are not an object")
            found.append((n, fn["name"], arguments_json(fn["arguments"])))
        self.found.extend(found)

    def calls(self) -> list[Call]:
        out = []
        for k, (n, name, args) in enumerate(self.found):
            call = Call(0, k, "", "function", name, args, fragments=1)  # whole, in one line
            call.first_frame = call.last_frame = n
            out.append(call)
        return out

    def finish(self, frames: int) -> list[Call] | StrategyError:
        return self.error or self.calls()


def _calls_in(part: object) -> bool:
    message = part.get("message") if type(part) is dict else None
    return type(message) is dict and bool(message.get("tool_calls"))


def _parses(text: str) -> bool:
    """ResponseError reads its text as JSON first (and fails on JSON that is no object)."""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


__all__ = ["OllamaPythonEmulation", "arguments_json"]
