"""A Chat Completions client on litellm, as its users read a stream.

    python tests/conformance_clients/litellm_chat.py

litellm.completion(model="openai/...", api_base=$OPENAI_BASE_URL, stream=True), the
chunks joined by litellm.stream_chunk_builder; the follow-up sends the message it built
and one tool message per call. litellm reads its model cost map from the package, never
the network (LITELLM_LOCAL_MODEL_COST_MAP), sends no telemetry, and says nothing; no
retries.
"""

from __future__ import annotations

import os
from typing import Any

import common

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported
import litellm  # noqa: E402

MODEL = "openai/gpt-4o-mini"
TOOLS: list[Any] = [{"type": "function", "function": f} for f in common.FUNCTIONS]


def completion(messages: list[Any]) -> Any:
    chunks = list(
        litellm.completion(
            model=MODEL,
            messages=messages,
            tools=TOOLS,
            stream=True,
            api_base=os.environ.get("OPENAI_BASE_URL"),
            num_retries=0,
            max_retries=0,
        )
    )
    return litellm.stream_chunk_builder(chunks, messages=messages).choices[0].message


def chat() -> dict[str, Any]:
    common.dummy_key("OPENAI_API_KEY")
    litellm.telemetry = False
    litellm.suppress_debug_info = True
    history: list[Any] = [{"role": "user", "content": common.QUESTION}]
    message = completion(history)
    calls, results = [], []
    for call in message.tool_calls or []:
        if call.type == "custom":  # freeform input, taken as it is
            name, arguments = call.custom.name, call.custom.input
            args = arguments
        else:
            name, arguments = call.function.name, call.function.arguments
            args = common.parse(arguments)
        calls.append({"id": call.id, "type": call.type, "name": name, "arguments": arguments})
        result = common.result(name or "", args)
        results.append({"role": "tool", "tool_call_id": call.id, "content": result})
    if not calls:
        return {"calls": [], "answer": message.content or ""}
    history += [message.model_dump(), *results]  # the message as litellm built it
    return {"calls": calls, "answer": completion(history).content or ""}


if __name__ == "__main__":
    common.run({"chat": chat})
