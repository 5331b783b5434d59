"""A small tool-calling agent on the real openai SDK's Realtime client, the kind streamscope
records.

It opens a session with `client.realtime.connect(model=...)` (the base URL's WebSocket,
`.../v1/realtime?model=...`), declares its tools in `session.update`, asks its question
with `conversation.item.create` and `response.create`, and reads the typed events as the
openai-agents SDK does: a call is a completed `function_call` item at
`response.output_item.done`. At each `response.done` it answers every call it got with a
`function_call_output` of its `call_id`, asks for the next response, and stops at the
first response with no call; then prints what it did as one JSON line. It reads
OPENAI_BASE_URL and OPENAI_API_KEY like any openai program (`streamscope record` sets the
base URL); a handshake carries no body, so it asks its own question.

    python -m streamscope.demo.realtime_agent
"""

from __future__ import annotations

import json
import os
from typing import Any

from openai import OpenAI

MODEL = os.environ.get("AGENT_MODEL", "gpt-realtime")
QUESTION = "What's the weather in Paris, and what time is it there?"
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "type": "function",
        "name": "get_local_time",
        "description": "Current local time in an IANA time zone.",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
    },
]
ITEM_EVENTS = ("response.output_item.added", "response.output_item.done")


def run_tool(name: str, arguments: str) -> str:
    return json.dumps({"tool": name, "input": arguments, "result": "ok"})


def main() -> None:
    # the SDK wants a key; a served sample asks for none
    os.environ.setdefault("OPENAI_API_KEY", "sk-streamscope-demo")
    client = OpenAI(max_retries=0)
    calls: list[dict[str, Any]] = []
    answer = ""
    with client.realtime.connect(model=MODEL) as connection:
        connection.session.update(
            session={
                "type": "realtime",
                "model": MODEL,
                "output_modalities": ["text"],
                "tools": TOOLS,
            }
        )
        connection.conversation.item.create(
            item={
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": QUESTION}],
            }
        )
        connection.response.create()
        pending: list[Any] = []
        for received in connection:
            event: Any = received  # (read by its type, as the SDK's users read it)
            if event.type in ITEM_EVENTS:
                item = event.item
                if item.type == "function_call" and item.status == "completed":
                    pending.append(item)
                    calls.append(
                        {"call_id": item.call_id, "name": item.name, "arguments": item.arguments}
                    )
            elif event.type == "response.output_text.delta":
                answer += event.delta
            elif event.type == "response.done":
                if not pending:
                    break
                for item in pending:
                    output = run_tool(item.name or "", item.arguments or "")
                    connection.conversation.item.create(
                        item={
                            "type": "function_call_output",
                            "call_id": item.call_id or "",
                            "output": output,
                        }
                    )
                pending = []
                connection.response.create()
    print(json.dumps({"calls": calls, "answer": answer}))


if __name__ == "__main__":
    main()
