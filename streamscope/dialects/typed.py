"""What the dialects of typed events (Anthropic Messages, the OpenAI Responses API) share:
the first look at each frame, before its `type` decides the rest."""

from __future__ import annotations

import textwrap

import orjson

from ..core.anomalies import AnomalyLog
from ..core.frames import INVALID, Frame
from ..text import json_type, quote


def not_json(data: str) -> str:
    """Why a payload is not read as JSON, in words (nesting past the parser's limit named)."""
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if "depth limit" in str(e) or "recursion" in str(e).lower():
            return f"data {quote(data, 40)} nests deeper than 1024 levels: read as text"
    return f"data {quote(data, 60)} is not JSON"


def event_object(frame: Frame, log: AnomalyLog) -> dict | None:
    """The frame's event object; None, with the anomaly filed, when its data is not JSON or
    not an object. Bytes that are not UTF-8 are named either way."""
    n, payload = frame.number, frame.payload
    if frame.bad_utf8:
        log.add(
            "invalid-utf8",
            n,
            "the event's bytes are not valid UTF-8; the bad bytes read as U+FFFD, as SSE decoding requires",
        )
    if payload is INVALID:
        log.add("chunk-invalid-json", n, lambda: not_json(frame.data))
        return None
    if type(payload) is not dict:
        log.add(
            "event-schema-violation",
            n,
            f"the data is a JSON {json_type(payload)}, not an event object",
        )
        return None
    return payload


def events_template(sdk: str, built: str, reads: str, client: str, test: str) -> str:
    """The text of an exported pytest module that serves named events through the
    dialect's own SDK (`sdk`: the package; `built`: since when it builds on httpx2;
    `reads`: how the test reads the stream, in words; `client`: the client's constructor
    call; `test`: the test function). The result is a str.format template of Fixture's
    fields; `client` and `test` are taken as they are."""
    braces = str.maketrans({"{": "{{", "}": "}}"})
    package = sdk.split(".")[0]
    about = textwrap.fill(
        f"The events are served through a MockTransport into a real {sdk} client; the test "
        f"reads them with {reads}, accumulates the tool calls with `accumulate` (streamscope's "
        "reading, in a few lines) and asserts the calls streamscope assembled. Swap "
        "`accumulate` for your client's own to see whether it gets them right. Needs only "
        f"{package} and pytest.",
        88,
    )
    http = textwrap.fill(
        f"The HTTP package the installed {package} builds its clients with: httpx2 {built}, "
        f"httpx before. Nothing else is imported, so {package} and pytest are all this needs.",
        88,
        initial_indent="# ",
        subsequent_indent="# ",
    )
    return (
        f'''"""Regression fixture: exported by streamscope {{version}} from {{source}}{{where}}.

{{story}}
{about.translate(braces)}
"""

import importlib

import {package}

{http}
_base = next(
    (
        c.__module__.partition(".")[0]
        for c in getattr({package}, "DefaultHttpxClient", object).__mro__[1:]
        if c.__module__.partition(".")[0] in ("httpx2", "httpx")
    ),
    "httpx",
)
http = importlib.import_module(_base)

# (SSE event name, data) of every event served
EVENTS = {{frames}}

# What streamscope's robust reading assembles from these events.
EXPECTED = {{expected}}


# -- swap this for your client's accumulator ----------------------------------------------
{{reference}}

# ------------------------------------------------------------------------------------------


def _client():
    body = "".join(
        (f"event: {{{{name}}}}\\n" if name else "") + "data: " + data + "\\n\\n" for name, data in EVENTS
    ).encode()

    def handler(request):
        return http.Response(200, headers={{{{"content-type": "text/event-stream"}}}}, content=body)

'''
        + f"    return {client.translate(braces)}\n\n\n{test.translate(braces)}"
    )
