"""ResponsesSdkEmulation must report exactly what the installed openai ResponseStream does.

Every case runs the real class (oracle.run_real_responses, a real client over an httpx2
MockTransport) beside the emulation and compares the final result, the snapshot's tool
calls after every frame, a copy() taken mid-stream carried on to the end, and the frames
themselves (never mutated).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.core.calls import Call, StrategyError, Unmodeled
from streamscope.core.frames import Frame, parse_payload
from streamscope.dialects.chat.oracle import openai_version
from streamscope.dialects.responses import sdk_model
from streamscope.dialects.responses.oracle import (
    NOT_INSTALLED,
    responses_sdk_result,
    run_real_responses,
)
from streamscope.dialects.responses.sdk_model import (
    VERIFIED_OPENAI_RESPONSES,
    ResponsesSdkEmulation,
)
from streamscope.framing.sse import SseDecoder

from ..lone_keys import LONE, encode_error, put_key, says, with_key

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "responses"
SAMPLES = sorted((Path(__file__).resolve().parents[3] / "recordings").glob("responses-*.jsonl"))

# --- building streams ----------------------------------------------------------------------

Item = tuple[str | None, Any]  # (SSE event name, payload: JSON-able value, or raw data str)
Tools = list | None


class Raw(str):
    """Event data sent as is (not JSON-encoded)."""


def frames_of(items: list[Item]) -> list[Frame]:
    out = []
    for number, (event, payload) in enumerate(items, 1):
        data = payload if isinstance(payload, Raw) else json.dumps(payload)
        out.append(Frame(number=number, data=data, payload=parse_payload(data), event=event))
    return out


def ev(kind: Any, **fields: Any) -> Item:
    """An event named as its type says, with a sequence number."""
    return (kind if type(kind) is str else None, {"type": kind, "sequence_number": 1, **fields})


def response(output: Any = None, **extra: Any) -> dict:
    body = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt"}
    if output is not None:
        body["output"] = output
    return {**body, **extra}


def created(output: Any = None, **extra: Any) -> Item:
    return ev("response.created", response=response(output, **extra))


def lifecycle(kind: str, output: Any = None, **extra: Any) -> Item:
    return ev(kind, response=response(output, **extra))


def completed(output: Any = None, **extra: Any) -> Item:
    return lifecycle("response.completed", output, status="completed", **extra)


def fc(n: int = 0, arguments: Any = "", **extra: Any) -> dict:
    item = {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": "get_weather",
        "arguments": arguments,
        "status": "in_progress",
    }
    return {**item, **extra}


def custom(n: int = 0, input: Any = "", **extra: Any) -> dict:
    item = {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}", "name": "sh"}
    return {**item, "input": input, **extra}


def message(n: int = 0, content: Any = None, **extra: Any) -> dict:
    item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "in_progress"}
    return {**item, "content": [] if content is None else content, **extra}


def reasoning(n: int = 0) -> dict:
    return {"type": "reasoning", "id": f"rs_{n}", "summary": []}


def builtin(kind: str, n: int = 0) -> dict:
    return {"type": kind, "id": f"{kind[:2]}_{n}", "status": "in_progress"}


def added(index: Any, item: Any) -> Item:
    return ev("response.output_item.added", output_index=index, item=item)


def done(index: Any, item: Any) -> Item:
    return ev("response.output_item.done", output_index=index, item=item)


def args(index: Any, delta: Any, item_id: str = "fc_0", **extra: Any) -> Item:
    return ev(
        "response.function_call_arguments.delta",
        item_id=item_id,
        output_index=index,
        delta=delta,
        **extra,
    )


def args_done(index: Any, arguments: Any, item_id: str = "fc_0") -> Item:
    return ev(
        "response.function_call_arguments.done",
        item_id=item_id,
        output_index=index,
        arguments=arguments,
    )


def custom_delta(index: Any, delta: Any, item_id: str = "ctc_0") -> Item:
    return ev(
        "response.custom_tool_call_input.delta", item_id=item_id, output_index=index, delta=delta
    )


def custom_done(index: Any, input: Any, item_id: str = "ctc_0") -> Item:
    return ev(
        "response.custom_tool_call_input.done", item_id=item_id, output_index=index, input=input
    )


def part_added(index: Any, content_index: Any = 0, part: Any = None) -> Item:
    part = {"type": "output_text", "text": "", "annotations": []} if part is None else part
    return ev(
        "response.content_part.added",
        item_id="msg_0",
        output_index=index,
        content_index=content_index,
        part=part,
    )


def text(index: Any, delta: Any, content_index: Any = 0) -> Item:
    return ev(
        "response.output_text.delta",
        item_id="msg_0",
        output_index=index,
        content_index=content_index,
        delta=delta,
        logprobs=[],
    )


def text_done(index: Any, content_index: Any = 0, text: Any = "hi") -> Item:
    return ev(
        "response.output_text.done",
        item_id="msg_0",
        output_index=index,
        content_index=content_index,
        text=text,
        logprobs=[],
    )


def call_stream(pieces: list[str], n: int = 0, index: int = 0) -> list[Item]:
    """One function call streamed in `pieces`, completed with the joined arguments."""
    whole = "".join(pieces)
    return [
        added(index, fc(n)),
        *[args(index, p, f"fc_{n}") for p in pieces],
        args_done(index, whole, f"fc_{n}"),
        done(index, fc(n, whole, status="completed")),
    ]


def stream(*body: Item | list[Item], end: Item | None = None) -> list[Item]:
    items: list[Item] = [created()]
    for part in body:
        items += part if isinstance(part, list) else [part]
    items.append(completed() if end is None else end)
    return items


# --- the differential check ----------------------------------------------------------------


def emulate(
    frames: list[Frame], tools: Tools = None, fork_at: int | None = None
) -> tuple[list[Call] | StrategyError, dict[int, list[Call]]]:
    """Feed every frame, recording calls() after each; optionally carry on in a copy()."""
    emu = ResponsesSdkEmulation(tools)
    mid: dict[int, list[Call]] = {}
    for i, frame in enumerate(frames):
        if i == fork_at:
            emu = emu.copy()
        emu.feed(frame)
        if emu.error is None:
            mid[frame.number] = emu.calls()
    return emu.finish(frames[-1].number if frames else 0), mid


def check_frames(frames: list[Frame], tools: Tools = None) -> bool:
    """Assert emulation == real class; False when the emulation declined (Unmodeled)."""
    before = copy.deepcopy([(f.data, f.payload, f.event) for f in frames])
    real_mid: dict[int, list[Call]] = {}
    real = run_real_responses(frames, tools, on_frame=real_mid.__setitem__)
    try:
        got, mid = emulate(frames, tools)
    except Unmodeled:
        assert responses_sdk_result(frames, tools) == real
        return False
    assert got == real
    for number, calls in real_mid.items():
        assert mid.get(number) == calls, f"frame {number}"
    # a copy taken mid-stream carries on exactly like the original
    assert emulate(frames, tools, fork_at=len(frames) // 2) == (got, mid)
    assert [(f.data, f.payload, f.event) for f in frames] == before
    assert responses_sdk_result(frames, tools) == real
    return True


def check(items: list[Item], tools: Tools = None) -> bool:
    return check_frames(frames_of(copy.deepcopy(items)), tools)


def final(items: list[Item], tools: Tools = None) -> list[Call] | StrategyError:
    result, _ = emulate(frames_of(items), tools)
    return result


# --- hand-written cases: every quirk, each checked against the real class --------------------

WEATHER = ['{"loc', 'ation": "Par', 'is", "unit', '": "c"}']
WHOLE = "".join(WEATHER)
STRICT = [{"type": "function", "name": "get_weather", "parameters": {}, "strict": True}]

CASES: dict[str, list[Item]] = {
    "function-call": stream(call_stream(WEATHER)),
    "two-calls": stream(call_stream(WEATHER), call_stream(['{"a":', "1}"], n=1, index=1)),
    "interleaved-items": stream(
        added(0, reasoning()),
        done(0, reasoning()),
        added(1, message()),
        part_added(1),
        text(1, "Let me look"),
        text_done(1),
        done(1, message(content=[{"type": "output_text", "text": "Let me look"}])),
        added(2, builtin("web_search_call")),
        done(2, builtin("web_search_call") | {"status": "completed"}),
        call_stream(WEATHER, n=3, index=3),
        added(4, custom(4)),
        custom_delta(4, "ls -l", "ctc_4"),
        custom_done(4, "ls -l", "ctc_4"),
        done(4, custom(4, "ls -l")),
        added(5, builtin("code_interpreter_call")),
        done(5, builtin("code_interpreter_call")),
        added(6, builtin("mcp_call")),
        done(6, builtin("mcp_call")),
    ),
    "interleaved-deltas-of-two-open-calls": stream(
        added(0, fc(0)),
        added(1, fc(1)),
        args(0, '{"a":', "fc_0"),
        args(1, '{"b":', "fc_1"),
        args(0, "1}", "fc_0"),
        args(1, "2}", "fc_1"),
        done(1, fc(1, '{"b":2}')),
        done(0, fc(0, '{"a":1}')),
    ),
    "custom-tool-input-deltas-not-applied": stream(
        added(0, custom(0)),
        custom_delta(0, "echo hi"),
        custom_done(0, "echo hi"),
        done(0, custom(0, "echo hi")),
    ),
    "arguments-only-in-done-events": stream(
        added(0, fc(0)), args_done(0, WHOLE), done(0, fc(0, WHOLE))
    ),
    "arguments-only-in-item-done (LM Studio)": stream(added(0, fc(0)), done(0, fc(0, WHOLE))),
    "arguments-done-disagrees": stream(
        added(0, fc(0)), args(0, "{}"), args_done(0, "[1]"), done(0, fc(0, "{}"))
    ),
    "item-done-disagrees": stream(added(0, fc(0)), args(0, "{}"), done(0, fc(0, '{"x": 2}'))),
    "item-done-other-name": stream(added(0, fc(0)), done(0, fc(0, name="other"))),
    "item-done-other-call-id": stream(added(0, fc(0)), done(0, fc(0, call_id="call_9"))),
    "item-done-other-item-id": stream(added(0, fc(0)), done(0, fc(0, id="fc_9"))),
    "item-done-no-item-id": stream(added(0, fc(0)), done(0, fc(0, id=None))),
    "item-done-added-had-no-id": stream(added(0, fc(0, id=None)), done(0, fc(0, id="fc_9"))),
    "item-done-other-type": stream(added(0, fc(0)), done(0, custom(0))),
    "item-done-twice": stream(added(0, fc(0)), done(0, fc(0, "{}")), done(0, fc(0, "[]"))),
    "item-done-twice-other-call": stream(added(0, fc(0)), done(0, fc(0)), done(0, fc(1))),
    "item-done-same-call-two-indexes": stream(added(0, fc(0)), done(0, fc(0)), done(1, fc(0))),
    "item-done-without-added": stream(done(3, fc(0, "{}"))),
    "item-done-missing-item": stream(
        added(0, fc(0)), ev("response.output_item.done", output_index=0)
    ),
    "item-done-item-a-string": stream(done(0, "x")),
    "empty-string-delta": stream(
        added(0, fc(0)), args(0, ""), args(0, "{}"), args(0, ""), done(0, fc(0, "{}"))
    ),
    "delta-for-unknown-index": stream(added(0, fc(0)), args(1, "{}")),
    "delta-for-unknown-item-id": stream(
        added(0, fc(0)), args(0, "{}", "fc_zz"), done(0, fc(0, "{}"))
    ),
    "delta-to-a-message": stream(added(0, message()), args(0, "{}")),
    "delta-to-a-custom-call": stream(added(0, custom(0)), args(0, "{}")),
    "delta-before-created": [args(0, "{}"), created()],
    "delta-not-a-string": stream(added(0, fc(0)), args(0, 5)),
    "delta-null": stream(added(0, fc(0)), args(0, None)),
    "delta-missing": stream(
        added(0, fc(0)), ev("response.function_call_arguments.delta", output_index=0)
    ),
    "delta-list-to-list-arguments": stream(
        added(0, fc(0, [1])),
        args(0, "ab"),
        args(0, [2]),
        args(0, {"k": 1}),
        end=completed([fc(0, [1])]),
    ),
    "delta-list-to-string": stream(added(0, fc(0)), args(0, ["a"])),
    "arguments-missing": stream(added(0, {"type": "function_call", "call_id": "c"}), args(0, "{}")),
    "arguments-number": stream(added(0, fc(0, 5)), args(0, 2)),
    "arguments-number-plus-string": stream(added(0, fc(0, 1.5)), args(0, "x")),
    "arguments-object": stream(added(0, fc(0, {"a": 1})), args(0, "x")),
    "duplicate-output-index": stream(added(0, fc(0)), added(0, fc(1))),
    "duplicate-output-index-of-created-output": [created([fc(0)]), added(0, fc(1))],
    "output-index-gap": stream(added(2, fc(0)), args(2, "{}"), done(2, fc(0, "{}"))),
    "output-index-negative": stream(added(-1, fc(0)), args(-1, "{}"), done(-1, fc(0, "{}"))),
    "output-index-huge": stream(added(2**70, fc(0)), args(2**70, "{}"), done(2**70, fc(0))),
    "output-index-fraction": stream(added(0.5, fc(0)), args(0.5, "{}"), done(0.5, fc(0))),
    "output-index-word": stream(added("a", fc(0)), args("a", "{}"), done("a", fc(0))),
    "output-index-null": stream(added(None, fc(0)), args(None, "{}"), done(None, fc(0))),
    "output-index-missing": stream(
        ev("response.output_item.added", item=fc(0)),
        ev("response.function_call_arguments.delta", delta="{}"),
    ),
    "output-index-list": stream(added([0], fc(0))),
    "output-index-object": stream(added(0, fc(0)), args({"a": 0}, "{}")),
    "output-index-list-in-done": stream(added(0, fc(0)), done([0], fc(0))),
    "mixed-index-types-sorted": stream(
        added(0, fc(0)), added("a", fc(1)), done(0, fc(0)), done("a", fc(1))
    ),
    "obfuscation": stream(
        added(0, fc(0)), args(0, "{}", obfuscation="xYz12"), done(0, fc(0, "{}"))
    ),
    "sequence-numbers-odd": stream(
        added(0, fc(0)),
        ev("response.function_call_arguments.delta", output_index=0, delta="{", sequence_number=99),
        ev("response.function_call_arguments.delta", output_index=0, delta="}", sequence_number=3),
        done(0, fc(0, "{}")),
    ),
    "sequence-number-string": stream(
        added(0, fc(0)),
        ev(
            "response.function_call_arguments.delta",
            output_index=0,
            delta="{}",
            sequence_number="x",
        ),
    ),
    "completed-with-output": stream(call_stream(WEATHER), end=completed([fc(0, WHOLE)])),
    "completed-output-disagrees": stream(
        call_stream(WEATHER), end=completed([fc(0, '{"other": 1}')])
    ),
    "completed-output-other-id": stream(
        call_stream(WEATHER), end=completed([fc(0, WHOLE, id="fc_x")])
    ),
    "completed-output-extra-item": stream(
        call_stream(WEATHER), end=completed([fc(0, WHOLE), custom(1, "x")])
    ),
    "completed-output-covers-unfinished": stream(
        added(0, fc(0)), args(0, "{}"), end=completed([fc(0, "{}")])
    ),
    "completed-without-output-unfinished": stream(added(0, fc(0)), args(0, "{}")),
    "completed-output-empty-list": stream(call_stream(WEATHER), end=completed([])),
    "completed-output-empty-string": stream(call_stream(WEATHER), end=completed("")),
    "completed-output-string": stream(end=completed("ab")),
    "completed-output-number": stream(end=completed(3)),
    "completed-output-junk-entry": stream(end=completed([None])),
    "completed-other-id": stream(call_stream(WEATHER), end=completed(id="resp_2")),
    "completed-response-missing": stream(end=ev("response.completed")),
    "completed-response-string": [created(id=None), ev("response.completed", response="x")],
    "completed-twice": stream(call_stream(WEATHER), completed(), end=completed([fc(0, "{}")])),
    "completed-message-content-junk": stream(end=completed([message(content=["x"])])),
    "completed-message-content-string": stream(end=completed([message(content="ab")])),
    "completed-message-content-number": stream(end=completed([message(content=7)])),
    "completed-message-content-parts": stream(
        end=completed(
            [
                message(
                    content=[
                        {"type": "output_text", "text": "hi", "annotations": []},
                        {"type": "refusal", "refusal": "no"},
                    ]
                )
            ]
        )
    ),
    "after-completed": [*stream(call_stream(WEATHER)), args(0, "x"), added(0, fc(5))],
    "incomplete": [created(), *call_stream(WEATHER), lifecycle("response.incomplete")],
    "incomplete-with-open-item": [
        created(),
        added(0, fc(0)),
        args(0, "{"),
        lifecycle("response.incomplete"),
    ],
    "incomplete-with-output": [
        created(),
        added(0, fc(0)),
        lifecycle("response.incomplete", [fc(0)]),
    ],
    "incomplete-junk-output-item": [created(["x"]), lifecycle("response.incomplete")],
    "incomplete-mixed-index-types": [
        created(),
        added(0, fc(0)),
        added("a", fc(1)),
        lifecycle("response.incomplete"),
    ],
    "incomplete-other-id": [created(), lifecycle("response.incomplete", id="resp_9")],
    "failed": [
        created(),
        added(0, fc(0)),
        lifecycle("response.failed", error={"code": "x", "message": "m"}),
    ],
    "failed-response-missing": [created(id=None), ev("response.failed")],
    "in-progress-and-queued": [
        created(),
        lifecycle("response.queued"),
        lifecycle("response.in_progress"),
        *call_stream(WEATHER),
        lifecycle("response.in_progress", [fc(0, "replaced")]),
        completed(),
    ],
    "in-progress-replacement-other-id": [
        created(),
        *call_stream(WEATHER),
        lifecycle("response.in_progress", [fc(0, id="fc_x")]),
    ],
    "in-progress-conflicting-identities": [
        created(),
        lifecycle("response.in_progress", [fc(0), fc(0)]),
    ],
    "in-progress-junk-output": [created(), lifecycle("response.in_progress", ["x"])],
    "in-progress-output-string": [created(), lifecycle("response.in_progress", "ab")],
    "in-progress-response-missing": [created(id=None), ev("response.in_progress")],
    "second-created": [created(), *call_stream(WEATHER), created([fc(0, "again")]), completed()],
    "created-with-output": [
        created([fc(0), message()]),
        args(0, "{}"),
        done(0, fc(0, "{}")),
        done(1, message()),
        completed(),
    ],
    "created-output-junk": [created(["x", None, [1]]), added(3, fc(0)), completed()],
    "created-output-string": [created("ab"), completed(id="resp_1")],
    "created-output-string-then-added": [created("ab"), added(5, fc(0))],
    "created-output-object": [created({"k": 1}), added(1, fc(0))],
    "created-output-number": [created(5)],
    "created-output-false": [created(False)],
    "created-truncated": [
        ev("response.created", response={"id": "resp_1"}),
        *call_stream(WEATHER),
        completed(),
    ],
    "created-without-response": [ev("response.created")],
    "created-response-list": [ev("response.created", response=[{"id": 1}])],
    "created-cut-mid-json": [("response.created", Raw('{"type": "response.created", "resp'))],
    "error-event": [
        created(),
        ("error", {"type": "error", "code": "server_error", "message": "boom", "param": None}),
        completed(),
    ],
    "error-event-before-created": [("error", {"type": "error", "message": "boom"})],
    "error-key": [created(), ("error", {"type": "error", "error": {"message": "overloaded"}})],
    "error-key-no-message": [created(), (None, {"error": {"code": 5}})],
    "error-key-message-number": [created(), (None, {"error": {"message": 5}})],
    "error-key-string": [created(), (None, {"error": "bad"})],
    "error-key-falsy": [
        created(),
        (None, {"type": "response.in_progress", "error": None, "response": response()}),
        completed(),
    ],
    "error-not-json": [created(), ("error", Raw("upstream went away"))],
    "error-empty": [created(), ("error", Raw(""))],
    "done-marker": [*stream(call_stream(WEATHER)), (None, Raw("[DONE]")), (None, Raw("junk"))],
    "done-marker-early": [created(), (None, Raw("[DONE]")), completed()],
    "done-marker-prefix": [created(), (None, Raw("[DONE]x")), completed()],
    "events-without-names": [(None, p) for _, p in stream(call_stream(WEATHER))],
    "names-unlike-types": [("response.completed", p) for _, p in stream(call_stream(WEATHER))],
    "thread-event-name": [
        created(),
        ("thread.run.created", {"type": "response.completed"}),
        completed(),
    ],
    "thread-event-first": [("thread.message", {"type": "response.created"})],
    "data-not-json": [created(), added(0, fc(0)), (None, Raw("{not json"))],
    "json-array": [created(), (None, [1, "a"])],
    "json-array-of-objects": [created(), (None, [{"type": "response.completed"}])],
    "json-string": [created(), (None, "response.completed")],
    "json-number": [created(), (None, 7)],
    "json-null": [created(), (None, None)],
    "json-null-first": [(None, None)],
    "nan-in-data": [created(), (None, Raw('{"type": "x", "v": NaN}')), completed()],
    "big-int-in-data": [
        created(),
        (None, Raw('{"type": "x", "v": 123456789012345678901234}')),
        completed(),
    ],
    "unknown-event-types": stream(
        ev("response.mystery", x=1),
        ev("response.reasoning_text.delta", output_index=0, delta="x"),
        ev("response.refusal.delta"),
    ),
    "type-missing": stream((None, {"sequence_number": 1})),
    "type-missing-first": [(None, {"response": response()})],
    "type-a-list": [(None, {"type": ["response.created"]})],
    "type-a-number-after-created": stream((None, {"type": 5})),
    "type-empty": [(None, {"type": ""})],
    "item-missing": stream(ev("response.output_item.added", output_index=0)),
    "item-null": stream(added(0, None), added(0, fc(0))),
    "item-a-string": stream(added(0, "x")),
    "item-a-list": stream(added(0, [fc(0)])),
    "item-type-missing": stream(added(0, {"id": "x"}), done(0, {"id": "x"})),
    "item-type-a-list": stream(
        added(0, {"type": ["function_call"]}), done(0, {"type": ["function_call"]})
    ),
    "item-unknown-type": stream(added(0, {"type": "mystery", "id": "m"}), args(0, "{}")),
    "item-fields-wrong-types": stream(
        added(0, fc(0, call_id=5, name=[1], id=2.5)),
        args(0, "{}"),
        done(0, fc(0, "{}", call_id=5, id=2.5)),
    ),
    "item-call-id-null": stream(added(0, fc(0, call_id=None)), done(0, fc(0, call_id=None))),
    "multi-tool-use-parallel": stream(
        added(0, fc(0, name="multi_tool_use.parallel")),
        args(0, '{"tool_uses": [{"recipient_name": "functions.f", "parameters": {}}]}'),
        done(0, fc(0, '{"tool_uses": []}', name="multi_tool_use.parallel")),
    ),
    "message-text": stream(
        added(0, message()),
        part_added(0),
        text(0, "Hi"),
        text(0, " there"),
        text_done(0),
        done(0, message()),
    ),
    "text-before-part": stream(added(0, message()), text(0, "x")),
    "text-to-a-call": stream(added(0, fc(0)), text(0, "x")),
    "text-to-unknown-index": stream(text(3, "x")),
    "text-delta-number": stream(added(0, message()), part_added(0), text(0, 5)),
    "text-part-refusal": stream(
        added(0, message()), part_added(0, part={"type": "refusal"}), text(0, "x")
    ),
    "text-part-text-missing": stream(
        added(0, message()), part_added(0, part={"type": "output_text"}), text(0, "x")
    ),
    "text-part-text-list": stream(
        added(0, message()),
        part_added(0, part={"type": "output_text", "text": [1]}),
        text(0, "ab"),
        text(0, 3),
    ),
    "text-content-index-word": stream(added(0, message()), part_added(0), text(0, "x", "a")),
    "text-content-index-negative": stream(added(0, message()), part_added(0), text(0, "x", -1)),
    "text-content-junk": stream(added(0, message(content=["ab"])), text(0, "x")),
    "text-content-string": stream(added(0, message(content="ab")), text(0, "x")),
    "text-content-null": stream(added(0, message(content=None) | {"content": None}), text(0, "x")),
    "text-content-object": stream(
        added(0, message(content={"k": {"type": "output_text"}})), text(0, "x", "k")
    ),
    "text-done-to-a-call": stream(added(0, fc(0)), text_done(0)),
    "part-to-a-call": stream(added(0, fc(0)), part_added(0)),
    "part-missing": stream(added(0, message()), ev("response.content_part.added", output_index=0)),
    "part-a-string": stream(added(0, message()), part_added(0, part="x")),
    "part-to-content-string": stream(added(0, message(content="ab")), part_added(0)),
    "part-to-unknown-index": stream(part_added(4)),
    "cut-mid-arguments": [created(), added(0, fc(0)), args(0, '{"a": "b')],
    "cut-after-created": [created()],
    "empty-stream": [],
}

TOOL_CASES: dict[str, tuple[list[Item], Tools]] = {
    "strict-tool-parses-arguments": (stream(call_stream(WEATHER)), STRICT),
    "strict-tool-bad-json": (stream(added(0, fc(0)), done(0, fc(0, "{bad"))), STRICT),
    "strict-tool-arguments-null": (stream(added(0, fc(0)), done(0, fc(0, None))), STRICT),
    "strict-tool-from-completed-output": (stream(end=completed([fc(0, "[1,")])), STRICT),
    "loose-tool-bad-json": (
        stream(added(0, fc(0)), done(0, fc(0, "{bad"))),
        [{"type": "function", "name": "get_weather", "parameters": {}, "strict": False}],
    ),
    "other-tools": (
        stream(added(0, fc(0)), done(0, fc(0, "{bad"))),
        [{"type": "web_search"}, {"type": "function", "name": "other", "strict": True}],
    ),
    "namespace-tool": (
        stream(added(0, fc(0, namespace="ns")), done(0, fc(0, "{bad", namespace="ns"))),
        [{"type": "namespace", "name": "ns", "tools": STRICT}],
    ),
    "namespace-missing": (
        stream(added(0, fc(0, namespace="ns")), done(0, fc(0, "{bad", namespace="ns"))),
        STRICT,
    ),
    "namespace-is-the-name": (
        stream(
            added(0, fc(0, namespace="get_weather")),
            done(0, fc(0, "{bad", namespace="get_weather")),
        ),
        STRICT,
    ),
    "tool-without-name": (
        stream(added(0, fc(0, namespace="ns")), done(0, fc(0, "{}", namespace="ns"))),
        [{"type": "namespace", "tools": []}],
    ),
    "chat-completions-tool-rejected": (
        stream(call_stream(WEATHER)),
        [{"type": "function", "function": {"name": "f"}}],
    ),
    "tool-without-type": (stream(call_stream(WEATHER)), [{"name": "f"}]),
    "tool-not-an-object": (stream(call_stream(WEATHER)), ["web_search"]),
    "tools-not-a-list": (stream(call_stream(WEATHER)), {"type": "function"}),
    "namespace-tools-a-string": (
        stream(added(0, fc(0, namespace="ns")), done(0, fc(0, "{}", namespace="ns"))),
        [{"type": "namespace", "name": "ns", "tools": "ab"}],
    ),
    "custom-tool": (
        stream(added(0, custom(0)), done(0, custom(0, "x"))),
        [{"type": "custom", "name": "sh"}],
    ),
}


@pytest.mark.parametrize("items", list(CASES.values()), ids=list(CASES))
def test_quirks_match_the_real_class(items: list[Item]) -> None:
    assert check(items)


@pytest.mark.parametrize("case", list(TOOL_CASES.values()), ids=list(TOOL_CASES))
def test_input_tools_match_the_real_class(case: tuple[list[Item], Tools]) -> None:
    assert check(*case)


UNMODELED: dict[str, tuple[list[Item], Tools]] = {
    "numeric-string-output-index": (stream(added("0", fc(0)), args(0, "{}")), None),
    "whole-float-output-index": (stream(added(0, fc(0)), added(0.0, fc(1))), None),
    "bool-output-index": (stream(added(1, fc(0)), args(True, "{}")), None),
    "numeric-string-content-index": (
        stream(added(0, message()), part_added(0), text(0, "x", "0")),
        None,
    ),
    "construct-parameter-key": (stream(added(0, fc(0, _fields_set=["x"]))), None),
    "construct-parameter-deep": (
        stream(end=completed([fc(0, caller={"_BaseModel__cls": 1})])),
        None,
    ),
    "nan-call-id": (
        stream(
            added(0, fc(0)), (None, Raw(json.dumps(done(0, fc(0))[1]).replace('"call_0"', "NaN")))
        ),
        None,
    ),
    "deep-nesting": (
        stream((None, Raw('{"type": "x", "v": ' + "[" * 300 + "]" * 300 + "}"))),
        None,
    ),
}


@pytest.mark.parametrize("case", list(UNMODELED.values()), ids=list(UNMODELED))
def test_unmodeled_shapes_fall_back_to_the_real_class(case: tuple[list[Item], Tools]) -> None:
    items, tools = case
    frames = frames_of(items)
    with pytest.raises(Unmodeled):
        emulate(frames, tools)
    assert responses_sdk_result(frames, tools) == run_real_responses(frames, tools)


def test_coercion_is_why_index_shapes_are_unmodeled() -> None:
    """A numeric string index is an int where the event validates, a string where not."""
    valid = run_real_responses(frames_of(stream(added("0", fc(0)), args(0, "{}"), done(0, fc(0)))))
    invalid = run_real_responses(frames_of(stream(added("0", fc(0, name=5)), args(0, "{}"))))
    assert isinstance(valid, list) and isinstance(invalid, StrategyError)
    assert invalid.error.startswith("RuntimeError: Received a content event for output index 0")


def test_call_values() -> None:
    items = stream(call_stream(WEATHER))
    frames = frames_of(items)
    emu = ResponsesSdkEmulation()
    for frame in frames[:6]:
        emu.feed(frame)
    assert emu.calls() == [
        Call(0, 0, "call_0", "function_call", "get_weather", WHOLE, 4, 2, 6, item_id="fc_0")
    ]
    # the final output is the completed item: the frame it came in, no deltas
    assert final(items) == [
        Call(0, 0, "call_0", "function_call", "get_weather", WHOLE, 0, 8, 8, item_id="fc_0")
    ]


def test_the_final_arguments_are_the_items_not_the_deltas() -> None:
    got = final(CASES["item-done-disagrees"])
    assert isinstance(got, list) and got[0].arguments == '{"x": 2}'
    got = final(CASES["completed-output-disagrees"])
    assert isinstance(got, list) and got[0].arguments == '{"other": 1}'


def test_custom_tool_input_deltas_are_never_applied() -> None:
    frames = frames_of(CASES["custom-tool-input-deltas-not-applied"])
    emu = ResponsesSdkEmulation()
    for frame in frames[:4]:
        emu.feed(frame)
    assert [c.arguments for c in emu.calls()] == [""]


def test_an_error_event_passes_through() -> None:
    assert final(CASES["error-event"]) == []


def test_unmodeled_without_openai_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamscope.dialects.responses import oracle

    monkeypatch.setattr(oracle, "openai_version", lambda: None)
    items, tools = UNMODELED["numeric-string-output-index"]
    got = oracle.responses_sdk_result(frames_of(items), tools)
    assert isinstance(got, Unmodeled) and str(got) == NOT_INSTALLED


def test_not_utf8_frames_are_unmodeled() -> None:
    frames = frames_of(stream(call_stream(WEATHER)))
    frames[2].bad_utf8 = True
    assert isinstance(responses_sdk_result(frames), Unmodeled)


# --- recorded streams --------------------------------------------------------------------

SSE_FILES = sorted(FIXTURES.glob("**/*.sse"))


def read_sse(path: Path) -> list[Frame]:
    decoder = SseDecoder()
    frames = list(decoder.feed(path.read_bytes()))
    decoder.finish()
    return frames


@pytest.mark.skipif(not SSE_FILES, reason="no recorded Responses streams yet")
@pytest.mark.parametrize("path", SSE_FILES or [None], ids=[p.name for p in SSE_FILES] or ["none"])
def test_recorded_streams_match_the_real_class(path: Path) -> None:
    assert check_frames(read_sse(path)), f"{path.name}: the emulation declined a recording"


def robust_names(frames: list[Frame]) -> dict[int, set[str]]:
    """The warnings and errors streamscope's robust reading files, by frame."""
    from streamscope.dialects.responses.engine import ResponsesEngine

    engine = ResponsesEngine(1, None)
    for frame in frames:
        engine.feed(frame)
    named: dict[int, set[str]] = {}
    for a in engine.finish(None).anomalies:
        if a.severity != "info":
            named.setdefault(a.frame, set()).add(a.kind)
    return named


# Each recorded stream the real class raises on: its frame, and what robust names there
RAISES = {
    "vercel-ai-client-tool-search.sse": (4, {"id-changed"}),
    "vercel-ai-github-copilot-id-rotation.sse": (2, {"event-schema-violation"}),
    "vercel-ai-inline-tool-calls-call-id-mismatch.sse": (6, {"id-changed"}),
    "vercel-ai-inline-incomplete-text.sse": (8, {"event-schema-violation"}),
    "vercel-ai-compatible-tool-call-no-arguments-done.sse": (14, {"event-schema-violation"}),
    "vercel-ai-error-event-only.sse": (1, {"provider-error"}),
    "vercel-ai-error-event-then-failed.sse": (3, {"provider-error"}),
    "vercel-ai-response-failed-only.sse": (2, {"provider-error"}),
    "vercel-ai-parallel-wrapper-truncated-json.sse": (1, {"chunk-invalid-json"}),
}


@pytest.mark.parametrize("path", SSE_FILES, ids=[p.name for p in SSE_FILES])
def test_where_the_real_class_raises_robust_names_it(path: Path) -> None:
    # an identity the SDK checks (an item's call_id, the response's id) that changes, or
    # any other raise: streamscope names it at the frame the real class raises at
    frames = read_sse(path)
    real = run_real_responses(frames)
    named = robust_names(frames)
    if not isinstance(real, StrategyError):
        assert path.name not in RAISES
        return
    at, kinds = RAISES[path.name]
    assert real.frame == at and kinds <= named.get(at, set()), (real, named)


@pytest.mark.parametrize(
    "changed",
    [
        {"call_id": "call_2"},  # a client tool search's, a built-in call's
        {"call_id": "call_2", "execution": "client"},
        {"id": "tsc_2"},
    ],
)
def test_a_built_in_items_identity_is_named_where_the_real_class_raises(changed: dict) -> None:
    search = {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_1", "arguments": {}}
    if "execution" in changed:
        search["execution"] = "client"
    items = stream(ev("response.output_item.added", output_index=0, item=search))
    items.insert(-1, ev("response.output_item.done", output_index=0, item={**search, **changed}))
    frames = frames_of(items)
    real = run_real_responses(frames)
    assert isinstance(real, StrategyError) and "identity changed" in real.error
    want = "id-changed" if "execution" in changed else "event-schema-violation"
    assert want in robust_names(frames).get(real.frame, set())


@pytest.mark.parametrize("kind", ["response.in_progress", "response.queued", "response.created"])
def test_a_response_id_that_changes_is_named_where_the_real_class_raises(kind: str) -> None:
    items = stream(lifecycle(kind, id="resp_2"))
    frames = frames_of(items)
    real = run_real_responses(frames)
    assert isinstance(real, StrategyError)
    assert real.error == "RuntimeError: Lifecycle response identity changed."
    assert real.frame == 2 and "event-schema-violation" in robust_names(frames)[2]


@pytest.mark.skipif(not SAMPLES, reason="no bundled Responses samples yet")
@pytest.mark.parametrize("path", SAMPLES or [None], ids=[p.name for p in SAMPLES] or ["none"])
def test_every_bundled_sample_matches_the_real_class(path: Path) -> None:
    from streamscope.inputs.source import open_input

    with open_input(str(path)) as source:
        for info in source.infos():
            frames = list(source.exchange(info.exchange).frames())
            if frames:  # with the request's tools, as the SDK is given them
                assert check_frames(frames, info.tools), f"{path.name} #{info.exchange}"


# --- random quirky streams -----------------------------------------------------------------

MISSING: Any = object()


def w(*pairs: tuple[int, Any]) -> st.SearchStrategy:
    """A weighted choice: (weight, value) pairs."""
    return st.sampled_from([v for n, v in pairs for _ in range(n)])


def without_missing(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not MISSING}


def split(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]


ARGUMENTS = [
    '{"location": "Paris, \\u00e9", "days": [1, 2.5]}',
    "{}",
    '{"q": "caf\u00e9 \ud83d\ude00"}',
    '{"s": "\ud800 lone"}',  # a lone surrogate: orjson refuses it, json.loads reads it
]
# where an event points: "own" is its item's output_index, the rest are the quirks (a bool,
# a whole float or a numeric string is Unmodeled: rare here, and checked through the fallback)
INDEXES = w(
    (300, "own"),
    (4, "other"),
    (3, "next"),
    (2, -1),
    (2, None),
    (2, "a"),
    (1, 1.5),
    (1, [0]),
    (1, MISSING),
    (1, True),
    (1, 0.0),
    (1, "1"),
)
# (2**70: orjson reads it as a float, json.loads as the int the SDK holds)
ODD_VALUES = [None, 5, 1.5, "x", [1], {"a": 1}, True, 2**70, 2.0]


def odd(draw: st.DrawFn, good: Any, rare: int = 25) -> Any:
    """Mostly `good`; sometimes a value of another type, null or missing."""
    if draw(w((rare, True), (1, False))):
        return good
    return draw(st.sampled_from([*ODD_VALUES, MISSING]))


@st.composite
def an_item(draw: st.DrawFn, kind: str, n: int, arguments: str = "") -> dict:
    item: dict = {"type": kind, "id": odd(draw, f"it_{n}"), "status": "in_progress"}
    if kind == "function_call":
        name = draw(w((8, "get_weather"), (1, "multi_tool_use.parallel")))
        item |= {"call_id": odd(draw, f"call_{n}"), "name": odd(draw, name)}
        item["arguments"] = odd(draw, arguments)
        if draw(w((8, False), (1, True))):
            item["namespace"] = draw(st.sampled_from(["ns", "get_weather", None]))
    elif kind == "custom_tool_call":
        item |= {
            "call_id": odd(draw, f"call_{n}"),
            "name": odd(draw, "sh"),
            "input": odd(draw, arguments),
        }
    elif kind == "message":
        item |= {"role": "assistant", "content": odd(draw, [], rare=20)}
    elif kind == "reasoning":
        item["summary"] = []
    if draw(w((15, False), (1, True))):
        item["type"] = draw(st.sampled_from([MISSING, None, ["function_call"], "mystery"]))
    return without_missing(item)


def index_of(draw: st.DrawFn, own: int, count: int) -> Any:
    choice = draw(INDEXES)
    if choice == "own":
        return own
    if choice == "other":
        return draw(st.integers(0, max(count - 1, 0)))
    if choice == "next":
        return count
    return choice


def event(kind: str, **fields: Any) -> Item:
    return (kind, without_missing({"type": kind, "sequence_number": 1, **fields}))


@st.composite
def an_output(draw: st.DrawFn, own: int, count: int) -> tuple[list[Item], dict]:
    """One output item's events (added, its deltas, its done), and the item as completed."""
    kind = draw(
        w(
            (10, "function_call"),
            (3, "custom_tool_call"),
            (3, "message"),
            (2, "reasoning"),
            (1, "web_search_call"),
            (1, "code_interpreter_call"),
            (1, "mcp_call"),
        )
    )
    whole = draw(st.sampled_from(ARGUMENTS))
    item = draw(an_item(kind, own))
    ix = lambda: index_of(draw, own, count)  # noqa: E731
    items = [event("response.output_item.added", output_index=ix(), item=item)]
    if draw(w((30, False), (1, True))):
        items[0] = event("response.output_item.added", output_index=ix(), item=odd(draw, item, 0))
    pieces = split(whole, draw(st.lists(st.integers(0, 60), max_size=5)))
    if draw(w((6, False), (1, True))):
        pieces.insert(draw(st.integers(0, len(pieces))), "")
    if kind == "function_call" and draw(w((8, True), (1, False))):  # else no deltas (LM Studio)
        for piece in pieces:
            extra = {"obfuscation": "aZ9"} if draw(w((5, False), (1, True))) else {}
            items.append(
                event(
                    "response.function_call_arguments.delta",
                    item_id=item.get("id"),
                    output_index=ix(),
                    delta=odd(draw, piece, 30),
                    **extra,
                )
            )
        if draw(st.booleans()):
            items.append(
                event(
                    "response.function_call_arguments.done",
                    item_id=item.get("id"),
                    output_index=ix(),
                    arguments=odd(draw, whole),
                )
            )
    elif kind == "custom_tool_call":
        for piece in pieces:
            items.append(
                event("response.custom_tool_call_input.delta", output_index=ix(), delta=piece)
            )
    elif kind == "message" and draw(w((3, True), (1, False))):
        text_part = {"type": "output_text", "text": odd(draw, "", 20), "annotations": []}
        part = odd(draw, without_missing(text_part), 20)
        content_index = lambda: draw(w((20, 0), (1, 1), (1, "a"), (1, None), (1, "0")))  # noqa: E731
        items.append(
            event(
                "response.content_part.added",
                output_index=ix(),
                content_index=content_index(),
                part=part,
            )
        )
        for piece in pieces:
            items.append(
                event(
                    "response.output_text.delta",
                    output_index=ix(),
                    content_index=content_index(),
                    delta=odd(draw, piece, 30),
                    logprobs=[],
                )
            )
        items.append(
            event(
                "response.output_text.done",
                output_index=ix(),
                content_index=content_index(),
                text=whole,
                logprobs=[],
            )
        )
    completed_item = dict(item)
    if kind == "function_call":
        completed_item["arguments"] = draw(w((8, whole), (1, "{}"), (1, MISSING)))
    elif kind == "custom_tool_call":
        completed_item["input"] = whole
    if draw(w((8, False), (1, True))):  # the done disagrees on what identifies the item
        completed_item[draw(st.sampled_from(["id", "call_id", "type"]))] = draw(
            st.sampled_from(["zz", None, "function_call"])
        )
    completed_item = without_missing(completed_item | {"status": "completed"})
    if draw(w((8, True), (1, False))):
        items.append(event("response.output_item.done", output_index=ix(), item=completed_item))
    return items, completed_item


ODD_EVENTS: list[Item] = [
    ("error", {"type": "error", "code": "server_error", "message": "boom", "param": None}),
    ("error", {"type": "error", "error": {"message": "overloaded"}}),
    ("error", Raw("upstream went away")),
    ("error", Raw("")),
    (None, Raw("{nope")),
    (None, Raw("[DONE]")),
    (None, [1]),
    (None, 7),
    (None, None),
    (None, {"sequence_number": 3}),
    ("response.mystery", {"type": "response.mystery"}),
    ("thread.run", {"type": "response.completed"}),
    ("response.completed", {"type": ["x"]}),
    ("response.refusal.delta", {"type": "response.refusal.delta", "output_index": 0}),
]


@st.composite
def a_lifecycle(draw: st.DrawFn, outputs: list[dict], kind: str) -> Item:
    body: dict = {"id": draw(w((40, "resp_1"), (1, "resp_2"), (1, MISSING))), "object": "response"}
    choice = draw(w((4, "none"), (4, "items"), (1, "shuffled"), (1, "odd")))
    if choice == "items":
        body["output"] = outputs
    elif choice == "shuffled":
        body["output"] = list(reversed(outputs))[: draw(st.integers(0, len(outputs)))]
    elif choice == "odd":
        body["output"] = draw(st.sampled_from([[], "ab", 3, [None], [{"type": "message"}], {}]))
    response_value: Any = without_missing(body)
    if draw(w((30, False), (1, True))):
        response_value = draw(st.sampled_from([None, "x", MISSING]))
    return event(kind, response=response_value)


@st.composite
def a_stream(draw: st.DrawFn) -> tuple[list[Item], Tools]:
    items: list[Item] = []
    if draw(w((12, False), (1, True))):
        items.append(draw(st.sampled_from(ODD_EVENTS)))  # something before response.created
    if draw(w((20, True), (1, False))):
        start = draw(w((10, "plain"), (1, "with output"), (1, "odd output"), (1, "truncated")))
        body: dict = {"id": "resp_1", "object": "response", "status": "in_progress"}
        if start == "with output":
            body["output"] = [draw(an_item("function_call", 0)), {"type": "reasoning", "id": "r"}]
        elif start == "odd output":
            body["output"] = draw(st.sampled_from(["ab", {"k": 1}, 0, [None, "x"]]))
        if start == "truncated":
            items.append(("response.created", Raw('{"type": "response.created", "response": {"id')))
        else:
            items.append(event("response.created", response=body))
    count = (
        len(items[-1][1].get("response", {}).get("output", []))
        if items
        and type(items[-1][1]) is dict
        and type(items[-1][1].get("response")) is dict
        and type(items[-1][1]["response"].get("output")) is list
        else 0
    )
    outputs: list[dict] = []
    for _ in range(draw(st.integers(0, 5))):
        roll = draw(w((12, "output"), (1, "odd"), (1, "lifecycle")))
        if roll == "output":
            events, item = draw(an_output(count, count))
            outputs.append(item)
            count += 1
            if items and draw(w((4, False), (1, True))):  # two open items: interleave
                at = draw(st.integers(max(len(items) - 3, 1), len(items)))
                items[at:at] = events[:1]
                items += events[1:]
            else:
                items += events
        elif roll == "odd":
            items.append(draw(st.sampled_from(ODD_EVENTS)))
        else:
            kind = draw(
                st.sampled_from(["response.in_progress", "response.queued", "response.created"])
            )
            items.append(draw(a_lifecycle(outputs, kind)))
    end = draw(
        w(
            (20, "response.completed"),
            (2, "response.incomplete"),
            (1, "response.failed"),
            (1, "none"),
        )
    )
    if end != "none":
        items.append(draw(a_lifecycle(outputs, end)))
    if draw(w((6, False), (1, True))):
        items.append(draw(st.sampled_from(ODD_EVENTS)))
    if draw(w((5, False), (1, True))):  # the stream cut anywhere
        items = items[: draw(st.integers(0, len(items)))]
    tools = draw(
        w((4, None), (1, STRICT), (1, [{"type": "namespace", "name": "ns", "tools": STRICT}]))
    )
    return items, tools


@pytest.mark.slow
@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=a_stream())
def test_random_streams_match_the_real_class(case: tuple[list[Item], Tools]) -> None:
    check(*case)


# --- keys pydantic cannot write ------------------------------------------------------------
# A key holding a lone surrogate goes into the SDK's model as sent (tests/dialects/
# lone_keys.py); the SDK raises UnicodeEncodeError where it dumps a model holding it: the
# first response.created's response, a function_call or message item when it is added, a
# message's content part when it is added, and at response.completed (parse_response) each
# output_text part and message, each function call, then the whole response. Events
# themselves, items when they are done and later lifecycle responses are never dumped.

PART = {"type": "output_text", "text": "", "annotations": []}
TEXT_PART = {**PART, "text": "hi"}


def msg_stream(
    added_item: dict | None = None,
    part: dict | None = None,
    end: Item | None = None,
) -> list[Item]:
    """A message streamed: added, a content part, text, done, then `end` (completed with
    the message)."""
    return [
        created(),
        added(0, message() if added_item is None else added_item),
        part_added(0, part=PART if part is None else part),
        text(0, "hi"),
        text_done(0),
        done(0, message(content=[TEXT_PART], status="completed")),
        completed([message(content=[TEXT_PART], status="completed")]) if end is None else end,
    ]


CALL = call_stream(WEATHER)
DONE_FC = fc(arguments=WHOLE, status="completed")


def fc_stream(
    start: Item | None = None, item: dict | None = None, end: Item | None = None
) -> list[Item]:
    """A function call streamed, then `end` (completed with the call)."""
    return [
        created() if start is None else start,
        added(0, fc() if item is None else item),
        *CALL[1:],
        completed([DONE_FC]) if end is None else end,
    ]


LAST = len(fc_stream())
KEYED_RAISES = {
    # the first response.created: response.to_dict()
    "created": (fc_stream(start=created(**{LONE: 1})), 1),
    "created-usage": (fc_stream(start=created(usage=with_key({"input_tokens": 0}))), 1),
    "created-output-item": (fc_stream(start=created([with_key(reasoning())])), 1),
    # an item added: item.to_dict() (a function call or a message only)
    "added-function-call": (fc_stream(item=with_key(fc())), 2),
    "added-message": (msg_stream(added_item=with_key(message())), 2),
    "added-message-part": (msg_stream(added_item=message(content=[with_key(PART)])), 2),
    # a content part added to a message: part.to_dict()
    "content-part": (msg_stream(part=with_key(PART)), 3),
    # response.completed: parse_response
    "completed": (fc_stream(end=completed([DONE_FC], **{LONE: 1})), LAST),
    "completed-usage": (
        fc_stream(end=completed([DONE_FC], usage=with_key({"input_tokens": 0}))),
        LAST,
    ),
    "completed-function-call": (fc_stream(end=completed([with_key(DONE_FC)])), LAST),
    "completed-other-item": (
        fc_stream(end=completed([DONE_FC, with_key(reasoning())])),
        LAST,
    ),
    "completed-message": (
        msg_stream(end=completed([with_key(message(content=[TEXT_PART]))])),
        7,
    ),
    "completed-message-part": (
        msg_stream(end=completed([message(content=[with_key(TEXT_PART)])])),
        7,
    ),
    # a completed response without output: its output is the items done, dumped here
    "completed-without-output": (
        [*fc_stream(end=completed())[:-2], done(0, with_key(DONE_FC)), completed()],
        LAST,
    ),
    "completed-without-output-restated": (
        [
            *fc_stream(end=completed())[:-1],
            lifecycle("response.in_progress", [with_key(DONE_FC)]),
            completed(),
        ],
        LAST + 1,
    ),
}

KEYED_RAISES_FIRST = {
    # which key raises: a model's fields (nested models first: output before usage) before
    # its extras, in the order sent; at response.completed, output_text parts, then each
    # message (its other parts, then its own keys), each function call, then the response
    "created-output-before-usage-before-response": (
        fc_stream(
            start=created(
                [with_key(reasoning(), "\udc03")],
                usage=with_key({"input_tokens": 0}, "\udc02"),
                **{"\udc01": 1},
            )
        ),
        "\udc03",
    ),
    "completed-text-part-before-other-part-before-message": (
        msg_stream(
            end=completed(
                [
                    with_key(
                        message(
                            content=[
                                with_key({"type": "refusal", "refusal": "no"}, "\udc01"),
                                with_key(TEXT_PART, "\udc02"),
                            ]
                        ),
                        "\udc03",
                    )
                ]
            )
        ),
        "\udc02",
    ),
    "completed-function-call-before-usage-before-response": (
        fc_stream(
            end=completed(
                [with_key(reasoning(), "\udc01"), with_key(DONE_FC, "\udc02")],
                usage=with_key({"input_tokens": 0}, "\udc03"),
            )
        ),
        "\udc02",
    ),
    "completed-usage-before-response": (
        fc_stream(
            end=completed([DONE_FC], usage=with_key({"input_tokens": 0}, "\udc02"), **{"\udc01": 1})
        ),
        "\udc02",
    ),
}

KEYED_WRITTEN = {
    # nothing dumps these keys: the SDK does not raise
    "events": [(name, with_key(body)) for name, body in fc_stream()],
    "item-done": [*fc_stream()[:-2], done(0, with_key(DONE_FC)), completed([DONE_FC])],
    "custom-item-added": [
        created(),
        added(0, with_key(custom())),
        done(0, custom()),
        completed(),
    ],
    "later-lifecycle": [
        *fc_stream()[:-1],
        lifecycle("response.in_progress", **{LONE: 1}),
        completed([DONE_FC]),
    ],
    "failed": [*fc_stream()[:-1], lifecycle("response.failed", **{LONE: 1})],
    "values": fc_stream(
        start=created(instructions="cut " + LONE),
        item=fc(name="f" + LONE, call_id=LONE),
        end=completed([fc(name="f" + LONE, call_id=LONE, arguments=WHOLE + LONE)]),
    ),
    "a-pair": fc_stream(item=with_key(fc(), "\ud83d\ude00")),
}

KEYED_DECLINED = {
    # deeper in a model than the emulation follows: the real class says (here it raises)
    "usage-details": (
        fc_stream(end=completed([DONE_FC], usage={"input_tokens_details": with_key({})})),
        LAST,
    ),
    "annotation": (
        msg_stream(part={**PART, "annotations": [with_key({"type": "url_citation"})]}),
        3,
    ),
    # (and here it does not: a dict field's keys, an extra's object)
    "metadata": (fc_stream(start=created(metadata={LONE: "x"})), None),
    "in-an-extra": (fc_stream(item=fc(x={LONE: 1})), None),
}


@pytest.mark.parametrize("items, frame", KEYED_RAISES.values(), ids=list(KEYED_RAISES))
def test_a_key_pydantic_cannot_write_raises_where_the_sdk_dumps_it(
    items: list[Item], frame: int
) -> None:
    assert check(items)
    assert run_real_responses(frames_of(items)) == StrategyError(encode_error(), frame)


@pytest.mark.parametrize("items, key", KEYED_RAISES_FIRST.values(), ids=list(KEYED_RAISES_FIRST))
def test_the_key_that_raises_is_the_one_the_sdk_writes_first(items: list[Item], key: str) -> None:
    assert check(items)
    got = run_real_responses(frames_of(items))
    assert isinstance(got, StrategyError) and got.error == encode_error(key)


@pytest.mark.parametrize("items", KEYED_WRITTEN.values(), ids=list(KEYED_WRITTEN))
def test_keys_the_sdk_never_dumps_do_not_raise(items: list[Item]) -> None:
    assert check(items)
    got = run_real_responses(frames_of(items))
    assert not (isinstance(got, StrategyError) and "UnicodeEncodeError" in got.error), got


@pytest.mark.parametrize("items, frame", KEYED_DECLINED.values(), ids=list(KEYED_DECLINED))
def test_keys_deeper_down_are_for_the_real_class(items: list[Item], frame: int | None) -> None:
    assert not check(items)  # (and the real class's answer is the strategy's)
    says(responses_sdk_result(frames_of(items)), frame)


@st.composite
def keyed_stream(draw: st.DrawFn) -> tuple[list[Item], Tools]:
    items, tools = draw(a_stream())
    items = copy.deepcopy(items)
    bodies = [body for _, body in items if type(body) is dict]
    for _ in range(draw(st.integers(1, 3)) if bodies else 0):
        body = draw(st.sampled_from(bodies))
        if draw(st.integers(0, 6)) == 0 and type(body.get("response")) is dict:
            body["response"]["usage"] = {"input_tokens": 1, "output_tokens_details": {}}
        put_key(draw, body)
    return items, tools


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=keyed_stream())
def test_random_keys_pydantic_cannot_write_match_the_real_class(
    case: tuple[list[Item], Tools],
) -> None:
    check(*case)


# --- linearity, version, purity --------------------------------------------------------------


def test_the_usual_frames_are_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Argument and text deltas, and events the SDK never reads, are taken as orjson read
    them: json.loads runs for the frames whose values the emulation keeps, not per delta."""
    parsed: list[str] = []
    monkeypatch.setattr(
        sdk_model,
        "json",
        SimpleNamespace(loads=lambda data: parsed.append(data) or json.loads(data)),
    )
    pieces = [f'"item {i}", ' for i in range(1_000)]
    items = stream(
        call_stream(pieces),
        added(1, message()),
        part_added(1),
        *[text(1, "word ") for _ in range(1_000)],
        done(1, message()),
    )
    emu = ResponsesSdkEmulation()
    for frame in frames_of(items):
        emu.feed(frame)
    assert isinstance(emu.finish(len(items)), list)
    # response.created, two added, one part, two done, response.completed
    assert len(parsed) == 7


def test_a_copy_shares_the_arguments_it_was_taken_with() -> None:
    """Copies taken every 100 frames hold the argument text as a few shared chunks."""
    pieces = [f'"item {i}", ' for i in range(2_000)]
    emu, copies = ResponsesSdkEmulation(), []
    for frame in frames_of(stream(call_stream(pieces))):
        emu.feed(frame)
        if frame.number % 100 == 0:
            copies.append(emu.copy())
    last = copies[-1]._output[0]  # type: ignore[index]
    first = copies[0]._output[0]  # type: ignore[index]
    assert len(last.parts) <= len(copies) and last.parts[0] is first.parts[0]
    assert copies[-1].calls()[0].arguments == "".join(pieces[: last.fragments])


def test_the_installed_openai_is_one_the_emulation_was_verified_against() -> None:
    """A new openai release must be run through these tests and added to
    VERIFIED_OPENAI_RESPONSES."""
    assert openai_version() in VERIFIED_OPENAI_RESPONSES, (
        f"openai {openai_version()} is installed; the Responses SDK emulation states it was "
        f"verified against {', '.join(VERIFIED_OPENAI_RESPONSES)}: run "
        "tests/dialects/responses/test_responses_sdk_model.py on the new release, fix what "
        "differs, then add it to VERIFIED_OPENAI_RESPONSES (and move pyproject.toml's pin)"
    )


def test_emulation_imports_no_sdk_machinery() -> None:
    code = (
        "import sys, streamscope.dialects.responses.sdk_model, "
        "streamscope.dialects.responses.oracle\n"
        "heavy = {'anthropic', 'openai', 'httpx', 'httpx2', 'textual', 'rich', 'pydantic',"
        " 'pydantic_core', 'jiter'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
