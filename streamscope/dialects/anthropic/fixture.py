"""How an exported pytest module replays an Anthropic Messages stream: through a real
`anthropic.Anthropic` client on the HTTP package the installed anthropic is built on
(`client.messages.create(..., stream=True)`), its events accumulated by reference.py's
`accumulate` (streamscope's reading in a few lines)."""

from __future__ import annotations

from typing import Any

from ...core.calls import Call
from ...core.frames import parse_payload
from ..base import Fixture
from ..typed import events_template
from . import reference

TEMPLATE = events_template(
    "anthropic.Anthropic",
    "in recent releases",
    "client.messages.create(stream=True)",
    """anthropic.Anthropic(
        api_key="sk-ant-fixture",
        base_url="http://streamscope.invalid",
        http_client=http.Client(transport=http.MockTransport(handler)),
        max_retries=0,
    )""",
    """def test_the_calls_streamscope_assembled():
    stream = _client().messages.create(
        model="fixture",
        max_tokens=1024,
        messages=[{"role": "user", "content": "replay"}],
        stream=True,
    )
    events = [_as_dict(event) for event in stream]
    assert accumulate(events) == EXPECTED
""",
)


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """What the SDK's stream hands the test: named events whose data is a JSON object,
    no `error` event (the SDK raises on it) and no `ping` (it skips them)."""
    return [
        (name, data)
        for name, data in frames
        if name not in (None, "ping", "error") and isinstance(parse_payload(data), dict)
    ]


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    ({name!r}, {data!r}),\n" for name, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    return [parse_payload(data) for _, data in frames]


def expected(call: Call) -> dict[Any, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


# the stream helper the anthropic-sdk strategy emulates (MessageStream): the module reads
# create(stream=True), without it
HELPER = "client.messages.stream() (or client.beta.messages.stream())"

FIXTURE = Fixture(TEMPLATE, served, literal, events, reference.source, expected, helper=HELPER)
