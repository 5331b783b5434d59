"""A Gemini API client on google-genai, as its users read a stream.

    python tests/conformance_clients/google_genai.py

Client().models.generate_content_stream(...), the function_call parts of each chunk
collected in order (streamscope's `parts` strategy); the follow-up sends the model's
Content with those parts as the SDK gave them (thought signatures kept) and one
function_response part per call, answering its id and name. Reads
GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY as the SDK does; one attempt, no retries.
"""

from __future__ import annotations

from typing import Any

import common
from google import genai
from google.genai import types

MODEL = "gemini-2.5-flash"


def gemini() -> dict[str, Any]:
    common.dummy_key("GEMINI_API_KEY")
    once = types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=1))
    client = genai.Client(http_options=once)
    tools = [
        types.Tool(function_declarations=[types.FunctionDeclaration(**f) for f in common.FUNCTIONS])
    ]
    config = types.GenerateContentConfig(tools=tools)
    history: list[Any] = [types.Content(role="user", parts=[types.Part(text=common.QUESTION)])]
    parts: list[types.Part] = []
    text = ""
    for chunk in client.models.generate_content_stream(
        model=MODEL, contents=history, config=config
    ):
        for candidate in chunk.candidates or []:
            for part in (candidate.content and candidate.content.parts) or []:
                if part.function_call is not None:
                    parts.append(part)
                elif part.text and not part.thought:
                    text += part.text
    if not parts:
        return {"calls": [], "answer": text}
    calls, results = [], []
    for part in parts:
        call = part.function_call
        assert call is not None
        args = common.parse(call.args)
        calls.append({"id": call.id, "name": call.name, "arguments": call.args})
        response = {"result": common.result(call.name or "", args)}
        results.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=response
                )
            )
        )
    history += [types.Content(role="model", parts=parts), types.Content(role="user", parts=results)]
    answer = ""
    for chunk in client.models.generate_content_stream(
        model=MODEL, contents=history, config=config
    ):
        answer += chunk.text or ""
    return {"calls": calls, "answer": answer}


if __name__ == "__main__":
    common.run({"gemini": gemini})
