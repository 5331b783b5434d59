"""How an Anthropic Messages request reads: `system`, `messages` of content blocks, tools.

An assistant message's `tool_use` (and `server_tool_use`, `mcp_tool_use`) blocks are the
calls sent back, with their `input` object; each `tool_result` block of the following
user message answers one `tool_use_id`. Server and MCP tools are run by the provider:
they come back with the assistant message and need no result from the agent.
Consecutive messages of one role make one turn, as the API combines them.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...core.history import CallIds, History, Result, SentCall, Tool, Turn, Words
from .robust import TOOL_BLOCKS

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    False,
    "the model gives every `tool_use` block its `id` (`toolu_...`), which the API requires back on the block and on the `tool_result`'s `tool_use_id`: another id is `tool-call-id-substituted`",
)


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


def _combined(messages: list[Any]) -> list[Turn]:
    """One turn per message, but consecutive messages of one role that carry calls or
    results make one turn: the API combines consecutive user or assistant turns into one
    (the Messages API reference), so a `tool_result` answers the `tool_use` blocks of the
    whole assistant run before it. Only messages of content blocks are combined (a
    message that is a string keeps its own turn)."""
    turns: list[Turn] = []
    for k, m in enumerate(messages):
        turn = _turn(m)
        turn.items = (k, k)
        for r in turn.results:  # (where each result stands once messages are combined)
            r.item = k
        last = turns[-1] if turns else None
        if (
            last is not None
            and last.role == turn.role
            and turn.role in ("user", "assistant")
            and isinstance(m, dict)
            and isinstance(m.get("content"), list)
            and isinstance(messages[_first(last)].get("content"), list)
            and (turn.calls or turn.results or last.calls or last.results)
        ):
            if turn.calls:
                last.calls = [*(last.calls or ()), *turn.calls]
            last.results += turn.results
            if isinstance(turn.content, list):  # (a combined message's blocks are a list)
                before = last.content if isinstance(last.content, list) else []
                last.content = [*before, *turn.content]
            last.items = (_first(last), k)
            continue
        turns.append(turn)
    return turns


def _first(turn: Turn) -> int:
    assert turn.items is not None  # (`_combined` gives every turn its items)
    return turn.items[0]


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
        _combined(messages),
        system=body.get("system"),
        tools=[_tool(t) for t in tools] if isinstance(tools, list) else [],
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=_same_type,
        items=messages,
        client_ids=IDS.client,
        error_field="is_error",
    )
