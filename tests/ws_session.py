"""Recordings of WebSocket sessions (schema 2 `message` lines), written line by line the
way the recorder writes them: Codex's Responses over WebSocket, and a hand-made Realtime
shape where a test needs one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from streamscope.recording.format import Message

from . import responses_stream as rs

HEADER = {
    "type": "header",
    "schema_version": 2,
    "tool": "streamscope",
    "tool_version": "0.1.0",
    "created": "2026-12-02T07:00:00.000000Z",
    "argv": None,
}
HANDSHAKE = [
    ["host", "api.openai.com"],
    ["upgrade", "websocket"],
    ["connection", "Upgrade"],
    ["sec-websocket-version", "13"],
    ["sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="],
    ["openai-beta", "responses_websockets=2026-02-06"],
    ["authorization", "Bearer [REDACTED]"],
]
ACCEPT = [
    ["upgrade", "websocket"],
    ["connection", "Upgrade"],
    ["sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="],
]


def data_of(events: Iterable[bytes]) -> list[bytes]:
    """The JSON of each SSE event: what one WebSocket text message carries."""
    out = []
    for e in events:
        for line in e.split(b"\n"):
            if line.startswith(b"data: "):
                out.append(line[6:])
    return out


def create(**fields: object) -> bytes:
    return orjson.dumps({"type": "response.create", **fields})


def codex_turns(answer_call: bool = True) -> list[tuple[str, bytes]]:
    """Two turns on one socket: a function call, then (previous_response_id and the
    call's output) the answer."""
    out = [("client", create(model=rs.MODEL, input=rs.QUESTION, tools=rs.TOOLS))]
    out += [("server", d) for d in data_of(rs.function_call_events())]
    follow = [{"type": "function_call_output", "call_id": rs.CALL_ID, "output": rs.OUTPUT}]
    out.append(
        (
            "client",
            create(
                model=rs.MODEL,
                previous_response_id=rs.RESPONSE_IDS[0],
                input=follow if answer_call else [{"role": "user", "content": "go on"}],
                tools=rs.TOOLS,
            ),
        )
    )
    out += [("server", d) for d in data_of(rs.answer_events(rs.RESPONSE_IDS[0]))]
    return out


def write_session(
    path: Path,
    messages: Iterable[tuple[str, bytes] | tuple[str, bytes, str, bool]],
    url: str = "https://api.openai.com/v1/responses",
    reason: str = "complete",
    close: bool = True,
    status: int = 101,
    times: Sequence[int] | None = None,
) -> Path:
    """A recording of one session: handshake, 101, a `message` line per frame (text
    frames unless a message says opcode and FIN), the close each way, the end line. Each
    frame 1 ms after the one before, or at `times` (ns from the recording's start)."""
    ex, t = 1, 1_000_000
    lines = [HEADER]
    lines.append(
        {"type": "request", "exchange": ex, "t_ns": t, "method": "GET", "url": url}
        | {"headers": HANDSHAKE, "body": ""}
    )
    lines.append(
        {"type": "response", "exchange": ex, "t_ns": t + 1000, "status": status}
        | {"headers": ACCEPT}
    )
    for i, m in enumerate(messages):
        t = times[i] if times is not None else t + 1_000_000
        sender, data = m[0], m[1]
        opcode, fin = (m[2], m[3]) if len(m) == 4 else (1, True)  # type: ignore[misc]
        lines.append(Message.of(ex, t, sender, opcode, fin, data).to_json())
    if close:
        for sender in ("client", "server"):
            t += 1000
            lines.append(Message.of(ex, t, sender, 8, True, b"\x03\xe8").to_json())
    lines.append({"type": "end", "exchange": ex, "t_ns": t + 1000, "reason": reason, "error": None})
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    return path
