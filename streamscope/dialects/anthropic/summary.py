"""One line per frame of an Anthropic Messages stream: what its event carries."""

from __future__ import annotations

from ...core.frames import Frame
from ...text import quote, word
from ..typed import an_object, not_an_event


def plain_summary(index: int, text: str) -> str:
    """`summarize` of an input_json_delta frame, from its block index and fragment alone."""
    return f"b{index} json+{quote(text, 20)}"


def summarize(frame: Frame) -> str:
    """e.g. `message_start`, `b1 tool_use id="toolu_01" name="get_weather"`, `b1 json+"{\\"city"`."""
    p = frame.payload
    if not isinstance(p, dict):
        return not_an_event(frame) or ""
    kind = p.get("type")
    index = p.get("index")
    at = f"b{word(index)} " if "index" in p else ""
    if kind == "content_block_delta":
        delta = an_object(p.get("delta"))
        dtype = delta.get("type")
        for key, label, shown in (
            ("partial_json", "json", "input_json_delta"),
            ("text", "text", "text_delta"),
            ("thinking", "think", "thinking_delta"),
        ):
            if dtype == shown:
                return f"{at}{label}+{quote(delta.get(key), 20)}"
        if dtype == "signature_delta":
            return f"{at}signature"
        return f"{at}delta {word(dtype)}"
    if kind == "content_block_start":
        block = an_object(p.get("content_block"))
        bits = [f"{at}start {word(block.get('type'))}"]
        if "id" in block:
            bits.append(f"id={quote(block['id'], 16)}")
        if "name" in block:
            bits.append(f"name={quote(block['name'], 16)}")
        if block.get("input") not in (None, {}):
            bits.append(f"input={quote(block['input'], 20)}")
        return " ".join(bits)
    if kind == "content_block_stop":
        return f"{at}stop"
    if kind == "message_start":
        message = an_object(p.get("message"))
        return (
            f"message_start {quote(message.get('id'), 20)}" if "id" in message else "message_start"
        )
    if kind == "message_delta":
        delta = an_object(p.get("delta"))
        reason = delta.get("stop_reason")
        return f"stop_reason {word(reason)}" if reason is not None else "message_delta"
    if kind == "error":
        error = p.get("error")
        said = error.get("message") if isinstance(error, dict) else error
        return f"error {quote(said, 40)}"
    if kind in ("message_stop", "ping"):
        return kind  # type: ignore[no-any-return]
    return f"event {word(kind)}"
