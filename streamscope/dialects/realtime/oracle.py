"""The real `openai` realtime client's parse as the `openai-sdk` strategy of the Realtime API:
oracle and fallback.

`run_real_realtime` hands each frame's message, as its bytes, to the installed openai's
`RealtimeConnection.parse_event` (what `connection.recv()` and iterating the connection
do with every message) and collects the calls from the typed events as sdk_model.py says
users do (the openai-agents pattern: a completed `function_call` item at
`response.output_item.added` / `.done`). Its answer is the ground truth
`streamscope.dialects.realtime.sdk_model.RealtimeSdkEmulation` must reproduce;
`realtime_sdk_result` runs it only where the emulation raises `Unmodeled`.

`openai` is imported lazily: streamscope must import without it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, cast

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import Frame
from ..chat.oracle import openai_version
from ..typed import emulated_or_real
from .sdk_model import ITEM_EVENTS, RealtimeSdkEmulation

NOT_INSTALLED = (
    "the openai package is not installed, and this stream has a shape streamscope's "
    "emulation of its realtime client does not cover: install openai to see what it makes "
    "of this stream"
)
NOT_READ = (
    "this stream has a message that is not UTF-8 or that the WebSocket framing could not "
    "read whole: the openai client's websockets connection fails on it, and the frames keep "
    "only what could be read"
)


def run_real_realtime(frames: Iterable[Frame]) -> list[Call] | StrategyError:
    """The calls a user of the installed openai's realtime client collects from these
    messages, or what their loop raises (at its frame)."""
    from openai.resources.realtime.realtime import RealtimeConnection

    # (parse_event reads nothing of the connection: it is called on none)
    parse = RealtimeConnection.parse_event
    calls: list[Call] = []
    for frame in frames:
        n = frame.number
        try:
            # (read as the user's code reads it: untyped, its attributes as they are)
            event: Any = parse(cast(Any, None), frame.data.encode("utf-8", "surrogatepass"))
            if event.type == ITEM_EVENTS[0] or event.type == ITEM_EVENTS[1]:
                item: Any = event.item
                if item.type == "function_call" and item.status == "completed":
                    arguments = item.arguments or ""
                    calls.append(
                        Call(
                            choice=0,
                            index=event.output_index,
                            id=item.call_id or "",
                            type="function_call",
                            name=item.name or "",
                            arguments=copy.copy(arguments),
                            fragments=0,
                            first_frame=n,
                            last_frame=n,
                            item_id=item.id or "",
                        )
                    )
        except Exception as exc:  # what the user's loop raises stops it
            return StrategyError.from_exception(exc, n)
    return calls


def realtime_sdk_result(frames: Iterable[Frame]) -> list[Call] | StrategyError | Unmodeled:
    """The strategy's answer: the emulation, or the real parse where it can't answer."""
    frames = list(frames)
    if any(f.bad_utf8 or f.invalid is not None for f in frames):
        return Unmodeled(NOT_READ)
    return emulated_or_real(
        frames, RealtimeSdkEmulation, openai_version, NOT_INSTALLED, run_real_realtime
    )
