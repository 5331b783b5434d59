"""One line per frame of an OpenAI Realtime stream: what its event carries."""

from __future__ import annotations

from ...core.frames import Frame
from ...text import quote, visible, word
from ..typed import an_object, not_an_event
from .robust import ADDED, ARGS_DONE, CREATED, DELTA, ITEM_DONE, RESPONSE_DONE, TEXTS

# event type -> its short name in a frame's line
_DELTAS = {DELTA: "args", **{kind: "text" for kind in TEXTS}}


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
    if kind == ARGS_DONE:
        return f"{at}done {quote(p.get('arguments'), 24)}"
    if kind in (ADDED, ITEM_DONE):
        item = an_object(p.get("item"))
        bits = [f"{at}{kind.rsplit('.', 1)[1]} {word(item.get('type'))}"]
        for key in ("call_id", "name"):
            if key in item:
                bits.append(f"{key}={quote(item[key], 16)}")
        if item.get("arguments") not in (None, ""):
            bits.append(f"arguments={quote(item['arguments'], 20)}")
        return " ".join(bits)
    if kind == RESPONSE_DONE:
        response = an_object(p.get("response"))
        output = response.get("output")
        count = f", {len(output)} output" if isinstance(output, list) else ", no output"
        return f"done, status {word(response.get('status'))}{count}"
    if kind == CREATED:
        response = an_object(p.get("response"))
        return f"created {quote(response['id'], 20)}" if "id" in response else "created"
    if kind == "error":
        error = p.get("error", p)
        message = error.get("message") if isinstance(error, dict) else error
        return f"error {quote(message, 40)}"
    if isinstance(kind, str) and kind.startswith("response."):
        return f"{at}{visible(kind[len('response.') :][:40])}"
    return f"event {word(kind)}"
