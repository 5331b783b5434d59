"""What the stand-in provider (tests/upstream.py) streams to a Gemini client, as Google's
services stream it (`:streamGenerateContent?alt=sse`: `data: <GenerateContentResponse>`
events, no `[DONE]`; the body ends after the candidate's `finishReason`).

Two ways the same tool call comes:

- AI Studio (the Gemini API): each call whole in one part, two parallel calls in one
  event, the first carrying the `thoughtSignature` the client must send back; CRLF lines,
  as Google's front ends send them.
- Vertex AI with `streamFunctionCallArguments`: one call streamed over several events, its
  name first (`willContinue`), then `partialArgs` by JSON path, then an empty
  `functionCall: {}` that ends it; LF lines.

A request whose contents end in function responses gets the answer's text, streamed;
`:generateContent` gets the whole of a turn as one JSON document. A model whose name ends
in `-cut` has its stream cut after CUT_AFTER events (tests/upstream.py).
"""

from __future__ import annotations

import orjson

MODEL = "gemini-2.5-flash"
VERTEX_MODEL = "gemini-2.5-pro"
QUESTION = "What is the weather in Paris and in London right now?"
WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING"},
            "unit": {"type": "STRING", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
SIGNATURE = "CiQBVKhc7sAHKs2gm1x+JTYGAlg0NmQiSvWp2aDC4Qj0AwEfpCoSSQE="  # base64, as sent
CALLS = [
    {"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}},
    {"name": "get_weather", "args": {"city": "London", "unit": "celsius"}},
]
VERTEX_CALL = {"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}}
ANSWER = ["It is 14 °C and partly cloudy in Paris", ", and 11 °C with light rain in London."]
CUT_AFTER = 1  # before the event that names the finishReason
USAGE = {"promptTokenCount": 61, "candidatesTokenCount": 24, "totalTokenCount": 85}


def _event(doc: dict, crlf: bool) -> bytes:
    end = b"\r\n\r\n" if crlf else b"\n\n"
    return b"data: " + orjson.dumps(doc) + end


def _chunk(parts: list[dict], finish: bool = False, model: str = MODEL) -> dict:
    candidate: dict = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    doc: dict = {"candidates": [candidate], "modelVersion": model, "responseId": "gX4sZ-up"}
    if finish:
        doc["usageMetadata"] = USAGE
    return doc


def whole_calls() -> list[dict]:
    """AI Studio's turn: a little text, then both calls in one event with the signature."""
    first, second = CALLS
    return [
        _chunk([{"text": "Let me look both up."}]),
        _chunk(
            [
                {"functionCall": first, "thoughtSignature": SIGNATURE},
                {"functionCall": second},
            ],
            finish=True,
        ),
    ]


def streamed_call() -> list[dict]:
    """Vertex AI's turn with streamFunctionCallArguments: the call in pieces."""

    def call(function_call: dict, **extra) -> dict:
        return _chunk([{"functionCall": function_call, **extra}], model=VERTEX_MODEL)

    end = _chunk([{"functionCall": {}}], finish=True, model=VERTEX_MODEL)
    return [
        call({"name": "get_weather", "willContinue": True}, thoughtSignature=SIGNATURE),
        call(
            {
                "partialArgs": [{"jsonPath": "$.city", "stringValue": "Par", "willContinue": True}],
                "willContinue": True,
            }
        ),
        call({"partialArgs": [{"jsonPath": "$.city", "stringValue": "is"}], "willContinue": True}),
        call(
            {
                "partialArgs": [{"jsonPath": "$.unit", "stringValue": "celsius"}],
                "willContinue": True,
            }
        ),
        end,
    ]


def answer() -> list[dict]:
    """The turn after the function responses: the answer's text in two events."""
    first, rest = ANSWER
    return [_chunk([{"text": first}]), _chunk([{"text": rest}], finish=True)]


def _answered(request: dict) -> bool:
    last = (request.get("contents") or [{}])[-1]
    return any("functionResponse" in part for part in last.get("parts", []))


def _streams_arguments(request: dict) -> bool:
    calling = (request.get("toolConfig") or {}).get("functionCallingConfig") or {}
    # google-genai 3.6 sends this field in snake case; the API reads both, as protobuf does
    return True in (
        calling.get("streamFunctionCallArguments"),
        calling.get("stream_function_call_arguments"),
    )


def turn(request: dict) -> list[dict]:
    """The GenerateContentResponse documents that answer a request body."""
    if _answered(request):
        return answer()
    return streamed_call() if _streams_arguments(request) else whole_calls()


def events_for(request: dict) -> list[bytes]:
    """The reads of a `:streamGenerateContent?alt=sse` answer, one event a read."""
    crlf = not _streams_arguments(request)  # Vertex's stream here: LF lines
    return [_event(doc, crlf) for doc in turn(request)]


def array_reads(request: dict) -> list[bytes]:
    """The reads of a `:streamGenerateContent` answer without `alt=sse`, as Google sends
    it: one JSON array, an element a read (`[{...}`, `\n,\r\n{...}`, ...), then `\n]`."""
    docs = [orjson.dumps(doc) for doc in turn(request)]
    return [b"[" + docs[0], *(b"\n,\r\n" + d for d in docs[1:]), b"\n]"]


def whole_response(request: dict) -> bytes:
    """The `:generateContent` answer: the turn's documents as one (parts joined); its
    calls come whole (Vertex AI streams arguments only in a stream)."""
    docs = answer() if _answered(request) else whole_calls()
    parts = [part for doc in docs for part in doc["candidates"][0]["content"]["parts"]]
    merged = _chunk(parts, finish=True, model=docs[-1]["modelVersion"])
    return orjson.dumps(merged)
