"""The engine's fast path (plain fragments applied in bulk) never changes an answer."""

from __future__ import annotations

import gc
import json
from itertools import pairwise

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from streamscope.core.engine import CLIENTS, OTHERS, ROBUST, SDK
from streamscope.dialects.chat.appendix_a import FIXTURES, calls, chunk, tc
from streamscope.dialects.chat.engine import StreamEngine, plain_fragment
from streamscope.dialects.chat.sdk_model import SdkEmulation
from streamscope.dialects.chat.summary import plain_summary, summarize

from ...helpers import frames_of
from ..reading import copy_carries_on

FRAGMENTS = ['{"a', '": "', "x", "yz", '"}', "[1", "{", "", " "]
TOKEN = {"token": "x", "logprob": -0.5, "bytes": [120], "top_logprobs": []}
# a plain fragment's logprobs: ordinary ones stay on the fast path, odd ones leave it
LOGPROBS = [{"content": [TOKEN], "refusal": None}, {"content": "x"}, "x", {"refusal": [1]}]


def with_logprobs(c: dict, logprobs: object) -> dict:
    c["choices"][0]["logprobs"] = logprobs
    return c


PIECES = st.one_of(
    st.builds(
        lambda i, t, lp: with_logprobs(chunk(calls(tc(i, args=t))), lp),
        st.integers(0, 2),
        st.sampled_from(FRAGMENTS),
        st.sampled_from(LOGPROBS),
    ),
    st.builds(
        lambda t, lp: with_logprobs(chunk({"content": t}), lp),
        st.sampled_from(["hi", ""]),
        st.sampled_from(LOGPROBS),
    ),
    st.builds(
        lambda i, t: chunk(calls(tc(i, args=t))), st.integers(0, 2), st.sampled_from(FRAGMENTS)
    ),
    st.builds(lambda t: chunk({"content": t}), st.sampled_from(["hi", "", "<tool_call>"])),
    st.builds(
        lambda i, k: chunk(calls(tc(i, f"call_{k}", f"fn{k}", "", "function"))),
        st.integers(0, 2),
        st.integers(0, 3),
    ),
    st.builds(lambda i: chunk(calls(tc(i, id="", args="q"))), st.integers(0, 2)),
    st.just(chunk({}, "tool_calls")),
    # a plain-looking fragment that also carries a provider error (truthy or not)
    st.builds(
        lambda i, e: chunk(calls(tc(i, args="x")), error=e),
        st.integers(0, 2),
        st.sampled_from([{"message": "boom"}, "overloaded", "", None]),
    ),
    st.sampled_from([c for chunks in FIXTURES.values() for c in chunks]),
    st.just("[DONE]"),
    st.just("not json"),
)


def analyse(chunks: list, slow: bool):
    engine = StreamEngine(1)
    engine.collect_events = slow  # collecting events takes the slow path on every frame
    for frame in frames_of(chunks):
        engine.feed(frame)
    engine.collect_events = False
    return engine.finish()


def summary_of(got: object) -> object:
    """One strategy's calls (or what it raised), as summary compares them."""
    if isinstance(got, list):
        return [c.key() + (c.fragments, c.first_frame, c.last_frame) for c in got]
    return repr(got)


def summary(result) -> tuple:
    strategies = {name: summary_of(got) for name, got in result.strategies.items()}
    anomalies = [(a.frame, a.kind, a.choice, a.index, a.count, a.message) for a in result.anomalies]
    marks = {f: list(k) for f, k in result.anomaly_frames.items()}
    return (result.content, result.ended, result.finish_reason, strategies, anomalies, marks)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=25))
def test_fast_and_slow_paths_agree(chunks):
    assert summary(analyse(chunks, slow=False)) == summary(analyse(chunks, slow=True))


def _parallel(opened: int, turns: list[tuple[int, int]], quirks: list) -> list:
    """`opened` calls opened together, then bursts of plain fragments (call, length) with
    the quirks spliced in between bursts: the shape of parallel tool use."""
    chunks: list = [chunk({"role": "assistant", "content": None})]
    chunks += [chunk(calls(tc(i, f"call_{i}", f"fn{i}", "", "function"))) for i in range(opened)]
    for k, (call, length) in enumerate(turns):
        chunks += [
            chunk(calls(tc(call % opened, args=FRAGMENTS[(k + j) % 4]))) for j in range(length)
        ]
        if quirks:
            chunks.append(quirks[k % len(quirks)])
    return chunks


QUIRKS = st.one_of(
    st.builds(lambda i: chunk(calls(tc(i, id="", args="q"))), st.integers(0, 5)),
    st.builds(lambda i: chunk(calls(tc(i, "call_x", "fx", "", "function"))), st.integers(0, 6)),
    st.builds(lambda i: chunk(calls(tc(i, args='{"r": 1}'))), st.integers(0, 5)),
    st.builds(lambda i: chunk(calls(tc(i, name="fn0"))), st.integers(0, 5)),
    st.builds(lambda t: chunk({"content": t}), st.sampled_from(["hi", ""])),
    st.just(chunk({}, "tool_calls")),
    st.just("not json"),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6),
    st.lists(st.tuples(st.integers(0, 5), st.integers(1, 4)), max_size=30),
    st.lists(QUIRKS, max_size=4),
)
def test_interleaved_parallel_calls_agree(opened, turns, quirks):
    chunks = _parallel(opened, turns, quirks)
    assert summary(analyse(chunks, slow=False)) == summary(analyse(chunks, slow=True))


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(st.integers(50, 300), st.integers(1, 7))
def test_many_calls_agree(opened, stride):
    turns = [((k * stride) % opened, 1 + k % 3) for k in range(2 * opened)]
    chunks = _parallel(opened, turns, []) + [chunk({}, "tool_calls")]
    fast, slow = analyse(chunks, False), analyse(chunks, True)
    assert summary(fast) == summary(slow)
    assert len(fast.tool_calls) == opened


def test_interleaved_switches_are_counted_and_marked():
    # three calls opened, then fragments alternating a, b, c, a, ...: each one goes back
    # to a call other than the previous delta's (the first, to a, after c's opener)
    chunks = _parallel(3, [(k, 1) for k in range(30)], []) + [chunk({}, "tool_calls")]
    result = analyse(chunks, slow=False)
    (entry,) = [a for a in result.anomalies if a.kind == "interleaved"]
    assert entry.count == 30 and entry.frame == 5
    assert entry.message == "fragments of different calls alternate (back to the call at index 0)"
    assert sorted(f for f, k in result.anomaly_frames.items() if "interleaved" in k) == list(
        range(5, 35)
    )
    assert summary(result) == summary(analyse(chunks, slow=True))


def test_a_long_run_of_fragments_is_exact():
    chunks = [chunk(calls(tc(0, "call_a", "f", "", "function")))]
    chunks += [chunk(calls(tc(0, args=str(i % 10)))) for i in range(500)]
    chunks += [chunk({}, "tool_calls")]
    fast, slow = analyse(chunks, False), analyse(chunks, True)
    assert summary(fast) == summary(slow)
    (call,) = fast.tool_calls
    assert call.fragments == 501 and call.last_frame == 501


def test_a_copy_taken_mid_run_continues_exactly():
    # the replay keeps engine copies: one taken while interleaved fragments are pending
    # must read on as the engine it was copied from, and leave that engine unchanged, the
    # two fed different frames after it (copy on write: they share the calls until then)
    chunks = _parallel(3, [(k % 3 + k // 7, 1 + k % 3) for k in range(12)], [])
    chunks += [chunk(calls(tc(1, id="", args="q"))), chunk({}, "tool_calls")]
    frames = frames_of(chunks)
    for cut in range(len(frames) + 1):
        copy_carries_on(StreamEngine, frames, cut)


def test_a_provider_error_beside_a_plain_fragment_is_reported():
    # the fragment is plain in every other way: the error must not ride the fast path
    chunks = [chunk(calls(tc(0, "call_a", "f", "", "function")))]
    chunks += [chunk(calls(tc(0, args="{"))), chunk(calls(tc(0, args='"a"')))]
    chunks += [chunk(calls(tc(0, args=": 1}")), error={"message": "boom"})]
    fast = analyse(chunks, slow=False)
    assert [a.kind for a in fast.anomalies if a.kind == "provider-error"] == ["provider-error"]
    assert fast.ended == "error"
    assert summary(fast) == summary(analyse(chunks, slow=True))


LONE = {"\ud800": 1}  # a key pydantic cannot write: the SDK raises where it writes it


def _sent(c: dict) -> str:
    return json.dumps(c)  # (the stdlib writes the lone surrogate as its escape)


def test_a_key_the_sdk_cannot_write_never_rides_the_fast_path():
    opener = chunk(calls(tc(0, "call_a", "f", "", "function")))
    marked = {**TOKEN, **LONE}
    hiding = [
        chunk(calls({"index": 0, "function": {"arguments": "x", **LONE}})),
        chunk(calls({"index": 0, "function": {"arguments": "x"}, **LONE})),
        chunk({"content": "x", **LONE}),
        # logprobs the snapshot keeps, and writes at the end
        with_logprobs(chunk({"content": "x"}), {"content": [marked]}),
        with_logprobs(
            chunk(calls(tc(0, args="x"))), {"content": [{**TOKEN, "top_logprobs": [marked]}]}
        ),
        with_logprobs(chunk({"content": "x"}), {"content": [], **LONE}),
    ]
    for c in hiding:
        frames = frames_of([_sent(c)])
        assert plain_fragment(frames[0].payload) is None, c
        chunks = [opener, chunk({"content": "hi"}), _sent(c), chunk({}, "tool_calls")]
        assert summary(analyse(chunks, slow=False)) == summary(analyse(chunks, slow=True))
    # a later chunk's own keys the SDK never writes: such a frame may stay plain
    frames = frames_of([_sent({**chunk(calls(tc(0, args="x"))), **LONE})])
    assert plain_fragment(frames[0].payload) == (0, "x")


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            PIECES,
            st.builds(lambda i, t: chunk(calls(tc(i, args=t))), st.integers(0, 12), st.text()),
            st.builds(lambda t: chunk({"content": t}), st.text()),
        ),
        max_size=12,
    )
)
def test_the_replay_summary_of_a_plain_frame_is_summarize(chunks):
    # the replay keeps only a plain frame's fragment and builds its line when shown
    for frame in frames_of(chunks):
        plain = plain_fragment(frame.payload)
        if plain is not None:
            assert plain_summary(*plain) == summarize(frame)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(PIECES, st.builds(lambda t: chunk({"content": t}), st.text(max_size=3))),
        max_size=30,
    ),
    st.lists(st.tuples(st.integers(0, 30), st.booleans()), max_size=8),
)
def test_copies_taken_anywhere_read_on_exactly(chunks, copies):
    # the replay copies an engine every K frames and reads on from any copy: the text the
    # copies share (frozen chunks) must never change what either side reads
    frames = frames_of(chunks)
    at = {cut: keep_copy for cut, keep_copy in copies}
    engine = StreamEngine(1)
    for i, frame in enumerate(frames):
        if i in at:
            twin = engine.copy()
            engine = twin if at[i] else engine
        engine.feed(frame)
    assert summary(engine.finish()) == summary(analyse(chunks, slow=True))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(PIECES, st.builds(lambda t: chunk({"content": t}), st.text(max_size=3))),
        max_size=30,
    ),
    st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["copy", "twin", "seal"])), max_size=8),
)
def test_the_calls_shown_at_each_frame_are_the_calls_made_afresh(chunks, steps):
    # a frame's calls are the Calls last shown with the changed ones made again
    # (core.calls.show_dirty); across copies and seals they must be each slot's call now
    at = dict(steps)
    engine = StreamEngine(1)
    for i, frame in enumerate(frames_of(chunks)):
        if at.get(i) == "seal":
            engine.seal()
        elif i in at:
            twin = engine.copy()
            engine = twin if at[i] == "twin" else engine
        engine.feed(frame)
        got = engine.strategy_calls()
        robust = engine._robust
        assert got["robust"] == [s.to_call() for s in robust.slots()], i
        for strategy in engine.others:
            if strategy.error is None:
                assert got[strategy.name] == [s.to_call() for s in strategy.slots], i
        if isinstance(got["openai-sdk"], list):  # the SDK's snapshot, as fed afresh
            assert got["openai-sdk"] == _sdk_afresh(frames_of(chunks)[: i + 1]), i


def _sdk_afresh(frames: list) -> list:
    sdk = SdkEmulation()
    for frame in frames:
        sdk.feed(frame)
    return sdk.calls()


def test_copies_across_chunks_of_calls_show_each_frame_as_fed_afresh():
    # 700 calls, each in one chunk, some of them growing later: the lists and maps of
    # calls a copy shares are held in chunks of 256 (core/shared.py); copies and seals
    # every few frames, each side fed on, must show what a fresh reading shows
    chunks = [chunk({"role": "assistant", "content": None})]
    for k in range(700):
        chunks.append(chunk(calls(tc(k, f"call_{k}", "f", "{", "function"))))
        if k % 5 == 0:
            chunks.append(chunk(calls(tc(k - k % 250, args=str(k)))))
    chunks.append(chunk({}, "tool_calls"))
    frames = frames_of(chunks)
    engine, kept = StreamEngine(1), []
    for i, frame in enumerate(frames):
        if i % 37 == 0:
            kept.append((i, engine.copy()))
        if i % 53 == 0:
            engine.seal()
        engine.feed(frame)
        if i % 97 == 0 or i == len(frames) - 1:
            engine.seal()
            assert engine.strategy_calls() == _fresh_calls(frames[: i + 1]), i
    for i, copy in kept[::4]:  # each copy shows its frame, then reads on as the engine did
        assert copy.strategy_calls() == _fresh_calls(frames[:i]), i
        for frame in frames[i:]:
            copy.feed(frame)
        assert copy.strategy_calls() == _fresh_calls(frames), i


def _fresh_calls(frames: list) -> dict:
    engine = StreamEngine(1)
    for frame in frames:
        engine.feed(frame)
    return engine.strategy_calls()


def test_copies_share_the_text_before_them():
    # 1,000 fragments of one call, a copy every 100 frames: each copy holds a few chunks
    # (one per copy before it), the same string objects as the copies before it, never a
    # list of every fragment nor the whole text again
    chunks = [chunk({"role": "assistant", "content": None})]
    chunks += [chunk(calls(tc(0, "call_a", "f", "", "function")))]
    chunks += [chunk(calls(tc(0, args=f"{i % 10}"))) for i in range(1000)]
    chunks += [chunk({"content": "x"})] * 300
    engine, copies = StreamEngine(1), []
    for frame in frames_of(chunks):
        engine.feed(frame)
        if frame.number % 100 == 0:
            copies.append(engine.copy())
    slots = [c._robust.choices[0].calls[0] for c in copies]
    for k, slot in enumerate(slots):
        assert len(slot.parts) <= k + 2
    for before, after in pairwise(slots):  # a copy's chunks begin with the last copy's
        assert all(a is b for a, b in zip(after.parts, before.parts, strict=False))
    sdk = [c.sdk._choices[0].tools[0].fn.arguments for c in copies]
    assert len(sdk[-1].parts) <= len(copies) + 1
    assert all(a is b for a, b in zip(sdk[-1].parts, sdk[-2].parts, strict=False))
    content = [c._robust.choices[0].content for c in copies]
    assert len(content[-1]) <= 4
    assert "".join(content[-1]) == "x" * (1300 - 1002)  # the last copy: after frame 1300
    assert copies[-1]._robust.calls()[0].arguments == "".join(f"{i % 10}" for i in range(1000))


def _whole(chunks: list, tools: list | None, done: bool) -> tuple:
    engine = StreamEngine(1, tools)
    for frame in frames_of(chunks):
        engine.feed(frame)
    whole = engine.finish(expect_done=done)
    anomalies = [(a.frame, a.kind, a.choice, a.index, a.count, a.message) for a in whole.anomalies]
    return whole, anomalies


def _part(chunks: list, tools: list | None, part: str) -> StreamEngine:
    engine = StreamEngine(1, tools, part=part)
    for frame in frames_of(chunks):
        engine.feed(frame)
    return engine


TOOLS = [
    None,
    [{"type": "function", "function": {"name": "fn0"}}],
    [{"type": "function", "function": {"name": "fn1", "strict": True}}],
]
# random pieces, or parallel calls interleaved with quirks
STREAMS = st.one_of(
    st.lists(PIECES, max_size=25),
    st.builds(
        _parallel,
        st.integers(1, 6),
        st.lists(st.tuples(st.integers(0, 5), st.integers(1, 4)), max_size=30),
        st.lists(QUIRKS, max_size=4),
    ),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(STREAMS, st.sampled_from(TOOLS), st.booleans())
def test_the_parts_of_an_engine_answer_as_the_whole(chunks, tools, done):
    """An engine of robust and the anomaly rules alone reads the same calls and files the
    same anomalies, to the message and count, as the whole engine; one of the client
    strategies alone builds (or raises) what they build in the whole engine. The
    minimiser reads candidates in these two parts."""
    whole, anomalies = _whole(chunks, tools, done)
    robust = _part(chunks, tools, ROBUST)
    calls_, _ = robust.end(expect_done=done)
    got = [(a.frame, a.kind, a.choice, a.index, a.count, a.message) for a in robust.log.entries()]
    assert ([c.key() for c in calls_], got) == ([c.key() for c in whole.tool_calls], anomalies)
    want = summary(whole)[3]
    clients = _part(chunks, tools, OTHERS).others_at_end()
    assert want == {
        name: summary_of(got) for name, got in {"robust": whole.tool_calls, **clients}.items()
    }
    # the client strategies in two parts: the four, and the SDK emulation
    four = _part(chunks, tools, CLIENTS).others_at_end()
    sdk = _part(chunks, tools, SDK).others_at_end()
    assert list(sdk) == ["openai-sdk"] and "openai-sdk" not in four
    assert want == {
        name: summary_of(got) for name, got in {"robust": whole.tool_calls, **four, **sdk}.items()
    }


def test_a_part_of_an_engine_cannot_finish():
    for part in (ROBUST, OTHERS, CLIENTS, SDK):
        with pytest.raises(ValueError, match=r"cannot finish: call end\(\) or others_at_end\(\)"):
            StreamEngine(1, part=part).finish()
    with pytest.raises(ValueError, match="part is one of"):
        StreamEngine(1, part="openai-sdk")


@settings(max_examples=200, deadline=None)
@given(STREAMS)
# two calls whose fragments alternate within one bulk step: each call's last frame is kept
@pytest.mark.slow
@example(
    [chunk(calls(tc(i, f"call_{i}", "f", "", "function"))) for i in range(2)]
    + [chunk(calls(tc(i % 2, args="x"))) for i in range(6)]
)
def test_bulk_then_feed_is_feed(chunks):
    """A caller that offers the plain fragments to `bulk` and feeds a frame only where
    bulk stops (the minimiser) gets feed's answers, to the message and mark."""
    frames = frames_of(chunks)
    plains = [plain_fragment(f.payload) for f in frames]
    engine = StreamEngine(1)
    i = 0
    while i < len(frames):
        taken = engine.bulk(i + 1, plains, i)
        if not taken:
            engine.feed(frames[i], plains[i])
        i += taken or 1
    assert summary(engine.finish()) == summary(analyse(chunks, slow=False))


def test_bulk_takes_what_feed_takes_in_bulk():
    # one call opened, then plain fragments: the first goes through feed, the rest in bulk
    chunks = [chunk(calls(tc(0, "call_a", "f", "", "function")))]
    chunks += [chunk(calls(tc(0, args=t))) for t in ['{"a', '": ', "1", "}", "{"]]
    frames = frames_of(chunks)
    plains = [plain_fragment(f.payload) for f in frames]
    engine = StreamEngine(1)
    assert engine.bulk(2, plains, 1) == 0  # nothing accepted yet
    engine.feed(frames[0])
    engine.feed(frames[1])  # the first fragment of the call since its opener
    # three taken; it stops at "{", which may start a re-sent value: feed reads that one
    assert engine.bulk(3, plains, 2) == 3 and engine.frames == 5
    assert engine.bulk(6, plains, 5) == 0 and engine.bulk(1, [None]) == 0


@pytest.mark.slow
def test_an_engine_is_freed_as_soon_as_it_is_dropped():
    """No reference cycle: a dropped engine goes at once, not at the cyclic collector's
    next pass (which also walks everything else alive: the minimiser drops hundreds)."""
    chunks = _parallel(3, [(k, 2) for k in range(9)], [chunk(calls(tc(1, id="", args="q")))])
    gc.collect()
    gc.disable()
    try:
        for tools in TOOLS:
            engine = StreamEngine(1, tools)
            for frame in frames_of(chunks + [chunk({}, "tool_calls")]):
                engine.feed(frame)
            engine.copy().finish()
            engine.finish()
            del engine
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=25))
def test_an_engine_without_marks_files_the_same_anomalies(chunks):
    """marks=False (the minimiser's engines) only leaves the per-frame marks out."""
    marked, unmarked = StreamEngine(1), StreamEngine(1, marks=False)
    for frame in frames_of(chunks):
        marked.feed(frame)
        unmarked.feed(frame)
    got, want = unmarked.finish(), marked.finish()
    assert got.anomaly_frames == {}
    assert summary(got)[:-1] == summary(want)[:-1]  # all but the marks
