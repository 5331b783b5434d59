"""The real `anthropic` MessageStream as the `anthropic-sdk` strategy: oracle and fallback.

`run_real_anthropic` serves the frames, re-encoded as SSE, to a real `anthropic.Anthropic`
client through an httpx2 MockTransport and runs `client.messages.stream(...)` the way a user
does: iterate the events, then `get_final_message()` (for a beta request,
`client.beta.messages.stream(...)` with the request's `anthropic-beta` header, whose
BetaMessageStream reads it), its request taken as posted to the recorded path and answered
with the recorded `request-id` (an SdkExchange: what its errors name). Its answer is the
ground truth `streamscope.dialects.anthropic.sdk_model.AnthropicSdkEmulation` must
reproduce. It re-parses every tool input on every delta (quadratic), so
`anthropic_sdk_result` only runs it where the emulation raises `Unmodeled`.

`anthropic` (and httpx2) are imported lazily: streamscope must import without them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from streamscope.core.calls import Call, StrategyError, Unmodeled
from streamscope.core.frames import Frame
from streamscope.dialects.anthropic.sdk_model import (
    AnthropicSdkEmulation,
    arguments_text,
    is_tool_block,
)
from streamscope.dialects.anthropic.wire import PLAIN, SdkExchange, bedrock_error
from streamscope.dialects.typed import FrameBody, emulated_or_real

NOT_INSTALLED = (
    "the anthropic package is not installed, and this stream has a shape streamscope's "
    "emulation of its MessageStream does not cover: install anthropic to see what it builds "
    "from this stream"
)
NOT_UTF8 = (
    "this stream has bytes that are not UTF-8: anthropic's SSE decoder raises "
    "UnicodeDecodeError on them, and the frames keep only their replacement characters"
)


def anthropic_version() -> str | None:
    """The installed anthropic version: what `anthropic-sdk` stands for (no import)."""
    from ..versions import installed

    return installed("anthropic")


class _Blocks:
    """Attribution of the snapshot's blocks: where each started, which deltas it took."""

    def __init__(self) -> None:
        self.seen: dict[int, list[int]] = {}  # id(block) -> [first, fragments, last]

    def note_new(self, content: object, frame: int) -> None:
        if isinstance(content, list):
            for block in content:
                self.seen.setdefault(id(block), [frame, 0, frame])

    def note_delta(self, block: object, frame: int) -> None:
        marks = self.seen[id(block)]
        marks[1] += 1
        marks[2] = frame

    def calls(self, content: object) -> list[Call]:
        out: list[Call] = []
        for position, block in enumerate(content if isinstance(content, list) else ()):
            if not is_tool_block(getattr(block, "type", None)):
                continue
            first, fragments, last = self.seen[id(block)]
            out.append(
                Call(
                    choice=0,
                    index=position,
                    id=getattr(block, "id", None),
                    type=block.type,
                    name=getattr(block, "name", None),
                    arguments=arguments_text(getattr(block, "input", None)),
                    fragments=fragments,
                    first_frame=first,
                    last_frame=last,
                )
            )
        return out


def run_real_anthropic(
    frames: Iterable[Frame],
    sent: SdkExchange = PLAIN,
    *,
    on_frame: Callable[[int, list[Call]], None] | None = None,
) -> list[Call] | StrategyError:
    """What the installed anthropic's `messages.stream()` + `get_final_message()` make of it
    (`beta.messages.stream()`'s, with its `anthropic-beta` header, for a `beta` request),
    its request taken as sent to `sent.path` and answered with its `request-id`.

    An exception raised while consuming a frame is reported at that frame; one raised by
    `get_final_message()` at the last frame's number (0 for none). `on_frame(number, calls)`
    sees the snapshot's tool blocks after every frame consumed without an exception.
    """
    import anthropic
    from anthropic.lib.streaming import BetaInputJsonEvent, InputJsonEvent

    from streamscope.http.clients import sdk_package

    frames = list(frames)
    last = frames[-1].number if frames else 0
    blocks = _Blocks()
    stream: Any = None

    def content() -> object:
        snapshot = getattr(stream, snapshot_name)
        return None if snapshot is None else snapshot.content

    def done(number: int) -> None:
        blocks.note_new(content(), number)
        if on_frame is not None:
            on_frame(number, blocks.calls(content()))

    body = FrameBody(frames, done)
    client = anthropic.Anthropic(
        api_key="streamscope",
        base_url="http://streamscope.invalid",
        http_client=body.client(
            sdk_package(anthropic),
            sent.path,
            None if sent.request_id is None else {"request-id": sent.request_id},
        ),
        max_retries=0,
    )
    with warnings.catch_warnings():
        # pydantic serializer warnings for wrong-typed values are noise here
        warnings.simplefilter("ignore")
        asked: dict[str, Any] = {
            "model": "streamscope",
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "-"}],
        }
        beta = sent.beta
        if beta is None:
            manager: Any = client.messages.stream(**asked)
            snapshot_name = "_MessageStream__final_message_snapshot"
            input_json: type = InputJsonEvent
        else:
            headers = {"anthropic-beta": beta.betas} if beta.betas else None
            manager = client.beta.messages.stream(**asked, extra_headers=headers)
            snapshot_name = "_BetaMessageStream__final_message_snapshot"
            input_json = BetaInputJsonEvent
        with manager as stream:
            previous: Any = None
            try:
                for event in stream:
                    if isinstance(event, input_json):
                        blocks.note_new(content(), body.current)
                        block = stream.current_message_snapshot.content[previous.index]
                        blocks.note_delta(block, body.current)
                    previous = event
            except Exception as exc:
                return StrategyError.from_exception(exc, body.current)
            if body.current:
                done(body.current)
            try:
                message = stream.get_final_message()
            except Exception as exc:
                return StrategyError.from_exception(exc, last)
            blocks.note_new(message.content, last)
            return blocks.calls(message.content)


def anthropic_sdk_result(
    frames: Iterable[Frame], sent: SdkExchange = PLAIN
) -> list[Call] | StrategyError | Unmodeled:
    """The `anthropic-sdk` strategy's answer: the emulation, or the real class where it can't
    (BetaMessageStream's for a request the beta client sent)."""
    frames = [bedrock_error(f) for f in frames]  # Bedrock's exceptions: the SDK's errors
    if any(f.bad_utf8 for f in frames):
        return Unmodeled(NOT_UTF8)
    return emulated_or_real(
        frames,
        lambda: AnthropicSdkEmulation(sent),
        anthropic_version,
        NOT_INSTALLED,
        lambda fed: run_real_anthropic(fed, sent),
    )
