"""A small agent on the real google-genai client, as a user writes one: it streams a turn
with a function tool, runs the calls the model makes, sends their results back in a
second streamed request, then asks once more without streaming (`:generateContent`).

`python -m tests.gemini_agent gemini` (the Gemini API, its key from GEMINI_API_KEY) or
`... vertex` (Vertex AI with a project, a region and an access token, asking for streamed
function call arguments) takes its base URL from GOOGLE_GEMINI_BASE_URL or
GOOGLE_VERTEX_BASE_URL, as `streamscope record` sets them, and prints what it got as JSON;
`run(client, vertex)` does the same in-process, for a client made otherwise (served by
`streamscope serve` or `playback_transport`).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any

from google import genai
from google.genai import types

from tests.gemini_stream import MODEL, QUESTION, VERTEX_MODEL, WEATHER

PROJECT, LOCATION = "streamscope-test", "us-central1"
WEATHER_NOW = {"Paris": "14 °C, partly cloudy", "London": "11 °C, light rain"}


def config(vertex: bool) -> types.GenerateContentConfig:
    tools = [types.Tool(function_declarations=[types.FunctionDeclaration(**WEATHER)])]
    if not vertex:
        return types.GenerateContentConfig(tools=tools)
    calling = types.FunctionCallingConfig(mode="AUTO", stream_function_call_arguments=True)
    return types.GenerateContentConfig(
        tools=tools, tool_config=types.ToolConfig(function_calling_config=calling)
    )


def assemble(parts: list[types.Part]) -> list[dict[str, Any]]:
    """The calls the parts make: whole ones as they are, streamed ones (Vertex AI's
    `partialArgs`) put together from their pieces, each with its thought signature."""
    calls: list[dict[str, Any]] = []
    building: dict[str, Any] | None = None
    for part in parts:
        call = part.function_call
        if call is None:
            continue
        signature = part.thought_signature
        if building is None and call.name and not call.will_continue:
            calls.append({"name": call.name, "args": call.args or {}, "signature": signature})
            continue
        if building is None:
            building = {"name": call.name, "args": {}, "signature": signature}
        for piece in call.partial_args or []:
            key = piece.json_path.removeprefix("$.")
            building["args"][key] = building["args"].get(key, "") + (piece.string_value or "")
        if not call.will_continue:
            calls.append(building)
            building = None
    for call in calls:
        call["signature"] = base64.b64encode(call["signature"] or b"").decode()
    return calls


def run(client: genai.Client, vertex: bool) -> dict[str, Any]:
    model = VERTEX_MODEL if vertex else MODEL
    setup = config(vertex)
    question = types.Content(role="user", parts=[types.Part(text=QUESTION)])
    parts: list[types.Part] = []
    finish = None
    for chunk in client.models.generate_content_stream(
        model=model, contents=[question], config=setup
    ):
        candidate = chunk.candidates[0]
        parts += candidate.content.parts or []
        finish = candidate.finish_reason or finish
    calls = assemble(parts)
    if vertex:  # the assembled calls go back, not their pieces
        said = [
            types.Part(
                function_call=types.FunctionCall(name=c["name"], args=c["args"]),
                thought_signature=base64.b64decode(c["signature"]) or None,
            )
            for c in calls
        ]
    else:  # the parts as they came: the signature stays on its part
        said = parts
    results = [
        types.Part.from_function_response(
            name=c["name"], response={"weather": WEATHER_NOW[c["args"]["city"]]}
        )
        for c in calls
    ]
    history = [
        question,
        types.Content(role="model", parts=said),
        types.Content(role="user", parts=results),
    ]
    answer = "".join(
        chunk.text or ""
        for chunk in client.models.generate_content_stream(
            model=model, contents=history, config=setup
        )
    )
    whole = client.models.generate_content(model=model, contents=[question], config=setup)
    return {
        "calls": calls,
        "parts": [p.model_dump(mode="json", exclude_none=True) for p in parts],
        "finish": str(finish.value if finish is not None else None),
        "answer": answer,
        "whole_calls": [{"name": c.name, "args": c.args} for c in whole.function_calls or []],
    }


def vertex_client(
    token: str, base_url: str | None = None, location: str = LOCATION
) -> genai.Client:
    """A Vertex AI client as a Google Cloud user makes one: a project, a region and an
    access token (here given, not looked up); its base URL `base_url`, else the
    environment's (GOOGLE_VERTEX_BASE_URL)."""
    from google.oauth2.credentials import Credentials

    return genai.Client(
        vertexai=True,
        project=PROJECT,
        location=location,
        credentials=Credentials(token=token),
        http_options=types.HttpOptions(base_url=base_url) if base_url else None,
    )


def gemini_client(key: str, base_url: str) -> genai.Client:
    """A Gemini API client with its key, at `base_url`."""
    return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=base_url))


def client_from_env(vertex: bool) -> genai.Client:
    """The client a user makes: its base URL from the environment (GOOGLE_*_BASE_URL)."""
    if not vertex:
        return genai.Client(api_key=os.environ["GEMINI_API_KEY"])
    return vertex_client(os.environ["AGENT_ACCESS_TOKEN"])


if __name__ == "__main__":
    vertex = sys.argv[1] == "vertex"
    print(json.dumps(run(client_from_env(vertex), vertex)))
