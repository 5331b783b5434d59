"""`export --format pytest` of a WebSocket session: a module that plays the session back.

A WebSocket server on 127.0.0.1 (a free port, started and stopped by the module) walks
the recorded messages in order: it waits for each client message and sends each server
message. The dialect's own SDK client (`Fixture.session`: for the Responses API
`client.beta.responses.connect()`) connects to it, sends the recorded client messages
where they were sent, receives every server message, and the test accumulates each
turn's events with the dialect's small `accumulate` and asserts the calls streamscope's
robust reading assembled, turn by turn; a second test asserts the server received the
client messages as recorded (as JSON values where they are JSON objects: the SDK writes
them anew).

Nothing from the recording is written but as a Python literal (the messages, the calls)
or through `in_docstring` (the file's name); the module is compiled before it is given.
"""

from __future__ import annotations

import ast
import json
import pprint
import textwrap

from .. import __version__
from ..dialects.base import SessionDriver
from ..dialects.sdk_dict import as_dict
from .session import Entry, Reading, View, read

_HEAD = '''"""Regression fixture: exported by streamscope {version} from {source} ({where}).

{story}
{about}
"""

import json
import threading

import {package}
import pytest
from websockets.sync.server import serve
from websockets.version import version as websockets_version

# Every message of the session played back, in order: (who sent it, its turn, its data)
SESSION = {session}

# What streamscope's robust reading assembles, turn by turn.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------
'''

_BODY = '''

def _no_constant(name):
    raise ValueError(name)


def _json(data):
    """A message's JSON object (None: it holds none), read as the SDK reads JSON."""
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _value(data):
    value = _json(data)
    return data if value is None else value


{as_dict}

def _play(websocket, received):
    """The server: each recorded client message waited for, each server message sent."""
    for sender, _, data in SESSION:
        if sender == "client":
            received.append(websocket.recv(timeout=30))
        else:
            websocket.send(data)


@pytest.fixture(scope="module")
def replayed():
    received, events = [], {{turn: [] for turn in EXPECTED}}
    with serve(
        lambda websocket: _play(websocket, received),
        "127.0.0.1",
        0,
        max_size=None,
        compression=None,
    ) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        client = {client}
        # websockets 15 and later go through a proxy the environment names: not to 127.0.0.1
        options = {{"proxy": None}} if int(websockets_version.split(".")[0]) >= 15 else {{}}
        try:
            with {connect} as connection:
                for sender, turn, data in SESSION:
                    if sender == "client":
                        event = _json(data)
                        if event is not None:
                            connection.send(event)
                        else:
                            connection.send_raw(data)
                        continue
                    event = connection.recv()
                    if turn in events:
                        events[turn].append(_as_dict(event))
        finally:
            server.shutdown()
    return events, received


def test_the_calls_streamscope_assembled(replayed):
    events, _ = replayed
    assert {{turn: accumulate(got) for turn, got in events.items()}} == EXPECTED


def test_the_server_received_the_recorded_client_messages(replayed):
    _, received = replayed
    sent = [data for sender, _, data in SESSION if sender == "client"]
    assert [_value(m) for m in received] == [_value(d) for d in sent]
'''


def pytest_module(view: View, entries: list[Entry], driver: SessionDriver, where: str) -> str:
    reading = read(view, entries)
    told = view.told
    fixture = told.fixture
    played, left_out = _played(entries, reading)
    expected = {
        t.turn: [fixture.expected(c) for c in r.tool_calls]
        for t, r in zip(reading.turns, reading.results, strict=True)
    }
    story = _story(view, reading, played, left_out, expected)
    about = textwrap.fill(
        "A WebSocket server on 127.0.0.1 (a free port) plays the session back: it waits for "
        "each client message and sends the server messages recorded after it, in order. A "
        f"real {driver.words} connects to it, sends the recorded client messages, receives "
        "every server message and accumulates each turn's tool calls with `accumulate` "
        "(streamscope's reading, in a few lines); the test asserts the calls streamscope "
        "assembled, turn by turn. Swap `accumulate` for your client's own to see whether it "
        f"gets them right. Needs {driver.needs} and pytest.",
        88,
    )
    too_deep = ValueError(
        "the session's messages or calls nest too deeply to be written as Python literals; "
        "export it as --format session or recording"
    )
    from .fixtures import in_docstring

    try:
        session = _literal(played)
        written = pprint.pformat(expected, width=96, sort_dicts=False)
        module = _HEAD.format(
            version=__version__,
            source=in_docstring(view.source.path),
            where=where,
            story=story,
            about=about,
            package=driver.package,
            session=session,
            expected=written,
            reference=fixture.reference(),
        ) + _BODY.format(
            client=driver.client.format(
                base='f"http://127.0.0.1:{port}/v1"', ws='f"ws://127.0.0.1:{port}/v1"'
            ),
            connect=driver.connect(view.exchange.info.url),
            as_dict=as_dict(driver.package),
        )
        compile(module, "<exported pytest module>", "exec")
        same = ast.literal_eval(written) == expected
    except (RecursionError, SyntaxError, MemoryError):
        raise too_deep from None
    if not same:
        raise ValueError(
            "the assembled calls hold a value with no Python literal (inf or nan); "
            "export the session as --format session or recording"
        )
    return module


Played = list[tuple[str, "int | None", "str | bytes"]]


def _played(entries: list[Entry], reading: Reading) -> tuple[Played, int]:
    """The messages a server and a client can send again as they were: each data message
    whole (a message the session's end cut, or one the framing found broken, cannot be),
    text that is UTF-8 as text; and how many were left out."""
    out: Played = []
    left = 0
    for e, turn in zip(entries, reading.placed, strict=True):
        m = e.message
        if e.control:
            continue
        if m.invalid is not None or not m.complete or m.opcode not in ("text", "binary"):
            left += 1
            continue
        if m.opcode == "binary":
            out.append((m.sender, turn, m.data))
            continue
        try:
            out.append((m.sender, turn, m.data.decode("utf-8")))
        except UnicodeDecodeError:
            left += 1
    return out, left


def _literal(played: Played) -> str:
    return "[\n" + "".join(f"    {item!r},\n" for item in played) + "]"


def _story(
    view: View, reading: Reading, played: Played, left_out: int, expected: dict[int, list]
) -> str:
    """What the module shows, in words the recording cannot change: kinds, numbers."""
    shown = []
    for t, r in zip(reading.turns, reading.results, strict=True):
        kinds = sorted({a.kind for a in r.anomalies if a.severity != "info"})
        shown.append(f"turn {t.turn}: " + (", ".join(kinds) or "no warning or error"))
    contract = sorted({f.kind for f in reading.findings if f.severity != "info"})
    if contract:
        shown.append("the session's contract: " + ", ".join(contract))
    story = "What it shows: " + ("; ".join(shown) if shown else "a session with no turn") + "."
    notes = []
    if left_out:
        notes.append(
            f"NOTE: {left_out} recorded message{'s are' if left_out > 1 else ' is'} not played "
            "back: cut by the session's end, or broken (see `streamscope inspect`)."
        )
    bad = [
        n for n, (sender, _, data) in enumerate(played, 1) if sender == "server" and not _json(data)
    ]
    if bad:
        notes.append(
            f"NOTE: message {bad[0]} of SESSION is no JSON: the SDK raises on it when it "
            "receives it; the test fails there, as a client built on it does."
        )
    scope: dict = {}
    exec(view.told.fixture.reference(), scope)
    differs = []
    for turn, want in expected.items():
        events = [json.loads(d) for s, k, d in played if s == "server" and k == turn and _json(d)]
        try:
            mine = scope["accumulate"](events)
        except Exception:  # it raises on this turn's shapes: so would the exported test
            mine = None
        if mine != want:
            differs.append(turn)
    if differs and not bad:  # never claim a green test that is not
        notes.append(
            "NOTE: the small `accumulate` below reads turn "
            + ", ".join(map(str, differs))
            + " differently from streamscope's robust reading (see `streamscope inspect` on "
            "the source); the test fails until the accumulator you put in its place "
            "assembles EXPECTED."
        )
    return "\n".join([story, *(textwrap.fill(n, 88) for n in notes)])


def _json(data: str | bytes) -> bool:
    """Whether the SDK's json.loads reads `data` (as the module's own `_json` does, an
    object or not)."""
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True
