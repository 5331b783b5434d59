"""An Anthropic Messages client on the anthropic SDK, as its users read a stream.

    python tests/conformance_clients/anthropic_messages.py

client.messages.stream(...) and get_final_message() (the SDK parses each tool_use's
input itself); the follow-up sends the assistant's content blocks as the SDK built them
and one tool_result per tool_use, by its id. Reads ANTHROPIC_BASE_URL and
ANTHROPIC_API_KEY as the SDK does; no retries.
"""

from __future__ import annotations

from typing import Any

import common
from anthropic import Anthropic

MODEL = "claude-sonnet-4-5"
TOOLS: list[Any] = [
    {"name": f["name"], "description": f["description"], "input_schema": f["parameters"]}
    for f in common.FUNCTIONS
]


def messages() -> dict[str, Any]:
    common.dummy_key("ANTHROPIC_API_KEY")
    client = Anthropic(max_retries=0)
    history: list[Any] = [{"role": "user", "content": common.QUESTION}]
    ask = {"model": MODEL, "max_tokens": 1024, "tools": TOOLS}
    with client.messages.stream(messages=history, **ask) as stream:
        message = stream.get_final_message()
    calls, results = [], []
    for block in message.content:
        if block.type != "tool_use":
            continue
        args = common.parse(block.input)
        calls.append({"id": block.id, "name": block.name, "arguments": block.input})
        results.append(
            {
                "type": "tool_result",
                "tool_use_id": block.id,
                "content": common.result(block.name, args),
            }
        )
    text = "".join(b.text for b in message.content if b.type == "text")
    if not calls:
        return {"calls": [], "answer": text}
    history += [
        {"role": "assistant", "content": message.content},  # the blocks as the SDK built them
        {"role": "user", "content": results},
    ]
    with client.messages.stream(messages=history, **ask) as stream:
        answer = stream.get_final_text()
    return {"calls": calls, "answer": answer}


if __name__ == "__main__":
    common.run({"messages": messages})
