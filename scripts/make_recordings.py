"""Write the constructed sample recordings into recordings/ (see recordings/README.md).

    .venv/bin/python scripts/make_recordings.py

Every sample is CONSTRUCTED, not captured: the chunk shapes reproduce what public
reports say a provider sends (the README cites them), the rest (ids, texts, timings)
is made up. Each `.jsonl` recording holds a whole two-turn exchange, so the round-trip
contract is checked on it too:

1. the agent's request (system/user messages and tools), the provider's SSE stream of
   tool calls;
2. the agent's next request carrying back the assistant message with the calls as a
   CORRECT client assembles them (ids exactly as sent, "" where none was sent), one
   tool message per call, and a short text answer streamed back.

Reads are cut the way a socket hands them over: mostly one SSE event per read, a few
reads holding two events, and at least one event split across two reads. Timings come
from a random generator with a fixed seed per file; the header's `created`, the chunks'
`created` and all ids are fixed. So the output is the same on every run, and every run
rewrites the files.

Two more inputs show the other forms `inspect` reads: `gemini-no-index.sse` (a raw SSE
body as `curl -N` saves it) and `deepseek-cumulative.chunks.jsonl` (JSON Lines of
chat.completion.chunk objects).
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from streamscope.dialects.chat.appendix_a import calls, tc
from streamscope.recording.writer import RecordingWriter

OUT = Path(__file__).resolve().parents[1] / "recordings"
CREATED = "2026-11-30T09:00:00.000000Z"  # the recordings' header
EPOCH = 1796029200  # the same moment as Unix seconds, for the chunks' "created"
ARGV = ["python", "scripts/make_recordings.py"]
MS = 1_000_000
FAKE_KEY = "Bearer sk-sample-0000-not-a-real-key"  # the writer redacts it anyway
DONE = "[DONE]"

Chunk = dict[str, Any]
Maker = Callable[..., Chunk]


def _dumps(obj: object) -> str:
    """Compact JSON with raw UTF-8, the way most servers write it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# -- request pieces


def tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    params = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": params},
    }


WEATHER = tool(
    "get_weather",
    "Current weather for a city.",
    {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    ["city"],
)
LOCAL_TIME = tool(
    "get_local_time",
    "Current local time in an IANA time zone.",
    {"timezone": {"type": "string", "description": "IANA zone, e.g. Europe/Paris"}},
    ["timezone"],
)
FORECAST = tool(
    "get_forecast",
    "Daily weather forecast for a city.",
    {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 15},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    ["city", "days"],
)
LOCATION_WEATHER = tool(
    "get_weather",
    "Current weather at a location.",
    {
        "location": {"type": "string", "description": "City and region, e.g. Hangzhou, Zhejiang"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    ["location"],
)
GREP = tool(
    "grep",
    "Search files for a regular expression.",
    {
        "pattern": {"type": "string", "description": "A regular expression"},
        "path": {"type": "string", "description": "Directory to search"},
    },
    ["pattern"],
)
READ_FILE = tool(
    "read_file",
    "Read a text file of the workspace.",
    {"path": {"type": "string", "description": "Path relative to the workspace root"}},
    ["path"],
)
STOCK = tool(
    "get_stock_price",
    "Latest trade price of a stock.",
    {"ticker": {"type": "string"}, "currency": {"type": "string", "enum": ["USD", "EUR"]}},
    ["ticker"],
)
SEARCH = tool(
    "search_web",
    "Search the web and return the top results.",
    {"query": {"type": "string"}, "max_results": {"type": "integer", "minimum": 1}},
    ["query"],
)
CONVERT = tool(
    "convert_currency",
    "Convert an amount between currencies at today's rate.",
    {
        "amount": {"type": "number"},
        "from": {"type": "string", "description": "ISO 4217 code"},
        "to": {"type": "string", "description": "ISO 4217 code"},
    },
    ["amount", "from", "to"],
)

SYSTEM = {"role": "system", "content": "You are a helpful assistant. Use the tools when needed."}
CODER = {
    "role": "system",
    "content": "You are a coding agent working in the user's repository. Prefer tools to guessing.",
}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def call(id: str, name: str, arguments: str) -> dict:
    """One tool call of the assistant message the agent sends back."""
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


# -- chunk envelopes, one per provider (key order and extra fields as each sends them)


def openai_env(cid: str, model: str = "gpt-4o-mini-2024-07-18", fp: str = "fp_560af6e559") -> Maker:
    def mk(delta: dict, finish: str | None = None) -> Chunk:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": EPOCH,
            "model": model,
            "service_tier": "default",
            "system_fingerprint": fp,
            "choices": [choice],
        }

    return mk


def dashscope_env(cid: str, model: str) -> Maker:
    """DashScope compatible-mode, as in vercel/ai's alibaba fixture."""

    def mk(delta: dict, finish: str | None = None, bare: bool = False) -> Chunk:
        if bare:  # the fixture's trailing delta: no finish_reason, no logprobs
            choice: dict = {"delta": delta, "index": 0}
        else:
            choice = {"delta": delta, "finish_reason": finish, "index": 0, "logprobs": None}
        return {
            "choices": [choice],
            "object": "chat.completion.chunk",
            "usage": None,
            "created": EPOCH,
            "system_fingerprint": None,
            "model": model,
            "id": cid,
        }

    return mk


def dashscope_usage(cid: str, model: str, prompt: int, completion: int) -> Chunk:
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    return {
        "choices": [],
        "object": "chat.completion.chunk",
        "usage": usage,
        "created": EPOCH,
        "system_fingerprint": None,
        "model": model,
        "id": cid,
    }


def llamacpp_env(cid: str, model: str = "qwen2.5-coder-7b-instruct-q4_k_m.gguf") -> Maker:
    def mk(delta: dict, finish: str | None = None, timings: dict | None = None) -> Chunk:
        out: Chunk = {
            "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
            "created": EPOCH,
            "id": cid,
            "model": model,
            "system_fingerprint": "b6423-2c1d6d8b",
            "object": "chat.completion.chunk",
        }
        if timings is not None:
            out["timings"] = timings
        return out

    return mk


def ollama_env(cid: str, model: str) -> Maker:
    def mk(delta: dict, finish: str | None = None) -> Chunk:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": EPOCH,
            "model": model,
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return mk


def vllm_env(cid: str, model: str = "Qwen/Qwen2.5-7B-Instruct") -> Maker:
    def mk(delta: dict, finish: str | None = None) -> Chunk:
        choice: dict = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        if finish is not None:
            choice["stop_reason"] = None
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": EPOCH,
            "model": model,
            "choices": [choice],
        }

    return mk


def vllm_usage(
    cid: str, prompt: int, completion: int, model: str = "Qwen/Qwen2.5-7B-Instruct"
) -> Chunk:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": EPOCH,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "completion_tokens": completion,
        },
    }


def fireworks_env(
    cid: str, model: str = "accounts/fireworks/models/llama-v3p1-70b-instruct"
) -> Maker:
    def mk(delta: dict, finish: str | None = None, usage: dict | None = None) -> Chunk:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": EPOCH,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": usage,
        }

    return mk


def plain_env(cid: str, model: str) -> Maker:
    """The bare OpenAI shape (gateways that translate another API into Chat Completions)."""

    def mk(delta: dict, finish: str | None = None) -> Chunk:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": EPOCH,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return mk


def litellm_env(cid: str, model: str = "gpt-4o") -> Maker:
    def mk(delta: dict, finish: str | None = None) -> Chunk:
        return {
            "id": cid,
            "created": EPOCH,
            "model": model,
            "object": "chat.completion.chunk",
            "system_fingerprint": "fp_b705f0c291",
            "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
        }

    return mk


def text_stream(
    mk: Maker,
    text: str,
    *,
    opener: dict | None = None,
    every: dict | None = None,
    finish_delta: dict | None = None,
) -> list[Chunk]:
    """A plain text answer: an opener (role), word-sized content deltas, finish "stop".

    `every` is merged into every delta (Ollama repeats role and content on each)."""
    every = every or {}
    pieces: list[str] = []
    for word in text.split(" "):
        pieces.append(word if not pieces else " " + word)
    out = [
        mk({**every, **(opener if opener is not None else {"role": "assistant", "content": ""})})
    ]
    out += [mk({**every, "content": p}) for p in pieces]
    out.append(mk({**every, **(finish_delta or {})}, "stop"))
    return out


# -- the samples


@dataclass
class Sample:
    name: str
    base: str  # the provider's OpenAI-compatible base URL
    model: str
    messages: list[dict]  # the first request's messages
    tools: list[dict]
    stream1: list  # chunk dicts, or raw payload strings ("[DONE]")
    assistant: dict  # the assistant message the agent sends back
    results: list[tuple[str, str]]  # (tool_call_id, content), in order
    stream2: list
    body_extra: dict = field(default_factory=dict)  # e.g. stream_options, max_tokens
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    split1: int | tuple[int, int] | None = None  # which event of stream 1 is cut in two
    split2: int | tuple[int, int] | None = None


def sample_openai() -> Sample:
    mk = openai_env("chatcmpl-CLq8Yt3nVb1XwR5zLm0sDf2GhJ9Pa")
    w_id, t_id = "call_Qm3xF8bVt2LcN9pR1sWd7yKe", "call_7HbZkT0uWq4eYs2mNd9LpXa1"
    first = calls(tc(0, w_id, "get_weather", "", "function"), role=True, content=None)
    first["refusal"] = None
    stream1 = [
        mk(first),
        mk(calls(tc(0, args='{"ci'))),
        mk(calls(tc(1, t_id, "get_local_time", "", "function"))),
        mk(calls(tc(0, args='ty": "Par'))),
        mk(calls(tc(1, args='{"timezone"'))),
        mk(calls(tc(0, args='is", "unit": '))),
        mk(calls(tc(1, args=': "Europe/'))),
        mk(calls(tc(0, args='"celsius"}'))),
        mk(calls(tc(1, args='Paris"}'))),
        mk({}, "tool_calls"),
        DONE,
    ]
    mk2 = openai_env("chatcmpl-CLq8aB7cXe2RtY6uIo1pAs3DfG4Hj")
    answer = "It's 14 °C and partly cloudy in Paris right now, and the local time there is 15:42."
    stream2 = text_stream(mk2, answer, opener={"role": "assistant", "content": "", "refusal": None})
    stream2.append(DONE)
    degree = next(i for i, c in enumerate(stream2) if isinstance(c, dict) and "°" in _dumps(c))
    cut = ("data: " + _dumps(stream2[degree])).encode().index("°".encode()) + 1
    return Sample(
        name="openai",
        base="https://api.openai.com/v1",
        model="gpt-4o-mini",
        messages=[
            SYSTEM,
            user("What's the weather in Paris right now, and what time is it there?"),
        ],
        tools=[WEATHER, LOCAL_TIME],
        body_extra={"parallel_tool_calls": True},
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(w_id, "get_weather", '{"city": "Paris", "unit": "celsius"}'),
                call(t_id, "get_local_time", '{"timezone": "Europe/Paris"}'),
            ],
        },
        results=[
            (w_id, '{"city": "Paris", "temp_c": 14, "conditions": "partly cloudy"}'),
            (t_id, '{"timezone": "Europe/Paris", "local_time": "15:42"}'),
        ],
        stream2=stream2,
        response_headers=[
            ("openai-organization", "user-sample"),
            ("openai-processing-ms", "182"),
            ("x-request-id", "req_4c1f9e2b7a8d4f0e9b6a3c5d2e1f0a9b"),
        ],
        split1=3,
        split2=(degree, cut),  # a read ends inside the 2-byte "°": stored as data_b64
    )


def sample_dashscope_truncated() -> Sample:
    model = "qwen-plus"
    mk = dashscope_env("chatcmpl-5d0b7f4e-8c2a-9e31-b6d4-0f7a2c9e8b13", model)
    c_id = "call_2b6e0c1f9d7a4a58b3e1c6d2"
    stream1 = [
        mk(calls(tc(0, c_id, "get_forecast", "", "function"), role=True, content=None)),
        mk(calls(tc(0, args='{"city": "Hangzhou"'), content=None)),
        mk(calls(tc(0, args=', "days": 1'), content=None)),
        mk({}, "length"),
        DONE,
    ]
    mk2 = dashscope_env("chatcmpl-a93c51e2-47d0-9b8f-8e2c-6f1d0b4a7c25", model)
    answer = "Tomorrow in Hangzhou: light rain, 17 to 22 °C."
    stream2 = [*text_stream(mk2, answer, finish_delta={"content": ""}), DONE]
    return Sample(
        name="dashscope-truncated-args",
        base="https://dashscope.aliyuncs.com/compatible-mode/v1",
        model=model,
        messages=[SYSTEM, user("Give me a 10-day forecast for Hangzhou in celsius.")],
        tools=[FORECAST],
        body_extra={"max_tokens": 24},
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            # crow's repair of '{"city": "Hangzhou", "days": 1': one "}" appended
            "tool_calls": [call(c_id, "get_forecast", '{"city": "Hangzhou", "days": 1}')],
        },
        results=[(c_id, '[{"date": "2026-12-01", "low_c": 17, "high_c": 22, "rain": true}]')],
        stream2=stream2,
        response_headers=[("x-request-id", "5d0b7f4e-8c2a-9e31-b6d4-0f7a2c9e8b13")],
        split1=1,
    )


def sample_alibaba_empty_id() -> Sample:
    model = "qwen3.8-max-preview"
    cid = "chatcmpl-8e243c57-23b3-9db2-a02e-e3c53929c368"
    mk = dashscope_env(cid, model)
    c_id = "call_eee11723464a4b9eb8cee71d"

    def cont(args: str) -> dict:
        return calls(tc(0, "", "", args, "function"), content=None)

    stream1 = [
        mk(calls(tc(0, c_id, "get_weather", "", "function"), role=True, content=None)),
        mk(cont('{"location": "Hangzhou,')),
        mk(cont(' Zhejiang", "unit": "')),
        mk(cont('celsius"}')),
        mk(
            {
                "tool_calls": [
                    {
                        "function": {"name": "", "arguments": ""},
                        "index": 0,
                        "id": "",
                        "type": "function",
                    }
                ]
            },
            bare=True,
        ),
        mk({}, "tool_calls"),
        dashscope_usage(cid, model, 295, 24),
        DONE,
    ]
    cid2 = "chatcmpl-1f6a0c2e-9d4b-9a3e-b7c1-4e8d2f0a6b59"
    mk2 = dashscope_env(cid2, model)
    answer = "It is 9 °C and overcast in Hangzhou, with a light north wind."
    stream2 = [
        *text_stream(mk2, answer, finish_delta={"content": ""}),
        dashscope_usage(cid2, model, 341, 19),
        DONE,
    ]
    return Sample(
        name="alibaba-empty-id",
        base="https://dashscope.aliyuncs.com/compatible-mode/v1",
        model=model,
        messages=[SYSTEM, user("How is the weather in Hangzhou today?")],
        tools=[LOCATION_WEATHER],
        body_extra={"stream_options": {"include_usage": True}},
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(c_id, "get_weather", '{"location": "Hangzhou, Zhejiang", "unit": "celsius"}')
            ],
        },
        results=[(c_id, '{"temp_c": 9, "conditions": "overcast", "wind": "N 12 km/h"}')],
        stream2=stream2,
        response_headers=[("x-request-id", "8e243c57-23b3-9db2-a02e-e3c53929c368")],
        split1=2,
    )


def sample_llamacpp() -> Sample:
    mk = llamacpp_env("chatcmpl-hN3kQ8vR2tW6yZ0bC4dF7gJ1mP5sX9uA")
    c_id = "call_R7kTQz2mXhV9bN4pLw8sYc3D"
    timings = {"prompt_n": 412, "prompt_ms": 183.4, "predicted_n": 21, "predicted_ms": 402.7}
    stream1 = [
        mk({"role": "assistant", "content": None}),
        mk(calls(tc(0, c_id, "grep", "{", "function"))),
        mk(calls(tc(0, args='"pattern"'))),
        mk(calls(tc(0, args=': "def load_config'))),
        mk(calls(tc(0, args='", "path": "'))),
        mk(calls(tc(0, args='src/"}'))),
        mk({}, "tool_calls", timings=timings),
        DONE,
    ]
    mk2 = llamacpp_env("chatcmpl-pL2wE9rT4yU6iO8aS0dF3gH5jK7lZ1xC")
    answer = "`load_config` is defined in src/app/config.py at line 42."
    stream2 = text_stream(mk2, answer, opener={"role": "assistant", "content": None})
    stream2[-1] = mk2(
        {},
        "stop",
        timings={"prompt_n": 96, "prompt_ms": 61.0, "predicted_n": 17, "predicted_ms": 318.2},
    )
    stream2.append(DONE)
    return Sample(
        name="llamacpp",
        base="http://127.0.0.1:8080/v1",
        model="qwen2.5-coder-7b-instruct",
        messages=[CODER, user("Where is the config loader defined? Look in src/.")],
        tools=[GREP, READ_FILE],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [call(c_id, "grep", '{"pattern": "def load_config", "path": "src/"}')],
        },
        results=[
            (c_id, "src/app/config.py:42:def load_config(path: str | None = None) -> Config:")
        ],
        stream2=stream2,
        response_headers=[("server", "llama.cpp"), ("access-control-allow-origin", "")],
        split1=3,
    )


def sample_ollama_no_ids() -> Sample:
    model = "llama3.1:8b"
    mk = ollama_env("chatcmpl-482", model)
    every = {"role": "assistant", "content": ""}
    whole = {
        "index": 0,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Lyon","unit":"celsius"}'},
    }
    stream1 = [
        mk({**every, "tool_calls": [whole]}),
        mk(every, "stop"),
        DONE,
    ]
    mk2 = ollama_env("chatcmpl-733", model)
    answer = "In Lyon it is currently 11 °C with light rain."
    stream2 = text_stream(
        mk2,
        answer,
        opener={"content": ""},
        every={"role": "assistant"},
        finish_delta={"content": ""},
    )
    stream2.append(DONE)
    return Sample(
        name="ollama-no-ids",
        base="http://localhost:11434/v1",
        model=model,
        messages=[user("What's the weather like in Lyon?")],
        tools=[WEATHER],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": "",
            "tool_calls": [call("", "get_weather", '{"city":"Lyon","unit":"celsius"}')],
        },
        results=[("", '{"city": "Lyon", "temp_c": 11, "conditions": "light rain"}')],
        stream2=stream2,
        split1=0,
    )


def sample_vllm() -> Sample:
    cid = "chatcmpl-3f9a1c7e5b2d4086a1e9c3b7d5f20468"
    mk = vllm_env(cid)
    a_id, b_id = (
        "chatcmpl-tool-9c2e4a7f1b3d45e8a6c0f2d9b7e1a354",
        "chatcmpl-tool-e1b7d3a95c2f48b0b4d6a8c1f3e5079d",
    )
    stream1 = [
        mk({"role": "assistant", "content": ""}),
        mk(
            {
                "tool_calls": [
                    {
                        "id": a_id,
                        "type": "function",
                        "index": 0,
                        "function": {"name": "get_stock_price"},
                    }
                ]
            }
        ),
        mk(calls(tc(0, args='{"ticker": "'))),
        mk(calls(tc(0, args="NVDA"))),
        mk(calls(tc(0, args='", "currency": "'))),
        mk(calls(tc(0, args='USD"}'))),
        mk(
            {
                "tool_calls": [
                    {
                        "id": b_id,
                        "type": "function",
                        "index": 1,
                        "function": {"name": "get_stock_price"},
                    }
                ]
            }
        ),
        mk(calls(tc(1, args='{"ticker": "'))),
        mk(calls(tc(1, args="AMD"))),
        mk(calls(tc(1, args='", "currency": "'))),
        mk(calls(tc(1, args='USD"}'))),
        mk({"content": ""}, "tool_calls"),
        vllm_usage(cid, 388, 52),
        DONE,
    ]
    cid2 = "chatcmpl-b0d2f4a6c8e04b1d9f3a5c7e9b1d3f57"
    mk2 = vllm_env(cid2)
    answer = "NVDA last traded at 181.20 USD and AMD at 164.55 USD."
    stream2 = [
        *text_stream(mk2, answer, finish_delta={"content": ""}),
        vllm_usage(cid2, 470, 22),
        DONE,
    ]
    return Sample(
        name="vllm",
        base="http://localhost:8000/v1",
        model="Qwen/Qwen2.5-7B-Instruct",
        messages=[SYSTEM, user("What are NVDA and AMD trading at?")],
        tools=[STOCK],
        body_extra={"stream_options": {"include_usage": True}},
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(a_id, "get_stock_price", '{"ticker": "NVDA", "currency": "USD"}'),
                call(b_id, "get_stock_price", '{"ticker": "AMD", "currency": "USD"}'),
            ],
        },
        results=[
            (a_id, '{"ticker": "NVDA", "price": 181.20, "currency": "USD"}'),
            (b_id, '{"ticker": "AMD", "price": 164.55, "currency": "USD"}'),
        ],
        stream2=stream2,
        response_headers=[("server", "uvicorn")],
        split1=6,
    )


def sample_ids_repeated() -> Sample:
    mk = fireworks_env("4c0e2a18-7b3f-4d9e-a1c5-6f8b2d0e9a37")
    c_id = "call_kF3wZq8nR1tY5vB0mX7cL2pD"

    def rep(args: str, **kw: Any) -> dict:
        return calls(tc(0, c_id, "search_web", args, "function"), **kw)

    usage = {"prompt_tokens": 301, "total_tokens": 334, "completion_tokens": 33}
    stream1 = [
        mk(rep("", role=True)),
        mk(rep('{"query": "')),
        mk(rep("rust 2024 edition ")),
        mk(rep('release date"')),
        mk(rep(', "max_results": 3}')),
        mk({}, "tool_calls", usage=usage),
        DONE,
    ]
    mk2 = fireworks_env("9d1b3f57-2e4a-4c6b-8d0f-1a3c5e7b9d24")
    answer = "The Rust 2024 edition shipped with Rust 1.85 on 20 February 2025."
    stream2 = text_stream(mk2, answer)
    stream2[-1] = mk2(
        {}, "stop", usage={"prompt_tokens": 402, "total_tokens": 421, "completion_tokens": 19}
    )
    stream2.append(DONE)
    return Sample(
        name="ids-repeated",
        base="https://api.fireworks.ai/inference/v1",
        model="accounts/fireworks/models/llama-v3p1-70b-instruct",
        messages=[SYSTEM, user("When was the Rust 2024 edition released?")],
        tools=[SEARCH],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(
                    c_id,
                    "search_web",
                    '{"query": "rust 2024 edition release date", "max_results": 3}',
                )
            ],
        },
        results=[
            (c_id, '[{"title": "Announcing Rust 1.85.0 and Rust 2024", "date": "2025-02-20"}]')
        ],
        stream2=stream2,
        response_headers=[("fireworks-server-processing-time", "0.412")],
        split1=2,
    )


def sample_parallel_index_0() -> Sample:
    model = "qwen3:8b"
    mk = ollama_env("chatcmpl-917", model)
    a_id, b_id = "call_y1x2xk9r", "call_n5qk0p2e"
    a = {
        "id": a_id,
        "index": 0,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Tokyo"}'},
    }
    b = {
        "id": b_id,
        "index": 0,
        "type": "function",
        "function": {"name": "get_local_time", "arguments": '{"timezone":"Asia/Tokyo"}'},
    }
    stream1 = [
        mk({"role": "assistant", "content": "", "tool_calls": [a]}),
        mk({"content": "", "tool_calls": [b]}),
        mk({"content": ""}, "tool_calls"),
        DONE,
    ]
    mk2 = ollama_env("chatcmpl-264", model)
    answer = "Tokyo: 8 °C and clear; it is 23:42 there now."
    stream2 = [*text_stream(mk2, answer), DONE]
    return Sample(
        name="parallel-index-0",
        base="http://localhost:11434/v1",
        model=model,
        messages=[user("Weather and local time in Tokyo, please.")],
        tools=[WEATHER, LOCAL_TIME],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": "",
            "tool_calls": [
                call(a_id, "get_weather", '{"city":"Tokyo"}'),
                call(b_id, "get_local_time", '{"timezone":"Asia/Tokyo"}'),
            ],
        },
        results=[
            (a_id, '{"city": "Tokyo", "temp_c": 8, "conditions": "clear"}'),
            (b_id, '{"timezone": "Asia/Tokyo", "local_time": "23:42"}'),
        ],
        stream2=stream2,
        split1=0,
    )


def sample_first_index_1() -> Sample:
    model = "claude-haiku-4-5-20251001"
    mk = plain_env("msg_01XbT7kq3LmN9vR2sW5yZ8cD", model)
    c_id = "toolu_01A9mQ3xV7bK2pL8nR4tW6yZ"
    stream1 = [
        mk({"role": "assistant"}),
        mk({"content": "I'll read"}),
        mk({"content": " the changelog."}),
        mk(calls(tc(1, c_id, "read_file", "", "function"))),
        mk(calls(tc(1, args=""))),
        mk(calls(tc(1, args='{"pa'))),
        mk(calls(tc(1, args='th": "docs/CHANGELOG.md"}'))),
        mk({}, "tool_calls"),
        DONE,
    ]
    mk2 = plain_env("msg_01HcE4rT8wQ2yU6iO0pA3sD5", model)
    answer = "The latest entry is 2.4.0: it adds streaming export and fixes two parser bugs."
    stream2 = [*text_stream(mk2, answer, opener={"role": "assistant"}), DONE]
    return Sample(
        name="first-index-1",
        base="https://gateway.example.com/v1",
        model=model,
        messages=[CODER, user("What changed in the latest release? See docs/CHANGELOG.md.")],
        tools=[READ_FILE],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": "I'll read the changelog.",
            "tool_calls": [call(c_id, "read_file", '{"path": "docs/CHANGELOG.md"}')],
        },
        results=[(c_id, "## 2.4.0\n- streaming export\n- fix: two parser bugs\n")],
        stream2=stream2,
        split1=5,
    )


def sample_name_fragments() -> Sample:
    model = "gemini-2.5-flash"
    mk = plain_env("chatcmpl-gw-6b1d9e3f0a2c", model)
    c_id = "call_Ht4nW8cQ2zR6mK0vB3xJ7pLs"
    stream1 = [
        mk(calls(tc(0, c_id, "get_", "", "function"), role=True)),
        mk(calls(tc(0, name="weather", args='{"city": '))),
        mk(calls(tc(0, args='"Oslo", "unit"'))),
        mk(calls(tc(0, args=': "celsius"}'))),
        mk({}, "tool_calls"),
        DONE,
    ]
    mk2 = plain_env("chatcmpl-gw-0e7c2a9b4d1f", model)
    answer = "Oslo is at -3 °C with light snow."
    stream2 = [*text_stream(mk2, answer), DONE]
    return Sample(
        name="name-fragments",
        base="https://gateway.example.com/v1",
        model=model,
        messages=[SYSTEM, user("Is it snowing in Oslo?")],
        tools=[WEATHER],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [call(c_id, "get_weather", '{"city": "Oslo", "unit": "celsius"}')],
        },
        results=[(c_id, '{"city": "Oslo", "temp_c": -3, "conditions": "light snow"}')],
        stream2=stream2,
        split1=1,
    )


def sample_args_resent() -> Sample:
    mk = litellm_env("chatcmpl-6a2f8d0c-4e1b-47a9-9c3d-5b7e0f2a8d14")
    c_id = "call_Vb5nM1xK9qT3wZ7rY2cF6hJd"
    full = '{"amount": 250, "from": "EUR", "to": "JPY"}'
    stream1 = [
        mk(calls(tc(0, c_id, "convert_currency", "", "function"), role=True, content=None)),
        mk(calls(tc(0, args='{"amount": 250, ', type="function"))),
        mk(calls(tc(0, args='"from": "EUR", ', type="function"))),
        mk(calls(tc(0, args='"to": "JPY"}', type="function"))),
        mk(calls(tc(0, c_id, "convert_currency", full, "function"))),
        mk({}, "tool_calls"),
        DONE,
    ]
    mk2 = litellm_env("chatcmpl-0d4b6f8a-2c1e-4a3b-8f5d-7e9a1c3b5d26")
    answer = "250 EUR is about 40,125 JPY at today's rate."
    stream2 = [*text_stream(mk2, answer), DONE]
    return Sample(
        name="args-resent",
        base="http://localhost:4000/v1",
        model="gpt-4o",
        messages=[SYSTEM, user("How much is 250 euros in yen?")],
        tools=[CONVERT],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [call(c_id, "convert_currency", full)],
        },
        results=[(c_id, '{"amount": 40125.0, "currency": "JPY", "rate": 160.5}')],
        stream2=stream2,
        response_headers=[("x-litellm-model-id", "b3f1c2d4e5"), ("x-litellm-version", "1.110.2")],
        split1=4,
    )


def sample_buggy_agent_uuid() -> Sample:
    mk = openai_env("chatcmpl-CLqA2sD4fG6hJ8kL0zX1cV3bN5mQw")
    c_id = "call_Wd2rLk9ZxQ4mVb7TnY1sHc8E"
    invented = "6f1c9a2e-8b3d-4e7a-9c15-0d6b2f8e4a71"  # what the buggy agent sends instead
    first = calls(tc(0, c_id, "get_weather", "", "function"), role=True, content=None)
    first["refusal"] = None
    stream1 = [
        mk(first),
        mk(calls(tc(0, args='{"'))),
        mk(calls(tc(0, args="city"))),
        mk(calls(tc(0, args='":"'))),
        mk(calls(tc(0, args="Madrid"))),
        mk(calls(tc(0, args='"}'))),
        mk({}, "tool_calls"),
        DONE,
    ]
    mk2 = openai_env("chatcmpl-CLqA5tY7uI9oP1aS3dF5gH7jK9lZx")
    answer = "Madrid is sunny at 17 °C."
    stream2 = [
        *text_stream(mk2, answer, opener={"role": "assistant", "content": "", "refusal": None}),
        DONE,
    ]
    return Sample(
        name="buggy-agent-uuid",
        base="https://api.openai.com/v1",
        model="gpt-4o-mini",
        messages=[SYSTEM, user("Weather in Madrid?")],
        tools=[WEATHER],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [call(invented, "get_weather", '{"city":"Madrid"}')],
        },
        results=[(invented, '{"city": "Madrid", "temp_c": 17, "conditions": "sunny"}')],
        stream2=stream2,
        response_headers=[("x-request-id", "req_9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b")],
        split1=4,
    )


SHELL = {
    "type": "custom",
    "custom": {
        "name": "run_shell",
        "description": "Run one shell command in the workspace; the input is the command line.",
    },
}


def custom_call(index: int, id: str | None = None, **custom: str) -> dict:
    """A custom (freeform) tool-call delta: `custom: {name, input}` instead of `function`."""
    out: dict[str, Any] = {"index": index}
    if id is not None:
        out.update(id=id, type="custom")
    out["custom"] = custom
    return out


def sample_custom_tool() -> Sample:
    mk = openai_env("chatcmpl-CLqB7nV2cX4zL6kJ8hG0fD2sA4pQm", model="gpt-5-2025-08-07")
    c_id, f_id = "call_Jx4mT8qW2zN6vB0kR3yH7cLd", "call_Ps9dF1gK5nM3xZ7wQ2tV6bYe"
    command = 'grep -rn "TODO" src/ | head -20'
    first = calls(custom_call(0, c_id, name="run_shell", input=""), role=True, content=None)
    first["refusal"] = None
    stream1 = [
        mk(first),
        mk(calls(custom_call(0, input="grep -rn "))),
        mk(calls(custom_call(0, input='"TODO" src/'))),
        mk(calls(custom_call(0, input=" | head -20"))),
        mk(calls(tc(1, f_id, "read_file", "", "function"))),
        mk(calls(tc(1, args='{"path"'))),
        mk(calls(tc(1, args=': "README'))),
        mk(calls(tc(1, args='.md"}'))),
        mk({}, "tool_calls"),
        DONE,
    ]
    mk2 = openai_env("chatcmpl-CLqB9pW4dY6aM8lK0jH2gF4tB6rSn", model="gpt-5-2025-08-07")
    answer = "There are 3 TODOs in src/; the README says the parser rewrite comes first."
    stream2 = [
        *text_stream(mk2, answer, opener={"role": "assistant", "content": "", "refusal": None}),
        DONE,
    ]
    return Sample(
        name="custom-tool",
        base="https://api.openai.com/v1",
        model="gpt-5",
        messages=[CODER, user("What is left to do in src/, and what does the README say?")],
        tools=[SHELL, READ_FILE],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": c_id,
                    "type": "custom",
                    "custom": {"name": "run_shell", "input": command},
                },
                call(f_id, "read_file", '{"path": "README.md"}'),
            ],
        },
        results=[
            (
                c_id,
                "src/parse.py:12: # TODO rewrite\nsrc/cli.py:40: # TODO flags\nsrc/io.py:7: # TODO",
            ),
            (f_id, "# demo\nRoadmap: the parser rewrite comes first."),
        ],
        stream2=stream2,
        response_headers=[("x-request-id", "req_2f4e6d8c0b1a3f5e7d9c1b3a5f7e9d0c")],
        split1=5,
    )


# -- the same conversation twice: direct, and through a gateway that rewrites call ids
# (for `streamscope diff`). LiteLLM's PR #11528 made `ChatCompletionDeltaToolCall`
# synthesize an id for a delta that had none, the plausible source
# of the "id on every chunk" proxy output in BerriAI/litellm#20480: each continuation
# delta, which OpenAI sends without an id, leaves the gateway with a new one of its own.

GATEWAY_IDS = [  # made up, one per continuation delta, as a fresh uuid per delta would be
    "call_5f0c2d9e8a7b4c1d",
    "call_b3e1a6f4d2c04e9a",
    "call_9d7c3b1e5f2a48c6",
    "call_e2a4c6b8d0f14a3e",
]


def _gateway_pair(through: bool) -> Sample:
    c_id = "call_Vb8Rz2KqT5nX1mLw7cYe4PdS"
    mk = (litellm_env if through else openai_env)("chatcmpl-DkT4Wq9zXc2Lm7Rv0Bn5Hs8Ya")
    pieces = ['{"ci', 'ty": "Ber', 'lin", "unit"', ': "celsius"}']
    opener = calls(tc(0, c_id, "get_weather", "", "function"), role=True, content=None)
    stream1 = [mk(opener)]
    for n, piece in enumerate(pieces):
        if through:  # the id LiteLLM made for a delta that had none
            stream1.append(mk(calls(tc(0, GATEWAY_IDS[n], args=piece, type="function"))))
        else:
            stream1.append(mk(calls(tc(0, args=piece))))
    stream1 += [mk({}, "tool_calls"), DONE]
    mk2 = (litellm_env if through else openai_env)("chatcmpl-DkT4aN3bVf6Qw1Ep8Zr2Ju5Ki")
    answer = "It is 6 °C and clear in Berlin right now."
    stream2 = [*text_stream(mk2, answer), DONE]
    args = '{"city": "Berlin", "unit": "celsius"}'
    return Sample(
        name="gateway-litellm" if through else "gateway-direct",
        base="http://localhost:4000/v1" if through else "https://api.openai.com/v1",
        model="gpt-4o-mini",
        messages=[SYSTEM, user("What's the weather in Berlin right now?")],
        tools=[WEATHER],
        stream1=stream1,
        assistant={
            "role": "assistant",
            "content": None,
            "tool_calls": [call(c_id, "get_weather", args)],
        },
        results=[(c_id, '{"city": "Berlin", "temp_c": 6, "conditions": "clear"}')],
        stream2=stream2,
        split1=2,
    )


def sample_gateway_direct() -> Sample:
    return _gateway_pair(through=False)


def sample_gateway_litellm() -> Sample:
    return _gateway_pair(through=True)


SAMPLES = [
    sample_openai,
    sample_dashscope_truncated,
    sample_alibaba_empty_id,
    sample_llamacpp,
    sample_ollama_no_ids,
    sample_vllm,
    sample_ids_repeated,
    sample_parallel_index_0,
    sample_first_index_1,
    sample_name_fragments,
    sample_args_resent,
    sample_buggy_agent_uuid,
    sample_custom_tool,
    sample_gateway_direct,
    sample_gateway_litellm,
]


# -- Anthropic Messages (POST /v1/messages, `event:` + `data:` SSE)

ANTHROPIC_BASE = "https://api.anthropic.com"
CLAUDE = "claude-sonnet-4-5-20250929"


def claude_tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"name": name, "description": description, "input_schema": schema}


CLAUDE_WEATHER = claude_tool(
    "get_weather",
    "Current weather for a city.",
    {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    ["city"],
)
CLAUDE_REMINDERS = claude_tool("list_reminders", "The user's reminders for today.", {}, [])
CLAUDE_WRITE = claude_tool(
    "write_file",
    "Write a text file of the workspace.",
    {"path": {"type": "string"}, "lines": {"type": "array", "items": {"type": "string"}}},
    ["path", "lines"],
)


class Claude:
    """Builds one Anthropic message's events, with made-up but fixed ids and usage."""

    def __init__(self, mid: str, input_tokens: int) -> None:
        self.mid, self.input_tokens = mid, input_tokens

    def start(self) -> Chunk:
        message = {
            "id": self.mid,
            "type": "message",
            "role": "assistant",
            "model": CLAUDE,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 1},
        }
        return {"type": "message_start", "message": message}

    @staticmethod
    def text(index: int, text: str) -> list[Chunk]:
        pieces = []
        for word in text.split(" "):
            pieces.append(word if not pieces else " " + word)
        start = {"type": "content_block_start", "index": index}
        start["content_block"] = {"type": "text", "text": ""}
        deltas = [
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": p},
            }
            for p in pieces
        ]
        return [start, *deltas, {"type": "content_block_stop", "index": index}]

    @staticmethod
    def tool(
        index: int,
        tid: str,
        name: str,
        fragments: list[str],
        start_input: dict | None = None,
        stop=True,
    ) -> list[Chunk]:
        block = {"type": "tool_use", "id": tid, "name": name, "input": start_input or {}}
        out: list[Chunk] = [{"type": "content_block_start", "index": index, "content_block": block}]
        for f in fragments:
            delta = {"type": "input_json_delta", "partial_json": f}
            out.append({"type": "content_block_delta", "index": index, "delta": delta})
        if stop:
            out.append({"type": "content_block_stop", "index": index})
        return out

    @staticmethod
    def end(stop_reason: str, output_tokens: int) -> list[Chunk]:
        delta = {"stop_reason": stop_reason, "stop_sequence": None}
        return [
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
            {"type": "message_stop"},
        ]


PING = {"type": "ping"}


def tool_use(tid: str, name: str, args: dict) -> dict:
    """A tool_use block of the assistant message the agent sends back."""
    return {"type": "tool_use", "id": tid, "name": name, "input": args}


def tool_result(tid: str, content: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


@dataclass
class AnthropicSample:
    name: str
    messages: list[dict]  # the first request's messages
    tools: list[dict]
    stream1: list[Chunk]
    assistant: list[dict]  # the content blocks of the assistant message sent back
    results: list[dict]  # the content blocks of the user message that answers
    stream2: list[Chunk]
    system: str = "You are a helpful assistant. Use the tools when needed."
    max_tokens: int = 1024
    split1: int | tuple[int, int] | None = None


def anthropic_tool_use() -> AnthropicSample:
    """The API as it streams: `{}` in the start, a first fragment of "", and a tool with no
    arguments whose only fragment is "" (truthy clients fail on it, start-concat ones
    glue `{}` to the other's fragments)."""
    w_id, r_id = "toolu_01A9xKfQ2bZ7mNc4WvR8tLpY", "toolu_01Hs3JdE6kVb0qXn2TyU5wMa"
    c1 = Claude("msg_01Tq8KmZ3vR5xW2nB7cY4pLd", 612)
    stream1 = [
        c1.start(),
        *Claude.text(0, "I'll check the weather in Paris and your reminders."),
        PING,
        *Claude.tool(
            1, w_id, "get_weather", ["", '{"city": ', '"Par', 'is", "unit"', ': "celsius"}']
        ),
        *Claude.tool(2, r_id, "list_reminders", [""]),
        *Claude.end("tool_use", 87),
    ]
    c2 = Claude("msg_01Vn5PbX8cQ2rT6yH4kW9sJe", 781)
    answer = (
        "Paris is 14 °C and partly cloudy. Today you have one reminder: call the plumber at 5 pm."
    )
    stream2 = [c2.start(), *Claude.text(0, answer), *Claude.end("end_turn", 26)]
    return AnthropicSample(
        name="anthropic-tool-use",
        messages=[
            {"role": "user", "content": "What's the weather in Paris, and what's on my list today?"}
        ],
        tools=[CLAUDE_WEATHER, CLAUDE_REMINDERS],
        stream1=stream1,
        assistant=[
            {"type": "text", "text": "I'll check the weather in Paris and your reminders."},
            tool_use(w_id, "get_weather", {"city": "Paris", "unit": "celsius"}),
            tool_use(r_id, "list_reminders", {}),
        ],
        results=[
            tool_result(w_id, '{"temp_c": 14, "conditions": "partly cloudy"}'),
            tool_result(r_id, '["call the plumber at 5 pm"]'),
        ],
        stream2=stream2,
        split1=8,
    )


def anthropic_max_tokens() -> AnthropicSample:
    """`max_tokens` reached inside a tool's input: no content_block_stop, the JSON cut off.
    The agent (on the anthropic SDK, which keeps a partial parse) runs and sends back the
    salvaged input: the last line is lost without a word."""
    t_id = "toolu_01Rk7WcN2mXq5Zb8VtY3hLsD"
    c1 = Claude("msg_01Lp4GhT9xW2nV6cB8qR5mKz", 498)
    fragments = [
        "",
        '{"path": "notes/plan.md", ',
        '"lines": ["# Plan", ',
        '"1. Book the venue", ',
        '"2. Send the invit',
    ]
    stream1 = [
        c1.start(),
        *Claude.text(0, "Writing the plan to notes/plan.md."),
        *Claude.tool(1, t_id, "write_file", fragments, stop=False),
        *Claude.end("max_tokens", 64),
    ]
    c2 = Claude("msg_01Dz6YfR3kP9sM1vX7bN4wQc", 655)
    answer = "Done: notes/plan.md has the plan."
    stream2 = [c2.start(), *Claude.text(0, answer), *Claude.end("end_turn", 12)]
    salvaged = {"path": "notes/plan.md", "lines": ["# Plan", "1. Book the venue"]}
    return AnthropicSample(
        name="anthropic-max-tokens",
        messages=[{"role": "user", "content": "Write a three-step party plan to notes/plan.md."}],
        tools=[CLAUDE_WRITE],
        max_tokens=64,
        stream1=stream1,
        assistant=[
            {"type": "text", "text": "Writing the plan to notes/plan.md."},
            tool_use(t_id, "write_file", salvaged),
        ],
        results=[tool_result(t_id, "wrote 2 lines")],
        stream2=stream2,
        split1=6,
    )


def anthropic_spliced_message() -> AnthropicSample:
    """A gateway retries upstream and splices the retry's stream into the open one: a
    second message_start while the first message's tool block is open. The anthropic SDK
    keeps the first message and glues the retry's fragments onto its block (its input
    comes out garbled, the retried call with `{}`); the agent sends back what it built."""
    first, second = "toolu_01Gb8NwQ4rT2xV6mK9cZ3pHy", "toolu_01Xf2MvS7kR4nB9wL3tQ6dJa"
    c1 = Claude("msg_01Wq3RnT7bX5mK2vC9pZ4hYs", 540)
    c_retry = Claude("msg_01Ce9XtM4wP2kR7nV5bQ8zLf", 540)
    stream1 = [
        c1.start(),
        *Claude.tool(0, first, "get_weather", ["", '{"city": "Osl'], stop=False),
        c_retry.start(),
        *Claude.tool(0, second, "get_weather", ["", '{"city": "Oslo"}']),
        *Claude.end("tool_use", 41),
    ]
    c2 = Claude("msg_01Ka5QmW8rN3xT6bV2cY9pHd", 690)
    stream2 = [
        c2.start(),
        *Claude.text(0, "I could not read the weather for Oslo."),
        *Claude.end("end_turn", 11),
    ]
    return AnthropicSample(
        name="anthropic-spliced-message",
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=[CLAUDE_WEATHER],
        stream1=stream1,
        # what anthropic 2.17's MessageStream builds from stream 1, sent back as it is
        assistant=[
            tool_use(first, "get_weather", {"city": "Osl{"}),
            tool_use(second, "get_weather", {}),
        ],
        results=[
            tool_result(first, '{"error": "unknown city"}'),
            tool_result(second, '{"error": "city is required"}'),
        ],
        stream2=stream2,
        split1=3,
    )


def anthropic_start_input() -> AnthropicSample:
    """A gateway that puts the whole input in the block's start and streams it again as
    fragments: clients that glue the start's input to the fragments send it twice."""
    t_id = "toolu_01Nc4VbR8tX2mQ6wK9zH3pLs"
    c1 = Claude("msg_01Ys7KpM2wQ9xR4nT6bV3cZd", 455)
    args = {"city": "Lisbon", "unit": "celsius"}
    stream1 = [
        c1.start(),
        *Claude.tool(0, t_id, "get_weather", ['{"city": "Lisbon", ', '"unit": "celsius"}'], args),
        *Claude.end("tool_use", 33),
    ]
    c2 = Claude("msg_01Bm3ZqX6vT8kN2wR5cY9hPf", 602)
    stream2 = [
        c2.start(),
        *Claude.text(0, "Lisbon is 19 °C and sunny."),
        *Claude.end("end_turn", 10),
    ]
    return AnthropicSample(
        name="anthropic-start-input",
        messages=[{"role": "user", "content": "Weather in Lisbon?"}],
        tools=[CLAUDE_WEATHER],
        stream1=stream1,
        assistant=[tool_use(t_id, "get_weather", args)],
        results=[tool_result(t_id, '{"temp_c": 19, "conditions": "sunny"}')],
        stream2=stream2,
        split1=2,
    )


def anthropic_buggy_agent() -> AnthropicSample:
    """The stream is clean; the agent answers with a tool_use_id it made up, so the
    model cannot tell which call the result answers (the API rejects the request)."""
    t_id = "toolu_01Pz5MwK9rT3xQ7nV2bY6cLh"
    invented = "toolu_a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
    c1 = Claude("msg_01Rv8NcQ3kX6mT2wP9bZ5hYs", 470)
    stream1 = [
        c1.start(),
        *Claude.tool(0, t_id, "get_weather", ["", '{"city": "Madrid"}']),
        *Claude.end("tool_use", 29),
    ]
    c2 = Claude("msg_01Hx4WqT7vM2kR9nB5cZ3pLd", 610)
    stream2 = [c2.start(), *Claude.text(0, "Madrid is sunny at 17 °C."), *Claude.end("end_turn", 9)]
    return AnthropicSample(
        name="anthropic-buggy-agent",
        messages=[{"role": "user", "content": "Weather in Madrid?"}],
        tools=[CLAUDE_WEATHER],
        stream1=stream1,
        assistant=[tool_use(t_id, "get_weather", {"city": "Madrid"})],
        results=[tool_result(invented, '{"temp_c": 17, "conditions": "sunny"}')],
        stream2=stream2,
        split1=2,
    )


ANTHROPIC_SAMPLES = [
    anthropic_tool_use,
    anthropic_max_tokens,
    anthropic_spliced_message,
    anthropic_start_input,
    anthropic_buggy_agent,
]


def anthropic_headers(body: bytes) -> list[tuple[str, str]]:
    return [
        ("host", host(ANTHROPIC_BASE)),
        ("accept", "application/json"),
        ("content-type", "application/json"),
        ("user-agent", "Anthropic/Python 2.15.0"),
        ("x-api-key", "sk-ant-sample-0000-not-a-real-key"),  # the writer redacts it anyway
        ("anthropic-version", "2023-06-01"),
        ("content-length", str(len(body))),
    ]


def write_anthropic(s: AnthropicSample, out: Path = OUT) -> Path:
    rng = random.Random(zlib.crc32(s.name.encode()))
    path = out / f"{s.name}.jsonl"
    url = ANTHROPIC_BASE + "/v1/messages"
    body1 = {
        "model": CLAUDE,
        "max_tokens": s.max_tokens,
        "system": s.system,
        "messages": s.messages,
        "tools": s.tools,
        "stream": True,
    }
    messages2 = [
        *s.messages,
        {"role": "assistant", "content": s.assistant},
        {"role": "user", "content": s.results},
    ]
    body2 = {**body1, "messages": messages2}
    headers = [
        ("request-id", f"req_{zlib.crc32(s.name.encode()):08x}"),
        ("anthropic-organization-id", "org-sample"),
    ]
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        for body, stream, split in ((body1, s.stream1, s.split1), (body2, s.stream2, None)):
            ex = w.new_exchange()
            raw = _dumps(body).encode()
            w.request(ex, "POST", url, anthropic_headers(raw), raw, t_ns=t)
            t = stream_response(w, ex, t, stream, headers, rng, split, named=True)
            t += rng.randint(80, 900) * MS + rng.randint(0, MS - 1)  # the agent runs the tools
    return path


# -- the OpenAI Responses API (POST /v1/responses, `event:` + `data:` SSE)

OPENAI_BASE = "https://api.openai.com/v1"


def fn_tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    """A Responses API function tool (flat: no `function` wrapper)."""
    params = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "name": name, "description": description, "parameters": params}


RESP_WEATHER = fn_tool(
    "get_weather",
    "Current weather for a city.",
    {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    ["city"],
)
RESP_TIME = fn_tool(
    "get_local_time",
    "Current local time in an IANA time zone.",
    {"timezone": {"type": "string"}},
    ["timezone"],
)
RESP_SEARCH = fn_tool(
    "search_docs",
    "Search the project's documentation.",
    {"query": {"type": "string"}},
    ["query"],
)
RESP_SQL = {
    "type": "custom",
    "name": "execute_sql",
    "description": "Run one read-only SQL query against the analytics database.",
}


class Resp:
    """Builds one response's events, with made-up but fixed ids; sequence numbers and
    `obfuscation` padding are added as the API sends them."""

    def __init__(self, rid: str, model: str, pad: bool = True) -> None:
        self.rid, self.model, self.pad = rid, model, pad
        self.output: list[dict] = []  # every item as its output_item.done states it

    def response(self, status: str = "in_progress", output: list | None = None) -> dict:
        return {
            "id": self.rid,
            "object": "response",
            "created_at": EPOCH,
            "status": status,
            "model": self.model,
            "output": output or [],
            "parallel_tool_calls": True,
        }

    def start(self) -> list[Chunk]:
        return [
            {"type": "response.created", "response": self.response()},
            {"type": "response.in_progress", "response": self.response()},
        ]

    def _pad(self, text: str) -> dict:
        return {"obfuscation": "x" * (16 - len(text) % 16)} if self.pad else {}

    def call(
        self,
        index: int,
        fc: str,
        call_id: str,
        name: str,
        fragments: list[str],
        done: str | None = None,
        custom: bool = False,
        whole: str | None = None,
    ) -> tuple[list[Chunk], list[Chunk], list[Chunk]]:
        """A call item's events as (added, deltas, the .done and output_item.done), for
        streams that interleave them; `done`: what .done states (the deltas joined
        unless given), `whole`: what output_item.done and the final output state."""
        kind, field, events = (
            ("custom_tool_call", "input", "custom_tool_call_input")
            if custom
            else ("function_call", "arguments", "function_call_arguments")
        )
        joined = "".join(fragments)
        done = joined if done is None else done
        whole = joined if whole is None else whole
        item = {"id": fc, "type": kind, "status": "in_progress", field: "", "call_id": call_id}
        item["name"] = name
        added = [{"type": "response.output_item.added", "output_index": index, "item": item}]
        deltas = [
            {
                "type": f"response.{events}.delta",
                "item_id": fc,
                "output_index": index,
                "delta": f,
                **self._pad(f),
            }
            for f in fragments
        ]
        final = {**item, "status": "completed", field: whole}
        self.output.append(final)
        dones = [
            {"type": f"response.{events}.done", "item_id": fc, "output_index": index, field: done},
            {"type": "response.output_item.done", "output_index": index, "item": final},
        ]
        return added, deltas, dones

    def text(self, index: int, msg: str, text: str) -> list[Chunk]:
        item = {
            "id": msg,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        part = {"type": "output_text", "annotations": [], "text": ""}
        pieces: list[str] = []
        for word in text.split(" "):
            pieces.append(word if not pieces else " " + word)
        where = {"item_id": msg, "output_index": index, "content_index": 0}
        done_part = {**part, "text": text}
        final = {**item, "status": "completed", "content": [done_part]}
        self.output.append(final)
        return [
            {"type": "response.output_item.added", "output_index": index, "item": item},
            {"type": "response.content_part.added", **where, "part": part},
            *(
                {
                    "type": "response.output_text.delta",
                    **where,
                    "delta": p,
                    "logprobs": [],
                    **self._pad(p),
                }
                for p in pieces
            ),
            {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
            {"type": "response.content_part.done", **where, "part": done_part},
            {"type": "response.output_item.done", "output_index": index, "item": final},
        ]

    def reasoning(self, index: int, rs: str) -> list[Chunk]:
        item = {"id": rs, "type": "reasoning", "summary": []}
        self.output.append(item)
        return [
            {"type": "response.output_item.added", "output_index": index, "item": item},
            {"type": "response.output_item.done", "output_index": index, "item": item},
        ]

    def end(self, tokens: tuple[int, int], output: list | None = None) -> list[Chunk]:
        response = self.response("completed", self.output if output is None else output)
        response["usage"] = {
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "total_tokens": sum(tokens),
        }
        return [{"type": "response.completed", "response": response}]


def sequenced(events: list[Chunk]) -> list[Chunk]:
    """The events with sequence_number 0, 1, 2... in the order sent."""
    return [{"type": e["type"], "sequence_number": k, **e} for k, e in enumerate(events)]


def call_item(fc: str, call_id: str, name: str, arguments: str, custom: bool = False) -> dict:
    """A call item as the agent sends it back in `input`."""
    kind, field = ("custom_tool_call", "input") if custom else ("function_call", "arguments")
    return {"type": kind, "id": fc, "call_id": call_id, "name": name, field: arguments}


def call_output(call_id: str, output: str, custom: bool = False) -> dict:
    kind = "custom_tool_call_output" if custom else "function_call_output"
    return {"type": kind, "call_id": call_id, "output": output}


@dataclass
class ResponsesSample:
    name: str
    input: list[dict]  # the first request's input items
    tools: list[dict]
    stream1: list[Chunk]
    # the second request's input after the first's: the call items sent back (none when
    # the request continues the stored response) and their outputs
    sent_back: list[dict]
    stream2: list[Chunk]
    model: str = "gpt-4.1-2025-04-14"
    base: str = OPENAI_BASE
    instructions: str = "You are a helpful assistant. Use the tools when needed."
    previous: bool = False  # the second request names the first response (previous_response_id)
    split1: int | tuple[int, int] | None = None


def responses_done_only() -> ResponsesSample:
    """LM Studio's Responses endpoint as people report it: no argument delta at all, the
    arguments only in `.done` and `output_item.done`. The agent sits behind a bridge
    that builds calls from the deltas: it sends the call back with arguments "", and the
    tool ran with none."""
    model = "qwen/qwen3-coder-30b"
    r1 = Resp("resp_68a3f1c2e0b48190a1d5c7e9f2b4a6c8", model, pad=False)
    added, _, dones = r1.call(
        0,
        "fc_lms_0001",
        "call_lms_7f3a9c21",
        "get_weather",
        [],
        done='{"city":"Lyon","unit":"celsius"}',
        whole='{"city":"Lyon","unit":"celsius"}',
    )
    stream1 = sequenced([*r1.start(), *added, *dones, *r1.end((388, 24))])
    r2 = Resp("resp_68a3f1c9b7d08190b2e6d8fa03c5b7d9", model, pad=False)
    answer = "I need a city to look up: which one did you mean?"
    stream2 = sequenced([*r2.start(), *r2.text(0, "msg_lms_0002", answer), *r2.end((431, 15))])
    return ResponsesSample(
        name="responses-done-only",
        input=[{"role": "user", "content": "Weather in Lyon, in celsius?"}],
        tools=[RESP_WEATHER],
        stream1=stream1,
        sent_back=[
            call_item("fc_lms_0001", "call_lms_7f3a9c21", "get_weather", ""),
            call_output("call_lms_7f3a9c21", '{"error": "city is required"}'),
        ],
        stream2=stream2,
        model=model,
        base="http://localhost:1234/v1",
        split1=2,
    )


def responses_done_mismatch() -> ResponsesSample:
    """A gateway that re-emits `.done` with `arguments: ""` after streaming every delta
    (Wei-Shaw/sub2api#7272): strict clients abort ("final function-call arguments ... do not match"), those
    that trust `.done` get "". robust keeps the deltas; output_item.done agrees with
    them, and the agent (on the openai SDK) sends the call back whole."""
    r1 = Resp("resp_0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", "gpt-4.1-2025-04-14")
    args = ['{"query":', '"rate limits', " for the", ' batch API"}']
    added, deltas, dones = r1.call(
        0, "fc_0c1d2e3f4a5b6c7d01", "call_Qm8xT2vN5kR7wP3z", "search_docs", args, done=""
    )
    stream1 = sequenced([*r1.start(), *added, *deltas, *dones, *r1.end((512, 31))])
    r2 = Resp("resp_0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e60", "gpt-4.1-2025-04-14")
    answer = "The batch API allows 50,000 requests per batch and its own rate limits."
    stream2 = sequenced(
        [*r2.start(), *r2.text(0, "msg_0c1d2e3f4a5b6c7d02", answer), *r2.end((689, 19))]
    )
    return ResponsesSample(
        name="responses-done-mismatch",
        input=[{"role": "user", "content": "What are the rate limits of the batch API?"}],
        tools=[RESP_SEARCH],
        stream1=stream1,
        sent_back=[
            call_item(
                "fc_0c1d2e3f4a5b6c7d01", "call_Qm8xT2vN5kR7wP3z", "search_docs", "".join(args)
            ),
            call_output(
                "call_Qm8xT2vN5kR7wP3z",
                '["Batch API: 50,000 requests per batch", "Batch API rate limits"]',
            ),
        ],
        stream2=stream2,
        base="https://gateway.example.com/openai/v1",
        split1=5,
    )


def responses_interleaved() -> ResponsesSample:
    """Three parallel function_call items whose deltas interleave (llama.cpp's
    /v1/responses). The agent routes every delta to the item added last
    (can1357/oh-my-pi#1880): the first two calls go back with "" and the third with all
    three calls' text."""
    model = "Qwen3-30B-A3B-Instruct"
    r1 = Resp("resp_llama_7b1c2d3e", model, pad=False)
    parts = [
        r1.call(0, "fc_llama_0", "call_llama_0", "get_weather", ['{"city":', '"Paris"}']),
        r1.call(1, "fc_llama_1", "call_llama_1", "get_weather", ['{"city":', '"Tokyo"}']),
        r1.call(
            2, "fc_llama_2", "call_llama_2", "get_local_time", ['{"timezone":', '"Asia/Tokyo"}']
        ),
    ]
    events = [*r1.start()]
    for added, _, _ in parts:
        events += added
    for k in range(2):  # deltas round-robin, as the server decodes the calls side by side
        events += [deltas[k] for _, deltas, _ in parts]
    for _, _, dones in parts:
        events += dones
    stream1 = sequenced([*events, *r1.end((402, 58))])
    r2 = Resp("resp_llama_8c2d3e4f", model, pad=False)
    answer = "Tokyo is 9 pm and clear; I could not read the weather for Paris."
    stream2 = sequenced([*r2.start(), *r2.text(0, "msg_llama_1", answer), *r2.end((560, 21))])
    mixed = '{"city":{"city":{"timezone":"Paris"}"Tokyo"}"Asia/Tokyo"}'
    return ResponsesSample(
        name="responses-interleaved",
        input=[{"role": "user", "content": "Weather in Paris and Tokyo, and the time in Tokyo?"}],
        tools=[RESP_WEATHER, RESP_TIME],
        stream1=stream1,
        sent_back=[
            call_item("fc_llama_0", "call_llama_0", "get_weather", ""),
            call_item("fc_llama_1", "call_llama_1", "get_weather", ""),
            call_item("fc_llama_2", "call_llama_2", "get_local_time", mixed),
            call_output("call_llama_0", '{"error": "city is required"}'),
            call_output("call_llama_1", '{"error": "city is required"}'),
            call_output("call_llama_2", '{"time": "21:04", "timezone": "Asia/Tokyo"}'),
        ],
        stream2=stream2,
        model=model,
        base="http://127.0.0.1:8080/v1",
        split1=(9, 14),
    )


def responses_parallel_wrapper() -> ResponsesSample:
    """The model invents one `multi_tool_use.parallel` call that wraps the real ones in
    `tool_uses[]`. The agent (like the AI SDK) unwraps it and makes up an id per wrapped
    call: the ids it sends back are not the one the stream carried."""
    r1 = Resp("resp_6f5e4d3c2b1a09f8e7d6c5b4a3928170", "gpt-4o-2024-08-06")
    wrapped = (
        '{"tool_uses":[{"recipient_name":"functions.get_weather","parameters":{"city":"Rome"}},'
        '{"recipient_name":"functions.get_local_time","parameters":{"timezone":"Europe/Rome"}}]}'
    )
    pieces = [wrapped[i : i + 24] for i in range(0, len(wrapped), 24)]
    added, deltas, dones = r1.call(
        0, "fc_6f5e4d3c2b1a0901", "call_Zr4nB8wQ2mX6tK9v", "multi_tool_use.parallel", pieces
    )
    stream1 = sequenced([*r1.start(), *added, *deltas, *dones, *r1.end((455, 52))])
    r2 = Resp("resp_6f5e4d3c2b1a09f8e7d6c5b4a3928171", "gpt-4o-2024-08-06")
    answer = "Rome is 18 °C and sunny, and it is 3:10 pm there."
    stream2 = sequenced(
        [*r2.start(), *r2.text(0, "msg_6f5e4d3c2b1a0902", answer), *r2.end((633, 17))]
    )
    return ResponsesSample(
        name="responses-parallel-wrapper",
        input=[{"role": "user", "content": "Weather and local time in Rome?"}],
        tools=[RESP_WEATHER, RESP_TIME],
        stream1=stream1,
        sent_back=[
            call_item(
                "fc_6f5e4d3c2b1a0901", "call_Zr4nB8wQ2mX6tK9v_0", "get_weather", '{"city":"Rome"}'
            ),
            call_item(
                "fc_6f5e4d3c2b1a0901",
                "call_Zr4nB8wQ2mX6tK9v_1",
                "get_local_time",
                '{"timezone":"Europe/Rome"}',
            ),
            call_output("call_Zr4nB8wQ2mX6tK9v_0", '{"temp_c": 18, "conditions": "sunny"}'),
            call_output("call_Zr4nB8wQ2mX6tK9v_1", '{"time": "15:10"}'),
        ],
        stream2=stream2,
        model="gpt-4o-2024-08-06",
        split1=4,
    )


def responses_custom_tool() -> ResponsesSample:
    """gpt-5 with a reasoning item first, then a custom (freeform) tool call whose input is
    raw SQL, not JSON. The agent continues the stored response (previous_response_id) and
    answers the call_id with a custom_tool_call_output: a clean round trip."""
    model = "gpt-5-2025-08-07"
    r1 = Resp("resp_0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d", model)
    sql = [
        "SELECT",
        " country,",
        " COUNT(*)",
        " AS users",
        " FROM users",
        " GROUP BY",
        " country",
        " ORDER BY",
        " users DESC",
        " LIMIT 3;",
    ]
    reasoning = r1.reasoning(0, "rs_0a9b8c7d6e5f4a01")
    added, deltas, dones = r1.call(
        1, "ctc_0a9b8c7d6e5f4a02", "call_Vx7kP3mR9tQ2nW5b", "execute_sql", sql, custom=True
    )
    stream1 = sequenced([*r1.start(), *reasoning, *added, *deltas, *dones, *r1.end((721, 240))])
    r2 = Resp("resp_0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5e", model)
    answer = "Most users are in the United States (412), then Germany (198) and Japan (157)."
    stream2 = sequenced(
        [*r2.start(), *r2.text(0, "msg_0a9b8c7d6e5f4a03", answer), *r2.end((802, 33))]
    )
    return ResponsesSample(
        name="responses-custom-tool",
        input=[{"role": "user", "content": "Which three countries have the most users?"}],
        tools=[RESP_SQL],
        stream1=stream1,
        sent_back=[
            call_output(
                "call_Vx7kP3mR9tQ2nW5b",
                "country,users\nUnited States,412\nGermany,198\nJapan,157",
                custom=True,
            )
        ],
        stream2=stream2,
        model=model,
        previous=True,
        split1=(6, 9),
    )


RESPONSES_SAMPLES = [
    responses_done_only,
    responses_done_mismatch,
    responses_interleaved,
    responses_parallel_wrapper,
    responses_custom_tool,
]


def write_responses(s: ResponsesSample, out: Path = OUT) -> Path:
    rng = random.Random(zlib.crc32(s.name.encode()))
    path = out / f"{s.name}.jsonl"
    url = s.base.rstrip("/") + "/responses"
    body1 = {
        "model": s.model,
        "instructions": s.instructions,
        "input": s.input,
        "tools": s.tools,
        "stream": True,
    }
    if s.previous:
        rid = s.stream1[0]["response"]["id"]
        body2 = {**body1, "input": s.sent_back, "previous_response_id": rid}
    else:
        body2 = {**body1, "input": [*s.input, *s.sent_back]}
    headers = [
        ("x-request-id", f"req_{zlib.crc32(s.name.encode()):08x}"),
        ("openai-processing-ms", str(rng.randint(90, 400))),
    ]
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        for body, stream, split in ((body1, s.stream1, s.split1), (body2, s.stream2, None)):
            ex = w.new_exchange()
            raw = _dumps(body).encode()
            w.request(ex, "POST", url, request_headers(s.base, raw), raw, t_ns=t)
            t = stream_response(w, ex, t, stream, headers, rng, split, named=True)
            t += rng.randint(80, 900) * MS + rng.randint(0, MS - 1)  # the agent runs the tools
    return path


# -- The Responses API over a WebSocket, as the Codex CLI uses it: CONSTRUCTED from the
# events of the SSE samples above and the client messages codex sends (response.create)


def codex_websocket() -> list[tuple[str, dict]]:
    """One socket, three responses: codex's `generate: false` warm-up, a turn that calls
    its shell tool, and the turn that continues it (previous_response_id, only the call's
    output sent)."""
    model = "gpt-5.1-codex"
    tools = [
        fn_tool(
            "shell",
            "Runs a shell command and returns its output.",
            {"command": {"type": "array", "items": {"type": "string"}}},
            ["command"],
        )
    ]
    ask = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "What is in this folder?"}],
        }
    ]
    base = {"model": model, "instructions": "You are Codex, a coding agent.", "tools": tools}
    warm = Resp("resp_0a1b2c3d4e5f60718293a4b5c6d7e8f9", model, pad=False)
    r1 = Resp("resp_0a1b2c3d4e5f60718293a4b5c6d7e901", model, pad=False)
    added, deltas, dones = r1.call(
        0,
        "fc_0a1b2c3d4e5f6071",
        "call_Zq7Xv3Kp9LmN2bRt",
        "shell",
        ['{"command":', '["bash","-lc",', '"ls"]}'],
    )
    r2 = Resp("resp_0a1b2c3d4e5f60718293a4b5c6d7e902", model, pad=False)
    answer = "The folder holds README.md, pyproject.toml and src/."
    out = [("client", {"type": "response.create", **base, "input": ask, "generate": False})]
    out += [("server", e) for e in sequenced([*warm.start(), *warm.end((1210, 0))])]
    out.append(
        (
            "client",
            {"type": "response.create", **base, "input": ask, "previous_response_id": warm.rid},
        )
    )
    out += [
        ("server", e)
        for e in sequenced([*r1.start(), *added, *deltas, *dones, *r1.end((1234, 41))])
    ]
    result = call_output("call_Zq7Xv3Kp9LmN2bRt", "README.md\npyproject.toml\nsrc\n")
    out.append(
        (
            "client",
            {"type": "response.create", **base, "input": [result], "previous_response_id": r1.rid},
        )
    )
    out += [
        ("server", e)
        for e in sequenced(
            [*r2.start(), *r2.text(0, "msg_0a1b2c3d4e5f6072", answer), *r2.end((1302, 18))]
        )
    ]
    return out


def write_codex_websocket(out: Path = OUT) -> Path:
    """codex-websocket.jsonl: the session as the recorder writes one (handshake, 101, a
    `message` line per frame, the close each way)."""
    rng = random.Random(zlib.crc32(b"codex-websocket"))
    path = out / "codex-websocket.jsonl"
    url = "https://api.openai.com/v1/responses"
    handshake = [
        ("Host", "api.openai.com"),
        ("authorization", FAKE_KEY),
        ("openai-beta", "responses_websockets=2026-02-06"),
        ("originator", "codex_exec"),
        ("version", "0.171.0"),
        ("session_id", "0195f3a8-6c2e-7d41-9b0a-3f5e8c1d2a47"),
        ("sec-websocket-key", "x3JJHMbDL1EzLkh9GBhXDw=="),
        ("sec-websocket-version", "13"),
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
    ]
    accept = [
        ("upgrade", "websocket"),
        ("connection", "upgrade"),
        ("sec-websocket-accept", "HSmrc0sMlYUkAGmm5OPpG2HaGWk="),
        ("x-request-id", "req_5f0c2a9e7b3d4c18"),
    ]
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        ex = w.new_exchange()
        w.request(ex, "GET", url, handshake, b"", t_ns=t)
        t += rng.randint(120, 300) * MS
        w.response(ex, 101, accept, t_ns=t)
        for sender, message in codex_websocket():
            gap = rng.randint(300, 900) if sender == "client" else rng.randint(1, 40)
            t += gap * MS + rng.randint(0, MS - 1)
            w.message(ex, sender, 1, True, _dumps(message).encode(), t_ns=t)
        for sender in ("client", "server"):
            t += rng.randint(1, 5) * MS
            w.message(ex, sender, 8, True, b"\x03\xe8", t_ns=t)
        w.end(ex, "complete", t_ns=t + MS)
    return path


# -- Gemini (streamGenerateContent): CONSTRUCTED from the shapes in tests/fixtures/gemini


AI_STUDIO = (
    "https://generativelanguage.googleapis.com/v1beta/models/{model}:streamGenerateContent?alt=sse"
)
VERTEX = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/acme-agents/locations/"
    "us-central1/publishers/google/models/{model}:streamGenerateContent?alt=sse"
)
SIGNATURE = (
    "CiQBjz1rX0b7cG1kT2wxQ3pZa3dSUnN0dlh5Wm1PaGJxVGtKbWRrQWx3PT0KdwGPPWtfT1pIU0Z6a3p"
    "kYjNKbFkyOXVabWxuZFhKaGRHbHZiZz09Cj0BjT1rX3BhcnRpYWxseS1zaWduZWQtdGhvdWdodHM="
)


def gfn(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "OBJECT", "properties": properties, "required": required},
    }


G_WEATHER = gfn(
    "get_weather", "Current weather for a city.", {"city": {"type": "STRING"}}, ["city"]
)
G_TIME = gfn("get_time", "Local time for an IANA time zone.", {"tz": {"type": "STRING"}}, ["tz"])
G_EVENT = gfn(
    "create_event",
    "Put an event in the team calendar.",
    {
        "title": {"type": "STRING"},
        "when": {
            "type": "OBJECT",
            "properties": {"start": {"type": "STRING"}, "minutes": {"type": "NUMBER"}},
        },
        "attendees": {"type": "ARRAY", "items": {"type": "STRING"}},
    },
    ["title", "when"],
)
G_ROOMS = gfn("list_rooms", "Meeting rooms free now.", {}, [])


@dataclass
class GeminiSample:
    name: str
    model: str
    url: str  # AI_STUDIO or VERTEX
    question: str
    tools: list[dict]  # function declarations
    stream1: list[Chunk]
    sent_back: dict  # the model content the agent sends back
    results: list[dict]  # its functionResponse parts
    stream2: list[Chunk]
    stream_args: bool = False  # the request asks Vertex to stream arguments
    split1: int | tuple[int, int] | None = None


def gchunk(
    model: str, rid: str, *parts: dict, finish: str | None = None, usage: dict | None = None
) -> Chunk:
    cand: dict = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        cand["finishReason"] = finish
    cand["index"] = 0
    out: Chunk = {"candidates": [cand]}
    if usage is not None:
        out["usageMetadata"] = usage
    out["modelVersion"] = model
    out["responseId"] = rid
    return out


def gusage(prompt: int, out: int, thoughts: int = 0) -> dict:
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out + thoughts,
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def fcall(name: str, args: dict | None = None, sig: str | None = None) -> dict:
    fc: dict = {"name": name}
    if args is not None:
        fc["args"] = args
    part: dict = {"functionCall": fc}
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def fopen(name: str, sig: str | None = None) -> dict:
    part = fcall(name, sig=sig)
    part["functionCall"]["willContinue"] = True
    return part


def fpart(*args: dict) -> dict:
    return {"functionCall": {"partialArgs": list(args), "willContinue": True}}


def pstr(path: str, text: str, more: bool = True) -> dict:
    out: dict = {"jsonPath": path, "stringValue": text}
    if more:
        out["willContinue"] = True
    return out


FCLOSE = {"functionCall": {}}


def gresult(name: str, response: dict) -> dict:
    return {"functionResponse": {"name": name, "response": response}}


def gemini_answer(model: str, rid: str, text: str, usage: dict) -> list[Chunk]:
    half = len(text) // 2
    return [
        gchunk(model, rid, {"text": text[:half]}),
        gchunk(model, rid, {"text": text[half:]}, finish="STOP", usage=usage),
    ]


def gemini_parallel_signature() -> GeminiSample:
    """AI Studio, gemini-3-pro: two calls in one chunk, only the first with its
    thoughtSignature, no ids, STOP. A correct agent sends both parts back as they came,
    the signature on the first, and answers each by name: the contract holds. Clients
    that give every call of a chunk index 0 merge them."""
    model, rid = "gemini-3-pro-preview", "Zk3MaZ7bLq2Hz4QP8pWJ0Ag"
    stream1 = [
        gchunk(model, rid, {"text": "Checking both.", "thought": True}),
        gchunk(
            model,
            rid,
            fcall("get_weather", {"city": "Lisbon"}, SIGNATURE),
            fcall("get_time", {"tz": "Europe/Lisbon"}),
        ),
        gchunk(model, rid, {"text": ""}, finish="STOP", usage=gusage(112, 38, 164)),
    ]
    rid2 = "aG4MaY2cMpKyz7IPlYq8sQ0"
    return GeminiSample(
        name="gemini-parallel-signature",
        model=model,
        url=AI_STUDIO.format(model=model),
        question="What's the weather and the time in Lisbon?",
        tools=[G_WEATHER, G_TIME],
        stream1=stream1,
        sent_back={
            "role": "model",
            "parts": [
                fcall("get_weather", {"city": "Lisbon"}, SIGNATURE),
                fcall("get_time", {"tz": "Europe/Lisbon"}),
            ],
        },
        results=[
            gresult("get_weather", {"sky": "clear", "celsius": 21}),
            gresult("get_time", {"time": "16:42"}),
        ],
        stream2=gemini_answer(
            model, rid2, "It is 16:42 in Lisbon, clear and 21 °C.", gusage(190, 17)
        ),
        split1=1,
    )


def gemini_signature_dropped() -> GeminiSample:
    """The same turn through an agent that rebuilds the model content from the calls and
    loses the thoughtSignature (microsoft/semantic-kernel#13417, pipecat-ai/pipecat#3420):
    Gemini 3 answers the next request HTTP 400 "Function call is missing a
    thought_signature"."""
    s = gemini_parallel_signature()
    s.name = "gemini-signature-dropped"
    s.sent_back = {
        "role": "model",
        "parts": [
            fcall("get_weather", {"city": "Lisbon"}),
            fcall("get_time", {"tz": "Europe/Lisbon"}),
        ],
    }
    error = {
        "error": {
            "code": 400,
            "message": "Function call is missing a thought_signature in functionCall parts. "
            "This is required for tools to work correctly.",
            "status": "INVALID_ARGUMENT",
        }
    }
    s.stream2 = [error]
    return s


def gemini_streamed_args() -> GeminiSample:
    """Vertex with streamFunctionCallArguments: a no-args call first (it carries the
    signature), then a call whose arguments stream as partialArgs (a nested object, an
    array, strings in pieces, each string ended by a "" piece), closed by an empty
    functionCall. Clients that emit only at a closing part took the no-args call for a
    streamed one and lost it (the AI SDK before its fix); google-genai users who collect
    every part get six nameless calls."""
    model, rid = "gemini-3-pro-preview", "xR3MaafLBp6Wz7IPhcyS-Ak"
    stream1 = [
        gchunk(model, rid, fcall("list_rooms", sig=SIGNATURE)),
        gchunk(model, rid, fopen("create_event")),
        gchunk(model, rid, fpart(pstr("$.title", "Design "), pstr("$.title", "review", False))),
        gchunk(
            model,
            rid,
            fpart(pstr("$.when.start", "2026-12-02T10:00"), pstr("$.when.start", "", False)),
        ),
        gchunk(model, rid, fpart({"jsonPath": "$.when.minutes", "numberValue": 45})),
        gchunk(model, rid, fpart(pstr("$.attendees[0]", "ana@acme.dev", False))),
        gchunk(model, rid, {"functionCall": {"willContinue": True}}),
        gchunk(model, rid, fpart(pstr("$.attendees[1]", "bo@acme.dev", False))),
        gchunk(model, rid, FCLOSE, finish="STOP", usage=gusage(240, 61, 92)),
    ]
    args = {
        "title": "Design review",
        "when": {"start": "2026-12-02T10:00", "minutes": 45},
        "attendees": ["ana@acme.dev", "bo@acme.dev"],
    }
    rid2 = "yB3MaZOtEo2Hz7IPm5yI8Qw"
    return GeminiSample(
        name="gemini-streamed-args",
        model=model,
        url=VERTEX.format(model=model),
        question="Book the design review tomorrow at 10 for 45 minutes with Ana and Bo.",
        tools=[G_ROOMS, G_EVENT],
        stream1=stream1,
        sent_back={
            "role": "model",
            "parts": [fcall("list_rooms", sig=SIGNATURE), fcall("create_event", args)],
        },
        results=[
            gresult("list_rooms", {"rooms": ["Tagus", "Douro"]}),
            gresult("create_event", {"id": "evt_5521", "room": "Tagus"}),
        ],
        stream2=gemini_answer(
            model, rid2, "Booked: Design review, tomorrow 10:00, room Tagus.", gusage(320, 14)
        ),
        stream_args=True,
        split1=2,
    )


def gemini_unterminated() -> GeminiSample:
    """Vertex streamed arguments whose closing part never comes: the last partialArgs
    part says no more and the chunk says STOP (vercel/ai#14358). Clients that emit a
    streamed call only at its closing part never run it; robust keeps what was built."""
    model, rid = "gemini-3-flash-preview", "qL4MaeO1Hq2Hz7IPj8uQ4AE"
    stream1 = [
        gchunk(model, rid, fopen("get_weather", SIGNATURE)),
        gchunk(model, rid, fpart(pstr("$.city", "Porto"))),
        gchunk(
            model,
            rid,
            {"functionCall": {"partialArgs": [pstr("$.city", "", False)]}},
            finish="STOP",
            usage=gusage(96, 12, 40),
        ),
    ]
    rid2 = "rM4MaZf3Jq2Hz7IPk9vR5BF"
    return GeminiSample(
        name="gemini-unterminated",
        model=model,
        url=VERTEX.format(model=model),
        question="Weather in Porto?",
        tools=[G_WEATHER],
        stream1=stream1,
        sent_back={"role": "model", "parts": [fcall("get_weather", {"city": "Porto"}, SIGNATURE)]},
        results=[gresult("get_weather", {"sky": "rain", "celsius": 14})],
        stream2=gemini_answer(model, rid2, "Rain in Porto, 14 °C.", gusage(140, 9)),
        stream_args=True,
    )


def gemini_malformed() -> GeminiSample:
    """AI Studio ends a turn with finishReason MALFORMED_FUNCTION_CALL (the model wrote a
    call the API could not parse): no call arrives, and an agent that only looks for
    calls and text sees an empty answer. This one asks again."""
    model, rid = "gemini-2.5-flash", "sN5MaYv0Kq2Hz7IPl0wS6CG"
    stream1 = [
        {
            "candidates": [
                {
                    "content": {},
                    "finishReason": "MALFORMED_FUNCTION_CALL",
                    "finishMessage": "Malformed function call: print(default_api.get_weather(city=Faro))",
                    "index": 0,
                }
            ],
            "usageMetadata": gusage(88, 0),
            "modelVersion": model,
            "responseId": rid,
        }
    ]
    rid2 = "tO6MaXu9Lq2Hz7IPm1xT7DH"
    stream2 = [
        gchunk(model, rid2, fcall("get_weather", {"city": "Faro"})),
        gchunk(model, rid2, {"text": ""}, finish="STOP", usage=gusage(97, 8)),
    ]
    return GeminiSample(
        name="gemini-malformed",
        model=model,
        url=AI_STUDIO.format(model=model),
        question="Weather in Faro?",
        tools=[G_WEATHER],
        stream1=stream1,
        sent_back={
            "role": "user",
            "parts": [{"text": "Please call the tool again, with valid arguments."}],
        },
        results=[],
        stream2=stream2,
    )


GEMINI_SAMPLES = [
    gemini_parallel_signature,
    gemini_signature_dropped,
    gemini_streamed_args,
    gemini_unterminated,
    gemini_malformed,
]


def write_gemini(s: GeminiSample, out: Path = OUT) -> Path:
    rng = random.Random(zlib.crc32(s.name.encode()))
    path = out / f"{s.name}.jsonl"
    question = {"role": "user", "parts": [{"text": s.question}]}
    body1: dict = {
        "contents": [question],
        "systemInstruction": {
            "parts": [{"text": "You are a helpful assistant. Use the tools when needed."}]
        },
        "tools": [{"functionDeclarations": s.tools}],
    }
    if s.stream_args:
        body1["toolConfig"] = {"functionCallingConfig": {"streamFunctionCallArguments": True}}
    contents2 = [question, s.sent_back]
    if s.results:
        contents2.append({"role": "user", "parts": s.results})
    body2 = {**body1, "contents": contents2}
    base = s.url.split("/v1", 1)[0]
    headers = [
        ("x-goog-api-key", "AIzaSy-sample-0000-not-a-real-key"),
        ("x-goog-api-client", "google-genai-sdk/1.52.0 gl-python/3.13.1"),
    ]
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        for body, stream, split in ((body1, s.stream1, s.split1), (body2, s.stream2, None)):
            ex = w.new_exchange()
            raw = _dumps(body).encode()
            head = [("host", host(base)), ("content-type", "application/json"), *headers]
            head.append(("content-length", str(len(raw))))
            w.request(ex, "POST", s.url, head, raw, t_ns=t)
            if len(stream) == 1 and "error" in stream[0]:
                t = error_response(w, ex, t, stream[0], rng)
            else:
                server = [
                    ("server", "scaffolding on HTTPServer2"),
                    ("x-content-type-options", "nosniff"),
                ]
                if split is None and len(stream) < 3:  # (a short answer: its first event split)
                    split = 0
                t = stream_response(w, ex, t, stream, server, rng, split, crlf=True)
            t += rng.randint(80, 900) * MS + rng.randint(0, MS - 1)  # the agent runs the tools
    return path


def error_response(
    w: RecordingWriter, ex: int, t_request: int, body: Chunk, rng: random.Random
) -> int:
    """A whole JSON error answer (HTTP 400), as Google sends a request it refuses."""
    t = t_request + rng.randint(90, 300) * MS
    w.response(ex, 400, [("content-type", "application/json; charset=UTF-8")], t_ns=t)
    w.chunk(ex, json.dumps(body, indent=2).encode() + b"\n", t_ns=t + MS)
    t += 2 * MS
    w.end(ex, "complete", t_ns=t)
    return t


# -- bytes, reads and timings


def event(payload: Chunk | str, named: bool = False, crlf: bool = False) -> bytes:
    """One SSE event; `named`: with the `event:` line Anthropic sends (its data's type);
    `crlf`: lines ended by CRLF, as Google sends them."""
    data = payload if isinstance(payload, str) else _dumps(payload)
    name = f"event: {payload['type']}\n" if named and isinstance(payload, dict) else ""
    return f"{name}data: {data}\r\n\r\n".encode() if crlf else f"{name}data: {data}\n\n".encode()


def plan_reads(
    events: list[bytes], rng: random.Random, split: int | tuple[int, int] | None
) -> list[tuple[bytes, bool]]:
    """Cut a body into reads: (bytes, is the rest of a split event).

    One event per read, except: the `split` event (chosen at random when None) is cut
    in two reads, and one or two pairs of neighbouring events share a read."""
    n = len(events)
    if isinstance(split, tuple):
        s, cut = split
    else:
        s = split if split is not None else rng.randrange(1, n - 1)
        cut = rng.randint(10, len(events[s]) - 10)
    free = [i for i in range(n - 1) if s not in (i, i + 1)]
    pairs: set[int] = set()
    for _ in range(1 if n < 8 else 2):
        options = [i for i in free if not ({i - 1, i, i + 1} & pairs)]
        if options:
            pairs.add(rng.choice(options))
    reads: list[tuple[bytes, bool]] = []
    i = 0
    while i < n:
        if i in pairs:
            reads.append((events[i] + events[i + 1], False))
            i += 2
            continue
        if i == s:
            reads += [(events[i][:cut], False), (events[i][cut:], True)]
        else:
            reads.append((events[i], False))
        i += 1
    return reads


def host(base: str) -> str:
    return urlsplit(base).netloc


def request_headers(base: str, body: bytes) -> list[tuple[str, str]]:
    return [
        ("host", host(base)),
        ("accept", "application/json"),
        ("content-type", "application/json"),
        ("user-agent", "AsyncOpenAI/Python 3.14.0"),
        ("authorization", FAKE_KEY),
        ("content-length", str(len(body))),
    ]


def stream_response(
    w: RecordingWriter,
    ex: int,
    t_request: int,
    payloads: list,
    headers: list[tuple[str, str]],
    rng: random.Random,
    split: int | tuple[int, int] | None,
    named: bool = False,
    crlf: bool = False,
) -> int:
    """Response head, reads and end of one streamed exchange; returns the end time.
    `named`: events carry `event:` lines (Anthropic Messages); `crlf`: CRLF line ends."""
    first = t_request + rng.randint(150, 599) * MS + rng.randint(0, MS - 1)
    all_headers = [
        ("content-type", "text/event-stream; charset=utf-8"),
        ("cache-control", "no-cache"),
        ("transfer-encoding", "chunked"),
        *headers,
    ]
    w.response(ex, 200, all_headers, t_ns=first - rng.randint(1, 4) * MS)
    t = first
    events = [event(p, named, crlf) for p in payloads]
    for k, (data, rest) in enumerate(plan_reads(events, rng, split)):
        if k:
            gap = rng.randint(1, 2) * MS if rest else rng.randint(10, 59) * MS
            t += gap + rng.randint(0, MS - 1)
        w.chunk(ex, data, t_ns=t)
    t += rng.randint(200_000, 1_500_000)
    w.end(ex, "complete", t_ns=t)
    return t


def write_sample(s: Sample, out: Path = OUT) -> Path:
    rng = random.Random(zlib.crc32(s.name.encode()))
    path = out / f"{s.name}.jsonl"
    url = s.base.rstrip("/") + "/chat/completions"
    body1 = {
        "model": s.model,
        "messages": s.messages,
        "stream": True,
        "tools": s.tools,
        **s.body_extra,
    }
    messages2 = [*s.messages, s.assistant]
    messages2 += [{"role": "tool", "tool_call_id": i, "content": c} for i, c in s.results]
    body2 = {**body1, "messages": messages2}
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        for body, stream, split in ((body1, s.stream1, s.split1), (body2, s.stream2, s.split2)):
            ex = w.new_exchange()
            raw = _dumps(body).encode()
            w.request(ex, "POST", url, request_headers(s.base, raw), raw, t_ns=t)
            t = stream_response(w, ex, t, stream, s.response_headers, rng, split)
            t += rng.randint(80, 900) * MS + rng.randint(0, MS - 1)  # the agent runs the tools
    return path


# -- the two non-recording inputs


def write_gemini_sse(out: Path = OUT) -> Path:
    """A raw SSE body as `curl -N` saves it: CRLF line ends, a keep-alive comment,
    Gemini-style index-less whole calls in separate chunks, finish_reason "stop"."""
    model = "gemini-2.5-flash"
    rid = "Qx0vaMSOL8XbkdUP7cSr2Aw"

    def mk(delta: dict, finish: str | None = None, usage: dict | None = None) -> Chunk:
        choice: dict = {"delta": delta, "index": 0}
        if finish is not None:
            choice["finish_reason"] = finish
        out: Chunk = {"choices": [choice], "created": EPOCH, "id": rid, "model": model}
        out["object"] = "chat.completion.chunk"
        if usage is not None:
            out["usage"] = usage
        return out

    def whole(id: str, name: str, args: str) -> dict:
        return {"function": {"arguments": args, "name": name}, "id": id, "type": "function"}

    chunks = [
        mk(
            {
                "role": "assistant",
                "tool_calls": [
                    whole(
                        "function-call-13712447254226412846",
                        "get_weather",
                        '{"city":"Paris","unit":"celsius"}',
                    )
                ],
            }
        ),
        mk(
            {
                "tool_calls": [
                    whole(
                        "function-call-5183419573382718213",
                        "get_local_time",
                        '{"timezone":"Europe/Paris"}',
                    )
                ]
            }
        ),
        mk({}, "stop", {"completion_tokens": 31, "prompt_tokens": 118, "total_tokens": 149}),
    ]
    lines = [": keep-alive", ""]
    for c in chunks:
        lines += [f"data: {_dumps(c)}", ""]
    lines += ["data: [DONE]", ""]
    path = out / "gemini-no-index.sse"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path


def write_deepseek_chunks(out: Path = OUT) -> Path:
    """JSON Lines of chat.completion.chunk objects, cumulative argument snapshots."""
    cid = "8f2c4e6a-0b1d-4f3a-9c5e-7d9b1f3a5c7e"

    def mk(delta: dict, finish: str | None = None, usage: dict | None = None) -> Chunk:
        out: Chunk = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": EPOCH,
            "model": "deepseek-chat",
            "system_fingerprint": "fp_ffc7281d48_prod0820_fp8_kvcache",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if usage is not None:
            out["usage"] = usage
        return out

    c_id = "call_00_Xg5Rk2pLm9Qz7Wv3Tn8Bc4Hd"
    snapshots = [
        '{"',
        '{"city',
        '{"city": "Bei',
        '{"city": "Beijing", "unit',
        '{"city": "Beijing", "unit": "celsius"}',
    ]
    chunks = [
        mk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tc(0, c_id, "get_weather", "", "function")],
            }
        ),
        *[mk(calls(tc(0, args=a))) for a in snapshots],
        mk({}, "tool_calls", {"prompt_tokens": 204, "completion_tokens": 19, "total_tokens": 223}),
    ]
    path = out / "deepseek-cumulative.chunks.jsonl"
    path.write_bytes("".join(_dumps(c) + "\n" for c in chunks).encode())
    return path


def write_ollama_native(out: Path = OUT) -> Path:
    """A saved body of Ollama's native /api/chat (NDJSON): thinking, then two calls of
    one tool in one done: false line with no ids, then the final line."""
    model = "qwen3:8b"
    t = [f"2026-03-02T09:14:07.{412000 + 26131 * k:06d}Z" for k in range(8)]

    def line(k: int, message: dict, done: bool = False, **rest: object) -> str:
        body = {"model": model, "created_at": t[k], "message": {"role": "assistant", **message}}
        return _dumps({**body, "done": done, **rest})

    def weather(city: str) -> dict:
        return {"function": {"name": "get_weather", "arguments": {"city": city}}}

    lines = [
        line(0, {"content": "", "thinking": "The user wants"}),
        line(1, {"content": "", "thinking": " the weather in two cities."}),
        line(2, {"content": "Checking both."}),
        line(3, {"content": "", "tool_calls": [weather("Paris"), weather("Lyon")]}),
        line(
            4,
            {"content": ""},
            True,
            done_reason="stop",
            total_duration=1840392708,
            load_duration=31204583,
            prompt_eval_count=214,
            prompt_eval_duration=402118000,
            eval_count=61,
            eval_duration=1398210417,
        ),
    ]
    path = out / "ollama-native-two-calls.ndjson"
    path.write_bytes("".join(x + "\n" for x in lines).encode())
    return path


def write_ollama_agent(out: Path = OUT) -> Path:
    """An agent on the ollama Python client against Ollama's native /api/chat: its first
    turn streams two calls of one tool with no ids in one done: false line (what
    `write_ollama_native` saves as a body), its second, with one tool message naming each
    call's tool, the answer. Each line is one read, as Ollama flushes them."""
    model = "qwen3:8b"
    rng = random.Random(zlib.crc32(b"ollama-two-calls"))
    path = out / "ollama-two-calls.jsonl"
    # (tool() is the whole declaration: {"type": "function", "function": {...}})
    tools = [
        tool("get_weather", "Current weather for a city", {"city": {"type": "string"}}, ["city"])
    ]
    calls = [
        {"function": {"name": "get_weather", "arguments": {"city": c}}} for c in ("Paris", "Lyon")
    ]
    question = {"role": "user", "content": "What is the weather in Paris and in Lyon?"}
    assistant = {
        "role": "assistant",
        "content": "Checking both.",
        "thinking": "The user wants the weather in two cities.",
        "tool_calls": calls,
    }
    results = [
        {"role": "tool", "tool_name": "get_weather", "content": f'{{"city": "{c}", "temp_c": {t}}}'}
        for c, t in (("Paris", 14), ("Lyon", 17))
    ]
    bodies = [
        {"model": model, "messages": [question], "tools": tools},
        {"model": model, "messages": [question, assistant, *results], "tools": tools},
    ]
    answer = "It is 14 °C in Paris and 17 °C in Lyon."
    turns = [
        [
            ({"content": "", "thinking": "The user wants"}, {}),
            ({"content": "", "thinking": " the weather in two cities."}, {}),
            ({"content": "Checking both."}, {}),
            ({"content": "", "tool_calls": calls}, {}),
            ({"content": ""}, {"done_reason": "stop", "eval_count": 61}),
        ],
        [
            *(
                ({"content": piece}, {})
                for piece in ("It is 14 °C", " in Paris and", " 17 °C in Lyon.")
            ),
            ({"content": ""}, {"done_reason": "stop", "eval_count": 19}),
        ],
    ]
    assert "".join(m["content"] for m, _ in turns[1]) == answer
    url = "http://127.0.0.1:11434/api/chat"
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        for body, lines in zip(bodies, turns, strict=True):
            ex = w.new_exchange()
            raw = _dumps(body).encode()
            head = [
                ("host", "127.0.0.1:11434"),
                ("content-type", "application/json"),
                ("accept", "application/json"),
                ("user-agent", "ollama-python/0.6.3 (x86_64 linux) Python/3.12.8"),
                ("content-length", str(len(raw))),
            ]
            w.request(ex, "POST", url, head, raw, t_ns=t)
            t += rng.randint(120, 400) * MS
            w.response(
                ex,
                200,
                [("content-type", "application/x-ndjson"), ("transfer-encoding", "chunked")],
                t_ns=t,
            )
            for k, (message, rest) in enumerate(lines):
                t += rng.randint(18, 40) * MS
                done = k == len(lines) - 1
                line = {
                    "model": model,
                    "created_at": f"2026-03-02T09:14:{7 + t // 10**9:02d}.{t % 10**9 // 1000:06d}Z",
                    "message": {"role": "assistant", **message},
                    "done": done,
                    **rest,
                }
                w.chunk(ex, _dumps(line).encode() + b"\n", t_ns=t)
            t += MS
            w.end(ex, "complete", t_ns=t)
            t += rng.randint(80, 900) * MS  # the agent runs the tools
    return path


# -- Bedrock Converse: an AWS event stream, CONSTRUCTED ----------------------------------


def _converse_message(name: str, body: dict, rng: random.Random) -> bytes:
    """One ConverseStream event as Bedrock writes it: its headers, its JSON payload with
    the random-length `p` padding every event carries."""
    from streamscope.framing.aws_eventstream import encode

    pad = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    payload = {**body, "p": pad[: rng.randint(2, 40)]}
    return encode(
        [
            (":event-type", 7, name),
            (":content-type", 7, "application/json"),
            (":message-type", 7, "event"),
        ],
        _dumps(payload).encode(),
    )


def write_bedrock(out: Path = OUT) -> Path:
    """An agent on Bedrock's ConverseStream (Claude via the Converse API): its first turn
    streams text block 0 (no contentBlockStart: text blocks have none), toolUse block 1,
    then text block 2 after the call (again without a start); its second request sends
    the toolUse back unchanged with a toolResult, and the answer streams back. A client
    that routes deltas to the last started block glues block 2's text onto the call."""
    rng = random.Random(zlib.crc32(b"bedrock-text-without-start"))
    path = out / "bedrock-text-without-start.jsonl"
    url = (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
        "us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    )
    spec = tool(
        "get_weather", "Current weather for a city", {"city": {"type": "string"}}, ["city"]
    )["function"]
    tools = {
        "tools": [
            {
                "toolSpec": {
                    "name": spec["name"],
                    "description": spec["description"],
                    "inputSchema": {"json": spec["parameters"]},
                }
            }
        ]
    }
    question = {"role": "user", "content": [{"text": "What is the weather in Paris?"}]}
    use = {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather"}
    assistant = {
        "role": "assistant",
        "content": [
            {"text": "Let me look that up."},
            {"toolUse": {**use, "input": {"city": "Paris"}}},
            {"text": "Checking now."},
        ],
    }
    result = {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": use["toolUseId"],
                    "content": [{"json": {"city": "Paris", "temp_c": 14}}],
                }
            }
        ],
    }
    inference = {"maxTokens": 1024}
    bodies = [
        {"messages": [question], "toolConfig": tools, "inferenceConfig": inference},
        {
            "messages": [question, assistant, result],
            "toolConfig": tools,
            "inferenceConfig": inference,
        },
    ]

    def usage(inp: int, out_: int) -> dict:
        return {
            "usage": {"inputTokens": inp, "outputTokens": out_, "totalTokens": inp + out_},
            "metrics": {"latencyMs": rng.randint(900, 1900)},
        }

    def delta(index: int, d: dict) -> tuple[str, dict]:
        return "contentBlockDelta", {"contentBlockIndex": index, "delta": d}

    turns = [
        [
            ("messageStart", {"role": "assistant"}),
            delta(0, {"text": "Let me look"}),
            delta(0, {"text": " that up."}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": use}}),
            delta(1, {"toolUse": {"input": ""}}),
            delta(1, {"toolUse": {"input": '{"city": '}}),
            delta(1, {"toolUse": {"input": '"Paris"}'}}),
            ("contentBlockStop", {"contentBlockIndex": 1}),
            delta(2, {"text": "Checking now."}),
            ("contentBlockStop", {"contentBlockIndex": 2}),
            ("messageStop", {"stopReason": "tool_use"}),
            ("metadata", usage(412, 71)),
        ],
        [
            ("messageStart", {"role": "assistant"}),
            delta(0, {"text": "It is 14 °C"}),
            delta(0, {"text": " in Paris."}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("messageStop", {"stopReason": "end_turn"}),
            ("metadata", usage(530, 12)),
        ],
    ]
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        t = rng.randint(800_000, 2_500_000)
        for body, events in zip(bodies, turns, strict=True):
            ex = w.new_exchange()
            raw = _dumps(body).encode()
            head = [
                ("host", "bedrock-runtime.us-east-1.amazonaws.com"),
                ("content-type", "application/json"),
                (
                    "user-agent",
                    "Boto3/1.40.0 md/Botocore#1.40.0 ua/2.1 os/linux lang/python#3.12.8",
                ),
                ("x-amz-date", "20261130T090000Z"),
                (
                    "authorization",
                    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261130/us-east-1/"
                    "bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000",
                ),
                ("content-length", str(len(raw))),
            ]
            w.request(ex, "POST", url, head, raw, t_ns=t)
            t += rng.randint(300, 700) * MS
            w.response(
                ex,
                200,
                [
                    ("content-type", "application/vnd.amazon.eventstream"),
                    ("transfer-encoding", "chunked"),
                    ("x-amzn-requestid", f"5f1c7a52-0d7e-4b1e-9c3a-1b2c3d4e5f6{ex}"),
                ],
                t_ns=t,
            )
            messages = [_converse_message(name, b, rng) for name, b in events]
            k = 0
            while k < len(messages):
                # mostly one message a read, now and then two, one cut across two reads
                take = 2 if rng.random() < 0.2 and k + 1 < len(messages) else 1
                data = b"".join(messages[k : k + take])
                k += take
                t += rng.randint(15, 60) * MS
                if k == 7:
                    cut = len(data) // 2
                    w.chunk(ex, data[:cut], t_ns=t)
                    t += rng.randint(1, 3) * MS
                    data = data[cut:]
                w.chunk(ex, data, t_ns=t)
            t += MS
            w.end(ex, "complete", t_ns=t)
            t += rng.randint(80, 900) * MS  # the agent runs the tool
    return path


# -- OpenAI Realtime: a WebSocket session, CONSTRUCTED from the openai package's types ------


def _frame(w: RecordingWriter, ex: int, t: int, sender: str, opcode: int, raw: bytes) -> None:
    """One frame (FIN) of the session: a `message` line (schema 2), as format.Message
    writes it. (Written beside the writer, whose own message lines, with their masking,
    are the relay's: these messages hold no secret.)"""
    from streamscope.recording.format import Message

    line = Message.of(ex, t, sender, opcode, True, raw).to_json()
    w._write((json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode())


def realtime_session() -> list[tuple[str, dict]]:
    """The messages of a Realtime session (GA API, text out): the client's setup and
    question, a response with two function calls (output 0 and 1, each streamed in
    deltas, then `.done`, `output_item.done`, and both in `response.done`'s output), the
    client's two function_call_outputs and its response.create, and the answer. Event
    and item ids are made up, in the shapes the API uses."""
    model = "gpt-realtime"
    weather = {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
    clock = {
        "type": "function",
        "name": "get_local_time",
        "description": "Current local time in an IANA time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string"}},
            "required": ["tz"],
        },
    }
    ids = iter(range(1, 1000))

    def ev(kind: str, **fields: Any) -> dict:
        return {"type": kind, "event_id": f"event_CPr8{next(ids):04d}kTq2", **fields}

    session = {
        "id": "sess_CPr8kTq2Zx0m",
        "object": "realtime.session",
        "type": "realtime",
        "model": model,
    }
    question = {
        "id": "item_CPr8u01",
        "type": "message",
        "role": "user",
        "status": "completed",
        "content": [
            {
                "type": "input_text",
                "text": "What's the weather in Paris, and what time is it there?",
            }
        ],
    }
    out: list[tuple[str, dict]] = [
        (
            "server",
            ev("session.created", session={**session, "output_modalities": ["audio"], "tools": []}),
        ),
        (
            "client",
            {
                "type": "session.update",
                "session": {
                    "type": "realtime",
                    "model": model,
                    "output_modalities": ["text"],
                    "instructions": "Answer briefly. Use the tools.",
                    "tools": [weather, clock],
                },
            },
        ),
        (
            "server",
            ev(
                "session.updated",
                session={**session, "output_modalities": ["text"], "tools": [weather, clock]},
            ),
        ),
        (
            "client",
            {
                "type": "conversation.item.create",
                "item": {k: v for k, v in question.items() if k not in ("id", "status")},
            },
        ),
        ("server", ev("conversation.item.added", previous_item_id=None, item=question)),
        ("server", ev("conversation.item.done", previous_item_id=None, item=question)),
        ("client", {"type": "response.create"}),
    ]
    rid = "resp_CPr8v1Lw"
    response = {
        "id": rid,
        "object": "realtime.response",
        "status": "in_progress",
        "output": [],
        "output_modalities": ["text"],
    }
    out.append(("server", ev("response.created", response=response)))
    calls = [
        ("item_CPr8f01", "call_Wq3xM8pT2kR5vN7z", "get_weather", ('{"ci', 'ty": "Par', 'is"}')),
        ("item_CPr8f02", "call_Bz6nK1rY4hT9sL2c", "get_local_time", ('{"tz": "Eur', 'ope/Paris"}')),
    ]
    done_items = []
    for index, (item_id, call_id, name, parts) in enumerate(calls):
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "function_call",
            "status": "in_progress",
            "name": name,
            "call_id": call_id,
            "arguments": "",
        }
        out.append(
            (
                "server",
                ev("response.output_item.added", response_id=rid, output_index=index, item=item),
            )
        )
        out.append(("server", ev("conversation.item.added", previous_item_id=None, item=item)))
        for piece in parts:
            out.append(
                (
                    "server",
                    ev(
                        "response.function_call_arguments.delta",
                        response_id=rid,
                        item_id=item_id,
                        output_index=index,
                        call_id=call_id,
                        delta=piece,
                    ),
                )
            )
        whole = "".join(parts)
        out.append(
            (
                "server",
                ev(
                    "response.function_call_arguments.done",
                    response_id=rid,
                    item_id=item_id,
                    output_index=index,
                    call_id=call_id,
                    name=name,
                    arguments=whole,
                ),
            )
        )
        finished = {**item, "status": "completed", "arguments": whole}
        done_items.append(finished)
        out.append(("server", ev("conversation.item.done", previous_item_id=None, item=finished)))
        out.append(
            (
                "server",
                ev("response.output_item.done", response_id=rid, output_index=index, item=finished),
            )
        )
    usage = {"total_tokens": 412, "input_tokens": 356, "output_tokens": 56}
    out.append(
        (
            "server",
            ev(
                "response.done",
                response={**response, "status": "completed", "output": done_items, "usage": usage},
            ),
        )
    )
    limits = [{"name": "tokens", "limit": 40000, "remaining": 39588, "reset_seconds": 0.618}]
    out.append(("server", ev("rate_limits.updated", rate_limits=limits)))
    results = (
        '{"city": "Paris", "temp_c": 14, "sky": "overcast"}',
        '{"tz": "Europe/Paris", "time": "10:42"}',
    )
    for (item_id, call_id, _, _), result in zip(calls, results, strict=True):
        out.append(
            (
                "client",
                {
                    "type": "conversation.item.create",
                    "item": {"type": "function_call_output", "call_id": call_id, "output": result},
                },
            )
        )
        answered = {
            "id": item_id.replace("f0", "o0"),
            "object": "realtime.item",
            "type": "function_call_output",
            "status": "completed",
            "call_id": call_id,
            "output": result,
        }
        out.append(
            ("server", ev("conversation.item.added", previous_item_id=item_id, item=answered))
        )
        out.append(
            ("server", ev("conversation.item.done", previous_item_id=item_id, item=answered))
        )
    out.append(("client", {"type": "response.create"}))
    rid2 = "resp_CPr8w2Mx"
    response2 = {**response, "id": rid2}
    out.append(("server", ev("response.created", response=response2)))
    message = {
        "id": "item_CPr8m01",
        "object": "realtime.item",
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    out.append(
        ("server", ev("response.output_item.added", response_id=rid2, output_index=0, item=message))
    )
    part = {"type": "output_text", "text": ""}
    out.append(
        (
            "server",
            ev(
                "response.content_part.added",
                response_id=rid2,
                item_id="item_CPr8m01",
                output_index=0,
                content_index=0,
                part=part,
            ),
        )
    )
    answer = ("It is 14 °C", " and overcast in Paris,", " where it is", " 10:42.")
    for piece in answer:
        out.append(
            (
                "server",
                ev(
                    "response.output_text.delta",
                    response_id=rid2,
                    item_id="item_CPr8m01",
                    output_index=0,
                    content_index=0,
                    delta=piece,
                ),
            )
        )
    text = "".join(answer)
    out.append(
        (
            "server",
            ev(
                "response.output_text.done",
                response_id=rid2,
                item_id="item_CPr8m01",
                output_index=0,
                content_index=0,
                text=text,
            ),
        )
    )
    out.append(
        (
            "server",
            ev(
                "response.content_part.done",
                response_id=rid2,
                item_id="item_CPr8m01",
                output_index=0,
                content_index=0,
                part={**part, "text": text},
            ),
        )
    )
    said = {**message, "status": "completed", "content": [{"type": "output_text", "text": text}]}
    out.append(
        ("server", ev("response.output_item.done", response_id=rid2, output_index=0, item=said))
    )
    usage2 = {"total_tokens": 498, "input_tokens": 479, "output_tokens": 19}
    out.append(
        (
            "server",
            ev(
                "response.done",
                response={**response2, "status": "completed", "output": [said], "usage": usage2},
            ),
        )
    )
    return out


def write_realtime(out: Path = OUT) -> Path:
    """A Realtime session recorded as the recorder writes one: the handshake (`GET
    /v1/realtime?model=...`, answered 101), a `message` line per frame (each message one
    text frame), the close each way, the end. The client is a correct one: each call
    answered once, by its call_id."""
    rng = random.Random(zlib.crc32(b"realtime-two-calls"))
    path = out / "realtime-two-calls.jsonl"
    url = "https://api.openai.com/v1/realtime?model=gpt-realtime"
    head = [
        ("host", "api.openai.com"),
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("sec-websocket-version", "13"),
        ("authorization", FAKE_KEY),
        ("user-agent", "Python/3.12 websockets/15.0.1"),
    ]
    accept = [
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        ("x-request-id", "req_5b2e9d4c7a1f"),
    ]
    with RecordingWriter(path, argv=ARGV, overwrite=True, created=CREATED) as w:
        ex = w.new_exchange()
        t = rng.randint(800_000, 2_500_000)
        w.request(ex, "GET", url, head, b"", t_ns=t)
        t += rng.randint(180, 420) * MS
        w.response(ex, 101, accept, t_ns=t)
        for sender, event in realtime_session():
            kind = event["type"]
            if sender == "client":
                t += rng.randint(5, 40) * MS if kind != "response.create" else MS
            elif kind in ("response.created", "session.created"):
                t += rng.randint(150, 400) * MS  # the model starts
            else:
                t += rng.randint(8, 45) * MS
            _frame(w, ex, t, sender, 1, _dumps(event).encode())
        t += rng.randint(300, 900) * MS
        _frame(w, ex, t, "client", 8, b"\x03\xe8")  # close 1000, each way
        t += rng.randint(1, 4) * MS
        _frame(w, ex, t, "server", 8, b"\x03\xe8")
        w.end(ex, "complete", t_ns=t + MS)
    return path


def write_all(out: Path = OUT) -> list[Path]:
    """(Re)write every sample into `out`; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_sample(make(), out) for make in SAMPLES]
    paths += [write_anthropic(make(), out) for make in ANTHROPIC_SAMPLES]
    paths += [write_responses(make(), out) for make in RESPONSES_SAMPLES]
    paths += [write_gemini(make(), out) for make in GEMINI_SAMPLES]
    return [
        *paths,
        write_gemini_sse(out),
        write_deepseek_chunks(out),
        write_ollama_native(out),
        write_ollama_agent(out),
        write_codex_websocket(out),
        write_realtime(out),
        write_bedrock(out),
    ]


def main() -> None:
    for p in write_all():
        print(p.relative_to(OUT.parent))


if __name__ == "__main__":
    main()
