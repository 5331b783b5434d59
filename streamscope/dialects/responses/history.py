"""How an OpenAI Responses API request reads: `instructions`, `input` items, tools.

`input` is a string (one user message) or a list of items: messages (`{"role", "content"}`,
with or without `"type": "message"`), the `function_call` / `custom_tool_call` items of
an earlier response sent back (consecutive ones make one assistant turn), their
`function_call_output` / `custom_tool_call_output` answers by `call_id`, reasoning and
built-in tool items. A request may instead continue a stored response with
`previous_response_id`: the calls it made stay on the server and are not sent again.
"""

from __future__ import annotations

from ...core.history import History, Result, SentCall, Turn, Words
from .robust import CALL_ITEMS

WORDS = Words(result="function_call_output", result_id="call_id")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def function_or_custom(kind: object) -> object:
    """What `tool-call-type-changed` compares: a custom tool call, or a function call."""
    return "custom" if kind in ("custom_tool_call", "custom") else "function"


def sent_call(item: dict) -> SentCall:
    kind = item.get("type")
    field = "input" if kind == "custom_tool_call" else "arguments"
    return SentCall(item.get("call_id"), item.get("name"), item.get(field), kind)


def _turns(items: list) -> list[Turn]:
    turns: list[Turn] = []
    for item in items:
        if not isinstance(item, dict):
            turns.append(Turn("?", raw=item))
            continue
        kind = item.get("type")
        if kind in CALL_ITEMS:
            last = turns[-1] if turns else None
            if (
                last is not None
                and last.role == "assistant"
                and last.calls
                and last.content is None
            ):
                last.calls.append(sent_call(item))  # parallel calls: one assistant turn
            else:
                turns.append(Turn("assistant", calls=[sent_call(item)]))
        elif kind in OUTPUTS:
            result = Result(item.get("call_id"), item.get("output"))
            last = turns[-1] if turns else None
            if last is not None and last.role == "tool":
                last.results.append(result)  # the outputs of one batch: one turn
            else:
                turns.append(Turn("tool", results=[result]))
        elif "role" in item and kind in (None, "message"):
            turns.append(Turn(str(item.get("role")), item.get("content")))
        else:  # reasoning, a built-in tool's call or output, an item reference
            turns.append(Turn(str(kind) if isinstance(kind, str) else "?", raw=item))
    return turns


def _tool(tool: object) -> tuple[object, object]:
    tool = tool if isinstance(tool, dict) else {}
    return tool.get("name") or tool.get("type"), tool.get("description")


def history(body: object) -> History | None:
    """The request body's history; None when the body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    given = body.get("input")
    if isinstance(given, str):
        turns = [Turn("user", given)]
    else:
        turns = _turns(given) if isinstance(given, list) else []
    tools = body.get("tools")
    skip = ("input", "tools", "instructions")
    previous = body.get("previous_response_id")
    return History(
        turns,
        system=body.get("instructions"),
        tools=[_tool(t) for t in tools] if isinstance(tools, list) else [],
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=function_or_custom,
        previous=previous if isinstance(previous, str) and previous else None,
    )
