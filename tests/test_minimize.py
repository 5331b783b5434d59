"""minimize: the smallest stream that keeps a stream's signature (anomalies, differences, raises)."""

from __future__ import annotations

import gc
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis import analyze, frame_source
from streamscope.core.frames import INVALID, parse_payload
from streamscope.core.minimal import prune
from streamscope.dialects.chat.appendix_a import FIXTURES, chunk
from streamscope.dialects.chat.minimize import VOLATILE, Signature, minimize, signature
from streamscope.inputs.sniff import CHUNKS, sniff

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SAMPLES = sorted(p.name for p in RECORDINGS.iterdir() if p.suffix in (".jsonl", ".sse"))


def _sample(name: str) -> tuple[list[str], list | None, bool]:
    """Exchange 1 of a sample: its frames' data, the request's tools, expect_done."""
    path = str(RECORDINGS / name)
    fmt = sniff(path).kind
    frames = [f.data for f in frame_source(path, 1)]
    infos = [i for i in analyze(path).exchanges if i.exchange == 1]
    return frames, infos[0].tools if infos else None, fmt != CHUNKS


def _dumps(chunks: list) -> list[str]:
    return [c if isinstance(c, str) else orjson.dumps(c).decode() for c in chunks]


def _is_pruned(small: object, big: object) -> bool:
    """Is `small` `big` with some keys and list entries removed (nothing changed)?"""
    if isinstance(big, dict):
        return isinstance(small, dict) and all(
            k in big and _is_pruned(v, big[k]) for k, v in small.items()
        )
    if isinstance(big, list):
        if not isinstance(small, list):
            return False
        rest = iter(big)
        return all(any(_is_pruned(s, b) for b in rest) for s in small)
    return type(small) is type(big) and small == big


def test_every_sample_is_covered():
    assert len(SAMPLES) >= 14
    assert any(n.endswith(".sse") for n in SAMPLES)
    assert any(n.endswith(".chunks.jsonl") for n in SAMPLES)


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_fixture_is_small_and_keeps_the_signature(name):
    """Acceptance: the minimal fixture of each sample recording is at most a third of its
    frames, or at most 4 frames (beside the [DONE] it ends with, as the stream did)."""
    frames, tools, expect_done = _sample(name)
    out = minimize(frames, tools, expect_done=expect_done)
    assert signature(out, tools, expect_done) == signature(frames, tools, expect_done)
    done = frames[-1:] == ["[DONE]"]
    assert out[-1:] == frames[-1:] if done else out[-1:] != ["[DONE]"]
    body = len(out) - done
    assert body <= 4 or 3 * body <= len(frames), (len(frames), len(out))
    for data in out:  # JSON frames come back compact
        payload = parse_payload(data)
        assert payload is INVALID or data == orjson.dumps(payload).decode()


@pytest.mark.parametrize("name", SAMPLES)
def test_without_joining_frames_are_only_pruned(name):
    frames, tools, expect_done = _sample(name)
    out = minimize(frames, tools, expect_done=expect_done, join_fragments=False)
    assert signature(out, tools, expect_done) == signature(frames, tools, expect_done)
    # each output frame is an original one, in order, with keys/entries removed
    originals = iter(parse_payload(f) for f in frames)
    for data in out:
        small = parse_payload(data)
        assert any(
            (small is INVALID and big is INVALID) or _is_pruned(small, big) for big in originals
        ), data


def test_signature_of_a_sample():
    frames, tools, expect_done = _sample("alibaba-empty-id.jsonl")
    assert signature(frames, tools, expect_done) == Signature(
        kinds=frozenset({"id-empty-overwrite", "name-empty-overwrite"}),
        differs=frozenset({"naive"}),
        raises=frozenset({("openai-docs", "IndexError")}),
    )


def _noisy(chunks: list[dict]) -> list[str]:
    """The chunks with every volatile field a provider adds."""
    out = []
    for c in chunks:
        c = {
            **c,
            "system_fingerprint": "fp_1",
            "service_tier": "default",
            "obfuscation": "xyz",
            "usage": None,
        }
        c["choices"] = [{**ch, "logprobs": None} for ch in c["choices"]]
        out.append(c)
    return _dumps(out) + ["[DONE]"]


def test_volatile_fields_are_dropped_by_default_and_kept_on_request():
    frames = _noisy(FIXTURES["Q4"])
    target = signature(frames)
    assert "id-empty-overwrite" in target.kinds

    out = minimize(frames)
    assert signature(out) == target
    assert out[-1] == "[DONE]"  # (the stream ended with it)
    trees = [orjson.loads(f) for f in out[:-1]]
    for tree in trees:
        assert not {"system_fingerprint", "service_tier", "obfuscation", "usage"} & set(tree)
        assert all("logprobs" not in ch for ch in tree["choices"])
        # dropping `created` would add chunk-schema-violation: a volatile key that matters stays
        assert "created" in tree

    kept = minimize(frames, keep_fields=True)
    assert signature(kept) == target
    for tree in map(orjson.loads, kept[:-1]):
        assert {"system_fingerprint", "service_tier", "obfuscation", "usage", "created"} <= set(
            tree
        )
        assert all("logprobs" in ch for ch in tree["choices"])
    assert {"created", "usage", "logprobs", "system_fingerprint"} <= set(VOLATILE)


def _q4_with_content() -> list[str]:
    content = [chunk({"content": f"word{i} "}) for i in range(10)]
    content[0]["choices"][0]["delta"]["role"] = "assistant"
    return _dumps(content + FIXTURES["Q4"]) + ["[DONE]"]


def test_hand_made_stream_shrinks_to_the_trap():
    frames = _q4_with_content()
    assert len(frames) == 15
    out = minimize(frames)
    assert len(out) <= 3
    assert "id-empty-overwrite" in signature(out).kinds
    assert signature(out) == signature(frames)
    assert not any("word" in f for f in out)  # the clean content frames are gone


def test_deterministic():
    frames = _q4_with_content()
    assert minimize(frames) == minimize(frames)
    sample, tools, _ = _sample("openai.jsonl")
    assert minimize(sample, tools) == minimize(sample, tools)


def test_invalid_frames_stay_as_sent():
    bad = '{"choices": [{"index": 0, "delta": {"content": "cut'
    frames = _dumps([chunk({"content": "hi"}), bad, chunk({}, "stop")]) + ["[DONE]"]
    out = minimize(frames)
    assert "chunk-invalid-json" in signature(out).kinds
    assert bad in out
    assert signature(out) == signature(frames)


def test_run_budget_returns_a_valid_stream():
    frames = _q4_with_content()
    out = minimize(frames, max_runs=3)
    assert signature(out) == signature(frames)
    assert len(out) <= len(frames)


def test_chunk_logs_need_no_done():
    frames = _dumps(FIXTURES["Q10"])
    out = minimize(frames, expect_done=False)
    assert signature(out, expect_done=False) == signature(frames, expect_done=False)
    assert "args-cumulative" in signature(out, expect_done=False).kinds


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(enabled):
    """minimize pauses the cyclic collector while it runs, and leaves it as it found it,
    also when the budget runs out or the input is bad."""
    frames = _dumps(FIXTURES["Q0"])
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert minimize(frames)
        assert gc.isenabled() is enabled
        assert minimize(frames, max_runs=1)
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError):
            minimize(frames, payloads=[None])  # not one payload per frame
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def _paths(tree: object, at: tuple = ()) -> list[tuple]:
    out = []
    items = (
        tree.items()
        if isinstance(tree, dict)
        else enumerate(tree)
        if isinstance(tree, list)
        else ()
    )
    for k, v in items:
        out.append(at + (k,))
        out.extend(_paths(v, at + (k,)))
    return out


def _without(tree: object, removed: set[tuple], at: tuple = ()) -> object:
    """The definition: every entry whose path (or an ancestor's) is in `removed` left out."""
    if isinstance(tree, dict):
        return {
            k: _without(v, removed, at + (k,)) for k, v in tree.items() if at + (k,) not in removed
        }
    if isinstance(tree, list):
        return [
            _without(v, removed, at + (i,)) for i, v in enumerate(tree) if at + (i,) not in removed
        ]
    return tree


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(0, 3)
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text("ab", max_size=2)
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("abc", max_size=2), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(JSON, st.data())
def test_pruning_removes_exactly_the_paths_asked(tree, data):
    """A field step's pruning leaves out the entries asked (with what they hold), keeps
    the rest in order, and never changes the tree it prunes; the pruned tree is what its
    text parses to (the judge takes it for the parse)."""
    paths = _paths(tree)
    removed = set(data.draw(st.lists(st.sampled_from(paths), max_size=5))) if paths else set()
    before = orjson.dumps(tree)
    got = prune(tree, removed)
    assert got == _without(tree, removed)
    assert orjson.dumps(tree) == before
    parsed = parse_payload(orjson.dumps(got).decode())
    assert parsed == got and orjson.dumps(parsed) == orjson.dumps(got)  # keys in order too


@pytest.mark.slow
def test_calls_one_after_another_shrink_from_the_ends():
    """Calls opened one after another, each whole in one chunk: dropping any chunk in the
    middle opens a gap in their indexes, and ddmin alone tried every chunk before the
    last at each granularity (cubic: 20,000 calls never finished). Keeping the ends
    finds the fixture in a few candidates."""
    frames = [orjson.dumps(chunk({"role": "assistant"})).decode()]
    for i in range(3000):
        call = {"index": i, "id": f"call_{i}", "type": "function"}
        call["function"] = {"name": "f", "arguments": f'{{"i": {i}}}'}
        frames.append(orjson.dumps(chunk({"tool_calls": [call]})).decode())
    frames += [orjson.dumps(chunk({}, "tool_calls")).decode(), "[DONE]"]
    got = minimize(frames, max_runs=200)  # ddmin alone ends its budget with ~3000 frames
    assert len(got) <= 4 and signature(got) == signature(frames)


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(
    st.integers(120, 400),
    st.data(),
    st.sampled_from(["truncated", "id-empty", "no-name"]),
)
def test_a_quirk_in_the_middle_keeps_its_signature(calls, data, quirk):
    """A long stream narrowed to the frames its findings name (core.minimal.carriers),
    whatever the quirk and wherever it sits, keeps the same signature, and shrinks."""
    bad = data.draw(st.integers(0, calls - 1))
    frames = [orjson.dumps(chunk({"role": "assistant"})).decode()]
    for i in range(calls):
        call = {"index": i, "id": f"call_{i}", "type": "function"}
        call["function"] = {"name": "f", "arguments": f'{{"i": {i}}}'}
        if i == bad and quirk == "truncated":
            call["function"]["arguments"] = f'{{"i": {i}'
        if i == bad and quirk == "no-name":
            del call["function"]["name"]
        frames.append(orjson.dumps(chunk({"tool_calls": [call]})).decode())
        if i == bad and quirk == "id-empty":
            again = {"index": i, "id": "", "function": {"arguments": ""}}
            frames.append(orjson.dumps(chunk({"tool_calls": [again]})).decode())
    frames += [orjson.dumps(chunk({}, "tool_calls")).decode(), "[DONE]"]
    got = minimize(frames, max_runs=400)
    assert signature(got) == signature(frames) and len(got) < len(frames)
