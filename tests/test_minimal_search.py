"""The searches `--minimal` runs on a long stream (core.minimal), and what they cost: a
level's keys tried one by one, the suffix left alone when it would keep about as much as
the prefix, a candidate failed as soon as its robust reading files a kind the target
lacks, and one round of searches (a second judged it all again to find, as a rule,
nothing more)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.anomalies import AnomalyLog
from streamscope.core.minimal import narrowed, one_by_one
from streamscope.dialects import dialect
from streamscope.export.minimize_events import _Judge, minimize_events

from .test_minimize_events_judge import _anthropic_blocks


@settings(max_examples=200, deadline=None)
@given(size=st.integers(0, 24), data=st.data())
def test_one_by_one_keeps_exactly_what_a_monotone_test_needs_one_candidate_an_item(size, data):
    items = list(range(size))
    needed = set(data.draw(st.lists(st.sampled_from(items), unique=True) if items else st.just([])))
    asked: list[list[int]] = []

    def test(kept: list[int]) -> bool:
        asked.append(kept)
        return needed <= set(kept)

    assert one_by_one(items, test) == sorted(needed)
    assert len(asked) <= size + 1


def test_a_finding_in_the_middle_is_not_looked_for_in_a_suffix():
    """The finding at frame 500 needs every frame before it: the prefix is found, and a
    suffix that takes the finding in would keep as many frames, so none is asked."""
    n, seed = 1000, {0, 500, 998, 999}
    asked: list[list[int]] = []

    def test(keep: list[int]) -> bool:
        asked.append(keep)
        return set(range(500)) <= set(keep)

    got = narrowed(n, seed, test, aim=(500, 500))
    assert got == sorted(seed | set(range(500)))
    suffixes = [keep for keep in asked if keep != sorted(seed) and 1 not in keep]
    assert not suffixes, "a suffix was searched"
    assert len(asked) <= 6


def test_a_finding_that_needs_the_end_is_found_in_a_suffix():
    n, seed = 1000, {0, 900, 998, 999}

    def test(keep: list[int]) -> bool:
        return set(range(900, 1000)) <= set(keep)

    assert narrowed(n, seed, test, aim=(900, 900)) == sorted(seed | set(range(900, 1000)))


def test_a_log_tells_what_was_filed_since():
    log = AnomalyLog()
    log.add("id-missing", 3, "no id", 0, 0)
    log.add("name-missing", 4, "no name", 0, 0)
    log.add("id-missing", 5, "no id", 0, 0)  # (a recurrence: no new entry)
    assert log.filed() == 2
    assert [a.kind for a in log.since(1)] == ["name-missing"]
    assert list(log.since(2)) == []


def _without(frames, key, every):
    """`frames` with `key` gone from each frame `every` picks (a field search's candidate)."""
    out = []
    for (name, data), drop in zip(frames, every, strict=True):
        tree = json.loads(data)
        if drop and isinstance(tree, dict):
            tree.pop(key, None)
        out.append((name, json.dumps(tree)))
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_long_candidate_failed_early_is_failed_by_the_whole_pass_too(data):
    """A candidate's robust reading stops at the first kind its target lacks: what it
    answers is what one whole pass answers, on candidates of many frames that a search
    tries (a block's fragments dropped, which keeps the signature; a frame dropped or a
    key gone from some frames, which mostly does not)."""
    told, frames = dialect("anthropic-messages"), _anthropic_blocks(12, 6)
    # a delta for a block never started, mid-stream: the target files an error before the
    # end, which a candidate that keeps it must not be failed for
    stray = {"type": "content_block_delta", "index": 40, "delta": {"partial_json": "x"}}
    frames.insert(20, ("content_block_delta", json.dumps(stray)))
    judge = _Judge(told, None, True, 10**9)
    judge.aim(frames)
    fragments = data.draw(st.sets(st.integers(0, 11)))  # the blocks whose fragments go
    dropped = data.draw(st.sets(st.integers(0, len(frames) - 1), max_size=2))
    candidate = [
        (name, text)
        for at, (name, text) in enumerate(frames)
        if at not in dropped
        and not (name == "content_block_delta" and json.loads(text)["index"] in fragments)
    ]
    key = data.draw(st.sampled_from([None, "index", "content_block", "delta", "type"]))
    if key is not None:
        every = data.draw(st.lists(st.booleans(), min_size=len(candidate), max_size=len(candidate)))
        candidate = _without(candidate, key, every)
    assert judge.in_parts(candidate) == (judge.signature(candidate) == judge.target)


def _counting_feeds(monkeypatch, told) -> list[int]:
    """[how many frames the dialect's engine is fed from now on] (every part of the
    judge reads through it)."""
    engine = type(told.engine(1, None, marks=False))
    fed = [0]
    feed = engine.feed

    def counted(self, frame):
        fed[0] += 1
        return feed(self, frame)

    monkeypatch.setattr(engine, "feed", counted)
    return fed


def test_a_long_stream_is_searched_within_a_dozen_and_a_half_analyses(monkeypatch):
    """300 Anthropic tool blocks (1,503 frames), the middle one cut short: every frame any
    part of the judge reads counts. A second round of searches and ddmin over a level's
    keys took it to about 20 analyses."""
    told, frames = dialect("anthropic-messages"), _anthropic_blocks(300, 150)
    fed = _counting_feeds(monkeypatch, told)
    got = minimize_events(frames, told, told.shape)
    monkeypatch.undo()
    judge = _Judge(told, None, True, 10**9)
    judge.aim(frames)
    assert judge.signature(got) == judge.target
    assert len(got) <= 310
    assert fed[0] <= 15 * len(frames), f"{fed[0] / len(frames):.1f} analyses"


def test_a_key_every_event_carries_is_tried_in_one_candidate_on_a_short_stream(monkeypatch):
    """A real 33-event Responses stream (a HAR): its events' keys were searched by ddmin's
    halves of every frame's keys, 185,042 events fed to the engine (1.7 s for a 28 KB
    file). A key tried from every event at once first (`sequence_number`, `obfuscation`)
    takes it to about 52,000, and the minimal stream is no bigger."""
    from streamscope.export.fixtures import export

    told = dialect("openai-responses")
    fed = _counting_feeds(monkeypatch, told)
    path = "tests/fixtures/real/responses-message-before-call.har"
    got = export(path, "recording", minimal=True)
    assert got.data.count(b'"chunk"') <= 4, got.data  # 33 frames -> 4
    assert fed[0] <= 80_000, f"{fed[0]} events fed"


def test_a_calls_fragments_join_into_its_first_in_one_pass(monkeypatch):
    """vercel/ai's custom tool input in 24 fragments: each join was made to the fragment
    just emptied, so a pass moved every fragment one frame back and joined one: the
    minimal stream kept 16 of the 24 input events, 102,299 events fed. Joined to the one
    that holds the text, the input is one fragment (and a "" the finding needs)."""
    from streamscope.export.fixtures import export

    fed = _counting_feeds(monkeypatch, dialect("openai-responses"))
    path = "tests/fixtures/responses/vercel-ai-custom-text-tool-index-gap.sse"
    got = export(path, "sse", minimal=True).data
    assert got.count(b"event: response.custom_tool_call_input.delta") <= 2, got
    assert b'"delta":"<main><h1>Streaming custom tool input</h1>' in got
    assert fed[0] <= 40_000, f"{fed[0]} events fed"
