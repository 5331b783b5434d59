"""A stand-in for an OpenAI Chat Completions API as Qwen Code talks to it
(tests/fakes/scripted.py's server; its base URL, with `/v1`, is what OPENAI_BASE_URL
names):

- `POST /v1/chat/completions` with `stream: true`: SSE `data:` events ended by
  `data: [DONE]`, as OpenAI streams them (and DashScope's compatible mode). A
  conversation whose last message is no `tool` message gets a call to the agent's shell
  tool (the one the request declares: Qwen Code's `run_shell_command`), its id and name
  in the first delta, its arguments `{"command": "echo hello"}` in fragments over three
  more; one that sends the tool's result back gets the answer, in two deltas. With
  `stream_options.include_usage`, a last chunk with empty `choices` carries the usage.
- the same without `stream`: one `chat.completion` document with a text answer (side
  calls).
- anything else: 404, as OpenAI says it.
"""

from __future__ import annotations

from typing import Any

from .scripted import Answer, Received, ScriptedUpstream, as_json, sse

COMMAND = "echo hello"
SHELL_TOOLS = ("run_shell_command", "shell", "bash", "Bash")
ANSWER = ["The command printed", ": hello"]
CALL_ID = "call_fake0qwen0shell01"
# the arguments as a model streams them: cut inside a key and inside the value
FRAGMENTS = ['{"comm', 'and": "echo', ' hello"}']
USAGE = {"prompt_tokens": 812, "completion_tokens": 9, "total_tokens": 821}


def declared_shell(body: Any) -> str:
    """The shell tool's name among the request's tools (the first this fake knows)."""
    names = []
    for tool in body.get("tools") or [] if isinstance(body, dict) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return next((n for n in SHELL_TOOLS if n in names), "run_shell_command")


def answered(body: Any) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    return bool(messages) and isinstance(messages[-1], dict) and messages[-1].get("role") == "tool"


class FakeChatCompletions(ScriptedUpstream):
    """The fake Chat Completions API (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def streams(self) -> list[Received]:
        return [r for r in self.received if (r.json() or {}).get("stream") is True]

    def _chunk(self, delta: dict[str, Any], finish: str | None, model: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake{self.turns}",
            "object": "chat.completion.chunk",
            "created": 1764684000 + self.turns,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def answer(self, request: Received) -> Answer:
        path = request.path.split("?", 1)[0]
        body = request.json()
        if request.method != "POST" or not path.endswith("/chat/completions"):
            return as_json(404, {"error": {"message": f"Unknown request URL: {path}"}})
        if not isinstance(body, dict):
            return as_json(400, {"error": {"message": "We could not parse the JSON body."}})
        model = str(body.get("model") or "qwen3-coder-plus")
        self.turns += 1
        if not body.get("stream"):
            message = {"role": "assistant", "content": "".join(ANSWER)}
            return as_json(
                200,
                {
                    "id": f"chatcmpl-fake{self.turns}",
                    "object": "chat.completion",
                    "created": 1764684000 + self.turns,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": USAGE,
                },
            )
        role = {"role": "assistant", "content": ""}
        if answered(body):
            chunks = [
                self._chunk({**role, "content": ANSWER[0]}, None, model),
                self._chunk({"content": ANSWER[1]}, None, model),
                self._chunk({}, "stop", model),
            ]
        else:
            name = declared_shell(body)
            first = {"index": 0, "id": CALL_ID, "type": "function"}
            chunks = [
                self._chunk(
                    {
                        **role,
                        "tool_calls": [{**first, "function": {"name": name, "arguments": ""}}],
                    },
                    None,
                    model,
                ),
                *[
                    self._chunk(
                        {"tool_calls": [{"index": 0, "function": {"arguments": f}}]}, None, model
                    )
                    for f in FRAGMENTS
                ],
                self._chunk({}, "tool_calls", model),
            ]
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            usage = self._chunk({}, None, model)
            chunks.append({**usage, "choices": [], "usage": USAGE})
        return Answer(200, "text/event-stream", sse(chunks, done=True))
