"""A small tool-calling agent on the real google-genai SDK, the kind streamscope records.

It opens a chat with the served sample's system instruction and function declarations,
sends its first question with `chat.send_message_stream(...)`, runs every function call
the chunks carry, answers each with a function response, reads the second answer, and
prints what it did as one JSON line. The SDK keeps the chat's history itself (each
streamed chunk's content as it came, thought signatures included). It reads
GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY like any google-genai program (`streamscope
record` sets the base URL); with AGENT_VERTEX (`project/location`) it is a Vertex AI
client instead, on GOOGLE_VERTEX_BASE_URL, with a made-up token (a served sample asks
for none).

    python -m streamscope.demo.gemini_agent
"""

from __future__ import annotations

import json
import os

from google import genai
from google.genai import types

MODEL = os.environ.get("AGENT_MODEL", "gemini-3-pro-preview")
TOOLS = json.loads(os.environ.get("AGENT_TOOLS", "[]"))
QUESTION = os.environ.get("AGENT_INPUT", "What is the weather?")
SYSTEM = os.environ.get("AGENT_INSTRUCTIONS") or None
VERTEX = os.environ.get("AGENT_VERTEX")  # "project/location": a Vertex AI client


def run_tool(name: str, args: dict | None) -> dict:
    return {"tool": name, "input": args or {}, "result": "ok"}


def main() -> None:
    if VERTEX:  # (streamed arguments are Vertex AI's: its client sends them back)
        from google.oauth2.credentials import Credentials

        project, location = VERTEX.split("/", 1)
        token = Credentials(token="streamscope-demo")  # (never expires: never refreshed)
        client = genai.Client(vertexai=True, project=project, location=location, credentials=token)
    else:
        client = genai.Client()
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=TOOLS)] if TOOLS else None,
        system_instruction=SYSTEM,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    chat = client.chats.create(model=MODEL, config=config)
    calls = [
        fc for chunk in chat.send_message_stream(QUESTION) for fc in chunk.function_calls or []
    ]
    answer = ""
    if calls:
        results = [  # each answered by its name, and its id when it came with one
            types.Part(
                function_response=types.FunctionResponse(
                    id=fc.id,
                    name=fc.name or "",
                    response=run_tool(fc.name, fc.args),  # type: ignore[arg-type]
                )
            )
            for fc in calls
        ]
        answer = "".join(chunk.text or "" for chunk in chat.send_message_stream(results))
    done = [fc.model_dump(mode="json", exclude_none=True) for fc in calls]
    print(json.dumps({"calls": done, "answer": answer}))


if __name__ == "__main__":
    main()
