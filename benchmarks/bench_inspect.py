"""How fast is `inspect --json` on the shapes agents stream, against the floor of merely
parsing the same file?

One run prints (every ratio measured in this one process, so a shared machine's load
mostly cancels out):
- throughput of `inspect --json` on long streams (5k, 20k, 80k frames) as a ratio to the
  orjson floor: reading the same file and orjson-parsing every line and every event
  payload in it, the least any tool must do. Two shapes: three parallel calls whose
  argument fragments interleave in short bursts (what providers send for parallel tool
  use), and one long call. Marginal figures subtract the 20k-frame run from the
  80k-frame run, so fixed costs (imports, the report) drop out;
- the growth of the per-frame cost: the marginal cost per frame from 20k to 80k frames
  over that from 5k to 20k (1.0 means linear; quadratic work shows as ~4);
- the contract's pairing on 500, 1,000 and 2,000 exchanges of interleaved conversations:
  the marginal cost per exchange from 1k to 2k over that from 500 to 1k (1.0 is linear);
- many calls in one stream (2,500, 5,000, 10,000 calls, each opened with id and name,
  arguments in three fragments): the marginal cost per call from 5k to 10k calls over
  that from 2.5k to 5k (1.0 is linear, quadratic is 2);
- `export --minimal` against `inspect` on the same 5k-frame interleaved stream with an
  id quirk (one fragment carries `"id": ""`), on a 50k-frame one, and on 20,000 calls
  each whole in one chunk;
- `inspect` of a 20,000-chunk text answer with logprobs on every chunk against the same
  answer without them;
- an Anthropic Messages stream (text and tool blocks in turn, every event named) and an
  OpenAI Responses stream (three call items whose deltas interleave in the same bursts,
  with sequence numbers and padding) and a Gemini stream (three calls whose arguments
  stream as partialArgs string pieces, one chunk each), the same Gemini stream as one
  JSON array (Gemini without alt=sse) against the interleaved Chat
  Completions stream of the same frame counts: the marginal cost per frame of each (20k to 80k frames), and
  their ratio; and an Ollama native chat body (NDJSON text lines, two whole calls every 40
  lines) against that Chat Completions stream, both saved as lines (chunk logs);
- peak memory (max RSS) of `streamscope inspect --json` on a 1000-exchange, 1M-frame
  recording (about 360 MB), in a child process (skipped with --quick);
- `export --format sse` against `inspect` on one 100 MB event (skipped with --quick).

    .venv/bin/python benchmarks/bench_inspect.py [--quick]

Files go to benchmarks/out/ (git-ignored).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.gen import (  # noqa: E402
    BEDROCK_REQUEST,
    GEMINI_REQUEST,
    RESPONSES_REQUEST,
    anthropic_events,
    bedrock_events,
    chat_lines,
    content_events,
    gemini_array_events,
    gemini_events,
    interleaved_events,
    many_calls_events,
    ollama_lines,
    responses_events,
    single_chunk_calls_events,
    stream_events,
    write_conversations,
    write_recording,
    write_sse,
)
from streamscope.analysis import analyze  # noqa: E402
from streamscope.core.report import report_json  # noqa: E402
from streamscope.export.fixtures import export  # noqa: E402

OUT = os.path.join(HERE, "out")


def floor(path: str) -> float:
    start = time.perf_counter()
    loads = orjson.loads
    with open(path, "rb") as f:
        for line in f:
            d = loads(line)
            data = d.get("data")
            if data:
                for event in data.split("\n\n"):
                    if event.startswith("data: {"):
                        loads(event[6:])
    return time.perf_counter() - start


def inspect_json(path: str) -> float:
    start = time.perf_counter()
    a = analyze(path)
    orjson.dumps(report_json(a.source, a.format, a.streams, a.contract))
    return time.perf_counter() - start


def export_minimal(path: str) -> float:
    start = time.perf_counter()
    export(path, "sse", minimal=True)
    return time.perf_counter() - start


def export_sse(path: str) -> float:
    start = time.perf_counter()
    export(path, "sse")
    return time.perf_counter() - start


def best(fn: Callable[[str], float], path: str, runs: int) -> float:
    return min(fn(path) for _ in range(runs))


def rounds(fns: dict[str, Callable[[str], float]], paths: dict[int, str], n: int) -> dict:
    """{(name, size): best time}, every size and function once per round: on a shared
    machine a burst of load then hits each figure alike instead of one size's runs."""
    out: dict = {}
    for _ in range(n):
        for size, path in paths.items():
            for name, fn in fns.items():
                took = fn(path)
                out[name, size] = min(took, out.get((name, size), took))
    return out


def against_chat(
    name: str,
    label: str,
    make: Callable[[int], list[bytes]],
    path: str,
    request: dict | None = None,
    content_type: str = "text/event-stream",
) -> None:
    """Dialect `name`'s per-frame cost against Chat Completions' (3 interleaved calls) on
    streams of the same frame counts; `path` and `request`: its request's URL path and
    body; `content_type`: its response's."""
    sizes = [5_000, 20_000, 80_000]
    paths = {}
    for n in sizes:
        paths["chat", n] = os.path.join(OUT, f"stream-interleaved-{n}.jsonl")
        write_recording(paths["chat", n], 1, n, interleaved_events(n))
        paths[name, n] = os.path.join(OUT, f"stream-{name}-{n}.jsonl")
        url = "http://127.0.0.1:1" + path
        write_recording(paths[name, n], 1, n, make(n), url, request, content_type)
    _compare(name, f"{label} against Chat Completions (3 interleaved calls)", paths, sizes)


def lines_against_chat(name: str, label: str, make: Callable[[int], list[bytes]]) -> None:
    """A dialect read from a saved body of lines (a chunk log) against Chat Completions'
    interleaved stream saved as a chunk log, of the same frame counts."""
    sizes = [5_000, 20_000, 80_000]
    paths = {}
    for n in sizes:
        for d, lines in (("chat", chat_lines(n)), (name, make(n))):
            paths[d, n] = os.path.join(OUT, f"lines-{d}-{n}.jsonl")
            with open(paths[d, n], "wb") as f:
                f.writelines(lines)
    label = f"{label} against Chat Completions (3 interleaved calls), both saved as lines"
    _compare(name, label, paths, sizes)


def _compare(name: str, title: str, paths: dict, sizes: list[int]) -> None:
    """Time `inspect` on each of Chat's and `name`'s files and print the marginal cost per
    frame of each, and their ratio (measured in the same rounds)."""
    t = rounds({"inspect": inspect_json}, paths, 5)
    print(f"\n{title}")
    print(f"frames   chat us/frame   {name} us/frame")
    for n in sizes:
        chat, other = t["inspect", ("chat", n)], t["inspect", (name, n)]
        print(f"{n:>6}   {chat * 1e6 / n:>13.2f}   {other * 1e6 / n:>{len(name) + 9}.2f}")
    _, b, c = sizes
    marginal = {d: (t["inspect", (d, c)] - t["inspect", (d, b)]) / (c - b) for d in ("chat", name)}
    print(
        f"marginal cost per frame ({b}->{c} frames): chat {marginal['chat'] * 1e6:.2f} us, "
        f"{name} {marginal[name] * 1e6:.2f} us: "
        f"{marginal[name] / marginal['chat']:.2f}x  (goal <= 1.5x)"
    )


def long_streams(label: str, make: Callable[[int], list[bytes]]) -> None:
    sizes = [5_000, 20_000, 80_000]
    paths = {}
    for n in sizes:
        paths[n] = os.path.join(OUT, f"stream-{label.split()[0]}-{n}.jsonl")
        write_recording(paths[n], 1, n, make(n))
    t = rounds({"floor": floor, "inspect": inspect_json}, paths, 5)
    print(f"\n{label}")
    print("frames   floor us/frame   inspect us/frame   throughput vs floor")
    for n in sizes:
        f, i = t["floor", n], t["inspect", n]
        print(f"{n:>6}   {f * 1e6 / n:>14.2f}   {i * 1e6 / n:>16.2f}   {f / i:>19.2f}")
    a, b, c = sizes
    marginal = (t["floor", c] - t["floor", b]) / (t["inspect", c] - t["inspect", b])
    low = (t["inspect", b] - t["inspect", a]) / (b - a)
    high = (t["inspect", c] - t["inspect", b]) / (c - b)
    print(f"marginal throughput vs floor ({b}->{c} frames): {marginal:.2f}  (goal >= 0.33)")
    print(f"per-frame cost growth (20k-80k over 5k-20k): {high / low:.2f}  (goal <= 1.5)")


def marginal_growth(t: dict, counts: list[int]) -> float:
    """The marginal cost per item between the two larger sizes over that between the two
    smaller ones (1.0 is linear; quadratic work shows as 2 when each size doubles)."""
    a, b, c = (t["inspect", n] for n in counts)
    return ((c - b) / (counts[2] - counts[1])) / ((b - a) / (counts[1] - counts[0]))


def growth(
    title: str, unit: str, counts: list[int], write: Callable[[int], str], runs: int
) -> None:
    """`inspect --json` at three sizes (`write(n)` makes the file of n `unit`s): the time,
    the time per unit, and the marginal cost growth (goal <= 1.3)."""
    paths = {n: write(n) for n in counts}
    t = rounds({"inspect": inspect_json}, paths, runs)
    per, scale = ("ms", 1e3) if unit == "exchange" else ("us", 1e6)
    print(f"\n{title}")
    print(f"{unit + 's':>9}   inspect s   {per}/{unit}")
    for n in counts:
        print(f"{n:>9}   {t['inspect', n]:>9.3f}   {t['inspect', n] * scale / n:>8.2f}")
    a, b, c = counts
    growth = marginal_growth(t, counts)
    print(
        f"marginal per-{unit} cost growth ({b:,}-{c:,} over {a:,}-{b:,}): {growth:.2f}  (goal <= 1.3)"
    )


def many_calls() -> None:
    def write(n: int) -> str:
        path = os.path.join(OUT, f"calls-{n}.sse")
        write_sse(path, many_calls_events(n))
        return path

    growth("many calls in one stream", "call", [2_500, 5_000, 10_000], write, 5)


def pairing() -> None:
    """The contract's pairing on recordings of interleaved conversations: the marginal cost
    per exchange from 1,000 to 2,000 exchanges over that from 500 to 1,000 (1.0 is linear,
    quadratic is 2)."""

    def write(n: int) -> str:
        path = os.path.join(OUT, f"conversations-{n}.jsonl")
        write_conversations(path, n)
        return path

    title = "interleaved conversations (5 at a time, 4 turns each): pairing and the contract"
    growth(title, "exchange", [500, 1_000, 2_000], write, 3)


def against_inspect(label: str, path: str, fn: Callable[[str], float], runs: int) -> None:
    t = rounds({"inspect": inspect_json, "other": fn}, {0: path}, runs)
    other, inspect = t["other", 0], t["inspect", 0]
    print(f"\n{label}: {other:.3f} s, inspect {inspect:.3f} s: {other / inspect:.2f}x")


def minimal() -> None:
    path = os.path.join(OUT, "interleaved-5k-id-quirk.sse")
    write_sse(path, interleaved_events(5_000, quirk=True))
    label = "export --minimal, 5k-frame interleaved stream with an id quirk (goal <= 3x)"
    against_inspect(label, path, export_minimal, 9)  # ~0.1 s each: best of 9, a steadier min
    path = os.path.join(OUT, "interleaved-50k-id-quirk.sse")
    write_sse(path, interleaved_events(50_000, quirk=True))
    label = "export --minimal, 50k-frame interleaved stream with an id quirk (goal <= 3x)"
    against_inspect(label, path, export_minimal, 3)
    path = os.path.join(OUT, "single-chunk-calls-20k.sse")
    write_sse(path, single_chunk_calls_events(20_000))
    label = "export --minimal, 20,000 single-chunk calls (goal <= 3x)"
    against_inspect(label, path, export_minimal, 3)


def logprobs() -> None:
    """A 20,000-chunk text answer with logprobs on every chunk against the same answer
    without them (the SDK emulation fell back to the real, quadratic, class on logprobs)."""
    paths = {}
    for lp in (False, True):
        paths[lp] = os.path.join(OUT, f"content-20k{'-logprobs' if lp else ''}.sse")
        write_sse(paths[lp], content_events(20_000, logprobs=lp))
    t = rounds({"inspect": inspect_json}, paths, 3)
    with_lp, without = t["inspect", True], t["inspect", False]
    print(
        f"\n20,000-chunk text answer with logprobs: {with_lp:.3f} s, without {without:.3f} s: "
        f"{with_lp / without:.2f}x  (goal <= 2x)"
    )


def big_event() -> None:
    path = os.path.join(OUT, "event-100MB.sse")
    if not os.path.exists(path):
        chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}}]}
        chunk["choices"][0]["delta"] = {"content": "x" * (100 * 2**20)}
        with open(path, "wb") as f:
            f.write(b"data: " + orjson.dumps(chunk) + b"\n\ndata: [DONE]\n\n")
    against_inspect("one 100 MB event, export --format sse (goal <= 2x)", path, export_sse, 1)


def peak_memory() -> None:
    big = os.path.join(OUT, "recording-1M.jsonl")
    if not os.path.exists(big):
        print("writing the 1000-exchange, 1M-frame recording ...", flush=True)
        write_recording(big, 1000, 1000)
    size = os.path.getsize(big) / 2**20
    cmd = [sys.executable, "-m", "streamscope", "inspect", "--json", big]
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(cmd, stdout=sink, check=True)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"\n1M frames, 1000 exchanges, {size:.0f} MiB: inspect --json {took:.1f} s, peak memory {peak:.0f} MiB (goal < 256)"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    os.makedirs(OUT, exist_ok=True)
    long_streams("interleaved (3 parallel calls)", interleaved_events)
    long_streams("single (one call)", stream_events)
    many_calls()
    pairing()
    minimal()
    logprobs()
    against_chat(
        "anthropic",
        "Anthropic Messages (text and tool blocks in turn)",
        anthropic_events,
        "/v1/messages",
    )
    against_chat(
        "responses",
        "OpenAI Responses (3 interleaved call items)",
        responses_events,
        "/v1/responses",
        RESPONSES_REQUEST,
    )
    against_chat(
        "gemini",
        "Gemini (streamed arguments, 3 calls)",
        gemini_events,
        "/v1/projects/p/locations/us-central1/publishers/google/models/m:streamGenerateContent?alt=sse",
        GEMINI_REQUEST,
    )
    against_chat(
        "gemini-array",
        "Gemini without alt=sse (the same stream as one JSON array, pretty-printed elements)",
        gemini_array_events,
        "/v1beta/models/m:streamGenerateContent",
        GEMINI_REQUEST,
        "application/json",
    )
    against_chat(
        "bedrock",
        "Bedrock ConverseStream (text blocks without a start and toolUse blocks in turn)",
        bedrock_events,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream",
        BEDROCK_REQUEST,
        "application/vnd.amazon.eventstream",
    )
    lines_against_chat(
        "ollama", "Ollama native chat (text lines, 2 whole calls every 40 lines)", ollama_lines
    )
    if quick:
        return
    # before big_event: a child's peak memory counts the pages it was forked with, and
    # the 100 MB event leaves this process large
    peak_memory()
    big_event()


if __name__ == "__main__":
    main()
