"""A stand-in for the Gemini API as the Gemini CLI talks to it (tests/fakes/scripted.py's
server; its base URL is what GOOGLE_GEMINI_BASE_URL names):

- `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, the agent's turns,
  streamed as AI Studio streams them (`data: <GenerateContentResponse>` events, CRLF, no
  `[DONE]`, the last event carrying `finishReason` and `usageMetadata`). A conversation
  whose last content holds no `functionResponse` gets a call to the CLI's shell tool,
  `run_shell_command` `{"command": "echo hello"}`, whole in one part with the
  `thoughtSignature` a Gemini 3 model sends (and no `functionCall.id`: the API sends
  none); one that sends the tool's result back gets the answer, in two events.
- `POST /v1beta/models/{model}:generateContent`, the CLI's side calls (its model
  router's complexity score, its next-speaker check): one JSON document answering the
  `responseJsonSchema` the request asks for.
- anything else: 404, as the API says it.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from .scripted import Answer, Received, ScriptedUpstream, as_json, sse

COMMAND = "echo hello"
TOOL = "run_shell_command"
ANSWER = ["The command printed", ": hello"]
SIGNATURE = "CiQBVKhc7sAHKs2gm1x+JTYGAlg0NmQiSvWp2aDC4Qj0AwEfpCoSSQE="
USAGE = {"promptTokenCount": 812, "candidatesTokenCount": 9, "totalTokenCount": 821}


def _event(parts: list[dict[str, Any]], model: str, finish: bool, n: int) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    event: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": model,
        "responseId": f"fake-gemini-{n}",
    }
    if finish:
        event["usageMetadata"] = USAGE
    return event


def answered(body: Any) -> bool:
    """Whether the conversation's last content sends a tool's result back."""
    contents = body.get("contents") if isinstance(body, dict) else None
    if not isinstance(contents, list) or not contents or not isinstance(contents[-1], dict):
        return False
    parts = contents[-1].get("parts")
    return isinstance(parts, list) and any(
        isinstance(p, dict) and "functionResponse" in p for p in parts
    )


def _json_answer(body: Any) -> dict[str, Any]:
    """The object a side call's `responseJsonSchema` asks for, as its model would say it."""
    config = body.get("generationConfig") if isinstance(body, dict) else None
    schema = (config or {}).get("responseJsonSchema") or {}
    properties = schema.get("properties") or {}
    if "complexity_score" in properties:
        return {"complexity_reasoning": "One explicit command.", "complexity_score": 5}
    if "next_speaker" in properties:
        return {"reasoning": "The task is done.", "next_speaker": "user"}
    return {name: "" for name in schema.get("required") or []}


class FakeGeminiApi(ScriptedUpstream):
    """The fake Gemini API (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0

    def streams(self) -> list[Received]:
        return [r for r in self.received if ":streamGenerateContent" in r.path]

    def answer(self, request: Received) -> Answer:
        path = unquote(request.path.split("?", 1)[0])
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        body = request.json()
        if request.method == "POST" and path.endswith(":streamGenerateContent"):
            self.turns += 1
            n = self.turns
            if not answered(body):
                call = {"functionCall": {"name": TOOL, "args": {"command": COMMAND}}}
                parts = [{**call, "thoughtSignature": SIGNATURE}]
                return Answer(
                    200, "text/event-stream", sse([_event(parts, model, True, n)], crlf=True)
                )
            events = [
                _event([{"text": ANSWER[0]}], model, False, n),
                _event([{"text": ANSWER[1]}], model, True, n),
            ]
            return Answer(200, "text/event-stream", sse(events, crlf=True))
        if request.method == "POST" and path.endswith(":generateContent"):
            text = json.dumps(_json_answer(body))
            return as_json(200, _event([{"text": text}], model, True, 0))
        return as_json(
            404,
            {"error": {"code": 404, "message": f"{path} is not found", "status": "NOT_FOUND"}},
        )
