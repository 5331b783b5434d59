"""SdkEmulation must report exactly what the installed openai SDK reports (the oracle)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.analysis.driver import analyze, frame_source
from streamscope.core.calls import Call, StrategyError
from streamscope.core.frames import INVALID, Frame, parse_payload
from streamscope.dialects.chat.appendix_a import ARGS, FIXTURES, chunk
from streamscope.dialects.chat.oracle import openai_version, run_real_sdk, sdk_result
from streamscope.dialects.chat.sdk_model import VERIFIED_OPENAI, SdkEmulation, Unmodeled

from ...helpers import CUSTOM_BESIDE_FUNCTION, SQL, WEATHER_ARGS, chat_sample, custom_delta
from ..lone_keys import LONE, encode_error, put_key, with_key

ROOT = Path(__file__).resolve().parents[3]

NON_STRICT = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
STRICT = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {}, "strict": True}},
    {"type": "function", "function": {"name": "get_time", "parameters": {}, "strict": True}},
]


def frames_of(items: list[Any]) -> list[Frame]:
    """Chunk dicts become JSON frames; str items are raw event data ("[DONE]", garbage)."""
    out = []
    for i, item in enumerate(items, 1):
        if isinstance(item, str):
            out.append(Frame(number=i, data=item, payload=parse_payload(item)))
        else:
            out.append(Frame(number=i, data=orjson.dumps(item).decode(), payload=item))
    return out


def emulate(
    frames: list[Frame], fork_at: int | None = None, **kw: Any
) -> tuple[list[Call] | StrategyError, dict]:
    """Feed every frame, recording calls() after each; optionally continue on a copy()."""
    emu = SdkEmulation(**kw)
    mid: dict[int, list[Call]] = {}
    for i, f in enumerate(frames):
        if i == fork_at:
            emu = emu.copy()
        emu.feed(f)
        if emu.error is None:
            mid[f.number] = emu.calls()
    return emu.finish(frames[-1].number if frames else 0), mid


def check(items: list[Any], **kw: Any) -> bool:
    """Assert emulation == real SDK (final result and every mid-stream snapshot).

    Returns False when the emulation declined (Unmodeled); then the fallback must agree.
    """
    return check_frames(frames_of(copy.deepcopy(items)), **kw)


def check_frames(frames: list[Frame], **kw: Any) -> bool:
    """`check` on frames as decoded from a file (SSE events keep their `event` field)."""
    payloads = copy.deepcopy([f.payload for f in frames])
    real_mid: dict[int, list[Call]] = {}
    real = run_real_sdk(frames, on_frame=lambda n, c: real_mid.__setitem__(n, c), **kw)
    try:
        got, mid = emulate(frames, **kw)
    except Unmodeled:
        assert sdk_result(frames, **kw) == real
        return False
    assert got == real
    for n, calls in real_mid.items():
        assert mid.get(n) == calls, f"frame {n}"
    # a copy taken mid-stream carries on exactly like the original
    assert emulate(frames, fork_at=len(frames) // 2, **kw) == (got, mid)
    # the emulation never mutates the frames it is fed
    assert [f.payload for f in frames] == payloads
    assert sdk_result(frames, **kw) == real
    return True


DONE = "[DONE]"
GARBAGE = "{not json"
CRASH = chunk({"tool_calls": [{"id": "x"}]})  # would raise if it were consumed
ERROR_FRAMES = [
    {"error": {"message": "overloaded", "type": "server_error"}},
    {"error": "boom"},
    {"error": {"message": ""}},
    {"error": {"code": 500}},
    {"error": {}},  # falsy: not an error, and skipped (no `object`)
    {"error": None, **chunk({"content": "x"})},
]


def variants(chunks: list[dict]) -> dict[str, list[Any]]:
    last = chunks[-1]
    length = {**last, "choices": [{**last["choices"][0], "finish_reason": "length"}]}
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    out: dict[str, list[Any]] = {
        "plain": chunks,
        "done": [*chunks, DONE],
        "after-done": [*chunks, DONE, CRASH, GARBAGE],
        "done-prefix": [*chunks, "[DONE] trailing", CRASH],
        "garbage-first": [GARBAGE, *chunks],
        "garbage-mid": [*chunks[:1], GARBAGE, *chunks[1:]],
        "garbage-last": [*chunks, GARBAGE],
        "length": [*chunks[:-1], length],
        "length-usage": [*chunks[:-1], {**length, "usage": usage}],
        "length-then-usage": [*chunks[:-1], length, {**chunk(), "choices": [], "usage": usage}],
        "content-filter": [
            *chunks[:-1],
            {**last, "choices": [{**last["choices"][0], "finish_reason": "content_filter"}]},
        ],
        "not-json-values": [*chunks[:1], "null", "[1, 2]", "3"],
        "nan": [*chunks[:1], '{"object": "chat.completion.chunk", "x": NaN, "choices": []}'],
        "empty-data": [*chunks, ""],
        "second-choice": [
            *chunks[:-1],
            {
                **chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
                "choices": [{"index": 1, "delta": {"content": "x"}}],
            },
            last,
        ],
    }
    for i, err in enumerate(ERROR_FRAMES):
        out[f"error-{i}"] = [*chunks[:1], err, *chunks[1:]]
    return out


# Custom (freeform) calls, as openai-node's tests stream them: beside a function call, with
# `custom.input` in fragments (the real package accumulates them, then raises at the end).
CUSTOM = {
    "custom-beside-function": CUSTOM_BESIDE_FUNCTION,
    "custom-only": [
        chunk(
            {
                "tool_calls": [
                    custom_delta(
                        0, id="call_c", type="custom", custom={"name": "shell", "input": "ls"}
                    )
                ]
            }
        ),
        chunk({"tool_calls": [custom_delta(0, custom={"input": " -la"})]}),
        chunk(finish="tool_calls"),
    ],
    "custom-no-type": [
        chunk(
            {"tool_calls": [custom_delta(0, id="call_c", custom={"name": "shell", "input": "ls"})]}
        ),
        chunk(finish="tool_calls"),
    ],
}

CASES = [
    (f"{name}/{variant}", items)
    for name, chunks in {**FIXTURES, **CUSTOM}.items()
    for variant, items in variants(chunks).items()
]


@pytest.mark.parametrize("items", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_fixture_variants(items: list[Any]) -> None:
    assert check(items)


@pytest.mark.parametrize("name", list(FIXTURES))
@pytest.mark.parametrize("tools", [NON_STRICT, STRICT], ids=["non-strict", "strict"])
def test_fixtures_with_input_tools(name: str, tools: list) -> None:
    chunks = FIXTURES[name]
    check(chunks, input_tools=tools)
    check(variants(chunks)["length-usage"], input_tools=tools)


def test_empty_stream() -> None:
    assert check([])
    assert check([DONE, CRASH])
    assert emulate([])[0] == StrategyError("AssertionError", 0)


def test_fixture_q0_values() -> None:
    got, _ = emulate(frames_of(FIXTURES["Q0"]))
    assert got == [
        Call(0, 0, "call_a", "function", "get_weather", ARGS, 3, 1, 3),
    ]


def test_strict_tools_modelled_without_jiter() -> None:
    # complete arguments in the opening chunk, then finish: json.loads at the done event
    good = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ARGS},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    assert check(good, input_tools=STRICT)
    bad = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{"},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    assert check(bad, input_tools=STRICT)
    assert isinstance(run_real_sdk(frames_of(bad), input_tools=STRICT), StrategyError)
    # arguments streamed after the first chunk go through jiter: the emulation declines
    assert not check(FIXTURES["Q0"], input_tools=STRICT)
    assert not check(FIXTURES["Q0"], response_format=int)


def test_snapshot_restore() -> None:
    frames = frames_of(FIXTURES["Q7"] + FIXTURES["Q15"][1:])
    emu = SdkEmulation()
    for f in frames[:3]:
        emu.feed(f)
    snap = emu.snapshot()
    fork = emu.copy()
    for f in frames[3:]:
        emu.feed(f)
    final = emu.finish(frames[-1].number)
    assert final == run_real_sdk(frames)
    emu.restore(snap)
    for f in frames[3:]:
        fork.feed(f)
        emu.feed(f)
    assert emu.finish(frames[-1].number) == final == fork.finish(frames[-1].number)
    # the snapshot itself was not advanced
    assert snap.calls() != emu.calls()


def test_thread_event_frames_are_skipped() -> None:
    frames = frames_of([*FIXTURES["Q0"][:2], CRASH, *FIXTURES["Q0"][2:]])
    frames[2].event = "thread.run.created"
    real = run_real_sdk(frames)
    got, _ = emulate(frames)
    assert got == real and not isinstance(real, StrategyError)


def test_runtime_error_message_is_exact() -> None:
    got, _ = emulate(frames_of(FIXTURES["Q19"]))
    assert got == StrategyError(
        "RuntimeError: Expected list delta entry to have an `index` key; "
        "{'id': '', 'function': {'arguments': '\"Paris\"}'}, 'type': ''}",
        2,
    )


# --- property test --------------------------------------------------------------------
# Weighted towards streams that survive long enough to accumulate something, with the
# quirks sprinkled in (a fully hostile generator mostly tests the first frame's exception).

MISSING: Any = object()


def w(*pairs: tuple[int, Any]) -> st.SearchStrategy:
    """A weighted choice: (weight, value) pairs."""
    return st.sampled_from([v for n, v in pairs for _ in range(n)])


def _put(d: dict, key: str, value: Any) -> None:
    if value is not MISSING:
        d[key] = value


@st.composite
def tool_delta(draw: st.DrawFn) -> dict:
    d: dict = {}
    _put(d, "index", draw(w((12, 0), (5, 1), (1, 2), (1, None), (1, -1), (1, MISSING))))
    _put(d, "id", draw(w((10, MISSING), (3, "call_a"), (2, "call_b"), (1, ""), (1, None))))
    _put(d, "type", draw(w((10, MISSING), (8, "function"), (1, ""), (1, None), (3, "custom"))))
    fn = draw(w((30, "dict"), (1, "missing"), (1, "none"), (6, "custom"), (1, "both")))
    if fn == "none":
        d["function"] = None
    elif fn in ("custom", "both"):
        c: dict = {}
        _put(c, "name", draw(w((4, MISSING), (2, "run_sql"), (1, ""), (1, None))))
        _put(c, "input", draw(w((2, MISSING), (4, "SELECT "), (4, "1;"), (2, ""), (1, None))))
        d["custom"] = c if draw(st.integers(0, 20)) else draw(st.sampled_from([None, "x"]))
        if fn == "both":
            d["function"] = {"arguments": "{}"}
    elif fn == "dict":
        f: dict = {}
        _put(
            f,
            "name",
            draw(
                w(
                    (12, MISSING),
                    (2, "get_"),
                    (2, "weather"),
                    (4, "get_weather"),
                    (1, ""),
                    (1, None),
                )
            ),
        )
        _put(
            f,
            "arguments",
            draw(
                w(
                    (3, MISSING),
                    (6, '{"a": '),
                    (6, "1}"),
                    (2, ""),
                    (1, None),
                    (2, '{"a": 1}'),
                    (1, {"x": 1}),
                )
            ),
        )
        d["function"] = f
    if draw(st.integers(0, 30)) == 0:
        d["extra"] = draw(st.sampled_from(["x", 1, [{"index": 0, "v": "a"}], [{"v": 1}]]))
    return d


TOKEN = {"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}
# A choice's logprobs: what OpenAI sends, and shapes the SDK may choke on.
LOGPROBS = [
    None,
    {"content": [TOKEN], "refusal": None},
    {
        "content": [
            TOKEN,
            {**TOKEN, "top_logprobs": [{"token": "a", "logprob": -2.0, "bytes": None}]},
        ]
    },
    {"content": [], "refusal": None},
    {"content": None, "refusal": [TOKEN]},
    {"refusal": [TOKEN], "extra": 1},
    {},
    {"content": [{"token": 5, "logprob": "x", "bytes": "y", "top_logprobs": "z"}]},
    {"content": [{}]},
    {"content": "x"},
    {"content": [1]},
    {"refusal": {"a": 1}},
    {"content": [{**TOKEN, "_fields_set": ["token"]}]},
    {"content": [{**TOKEN, "top_logprobs": [{"token": "a", "_fields_set": ["token"]}]}]},
    {"content": [{**TOKEN, "top_logprobs": [1, "a", None, {"token": {"_fields_set": 1}}]}]},
    {"content": [{**TOKEN, "top_logprobs": {"a": 1}, "bytes": {"_fields_set": 1}}]},
    "x",
    [],
    0,
    False,
]


@st.composite
def a_choice(draw: st.DrawFn, index: int) -> dict:
    delta: dict = {}
    if draw(st.integers(0, 5)) == 0:
        delta["role"] = "assistant"
    _put(delta, "content", draw(w((10, MISSING), (2, None), (2, "Hi"), (1, ""))))
    if draw(st.integers(0, 5)):
        delta["tool_calls"] = draw(st.lists(tool_delta(), min_size=1, max_size=2))
    elif draw(st.integers(0, 5)) == 0:
        delta["tool_calls"] = draw(st.sampled_from([None, []]))
    if draw(st.integers(0, 40)) == 0:
        delta["reasoning"] = draw(st.sampled_from(["r", [{"index": 0, "t": "x"}], {"a": 1}]))
    choice: dict = {"index": index}
    if draw(st.integers(0, 40)):
        choice["delta"] = delta
    if draw(st.integers(0, 3)) == 0:
        choice["logprobs"] = draw(st.sampled_from(LOGPROBS))
    _put(
        choice,
        "finish_reason",
        draw(
            w(
                (20, None),
                (20, MISSING),
                (2, "tool_calls"),
                (1, "stop"),
                (1, "length"),
                (1, "content_filter"),
            )
        ),
    )
    return choice


@st.composite
def a_chunk(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 60))
    if kind == 0:
        return DONE
    if kind == 1:
        return GARBAGE
    if kind == 2:
        return draw(st.sampled_from(ERROR_FRAMES))
    index = draw(w((30, 0), (2, 1), (1, -1), (1, None)))
    choices = [draw(a_choice(index))]
    if draw(st.integers(0, 10)) == 0:
        choices.append(draw(a_choice(draw(st.sampled_from([0, 1, 2])))))
    out: dict = {"id": "chatcmpl-x", "created": 0, "model": "m", "choices": choices}
    _put(
        out,
        "object",
        draw(w((40, "chat.completion.chunk"), (1, "chat.completion"), (1, ""), (1, MISSING))),
    )
    if draw(st.integers(0, 20)) == 0:
        out["usage"] = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    return out


@pytest.mark.slow
@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    items=st.lists(a_chunk(), min_size=0, max_size=10),
    tools=w((4, None), (1, NON_STRICT), (1, STRICT)),
)
def test_random_streams_match_real_sdk(items: list[Any], tools: list | None) -> None:
    check(items, input_tools=tools)


@pytest.mark.parametrize("logprobs", LOGPROBS)
def test_logprobs_match_real_sdk(logprobs: Any) -> None:
    """Every logprobs shape, on the first chunk, on a later one, on both, beside tool
    calls and content, with a finish that raises (strict tools) and one that does not."""
    opener = chunk(
        {
            "role": "assistant",
            "tool_calls": [
                {"index": 0, "id": "c", "function": {"name": "get_weather", "arguments": ""}}
            ],
        }
    )
    text = chunk({"content": "Hi"})
    frag = chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})
    end = chunk({}, "length")
    for at in ({0}, {1}, {0, 1, 2}, {2, 3}):
        items = copy.deepcopy([opener, text, frag, end])
        for i in at:
            items[i]["choices"][0]["logprobs"] = copy.deepcopy(logprobs)
        for tools in (None, STRICT):
            check(items, input_tools=tools)


def test_long_logprobs_stream_is_modelled() -> None:
    """Ordinary logprobs never send the emulation to the (quadratic) real class."""
    items = [chunk({"content": "w"}) for _ in range(50)]
    for item in items:
        item["choices"][0]["logprobs"] = {"content": [TOKEN], "refusal": None}
    assert check(items)


def test_frames_payload_invalid_marker() -> None:
    assert frames_of([GARBAGE])[0].payload is INVALID


def test_emulation_imports_no_sdk_machinery() -> None:
    import subprocess
    import sys

    code = (
        "import sys, streamscope.dialects.chat.sdk_model\n"
        "heavy = {'openai', 'httpx', 'httpx2', 'textual', 'pydantic', 'pydantic_core', 'jiter'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "items, kw",
    [
        ([chunk({"tool_calls": [{"index": "0", "function": {"arguments": "x"}}]})], {}),
        ([chunk({"tool_calls": [{"index": True, "function": {"arguments": "x"}}]})], {}),
        ([{**chunk(), "choices": [{"index": 0, "delta": {}, "logprobs": "x"}]}], {}),
        ([{**chunk(), "choices": [{"index": 0, "delta": {}, "logprobs": {"content": "x"}}]}], {}),
        ([{**chunk(), "choices": {"0": {}}}], {}),
        ([chunk({"tool_calls": [{"index": 0, "_fields_set": ["x"]}]})], {}),
        ([chunk({"audio": {"id": "a", "expires_at": "5"}})], {}),
        (FIXTURES["Q0"], {"input_tools": [{"function": {"name": "f"}}]}),
    ],
)
def test_unmodeled_shapes_fall_back(items: list[Any], kw: dict) -> None:
    frames = frames_of(items)
    with pytest.raises(Unmodeled):
        emulate(frames, **kw)
    assert sdk_result(frames, **kw) == run_real_sdk(frames, **kw)


def test_custom_calls_are_what_the_real_package_builds() -> None:
    """The snapshot holds the custom call's input concatenated; the final completion raises."""
    frames = frames_of([*CUSTOM["custom-beside-function"], DONE])
    assert check_frames(frames)
    emu = SdkEmulation()
    for f in frames[:-2]:
        emu.feed(f)
    custom, function = emu.calls()
    assert (custom.id, custom.type, custom.name, custom.arguments) == (
        "call_c",
        "custom",
        "run_sql",
        SQL,
    )
    assert (function.type, function.name, function.arguments) == (
        "function",
        "get_weather",
        WEATHER_ARGS,
    )
    got = sdk_result(frames)
    assert isinstance(got, StrategyError) and got.error.startswith("AttributeError")


# the Chat Completions samples (test_anthropic_sdk_model.py and test_responses_sdk_model.py
# take the other dialects' ones)
SAMPLES = sorted(
    p for p in (ROOT / "recordings").iterdir() if p.name != "README.md" and chat_sample(p)
)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_bundled_sample_matches_the_real_package(path: Path) -> None:
    analysis = analyze(path)
    infos = {i.exchange: i for i in analysis.exchanges}
    for stream in analysis.streams:
        info = infos.get(stream.exchange)
        frames = list(frame_source(str(path), stream.exchange))
        tools = info.tools if info else None
        fmt = info.response_format if info else None
        assert check_frames(frames, input_tools=tools, response_format=fmt), (
            f"{path.name} exchange {stream.exchange}: the emulation declined a bundled sample"
        )


def test_the_installed_openai_is_one_the_emulation_was_verified_against() -> None:
    """A new openai release must be run through these tests and added to VERIFIED_OPENAI."""
    assert openai_version() in VERIFIED_OPENAI, (
        f"openai {openai_version()} is installed; the openai-sdk emulation states it was "
        f"verified against {', '.join(VERIFIED_OPENAI)}: run "
        "tests/dialects/chat/test_sdk_model.py on it, then add it (and widen pyproject.toml's "
        "bound)"
    )


# --- keys pydantic cannot write -------------------------------------------------------
# A key holding a lone surrogate (JSON sends it as an escape, "\ud800": Python's json reads
# it, orjson refuses it) goes into the model as it was sent; the SDK's first `to_dict()`
# of a model holding it raises UnicodeEncodeError. Only a model's own keys raise (a
# chunk's, a choice's, a delta's, a tool-call entry's, a function's...), never a value or
# a key inside one.

OPENER = {
    "index": 0,
    "id": "call_1",
    "type": "function",
    "function": {"name": "f", "arguments": ""},
}


def sent(*items: Any) -> list[Any]:
    """Chunk dicts as the stdlib writes them: each lone surrogate as its escape."""
    return [json.dumps(i) if isinstance(i, dict) else i for i in items]


def opening(**kw: Any) -> dict:
    """The opening chunk: a tool call begun, with a key given by `kw` in one of its objects."""
    entry = {**OPENER, "function": kw.get("function", OPENER["function"])}
    entry = kw.get("entry", lambda e: e)(entry)
    delta = kw.get("delta", lambda d: d)({"role": "assistant", "tool_calls": [entry]})
    out = chunk(delta)
    out["choices"] = [kw.get("choice", lambda c: c)(out["choices"][0])]
    return kw.get("top", lambda c: c)(out)


FRAGMENT = {"index": 0, "function": {"arguments": "{}"}}
LATER = chunk({"tool_calls": [FRAGMENT]})


RAISES = {
    # the opening chunk: `chunk.to_dict()` writes every model in it
    "top": ([opening(top=with_key)], 1),
    "choice": ([opening(choice=with_key)], 1),
    "delta": ([opening(delta=with_key)], 1),
    "entry": ([opening(entry=with_key)], 1),
    "function": ([opening(function=with_key(OPENER["function"]))], 1),
    "function_call": ([chunk({"function_call": with_key({"name": "f"})})], 1),
    "no-choices": ([with_key({"object": "chat.completion.chunk"})], 1),
    # later: `choice.delta.to_dict()`, and a new choice's `choice.model_dump()`
    "later-delta": ([opening(), chunk(with_key({"content": "x"}))], 2),
    "later-entry": ([opening(), chunk({"tool_calls": [with_key(FRAGMENT)]})], 2),
    "later-function": (
        [
            opening(),
            chunk({"tool_calls": [{"index": 0, "function": with_key({"arguments": "{}"})}]}),
        ],
        2,
    ),
    "later-new-choice": (
        [opening(), {**LATER, "choices": [with_key({"index": 1, "delta": {"content": "x"}})]}],
        2,
    ),
    "later-new-choice-no-delta": (
        [opening(), {**LATER, "choices": [with_key({"index": 1, "delta": None})]}],
        2,
    ),
    "after-a-plain-fragment": ([opening(), LATER, chunk(with_key({}))], 3),
}

RAISES_FIRST = {
    # which key raises: a model's fields (nested models first) before its extras, in
    # the order sent; a run of surrogates is one error
    "function-before-entry-before-delta": (
        opening(
            delta=lambda d: with_key(d, "\udc01"),
            entry=lambda e: with_key(e, "\udc02"),
            function=with_key(OPENER["function"], "\udc03"),
        ),
        "\udc03",
    ),
    "delta-before-choice-before-top": (
        opening(
            top=lambda c: with_key(c, "\udc01"),
            choice=lambda c: with_key(c, "\udc02"),
            delta=lambda d: with_key(d, "\udc03"),
        ),
        "\udc03",
    ),
    "after-other-keys": (opening(delta=lambda d: {**d, "é" + LONE + "x": 1}), "é" + LONE + "x"),
    "a-run": (opening(delta=lambda d: with_key(d, "ab\udc03\ud800x")), "ab\udc03\ud800x"),
    "two-runs": (opening(delta=lambda d: with_key(d, "\udfff!\ud800")), "\udfff!\ud800"),
}

WRITTEN = {
    # nothing writes these keys: the SDK does not raise
    "later-top": [opening(), with_key(LATER)],
    "later-choice": [opening(), {**LATER, "choices": [with_key(LATER["choices"][0])]}],
    "in-a-value": [opening(delta=lambda d: {**d, "x": {LONE: 1}, "y": [{LONE: 1}]})],
    "in-a-custom-call": [chunk({"tool_calls": [{"index": 0, "custom": {LONE: "x"}}]})],
    "in-arguments-as-object": [
        opening(function={"name": "f", "arguments": {LONE: 1}}),
    ],
    "values": [
        chunk({"role": "assistant", "content": "cut " + LONE}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": LONE,
                        "type": "function",
                        "function": {"name": "f" + LONE, "arguments": '{"a": "' + LONE},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}),
        chunk({}, "tool_calls", system_fingerprint=LONE),
    ],
    "a-pair": [opening(delta=lambda d: with_key(d, "\ud83d\ude00"))],
    "not-a-chunk": [with_key({"object": "chat.completion"}), opening()],
}

# keys the emulation leaves to the real class: the SDK keeps usage and logprobs and
# writes them (or not) later
DECLINED = {
    "usage": [{**opening(), "usage": with_key({"prompt_tokens": 1})}],
    "usage-details": [
        {**opening(), "usage": {"prompt_tokens_details": with_key({"cached_tokens": 0})}}
    ],
    "later-usage": [opening(), {**LATER, "usage": with_key({"prompt_tokens": 1})}],
    "logprobs": [opening(choice=lambda c: {**c, "logprobs": with_key({"content": []})})],
    "later-logprobs-token": [
        opening(),
        {
            **LATER,
            "choices": [{**LATER["choices"][0], "logprobs": {"content": [with_key(TOKEN)]}}],
        },
    ],
    "later-logprobs-top": [
        opening(),
        {
            **LATER,
            "choices": [
                {
                    **LATER["choices"][0],
                    "logprobs": {"content": [{**TOKEN, "top_logprobs": [with_key(TOKEN)]}]},
                }
            ],
        },
    ],
}


@pytest.mark.parametrize("items, frame", RAISES.values(), ids=list(RAISES))
def test_a_key_pydantic_cannot_write_raises_where_the_sdk_writes_it(
    items: list[Any], frame: int
) -> None:
    items = sent(*items, chunk({}, "tool_calls"), DONE)
    assert check(items)
    assert run_real_sdk(frames_of(items)) == StrategyError(encode_error(), frame)


@pytest.mark.parametrize("item, key", RAISES_FIRST.values(), ids=list(RAISES_FIRST))
def test_the_key_that_raises_is_the_one_the_sdk_writes_first(item: dict, key: str) -> None:
    items = sent(item)
    assert check(items)
    assert run_real_sdk(frames_of(items)) == StrategyError(encode_error(key), 1)


@pytest.mark.parametrize("items", WRITTEN.values(), ids=list(WRITTEN))
def test_keys_and_values_the_sdk_never_writes_as_keys_do_not_raise(items: list[Any]) -> None:
    items = sent(*items, chunk({}, "tool_calls"), DONE)
    assert check(items)
    assert not isinstance(run_real_sdk(frames_of(items)), StrategyError)


@pytest.mark.parametrize("items", DECLINED.values(), ids=list(DECLINED))
def test_such_keys_in_usage_and_logprobs_fall_back(items: list[Any]) -> None:
    items = sent(*items, chunk({}, "tool_calls"), DONE)
    assert not check(items)  # (and the real class's answer is the strategy's)


def test_a_key_beside_an_earlier_choices_finish_raises_after_it() -> None:
    # the SDK handles choice 0 (its finish raises with a strict tool) before it writes
    # choice 1's delta
    later = {
        **LATER,
        "choices": [
            {"index": 0, "delta": {}, "finish_reason": "length"},
            {"index": 1, "delta": with_key({"content": "x"})},
        ],
    }
    two = {**opening(), "choices": [opening()["choices"][0], {"index": 1, "delta": {}}]}
    items = sent(two, later)
    assert check(items, input_tools=STRICT)
    got = run_real_sdk(frames_of(items), input_tools=STRICT)
    assert isinstance(got, StrategyError) and got.error.startswith("LengthFinishReasonError")
    assert check(items)
    assert run_real_sdk(frames_of(items)) == StrategyError(encode_error(), 2)


@st.composite
def keyed_stream(draw: st.DrawFn) -> list[Any]:
    items = copy.deepcopy(draw(st.lists(a_chunk(), min_size=1, max_size=6)))
    for _ in range(draw(st.integers(1, 3))):
        item = items[draw(st.integers(0, len(items) - 1))]
        if not isinstance(item, dict):
            continue
        choices = item.get("choices")
        if draw(st.integers(0, 5)) == 0 and isinstance(choices, list) and choices:
            delta = choices[0].get("delta")
            if isinstance(delta, dict):  # objects a_chunk never sends
                delta["function_call"] = {"name": "f", "arguments": ""}
        if draw(st.integers(0, 8)) == 0:
            item["usage"] = {"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}}
        put_key(draw, item)
    return sent(*items)


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(items=keyed_stream(), tools=w((4, None), (1, STRICT)))
def test_random_keys_pydantic_cannot_write_match_real_sdk(
    items: list[Any], tools: list | None
) -> None:
    check(items, input_tools=tools)


def test_an_error_where_the_emulation_declines_is_the_real_packages_apierror() -> None:
    """The fallback reports an `error` chunk as the SDK's APIError with its message (since
    openai 3.63 APIError reads the request's headers: the fallback must hand it a request)."""
    kw: dict[str, Any] = {"input_tools": [{"function": {"name": "f"}}]}
    frames = frames_of([*FIXTURES["Q0"][:1], ERROR_FRAMES[0], *FIXTURES["Q0"][1:]])
    with pytest.raises(Unmodeled):
        emulate(frames, **kw)
    assert sdk_result(frames, **kw) == StrategyError("APIError: overloaded", 2)
