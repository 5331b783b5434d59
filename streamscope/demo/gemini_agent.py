"""A small tool-calling agent on the real google-genai SDK, the kind streamscope records.

It opens a chat with the served sample's system instruction and function declarations,
sends its first question (its first content's text) with
`chat.send_message_stream(...)`, runs every function call the chunks carry, answers each
with a function response, reads the second answer, and prints what it did as one JSON
line (a second turn the provider refused, as gemini-signature-dropped's 400, is said in
it: the demo goes on to the replay of the refusal). The SDK keeps the chat's history itself (each streamed chunk's content as it came,
thought signatures included). It reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY like
any google-genai program (`streamscope record` sets the base URL); for a Vertex AI
sample (its URL names a project and a location) it is a Vertex AI client instead, on
GOOGLE_VERTEX_BASE_URL, with a made-up token (a served sample asks for none).

    python -m streamscope.demo.gemini_agent
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from google import genai
from google.genai import errors, types

from . import sample

MODEL = os.environ.get("AGENT_MODEL", "gemini-3-pro-preview")


def _texts(parts: object) -> str:
    """The text of a content's parts, joined."""
    if not isinstance(parts, list):
        return ""
    return "".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _parts(content: object) -> object:
    return content.get("parts") if isinstance(content, dict) else None


REQUEST = sample.request()
CONTENTS = REQUEST.get("contents")
QUESTION = (_texts(_parts(CONTENTS[0])) if CONTENTS else "") if REQUEST else "What is the weather?"
SYSTEM = _texts(_parts(REQUEST.get("systemInstruction"))) or None
TOOLS: list[Any] = [
    d
    for tool in sample.tools(REQUEST)
    if isinstance(tool, dict)
    for d in tool.get("functionDeclarations") or []
]
# a Vertex AI sample's project and location: the agent is a Vertex client too
VERTEX = re.search(r"/projects/([^/]+)/locations/([^/]+)/", sample.url())


def run_tool(name: str, args: dict | None) -> dict:
    return {"tool": name, "input": args or {}, "result": "ok"}


def main() -> None:
    # the SDK wants a key; a served sample asks for none
    os.environ.setdefault("GEMINI_API_KEY", "streamscope-demo")
    if VERTEX:  # (streamed arguments are Vertex AI's: its client sends them back)
        from google.oauth2.credentials import Credentials

        project, location = VERTEX.groups()
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
    said: dict[str, str] = {}
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
        try:
            answer = "".join(chunk.text or "" for chunk in chat.send_message_stream(results))
        except errors.APIError as refused:  # a sample whose provider refused the turn
            said["refused"] = f"{refused.code} {refused.status}: {refused.message}"
    done = [fc.model_dump(mode="json", exclude_none=True) for fc in calls]
    print(json.dumps({"calls": done, "answer": answer, **said}))


if __name__ == "__main__":
    main()
