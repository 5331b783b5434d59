"""Realtime sessions for tests: the client and server messages of a tool loop, written as a
recording the way the recorder writes one (schema 2 `message` lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from streamscope.recording.format import Message

from ...ws_session import ACCEPT, HEADER
from .events import WEATHER_TOOL, call, client_output, data, message_item, numbered, response

URL = "https://api.openai.com/v1/realtime?model=gpt-realtime"
HANDSHAKE = [
    ["host", "api.openai.com"],
    ["upgrade", "websocket"],
    ["connection", "Upgrade"],
    ["sec-websocket-version", "13"],
    ["sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="],
    ["authorization", "Bearer [REDACTED]"],
]
SESSION_UPDATE = {
    "type": "session.update",
    "session": {"type": "realtime", "model": "gpt-realtime", "tools": [WEATHER_TOOL]},
}
ASK = {
    "type": "conversation.item.create",
    "item": {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Weather in Paris?"}],
    },
}
CREATE = {"type": "response.create"}


def session_events(rid: str = "sess_1") -> list[dict]:
    return numbered(
        [
            {"type": "session.created", "session": {"id": rid, "object": "realtime.session"}},
            {"type": "session.updated", "session": {"id": rid, "object": "realtime.session"}},
        ]
    )


def tool_loop(answer: bool = True, outputs: list[Any] | None = None) -> list[tuple[str, Any]]:
    """A session: the client's setup and question, a response with one call, the call's
    output (`outputs`: the call_ids answered, ["call_1"] by default), then the answer."""
    pairs: list[tuple[str, Any]] = [("client", SESSION_UPDATE)]
    pairs += [("server", e) for e in session_events()]
    pairs += [("client", ASK), ("client", CREATE)]
    pairs += [("server", e) for e in response(call(0), rid="resp_1")]
    for cid in ["call_1"] if outputs is None else outputs:
        pairs.append(("client", client_output(cid)))
    if answer:
        pairs.append(("client", CREATE))
        pairs += [
            ("server", e)
            for e in response(
                message_item(0, "It is 18 degrees.", "item_m2", "resp_2"), rid="resp_2"
            )
        ]
    return pairs


def write(
    path: Path,
    pairs: list[tuple[str, Any]],
    url: str = URL,
    reason: str = "complete",
    headers: list[list[str]] | None = None,
    times: list[int] | None = None,
) -> Path:
    """A recording of one session: handshake, 101, a `message` line per message (a text
    frame each, 1 ms after the one before, or at `times`: ns), the close each way, the end
    line."""
    ex, t = 1, 1_000_000
    lines: list[dict] = [HEADER]
    lines.append(
        {"type": "request", "exchange": ex, "t_ns": t, "method": "GET", "url": url}
        | {"headers": HANDSHAKE if headers is None else headers, "body": ""}
    )
    lines.append(
        {"type": "response", "exchange": ex, "t_ns": t + 1000, "status": 101} | {"headers": ACCEPT}
    )
    for i, (sender, event) in enumerate(pairs):
        t = times[i] if times is not None else t + 1_000_000
        lines.append(Message.of(ex, t, sender, 1, True, data(event)).to_json())
    for sender in ("client", "server"):
        t += 1000
        lines.append(Message.of(ex, t, sender, 8, True, b"\x03\xe8").to_json())
    lines.append({"type": "end", "exchange": ex, "t_ns": t + 1000, "reason": reason, "error": None})
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    return path
