"""How an OpenAI Responses API request reads: `instructions`, `input` items, tools.

`input` is a string (one user message) or a list of items: messages (`{"role", "content"}`,
with or without `"type": "message"`), the `function_call` / `custom_tool_call` items of
an earlier response sent back (consecutive ones make one assistant turn), their
`function_call_output` / `custom_tool_call_output` answers by `call_id`, reasoning and
built-in tool items. A request may instead continue a stored response with
`previous_response_id`: the calls it made stay on the server and are not sent again; or
add to a `conversation` the server keeps, whose items come before `input`. A tool search
the client runs is a call (`tool_search_call`) and its answer (`tool_search_output`).
"""

from __future__ import annotations

from typing import Any

from ...core.history import CallIds, History, Result, SentCall, Tool, Turn, Words
from .robust import CALL_ITEMS, SEARCH_CALL

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    False,
    "the model gives every `function_call` item its `call_id`, which the `function_call_output` must name: another id is `tool-call-id-substituted`",
)


WORDS = Words(
    result="function_call_output",
    result_id="call_id",
    sent="the call item sent back",
    sent_all="the call items sent back",
    turns="Input",
    turn="input item",
    system="Instructions",
)
OUTPUTS = ("function_call_output", "custom_tool_call_output")
# Input items without a role that the client adds on its own side (the openai package's
# input item types): a built-in tool's output or an approval it answers with, and the
# settings it changes between turns (Codex's default model path sends a
# `configuration_update` with the reasoning effort after the user's message). They are
# the user's turn, never the start of the model's answer; an item type not named here is
# read as the model's (a reasoning item, a built-in tool's call).
CLIENT_ITEMS = frozenset(
    {
        "configuration_update",
        "compaction_trigger",
        "additional_tools",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "mcp_approval_response",
    }
)


# A tool search the client runs (`"execution": "client"`: the openai package's
# ResponseToolSearchCall / ResponseToolSearchOutputItemParam) is a call and its answer, by
# `call_id`, like a function call's; one the server runs is the model's output, both items.
SEARCH_OUTPUT = "tool_search_output"


def _client_search(item: dict[Any, Any], kind: object) -> bool:
    return kind in (SEARCH_CALL, SEARCH_OUTPUT) and item.get("execution") == "client"


def function_or_custom(kind: object) -> object:
    """What `tool-call-type-changed` compares: a custom tool call, or a function call."""
    return "custom" if kind in ("custom_tool_call", "custom") else "function"


def sent_call(item: dict[Any, Any]) -> SentCall:
    kind = item.get("type")
    if kind == SEARCH_CALL:  # no stream assembles it as a call (robust reads none)
        search = SentCall(item.get("call_id"), kind, item.get("arguments"), kind)
        search.assembled = False
        return search
    field = "input" if kind == "custom_tool_call" else "arguments"
    return SentCall(item.get("call_id"), item.get("name"), item.get(field), kind)


def _first(turn: Turn) -> int:
    """The first input item of a turn `_turns` made (it gives each one its items)."""
    assert turn.items is not None
    return turn.items[0]


def _turns(items: list[Any]) -> list[Turn]:
    """One turn per input item, but consecutive call items (a parallel batch) make one
    `function_call` turn and consecutive outputs one `function_call_output` turn; each
    turn knows the items it stands for."""
    turns: list[Turn] = []
    for k, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind is not None and not isinstance(kind, str):
            kind = "?"  # a type of another JSON type names no kind of item (never hashed)
        last = turns[-1] if turns else None
        search = isinstance(item, dict) and _client_search(item, kind)
        if kind in CALL_ITEMS or (search and kind == SEARCH_CALL):
            if last is not None and last.calls and last.content is None:
                last.calls.append(sent_call(item))
                last.items = (_first(last), k)
                continue
            turns.append(Turn(str(kind), calls=[sent_call(item)], items=(k, k)))
        elif kind in OUTPUTS or (search and kind == SEARCH_OUTPUT):
            said = item.get("tools") if kind == SEARCH_OUTPUT else item.get("output")
            result = Result(item.get("call_id"), said, item=k)
            if last is not None and last.results and last.role in (*OUTPUTS, SEARCH_OUTPUT):
                last.results.append(result)
                last.items = (_first(last), k)
                continue
            turns.append(Turn(str(kind), results=[result], items=(k, k)))
        elif not isinstance(item, dict):
            turns.append(Turn("?", raw=item, items=(k, k)))
        elif "role" in item and kind in (None, "message"):
            turns.append(Turn(str(item.get("role")), item.get("content"), items=(k, k)))
        else:  # reasoning, a built-in tool's call or output, an item reference
            name = str(kind) if isinstance(kind, str) else "?"
            client = "role" not in item and kind in CLIENT_ITEMS
            turns.append(Turn(name, raw=item, items=(k, k), client=client))
    return turns


def _declared(
    tools: object, out: list[Tool], item: int | None, within: tuple[object, ...] = ()
) -> None:
    """The tools of a `tools` list into `out`, a namespace's own after it (nested in it)."""
    for tool in tools if isinstance(tools, list) else []:
        tool = tool if isinstance(tool, dict) else {}
        name = tool.get("name") or tool.get("type")  # a built-in tool has only its type
        if tool.get("type") == "namespace":
            out.append(Tool(name, tool.get("description"), within, item, namespace=True))
            _declared(tool.get("tools"), out, item, (*within, name))
        else:
            out.append(Tool(name, tool.get("description"), within, item))


def _tools(tools: object, items: list[Any]) -> list[Tool]:
    """The request's tools, then those its input items declare (Codex's `additional_tools`
    item, whose namespaces hold the tools; the request's own `tools` is then empty)."""
    out: list[Tool] = []
    _declared(tools, out, None)
    for k, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            _declared(item.get("tools"), out, k)
    return out


def history(body: object) -> History | None:
    """The request body's history; None when the body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    given = body.get("input")
    if isinstance(given, str):
        turns = [Turn("user", given, items=(0, 0))]
    else:
        turns = _turns(given) if isinstance(given, list) else []
    tools = body.get("tools")
    skip = ("input", "tools", "instructions")
    previous = body.get("previous_response_id")
    stored = body.get("conversation")  # an id, or {"id": ...}
    if isinstance(stored, dict):
        stored = stored.get("id")
    return History(
        turns,
        system=body.get("instructions"),
        tools=_tools(tools, given if isinstance(given, list) else []),
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=function_or_custom,
        previous=previous if isinstance(previous, str) and previous else None,
        stored=stored if isinstance(stored, str) and stored else None,
        # `instructions` are each response's own (the API reference: they are not carried
        # over to the next response, so system messages can be swapped)
        system_carried=False,
        items=[given] if isinstance(given, str) else given if isinstance(given, list) else [],
        client_ids=IDS.client,
    )
