"""The real strands-agents fold as the `strands` strategy: oracle and fallback.

`run_real_strands` writes the frames back as event stream messages, one a chunk, reads
them with botocore's own `EventStream` (the bedrock-runtime model's ConverseStream output
shape, its JSON event parser), exactly what boto3's `response["stream"]` yields to
strands' BedrockModel, and folds the events with `strands.event_loop.streaming.
process_stream`, collecting the toolUse blocks of the message it builds. Its answer is
the ground truth `sdk_model.StrandsEmulation` must reproduce; `strands_result` runs it
only where the emulation declines a shape.

What it leaves out of strands' BedrockModel: the request, its retries and the guardrail
redaction it applies on a `trace` (a redaction replaces text, never a toolUse). The real
fold keeps no frame numbers: its calls say frame 0.

strands and botocore are imported lazily: streamscope must import without them.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import Frame
from ...framing.aws_eventstream import encode
from ..typed import emulated_or_real
from . import PACKAGE
from .sdk_model import (
    NOT_CONVERSE,
    OPERATION,
    StrandsEmulation,
    client_type,
    input_json,
    invoked,
)

NOT_INSTALLED = (
    "strands-agents is not installed, and this stream has a shape streamscope's "
    "emulation of it does not cover: install strands-agents to see what its agents build"
)
# FrameHeader.type -> the wire's header type number (framing/aws_eventstream.py)
_TYPES = {"byte": 2, "short": 3, "integer": 4, "long": 5, "byte_array": 6, "string": 7}
_TYPES |= {"timestamp": 8, "uuid": 9}


def strands_version() -> str | None:
    """The installed strands-agents version: what `strands` stands for (no import)."""
    from ..versions import installed

    return installed(PACKAGE)


def message_bytes(frame: Frame) -> bytes:
    """A frame as the event stream message that carried it (its headers as they came; a
    frame that came without them, from a saved SSE, gets those its name says)."""
    payload = frame.data.encode("utf-8", "surrogatepass")
    if frame.headers:
        headers: list[tuple[str, int, object]] = []
        for h in frame.headers:
            if h.type == "bool":
                headers.append((h.name, 0 if h.value else 1, h.value))
            else:
                value = h.value.bytes if isinstance(h.value, uuid.UUID) else h.value
                headers.append((h.name, _TYPES[h.type], value))
        return encode(headers, payload)
    name = frame.event or ""
    kind = "exception" if name.endswith("Exception") else "event"
    key = ":exception-type" if kind == "exception" else ":event-type"
    return encode(
        [
            (key, 7, name),
            (":content-type", 7, "application/json"),
            (":message-type", 7, kind),
        ],
        payload,
    )


class _Body:
    """The body, one message per chunk; knows which frame the client is reading."""

    def __init__(self, frames: list[Frame]) -> None:
        self.frames = frames
        self.current = 0

    def stream(self) -> Iterator[bytes]:
        for frame in self.frames:
            self.current = frame.number
            yield message_bytes(frame)

    def close(self) -> None:
        pass


@functools.cache
def stream_shape() -> Any:
    """The ConverseStream output's event stream shape, from botocore's bedrock-runtime
    model (loaded once: the model is a large JSON file)."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model(OPERATION).output_shape.members["stream"]


def botocore_events(frames: Iterable[Frame]) -> tuple[_Body, Iterator[dict[str, Any]]]:
    """What boto3's `response["stream"]` yields for these frames (and the body, which
    knows the frame being read)."""
    from botocore.eventstream import EventStream
    from botocore.parsers import EventStreamJSONParser

    body = _Body(list(frames))
    return body, iter(EventStream(body, stream_shape(), EventStreamJSONParser(), OPERATION))


def run_real_strands(frames: Iterable[Frame]) -> list[Call] | StrategyError | Unmodeled:
    """The toolUse blocks of the message strands' process_stream builds from the events
    botocore yields; an exception is reported at the frame being read."""
    import asyncio

    from strands.event_loop.streaming import process_stream

    frames = list(frames)
    if any(invoked(f) for f in frames):
        return NOT_CONVERSE
    if any(f.invalid is not None for f in frames):
        return Unmodeled("a message the framing could not read whole cannot be written back")
    body, events = botocore_events(frames)

    async def chunks() -> AsyncIterator[Any]:
        for event in events:
            yield event

    async def fold() -> Any:
        last = None
        async for out in process_stream(chunks()):
            last = out
        return last

    try:
        stopped = asyncio.run(fold())
    except Exception as exc:
        return StrategyError.from_exception(exc, body.current)
    message = stopped["stop"][1] if stopped is not None else {"content": []}
    kinds = {  # (strands keeps no type: each call's is its start's, as a client's)
        use.get("toolUseId"): use.get("type")
        for f in frames
        if f.event == "contentBlockStart" and isinstance(f.payload, dict)
        for use in [(f.payload.get("start") or {}).get("toolUse")]
        if isinstance(use, dict)
    }
    out: list[Call] = []
    for block in message.get("content", []):
        use = block.get("toolUse") if isinstance(block, dict) else None
        if use is not None:
            out.append(
                Call(
                    0,
                    len(out),
                    use["toolUseId"],
                    client_type(kinds.get(use["toolUseId"])),
                    use["name"],
                    input_json(use["input"]),
                )
            )
    return out


def strands_result(frames: Iterable[Frame]) -> list[Call] | StrategyError | Unmodeled:
    """The `strands` strategy's answer: the emulation, or the real fold where it can't
    (Unmodeled where neither can: strands is not installed, or a frame cannot be written
    back)."""

    def real(frames: list[Frame]) -> list[Call] | StrategyError:
        got = run_real_strands(frames)
        if isinstance(got, Unmodeled):
            raise got
        return got

    try:
        return emulated_or_real(
            list(frames), StrandsEmulation, strands_version, NOT_INSTALLED, real
        )
    except Unmodeled as why:
        return why


__all__ = ["message_bytes", "run_real_strands", "strands_result", "strands_version"]
