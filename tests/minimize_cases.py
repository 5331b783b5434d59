"""Streams the minimiser is pinned on: every bundled recording, the Appendix A fixtures,
the fuzz regression chunk logs, the benchmark's generated shapes and seeded random
mutations of the samples, each with its options.

`tests/golden/minimize-pinned.json` holds what `minimize` returned for each case before
the minimiser was made faster (sha-256 of the output frames, and their count); the
speed work must not change one byte. Written once with
    python -m tests.minimize_cases --write
and never again unless the minimal result is meant to change.
"""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from benchmarks.gen import interleaved_events, many_calls_events, stream_events
from streamscope.analysis import analyze, frame_source
from streamscope.dialects.chat.appendix_a import FIXTURES
from streamscope.inputs.sniff import CHUNKS, sniff

from .fuzzing import _pick
from .helpers import chat_sample

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
GOLDEN = Path(__file__).resolve().parent / "golden" / "minimize-pinned.json"


@dataclass
class Case:
    name: str
    frames: list[str]
    tools: list | None = None
    options: dict = field(default_factory=dict)  # minimize's keyword arguments


def file_stream(path: Path) -> tuple[list[str], list | None, bool]:
    """Exchange 1 of a file: its frames' data, the request's tools, expect_done."""
    fmt = sniff(str(path)).kind
    frames = [f.data for f in frame_source(str(path), 1)]
    infos = [i for i in analyze(str(path)).exchanges if i.exchange == 1]
    return frames, infos[0].tools if infos else None, fmt != CHUNKS


def events_data(events: list[bytes]) -> list[str]:
    """The data of generated SSE events (one `data: ` line each)."""
    return [e.decode()[len("data: ") : -2] for e in events]


_VALUES = ["", None, 0, 1, -1, "x", "call_x", "get_weather", [], {}, "tool_calls", "stop"]


def mutated(frames: list[str], rng: random.Random) -> list[str]:
    """`frames` with a few frames dropped, repeated or swapped, and a few values changed
    or keys removed inside the JSON ones."""
    out = list(frames)
    for _ in range(rng.randrange(1, 5)):
        if not out:
            break
        roll = rng.random()
        i = rng.randrange(len(out))
        if roll < 0.2:
            del out[i]
        elif roll < 0.35:
            out.insert(i, out[i])
        elif roll < 0.45 and i + 1 < len(out):
            out[i], out[i + 1] = out[i + 1], out[i]
        else:
            try:
                tree = orjson.loads(out[i])
            except orjson.JSONDecodeError:
                continue
            holder, key = _pick(tree, rng)  # a chunk has no SSE text inside: a plain place
            if holder is None:
                continue
            if rng.random() < 0.3 and isinstance(holder, dict):
                del holder[key]
            else:
                holder[key] = rng.choice(_VALUES)
            out[i] = orjson.dumps(tree).decode()
    return out


MUTATED_FROM = frozenset(
    {
        "alibaba-empty-id.jsonl",
        "args-resent.jsonl",
        "buggy-agent-uuid.jsonl",
        "custom-tool.jsonl",
        "dashscope-truncated-args.jsonl",
        "deepseek-cumulative.chunks.jsonl",
        "first-index-1.jsonl",
        "gemini-no-index.sse",
        "ids-repeated.jsonl",
        "llamacpp.jsonl",
        "name-fragments.jsonl",
        "ollama-no-ids.jsonl",
        "openai.jsonl",
        "parallel-index-0.jsonl",
        "vllm.jsonl",
    }
)


def cases() -> Iterator[Case]:
    # the Chat Completions samples (the other dialects' minimal streams are tested apart)
    samples = sorted(
        p for p in RECORDINGS.iterdir() if p.suffix in (".jsonl", ".sse") and chat_sample(p)
    )
    for path in samples:
        frames, tools, done = file_stream(path)
        yield Case(path.name, frames, tools, {"expect_done": done})
        yield Case(
            f"{path.name} unjoined", frames, tools, {"expect_done": done, "join_fragments": False}
        )
        yield Case(
            f"{path.name} keep-fields", frames, tools, {"expect_done": done, "keep_fields": True}
        )
        for runs in (4, 30, 120):
            yield Case(
                f"{path.name} max_runs={runs}",
                frames,
                tools,
                {"expect_done": done, "max_runs": runs},
            )
    for path in sorted((ROOT / "tests" / "fuzz_cases").glob("minimize-*.jsonl")):
        frames, tools, done = file_stream(path)
        yield Case(path.name, frames, tools, {"expect_done": done})
    for name, chunks in FIXTURES.items():
        datas = [orjson.dumps(c).decode() for c in chunks]
        yield Case(f"appendix {name}", [*datas, "[DONE]"])
        yield Case(f"appendix {name} chunk log", datas, None, {"expect_done": False})
    bench = events_data(interleaved_events(5_000, quirk=True))
    yield Case("bench interleaved 5k quirk", bench)
    yield Case("bench interleaved 5k quirk max_runs=300", bench, None, {"max_runs": 300})
    yield Case("interleaved 300 quirk", events_data(interleaved_events(300, quirk=True)))
    yield Case("interleaved 200 quirk 5 calls", events_data(interleaved_events(200, 5, True)))
    yield Case("interleaved 300", events_data(interleaved_events(300)))
    yield Case("many calls 40", events_data(many_calls_events(40)))
    yield Case("one call 120", events_data(stream_events(120)))
    rng = random.Random(11)
    # The mutated cases draw from the samples there were when they were pinned: a sample
    # added since gets its own cases above, and does not reshuffle these (nor their pins).
    pool = [p for p in samples if p.name in MUTATED_FROM]
    for k in range(60):
        path = rng.choice(pool)
        frames, tools, done = file_stream(path)
        yield Case(f"mutated {k} {path.name}", mutated(frames, rng), tools, {"expect_done": done})


def digest(frames: list[str]) -> dict:
    return {"frames": len(frames), "sha256": hashlib.sha256(orjson.dumps(frames)).hexdigest()}


def write() -> None:
    from streamscope.dialects.chat.minimize import minimize

    golden = {c.name: digest(minimize(c.frames, c.tools, **c.options)) for c in cases()}
    GOLDEN.write_bytes(orjson.dumps(golden, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"{len(golden)} cases written to {GOLDEN}")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write()
