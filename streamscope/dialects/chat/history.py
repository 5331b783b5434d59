"""How a Chat Completions request reads: its `messages`, tools and parameters.

An assistant message's `tool_calls` are the calls sent back (`function: {name,
arguments}`, or for a custom call `custom: {name, input}`); each `role: "tool"` message
answers one `tool_call_id`.
"""

from __future__ import annotations

from ...core.history import CallIds, History, Result, SentCall, Tool, Turn

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    False,
    'the model gives every call its `tool_calls[].id` and the tool message answers it by `tool_call_id`; where none was streamed a correct client sends `""` on both sides, and an id it invents is `tool-call-id-substituted`',
)


def sent_call(tc: object) -> SentCall:
    """An assistant message's tool call: `function: {name, arguments}`, or for a custom
    call `custom: {name, input}`."""
    tc = tc if isinstance(tc, dict) else {}
    fn = tc.get("function")
    if not isinstance(fn, dict) and isinstance(tc.get("custom"), dict):
        custom = tc["custom"]
        return SentCall(tc.get("id"), custom.get("name"), custom.get("input"), tc.get("type"))
    fn = fn if isinstance(fn, dict) else {}
    return SentCall(tc.get("id"), fn.get("name"), fn.get("arguments"), tc.get("type"))


def _turn(m: object) -> Turn:
    if not isinstance(m, dict):
        return Turn("?", raw=m)
    role = m.get("role")
    turn = Turn(str(role), m.get("content"))
    if role == "assistant" and isinstance(m.get("tool_calls"), list):
        turn.calls = [sent_call(tc) for tc in m["tool_calls"]]
    elif role == "tool":
        turn.results = [Result(m.get("tool_call_id"), turn.content)]
        turn.content = None  # shown as the result's
    return turn


def _tool(tool: object) -> Tool:
    # a function tool is declared as {"function": {name}}, a custom one {"custom": {name}}
    key = "custom" if isinstance(tool, dict) and tool.get("type") == "custom" else "function"
    fn = tool.get(key) if isinstance(tool, dict) else None
    fn = fn if isinstance(fn, dict) else (tool if isinstance(tool, dict) else {})
    return Tool(fn.get("name"), fn.get("description"))


def history(body: object) -> History | None:
    """The request body's history (no turns without a `messages` list); None when the
    body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    tools = body.get("tools")
    return History(
        [_turn(m) for m in messages],
        tools=[_tool(t) for t in tools] if isinstance(tools, list) else [],
        params={k: v for k, v in body.items() if k not in ("messages", "tools")},
        items=messages,
        client_ids=IDS.client,
    )
