"""One line per frame of an OpenAI Responses API stream: what its event carries."""

from __future__ import annotations

from ...core.frames import Frame
from ...text import quote, visible, word
from ..typed import an_object, not_an_event

# event type -> its short name in a frame's line (the `response.` prefix dropped)
_DELTAS = {
    "response.function_call_arguments.delta": "args",
    "response.custom_tool_call_input.delta": "input",
    "response.output_text.delta": "text",
    "response.refusal.delta": "refusal",
    "response.reasoning_summary_text.delta": "think",
    "response.reasoning_text.delta": "think",
}
_DONES = {
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
}


def plain_summary(index: int, text: str) -> str:
    """`summarize` of an argument delta frame, from its output index and fragment alone."""
    return f"o{index} args+{quote(text, 20)}"


def summarize(frame: Frame) -> str:
    """e.g. `o1 added function_call call_id="call_1" name="get_weather"`, `o1 args+"{\\"ci"`."""
    p = frame.payload
    if not isinstance(p, dict):
        return not_an_event(frame) or ""
    kind = p.get("type")
    at = f"o{word(p['output_index'])} " if "output_index" in p else ""
    if isinstance(kind, str) and kind in _DELTAS:  # (a list or an object is not hashable)
        return f"{at}{_DELTAS[kind]}+{quote(p.get('delta'), 20)}"
    if isinstance(kind, str) and kind in _DONES:
        return f"{at}done {quote(p.get(_DONES[kind]), 24)}"
    if kind in ("response.output_item.added", "response.output_item.done"):
        item = an_object(p.get("item"))
        bits = [f"{at}{kind.rsplit('.', 1)[1]} {word(item.get('type'))}"]
        for key in ("call_id", "name"):
            if key in item:
                bits.append(f"{key}={quote(item[key], 16)}")
        field = "input" if item.get("type") == "custom_tool_call" else "arguments"
        if item.get(field) not in (None, ""):
            bits.append(f"{field}={quote(item[field], 20)}")
        return " ".join(bits)
    if kind in ("response.completed", "response.incomplete", "response.failed"):
        response = an_object(p.get("response"))
        status = response.get("status", kind.rsplit(".", 1)[1])
        output = response.get("output")
        count = f", {len(output)} output" if isinstance(output, list) else ""
        return f"status {word(status)}{count}"
    if kind in ("response.created", "response.in_progress", "response.queued"):
        response = an_object(p.get("response"))
        name = kind.rsplit(".", 1)[1]
        return f"{name} {quote(response['id'], 20)}" if "id" in response else name
    if kind == "error":
        error = p.get("error", p)
        message = error.get("message") if isinstance(error, dict) else error
        return f"error {quote(message, 40)}"
    if isinstance(kind, str) and kind.startswith("response."):
        return f"{at}{visible(kind[len('response.') :][:40])}"
    return f"event {word(kind)}"
