"""One line per frame: what its delta carries, for frame lists."""

from __future__ import annotations

from ...core.frames import INVALID, Frame
from ...text import json_type, quote, word


def summarize(frame: Frame) -> str:
    """e.g. `tc0 args+"{\\"city"`, `tc0 id="call_a" name="get_weather"`, `finish tool_calls`."""
    p = frame.payload
    if p is INVALID:
        return "[DONE]" if frame.is_done else f"not JSON: {quote(frame.data, 30)}"
    if not isinstance(p, dict):
        return f"JSON {json_type(p)}"
    if p.get("error"):
        return f"error {quote(p['error'], 40)}"
    choices = p.get("choices")
    if not isinstance(choices, list):
        return "no choices"
    if not choices:
        return "usage" if p.get("usage") else "no choices"
    parts: list[str] = []
    several = len(choices) > 1
    for choice in choices:
        if not isinstance(choice, dict):
            parts.append("bad choice")
            continue
        prefix = f"c{word(choice.get('index'), 20)} " if several else ""
        delta = choice.get("delta")
        if isinstance(delta, dict):
            if delta.get("role") is not None:
                parts.append(f"{prefix}role")
            for key, label in (
                ("content", "text"),
                ("reasoning_content", "think"),
                ("refusal", "refusal"),
            ):
                if isinstance(delta.get(key), str) and delta[key]:
                    parts.append(f"{prefix}{label}+{quote(delta[key], 20)}")
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for tc in calls:
                    parts.append(prefix + _tool(tc))
        finish = choice.get("finish_reason")
        if finish:
            parts.append(f"{prefix}finish {word(finish, 20)}")
    return " · ".join(parts) if parts else "empty delta"


def plain_summary(index: int, text: str) -> str:
    """`summarize` of a frame the engine reads as plain (`engine.plain_fragment` gave
    (index, text)): the same line from the fragment alone, so the replay keeps the
    fragment and builds the line only for the rows it shows."""
    if index < 0:
        return f"text+{quote(text, 20)}" if text else "empty delta"
    return f"tc{index} args+{quote(text, 20)}"


def _tool(tc: object) -> str:
    if not isinstance(tc, dict):
        return "tc ?"
    index = tc.get("index")
    bits = [f"tc{word(index, 20) if index is not None else '-'}"]
    if "id" in tc:
        bits.append(f"id={quote(tc['id'], 16)}")
    fn = tc.get("function")
    if isinstance(fn, dict):
        if "name" in fn:
            bits.append(f"name={quote(fn['name'], 16)}")
        if "arguments" in fn:
            bits.append(f"args+{quote(fn['arguments'], 20)}")
    elif "function" not in tc:
        bits.append("no function")
    return " ".join(bits)
