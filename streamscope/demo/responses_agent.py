"""A small tool-calling agent on the real openai SDK's Responses API, the kind streamscope
records.

It sends the served sample's first input, instructions and tools, reads the answer with
the SDK's own `client.responses.stream(...)` and `get_final_response()`, runs each
function or custom tool call it got, sends back the response's output items as the SDK
built them with one output per call, reads the second answer, and prints what it did as
one JSON line. It reads OPENAI_BASE_URL and OPENAI_API_KEY like any openai program
(`streamscope record` sets the base URL).

    python -m streamscope.demo.responses_agent
"""

from __future__ import annotations

import json
import os

from openai import OpenAI

from . import sample

MODEL = os.environ.get("AGENT_MODEL", "gpt-4.1")
REQUEST = sample.request()
TOOLS = sample.tools(REQUEST)
INPUT = REQUEST.get("input", "") if REQUEST else "What is the weather?"
INSTRUCTIONS = REQUEST.get("instructions")
INSTRUCTIONS = INSTRUCTIONS if isinstance(INSTRUCTIONS, str) else None
CALLS = ("function_call", "custom_tool_call")


def run_tool(name: str, arguments: object) -> str:
    return json.dumps({"tool": name, "input": arguments, "result": "ok"})


def output_for(call) -> dict:
    if call.type == "custom_tool_call":
        result = run_tool(call.name, call.input)
        return {"type": "custom_tool_call_output", "call_id": call.call_id, "output": result}
    result = run_tool(call.name, call.arguments)
    return {"type": "function_call_output", "call_id": call.call_id, "output": result}


def ask(client: OpenAI, given: object):
    options = {"instructions": INSTRUCTIONS} if INSTRUCTIONS else {}
    with client.responses.stream(model=MODEL, input=given, tools=TOOLS, **options) as stream:  # type: ignore[call-overload]
        return stream.get_final_response()


def main() -> None:
    # the SDK wants a key; a served sample asks for none
    os.environ.setdefault("OPENAI_API_KEY", "sk-streamscope-demo")
    client = OpenAI(max_retries=0)
    first = INPUT if isinstance(INPUT, list) else [{"role": "user", "content": INPUT}]
    response = ask(client, first)
    calls = [item for item in response.output if item.type in CALLS]
    # the output items as the SDK built them, less the field of its own the API refuses
    sent = [
        {k: v for k, v in item.to_dict().items() if k != "parsed_arguments"}
        for item in response.output
    ]
    answer = ""
    if calls:
        answer = ask(client, [*first, *sent, *map(output_for, calls)]).output_text
    print(json.dumps({"calls": [c.to_dict() for c in calls], "answer": answer}))


if __name__ == "__main__":
    main()
