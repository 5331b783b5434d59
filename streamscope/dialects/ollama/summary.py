"""One line per frame of an Ollama stream: what its line carries."""

from __future__ import annotations

from ...core.frames import Frame
from ...text import quote, word
from ..typed import not_an_event


def plain_summary(index: int, text: str) -> str:
    """A line that only adds text (engine.plain_fragment): its content piece."""
    return f"text+{quote(text, 20)}"


def _call(entry: object) -> str:
    fn = entry.get("function") if isinstance(entry, dict) else None
    if not isinstance(fn, dict):
        return "call?"
    bits = f"call {quote(fn.get('name'), 16)}"
    if isinstance(entry, dict) and entry.get("id"):
        bits += f" id={quote(entry['id'], 12)}"
    if "arguments" in fn:
        bits += f" {quote(fn['arguments'], 24)}"
    return bits


def summarize(frame: Frame) -> str:
    """e.g. `text+"Let me"`, `call "get_weather" {"city":"Paris"}`, `done stop`."""
    p = frame.payload
    if not isinstance(p, dict):
        return not_an_event(frame) or ""
    if p.get("error") is not None:
        return f"error {quote(p['error'], 40)}"
    bits = []
    message = p.get("message")
    if isinstance(message, dict):
        for key, label in (("thinking", "think"), ("content", "text")):
            value = message.get(key)
            if value:
                bits.append(f"{label}+{quote(value, 20)}")
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            bits += [_call(c) for c in calls]
        elif calls is not None:
            bits.append("calls?")
    elif message is not None:
        bits.append("message?")
    if p.get("done") is True:
        reason = p.get("done_reason")
        bits.append("done" + (f" {word(reason)}" if reason is not None else ""))
    return ", ".join(bits) or ("empty" if "message" in p else "line")
