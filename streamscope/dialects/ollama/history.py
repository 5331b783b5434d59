"""How an Ollama `/api/chat` request reads: `messages`, `tools`, and the rest.

An assistant message's `tool_calls` are the calls sent back, each with its
`function.arguments` object (compared with the streamed call as the JSON value it
holds) and its `id` where the stream gave one; a `tool` message answers a call by its
`tool_name` (what Ollama's own clients send), or by `tool_call_id` where an id was sent;
one that names neither (both are optional) answers the call at its place.
"""

from __future__ import annotations

import json

from ...core.history import CallIds, History, Result, SentCall, Tool, Turn, Words

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    True,
    "a call's `id` is optional (the API documents none; newer servers send one) and a `tool` message answers by `tool_name`: an id the client fills in where none was streamed, the same on the call and its `tool_call_id`, is `tool-call-id-filled`; one the model sent must come back as sent",
)


WORDS = Words(
    result="tool message",
    result_id="tool_name or tool_call_id",
    sent="the assistant message",
    sent_all="the assistant message",
)


def _text(value: object) -> object:
    """An arguments object as compact JSON text (kept as it is when it is no object)."""
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, RecursionError):
            return value
    return value


def _sent(entry: object) -> SentCall:
    if not isinstance(entry, dict):
        return SentCall(None, None, None)
    fn = entry.get("function")
    fn = fn if isinstance(fn, dict) else {}
    fid, name = entry.get("id"), fn.get("name")
    call = SentCall("" if fid is None else fid, name, _text(fn.get("arguments")), "function")
    # a tool message answers it by its name, or by its id where one was sent
    call.result_keys = (fid, name) if isinstance(fid, str) and fid else (name,)
    return call


def _turn(message: object) -> Turn:
    if not isinstance(message, dict):
        return Turn("?", raw=message)
    role = message.get("role")
    turn = Turn(str(role) if role is not None else "?", message.get("content"))
    calls = message.get("tool_calls")
    if role == "assistant" and isinstance(calls, list) and calls:
        turn.calls = [_sent(c) for c in calls]
    if role == "tool":
        fid = message.get("tool_call_id")
        key = fid if isinstance(fid, str) and fid else message.get("tool_name")
        turn.results = [Result(key, message.get("content"))]
    return turn


def _by_position(turns: list[Turn]) -> None:
    """A tool message that names nothing (no `tool_name`, no `tool_call_id`: both are
    optional in the API) answers the call at its place: Ollama gives the model the
    results in order after the assistant message's calls, so the k-th such message of a
    run answers its k-th call."""
    calls: list[SentCall] = []
    k = 0
    for turn in turns:
        if turn.calls:
            calls, k = turn.calls, 0
        elif turn.role == "tool" and turn.results:
            result = turn.results[0]
            if result.answers in (None, "") and k < len(calls):
                result.answers = calls[k].answered_by()[-1]  # (its name)
            k += 1
        else:
            calls, k = [], 0


def _tools(tools: object) -> list[Tool]:
    out: list[Tool] = []
    for tool in tools if isinstance(tools, list) else []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict):
            out.append(Tool(fn.get("name"), fn.get("description")))
    return out


def history(body: object) -> History | None:
    """The request body's history; None when the body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    turns = [_turn(m) for m in messages]
    _by_position(turns)
    return History(
        turns,
        tools=_tools(body.get("tools")),
        params={k: v for k, v in body.items() if k not in ("messages", "tools")},
        words=WORDS,
        kind_of=lambda kind: kind,
        items=messages,
        # a tool call's id is optional (the API documents none; newer servers add one)
        # and a tool message answers by tool_name: an id the client fills in where the
        # stream gave none, the same on the call and its tool_call_id, keeps the link
        client_ids=IDS.client,
    )


__all__ = ["history"]
