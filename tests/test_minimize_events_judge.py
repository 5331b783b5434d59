"""The event dialects' minimiser judges a candidate in parts (robust with the clients read
off its calls, then the plain clients, then the SDK emulation): it must answer as one
whole pass does, on the stream itself and on every candidate a search may try. (Gemini's
drops-signature, read off robust's calls, was once judged by an engine that had not read
robust: the whole stream failed its own judge, and a search over 3,000 frames ran for
minutes.)"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.dialects import dialect
from streamscope.export.minimize_events import _Judge
from streamscope.inputs import open_input

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = [
    "anthropic-spliced-message.jsonl",
    "anthropic-start-input.jsonl",
    "bedrock-text-without-start.jsonl",
    "gemini-parallel-signature.jsonl",
    "gemini-signature-dropped.jsonl",
    "gemini-streamed-args.jsonl",
    "gemini-unterminated.jsonl",
    "ollama-native-two-calls.ndjson",
    "responses-done-mismatch.jsonl",
    "responses-interleaved.jsonl",
]


def stream_of(name: str):
    """The first stream of a sample: its dialect, tools and (event name, data) frames."""
    with open_input(os.path.join(ROOT, "recordings", name)) as source:
        ex = source.exchange(next(i.exchange for i in source.infos() if i.stream))
        frames = [(f.event, f.data) for f in ex.frames()]
        return dialect(ex.dialect()), ex.info.tools, frames


# Gemini calls with no thoughtSignature: drops-signature builds what robust builds
UNSIGNED = [
    '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f",'
    '"args":{"q":1}}}]},"index":0}]}',
    '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"g",'
    '"args":{}}}]},"index":0}]}',
    '{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP",'
    '"index":0}]}',
]


@pytest.fixture(scope="module", params=[*SAMPLES, "unsigned Gemini calls"])
def judged(request):
    if request.param in SAMPLES:
        told, tools, frames = stream_of(request.param)
    else:
        told, tools, frames = dialect("gemini"), None, [(None, d) for d in UNSIGNED]
    assert told.shape is not None  # (an event dialect: minimize_events is its minimiser)
    judge = _Judge(told, tools, True, 10**9)
    judge.aim(frames)
    return judge, frames


def test_each_part_is_judged_and_the_stream_passes_its_own_judge(judged):
    judge, frames = judged
    assert judge.parts, "a strategy no part runs"
    assert judge.in_parts(frames)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_in_parts_answers_as_the_whole_signature_does(judged, data):
    judge, frames = judged
    keep = data.draw(st.lists(st.booleans(), min_size=len(frames), max_size=len(frames)))
    candidate = [f for f, k in zip(frames, keep, strict=True) if k]
    assert judge.in_parts(candidate) == (judge.signature(candidate) == judge.target)


def _anthropic_blocks(blocks: int, bad: int) -> list[tuple[str | None, str]]:
    """Anthropic tool blocks one after another (start, three fragments, stop), block `bad`'s
    input cut short; as (event name, data) frames."""
    start = {"type": "message_start", "message": {"id": "m", "content": [], "role": "assistant"}}
    out = [start]
    for i in range(blocks):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}}
        out.append({"type": "content_block_start", "index": i, "content_block": block})
        for piece in ('{"i": ', str(i), "" if i == bad else "}"):
            delta = {"type": "input_json_delta", "partial_json": piece}
            out.append({"type": "content_block_delta", "index": i, "delta": delta})
        out.append({"type": "content_block_stop", "index": i})
    out += [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}}]
    out += [{"type": "message_stop"}]
    return [(e["type"], json.dumps(e)) for e in out]


def test_a_truncated_block_in_the_middle_keeps_the_blocks_before_it_as_start_and_stop():
    """The SDK looks a block up by its index (IndexError without the blocks before it), so
    those stay; their fragments are not what the finding needs, and go (narrowing aims at
    the finding's frames, then a kind of frame goes from every block but its own)."""
    from streamscope.export.minimize_events import minimize_events

    told, frames = dialect("anthropic-messages"), _anthropic_blocks(150, 100)
    judge = _Judge(told, None, True, 10**9)
    judge.aim(frames)
    got = minimize_events(frames, told, told.shape)
    assert judge.signature(got) == judge.target
    names = [name for name, _ in got]
    assert names.count("content_block_start") == names.count("content_block_stop") == 101
    assert names.count("content_block_delta") <= 3  # (the cut block's own)
