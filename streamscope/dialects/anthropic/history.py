"""How an Anthropic Messages request reads: `system`, `messages` of content blocks, tools.

An assistant message's `tool_use` (and `server_tool_use`, `mcp_tool_use`) blocks are the
calls sent back, with their `input` object; each `tool_result` block of the following
user message answers one `tool_use_id`. Server and MCP tools are run by the provider:
they come back with the assistant message and need no result from the agent.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...core.history import History, Result, SentCall, Tool, Turn, Words
from .robust import TOOL_BLOCKS

WORDS = Words(result="tool_result block", result_id="tool_use_id")


def _input_text(value: object) -> object:
    """The input sent back, as JSON text when it is an object (the API takes nothing else)."""
    if isinstance(value, dict):
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # nested past orjson's writer
            import json

            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def sent_call(block: dict[Any, Any]) -> SentCall:
    kind = block.get("type")
    return SentCall(
        block.get("id"),
        block.get("name"),
        _input_text(block.get("input")),
        kind,
        needs_result=kind == "tool_use",
    )


def _same_type(kind: object) -> object:
    return kind


def _turn(m: object) -> Turn:
    if not isinstance(m, dict):
        return Turn("?", raw=m)
    role, content = m.get("role"), m.get("content")
    turn = Turn(str(role), content)
    if not isinstance(content, list):
        return turn
    blocks = [b for b in content if isinstance(b, dict)]
    rest = [b for b in content if not (isinstance(b, dict) and b.get("type") in TOOL_BLOCKS)]
    if role == "assistant":
        calls = [sent_call(b) for b in blocks if b.get("type") in TOOL_BLOCKS]
        if calls:
            turn.calls, turn.content = calls, rest or None
        return turn
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if results:
        # is_error as sent; the API reads a result without it as a success
        turn.results = [
            Result(b.get("tool_use_id"), b.get("content"), b.get("is_error", False))
            for b in results
        ]
        others = [
            b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")
        ]
        turn.content = others or None
    return turn


def _tool(tool: object) -> Tool:
    tool = tool if isinstance(tool, dict) else {}
    return Tool(tool.get("name"), tool.get("description") or tool.get("type"))


def history(body: object) -> History | None:
    """The request body's history (no turns without a `messages` list); None when the
    body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    tools = body.get("tools")
    skip = ("messages", "tools", "system")
    return History(
        [_turn(m) for m in messages],
        system=body.get("system"),
        tools=[_tool(t) for t in tools] if isinstance(tools, list) else [],
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=_same_type,
        items=messages,
        error_field="is_error",
    )
