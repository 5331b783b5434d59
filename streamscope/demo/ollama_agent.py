"""A small tool-calling agent on the real `ollama` Python client, the kind streamscope records.

It sends the served sample's first messages and tools with `client.chat(..., stream=True)`,
collects every streamed line's `message.tool_calls` (the client assembles nothing itself),
runs each call, sends back the assistant message with its calls and one `tool` message per
call naming its tool (as the ollama client's own examples answer), reads the second
answer, and prints what it did as one JSON line. It reads OLLAMA_HOST like any ollama
program (`streamscope record` points it at the proxy).

    python -m streamscope.demo.ollama_agent
"""

from __future__ import annotations

import json
import os
from typing import Any

from ollama import Client, Message

from . import sample

MODEL = os.environ.get("AGENT_MODEL", "qwen3")
REQUEST = sample.request()
TOOLS = sample.tools(REQUEST)
MESSAGES: list[Any] = REQUEST.get("messages") or [
    {"role": "user", "content": "What is the weather?"}
]


def run_tool(name: str, arguments: object) -> str:
    return json.dumps({"tool": name, "input": arguments, "result": "ok"})


def main() -> None:
    client = Client()
    history = list(MESSAGES)
    content, thinking = "", ""
    calls: list[Message.ToolCall] = []
    for chunk in client.chat(model=MODEL, messages=history, tools=TOOLS or None, stream=True):
        content += chunk.message.content or ""
        thinking += chunk.message.thinking or ""
        calls.extend(chunk.message.tool_calls or [])
    answer = content
    if calls:
        assistant: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": calls}
        if thinking:
            assistant["thinking"] = thinking
        history.append(assistant)
        history += [
            {
                "role": "tool",
                "tool_name": call.function.name,
                "content": run_tool(call.function.name, dict(call.function.arguments)),
            }
            for call in calls
        ]
        answer = "".join(
            chunk.message.content or ""
            for chunk in client.chat(
                model=MODEL, messages=history, tools=TOOLS or None, stream=True
            )
        )
    done = [call.model_dump(mode="json", exclude_none=True) for call in calls]
    print(json.dumps({"calls": done, "answer": answer}))


if __name__ == "__main__":
    main()
