"""How an exported pytest module replays a Gemini stream: through a real `google-genai`
client pointed at an httpx MockTransport (`http_options.httpx_client`), its chunks read
with `generate_content_stream` and accumulated by reference.py's `accumulate`
(streamscope's reading in a few lines).

EXPECTED holds each call's `args` as the JSON value they build, compared by value: the
SDK holds a streamed `numberValue` as a float (3 comes back 3.0), and Python compares
3 == 3.0 true, as a client's tool sees them alike.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from ...core.calls import Call
from ...core.frames import parse_payload
from ..base import Fixture
from ..sdk_dict import as_dict_in_template
from . import reference

_ABOUT = (
    "The chunks are served through a MockTransport into a real google-genai client; the test\n"
    "reads them with generate_content_stream(), accumulates the tool calls with `accumulate`\n"
    "(streamscope's reading, in a few lines) and asserts the calls streamscope assembled. Swap\n"
    "`accumulate` for your client's own to see whether it gets them right. Needs only\n"
    "google-genai and pytest."
)

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
'''
    + _ABOUT.replace("{", "{{").replace("}", "}}")
    + '''
"""

import base64
import importlib.util

import pydantic
from google import genai
from google.genai import types

# google-genai takes an httpx2 or an httpx client; recent releases depend on httpx2.
http = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

# The data of every chunk served
CHUNKS = {frames}

# What streamscope's robust reading assembles from these chunks.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


def _client():
    body = "".join(
        "".join("data: " + line + "\\n" for line in data.split("\\n")) + "\\n" for data in CHUNKS
    ).encode()

    def handler(request):
        return http.Response(200, headers={{"content-type": "text/event-stream"}}, content=body)

    return genai.Client(
        api_key="fixture",
        http_options=types.HttpOptions(
            base_url="http://streamscope.invalid",
            httpx_client=http.Client(transport=http.MockTransport(handler)),
        ),
    )


def _signed_bytes(calls):
    # google-genai holds a thoughtSignature as bytes and writes it back in base64url:
    # the same signature, compared as the bytes it holds
    def decoded(sig):
        if sig is None:
            return None
        sig = sig.replace("+", "-").replace("/", "_").rstrip("=")
        return base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))

    return [{{**call, "thoughtSignature": decoded(call["thoughtSignature"])}} for call in calls]


'''
    + as_dict_in_template("google.genai")
    + """

def test_the_calls_streamscope_assembled():
    stream = _client().models.generate_content_stream(model="fixture", contents="replay")
    chunks = [_as_dict(chunk) for chunk in stream]
    assert _signed_bytes(accumulate(chunks)) == _signed_bytes(EXPECTED)
"""
)


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """What the SDK yields: chunks whose data is a JSON object without an `error` (the
    SDK raises on data that is not JSON)."""
    out: list[tuple[str | None, str]] = []
    for _, data in frames:
        p = parse_payload(data)
        if isinstance(p, dict) and "error" not in p:
            out.append((None, data))
    return out


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    {data!r},\n" for _, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    return [parse_payload(data) for _, data in frames]


def expected(call: Call) -> dict[Any, Any]:
    args = call.arguments
    if isinstance(args, str):
        with contextlib.suppress(ValueError, RecursionError):
            args = json.loads(args, parse_constant=_not_a_literal, parse_float=_finite)
    return {"id": call.id, "name": call.name, "args": args, "thoughtSignature": call.signature}


def _not_a_literal(text: str) -> float:
    """NaN and Infinity have no Python literal: such arguments stay the text they were."""
    raise ValueError(text)


def _finite(text: str) -> float:
    value = float(text)
    if value - value != 0:  # 1e400 reads as inf: no literal either
        raise ValueError(text)
    return value


FIXTURE = Fixture(TEMPLATE, served, literal, events, reference.source, expected)
