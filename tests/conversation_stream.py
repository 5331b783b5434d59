"""Chat Completions answers for many conversations at once (the stand-in's model
"conversation"): each conversation gets call ids of its own, so a check that compared
one conversation's calls with another's would see them differ.

A request whose history holds fewer than TURNS tool results is answered with one
`get_weather` call, its arguments in several fragments; then with text. The call id is
made from the conversation's first user message and the turn: the same conversation gets
the same ids whenever it is asked. The model "conversation-long" streams one call whose
arguments come in LONG fragments (for a client that stops reading early).
"""

from __future__ import annotations

import hashlib

import orjson

TURNS = 3
LONG = 40


def _chunk(delta: dict, finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-conv",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "conversation",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def call_id(request: dict, turn: int) -> str:
    messages = request.get("messages", [])
    first = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    return f"call_{hashlib.sha256(str(first).encode()).hexdigest()[:12]}_{turn}"


def _call(cid: str, arguments: str, pieces: int) -> list[bytes]:
    step = max(1, -(-len(arguments) // pieces))
    fragments = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    opener = {
        "role": "assistant",
        "tool_calls": [
            {
                "index": 0,
                "id": cid,
                "type": "function",
                "function": {"name": "get_weather", "arguments": ""},
            }
        ],
    }
    out = [_chunk(opener)]
    out += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}) for f in fragments]
    return [*out, _chunk({}, "tool_calls"), b"data: [DONE]\n\n"]


def events_for(request: dict) -> list[bytes]:
    turn = sum(1 for m in request.get("messages", []) if m.get("role") == "tool")
    cid = call_id(request, turn)
    if request.get("model") == "conversation-long":
        city = "Paris " * LONG
        return _call(cid, orjson.dumps({"city": city.strip()}).decode(), LONG)
    if turn < TURNS:
        return _call(cid, orjson.dumps({"city": f"city {turn}"}).decode(), 4)
    words = [_chunk({"role": "assistant", "content": "It is "}), _chunk({"content": "sunny."})]
    return [*words, _chunk({}, "stop"), b"data: [DONE]\n\n"]
