"""A small, portable accumulator that reads Anthropic Messages events the way streamscope's
robust reading does.

Its source is embedded in every exported pytest module as the function the user swaps for
their own client's. It works on event dicts (`event.to_dict()` of the anthropic SDK's
events, or parsed JSON): blocks are keyed by `index` within each message (a new
`message_start` begins a new table), a tool block's arguments are its `partial_json`
fragments concatenated as sent, and the start's `input` stands alone only when no fragment
carried text (a tool with no arguments: `{}`); ids and names are kept exactly as sent, ""
when none came. Blocks a `message_start` carries whole are calls too.
"""

from __future__ import annotations

# BEGIN EMBED
import json

TOOL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def _text(value):
    return value if isinstance(value, str) else ""  # an id or name of another type: none


def _call(block):
    return {
        "id": _text(block.get("id")),
        "name": _text(block.get("name")),
        "start": block.get("input"),
        "has_start": "input" in block,
        "parts": [],
    }


def _arguments(call):
    text = "".join(call["parts"])
    if text or not call["has_start"]:
        return text
    return json.dumps(call["start"], ensure_ascii=False, separators=(",", ":"))


def accumulate(events):
    """Tool calls from Anthropic Messages event dicts: [{"id", "name", "arguments"}, ...],
    the arguments as JSON text."""
    calls, blocks = [], {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            blocks = {}
            message = event.get("message") or {}
            for i, block in enumerate(message.get("content") or []):
                if isinstance(block, dict) and block.get("type") in TOOL_BLOCKS:
                    blocks[i] = _call(block)
                    calls.append(blocks[i])
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") in TOOL_BLOCKS:
                blocks[event.get("index")] = _call(block)
                calls.append(blocks[event.get("index")])
            else:
                blocks.pop(event.get("index"), None)
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            call = blocks.get(event.get("index"))
            text = delta.get("partial_json")
            if (
                call is not None
                and delta.get("type") == "input_json_delta"
                and isinstance(text, str)
            ):
                call["parts"].append(text)
    return [{"id": c["id"], "name": c["name"], "arguments": _arguments(c)} for c in calls]


# END EMBED


def source() -> str:
    """The embedded part of this module, as text."""
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    return text.split("# BEGIN EMBED\n", 1)[1].split("# END EMBED", 1)[0].strip() + "\n"
