"""One line per frame of a Bedrock Converse stream: what its event carries."""

from __future__ import annotations

from ...core.frames import Frame
from ...text import quote, word
from ..typed import an_object, not_an_event
from .robust import read_event


def plain_summary(index: int, text: str) -> str:
    """`summarize` of a toolUse input delta, from its block index and fragment alone."""
    return f"b{index} input+{quote(text, 20)}"


def summarize(frame: Frame) -> str:
    """e.g. `messageStart assistant`, `b1 start toolUse id="tooluse_1" name="get_weather"`,
    `b1 input+"{\\"city"`, `b0 text+"Let me"`, `messageStop tool_use`."""
    p = frame.payload
    if frame.invalid is not None:
        return f"invalid: {frame.invalid[:60]}"
    if not isinstance(p, dict):
        return not_an_event(frame) or ""
    event = read_event(frame, p)
    name, body = event.name, event.body
    if event.exception:
        return f"{word(name)} {quote(body.get('message'), 40)}"
    at = f"b{word(body['contentBlockIndex'])} " if "contentBlockIndex" in body else ""
    if name == "contentBlockDelta":
        delta = an_object(body.get("delta"))
        tool = delta.get("toolUse")
        if isinstance(tool, dict):
            return f"{at}input+{quote(tool.get('input'), 20)}"
        if "text" in delta:
            return f"{at}text+{quote(delta['text'], 20)}"
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            if "text" in reasoning:
                return f"{at}think+{quote(reasoning['text'], 20)}"
            return f"{at}reasoning {word(next(iter(reasoning), None))}"
        return f"{at}delta {word(next(iter(delta), None))}"
    if name == "contentBlockStart":
        start = an_object(body.get("start"))
        kind = next(iter(start), None)
        bits = [f"{at}start {word(kind)}"]
        block = an_object(start.get(kind)) if isinstance(kind, str) else {}
        if "type" in block:
            bits.append(word(block["type"]))
        if "toolUseId" in block:
            bits.append(f"id={quote(block['toolUseId'], 16)}")
        if "name" in block:
            bits.append(f"name={quote(block['name'], 16)}")
        return " ".join(bits)
    if name == "contentBlockStop":
        return f"{at}stop"
    if name == "messageStart":
        return f"messageStart {word(body.get('role'))}" if "role" in body else "messageStart"
    if name == "messageStop":
        reason = body.get("stopReason")
        return f"messageStop {word(reason)}" if reason is not None else "messageStop"
    if name == "metadata":
        usage = an_object(body.get("usage"))
        tokens = usage.get("outputTokens")
        return f"metadata {word(tokens)} tokens out" if tokens is not None else "metadata"
    return f"event {word(name)}"
