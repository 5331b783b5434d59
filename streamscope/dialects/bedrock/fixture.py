"""How an exported pytest module replays a Bedrock Converse stream: each event written
back as an event stream message, read by botocore's own `EventStream` with the
bedrock-runtime model's ConverseStream shape (what boto3's `response["stream"]` yields),
and accumulated by reference.py's `accumulate` (streamscope's reading in a few lines).

EXPECTED holds each call's toolUseId, name and input as the JSON value it holds. The
exception events are left out: botocore raises on them, before any accumulator sees a
call. (A plain module: driving a real bedrock-runtime client through a local server is
playback's, not this one's.)
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from ...core.calls import Call
from ...core.frames import INVALID, parse_payload
from ..base import Fixture
from . import reference

_ABOUT = (
    "The events are written back as AWS event stream messages and read by botocore's own\n"
    "EventStream (the bedrock-runtime ConverseStream shape, as boto3 yields them); the test\n"
    "accumulates the tool calls with `accumulate` (streamscope's reading, in a few lines) and\n"
    "asserts the calls streamscope assembled. Swap `accumulate` for your client's own to see\n"
    "whether it gets them right. Needs only botocore and pytest."
)

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
'''
    + _ABOUT.replace("{", "{{").replace("}", "}}")
    + '''
"""

import struct
import zlib

import botocore.session
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser

# (:event-type, payload) of every event served
EVENTS = {frames}

# What streamscope's robust reading assembles from these events.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


def _message(name, payload):
    headers = b""
    for key, value in ((":event-type", name), (":content-type", "application/json"),
                       (":message-type", "event")):
        raw = value.encode()
        headers += bytes([len(key)]) + key.encode() + b"\\x07" + struct.pack(">H", len(raw)) + raw
    body = payload.encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


class _Body:
    def stream(self):
        for name, payload in EVENTS:
            yield _message(name, payload)


def test_the_calls_streamscope_assembled():
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("ConverseStream").output_shape.members["stream"]
    events = list(EventStream(_Body(), shape, EventStreamJSONParser(), "ConverseStream"))
    assert accumulate(events) == EXPECTED
'''
)


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """The events botocore yields or drops (it raises on an exception, and on a payload
    that is no JSON object: those are left out)."""
    return [
        (name, data)
        for name, data in frames
        if name is not None
        and not name.endswith("Exception")
        and isinstance(parse_payload(data), dict)
    ]


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    ({name!r}, {data!r}),\n" for name, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    out = []
    for name, data in frames:
        payload = parse_payload(data)
        out.append({name: payload if payload is not INVALID else {}})
    return out


def expected(call: Call) -> dict[Any, Any]:
    args = call.arguments
    if isinstance(args, str) and args:
        with contextlib.suppress(ValueError, RecursionError):
            args = json.loads(args, parse_constant=_not_a_literal)
    return {"toolUseId": call.id, "name": call.name, "input": args}


def _not_a_literal(text: str) -> float:
    raise ValueError(text)  # NaN and Infinity have no Python literal


FIXTURE = Fixture(TEMPLATE, served, literal, events, reference.source, expected)
