"""A Responses API client on the openai SDK, as its users read a stream.

    python tests/conformance_clients/openai_responses.py

client.responses.stream(...) and get_final_response(); the follow-up sends the output
items back as the SDK gave them (as the openai docs do: `input += response.output`) with
one function_call_output (custom_tool_call_output for a custom call) per call, in
`input`: no previous_response_id, store false. Reads OPENAI_BASE_URL and OPENAI_API_KEY
as the SDK does; no retries.
"""

from __future__ import annotations

from typing import Any

import common
from openai import OpenAI

MODEL = "gpt-5"
TOOLS: list[Any] = [{"type": "function", **f} for f in common.FUNCTIONS]


def responses() -> dict[str, Any]:
    common.dummy_key("OPENAI_API_KEY")
    openai = OpenAI(max_retries=0)
    history: list[Any] = [{"role": "user", "content": common.QUESTION}]
    with openai.responses.stream(model=MODEL, input=history, tools=TOOLS, store=False) as stream:
        response = stream.get_final_response()
    calls, results = [], []
    for item in response.output:
        if item.type == "function_call":
            args = common.parse(item.arguments)
            kind, arguments = "function_call_output", item.arguments
        elif item.type == "custom_tool_call":
            args = arguments = item.input
            kind = "custom_tool_call_output"
        else:
            continue
        calls.append(
            {"id": item.call_id, "type": item.type, "name": item.name, "arguments": arguments}
        )
        results.append(
            {"type": kind, "call_id": item.call_id, "output": common.result(item.name, args)}
        )
    if not calls:
        return {"calls": [], "answer": response.output_text}
    history += response.output  # the items as the SDK built them
    history += results
    with openai.responses.stream(model=MODEL, input=history, tools=TOOLS, store=False) as stream:
        answer = stream.get_final_response().output_text
    return {"calls": calls, "answer": answer}


if __name__ == "__main__":
    common.run({"responses": responses})
