"""How an exported pytest module replays an OpenAI Realtime stream: its server messages
handed to a real openai `RealtimeConnection` (what `client.realtime.connect()` opens)
over a stand-in socket that gives them in order, then closes normally; the test iterates
the connection's typed events as a user does and accumulates them with reference.py's
`accumulate` (streamscope's reading in a few lines)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...core.calls import Call
from ..base import Fixture
from ..sdk_dict import as_dict_in_template
from ..typed import openai_session
from . import reference

_ABOUT = (
    "The server's messages are handed to a real openai RealtimeConnection (what\n"
    "client.realtime.connect() opens) over a stand-in socket; the test iterates its typed\n"
    "events, accumulates the function calls with `accumulate` (streamscope's reading, in a\n"
    "few lines) and asserts the calls streamscope assembled. Swap `accumulate` for your\n"
    "client's own to see whether it gets them right. Needs openai with websockets\n"
    '(pip install "openai[realtime]") and pytest.'
)

TEMPLATE = (
    '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
'''
    + _ABOUT.replace("{", "{{").replace("}", "}}")
    + '''
"""

import openai
from openai.resources.realtime.realtime import RealtimeConnection
from websockets.exceptions import ConnectionClosedOK

# Every server message of the response, as sent
MESSAGES = {frames}

# What streamscope's robust reading assembles from these messages.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


class _Socket:
    """The socket the connection reads: the recorded messages, then a normal close."""

    def __init__(self):
        self._left = [message.encode("utf-8", "surrogatepass") for message in MESSAGES]

    def recv(self, *args, decode=None, **kwargs):
        if not self._left:
            raise ConnectionClosedOK(None, None)
        message = self._left.pop(0)
        return message if decode is False else message.decode("utf-8", "surrogatepass")

    def send(self, *args, **kwargs):
        pass

    def close(self, *args, **kwargs):
        pass


'''
    + as_dict_in_template("openai")
    + """

def test_the_calls_streamscope_assembled():
    connection = RealtimeConnection(_Socket())
    events = [_as_dict(event) for event in connection]
    assert accumulate(events) == EXPECTED
"""
)


def served(frames: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """Every message: the connection hands each one on (it raises where one is no JSON)."""
    return [(None, data) for _, data in frames]


def literal(frames: list[tuple[str | None, str]]) -> str:
    return "[\n" + "".join(f"    {data!r},\n" for _, data in frames) + "]"


def events(frames: list[tuple[str | None, str]]) -> list[Any]:
    return [json.loads(data) for _, data in frames]


def expected(call: Call) -> dict[Any, Any]:
    return {
        "call_id": call.id,
        "item_id": call.item_id,
        "name": call.name,
        "arguments": call.arguments,
    }


def connect(url: str) -> str:
    """The SDK's Realtime connection, to the model the handshake's query named (the SDK
    sends it as `?model=`; a call joined by `call_id` the same way)."""
    try:
        query = parse_qs(urlsplit(url).query)
    except ValueError:
        query = {}
    named = [f"{key}={query[key][0]!r}" for key in ("model", "call_id") if query.get(key)]
    return f"client.realtime.connect({', '.join([*named, 'websocket_connection_options=options'])})"


# A session through the openai SDK's own Realtime client: `client.realtime.connect()`,
# which connects to the base URL's `/realtime` as ws://
SESSION = openai_session(connect, "openai.OpenAI client (client.realtime.connect())")

FIXTURE = Fixture(TEMPLATE, served, literal, events, reference.source, expected, SESSION)
