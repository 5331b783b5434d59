"""What Ollama's native chat is on the wire, as plain functions the faces can be handed:
which requests it claims, its final event, its error document, the facts of a request,
and its anomaly kinds.

`/api/chat` answers with NDJSON (one `ChatResponse` a line), ending with the line that
says `"done": true`; it streams unless the request says `"stream": false`. An error is
the document `{"error": "message"}`, as a whole response or as a line of a stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.anomalies import ERROR, INFO, WARNING

PATH = "/api/chat"
CONTENT_TYPE = "application/x-ndjson"
# Keys of a chat request only Ollama takes (Chat Completions has none of them).
_OWN_KEYS = ("options", "keep_alive", "format", "think")
# Keys that say a body is another dialect's.
_FOREIGN = ("input", "contents", "system", "response_format", "stream_options", "max_tokens")


def claims_request(path: str, body: object) -> bool:
    """A request to `/api/chat` (behind any prefix: a gateway's `/ollama/api/chat`)."""
    return path.endswith(PATH)


def claims_body(body: object) -> bool:
    """A body sent to a path no dialect claims: `messages` and one of Ollama's own keys,
    or a call sent back with its arguments as an object, or a tool result naming its
    tool (Chat Completions sends arguments as a string and answers by id)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    if any(key in body for key in _FOREIGN):
        return False
    if any(key in body for key in _OWN_KEYS):
        return True
    for message in body["messages"]:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and "tool_name" in message:
            return True
        for call in (
            message.get("tool_calls") or () if isinstance(message.get("tool_calls"), list) else ()
        ):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), dict):
                return True
    return False


_OTHERS = ("choices", "type", "candidates", "object")


def claims_event(payload: object, event: str | None) -> bool:
    """A `ChatResponse` line: a `message` object with a `role`, or a boolean `done` beside
    `model`, `created_at` or `message` (no other dialect's keys)."""
    if type(payload) is not dict or any(key in payload for key in _OTHERS):
        return False
    message = payload.get("message")
    if type(message) is dict and "role" in message:
        return True
    return type(payload.get("done")) is bool and any(
        key in payload for key in ("model", "created_at", "message")
    )


def final_event(payload: object) -> bool:
    """The line that ends a stream: `"done": true` (or an error line, after which the
    server sends nothing)."""
    return type(payload) is dict and (payload.get("done") is True or "error" in payload)


def error_document(message: str) -> dict[str, Any]:
    """What Ollama answers an error with (whole, or as a stream's last line)."""
    return {"error": message}


def error_message(document: object) -> str | None:
    """The message of an error document (None: the document is not one)."""
    message = document.get("error") if isinstance(document, dict) else None
    return message if isinstance(message, str) else None


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """What a request says of its stream."""

    model: object
    stream: bool  # Ollama streams unless `"stream": false`
    tools: list[Any] | None
    match: object  # what playback matches a request on: its messages as sent


def request_facts(body: object) -> RequestFacts:
    body = body if isinstance(body, dict) else {}
    tools = body.get("tools")
    return RequestFacts(
        model=body.get("model"),
        stream=body.get("stream", True) is not False,
        tools=tools if isinstance(tools, list) else None,
        match=body.get("messages"),
    )


# kind -> (severity, what it means in plain words): this dialect's own kinds.
KINDS: dict[str, tuple[str, str]] = {
    "call-before-done": (
        INFO,
        "calls come in a done: false line before the final one (clients reading only done: true lose them)",
    ),
    "args-string": (
        ERROR,
        "function.arguments is a JSON string, not an object (a proxy re-encoded it)",
    ),
    "done-line-missing": (WARNING, "the body ended with no done: true line"),
    "done-reason-stop-with-calls": (
        INFO,
        "calls were made and done_reason is stop (Ollama has no tool-call done reason)",
    ),
    "line-after-done": (WARNING, "a line arrives after the done: true line"),
}
