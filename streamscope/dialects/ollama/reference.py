"""A small, portable accumulator that reads Ollama chat chunks the way streamscope's
robust reading does.

Its source is embedded in every exported pytest module as the function the user swaps for
their own client's. It works on chunk dicts (`chunk.model_dump(exclude_none=True)` of the
ollama package's `ChatResponse`, or parsed JSON lines): every `message.tool_calls` entry
of every line is a call of its own, in order, with its name and arguments object (the
package keeps no call id, so none is compared).
"""

from __future__ import annotations

# BEGIN EMBED


def accumulate(chunks):
    """Tool calls from Ollama chat chunk dicts: [{"name", "arguments"}, ...] in order."""
    calls = []
    for chunk in chunks:
        message = chunk.get("message") or {}
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            calls.append({"name": function.get("name", ""), "arguments": function.get("arguments")})
    return calls


# END EMBED


def source() -> str:
    """The embedded part of this module, as text."""
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    return text.split("# BEGIN EMBED\n", 1)[1].split("# END EMBED", 1)[0].strip() + "\n"
