"""How an exported pytest module replays an OpenAI Responses API stream: through a real
`openai.OpenAI` client on the HTTP package the installed openai is built on
(`client.responses.create(..., stream=True)`), its events accumulated by reference.py's
`accumulate` (streamscope's reading in a few lines)."""

from __future__ import annotations

from typing import Any

from ...core.calls import Call
from ...core.frames import parse_payload
from ..base import Fixture

# the openai SDK's Stream hands the Responses API's events on as it does chunks
from ..chat.fixture import served
from ..typed import events_template, openai_session
from . import reference

TEMPLATE = events_template(
    "openai.OpenAI",
    "since openai 3.57",
    "client.responses.create(stream=True)",
    """openai.OpenAI(
        api_key="sk-fixture",
        base_url="http://streamscope.invalid/v1",
        http_client=http.Client(transport=http.MockTransport(handler)),
        max_retries=0,
    )""",
    """def test_the_calls_streamscope_assembled():
    stream = _client().responses.create(model="fixture", input="replay", stream=True)
    events = [_as_dict(event) for event in stream]
    assert accumulate(events) == EXPECTED
""",
)


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    ({name!r}, {data!r}),\n" for name, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    return [parse_payload(data) for _, data in frames]


def expected(call: Call) -> dict[Any, Any]:
    return {
        "call_id": call.id,
        "item_id": call.item_id,
        "name": call.name,
        "arguments": call.arguments,
    }


# A session (Responses over a WebSocket, Codex's transport) through the openai SDK's own
# WebSocket client: `client.beta.responses.connect()` (openai 3.57), which connects to the
# base URL's `/responses` as ws://
SESSION = openai_session(
    "client.beta.responses.connect(websocket_connection_options=options)",
    "openai.OpenAI client (client.beta.responses.connect())",
)

# the stream helper the openai-sdk strategy emulates (ResponseStreamState): the module reads
# create(stream=True), without it
HELPER = "client.responses.stream()"

FIXTURE = Fixture(
    TEMPLATE, served, literal, events, reference.source, expected, SESSION, helper=HELPER
)
