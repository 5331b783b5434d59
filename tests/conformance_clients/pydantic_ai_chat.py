"""A pydantic-ai agent on OpenAIChatModel (Chat Completions), as its users write one.

    python tests/conformance_clients/pydantic_ai_chat.py

Agent.run_stream(...) with a few declared tools; pydantic-ai runs the calls itself and
sends the follow-up as it builds it. It runs only declared tools: a call of another name,
or arguments that do not validate, get its retry prompt (its own behaviour, left to
stand), at most once (retries=1). The provider's base URL is OPENAI_BASE_URL; the openai
client under it makes no retries.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import common
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

MODEL = "gpt-4o-mini"


def agent() -> Agent[None, str]:
    common.dummy_key("OPENAI_API_KEY")
    base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    client = AsyncOpenAI(base_url=base_url, max_retries=0)
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    made: Agent[None, str] = Agent(model, retries=1)

    @made.tool_plain
    def get_weather(city: str, unit: str = "celsius") -> str:
        """Current weather for a city."""
        return common.result("get_weather", {"city": city, "unit": unit})

    @made.tool_plain
    def get_local_time(timezone: str) -> str:
        """Local time in a timezone."""
        return common.result("get_local_time", {"timezone": timezone})

    return made


async def ask() -> dict[str, Any]:
    async with agent().run_stream(common.QUESTION) as run:
        answer = ""
        async for so_far in run.stream_output(debounce_by=None):
            answer = so_far  # the output so far, streamed
        messages = run.all_messages()
    calls = [
        {"id": part.tool_call_id, "name": part.tool_name, "arguments": part.args}
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]
    return {"calls": calls, "answer": answer}


if __name__ == "__main__":
    common.run({"agent": lambda: asyncio.run(ask())})
