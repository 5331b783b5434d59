"""The minimiser's judge rejects some candidates without running the engine: it must give
the answer the full signature gives, on every candidate of every stream."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from streamscope.core.calls import StrategyError, Unmodeled
from streamscope.dialects import CHAT
from streamscope.dialects.chat.appendix_a import calls, chunk, tc
from streamscope.dialects.chat.engine import STRATEGY_NAMES, StreamEngine
from streamscope.dialects.chat.facts import NEEDS as _NEEDS
from streamscope.dialects.chat.facts import calls_file, surely
from streamscope.dialects.chat.facts import docs_differs as _docs_differs
from streamscope.dialects.chat.facts import docs_raise as _docs_raise
from streamscope.dialects.chat.facts import parsed as _parsed
from streamscope.dialects.chat.minimize import Signature, _Tester, signature

from .dialects.chat.test_fast_path import PIECES, analyse, summary
from .helpers import frames_of


def _without(c: dict, key: str) -> dict:
    return {k: v for k, v in c.items() if k != key}


# Beyond the fast path's pieces: what the judge's rules read (names, empty fields,
# finishes, errors, schema problems, custom calls, deltas with no index).
MORE = st.one_of(
    st.builds(lambda i: chunk(calls(tc(i, name=""))), st.integers(0, 2)),
    st.builds(lambda i: chunk(calls(tc(i, id=None, args="q"))), st.integers(0, 2)),
    st.builds(lambda i: chunk(calls(tc(i, args="x"))), st.integers(0, 2)),
    st.builds(
        lambda i, k: chunk(calls(tc(i, f"call_{k}", args="{}", type="function"))),
        st.integers(0, 2),
        st.integers(0, 3),
    ),
    st.builds(
        lambda key: _without(chunk(calls(tc(0, "call_0", "fn0", "", "function"))), key),
        st.sampled_from(["id", "created", "model", "object", "choices"]),
    ),
    st.sampled_from(
        [
            chunk({}, "stop"),
            chunk({}, ""),
            chunk({"tool_calls": [{"function": {"arguments": "{}"}}]}),
            chunk(
                {"tool_calls": [{"index": 0, "id": "c", "type": "custom", "custom": {"name": "t"}}]}
            ),
            chunk({"tool_calls": [{"index": 0, "custom": {"name": "", "input": "x"}}]}),
            {"error": {"message": "overloaded"}},
            {**chunk({}, "stop"), "error": "late"},
            chunk({"role": "assistant"}),
            {**chunk({}), "choices": []},
            {**chunk({}), "choices": None},
            {**chunk({}), "choices": [{"index": 0, "finish_reason": "stop"}]},  # no delta
            "3",
            "[]",
        ]
    ),
)
STREAMS = st.lists(st.one_of(PIECES, MORE), max_size=14)


# Tool call deltas of every shape Robust._target routes: indexes missing, repeated,
# skipped, not integers; ids shared between indexes or changing; names that differ;
# arguments empty, null, text, values; custom calls; two choices; two deltas in a chunk.
_OMIT = object()


def _delta(index, id, body, name, args, custom) -> dict:
    """A tool call delta with only the keys not _OMIT; `body` {} gets name and arguments
    (a custom call's input)."""
    key = "custom" if custom else "function"
    if isinstance(body, dict):
        fields = (("name", name), ("input" if custom else "arguments", args))
        body = {k: v for k, v in fields if v is not _OMIT}
    out = {"index": index, "id": id, key: body}
    return {k: v for k, v in out.items() if v is not _OMIT}


ENTRY = st.builds(
    _delta,
    st.sampled_from([0, 1, 2, 3, None, _OMIT, "1", True, -1]),
    st.sampled_from(["call_0", "call_1", "call_2", "", None, _OMIT]),
    st.sampled_from([{}, None, _OMIT]),
    st.sampled_from(["fn0", "fn1", "", None, _OMIT]),
    st.sampled_from(["", None, "x", "{}", 3, "1", '"a"', " ", _OMIT]),
    st.booleans(),
)
CALLS = st.builds(
    lambda entries, choice, finish: {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": choice, "delta": {"tool_calls": entries}, "finish_reason": finish}],
    },
    st.lists(ENTRY, min_size=1, max_size=2),
    st.sampled_from([0, 0, 1, None, True, -1]),
    st.sampled_from([None, "tool_calls"]),
)


def _texts(chunks: list) -> list[str]:
    return [c if isinstance(c, str) else orjson.dumps(c).decode() for c in chunks]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(STREAMS, st.lists(st.booleans(), max_size=14), st.booleans())
def test_the_judge_agrees_with_the_full_signature(chunks, keep, done):
    """For a random stream and a random candidate of it (frames dropped), the judge's
    answer is the full signature's; what it calls sure is in the candidate's signature,
    and a kind of _NEEDS in it is one the judge said was possible."""
    frames = _texts(chunks)
    candidate = [f for f, k in zip(frames, keep + [True] * len(frames), strict=False) if k]
    target = signature(frames, expect_done=done)
    judge = _Tester(target, None, done, 10**6)
    got = signature(candidate, expect_done=done)
    assert judge(candidate) == (got == target)
    filed, may = surely(judge.facts(set(candidate)))
    assert filed <= got.kinds
    assert got.kinds.intersection(_NEEDS) <= may


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(STREAMS, STREAMS)
def test_the_judge_agrees_on_unrelated_targets(chunks, other):
    """The target from one stream, the candidate another: the rejections the judge makes
    are tested against kinds the candidate does not share."""
    target = signature(_texts(other))
    candidate = _texts(chunks)
    assert _Tester(target, None, True, 10**6)(candidate) == (signature(candidate) == target)


def test_a_rejected_candidate_costs_no_engine_run_but_counts_against_the_budget():
    frames = _texts(
        [chunk(calls(tc(0, "call_a", "fn", "{}", "function"))), chunk({}, "tool_calls")]
    )
    judge = _Tester(signature(frames), None, True, 10**6)
    assert not judge.target.kinds
    assert not judge(frames[:1])  # no frame can set a finish_reason
    assert not judge(["not json", *frames])  # a frame that is not JSON
    assert judge.engine_runs == 0 and judge.runs == 2
    assert judge(frames) and judge.engine_runs == 1


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(STREAMS)
def test_the_hints_change_nothing(chunks):
    """The judge hands the engine each payload's plain fragment and schema problem,
    worked out once per text: the same answers, to the message, as the engine's own."""
    hinted = StreamEngine(1)
    for frame in frames_of(chunks):
        got = _parsed(frame.data, frame.payload)
        hinted.feed(frame, got.plain, got.problem)
    assert summary(hinted.finish()) == summary(analyse(chunks, slow=False))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(CALLS, CALLS, PIECES, MORE), max_size=10))
# a delta with no index, id nor name goes to the latest call: its arguments are that call's
@example([chunk(calls(tc(0, "call_0", "fn0", ""))), chunk(calls(tc(args="x")))])
# an id routes a delta at another index to the call that carries it
@example([chunk(calls(tc(0, "call_0", "fn0", ""))), chunk(calls(tc(1, "call_0", args="x")))])
# a new id, or a new name, once the arguments are complete JSON starts another call at
# the index: "1" and '"a"' each parse, their concatenation does not
@example([chunk(calls(tc(0, "call_0", "fn0", "1"))), chunk(calls(tc(0, "call_1", args='"a"')))])
@example([chunk(calls(tc(0, name="fn0", args="1"))), chunk(calls(tc(0, name="fn1", args='"a"')))])
# an empty id or name is "" for the docs snippet and for robust alike: the same calls
@example([chunk(calls(tc(0, "", "fn0", ""))), chunk(calls(tc(0, args="x")))])
@example([chunk(calls(tc(0, "call_0", "", ""))), chunk(calls(tc(0, args="x")))])
# the docs snippet reads a chunk's first choice alone: here its call holds "yy" as robust's
@pytest.mark.slow
@example(
    [
        chunk(calls(tc(0, "call_a", "f", "y"))),
        {
            **chunk({}),
            "choices": [{"index": 1, "delta": {}}, {"index": 0, "delta": calls(tc(0, args="y"))}],
        },
    ]
)
def test_what_the_judge_follows_of_the_calls_is_filed(chunks):
    """The kinds the judge's following of calls calls sure (index-gap, name-missing,
    args-empty, args-invalid-json) and each frame's forced kinds are in the stream's
    signature."""
    frames = _texts(chunks)
    judge = _Tester(signature(frames), None, True, 10**6)
    got = signature(frames).kinds
    assert calls_file(judge.facts(frames)) <= got
    assert surely(judge.facts(set(frames)))[0] <= got
    whole = signature(frames)
    docs_raised = any(name == "openai-docs" for name, _ in whole.raises)
    if _docs_raise(judge.facts(frames)):  # the docs snippet surely raised
        assert docs_raised
    if _docs_differs(judge.facts(frames)):  # it surely raised or built other calls
        assert docs_raised or "openai-docs" in whole.differs


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(STREAMS, st.booleans())
def test_the_signature_is_what_a_finished_engine_reports(chunks, done):
    """signature() reads the end rules and the clients without finishing the engine:
    the same kinds, differences and raises as a whole engine's StreamResult, the real SDK
    answering where its emulation declines the shape (as inspect's driver runs it)."""
    frames = _texts(chunks)
    engine = StreamEngine(1)
    for frame in frames_of(chunks):
        engine.feed(frame)
    result = engine.finish(expect_done=done)
    if isinstance(result.strategies["openai-sdk"], Unmodeled):
        result.strategies["openai-sdk"] = CHAT.real_answer(frames_of(chunks), None, None)
    want = Signature(
        frozenset(a.kind for a in result.anomalies if a.severity in ("error", "warning")),
        frozenset(n for n in STRATEGY_NAMES if result.differs(n)),
        frozenset(
            (
                n,
                got.error.split(":", 1)[0]
                if isinstance(got, StrategyError)
                else type(got).__name__,
            )
            for n, got in result.strategies.items()
            if not isinstance(got, list)
        ),
    )
    assert signature(frames, expect_done=done) == want
