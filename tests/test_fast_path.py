"""The engine's fast path (plain fragments applied in bulk) never changes an answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.appendix_a import FIXTURES, calls, chunk, tc
from streamscope.core.engine import StreamEngine

from .helpers import frames_of

FRAGMENTS = ['{"a', '": "', "x", "yz", '"}', "[1", "{", "", " "]
PIECES = st.one_of(
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


def summary(result) -> tuple:
    strategies = {
        name: [c.key() + (c.fragments, c.first_frame, c.last_frame) for c in got]
        if isinstance(got, list)
        else repr(got)
        for name, got in result.strategies.items()
    }
    anomalies = [(a.frame, a.kind, a.choice, a.index, a.count, a.message) for a in result.anomalies]
    return (result.content, result.ended, result.finish_reason, strategies, anomalies)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=25))
def test_fast_and_slow_paths_agree(chunks):
    assert summary(analyse(chunks, slow=False)) == summary(analyse(chunks, slow=True))


def test_a_long_run_of_fragments_is_exact():
    chunks = [chunk(calls(tc(0, "call_a", "f", "", "function")))]
    chunks += [chunk(calls(tc(0, args=str(i % 10)))) for i in range(500)]
    chunks += [chunk({}, "tool_calls")]
    fast, slow = analyse(chunks, False), analyse(chunks, True)
    assert summary(fast) == summary(slow)
    (call,) = fast.tool_calls
    assert call.fragments == 501 and call.last_frame == 501
