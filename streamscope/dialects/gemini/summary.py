"""One line per frame of a Gemini stream: what its chunk carries."""

from __future__ import annotations

from ...core.frames import Frame
from ...text import quote, word
from ..typed import not_an_event


def plain_summary(index: int, text: str) -> str:
    """Never asked: Gemini has no fragment-only frame (engine.plain_fragment)."""
    return f"call {index} +{quote(text, 20)}"


def _part(part: object) -> str:
    if not isinstance(part, dict):
        return "part?"
    fc = part.get("functionCall")
    sig = " sig" if "thoughtSignature" in part else ""
    if isinstance(fc, dict):
        if "partialArgs" in fc:
            args = fc["partialArgs"] if isinstance(fc["partialArgs"], list) else []
            first = args[0] if args and isinstance(args[0], dict) else {}
            path = first.get("jsonPath")
            value = next(
                (
                    first[k]
                    for k in ("stringValue", "numberValue", "boolValue", "nullValue")
                    if k in first
                ),
                None,
            )
            more = f" +{len(args) - 1}" if len(args) > 1 else ""
            head = f"call {quote(fc['name'], 16)} " if fc.get("name") else ""
            return f"{head}{word(path)}={quote(value, 16)}{more}{sig}"
        if "name" in fc:
            bits = f"call {quote(fc['name'], 16)}"
            if fc.get("id"):
                bits += f" id={quote(fc['id'], 12)}"
            if "args" in fc:
                bits += f" {quote(fc['args'], 24)}"
            if fc.get("willContinue") is True:
                bits += " …"
            return bits + sig
        return ("call …" if fc.get("willContinue") is True else "call end") + sig
    if isinstance(fc, (str, int, float, list)) or fc is not None:
        return "call?"
    if "text" in part:
        label = "think" if part.get("thought") is True else "text"
        return f"{label}+{quote(part['text'], 20)}{sig}"
    keys = [k for k in part if k != "thoughtSignature"]
    return (word(keys[0]) if keys else "part") + sig


def summarize(frame: Frame) -> str:
    """e.g. `call "get_weather" {"city":"Paris"} sig`, `$.city="Par"`, `call end`, `STOP`."""
    p = frame.payload
    if not isinstance(p, dict):
        return not_an_event(frame) or ""
    if "error" in p:
        error = p["error"]
        message = error.get("message") if isinstance(error, dict) else error
        return f"error {quote(message, 40)}"
    cands = p.get("candidates")
    if not isinstance(cands, list) or not cands:
        feedback = p.get("promptFeedback")
        if isinstance(feedback, dict) and "blockReason" in feedback:
            return f"blocked {word(feedback['blockReason'])}"
        return "usage" if "usageMetadata" in p else "chunk"
    lines = []
    for k, cand in enumerate(cands):
        if not isinstance(cand, dict):
            lines.append("candidate?")
            continue
        content = cand.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        bits = [_part(x) for x in parts] if isinstance(parts, list) else []
        if "finishReason" in cand:
            bits.append(word(cand["finishReason"]))
        prefix = f"c{word(cand.get('index', k))} " if len(cands) > 1 else ""
        lines.append(prefix + (", ".join(bits) or "empty"))
    return "; ".join(lines)
