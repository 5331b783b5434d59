"""AnthropicSdkEmulation must report exactly what the installed anthropic MessageStream does.

Every case runs the real class (oracle.run_real_anthropic, a real client over an
httpx2 MockTransport) beside the emulation and compares the final result, the snapshot's
tool blocks after every frame, a copy() taken mid-stream carried on to the end, and the
frames themselves (never mutated).
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import jiter
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from streamscope.core.calls import Call, StrategyError, Unmodeled
from streamscope.core.frames import Frame, parse_payload
from streamscope.dialects.anthropic import partial_json, sdk_model
from streamscope.dialects.anthropic.oracle import (
    NOT_INSTALLED,
    anthropic_sdk_result,
    anthropic_version,
    run_real_anthropic,
)
from streamscope.dialects.anthropic.partial_json import JSON_WS, PartialJson, position, quick_value
from streamscope.dialects.anthropic.sdk_model import (
    PLAIN,
    VERIFIED_ANTHROPIC,
    AnthropicSdkEmulation,
    BetaStream,
    SdkExchange,
)
from streamscope.dialects.anthropic.wire import bedrock_error
from streamscope.dialects.typed import sse_bytes
from streamscope.framing.sse import SseDecoder

from ..lone_keys import LONE, encode_error, put_key, says, with_key

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "anthropic"

# --- building streams ----------------------------------------------------------------------

Item = tuple[str | None, Any]  # (SSE event name, payload: JSON-able value, or raw data str)


class Raw(str):
    """Event data sent as is (not JSON-encoded)."""


def frames_of(items: list[Item]) -> list[Frame]:
    out = []
    for number, (event, payload) in enumerate(items, 1):
        data = payload if isinstance(payload, Raw) else json.dumps(payload)
        out.append(Frame(number=number, data=data, payload=parse_payload(data), event=event))
    return out


def message(content: list | None = None, **extra: Any) -> dict:
    msg = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [] if content is None else content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    msg.update(extra)
    return msg


def start(content: list | None = None, **extra: Any) -> Item:
    return ("message_start", {"type": "message_start", "message": message(content, **extra)})


def block(index: Any, content_block: Any) -> Item:
    body = {"type": "content_block_start", "index": index, "content_block": content_block}
    return ("content_block_start", body)


def tool(index: Any = 0, kind: str = "tool_use", name: str = "get_weather", **extra: Any) -> Item:
    return block(index, {"type": kind, "id": f"toolu_{index}", "name": name, "input": {}, **extra})


def delta(index: Any, body: Any) -> Item:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body})


def js(index: Any, partial: Any) -> Item:
    return delta(index, {"type": "input_json_delta", "partial_json": partial})


def text_delta(index: Any, text: Any) -> Item:
    return delta(index, {"type": "text_delta", "text": text})


def stop(index: Any) -> Item:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def message_delta(stop_reason: str = "tool_use", **usage: Any) -> Item:
    body = {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}}
    body["usage"] = {"output_tokens": 5, **usage}
    return ("message_delta", body)


def overloaded(**extra: Any) -> dict:
    """An `error` event's body: the API's overloaded error, with `extra` in it."""
    error = {"type": "overloaded_error", "message": "Overloaded"}
    details = extra.pop("details", None)
    if details is not None:
        error["details"] = details
    return {"type": "error", "error": error, **extra}


STOP_MESSAGE: Item = ("message_stop", {"type": "message_stop"})
PING: Item = ("ping", {"type": "ping"})


def tool_stream(pieces: list[str], kind: str = "tool_use") -> list[Item]:
    return [
        start(),
        tool(0, kind),
        *[js(0, p) for p in pieces],
        stop(0),
        message_delta(),
        STOP_MESSAGE,
    ]


# --- the differential check ----------------------------------------------------------------


# A request the SDK's beta client sent (BetaMessageStream reads it), with a beta header that
# changes nothing it reads, and one that does (trailing-strings tool input: unmodeled)
BETA = SdkExchange(beta=BetaStream("mcp-client-2025-04-04"))
FINE = SdkExchange(beta=BetaStream(f"interleaved-thinking-2025-05-14,{sdk_model.FINE_GRAINED}"))
Beta = SdkExchange


def emulate(
    frames: list[Frame], fork_at: int | None = None, beta: Beta = PLAIN
) -> tuple[list[Call] | StrategyError, dict[int, list[Call]]]:
    """Feed every frame, recording calls() after each; optionally carry on in a copy()."""
    emu = AnthropicSdkEmulation(beta)
    mid: dict[int, list[Call]] = {}
    for i, frame in enumerate(frames):
        if i == fork_at:
            emu = emu.copy()
        emu.feed(frame)
        if emu.error is None:
            mid[frame.number] = emu.calls()
    return emu.finish(frames[-1].number if frames else 0), mid


def check_unread(
    frames: list[Frame], real: object, real_mid: dict[int, list[Call]], beta: Beta = PLAIN
) -> None:
    """Fed with nothing looked at in between, so tool input deltas are read late, with a
    copy taken halfway that carries on to three quarters and is looked at there: the copy
    there and the original at the end say what the real class does."""
    half, three = len(frames) // 2, len(frames) * 3 // 4
    emu = AnthropicSdkEmulation(beta)
    for frame in frames[:half]:
        emu.feed(frame)
    fork = emu.copy()
    for frame in frames[half:three]:  # the copy appends first: the original's stay its own
        fork.feed(frame)
    if three > half:
        at = frames[three - 1].number
        if isinstance(real, StrategyError) and real.frame <= at:
            assert fork.error == real
        else:
            assert fork.error is None
            assert fork.calls() == real_mid[at]
    for frame in frames[half:]:
        emu.feed(frame)
    assert emu.finish(frames[-1].number if frames else 0) == real


def declines_unread(frames: list[Frame], beta: Beta = PLAIN) -> bool:
    """Fed with nothing looked at in between, the emulation raises Unmodeled somewhere."""
    emu = AnthropicSdkEmulation(beta)
    try:
        for frame in frames:
            emu.feed(frame)
        emu.finish(frames[-1].number if frames else 0)
    except Unmodeled:
        return True
    return False


def check_frames(frames: list[Frame], beta: Beta = PLAIN) -> bool:
    """Assert emulation == real class (BetaMessageStream for a `beta` request); False when
    the emulation declined (Unmodeled)."""
    before = copy.deepcopy([(f.data, f.payload, f.event) for f in frames])
    real_mid: dict[int, list[Call]] = {}
    real = run_real_anthropic(frames, beta, on_frame=real_mid.__setitem__)
    try:
        got, mid = emulate(frames, beta=beta)
    except Unmodeled:
        assert declines_unread(frames, beta)
        assert anthropic_sdk_result(frames, beta) == real
        return False
    check_unread(frames, real, real_mid, beta)
    assert got == real
    for number, calls in real_mid.items():
        assert mid.get(number) == calls, f"frame {number}"
    # a copy taken mid-stream carries on exactly like the original
    assert emulate(frames, fork_at=len(frames) // 2, beta=beta) == (got, mid)
    assert [(f.data, f.payload, f.event) for f in frames] == before
    assert anthropic_sdk_result(frames, beta) == real
    return True


def check(items: list[Item], beta: Beta = PLAIN) -> bool:
    return check_frames(frames_of(copy.deepcopy(items)), beta)


def final(items: list[Item], beta: Beta = PLAIN) -> list[Call] | StrategyError:
    result, _ = emulate(frames_of(items), beta=beta)
    return result


def split(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]


# --- hand-written cases: every quirk, each checked against the real class --------------------

WEATHER = ['{"loc', 'ation": "Par', 'is", "unit', '": "c"}']
TEXT = block(0, {"type": "text", "text": ""})
THINKING = block(0, {"type": "thinking", "thinking": "", "signature": ""})

CASES: dict[str, list[Item]] = {
    "tool": tool_stream(WEATHER),
    "server-tool": tool_stream(['{"query": "x"}'], kind="server_tool_use"),
    "mcp-tool-keeps-its-start-input": [
        start(),
        block(0, {"type": "mcp_tool_use", "id": "m", "name": "n", "server_name": "s", "input": {}}),
        js(0, '{"a": 1}'),
        STOP_MESSAGE,
    ],
    "mcp-without-input-or-id": [start(), block(0, {"type": "mcp_tool_use"}), STOP_MESSAGE],
    "caller": [start(), tool(0, caller={"type": "direct"}), js(0, "{}"), STOP_MESSAGE],
    "bad-caller": [start(), tool(0, caller={"type": "nope"}), js(0, '{"a":1}'), STOP_MESSAGE],
    "first-fragment-empty": tool_stream(["", *WEATHER]),
    "only-empty-fragments": tool_stream(["", "", ""]),
    "start-input-kept-without-deltas": [start(), tool(0, input={"a": 1}), stop(0), STOP_MESSAGE],
    "start-input-replaced-by-deltas": [start(), tool(0, input={"a": 1}), js(0, '{"b"'), stop(0)],
    "start-input-kept-past-empty-delta": [start(), tool(0, input={"a": 1}), js(0, "")],
    "input-missing": [start(), block(0, {"type": "tool_use", "id": "t", "name": "f"})],
    "input-null": [start(), block(0, {"type": "tool_use", "id": "t", "name": "f", "input": None})],
    "input-not-an-object": [start(), tool(0, input=[1, 2]), stop(0)],
    "delta-to-null": tool_stream(["null"]),
    "invalid-json": tool_stream(['{"a": 1', ", }", '"b"']),
    "invalid-json-late": tool_stream(['{"a": [1, 2', ", ]}"]),
    "trailing-garbage-ignored": tool_stream(['{"a": 1}', " garbage"]),
    "stray-closer": tool_stream(['[{"a": 1]', ", 2]"]),
    "whitespace-only": tool_stream([" ", "{}"]),
    "top-level-string": tool_stream(['"ab', 'c"']),
    "top-level-number": tool_stream(["1", "2", ".", "5"]),
    "literals": tool_stream(["[tr", "ue, nu", "ll, fal", "se, NaN, -Infin", "ity]"]),
    "bad-literal": tool_stream(["[tru", "x]"]),
    "escapes": tool_stream(['{"a": "\\u00', "e9\\n\\ud83d", "\\ude00", '"}']),
    "lone-surrogate-escape": tool_stream(['{"a": "\\ud800', 'x"}']),
    "surrogate-in-fragment": tool_stream(['{"a": "', "\ud800", '"}']),
    "big-int-and-floats": tool_stream(['{"n": 123456789012345678901234567890, "f": 1e400', "}"]),
    "duplicate-keys": tool_stream(['{"a": 1, "b": 2, "a": [3', "]}"]),
    "newline-error-position": tool_stream(['{\n"a":\n 1,\n', "]"]),
    "deep-nesting": tool_stream(["[" * 201, "1"]),
    "deep-nesting-closed": tool_stream(["[" * 201, "]" * 201]),
    "many-brackets-shallow": tool_stream(['{"rows": [', "[], " * 150, '{"a": [{}]}, ' * 60, "1]}"]),
    "nan-and-infinity-in-strings": tool_stream(
        ['{"code": "if (isNaN(x', ')) return Infinity;"', "}"]
    ),
    "long-digits-in-a-string": tool_stream(['{"pi": "3.', "1" * 4500, '", "n": 1}']),
    "long-number-under-the-limit": tool_stream(["[", "7" * 3900, "]"]),
    "key-with-escaped-quote-cut": tool_stream(['{"a\\"b', '": ', '1, "c\\\\": ', "2}"]),
    "cut-after-a-number-then-more": tool_stream(['{"a": 1', ".5e", "+3}"]),
    "partial-json-number": [start(), tool(0), js(0, 5)],
    "partial-json-null": [start(), tool(0), js(0, None)],
    "partial-json-object": [start(), tool(0), js(0, {"a": 1})],
    "partial-json-missing": [start(), tool(0), delta(0, {"type": "input_json_delta"})],
    "delta-before-any-start": [js(0, "{}"), start(), js(0, "{}")],
    "delta-for-a-missing-block": [start(), tool(0), js(1, "{}")],
    "negative-index": [start(), tool(0), js(-1, '{"a"'), js(0, ": 1}"), STOP_MESSAGE],
    "negative-index-moves-to-the-new-block": [
        start(),
        tool(0),
        js(-1, '{"a": '),
        tool(1),
        js(-1, "1}"),
        js(0, '{"b": 2}'),
    ],
    "index-bool": [start(), tool(0), tool(1), js(True, '{"x"'), js(1, ": 1}")],
    "index-string": [start(), tool(0), js("a", "{}")],
    "index-numeric-string": [start(), tool(0), js("0", "{}")],
    "index-whole-float": [start(), tool(0), js(0.0, '{"a": 1}'), stop(0.0)],
    "index-whole-float-bad-delta": [start(), tool(0), js(0.0, 5)],
    "index-fraction": [start(), tool(0), js(0.5, "{}")],
    "index-null": [start(), tool(0), js(None, "{}")],
    "index-missing": [start(), tool(0), ("content_block_delta", {"type": "content_block_delta"})],
    "index-list": [start(), tool(0), stop([0])],
    "index-out-of-range": [start(), tool(0), stop(3)],
    "index-huge": [start(), tool(0), stop(2**70)],
    "stop-missing": [start(), tool(0), js(0, "{}"), message_delta(), STOP_MESSAGE],
    "spliced-message": [
        start(),
        tool(0, name="first"),
        js(0, '{"value": "Spark'),
        start(),
        tool(0, name="second"),
        js(0, "{"),
        STOP_MESSAGE,
    ],
    "message-start-with-tool-content": [
        start([{"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}, "junk"]),
        js(0, '{"b": 2}'),
        STOP_MESSAGE,
    ],
    "message-start-junk-entry-text-delta": [start(["junk"]), text_delta(0, "x")],
    "message-start-junk-entry-stop": [start([None]), stop(0)],
    "message-start-null-content": [start(), stop(0)],
    "message-start-content-null": [
        ("message_start", {"type": "message_start", "message": {"content": None}}),
        tool(0),
    ],
    "message-start-without-message": [("message_start", {"type": "message_start"})],
    "message-start-message-string": [("message_start", {"type": "message_start", "message": "x"})],
    "message-delta-variants": [
        start(),
        tool(0),
        message_delta("end_turn"),
        message_delta("max_tokens", input_tokens=3, cache_read_input_tokens=1),
        message_delta("weird", server_tool_use={"web_search_requests": 1}),
        STOP_MESSAGE,
    ],
    "message-delta-no-delta": [start(), ("message_delta", {"type": "message_delta", "usage": {}})],
    "message-delta-no-usage": [start(), ("message_delta", {"type": "message_delta", "delta": {}})],
    "message-delta-usage-list": [
        start(),
        ("message_delta", {"type": "message_delta", "delta": {}, "usage": [1]}),
    ],
    "message-delta-no-snapshot-usage": [
        ("message_start", {"type": "message_start", "message": {"content": []}}),
        message_delta(),
    ],
    "ping-and-unnamed": [PING, (None, {"type": "content_block_delta"}), *tool_stream(["{}"])],
    "ping-with-garbage": [("ping", Raw("not json")), *tool_stream(["{}"])],
    "error-json": [start(), ("error", {"type": "error", "error": {"type": "overloaded_error"}})],
    "error-not-json": [start(), ("error", Raw("upstream went away"))],
    "error-empty": [start(), ("error", Raw(""))],
    "error-before-start": [("error", {"type": "error", "error": {"message": "x", "n": 1.5}})],
    # what anthropic 2.17's make_status_error makes of the event: the message (or the body's
    # compact JSON), then its error code, request id, path and type, then any other details
    "error-message": [start(), ("error", overloaded(request_id="req_1"))],
    "error-details": [
        start(),
        ("error", overloaded(details={"error_code": "busy", "retry_after": 3, "é": "ü"})),
    ],
    "error-code-only": [start(), ("error", overloaded(details={"error_code": "busy"}))],
    "error-details-not-object": [start(), ("error", overloaded(details=["a", 1]))],
    "error-details-no-message": [start(), ("error", {"error": {"details": {"a": 1}}})],
    "error-empty-strings": [start(), ("error", {"request_id": "", "error": {"message": ""}})],
    "error-json-string": [start(), ("error", "upstream went away")],
    "error-json-empty-string": [start(), ("error", "")],
    "error-json-null": [start(), ("error", None)],
    "error-json-list": [start(), ("error", [{"error": {"message": "x"}}, "ü", 1e300])],
    "error-not-object": [start(), ("error", {"error": "overloaded", "request_id": 7})],
    "unknown-event-name": [start(), ("surprise", {"type": "surprise"}), tool(0), STOP_MESSAGE],
    "name-differs-from-type": [start(), ("content_block_start", stop(0)[1]), tool(0)],
    "data-not-json": [start(), tool(0), ("content_block_delta", Raw("{not json"))],
    "data-not-json-before-start": [("content_block_delta", Raw("nope")), start()],
    "json-not-object-before-start": [("message_start", [1, 2])],
    "json-array-after-start": [start(), ("content_block_delta", [1, "a", None, 2.5])],
    "json-number-after-start": [start(), ("content_block_delta", 7)],
    "json-null-after-start": [start(), ("content_block_delta", None)],
    "empty-data": [start(), ("content_block_delta", Raw("")), tool(0)],
    "unknown-delta-type": [start(), tool(0), delta(0, {"type": "mystery_delta", "x": 1})],
    "delta-type-a-list": [start(), TEXT, delta(0, {"type": ["text_delta"], "text": "x"})],
    "delta-extra-key": [
        start(),
        tool(0),
        delta(0, {"type": "input_json_delta", "partial_json": "{", "x": 1}),
    ],
    "event-extra-key": [
        start(),
        tool(0),
        ("content_block_delta", js(0, "{")[1] | {"_fields_set": 1}),
    ],
    "delta-not-an-object": [start(), tool(0), delta(0, "x")],
    "delta-missing": [
        start(),
        tool(0),
        ("content_block_delta", stop(0)[1] | {"type": "content_block_delta"}),
    ],
    "unknown-block-type": [start(), block(0, {"type": "mystery", "x": 1}), text_delta(0, "x")],
    "block-not-an-object": [start(), block(0, "x")],
    "block-missing": [start(), ("content_block_start", {"type": "content_block_start"})],
    "text-deltas": [start(), TEXT, text_delta(0, "Hi"), text_delta(0, " there"), stop(0)],
    "text-delta-not-a-string": [start(), TEXT, text_delta(0, 5)],
    "text-delta-to-a-tool": [start(), tool(0), text_delta(0, "x"), js(0, "{}")],
    "text-block-text-missing": [start(), block(0, {"type": "text"}), text_delta(0, "x")],
    "text-block-text-list": [start(), block(0, {"type": "text", "text": [1]}), text_delta(0, "ab")],
    "text-block-text-number": [start(), block(0, {"type": "text", "text": 1}), text_delta(0, 2)],
    "text-block-text-number-plus-string": [
        start(),
        block(0, {"type": "text", "text": 1.5}),
        text_delta(0, "x"),
    ],
    "citations": [
        start(),
        TEXT,
        delta(0, {"type": "citations_delta", "citation": {"type": "char_location"}}),
        delta(0, {"type": "citations_delta", "citation": None}),
        stop(0),
    ],
    "citations-not-a-list": [
        start(),
        block(0, {"type": "text", "text": "", "citations": "x"}),
        delta(0, {"type": "citations_delta", "citation": {}}),
    ],
    "thinking": [
        start(),
        THINKING,
        delta(0, {"type": "thinking_delta", "thinking": "hmm"}),
        delta(0, {"type": "signature_delta", "signature": "sig"}),
        stop(0),
        tool(1),
        js(1, "{}"),
    ],
    "thinking-delta-not-a-string": [start(), THINKING, delta(0, {"type": "thinking_delta"})],
    "redacted-thinking": [
        start(),
        block(0, {"type": "redacted_thinking", "data": "xx"}),
        delta(0, {"type": "thinking_delta", "thinking": "x"}),
        stop(0),
    ],
    "signature-to-a-junk-entry": [start([7]), delta(0, {"type": "signature_delta"})],
    "cut-mid-input": [start(), tool(0), js(0, '{"a": "b')],
    "cut-before-start": [PING],
    "empty-stream": [],
}


@pytest.mark.parametrize("beta", [PLAIN, BETA], ids=["MessageStream", "BetaMessageStream"])
@pytest.mark.parametrize("items", list(CASES.values()), ids=list(CASES))
def test_quirks_match_the_real_class(items: list[Item], beta: Beta) -> None:
    check(items, beta)


MCP = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask", "server_name": "s", "input": {}}
COMPACTION = block(0, {"type": "compaction", "content": None})
# What BetaMessageStream accumulates otherwise than MessageStream, each run through both
BETA_CASES: dict[str, list[Item]] = {
    "mcp-tool-input": [start(), block(0, MCP), *[js(0, p) for p in WEATHER], stop(0)],
    "mcp-tool-in-message-start": [start([MCP]), js(0, '{"a": 1}'), STOP_MESSAGE],
    "mcp-tool-bad-input": [start(), block(0, MCP), js(0, '{"a": 1, }')],
    "mcp-after-a-tool-sharing-its-buffer": [start(), tool(0), js(0, '{"a"'), block(1, MCP)]
    + [js(0, ": 1}"), js(1, "[1")],
    "fallback-to-a-model": [start(), block(0, {"type": "fallback", "to": {"model": "m2"}})],
    "fallback-to-an-empty-object": [start(), block(0, {"type": "fallback", "to": {}})],
    "fallback-to-null": [start(), block(0, {"type": "fallback", "to": None}), tool(1)],
    "fallback-without-to": [start(), block(0, {"type": "fallback"})],
    "fallback-to-a-string": [
        start(),
        tool(0),
        js(0, "{}"),
        block(1, {"type": "fallback", "to": "m"}),
    ],
    "fallback-to-a-list": [start(), block(0, {"type": "fallback", "to": [1]})],
    "compaction-delta": [
        start(),
        COMPACTION,
        delta(0, {"type": "compaction_delta", "content": "x"}),
    ],
    "compaction-delta-to-a-text-block": [start(), TEXT, delta(0, {"type": "compaction_delta"})],
    "compaction-delta-to-a-junk-entry": [start([7]), delta(0, {"type": "compaction_delta"})],
    "compaction-delta-bool-index": [start(), COMPACTION, delta(True, {"type": "compaction_delta"})],
    "message-delta-beta-fields": [
        start(),
        tool(0),
        js(0, "{}"),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 5, "iterations": [1], "fallback_credit": 3},
                "context_management": {"applied_edits": []},
                "input_transformations": [{"type": "x"}],
            },
        ),
    ],
    "fine-grained-header-text-only": [start(), TEXT, text_delta(0, "hi"), stop(0)],
}


@pytest.mark.parametrize("beta", [PLAIN, BETA, FINE], ids=["plain", "beta", "fine-grained"])
@pytest.mark.parametrize("items", list(BETA_CASES.values()), ids=list(BETA_CASES))
def test_what_the_beta_stream_reads_otherwise_matches_the_real_class(
    items: list[Item], beta: Beta
) -> None:
    # modelled unless the trailing-strings beta meets a tool input
    inputs = any(name == "content_block_delta" and "partial_json" in str(e) for name, e in items)
    assert check(items, beta) or (beta is FINE and inputs)


def test_the_beta_stream_builds_an_mcp_tools_input() -> None:
    items = BETA_CASES["mcp-tool-input"]
    (plain,) = final(items)  # type: ignore[misc]
    (beta,) = final(items, BETA)  # type: ignore[misc]
    assert (plain.type, plain.arguments, beta.arguments) == (
        "mcp_tool_use",
        "{}",
        '{"location":"Paris","unit":"c"}',
    )
    # a fallback whose target is not an object: only BetaMessageStream reads it
    assert final(BETA_CASES["fallback-to-null"], BETA) == StrategyError(
        "AttributeError: 'NoneType' object has no attribute 'model'", 2
    )
    assert isinstance(final(BETA_CASES["fallback-to-null"]), list)


UNMODELED: dict[str, list[Item]] = {
    "numeric-string-index": CASES["index-numeric-string"],
    "large-float-index": [start(), tool(0), stop(2.0**60)],
    "float-index-citations": [
        start(),
        TEXT,
        delta(0.0, {"type": "citations_delta", "citation": {"type": "char_location"}}),
    ],
    "content-not-a-list": [start("x")],  # type: ignore[arg-type]
    "array-of-objects-after-start": [start(), ("content_block_delta", [{"a": 1}])],
    "construct-parameter-key": [start(), block(0, {"type": "text", "_fields_set": [1]})],
    "construct-parameter-key-string": [start(), block(0, {"type": "text", "_fields_set": "x"})],
    "construct-parameter-in-a-tool-start": [start(), tool(0, _BaseModel__cls=None)],
    "huge-number": tool_stream(["[" + "1" * 4100]),
}
# ... and for a request BetaMessageStream reads
BETA_UNMODELED: dict[str, tuple[list[Item], SdkExchange]] = {
    "trailing-strings-tool-input": (tool_stream(['{"a": "b', 'c"}']), FINE),
    "trailing-strings-cut-in-a-string": (tool_stream(['{"a": "b']), FINE),
    "float-index-compaction-delta": (
        [start(), COMPACTION, delta(0.0, {"type": "compaction_delta", "content": "x"})],
        BETA,
    ),
}


@pytest.mark.parametrize(
    ("items", "beta"),
    [(items, PLAIN) for items in UNMODELED.values()] + list(BETA_UNMODELED.values()),
    ids=list(UNMODELED) + list(BETA_UNMODELED),
)
def test_unmodeled_shapes_fall_back_to_the_real_class(items: list[Item], beta: Beta) -> None:
    frames = frames_of(items)
    with pytest.raises(Unmodeled):
        emulate(frames, beta=beta)
    assert anthropic_sdk_result(frames, beta) == run_real_anthropic(frames, beta)


def test_tool_values() -> None:
    got = final(tool_stream(WEATHER))
    assert got == [
        Call(0, 0, "toolu_0", "tool_use", "get_weather", '{"location":"Paris","unit":"c"}', 4, 2, 6)
    ]


def test_spliced_message_builds_on_the_first_message() -> None:
    """2.17 ignores the second message_start: both blocks sit in the first message's content,
    and the second message's delta for index 0 extends the FIRST block's buffer."""
    first, second = final(CASES["spliced-message"])  # type: ignore[misc]
    assert (first.name, first.arguments, first.fragments) == ("first", "{}", 2)
    assert (second.name, second.arguments, second.index) == ("second", "{}", 1)


def test_invalid_json_message_is_the_sdks() -> None:
    assert final(CASES["invalid-json"]) == StrategyError(
        "ValueError: Unable to parse tool parameter JSON from model. Please retry your request "
        "or adjust your prompt. Error: trailing comma at line 1 column 10. "
        'JSON: {"a": 1, }',
        4,
    )
    # what follows a complete top-level value is ignored, in partial mode
    assert final(CASES["trailing-garbage-ignored"])[0].arguments == '{"a":1}'  # type: ignore[index]


def test_unmodeled_without_anthropic_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamscope.dialects.anthropic import oracle as anthropic_oracle

    monkeypatch.setattr(anthropic_oracle, "anthropic_version", lambda: None)
    got = anthropic_oracle.anthropic_sdk_result(frames_of(UNMODELED["numeric-string-index"]))
    assert isinstance(got, Unmodeled) and str(got) == NOT_INSTALLED


def test_not_utf8_frames_are_unmodeled() -> None:
    frames = frames_of(tool_stream(["{}"]))
    frames[2].bad_utf8 = True
    assert isinstance(anthropic_sdk_result(frames), Unmodeled)


# --- recorded streams --------------------------------------------------------------------

SSE_FILES = sorted(FIXTURES.glob("**/*.sse"))


def read_sse(path: Path) -> list[Frame]:
    return read_sse_bytes(path.read_bytes())


def read_sse_bytes(body: bytes) -> list[Frame]:
    decoder = SseDecoder()
    frames = list(decoder.feed(body))
    decoder.finish()
    return frames


@pytest.mark.parametrize("beta", [PLAIN, BETA], ids=["MessageStream", "BetaMessageStream"])
@pytest.mark.parametrize("path", SSE_FILES, ids=[p.name for p in SSE_FILES])
def test_recorded_streams_match_the_real_class(path: Path, beta: Beta) -> None:
    assert check_frames(read_sse(path), beta), f"{path.name}: the emulation declined a recording"


def test_a_beta_recording_is_read_as_the_beta_client_reads_it() -> None:
    # pydantic-ai's MCP servers stream, sent by the beta client to /v1/messages?beta=true:
    # BetaMessageStream builds the mcp_tool_use block's input from its deltas
    from streamscope.inputs.source import open_input

    with open_input(str(FIXTURES / "pydantic-ai-mcp-servers-beta.recording.jsonl")) as source:
        (info,) = source.infos()
        assert info.response_format == SdkExchange("/v1/messages", None, BetaStream(""))
        frames = list(source.exchange(1).frames())
    assert check_frames(frames, info.response_format)
    (call,) = anthropic_sdk_result(frames, info.response_format)  # type: ignore[misc]
    assert (call.type, call.name) == ("mcp_tool_use", "ask_question")
    assert json.loads(call.arguments)["repoName"] == "pydantic/pydantic-ai"
    (plain,) = anthropic_sdk_result(frames)  # type: ignore[misc]  # MessageStream: its start's
    assert plain.arguments == "{}"


def sse_of(items: list[Item]) -> bytes:
    return b"".join(sse_bytes(frame) for frame in frames_of(items))


def recorded(
    path: Path, url: str, headers: list[tuple[str, str]], body: bytes, sent: object = None
) -> list[Any]:
    """Write one exchange (a request to `url`, of `sent` or an empty Messages body; a 200
    response with `headers` streaming `body`) and read it back: its ExchangeInfo and its
    frames."""
    from streamscope.inputs.source import open_input
    from streamscope.recording import RecordingWriter

    with RecordingWriter(str(path)) as w:
        ex = w.new_exchange()
        asked = json.dumps({"messages": []} if sent is None else sent).encode()
        w.request(ex, "POST", url, [("content-type", "application/json")], asked)
        w.response(ex, 200, headers)
        w.chunk(ex, body)
        w.end(ex, "complete")
    with open_input(str(path)) as source:
        (info,) = source.infos()
        return [info, list(source.exchange(1).frames())]


def sdk_of(path: Path) -> object:
    """What the analysis of a one-stream recording reports for anthropic-sdk."""
    from streamscope.analysis.driver import analyze

    (stream,) = analyze(path).streams
    return stream.strategies["anthropic-sdk"]


ERROR_STREAM = [start(), ("error", overloaded(request_id="req_in_body"))]
SSE_HEADERS = [("content-type", "text/event-stream"), ("Request-Id", "req_011CXrecorded")]


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://gateway.example/anthropic/v1/messages", "/anthropic/v1/messages"),
        ("https://gateway.example/anthropic/v1/messages?beta=true", "/anthropic/v1/messages"),
    ],
    ids=["gateway", "gateway-beta"],
)
def test_an_error_names_the_recorded_path_and_request_id(
    tmp_path: Path, url: str, path: str
) -> None:
    # make_status_error names the response's `request-id` header before the body's, and the
    # path the request was posted to (a gateway's prefix kept, the query dropped)
    info, frames = recorded(tmp_path / "r.jsonl", url, SSE_HEADERS, sse_of(ERROR_STREAM))
    assert (info.response_format.path, info.response_format.request_id) == (
        path,
        "req_011CXrecorded",
    )
    assert check_frames(frames, info.response_format)
    got = anthropic_sdk_result(frames, info.response_format)
    assert got == run_real_anthropic(frames, info.response_format)
    said = f"Overloaded (request_id: req_011CXrecorded, path: {path}, type: overloaded_error)"
    assert got == StrategyError(f"APIStatusError: {said}", 2)
    assert sdk_of(tmp_path / "r.jsonl") == got  # what inspect reports


def test_an_error_on_bedrock_names_the_invoke_path(tmp_path: Path) -> None:
    # AnthropicBedrock posts to /model/{id}/invoke-with-response-stream; its exception
    # message is the `error` event its decoder makes, raised by the same make_status_error
    from ...bedrock_invoke import URL, chunk, events_json, exception, request_body

    body = chunk(events_json()[0]) + exception(message="busy")
    headers = [("content-type", "application/vnd.amazon.eventstream"), ("request-id", "r-1")]
    info, frames = recorded(tmp_path / "r.jsonl", URL, headers, body, request_body())
    invoke = URL.removeprefix("https://bedrock-runtime.us-east-1.amazonaws.com")
    assert info.response_format == SdkExchange(invoke, "r-1", None)
    got = anthropic_sdk_result(frames, info.response_format)
    events = [bedrock_error(f) for f in frames]  # (as the SDK's decoder makes them)
    assert got == run_real_anthropic(events, info.response_format)
    assert sdk_of(tmp_path / "r.jsonl") == got
    assert got.error.endswith(  # type: ignore[union-attr]
        f"(request_id: r-1, path: {invoke}, type: modelStreamErrorException)"
    )


def test_a_stream_alone_names_the_sdks_own_path() -> None:
    # an SSE body holds no request and no response headers: the SDK's own /v1/messages
    frames = read_sse_bytes(sse_of(ERROR_STREAM))
    got = anthropic_sdk_result(frames)
    assert got == run_real_anthropic(frames)
    assert got.error.endswith(  # type: ignore[union-attr]
        "(request_id: req_in_body, path: /v1/messages, type: overloaded_error)"
    )


def test_the_request_id_is_the_header_as_httpx_reads_it() -> None:
    import httpx2

    from streamscope.dialects.anthropic.wire import answer_facts

    for headers in (
        [("request-id", "a"), ("X-Other", "b"), ("REQUEST-ID", "c")],
        [("request-id", "")],
        [("x-request-id", "a")],
    ):
        read = answer_facts(PLAIN, headers)
        assert read.request_id == httpx2.Headers(headers).get("request-id"), headers


SAMPLES = sorted((Path(__file__).resolve().parents[3] / "recordings").glob("anthropic-*.jsonl"))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_bundled_sample_matches_the_real_class(path: Path) -> None:
    from streamscope.analysis.driver import frame_source

    for exchange in (1, 2):
        frames = list(frame_source(str(path), exchange))
        assert check_frames(frames), f"{path.name} exchange {exchange}: declined"


# --- jiter's partial mode, against jiter itself ----------------------------------------------

JSON_PIECES = [
    *'{}[]":, \n\t10-.eE+abtrufnlsNI\\x',
    "ue",
    "null",
    "true",
    "false",
    "NaN",
    "Infinity",
    '"k"',
    "\\u00e9",
    "\\ud83d",
    "\\ude00",
    "\\ud800",
    "\\u12g4",
    "\x01",
    "\u00e9",
    "12",
    "3.5",
    "1e400",
    "123456789012345678901234",
    '{"a": ',
    '[1, "x", ',
]


def jiter_says(data: bytes) -> tuple[str, str]:
    try:
        return "value", json.dumps(jiter.from_json(data, partial_mode=True))
    except ValueError as exc:
        return "error", str(exc)


def partial_says(reader: PartialJson, data: bytes) -> tuple[str, str]:
    failure = reader.error()
    if failure is not None:
        return "error", f"{failure[0]} at {position(data, failure[1])}"
    return "value", json.dumps(reader.value())


def json_values(*, finite: bool = False) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=not finite, allow_infinity=not finite),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=6),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(
                st.text(st.characters(exclude_categories=["Cs"]), max_size=3), inner, max_size=3
            ),
        ),
        max_leaves=8,
    )


def json_text(values: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda v, ascii_, indent: json.dumps(v, ensure_ascii=ascii_, indent=indent),
        values,
        st.booleans(),
        st.sampled_from([None, 1]),
    )


def valid_json() -> st.SearchStrategy[str]:
    return json_text(json_values())


def json_containers(*, finite: bool = False) -> st.SearchStrategy[str]:
    """JSON texts of an object or an array (sometimes with a key repeated)."""
    members = json_values(finite=finite)
    return st.one_of(
        json_text(st.lists(members, max_size=4)),
        json_text(st.dictionaries(st.text(max_size=3), members, max_size=4)),
        st.builds(
            lambda a, b: a[:-1] + ", " + b[1:] if len(a) > 2 and len(b) > 2 else a,
            json_text(st.dictionaries(st.sampled_from("ab"), members, max_size=2)),
            json_text(st.dictionaries(st.sampled_from("ab"), members, max_size=2)),
        ),
    )


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    text=st.one_of(valid_json(), st.lists(st.sampled_from(JSON_PIECES), max_size=12).map("".join)),
    cuts=st.lists(st.integers(0, 200), max_size=6),
    edit=st.one_of(st.none(), st.tuples(st.integers(0, 200), st.sampled_from(JSON_PIECES))),
)
def test_partial_json_is_jiter(text: str, cuts: list[int], edit: tuple[int, str] | None) -> None:
    """Fed in pieces (whole characters, as the SDK's fragments are), PartialJson says after
    each piece what jiter says of the whole buffer."""
    if edit is not None:
        at = edit[0] % (len(text) + 1)
        text = text[:at] + edit[1] + text[at:]
    reader, fed = PartialJson(), b""
    for piece in split(text, cuts):
        data = piece.encode("utf-8")
        reader.feed(data)
        fed += data
        if fed:
            assert partial_says(reader, fed) == jiter_says(fed), fed


# strings with what only counts outside them, escapes around quotes
QUICK_PIECES = [*JSON_PIECES, '"NaN"', '"-Infinity"', '"a\\"NaN"', '"\\\\"', "\\\\", '\\"']


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    text=st.one_of(
        json_containers(),
        valid_json(),
        st.lists(st.sampled_from(QUICK_PIECES), max_size=12).map("".join),
        st.builds(lambda a, b: a + b, json_containers(), st.sampled_from(QUICK_PIECES)),
    ),
    edit=st.one_of(st.none(), st.tuples(st.integers(0, 200), st.sampled_from(QUICK_PIECES))),
)
def test_quick_value_vouches_only_for_what_jiter_reads(
    text: str, edit: tuple[int, str] | None
) -> None:
    """Where quick_value reads a text, jiter accepts every prefix of it that is not whitespace
    only (so no delta of a buffer holding it raised), and reads it as quick_value does."""
    if edit is not None:
        at = edit[0] % (len(text) + 1)
        text = text[:at] + edit[1] + text[at:]
    vouched = quick_value(text) is not None
    for end in range(1, len(text) + 1):
        prefix = text[:end]
        value = quick_value(prefix)
        if value is not None:
            assert jiter_says(prefix.encode("utf-8")) == ("value", json.dumps(value)), prefix
        elif vouched and prefix.strip(JSON_WS):
            assert jiter_says(prefix.encode("utf-8"))[0] == "value", prefix


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(text=json_containers(finite=True))
def test_quick_value_reads_every_prefix_of_a_plain_json_text(text: str) -> None:
    """With nothing json.loads and jiter may read differently in it (an escape of a
    surrogate, NaN, Infinity, a very long number), every prefix of an object or array that
    is not whitespace only is read at C speed: ordinary tool inputs never need the bytes
    read one by one."""
    assume(not partial_json._risky(text))
    for end in range(1, len(text) + 1):
        if text[:end].strip(JSON_WS):
            assert quick_value(text[:end]) is not None, text[:end]


# --- random quirky streams -----------------------------------------------------------------

MISSING: Any = object()


def w(*pairs: tuple[int, Any]) -> st.SearchStrategy:
    """A weighted choice: (weight, value) pairs."""
    return st.sampled_from([v for n, v in pairs for _ in range(n)])


def without_missing(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not MISSING}


INPUTS = [
    '{"location": "Paris, \\u00e9\\n", "days": [1, 2.5e3, -0, null, true], "deep": {"x": {}}}',
    '{"q": "\\ud83d\\ude00 caf\u00e9", "n": 12345678901234567890123}',
    "[]",
    '"just a string"',
    "12.5",
]
BAD_PIECES = ["}", "x", '"\\q"', ", ]", "\x01", "[tru", "01", " ", '"\\ud800"']


@st.composite
def tool_input_items(draw: st.DrawFn, index: Any) -> list[Item]:
    text = draw(st.sampled_from(INPUTS))
    pieces = split(text, draw(st.lists(st.integers(0, 120), min_size=1, max_size=8)))
    if draw(w((4, False), (1, True))):
        pieces.insert(draw(st.integers(0, len(pieces))), draw(st.sampled_from(BAD_PIECES)))
    if draw(w((5, False), (1, True))):
        pieces.insert(0, "")
    return [js(index, p) for p in pieces]


@st.composite
def a_block(draw: st.DrawFn) -> Any:
    kind = draw(
        w(
            (6, "tool_use"),
            (2, "server_tool_use"),
            (2, "mcp_tool_use"),
            (3, "text"),
            (2, "thinking"),
            (1, "redacted_thinking"),
            (1, "fallback"),  # (the beta stream's)
            (1, "compaction"),
            (1, "mystery"),
            (1, MISSING),
        )
    )
    if draw(w((40, False), (1, True))):
        return draw(st.sampled_from(["x", None, [1], 5]))
    body = {
        "type": kind,
        "id": draw(w((8, "toolu_x"), (1, MISSING), (1, None), (1, 5))),
        "name": draw(w((6, "get_weather"), (2, "web_search"), (1, MISSING), (1, None))),
        "input": draw(w((8, {}), (3, {"a": 1}), (1, MISSING), (1, None), (1, [1]), (1, "s"))),
        "text": draw(w((6, ""), (1, MISSING), (1, None), (1, 5), (1, [1]))),
        "thinking": draw(w((6, ""), (1, MISSING), (1, 1.5))),
        "citations": draw(w((6, MISSING), (1, None), (1, []), (1, "x"))),
    }
    if draw(w((3, False), (1, True))):
        body["caller"] = draw(st.sampled_from([{"type": "direct"}, {"type": "nope"}, None]))
    if kind == "fallback":
        body["to"] = draw(w((4, {"model": "m"}), (1, {}), (1, None), (1, "m"), (1, MISSING)))
    return without_missing(body)


@st.composite
def a_delta(draw: st.DrawFn) -> Any:
    kind = draw(
        w(
            (6, "text_delta"),
            (3, "thinking_delta"),
            (2, "signature_delta"),
            (2, "citations_delta"),
            (3, "input_json_delta"),
            (1, "compaction_delta"),  # (the beta stream's)
            (1, "mystery_delta"),
            (1, MISSING),
        )
    )
    if draw(w((30, False), (1, True))):
        return draw(st.sampled_from(["x", None, 3, MISSING]))
    body = {"type": kind}
    value = draw(w((8, "ab"), (1, ""), (1, 5), (1, None), (1, MISSING), (1, [1])))
    field = (
        "content" if kind == "compaction_delta" else sdk_model._DELTA_FIELD.get(kind, "citation")
    )
    body[field] = {"type": "char_location"} if field == "citation" and value == "ab" else value
    return without_missing(body)


# where a block or delta points: "new" is the position a started block will take (the last
# block for a delta), the rest are the quirks
INDEXES = w(
    (80, "new"),
    (6, 0),
    (3, 1),
    (2, -1),
    (1, True),
    (1, 0.0),
    (1, 1.5),
    (1, "a"),
    (1, None),
    (1, MISSING),
    (1, 7),
)


EVENT_KINDS = w(
    (14, "tool"),
    (8, "block"),
    (10, "input"),
    (8, "delta"),
    (4, "stop"),
    (2, "message_delta"),
    (1, "message_stop"),
    (1, "ping"),
    (1, "message_start"),
    (1, "error"),
    (1, "odd name"),
    (1, "name differs"),
    (1, "odd data"),
    (1, "no index"),
)


@st.composite
def an_event(draw: st.DrawFn, blocks: int) -> list[Item]:
    """One event (or a block with its deltas), `blocks` being how many blocks there are."""
    kind = draw(EVENT_KINDS)
    if blocks == 0 and kind in ("input", "delta", "stop") and draw(w((5, True), (1, False))):
        kind = "tool"  # mostly, a delta comes after its block
    index = draw(INDEXES)
    if index == "new":
        index = blocks if kind in ("tool", "block") else max(blocks - 1, 0)
    if kind == "tool":  # a block and its input, the common case
        items = [block(index, draw(a_block())), *draw(tool_input_items(index))]
    elif kind == "block":
        items = [block(index, draw(a_block()))]
    elif kind == "input":
        items = draw(tool_input_items(index))
    elif kind == "delta":
        items = [delta(index, draw(a_delta()))]
    elif kind == "stop":
        items = [stop(index)]
    elif kind == "message_delta":
        reason = draw(st.sampled_from(["tool_use", "end_turn", "max_tokens", None, 5]))
        usage = draw(st.sampled_from([{}, {"input_tokens": 2}, {"cache_read_input_tokens": 1}]))
        items = [message_delta(reason, **usage)]
    elif kind == "message_stop":
        items = [STOP_MESSAGE]
    elif kind == "ping":
        items = [PING]
    elif kind == "message_start":
        items = [start()]
    elif kind == "error":
        items = [("error", draw(st.sampled_from([{"type": "error"}, Raw("boom"), Raw("")])))]
    elif kind == "odd name":
        items = [(draw(st.sampled_from(["mystery", None, ""])), {"type": "content_block_stop"})]
    elif kind == "name differs":  # the event name says one thing, the data's type another
        items = [("content_block_delta", {"type": draw(st.sampled_from(["message_stop", "x"]))})]
    elif kind == "odd data":
        odd = draw(st.sampled_from([Raw("{nope"), Raw(""), Raw("NaN"), [1], 2, None]))
        items = [("content_block_delta", odd)]
    else:
        items = [delta(MISSING, {"type": "text_delta", "text": "x"})]
    return [(name, without_missing(body) if type(body) is dict else body) for name, body in items]


@st.composite
def a_stream(draw: st.DrawFn) -> list[Item]:
    items: list[Item] = []
    if draw(w((8, False), (1, True))):
        items += draw(an_event(0))  # something before message_start
    blocks = 0
    if draw(w((20, True), (1, False))):
        content = draw(w((10, []), (1, None), (1, [{"type": "tool_use", "id": "t", "input": {}}])))
        items.append(start(content))
        blocks = len(content or ())
    for _ in range(draw(st.integers(1, 8))):
        events = draw(an_event(blocks))
        blocks += sum(name == "content_block_start" for name, _ in events)
        items += events
    if draw(st.booleans()):
        items += [message_delta(), STOP_MESSAGE]
    if draw(w((4, False), (1, True))):  # the stream cut anywhere
        items = items[: draw(st.integers(0, len(items)))]
    return items


@pytest.mark.slow
@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(items=a_stream(), beta=st.sampled_from([PLAIN, BETA, FINE]))
def test_random_streams_match_the_real_class(items: list[Item], beta: Beta) -> None:
    check(items, beta)


# --- keys pydantic cannot write ------------------------------------------------------------
# A key holding a lone surrogate goes into the SDK's model as sent (tests/dialects/
# lone_keys.py); the SDK raises UnicodeEncodeError where it dumps a model holding it: the
# first message_start's message (its content blocks and usage with it) and each
# content_block_start's block. Events themselves, deltas, a message_delta's usage and a
# second message_start are never dumped.

STREAM = tool_stream(WEATHER)


def keyed(position: int, edit: Any) -> list[Item]:
    """STREAM with the event at `position` edited."""
    items = copy.deepcopy(STREAM)
    name, body = items[position]
    items[position] = (name, edit(body))
    return items


def in_message(edit: Any) -> Any:
    return lambda body: {**body, "message": edit(body["message"])}


def in_block(edit: Any) -> Any:
    return lambda body: {**body, "content_block": edit(body["content_block"])}


def usage_with(key: str = LONE) -> Any:
    return in_message(lambda m: {**m, "usage": with_key(m["usage"], key)})


TEXT_BLOCK = {"type": "text", "text": ""}
KEYED_RAISES = {
    "message": (keyed(0, in_message(with_key)), 1),
    "usage": (keyed(0, usage_with()), 1),
    "message-content": (
        keyed(0, in_message(lambda m: {**m, "content": [with_key(TEXT_BLOCK)]})),
        1,
    ),
    "block": (keyed(1, in_block(with_key)), 2),
    "text-block": ([start(), block(0, with_key(TEXT_BLOCK)), stop(0), STOP_MESSAGE], 2),
}

KEYED_RAISES_FIRST = {
    # a model's fields (nested models first: content before usage) before its extras
    "content-before-usage-before-message": (
        keyed(
            0,
            in_message(
                lambda m: with_key(
                    {
                        **m,
                        "content": [with_key(TEXT_BLOCK, "\udc03")],
                        "usage": with_key(m["usage"], "\udc02"),
                    },
                    "\udc01",
                )
            ),
        ),
        "\udc03",
    ),
    "usage-before-message": (
        keyed(
            0,
            in_message(
                lambda m: with_key({**m, "usage": with_key(m["usage"], "\udc02")}, "\udc01")
            ),
        ),
        "\udc02",
    ),
}

KEYED_WRITTEN = {
    # nothing dumps these keys: the SDK does not raise
    "events": [(name, with_key(body)) for name, body in STREAM],
    "delta": keyed(2, lambda body: {**body, "delta": with_key(body["delta"])}),
    "message-delta": keyed(
        -2,
        lambda body: {**body, "delta": with_key(body["delta"]), "usage": with_key(body["usage"])},
    ),
    "second-message-start": [
        STREAM[0],
        ("message_start", in_message(with_key)(STREAM[0][1])),
        *STREAM[1:],
    ],
    "values": keyed(1, in_block(lambda b: {**b, "id": LONE, "name": "f" + LONE})),
    "a-pair": keyed(1, in_block(lambda b: with_key(b, "\ud83d\ude00"))),
}

KEYED_DECLINED = {
    # deeper in a model than the emulation follows: the real class says (here it raises)
    "usage-details": (
        keyed(
            0, in_message(lambda m: {**m, "usage": {**m["usage"], "cache_creation": with_key({})}})
        ),
        1,
    ),
    "citation": (
        [start(), block(0, {**TEXT_BLOCK, "citations": [with_key({"type": "char_location"})]})],
        2,
    ),
    # (and here it does not: a tool's input, an extra's object)
    "input": (keyed(1, in_block(lambda b: {**b, "input": {LONE: 1}})), None),
    "in-an-extra": (keyed(0, in_message(lambda m: {**m, "x": {LONE: 1}})), None),
}


@pytest.mark.parametrize("beta", [PLAIN, BETA], ids=["plain", "beta"])
@pytest.mark.parametrize("items, frame", KEYED_RAISES.values(), ids=list(KEYED_RAISES))
def test_a_key_pydantic_cannot_write_raises_where_the_sdk_dumps_it(
    items: list[Item], frame: int, beta: Beta
) -> None:
    assert check(items, beta)
    assert run_real_anthropic(frames_of(items), beta) == StrategyError(encode_error(), frame)


@pytest.mark.parametrize("items, key", KEYED_RAISES_FIRST.values(), ids=list(KEYED_RAISES_FIRST))
def test_the_key_that_raises_is_the_one_the_sdk_writes_first(items: list[Item], key: str) -> None:
    assert check(items)
    assert run_real_anthropic(frames_of(items)) == StrategyError(encode_error(key), 1)


@pytest.mark.parametrize("items", KEYED_WRITTEN.values(), ids=list(KEYED_WRITTEN))
def test_keys_the_sdk_never_dumps_do_not_raise(items: list[Item]) -> None:
    assert check(items)
    assert isinstance(run_real_anthropic(frames_of(items)), list)


@pytest.mark.parametrize("items, frame", KEYED_DECLINED.values(), ids=list(KEYED_DECLINED))
def test_keys_deeper_down_are_for_the_real_class(items: list[Item], frame: int | None) -> None:
    assert not check(items)  # (and the real class's answer is the strategy's)
    says(anthropic_sdk_result(frames_of(items)), frame)


FLOAT_INDEX = "TypeError: list indices must be integers or slices, not float"


@pytest.mark.parametrize(
    "position, edit",
    [
        (2, with_key),
        (2, lambda body: {**body, "delta": with_key(body["delta"])}),
        (len(STREAM) - 3, with_key),
    ],
    ids=["delta-event", "delta", "stop"],
)
def test_such_a_key_keeps_a_whole_float_index_a_float(position: int, edit: Any) -> None:
    # the key fails the event's validation, so pydantic's lax int coercion never runs
    items = keyed(position, lambda body: edit({**body, "index": 0.0}))
    assert check(items)
    assert run_real_anthropic(frames_of(items)) == StrategyError(FLOAT_INDEX, position + 1)
    # (a key that encodes leaves it validated: 0.0 reads as 0)
    items = keyed(position, lambda body: {**body, "index": 0.0, "é": 1})
    assert check(items)
    assert isinstance(run_real_anthropic(frames_of(items)), list)


@st.composite
def keyed_stream(draw: st.DrawFn) -> list[Item]:
    items = copy.deepcopy(draw(a_stream()))
    bodies = [body for _, body in items if type(body) is dict]
    for _ in range(draw(st.integers(1, 3)) if bodies else 0):
        body = draw(st.sampled_from(bodies))
        message = body.get("message")
        if draw(st.integers(0, 6)) == 0 and type(message) is dict:
            message["usage"] = {"input_tokens": 1, "cache_creation": {}, "server_tool_use": {}}
        put_key(draw, body)
    return items


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(items=keyed_stream(), beta=st.sampled_from([PLAIN, BETA]))
def test_random_keys_pydantic_cannot_write_match_the_real_class(
    items: list[Item], beta: Beta
) -> None:
    check(items, beta)


# --- linearity, version, purity --------------------------------------------------------------


class CountingPartialJson(PartialJson):
    """Counts the bytes the reader is handed (its tail plus each new piece)."""

    __slots__ = ()
    handed = 0

    def feed(self, data: bytes) -> None:
        CountingPartialJson.handed += len(self._tail) + len(data)
        super().feed(data)


def bytes_read_per_fragment(fragments: int, monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(sdk_model, "PartialJson", CountingPartialJson)
    CountingPartialJson.handed = 0
    pieces = ['{"items": ['] + ['{"n": 12, "s": "ab\\n"}, '] * fragments + ["1]}"]
    emu = AnthropicSdkEmulation()
    for frame in frames_of([start(), tool(0), *[js(0, p) for p in pieces]]):
        emu.feed(frame)
    assert emu.error is None
    return CountingPartialJson.handed / len(pieces)


@pytest.mark.slow
def test_input_json_costs_the_same_per_fragment_at_any_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    short = bytes_read_per_fragment(2_000, monkeypatch)
    long = bytes_read_per_fragment(20_000, monkeypatch)
    assert long <= 3 * short, (short, long)


def reading_per_fragment(
    fragments: int, piece: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[float, float]:
    """(bytes handed to the byte reader, characters handed to quick_value) per fragment, for a
    tool input of `fragments` times `piece` fed with a copy taken every 100 frames (as the
    TUI keeps them), then finished."""
    monkeypatch.setattr(sdk_model, "PartialJson", CountingPartialJson)
    CountingPartialJson.handed = 0
    quick = []

    def counting_quick_value(text: str) -> object:
        quick.append(len(text))
        return quick_value(text)

    monkeypatch.setattr(sdk_model, "quick_value", counting_quick_value)
    pieces = ['{"items": ['] + [piece] * fragments + ["1]}"]
    emu, copies = AnthropicSdkEmulation(), []
    for frame in frames_of([start(), tool(0), *[js(0, p) for p in pieces]]):
        emu.feed(frame)
        if frame.number % 100 == 0:
            copies.append(emu.copy())
    assert type(emu.finish(len(pieces) + 2)) is list
    return CountingPartialJson.handed / len(pieces), sum(quick) / len(pieces)


@pytest.mark.slow
@pytest.mark.parametrize(
    "piece",
    ['{"n": 12, "s": "ab\\n"}, ', '{"s": "\\ud83d\\ude00"}, '],
    ids=["read-in-C", "read-byte-by-byte"],
)
def test_a_tool_input_costs_the_same_per_fragment_at_any_length_copies_too(
    piece: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read once, at the end: in C when quick_value vouches for it, else byte by byte (an
    escape of a surrogate); copies read nothing."""
    short = reading_per_fragment(2_000, piece, monkeypatch)
    long = reading_per_fragment(20_000, piece, monkeypatch)
    assert long[0] <= 3 * short[0] and long[1] <= 3 * short[1], (short, long)
    assert (short[0] > 0) == ("ud83d" in piece)  # the byte reader reads only what C declines


def test_copies_never_append_to_the_deltas_they_share() -> None:
    """The TUI reads on in one thread while it resumes copies in another: only the buffer
    that made an unread list appends to it, so what a copy shares stays as it was."""
    frames = frames_of(tool_stream(['{"a": ', '"b", ', '"c": 1', "}"]))
    live = AnthropicSdkEmulation()
    for frame in frames[:3]:
        live.feed(frame)
    snapshot = live.copy()
    shared = [(len(b.unread.pieces), len(b.unread.frames)) for b in live._bufs.values()]
    resumed = snapshot.copy()
    for frame in frames[3:]:
        resumed.feed(frame)
    assert [(len(b.unread.pieces), len(b.unread.frames)) for b in live._bufs.values()] == shared
    for frame in frames[3:]:
        live.feed(frame)
    assert resumed.finish(frames[-1].number) == live.finish(frames[-1].number)


def test_the_installed_anthropic_is_one_the_emulation_was_verified_against() -> None:
    """A new anthropic release must be run through these tests and added to VERIFIED_ANTHROPIC."""
    assert anthropic_version() in VERIFIED_ANTHROPIC, (
        f"anthropic {anthropic_version()} is installed; the anthropic-sdk emulation states it "
        f"was verified against {', '.join(VERIFIED_ANTHROPIC)}: run "
        "tests/dialects/anthropic/test_anthropic_sdk_model.py on the new release, fix what "
        "differs, then add it to VERIFIED_ANTHROPIC (and move pyproject.toml's pin)"
    )


def test_emulation_imports_no_sdk_machinery() -> None:
    code = (
        "import sys, streamscope.dialects.anthropic.sdk_model, streamscope.dialects.anthropic.oracle\n"
        "heavy = {'anthropic', 'openai', 'httpx', 'httpx2', 'textual', 'rich', 'pydantic',"
        " 'pydantic_core', 'jiter'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_nan_renders_as_pythons_json() -> None:
    got = final(tool_stream(["[NaN, Infinity, -Infinity]"]))
    assert isinstance(got, list) and got[0].arguments == "[NaN,Infinity,-Infinity]"
    assert math.isnan(json.loads(got[0].arguments)[0])
