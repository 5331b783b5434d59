"""The real `openai` ResponseStream as the `openai-sdk` strategy of the Responses API: oracle
and fallback.

`run_real_responses` serves the frames, re-encoded as SSE, to a real `openai.OpenAI` client
through an httpx2 MockTransport and runs `client.responses.stream(...)` the way a user does:
iterate the events, then `get_final_response()`. Its answer is the ground truth
`streamscope.dialects.responses.sdk_model.ResponsesSdkEmulation` must reproduce. It dumps and
constructs pydantic models on every event, so `responses_sdk_result` only runs it where the
emulation raises `Unmodeled`.

`openai` (and httpx2) are imported lazily: streamscope must import without them.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from streamscope.core.calls import Call, StrategyError, Unmodeled
from streamscope.core.frames import Frame
from streamscope.dialects.chat.oracle import omitted, openai_version
from streamscope.dialects.responses.sdk_model import TOOL_ITEMS, ResponsesSdkEmulation
from streamscope.dialects.typed import FrameBody, emulated_or_real

NOT_INSTALLED = (
    "the openai package is not installed, and this stream has a shape streamscope's "
    "emulation of its ResponseStream does not cover: install openai to see what it builds "
    "from this stream"
)
NOT_UTF8 = (
    "this stream has bytes that are not UTF-8: openai's SSE decoder raises "
    "UnicodeDecodeError on them, and the frames keep only their replacement characters"
)


def _call(item: Any, index: object, first: int, fragments: int, last: int) -> Call:
    kind = item.type
    held = item.arguments if kind == "function_call" else item.input
    return Call(
        choice=0,
        index=index,
        id=item.call_id,
        type=kind,
        name=item.name,
        arguments=held if type(held) is str else copy.deepcopy(held),  # a list grows in place
        fragments=fragments,
        first_frame=first,
        last_frame=last,
        item_id=item.id,
    )


def _is_call(item: object) -> bool:
    return getattr(item, "type", None) in TOOL_ITEMS


class _Watch:
    """Attribution, kept beside the real state: where each snapshot item came from and which
    argument deltas it took; which frame brought each completed item; and, for the response
    `get_final_response()` returns, which frame each of its output items came from."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.items: dict[int, list[Any]] = {}  # id(item) -> [item, first, fragments, last]
        self.completed: dict[object, tuple[object, int]] = {}  # index -> (item, frame)
        self.final_frames: list[int] = []

    def snapshot(self) -> list[Any]:
        snapshot = self.state._ResponseStreamState__current_snapshot
        output = getattr(snapshot, "output", None)
        return list(output) if isinstance(output, (list, str, dict)) else []

    def note_frame(self, number: int) -> None:
        for item in self.snapshot():
            self.items.setdefault(id(item), [item, number, 0, number])
        for index, item in self.state._completed_output.items():
            if self.completed.get(index, (None,))[0] is not item:
                self.completed[index] = (item, number)

    def note_delta(self, output_index: object, number: int) -> None:
        marks = self.items[id(self.state._output_items[output_index])]
        marks[2] += 1
        marks[3] = number

    def note_completed(self, event: Any, number: int) -> None:
        """A response.completed was accepted: its output's items came from this frame, or,
        recovered from the completed items, each from the frame that brought it."""
        if getattr(event.response, "output", None) is None:
            done = self.state._completed_output
            self.final_frames = [self.completed[index][1] for index in sorted(done)]
        else:
            self.final_frames = [number] * len(event.response.output)

    def calls(self) -> list[Call]:
        by_item = {id(item): index for index, item in self.state._output_items.items()}
        out = []
        for item in self.snapshot():
            if _is_call(item):
                _, first, fragments, last = self.items[id(item)]
                out.append(_call(item, by_item.get(id(item)), first, fragments, last))
        return out

    def final(self, output: list[Any]) -> list[Call]:
        return [
            _call(item, position, self.final_frames[position], 0, self.final_frames[position])
            for position, item in enumerate(output)
            if _is_call(item)
        ]


def run_real_responses(
    frames: Iterable[Frame],
    input_tools: list[Any] | None = None,
    *,
    on_frame: Callable[[int, list[Call]], None] | None = None,
) -> list[Call] | StrategyError:
    """What the installed openai's `responses.stream()` + `get_final_response()` make of it.

    An exception raised while consuming a frame is reported at that frame; one raised by
    `get_final_response()` at the last frame's number (0 for none), and one raised before any
    frame is read (by `input_tools`) at 0. `on_frame(number, calls)` sees the snapshot's
    tool calls after every frame consumed without an exception.
    """
    import openai
    from openai.lib.streaming.responses import ResponseFunctionCallArgumentsDeltaEvent

    from streamscope.http.clients import sdk_package

    frames = list(frames)
    last = frames[-1].number if frames else 0
    watch: _Watch | None = None

    def done(number: int) -> None:
        assert watch is not None
        watch.note_frame(number)
        if on_frame is not None:
            on_frame(number, watch.calls())

    body = FrameBody(frames, done)
    client = openai.OpenAI(
        api_key="streamscope",
        base_url="http://streamscope.invalid/v1",
        http_client=body.client(sdk_package(openai)),
        max_retries=0,
    )
    with warnings.catch_warnings():
        # pydantic serializer warnings for wrong-typed values are noise here
        warnings.simplefilter("ignore")
        try:
            manager = client.responses.stream(
                model="streamscope",
                input="-",
                tools=omitted(openai) if input_tools is None else input_tools,
            )
            stream = manager.__enter__()
        except Exception as exc:
            return StrategyError.from_exception(exc, 0)
        try:
            state = stream._state
            watch = _Watch(state)
            accumulate = state.accumulate_event

            def watched(event: Any) -> Any:
                snapshot = accumulate(event)
                if event.type == "response.completed":
                    watch.note_completed(event, body.current)
                return snapshot

            state.accumulate_event = watched  # type: ignore[method-assign]
            try:
                for event in stream:
                    if isinstance(event, ResponseFunctionCallArgumentsDeltaEvent):
                        watch.note_delta(event.output_index, body.current)
            except Exception as exc:
                return StrategyError.from_exception(exc, body.current)
            if body.current:
                done(body.current)
            try:
                response = stream.get_final_response()
            except Exception as exc:
                return StrategyError.from_exception(exc, last)
            return watch.final(response.output)
        finally:
            manager.__exit__(None, None, None)


def responses_sdk_result(
    frames: Iterable[Frame], input_tools: list[Any] | None = None
) -> list[Call] | StrategyError | Unmodeled:
    """The strategy's answer: the emulation, or the real class where it can't answer."""
    frames = list(frames)
    if any(f.bad_utf8 for f in frames):
        return Unmodeled(NOT_UTF8)
    return emulated_or_real(
        frames,
        lambda: ResponsesSdkEmulation(input_tools),
        openai_version,
        NOT_INSTALLED,
        lambda found: run_real_responses(found, input_tools),
    )
