"""An Ollama client on ollama-python, as its users read a stream.

    python tests/conformance_clients/ollama_chat.py

ollama.Client().chat(stream=True) on the native /api/chat, the message.tool_calls of
each chunk collected in order; the follow-up sends the assistant message as the client
built it (its text and those calls) and one `tool` message per call, naming its tool
(tool_name: the API keys results by name). Reads OLLAMA_HOST as the client does; it
never retries.
"""

from __future__ import annotations

from typing import Any

import common
import ollama

MODEL = "qwen3"
TOOLS: list[Any] = [{"type": "function", "function": f} for f in common.FUNCTIONS]


def chat() -> dict[str, Any]:
    client = ollama.Client()
    history: list[Any] = [{"role": "user", "content": common.QUESTION}]
    tool_calls: list[ollama.Message.ToolCall] = []
    content = ""
    for chunk in client.chat(model=MODEL, messages=history, tools=TOOLS, stream=True):
        content += chunk.message.content or ""
        tool_calls += chunk.message.tool_calls or []
    if not tool_calls:
        return {"calls": [], "answer": content}
    calls, results = [], []
    for call in tool_calls:
        name, arguments = call.function.name, call.function.arguments
        calls.append({"name": name, "arguments": arguments})
        result = common.result(name, common.parse(arguments))
        results.append({"role": "tool", "tool_name": name, "content": result})
    assistant = ollama.Message(role="assistant", content=content, tool_calls=tool_calls)
    history += [assistant, *results]
    answer = ""
    for chunk in client.chat(model=MODEL, messages=history, tools=TOOLS, stream=True):
        answer += chunk.message.content or ""
    return {"calls": calls, "answer": answer}


if __name__ == "__main__":
    common.run({"chat": chat})
