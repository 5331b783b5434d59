"""A Chat Completions client on the openai SDK, three ways its users read a stream.

    python tests/conformance_clients/openai_chat.py [helper|create|naive]

helper: client.chat.completions.stream(...) and get_final_completion(), the SDK's own
accumulator (streamscope's `openai-sdk` strategy); the follow-up sends the SDK's message
back as it built it. create: create(stream=True), calls keyed by index, id, name and type
from non-empty values, arguments concatenated (streamscope's `guarded`). naive: a raw
httpx POST and a hand SSE parse, calls keyed by index, id, name and type overwritten
whenever the key is present (even "" or null), arguments concatenated (`naive`).

Reads OPENAI_BASE_URL and OPENAI_API_KEY as the SDK does; no retries. Function and custom
(freeform) calls alike are run by whatever name they have: a function call's arguments
go through json.loads (a failure raises), a custom call's input is taken as it is.
"""

from __future__ import annotations

import json
import os
from typing import Any

import common
import httpx
from openai import OpenAI

MODEL = "gpt-4o-mini"
TOOLS: list[Any] = [{"type": "function", "function": f} for f in common.FUNCTIONS]
QUESTION: list[Any] = [{"role": "user", "content": common.QUESTION}]


def client() -> OpenAI:
    common.dummy_key("OPENAI_API_KEY")
    return OpenAI(max_retries=0)


def tool_message(call_id: str, name: str, arguments: Any, custom: bool) -> dict[str, Any]:
    args = arguments if custom else common.parse(arguments)
    return {"role": "tool", "tool_call_id": call_id, "content": common.result(name, args)}


def helper() -> dict[str, Any]:
    openai = client()
    with openai.chat.completions.stream(model=MODEL, messages=QUESTION, tools=TOOLS) as stream:
        message = stream.get_final_completion().choices[0].message
    calls, results = [], []
    for call in message.tool_calls or []:
        if call.type == "custom":
            name, arguments = call.custom.name, call.custom.input
        else:
            name, arguments = call.function.name, call.function.arguments
        calls.append({"id": call.id, "type": call.type, "name": name, "arguments": arguments})
        results.append(tool_message(call.id, name, arguments, call.type == "custom"))
    if not calls:
        return {"calls": [], "answer": message.content or ""}
    # the message as the SDK built it, appended as its users do
    messages = [*QUESTION, message, *results]
    with openai.chat.completions.stream(model=MODEL, messages=messages, tools=TOOLS) as stream:
        answer = stream.get_final_completion().choices[0].message.content or ""
    return {"calls": calls, "answer": answer}


def _delta_function(delta: Any) -> Any:
    """The delta's function, or its custom object (an extra field the SDK keeps)."""
    return delta.function or getattr(delta, "custom", None)


def create() -> dict[str, Any]:
    openai = client()
    calls: dict[int, dict[str, Any]] = {}
    content = ""
    for chunk in openai.chat.completions.create(
        model=MODEL, messages=QUESTION, tools=TOOLS, stream=True
    ):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for d in choice.delta.tool_calls or []:
                call = calls.setdefault(
                    d.index, {"id": "", "type": "function", "name": "", "arguments": ""}
                )
                fn = _delta_function(d)
                if isinstance(fn, dict):  # custom: kept as the JSON it came in
                    name, arguments = fn.get("name"), fn.get("input")
                else:
                    name = fn.name if fn else None
                    arguments = fn.arguments if fn else None
                if d.id:
                    call["id"] = d.id
                if d.type:
                    call["type"] = d.type
                if name:
                    call["name"] = name
                if arguments:
                    call["arguments"] += arguments
    return follow_up([calls[i] for i in sorted(calls)], content, lambda m: stream_text(openai, m))


def stream_text(openai: OpenAI, messages: list[Any]) -> str:
    answer = ""
    for chunk in openai.chat.completions.create(
        model=MODEL, messages=messages, tools=TOOLS, stream=True
    ):
        for choice in chunk.choices:
            answer += choice.delta.content or ""
    return answer


def follow_up(calls: list[dict[str, Any]], content: str, send: Any) -> dict[str, Any]:
    """The assistant message of the calls the client assembled, one tool message per
    call, and the streamed answer to them."""
    if not calls:
        return {"calls": [], "answer": content}
    tool_calls = []
    for c in calls:
        kind = "custom" if c["type"] == "custom" else "function"
        body = {"name": c["name"], ("input" if kind == "custom" else "arguments"): c["arguments"]}
        tool_calls.append({"id": c["id"], "type": c["type"], kind: body})
    assistant = {"role": "assistant", "content": content or None, "tool_calls": tool_calls}
    results = [
        tool_message(c["id"], c["name"], c["arguments"], c["type"] == "custom") for c in calls
    ]
    return {"calls": calls, "answer": send([*QUESTION, assistant, *results])}


def sse(base: str, body: dict[str, Any]) -> Any:
    """POST a streamed request and yield each `data:` event's JSON, by hand."""
    headers = {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
    with (
        httpx.Client(timeout=60) as http,
        http.stream("POST", f"{base}/chat/completions", json=body, headers=headers) as response,
    ):
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("data:"):
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                yield json.loads(data)


def naive() -> dict[str, Any]:
    common.dummy_key("OPENAI_API_KEY")
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    calls: dict[Any, dict[str, Any]] = {}
    content = ""
    request = {"model": MODEL, "messages": QUESTION, "tools": TOOLS, "stream": True}
    for chunk in sse(base, request):
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content += delta.get("content") or ""
            for d in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    d.get("index"), {"id": "", "type": None, "name": "", "arguments": ""}
                )
                fn = d.get("function") or d.get("custom") or {}
                if "id" in d:
                    call["id"] = d["id"]
                if "type" in d:
                    call["type"] = d["type"]
                if "name" in fn:
                    call["name"] = fn["name"]
                call["arguments"] += fn.get("arguments") or fn.get("input") or ""
    assembled = list(calls.values())

    def send(messages: list[Any]) -> str:
        answer = ""
        for chunk in sse(
            base, {"model": MODEL, "messages": messages, "tools": TOOLS, "stream": True}
        ):
            for choice in chunk.get("choices") or []:
                answer += (choice.get("delta") or {}).get("content") or ""
        return answer

    return follow_up(assembled, content, send)


if __name__ == "__main__":
    common.run({"helper": helper, "create": create, "naive": naive})
