"""An agent on the real openai SDK that runs several conversations in one process, as an
evaluation batch does: each streams, runs the call it gets, and sends the result back.

`python -m tests.conversation_agent interleave N [--tag T] [--swap K]`: N conversations
(questions "T question k"), taken in turns: the first requests in order, the next ones in
reverse (later conversations answer first), and so on until each has its text answer.
`--swap K`: conversation K sends its second call back under an id of its own making (the
bug the contract catches); `--edit K`: conversation K rewrites its system prompt before
its second request (its first stream's calls then come back in another history). `python -m tests.conversation_agent break`: stream one
answer and stop reading after five chunks. Prints what it did as JSON.
"""

from __future__ import annotations

import json
import sys

from openai import OpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def turn(client: OpenAI, messages: list[dict], model: str = "conversation") -> list[dict]:
    """Stream one answer; its tool calls as the stream assembled them (by index)."""
    calls: dict[int, dict] = {}
    stream = client.chat.completions.create(
        model=model, messages=messages, tools=TOOLS, stream=True
    )
    for chunk in stream:
        for tc in chunk.choices[0].delta.tool_calls or []:
            call = calls.setdefault(
                tc.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            call["id"] = tc.id or call["id"]
            if tc.function is not None:
                call["function"]["name"] = tc.function.name or call["function"]["name"]
                call["function"]["arguments"] += tc.function.arguments or ""
    return [calls[i] for i in sorted(calls)]


def interleave(n: int, tag: str, swap: int | None, edit: int | None = None) -> dict:
    client = OpenAI()
    histories = [
        [
            {"role": "system", "content": "You answer weather questions."},
            {"role": "user", "content": f"{tag} question {k}"},
        ]
        for k in range(n)
    ]
    done: set[int] = set()
    sent: dict[int, list[str]] = {k: [] for k in range(n)}
    round_ = 0
    while len(done) < n:
        order = range(n) if round_ % 2 == 0 else reversed(range(n))
        for k in order:
            if k in done:
                continue
            if k == edit and round_ == 1:  # a client that rewrites its system prompt
                histories[k][0] = {"role": "system", "content": "You answer briefly."}
            calls = turn(client, histories[k])
            if not calls:
                done.add(k)
                continue
            if k == swap and round_ == 1:  # the bug: a "fixed" id of the client's own
                calls = [{**c, "id": f"call_client_{k}"} for c in calls]
            histories[k].append({"role": "assistant", "content": None, "tool_calls": calls})
            for c in calls:
                sent[k].append(c["id"])
                histories[k].append({"role": "tool", "tool_call_id": c["id"], "content": "15C"})
        round_ += 1
    return {"sent": sent}


def stop_early() -> dict:
    client = OpenAI()
    stream = client.chat.completions.create(
        model="conversation-long",
        messages=[{"role": "user", "content": "weather?"}],
        tools=TOOLS,
        stream=True,
    )
    read = 0
    for _ in stream:
        read += 1
        if read == 5:
            break
    stream.close()
    return {"read": read}


def main(argv: list[str]) -> None:
    if argv[0] == "break":
        print(json.dumps(stop_early()))
        return
    n = int(argv[1])
    tag = argv[argv.index("--tag") + 1] if "--tag" in argv else "conversation"
    swap = int(argv[argv.index("--swap") + 1]) if "--swap" in argv else None
    edit = int(argv[argv.index("--edit") + 1]) if "--edit" in argv else None
    print(json.dumps(interleave(n, tag, swap, edit)))


if __name__ == "__main__":
    main(sys.argv[1:])
