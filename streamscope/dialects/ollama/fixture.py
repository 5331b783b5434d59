"""How an exported pytest module replays an Ollama stream: through a real `ollama.Client`
handed an httpx MockTransport (its keyword arguments go to `httpx.Client`), its chunks
read with `client.chat(..., stream=True)` and accumulated by reference.py's `accumulate`
(streamscope's reading in a few lines).

EXPECTED holds each call's name and its arguments as the JSON value they hold: the
package keeps no call id (`Message.ToolCall` has none), so ids are not compared.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from ...core.calls import Call
from ...core.frames import parse_payload
from ..base import Fixture
from . import reference

_ABOUT = (
    "The lines are served through a MockTransport into a real ollama client; the test reads\n"
    "them with client.chat(stream=True), accumulates the tool calls with `accumulate`\n"
    "(streamscope's reading, in a few lines) and asserts the calls streamscope assembled. Swap\n"
    "`accumulate` for your client's own to see whether it gets them right. Needs only ollama\n"
    "and pytest (ollama brings httpx)."
)

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
'''
    + _ABOUT.replace("{", "{{").replace("}", "}}")
    + '''
"""

import httpx
import ollama

# Every line served (the NDJSON body, one line each)
LINES = {frames}

# What streamscope's robust reading assembles from these lines (the ollama package keeps
# no call id, so ids are not compared).
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


def _client():
    body = "".join(line + "\\n" for line in LINES).encode()

    def handler(request):
        return httpx.Response(200, headers={{"content-type": "application/x-ndjson"}}, content=body)

    return ollama.Client(host="http://127.0.0.1:9", transport=httpx.MockTransport(handler))


def test_the_calls_streamscope_assembled():
    stream = _client().chat(model="fixture", messages=[], stream=True)
    chunks = [chunk.model_dump(exclude_none=True) for chunk in stream]
    assert accumulate(chunks) == EXPECTED
'''
)


def _accepted(payload: object) -> bool:
    """A line the ollama client yields: an object with a message and its role, no error,
    and calls whose name is text and arguments an object (it raises on the rest)."""
    if not isinstance(payload, dict) or payload.get("error"):
        return False
    message = payload.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return False
    calls = message.get("tool_calls")
    if calls is None:
        return True
    return isinstance(calls, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("name"), str)
        and isinstance(c["function"].get("arguments"), dict)
        for c in calls
    )


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """The lines the client yields (it raises on the others, so they are left out)."""
    return [(None, data) for _, data in frames if _accepted(parse_payload(data))]


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    {data!r},\n" for _, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    return [json.loads(data) for _, data in frames]


def expected(call: Call) -> dict[Any, Any]:
    args = call.arguments
    if isinstance(args, str):
        with contextlib.suppress(ValueError, RecursionError):
            args = json.loads(args, parse_constant=_not_a_literal)
    return {"name": call.name, "arguments": args}


def _not_a_literal(text: str) -> float:
    raise ValueError(text)  # NaN and Infinity have no Python literal


FIXTURE = Fixture(TEMPLATE, served, literal, events, reference.source, expected)
