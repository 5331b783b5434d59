"""Synthetic long recordings for the benchmarks (deterministic, written with the real writer)."""

from __future__ import annotations

import orjson

from streamscope.recording import RecordingWriter

TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]


def _event(delta: dict, finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764450000,
        "model": "bench-model",
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def stream_events(frames: int) -> list[bytes]:
    """One long tool call: an opener, argument fragments, a finish, [DONE]."""
    out = [
        _event(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_bench",
                        "type": "function",
                        "function": {"name": "write_file", "arguments": ""},
                    }
                ],
            }
        )
    ]
    out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": '{"text": "'}}]}))
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    for i in range(frames - 5):
        out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": words[i % 8]}}]}))
    out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    out.append(_event({}, "tool_calls"))
    out.append(b"data: [DONE]\n\n")
    return out


def write_recording(path: str, exchanges: int, frames: int) -> None:
    body = orjson.dumps(
        {
            "model": "bench-model",
            "stream": True,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "write"}],
        }
    )
    events = stream_events(frames)
    with RecordingWriter(path, overwrite=True) as w:
        t = 0
        for _ in range(exchanges):
            ex = w.new_exchange()
            w.request(ex, "POST", "http://127.0.0.1:1/v1/chat/completions", [], body, t_ns=t)
            w.response(ex, 200, [("content-type", "text/event-stream")], t_ns=t + 1000)
            for e in events:
                t += 7_000_000
                w.chunk(ex, e, t_ns=t)
            w.end(ex, "complete", t_ns=t)
