"""A small tool-calling agent on the real anthropic SDK, the kind streamscope records.

It sends the served sample's first messages and tools, reads the answer with the SDK's
own `client.messages.stream(...)` and `get_final_message()`, runs each tool_use block it
got, sends back the assistant message as the SDK built it with one tool_result per call,
reads the second answer, and prints what it did as one JSON line. It reads
ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY like any anthropic program (`streamscope
record` sets the base URL).

    python -m streamscope.demo.anthropic_agent
"""

from __future__ import annotations

import json
import os
from typing import Any

from anthropic import Anthropic

from . import sample

MODEL = os.environ.get("AGENT_MODEL", "claude-sonnet-4-5")
REQUEST = sample.request()
TOOLS = sample.tools(REQUEST)
QUESTION: list[Any] = (
    REQUEST.get("messages", [])
    if REQUEST
    else [{"role": "user", "content": "What is the weather?"}]
)


def run_tool(name: str, arguments: object) -> str:
    return json.dumps({"tool": name, "input": arguments, "result": "ok"})


def main() -> None:
    # the SDK wants a key; a served sample asks for none
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-streamscope-demo")
    client = Anthropic(max_retries=0)
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=QUESTION, tools=TOOLS
    ) as stream:
        message = stream.get_final_message()
    calls = [b for b in message.content if b.type == "tool_use"]
    results = [
        {"type": "tool_result", "tool_use_id": b.id, "content": run_tool(b.name, b.input)}
        for b in calls
    ]
    history = [
        *QUESTION,
        {"role": "assistant", "content": [b.to_dict() for b in message.content]},
        {"role": "user", "content": results},
    ]
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=history, tools=TOOLS
    ) as stream:
        answer = stream.get_final_text() if calls else ""
    print(json.dumps({"calls": [b.to_dict() for b in calls], "answer": answer}))


if __name__ == "__main__":
    main()
