"""How an exported pytest module replays a Chat Completions stream: through a real
`openai.OpenAI` client on the HTTP package the installed openai is built on, its chunks
accumulated by reference.py's `accumulate` (streamscope's reading in a few lines)."""

from __future__ import annotations

import json
from typing import Any

from ...core.calls import Call
from ...core.frames import parse_payload
from ..base import Fixture
from ..sdk_dict import as_dict_in_template
from . import reference

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
The stream is served through a MockTransport into a real openai.OpenAI client; the
test accumulates the chunks with `accumulate` (streamscope's reading, in a few lines)
and asserts the calls streamscope assembled. Swap `accumulate` for your client's own to
see whether it gets them right. Needs only openai and pytest.
"""

import importlib

import openai

# The HTTP package the installed openai builds its clients with: httpx2 since openai 3.57,
# httpx before. Nothing else is imported, so openai and pytest are all this needs.
_base = next(
    (
        c.__module__.partition(".")[0]
        for c in getattr(openai, "DefaultHttpxClient", object).__mro__[1:]
        if c.__module__.partition(".")[0] in ("httpx2", "httpx")
    ),
    "httpx",
)
http = importlib.import_module(_base)

FRAMES = {frames}

# What streamscope's robust reading assembles from these frames.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


def _client():
    body = "".join("data: " + frame + "\\n\\n" for frame in FRAMES).encode()

    def handler(request):
        return http.Response(200, headers={{"content-type": "text/event-stream"}}, content=body)

    return openai.OpenAI(
        api_key="sk-fixture",
        base_url="http://streamscope.invalid/v1",
        http_client=http.Client(transport=http.MockTransport(handler)),
    )


'''
    + as_dict_in_template("openai")
    + """

def test_the_calls_streamscope_assembled():
    stream = _client().chat.completions.create(
        model="fixture", messages=[{{"role": "user", "content": "replay"}}], stream=True
    )
    chunks = [_as_dict(chunk) for chunk in stream]
    assert accumulate(chunks) == EXPECTED
"""
)


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """What the SDK's stream hands the test: JSON chunks up to [DONE], no error events."""
    out = []
    for name, data in frames:
        if data.startswith("[DONE]"):
            break
        payload = parse_payload(data)
        if isinstance(payload, dict) and not payload.get("error"):
            out.append((name, data))
    return out


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    {data!r},\n" for _, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    return [json.loads(data) for _, data in frames]


def expected(call: Call) -> dict[Any, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


# the stream helper the openai-sdk strategy emulates (ChatCompletionStreamState): the module reads
# create(stream=True), without it
HELPER = "client.chat.completions.stream()"

FIXTURE = Fixture(TEMPLATE, served, literal, events, reference.source, expected, helper=HELPER)
