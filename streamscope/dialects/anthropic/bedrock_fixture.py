"""How an exported pytest module replays an Anthropic Messages stream that Claude on
Amazon Bedrock sent (InvokeModelWithResponseStream, in the AWS event stream): as the
user's client met it, through a real `anthropic.AnthropicBedrock` client (which signs each
request with botocore: `anthropic[bedrock]`) on a MockTransport answering
`/model/{id}/invoke-with-response-stream` with the stream's messages written again, each
event base64 in a `chunk` message, an exception as the exception message it was; the
events accumulated by reference.py's `accumulate`, as the API's fixture (fixture.py) does.

The module carries a small encoder of its own (it may not import streamscope): each
message's prelude, typed headers and payload, both CRC32s. Its AWS credentials are dummy
ones and its base URL a `.invalid` host, so nothing can leave the machine. An exception
message is served: the SDK raises on it (as an `error` event), so the test fails there,
as a client built on it does, and the module's story says so."""

from __future__ import annotations

import uuid
from typing import Any

from ...core.frames import FrameHeader, parse_payload
from ...framing.aws_eventstream import CHUNK, JSON, is_chunk, type_number
from ..base import Framed, Messages
from ..sdk_dict import as_dict_in_template
from . import reference
from .fixture import expected

# the headers Bedrock sends on every chunk, as the module's CHUNK spells them
_CHUNK = ((":event-type", 7, CHUNK), (":content-type", 7, JSON), (":message-type", 7, "event"))

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
The messages are served as Claude on Amazon Bedrock streams them (the AWS event stream of
InvokeModelWithResponseStream: each event base64 in a `chunk` message) through a
MockTransport into a real anthropic.AnthropicBedrock client, signed with dummy AWS
credentials (nothing leaves the machine); the test reads them with
client.messages.create(stream=True), accumulates the tool calls with `accumulate`
(streamscope's reading, in a few lines) and asserts the calls streamscope assembled. Swap
`accumulate` for your client's own to see whether it gets them right. Needs only
anthropic with its bedrock extra (pip install "anthropic[bedrock]") and pytest.
"""

import base64
import importlib
import json
import os
import struct
import zlib

import anthropic
import pytest

# The HTTP package the installed anthropic builds its clients with: httpx2 in recent
# releases, httpx before. Nothing else is imported, so anthropic[bedrock] and pytest are
# all this needs.
_base = next(
    (
        c.__module__.partition(".")[0]
        for c in getattr(anthropic, "DefaultHttpxClient", object).__mro__[1:]
        if c.__module__.partition(".")[0] in ("httpx2", "httpx")
    ),
    "httpx",
)
http = importlib.import_module(_base)

# The headers of a `chunk` message: its payload is {{"bytes": the event, base64}}.
CHUNK = [(":event-type", 7, "chunk"), (":content-type", 7, "application/json"), (":message-type", 7, "event")]

# Every message served, as (its headers: name, type number, value; its payload): a chunk's
# payload here is the event it carries, any other message's is sent as it is.
MESSAGES = {frames}

# What streamscope's robust reading assembles from these events.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------

MODEL = "anthropic.claude-fixture-v1:0"
_INTEGERS = {{2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}}


def _message(headers, payload):
    """One AWS event stream message: its prelude (lengths, CRC32), its typed headers, its
    payload and the CRC32 of all of it."""
    head = b""
    for name, kind, value in headers:
        raw = name.encode()
        head += bytes([len(raw)]) + raw + bytes([kind])
        if kind in _INTEGERS:
            head += struct.pack(_INTEGERS[kind], value)
        elif kind in (6, 7):
            value = value.encode() if isinstance(value, str) else value
            head += struct.pack(">H", len(value)) + value
        elif kind == 9:  # a uuid's 16 bytes
            head += value
    prelude = struct.pack(">II", 16 + len(head) + len(payload), len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _is_chunk(headers):
    said = {{name: value for name, _, value in headers}}
    return said.get(":event-type") == "chunk" and said.get(":message-type", "event") == "event"


def _messages():
    for headers, payload in MESSAGES:
        data = payload.encode("utf-8", "surrogatepass")
        if _is_chunk(headers):
            data = json.dumps({{"bytes": base64.b64encode(data).decode()}}).encode()
        yield _message(headers, data)


@pytest.fixture
def aws(monkeypatch):
    """Dummy credentials and region, and no AWS profile, file or token of the machine's."""
    for name, value in {{
        "AWS_ACCESS_KEY_ID": "AKIDSTREAMSCOPEFIXTURE",
        "AWS_SECRET_ACCESS_KEY": "fixture-not-a-secret",
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN",
                 "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _client():
    def handler(request):
        path = request.url.path
        signed = request.headers.get("authorization", "").startswith("AWS4-HMAC-SHA256 ")
        if not (path.startswith("/model/") and path.endswith("/invoke-with-response-stream")):
            return http.Response(404, json={{"message": f"no stream at {{path}}"}})
        if not signed:
            return http.Response(403, json={{"message": "the request is not signed (SigV4)"}})
        return http.Response(
            200,
            headers={{"content-type": "application/vnd.amazon.eventstream"}},
            content=iter(list(_messages())),  # one read a message
        )

    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDSTREAMSCOPEFIXTURE",
        aws_secret_key="fixture-not-a-secret",
        aws_region="us-east-1",
        base_url="https://bedrock-runtime.us-east-1.streamscope.invalid",
        http_client=http.Client(transport=http.MockTransport(handler)),
        max_retries=0,
    )


'''
    + as_dict_in_template("anthropic")
    + """

def test_the_calls_streamscope_assembled(aws):
    stream = _client().messages.create(
        model=MODEL,
        max_tokens=1024,
        messages=[{{"role": "user", "content": "replay"}}],
        stream=True,
    )
    events = [_as_dict(event) for event in stream]
    assert accumulate(events) == EXPECTED
"""
)


def _kind(headers: tuple[FrameHeader, ...]) -> object:
    return next((h.value for h in headers if h.name == ":message-type"), None)


def _raises(headers: tuple[FrameHeader, ...]) -> bool:
    """An exception or error message: the SDK's decoder makes it an `error` event."""
    return _kind(headers) in ("exception", "error")


def served(messages: Messages) -> Messages:
    """What the SDK is served: the chunks whose event is a JSON object naming its `type`
    (those its Bedrock decoder routes; it skips the rest, and an event message that is no
    chunk), and every exception or error message (it raises on them). A frame with no
    headers is a chunk, as the framing writes it."""
    out = []
    for name, data, headers in messages:
        if _raises(headers):
            out.append((name, data, headers))
        elif not headers or is_chunk(headers):
            payload = parse_payload(data)
            if isinstance(payload, dict) and isinstance(payload.get("type"), str):
                out.append((name, data, headers))
    return out


def _header(header: FrameHeader) -> tuple[str, int, object]:
    value = header.value
    if isinstance(value, uuid.UUID):
        value = value.bytes
    kind = type_number(header)
    return (header.name, kind, None if kind in (0, 1) else value)


def literal(messages: Messages) -> str:
    lines = []
    for _, data, headers in messages:
        written = tuple(map(_header, headers))
        head = "CHUNK" if not headers or written == _CHUNK else repr(list(written))
        lines.append(f"    ({head}, {data!r}),\n")
    return "[\n" + "".join(lines) + "]"


def events(messages: Messages) -> list[Any]:
    """The events the SDK's stream yields for them: up to the first it raises on (an
    exception message, an `error` event), less the `ping`s it skips."""
    out = []
    for _, data, headers in messages:
        payload = parse_payload(data)
        if _raises(headers) or not isinstance(payload, dict) or payload.get("type") == "error":
            break
        if payload.get("type") != "ping":
            out.append(payload)
    return out


FIXTURE = Framed(served, literal, events).fixture(TEMPLATE, reference.source, expected)
