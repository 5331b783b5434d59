"""The real `openai` SDK as the `openai-sdk` strategy: oracle for tests, fallback for the emulation.

`run_real_sdk` feeds frames through the same pipeline `client.chat.completions.stream(...)`
uses (Stream: stop at [DONE], `sse.json()`, the `error` key check, `construct_type` into a
`ChatCompletionChunk`; ChatCompletionStream: the `object` filter; then
`ChatCompletionStreamState.handle_chunk` and `get_final_completion()`), so its answer is the
ground truth `streamscope.dialects.chat.sdk_model.SdkEmulation` must reproduce. It costs ~0.6 ms a frame
and is quadratic, so `sdk_result` only uses it when the emulation raises `Unmodeled`.

`openai` is imported lazily: streamscope's core must not depend on it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from streamscope.core.calls import Call, StrategyError
from streamscope.core.frames import Frame
from streamscope.dialects.chat.sdk_model import SdkEmulation, Unmodeled, custom_fields
from streamscope.dialects.chat.strict import of_sdk

# Attribution marker: appended (last) to every tool-call delta entry we hand the SDK, as the
# string "<frame>;". accumulate_delta concatenates it when entries merge and keeps it when they
# are set, so each snapshot entry ends up holding the frame numbers of every delta merged into
# it. (A string, not a list of ints: pydantic re-dumps the snapshot every chunk, and one growing
# string costs a memcpy where a growing list costs per element.) It can only surface in the
# RuntimeError message (the repr of the offending entry), where it is stripped.
MARKER = "__streamscope_frames__"


def _mark(data: object, number: int) -> None:
    if not isinstance(data, dict):
        return
    choices = data.get("choices")
    if not isinstance(choices, list):
        return
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        tool_calls = delta.get("tool_calls") if isinstance(delta, dict) else None
        if isinstance(tool_calls, list):
            for entry in tool_calls:
                if isinstance(entry, dict):
                    entry[MARKER] = f"{number};"


def _unmark(message: str, number: int) -> str:
    tag = f"{MARKER!r}: {f'{number};'!r}"
    return message.replace(", " + tag + "}", "}").replace("{" + tag + "}", "{}")


def _calls(completion: Any) -> list[Call]:
    out: list[Call] = []
    for choice in completion.choices if completion is not None else ():
        message = getattr(choice, "message", None)  # a mid-stream snapshot can lack one
        for tc in getattr(message, "tool_calls", None) or []:
            extra = tc.model_extra or {}
            marks = extra.get(MARKER)
            frames = [int(n) for n in marks.split(";")[:-1]] if isinstance(marks, str) else []
            fn = tc.function
            if fn is not None:
                name, arguments = fn.name, fn.arguments
            else:  # a custom call: its `custom` object is an extra of the snapshot entry
                name, arguments = custom_fields(extra.get("custom"))
            out.append(
                Call(
                    choice=choice.index,
                    index=extra.get("index"),
                    id=tc.id,
                    type=tc.type,
                    name=name,
                    arguments=arguments,
                    fragments=len(frames),
                    first_frame=frames[0] if frames else 0,
                    last_frame=frames[-1] if frames else 0,
                )
            )
    return out


def omitted(openai: Any) -> Any:
    """What the `openai` module takes for an argument not given: `omit` in newer releases,
    NOT_GIVEN (still there) in older ones such as 1.66."""
    return getattr(openai, "omit", None) or openai.NOT_GIVEN


def openai_version() -> str | None:
    """The installed openai version: what the `openai-sdk` strategy stands for (no import)."""
    from ..versions import installed

    return installed("openai")


def _snapshot(state: Any) -> Any:
    try:
        return state.current_completion_snapshot
    except AssertionError:  # no chunk accepted yet
        return None


def run_real_sdk(
    frames: Iterable[Frame],
    input_tools: list[Any] | None = None,
    response_format: object | None = None,
    *,
    on_frame: Callable[[int, list[Call]], None] | None = None,
) -> list[Call] | StrategyError:
    """What the installed SDK's `.stream()` + `get_final_completion()` make of `frames`.

    Errors raised while consuming a frame are reported at that frame; errors from
    `get_final_completion()` at the number of the last frame given (0 for none).
    `on_frame(number, calls)`, if given, sees the snapshot's tool calls after every frame
    consumed without an exception (what `SdkEmulation.calls()` must show mid-stream).
    """
    import importlib

    import openai
    from openai import APIError
    from openai._models import construct_type
    from openai._streaming import ServerSentEvent
    from openai.lib.streaming.chat import ChatCompletionStreamState, _completions

    # the `object` filter ChatCompletionStream applies; an older release has none and
    # hands every chunk to the state
    accepted: Callable[[Any], bool] = getattr(
        _completions, "_is_valid_chat_completion_chunk_weak", lambda chunk: True
    )
    from openai.types.chat import ChatCompletionChunk

    from streamscope.http.clients import sdk_package

    omit = omitted(openai)
    # the request Stream hands APIError (openai 3.63 reads its headers, to drop credentials)
    request = importlib.import_module(sdk_package(openai)).Request(
        "POST", "http://streamscope.invalid/v1/chat/completions"
    )
    state: Any = ChatCompletionStreamState(
        input_tools=omit if input_tools is None else input_tools,
        response_format=omit if response_format is None else response_format,  # type: ignore[arg-type]
    )
    last = 0
    done = False
    with warnings.catch_warnings():
        # pydantic serializer warnings for wrong-typed values are noise here
        warnings.simplefilter("ignore")
        for frame in frames:
            last = frame.number
            if done:
                continue
            sse = ServerSentEvent(event=frame.event, data=frame.data)
            try:
                if sse.data.startswith("[DONE]"):
                    done = True
                    if on_frame is not None:
                        on_frame(frame.number, _calls(_snapshot(state)))
                    continue
                data = sse.json()
                if sse.event and sse.event.startswith("thread."):
                    # Stream's Assistants special case (the `error` check needs event == "error")
                    data = {"data": data, "event": sse.event}
                elif isinstance(data, dict) and data.get("error"):
                    error = data.get("error")
                    message = error.get("message") if isinstance(error, dict) else None
                    if not message or not isinstance(message, str):
                        message = "An error occurred during streaming"
                    raise APIError(message=message, request=request, body=data["error"])
                _mark(data, frame.number)
                chunk = (
                    None if data is None else construct_type(type_=ChatCompletionChunk, value=data)
                )
                if accepted(chunk):
                    state.handle_chunk(chunk)
            except Exception as exc:
                err = StrategyError.from_exception(exc, frame.number, of_sdk(exc, input_tools))
                if isinstance(exc, RuntimeError):
                    err.error = _unmark(err.error, frame.number)
                return err
            if on_frame is not None:
                on_frame(frame.number, _calls(_snapshot(state)))
        try:
            completion = state.get_final_completion()
        except Exception as exc:
            return StrategyError.from_exception(exc, last, of_sdk(exc, input_tools))
        return _calls(completion)


def sdk_result(
    frames: Iterable[Frame],
    input_tools: list[Any] | None = None,
    response_format: object | None = None,
) -> list[Call] | StrategyError:
    """The `openai-sdk` strategy's answer: the fast emulation, or the real SDK where it can't."""
    frames = list(frames)
    emu = SdkEmulation(input_tools=input_tools, response_format=response_format)
    try:
        for frame in frames:
            emu.feed(frame)
        return emu.finish(frames[-1].number if frames else 0)
    except Unmodeled:
        return run_real_sdk(frames, input_tools=input_tools, response_format=response_format)
