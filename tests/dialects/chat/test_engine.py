"""The robust reading on every Appendix A fixture, and what the client strategies build."""

from __future__ import annotations

import pytest

from streamscope.core.calls import StrategyError
from streamscope.dialects.chat.appendix_a import ARGS, FIXTURES
from streamscope.dialects.chat.engine import StreamEngine
from streamscope.inputs.reads import Reads
from streamscope.tui.model import StreamModel

from ...helpers import frames_of, kinds, run, sse_body

PARIS = ARGS
ROME = '{"city": "Rome"}'
UTC = '{"tz": "UTC"}'

# Fixtures where the bytes allow one right answer: (id, name, arguments) per call, in order.
RIGHT = {
    "Q0": [("call_a", "get_weather", PARIS)],
    "Q1": [("call_a", "get_weather", PARIS)],
    "Q2": [("call_a", "get_weather", PARIS)],
    "Q3": [("call_a", "get_weather", PARIS)],
    "Q4": [("call_a", "get_weather", PARIS)],
    "Q22": [("call_a", "get_weather", PARIS)],
    "Q21": [("call_a", "get_weather", PARIS)],
    "Q5": [("call_a", "get_weather", PARIS)],
    "Q6": [("call_a", "get_weather", PARIS), ("call_b", "get_weather", ROME)],
    "Q19": [("call_a", "get_weather", PARIS)],
    "Q7": [("call_a", "get_weather", PARIS), ("call_b", "get_time", UTC)],
    "Q8": [("toolu_1", "read_file", '{"path": "a.txt"}')],
    "Q20": [("call_a", "get_weather", PARIS), ("call_c", "get_time", UTC)],
    "Q25": [("tooluse_1", "get_weather", PARIS), ("tooluse_2", "get_time", UTC)],
    "Q12": [("functions.list_files:0", "list_files", ' {"path": "."}')],
    "Q9": [("call_a", "get_weather", PARIS)],
    "Q10": [("call_a", "get_weather", PARIS)],
    "Q11": [("call_a", "get_weather", {"city": "Paris"})],
    "Q13": [("call_a", "get_weather", PARIS)],
    "Q14": [("", "get_weather", PARIS)],
    "Q23": [("", "get_weather", PARIS)],
    "Q15": [("call_x", "get_weather", PARIS), ("call_x", "get_time", UTC)],
    "Q16": [("call_a", "get_weather", PARIS)],
    "Q17": [("call_a", "get_weather", PARIS)],
    "Q18": [("call_a", "get_weather", PARIS)],
    "role-repeated": [("call_a", "get_weather", PARIS)],
}

# The quirk each fixture is about must be named.
NAMED = {
    "Q1": {"id-repeated", "name-repeated"},
    "Q2": {"id-repeated"},
    "Q3": {"id-empty-overwrite"},
    "Q4": {"id-empty-overwrite", "name-empty-overwrite"},
    "Q22": {"id-empty-overwrite", "name-empty-overwrite", "type-empty-or-null"},
    "Q21": {"type-empty-or-null"},
    "Q5": {"index-missing", "finish-reason-mismatch"},
    "Q6": {"index-missing"},
    "Q19": {"index-missing"},
    "Q7": {"index-reused"},
    "Q8": {"index-gap"},
    "Q20": {"index-gap"},
    "Q25": {"index-invalid"},
    "Q12": {"same-index-twice-in-chunk"},
    "Q9": {"args-resent"},
    "Q10": {"args-cumulative"},
    "Q11": {"args-not-string"},
    "Q14": {"id-missing"},
    "Q23": {"id-missing"},
    "Q24": {"id-changed"},
    "Q15": {"id-reused"},
    "Q16": {"name-fragmented"},
    "Q17": {"chunk-schema-violation"},
    "Q18": {"function-missing"},
    "role-repeated": {"role-repeated"},
}


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_robust_is_right(name):
    got = run(FIXTURES[name])
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == RIGHT[name]


@pytest.mark.parametrize("name", sorted(NAMED))
def test_quirk_is_named(name):
    assert NAMED[name] <= kinds(run(FIXTURES[name]))


def test_robust_never_invents_an_id():
    for name, chunks in FIXTURES.items():
        sent = set()
        for c in chunks:
            for choice in c["choices"]:
                for d in choice["delta"].get("tool_calls") or []:
                    if isinstance(d.get("id"), str):
                        sent.add(d["id"])
        for call in run(chunks).tool_calls:
            assert call.id == "" or call.id in sent, name


def _calls(result, strategy):
    got = result.strategies[strategy]
    assert not isinstance(got, StrategyError), got
    return [(c.id, c.name, c.arguments) for c in got]


def test_naive_loses_the_id_on_empty_strings():
    assert _calls(run(FIXTURES["Q3"]), "naive") == [("", "get_weather", PARIS)]
    assert _calls(run(FIXTURES["Q22"]), "naive") == [(None, None, PARIS)]


def test_guarded_keeps_ids_but_merges_reused_indexes():
    assert _calls(run(FIXTURES["Q4"]), "guarded") == [("call_a", "get_weather", PARIS)]
    assert _calls(run(FIXTURES["Q7"]), "guarded") == [("call_b", "get_time", PARIS + UTC)]


def test_docs_snippet_doubles_opener_arguments_and_raises_like_python():
    assert _calls(run(FIXTURES["Q5"]), "openai-docs") == [("call_a", "get_weather", PARIS + PARIS)]
    err = run(FIXTURES["Q18"]).strategies["openai-docs"]
    assert err == StrategyError("AttributeError: 'NoneType' object has no attribute 'arguments'", 1)


def test_by_id_splits_when_the_id_comes_late_and_merges_reused_ids():
    assert _calls(run(FIXTURES["Q13"]), "by-id") == [("", "get_weather", ""), ("call_a", "", PARIS)]
    assert _calls(run(FIXTURES["Q15"]), "by-id") == [("call_x", "get_time", PARIS + UTC)]


def test_differs_compares_with_robust():
    result = run(FIXTURES["Q3"])
    assert result.differs("naive") is True
    assert result.differs("guarded") is False


class ListReads(Reads):
    """Reads held in memory: one SSE event each."""

    def __init__(self, chunks: list) -> None:
        self.data = [sse_body([c], done=False) for c in chunks]

    def __len__(self) -> int:
        return len(self.data)

    def read(self, i: int) -> tuple[bytes, int | None]:
        return self.data[i], i * 1000


def test_state_at_any_frame_equals_a_replay_from_the_start():
    chunks = FIXTURES["Q7"]
    frames = frames_of(chunks)
    model = StreamModel(ListReads(chunks), every=2, thin=False)  # a copy every 2 frames
    model.build()
    assert len(model.snapshots) > 2  # copies were taken, so jumps resume from them
    for n in range(len(frames) + 1):
        fresh = StreamEngine()
        for f in frames[:n]:
            fresh.feed(f)
        state = model.at(n)
        assert [c.key() for c in state.engine.robust.calls()] == [
            c.key() for c in fresh.robust.calls()
        ]
        assert all(e.frame == n for e in state.events)
    assert [e.op for e in model.at(4).events][:1] == ["new-call"]


def test_same_id_and_name_at_two_indexes_are_two_calls():
    from streamscope.dialects.chat.appendix_a import FINISH, calls, chunk, tc

    stream = [
        chunk(calls(tc(0, "call_x", "get_weather", PARIS, "function"))),
        chunk(calls(tc(1, "call_x", "get_weather", ROME, "function"))),
        FINISH,
    ]
    got = run(stream)
    assert [(c.id, c.arguments) for c in got.tool_calls] == [("call_x", PARIS), ("call_x", ROME)]
    assert "id-reused" in kinds(got) and "index-moved" not in kinds(got)


def test_a_resent_copy_is_recognised_when_reserialised():
    from streamscope.dialects.chat.appendix_a import A1, A2, FINISH, calls, chunk, tc

    stream = [
        chunk(calls(tc(0, "call_a", "get_weather", "", "function"))),
        chunk(calls(tc(0, args=A1))),
        chunk(calls(tc(0, args=A2))),
        chunk(calls(tc(0, args='{"city":"Paris"}'))),
        FINISH,
    ]
    got = run(stream)
    assert got.tool_calls[0].arguments == PARIS
    assert "args-resent" in kinds(got)


def test_a_nested_object_that_repeats_its_prefix_is_not_taken_for_snapshots():
    from streamscope.dialects.chat.appendix_a import FINISH, calls, chunk, tc

    stream = [
        chunk(calls(tc(0, "call_a", "f", "", "function"))),
        chunk(calls(tc(0, args='{"q":'))),
        chunk(calls(tc(0, args='{"q":1}}'))),
        FINISH,
    ]
    got = run(stream)
    assert got.tool_calls[0].arguments == '{"q":{"q":1}}'
    assert "call-boundary-ambiguous" in kinds(got) and "args-cumulative" not in kinds(got)
