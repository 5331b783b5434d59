"""A Python client that talks to the Responses API as codex-cli does, for the tests that
cannot count on the real codex binary: `python -m tests.fakes.codex_client [BASE_URL]`
(default: $OPENAI_BASE_URL, which `streamscope record` sets).

Over a WebSocket (`GET {base}/responses`, `OpenAI-Beta: responses_websockets=2026-02-06`,
permessage-deflate offered, as codex's tungstenite client does) it sends what codex 0.171
sends: a `generate: false` prewarm with no input, then the turn with the whole first input
naming the prewarm by `previous_response_id`, then, once it has run the shell call the model
made (`sh -c CMD`), one more `response.create` naming the response that made the call and
carrying only the call's output. Each turn ends at `response.completed` (an `error` or
`response.failed` ends the run, status 1). When the upgrade is refused (any answer but 101)
it falls back, as codex does, to `POST {base}/responses` with `stream: true` and the whole
history each turn, read as SSE.

Every message it sends is the same bytes run after run (fixed ids), so a test can compare
what the upstream received with and without the recorder in between. It prints one JSON
line: {"transport": "websocket" | "http", "handshake": status, "answer": text, "output":
the tool's output, "responses": [ids]}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

SESSION = "0199a000-0000-7000-8000-000000000001"
MODEL = "gpt-5.1-codex"
PROMPT = "run echo hello"
TOOLS = [
    {
        "type": "function",
        "name": "exec_command",
        "description": "Runs a command in a PTY, returning output or a session ID.",
        "strict": False,
        "parameters": {
            "type": "object",
            "properties": {"cmd": {"type": "string", "description": "Shell command to execute."}},
            "required": ["cmd"],
            "additionalProperties": False,
        },
    }
]
HEADERS = {
    "Authorization": "Bearer sk-fake-codex-client-0000",
    "OpenAI-Beta": "responses_websockets=2026-02-06",
    "originator": "codex_exec",
    "version": "0.171.0",
    "session-id": SESSION,
    "User-Agent": "codex_exec/0.171.0 (streamscope tests)",
}


def base(request: dict[str, Any]) -> dict[str, Any]:
    """The fields every request of the session carries, in codex's order."""
    return {
        "model": MODEL,
        "stream": True,
        **request,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "store": False,
        "prompt_cache_key": SESSION,
    }


def user_message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def run_tool(call: dict[str, Any]) -> dict[str, Any]:
    """The call's output item: its `cmd` run by sh."""
    arguments = json.loads(call.get("arguments") or "{}")
    done = subprocess.run(
        ["sh", "-c", arguments.get("cmd", "")], capture_output=True, text=True, timeout=30
    )
    return {"type": "function_call_output", "call_id": call["call_id"], "output": done.stdout}


class Failed(Exception):
    """The upstream answered an error: one line, status 1."""


def completed(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The response a turn's events ended with (Failed for an error or a failure)."""
    last = events[-1] if events else {}
    if last.get("type") != "response.completed":
        raise Failed(f"the turn ended with {json.dumps(last)[:300]}")
    return last["response"]


def calls_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in response.get("output") or [] if i.get("type") == "function_call"]


def text_of(response: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "")
        for item in response.get("output") or []
        if item.get("type") == "message"
        for part in item.get("content") or []
    )


def over_websocket(url: str) -> dict[str, Any]:
    """The session over one socket; InvalidStatus when the upgrade is refused."""
    ws_url = "ws" + url.removeprefix("http") + "/responses"
    with connect(ws_url, additional_headers=HEADERS, proxy=None, open_timeout=10) as ws:

        def turn(request: dict[str, Any]) -> dict[str, Any]:
            ws.send(json.dumps({"type": "response.create", **base(request)}))
            events: list[dict[str, Any]] = []
            while True:
                event = json.loads(ws.recv(timeout=30))
                events.append(event)
                if event.get("type") in ("response.completed", "response.failed", "error"):
                    return completed(events)

        prewarm = turn({"input": [], "generate": False})
        first = turn(
            {"previous_response_id": prewarm["id"], "input": [user_message(PROMPT)], "tools": TOOLS}
        )
        responses, answer, outputs = [prewarm["id"], first["id"]], first, []
        while calls_of(answer):
            outputs = [run_tool(c) for c in calls_of(answer)]
            answer = turn({"previous_response_id": answer["id"], "input": outputs, "tools": TOOLS})
            responses.append(answer["id"])
    return {
        "transport": "websocket",
        "handshake": 101,
        "answer": text_of(answer),
        "output": "".join(o["output"] for o in outputs),
        "responses": responses,
    }


def over_http(url: str, handshake: int | None) -> dict[str, Any]:
    """The session over HTTP: the whole history each turn, each answer read as SSE."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    headers = {k: v for k, v in HEADERS.items() if k != "OpenAI-Beta"}
    headers |= {"Content-Type": "application/json", "Accept": "text/event-stream"}

    def turn(history: list[dict[str, Any]]) -> dict[str, Any]:
        body = json.dumps(base({"input": history, "tools": TOOLS})).encode()
        request = urllib.request.Request(url + "/responses", body, headers, method="POST")
        try:
            with opener.open(request, timeout=30) as answer:
                events = [
                    json.loads(line[5:])
                    for line in answer.read().decode().splitlines()
                    if line.startswith("data:")
                ]
        except urllib.error.HTTPError as e:
            raise Failed(f"POST {url}/responses: HTTP {e.code}") from None
        return completed(events)

    history = [user_message(PROMPT)]
    answer, responses, outputs = turn(history), [], []
    responses.append(answer["id"])
    while calls_of(answer):
        outputs = [run_tool(c) for c in calls_of(answer)]
        history += [*calls_of(answer), *outputs]
        answer = turn(history)
        responses.append(answer["id"])
    return {
        "transport": "http",
        "handshake": handshake,
        "answer": text_of(answer),
        "output": "".join(o["output"] for o in outputs),
        "responses": responses,
    }


def main(argv: list[str]) -> int:
    url = (argv[0] if argv else os.environ.get("OPENAI_BASE_URL", "")).rstrip("/")
    if not url.startswith(("http://", "https://")):
        print("codex_client: give the base URL (or set OPENAI_BASE_URL)", file=sys.stderr)
        return 2
    try:
        try:
            said = over_websocket(url)
        except InvalidStatus as refused:  # codex falls back to HTTP on a refused upgrade
            said = over_http(url, refused.response.status_code)
    except Failed as e:
        print(f"codex_client: {e}", file=sys.stderr)
        return 1
    print(json.dumps(said))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
