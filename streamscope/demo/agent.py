"""A small tool-calling agent on the real openai SDK, the kind streamscope records.

It asks for the weather in Paris, runs the tool calls the model streams back, sends
the results, and prints what it did as one JSON line. It reads OPENAI_BASE_URL and
OPENAI_API_KEY like any openai program (`streamscope record` sets the base URL); under
`streamscope demo` it declares the served sample's tools.

    python -m streamscope.demo.agent [create|async|helper|raw]

create: client.chat.completions.create(stream=True), accumulated by index (ids kept
as sent, "" never overwriting); async: the same on AsyncOpenAI; helper: the SDK's own
client.chat.completions.stream(...); raw: reads the bytes as they come and prints
their sha256 (to check that a proxy passed every byte through).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from typing import Any

from openai import AsyncOpenAI, OpenAI

from . import sample

MODEL = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
# Any: the JSON the served sample declared, not the installed openai's TypedDicts
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {prop: {"type": "string"}},
                "required": [prop],
            },
        },
    }
    for name, description, prop in (
        ("get_weather", "Current weather for a city", "city"),
        ("get_local_time", "Local time in a timezone", "timezone"),
    )
]
TOOLS = sample.tools(sample.request()) or TOOLS  # those of `streamscope demo`'s sample
QUESTION: list[Any] = [
    {"role": "user", "content": "What's the weather in Paris, and what time is it there?"}
]


def run_tool(name: str, arguments: str) -> str:
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return json.dumps({"error": "arguments are not JSON"})
    return json.dumps({"tool": name, "args": args, "result": "ok"})


def accumulate(calls: dict[int, dict], deltas) -> None:
    """Index-keyed, ids and names from non-empty values only, arguments concatenated."""
    for d in deltas or []:
        call = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
        if d.id:
            call["id"] = d.id
        if d.function and d.function.name:
            call["name"] = d.function.name
        if d.function and d.function.arguments:
            call["arguments"] += d.function.arguments


def next_messages(calls: list[dict]) -> list[Any]:
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ],
    }
    results = [
        {"role": "tool", "tool_call_id": c["id"], "content": run_tool(c["name"], c["arguments"])}
        for c in calls
    ]
    return [*QUESTION, assistant, *results]


def create(client: OpenAI) -> dict:
    calls: dict[int, dict] = {}
    for chunk in client.chat.completions.create(
        model=MODEL, messages=QUESTION, tools=TOOLS, stream=True
    ):
        for choice in chunk.choices:
            accumulate(calls, choice.delta.tool_calls)
    assembled = [calls[i] for i in sorted(calls)]
    answer = ""
    for chunk in client.chat.completions.create(
        model=MODEL, messages=next_messages(assembled), tools=TOOLS, stream=True
    ):
        for choice in chunk.choices:
            answer += choice.delta.content or ""
    return {"calls": assembled, "answer": answer}


async def create_async(client: AsyncOpenAI) -> dict:
    calls: dict[int, dict] = {}
    stream = await client.chat.completions.create(
        model=MODEL, messages=QUESTION, tools=TOOLS, stream=True
    )
    async for chunk in stream:
        for choice in chunk.choices:
            accumulate(calls, choice.delta.tool_calls)
    assembled = [calls[i] for i in sorted(calls)]
    answer = ""
    stream = await client.chat.completions.create(
        model=MODEL, messages=next_messages(assembled), tools=TOOLS, stream=True
    )
    async for chunk in stream:
        for choice in chunk.choices:
            answer += choice.delta.content or ""
    return {"calls": assembled, "answer": answer}


def helper(client: OpenAI) -> dict:
    with client.chat.completions.stream(model=MODEL, messages=QUESTION, tools=TOOLS) as stream:
        final = stream.get_final_completion()
    assembled = [
        {"id": t.id, "name": t.function.name, "arguments": t.function.arguments}
        for t in final.choices[0].message.tool_calls or []
    ]
    with client.chat.completions.stream(
        model=MODEL, messages=next_messages(assembled), tools=TOOLS
    ) as stream:
        answer = stream.get_final_completion().choices[0].message.content or ""
    return {"calls": assembled, "answer": answer}


def raw(client: OpenAI) -> dict:
    digests = []
    calls: dict[int, dict] = {}
    for messages in (QUESTION, None):
        if messages is None:
            messages = next_messages([calls[i] for i in sorted(calls)])
        with client.chat.completions.with_streaming_response.create(
            model=MODEL, messages=messages, tools=TOOLS, stream=True
        ) as response:
            body = b"".join(response.iter_bytes())
        digests.append(hashlib.sha256(body).hexdigest())
        for event in body.split(b"\n\n"):
            if event.startswith(b"data: {"):
                from openai.types.chat import ChatCompletionChunk

                chunk = ChatCompletionChunk.model_validate_json(event[6:])
                for choice in chunk.choices:
                    accumulate(calls, choice.delta.tool_calls)
    return {"calls": [calls[i] for i in sorted(calls)], "sha256": digests}


def main() -> None:
    # the SDK wants a key; a served sample asks for none
    os.environ.setdefault("OPENAI_API_KEY", "sk-streamscope-demo")
    mode = sys.argv[1] if len(sys.argv) > 1 else "create"
    if mode == "async":
        result = asyncio.run(create_async(AsyncOpenAI()))
    else:
        result = {"create": create, "helper": helper, "raw": raw}[mode](OpenAI())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
