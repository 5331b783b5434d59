"""How a Bedrock Converse request reads: `system`, `messages` of content blocks, tools.

An assistant message's `toolUse` blocks are the calls sent back (`toolUseId`, `name`,
`input`: an object, compared with the streamed input as the JSON value it holds); each
`toolResult` block of the following user message answers one `toolUseId`. A toolUse of
`type: server_tool_use` was run by Bedrock: it comes back with the assistant message (its
result beside it) and needs no result from the client.
"""

from __future__ import annotations

from typing import Any

from ...core.history import CallIds, History, Result, SentCall, Tool, Turn, Words
from ...text import quote
from ..typed import compact
from .robust import CLIENT, SERVER

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    False,
    "the model gives every `toolUse` block its `toolUseId`, which the `toolResult` must name: another id is `tool-call-id-substituted`",
)


WORDS = Words(result="toolResult block", result_id="toolUseId")


def kind_of(kind: object) -> object:
    """What `tool-call-type-changed` compares: a server tool's use, or a client's."""
    return SERVER if kind == SERVER else CLIENT


def _input_text(value: object) -> object:
    """The input sent back, as JSON text when it is an object (the API takes nothing else)."""
    if isinstance(value, dict):
        text = compact(value)
        return value if text is None else text
    return value


def sent_call(use: dict[Any, Any]) -> SentCall:
    kind = use.get("type")
    return SentCall(
        use.get("toolUseId"),
        use.get("name"),
        _input_text(use.get("input")),
        CLIENT if kind is None else kind,
        needs_result=kind != SERVER,
    )


def _turn(m: object) -> Turn:
    if not isinstance(m, dict):
        return Turn("?", raw=m)
    role, content = m.get("role"), m.get("content")
    turn = Turn(str(role), content)
    if not isinstance(content, list):
        return turn
    blocks = [b for b in content if isinstance(b, dict)]
    if role == "assistant":
        calls = [sent_call(b["toolUse"]) for b in blocks if isinstance(b.get("toolUse"), dict)]
        if calls:
            rest = [b for b in content if not (isinstance(b, dict) and "toolUse" in b)]
            turn.calls, turn.content = calls, rest or None
        return turn
    results = [b["toolResult"] for b in blocks if isinstance(b.get("toolResult"), dict)]
    if results:
        turn.results = [
            Result(r.get("toolUseId"), r.get("content"), _failed(r), _said(r)) for r in results
        ]
        others = [b for b in content if not (isinstance(b, dict) and "toolResult" in b)]
        turn.content = others or None
    return turn


def _failed(result: dict[Any, Any]) -> object:
    """A toolResult's `status` as an error flag: \"error\" is true, \"success\" or none
    false (the field is optional), any other value as sent."""
    status = result.get("status", "success")
    return status == "error" if status in ("error", "success") else status


def _said(result: dict[Any, Any]) -> str:
    """What the toolResult's `status` said, in words: absent is not "success" sent."""
    return f"status {quote(result['status'], 40)}" if "status" in result else "no status sent"


def _tool(tool: object) -> Tool:
    spec = tool.get("toolSpec") if isinstance(tool, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    return Tool(spec.get("name"), spec.get("description"))


def history(body: object) -> History | None:
    """The request body's history (no turns without a `messages` list); None when the
    body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    config = body.get("toolConfig")
    tools = config.get("tools") if isinstance(config, dict) else None
    skip = ("messages", "toolConfig", "system")
    return History(
        [_turn(m) for m in messages],
        system=body.get("system"),
        tools=[_tool(t) for t in tools] if isinstance(tools, list) else [],
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=kind_of,
        items=messages,
        client_ids=IDS.client,
        error_field="status",
    )


__all__ = ["history"]
