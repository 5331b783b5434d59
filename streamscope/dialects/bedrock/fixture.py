"""How an exported pytest module replays a Bedrock Converse stream: its events written
again as the AWS event stream (CRCs and all) and served on 127.0.0.1 to a real boto3
`bedrock-runtime` client, read with `converse_stream` (what `response["stream"]` yields)
and accumulated by reference.py's `accumulate` (streamscope's reading in a few lines).

EXPECTED holds each call's toolUseId, name and input as the JSON value it holds. An
exception event is served as the exception message it was: boto3 raises
EventStreamError there, and the test fails as a client built on it does (the module's
story says so).
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
    "The messages are written again as the AWS event stream and served on 127.0.0.1 to a real\n"
    "boto3 bedrock-runtime client (dummy credentials: nothing leaves the machine); the test\n"
    "reads them with converse_stream, accumulates the tool calls with `accumulate`\n"
    "(streamscope's reading, in a few lines) and asserts the calls streamscope assembled. Swap\n"
    "`accumulate` for your client's own to see whether it gets them right. Needs only boto3\n"
    "and pytest."
)

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
'''
    + _ABOUT.replace("{", "{{").replace("}", "}}")
    + '''
"""

import os
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.config import Config

# Every message served: (its :event-type, or an exception's :exception-type; its payload)
MESSAGES = {frames}

# What streamscope's robust reading assembles from these messages.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


def _message(name, payload):
    kind = "exception" if name.endswith("Exception") else "event"
    headers = b""
    for key, value in (
        (":exception-type" if kind == "exception" else ":event-type", name),
        (":content-type", "application/json"),
        (":message-type", kind),
    ):
        key, value = key.encode(), value.encode()
        headers += bytes([len(key)]) + key + b"\\x07" + struct.pack(">H", len(value)) + value
    payload = payload.encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


class _Bedrock(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b"".join(_message(name, payload) for name, payload in MESSAGES)
        self.send_response(200)
        self.send_header("content-type", "application/vnd.amazon.eventstream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def client(monkeypatch):
    # nothing of this machine's AWS set-up reaches the client: no profile, no config
    # file, no proxy for the local server
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bedrock)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield boto3.client(
            "bedrock-runtime",
            endpoint_url=f"http://127.0.0.1:{{server.server_port}}",
            region_name="us-east-1",
            aws_access_key_id="fixture",
            aws_secret_access_key="fixture",
            config=Config(retries={{"max_attempts": 1}}),
        )
    finally:
        server.shutdown()
        server.server_close()


def test_the_calls_streamscope_assembled(client):
    messages = [{{"role": "user", "content": [{{"text": "fixture"}}]}}]
    response = client.converse_stream(modelId="fixture", messages=messages)
    assert accumulate(list(response["stream"])) == EXPECTED
'''
)


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """The events served: every named one whose payload is a JSON object (botocore
    cannot read the others as events), exceptions among them."""
    return [
        (name, data)
        for name, data in frames
        if name is not None and isinstance(parse_payload(data), dict)
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
