"""A small tool-calling agent on the real openai SDK's Responses WebSocket client, the kind
streamscope records (the Codex CLI talks to the Responses API this way).

It opens one connection with `client.responses.connect()` (the base URL's WebSocket,
at the Responses path) and sends the served sample's first `response.create` fields (its
model, instructions, tools and input). Where that first one was a warm-up (`generate:
false`, as codex sends) it warms up too and continues from the warm-up's response. It
reads the typed events: a call is a completed call item at `response.output_item.done`,
a turn ends at its `response.completed`. It answers every call it got with one output
each, sent alone with `previous_response_id` (the connection holds the rest), and stops
at the first response with no call; then prints what it did as one JSON line. It reads
OPENAI_BASE_URL and OPENAI_API_KEY like any openai program (`streamscope record` sets
the base URL).

    python -m streamscope.demo.responses_ws_agent
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from openai import OpenAI

from . import sample
from .responses_agent import CALLS, output_for

MODEL = os.environ.get("AGENT_MODEL", "gpt-5.1-codex")
REQUEST = sample.request()  # a session's first client message: its first response.create
TOOLS = sample.tools(REQUEST)
INPUT = REQUEST.get("input") or "What is in this folder?"
INSTRUCTIONS = REQUEST.get("instructions")
INSTRUCTIONS = INSTRUCTIONS if isinstance(INSTRUCTIONS, str) else None
WARM_UP = REQUEST.get("generate") is False
# the events that end a turn (an `error` event ends the agent)
ENDS = ("response.completed", "response.incomplete", "response.failed")
# `serve` answers a turn it has no recording of with a recorded one: a bound, not a loop
TURNS = 8


def turn(
    connection: Any, given: object, previous: str | None, **more: Any
) -> tuple[str, list, str]:
    """One response: its id, the call items it made, its text."""
    options: dict[str, Any] = {"instructions": INSTRUCTIONS} if INSTRUCTIONS else {}
    if previous is not None:
        options["previous_response_id"] = previous
    connection.response.create(model=MODEL, input=given, tools=TOOLS, **options, **more)
    calls: list[Any] = []
    text = ""
    for received in connection:
        event: Any = received  # (read by its type, as the SDK's users read it)
        if event.type == "error":
            sys.exit(f"the Responses WebSocket said: {event.error.message}")
        if event.type == "response.output_item.done" and event.item.type in CALLS:
            calls.append(event.item)
        elif event.type == "response.output_text.delta":
            text += event.delta
        elif event.type in ENDS:
            return event.response.id, calls, text
    sys.exit("the Responses WebSocket closed before the response ended")


def main() -> None:
    # the SDK wants a key; a served sample asks for none
    os.environ.setdefault("OPENAI_API_KEY", "sk-streamscope-demo")
    client = OpenAI(max_retries=0)
    # the WebSocket client, out of beta or still in it (openai 3.57 has both)
    places = (client.responses, getattr(client.beta, "responses", None))
    responses: Any = next((r for r in places if hasattr(r, "connect")), None)
    if responses is None:  # (releases before the WebSocket mode)
        sys.exit("this openai has no Responses WebSocket client: pip install -U openai")
    first = INPUT if isinstance(INPUT, list) else [{"role": "user", "content": INPUT}]
    done: list[Any] = []
    answer = ""
    with responses.connect(max_retries=0) as connection:
        previous = turn(connection, first, None, generate=False)[0] if WARM_UP else None
        given: list[Any] = first
        for _ in range(TURNS):
            previous, calls, answer = turn(connection, given, previous)
            if not calls:
                break
            done += calls
            given = [output_for(call) for call in calls]
    print(json.dumps({"calls": [c.to_dict() for c in done], "answer": answer}))


if __name__ == "__main__":
    main()
