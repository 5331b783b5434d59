"""`export` does not change what a stream says happened: every bundled chunk log, written
whole in each format `inspect` reads back, gives the same end and the same findings."""

from __future__ import annotations

import glob
import os

import pytest

from streamscope.analysis.driver import analyze
from streamscope.export.fixtures import export
from streamscope.inputs import CHUNKS, open_input
from streamscope.tui.sidebyside import _model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHUNK_INVALID = "chunk-invalid-json"


def _chunk_logs() -> list[str]:
    """Every chunk log bundled in recordings/ and tests/ (told as inspect tells it)."""
    found = []
    for pattern in ("recordings/*", "tests/**/*.jsonl", "tests/**/*.ndjson", "tests/**/*.chunks"):
        for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            try:
                with open_input(path) as source:
                    if source.kind == CHUNKS:
                        found.append(os.path.relpath(path, ROOT))
            except Exception:  # (not an input: a snapshot, a README)
                continue
    return found


CHUNK_LOGS = _chunk_logs()


def said(path: str) -> list[tuple[str, list[str]]]:
    """How each stream of `path` ended and the kinds found in it, as `inspect` says."""
    return [(s.ended, sorted({a.kind for a in s.anomalies})) for s in analyze(path).streams]


def _streams() -> list[tuple[str, int | None, int | None]]:
    """Every stream of the bundled recordings and HAR files: (path, exchange, turn)."""
    found = []
    paths = glob.glob(os.path.join(ROOT, "recordings", "*.jsonl"))
    paths += glob.glob(os.path.join(ROOT, "tests", "fixtures", "**", "*.har"), recursive=True)
    for path in sorted(paths):
        result = analyze(path)
        if result.format == CHUNKS:
            continue  # (test_a_chunk_log_exported_says_what_it_said)
        for s in result.streams:
            found.append((os.path.relpath(path, ROOT), s.exchange, s.turn))
    return found


# what a bare body cannot say: a finding about the request (a chunk log holds none)
REQUEST_KINDS = {"name-undeclared"}
# a stream no chunk log is told by (an API streamscope does not know): refused, said
UNTOLD = "tests/fixtures/real/gemini-interactions-stream.har"


@pytest.mark.parametrize(("path", "exchange", "turn"), _streams())
def test_a_stream_exported_as_a_chunk_log_reads_back_as_it_did(path, exchange, turn, tmp_path):
    full = os.path.join(ROOT, path)
    if path == UNTOLD:
        with pytest.raises(ValueError, match="none a chunk log is told by"):
            export(full, "chunks", exchange, turn=turn)
        return
    out = tmp_path / "out.jsonl"
    done = export(full, "chunks", exchange, turn=turn)
    assert done.notes == ()  # (nothing it cannot hold)
    out.write_bytes(done.data)
    (before,) = [s for s in analyze(full).streams if (s.exchange, s.turn) == (exchange, turn)]
    (after,) = analyze(str(out)).streams
    assert after.dialect == before.dialect
    kinds = sorted({a.kind for a in before.anomalies} - REQUEST_KINDS - {CHUNK_INVALID})
    assert said(str(out)) == [(before.ended, kinds)]


def test_a_bedrock_stream_as_a_chunk_log_keeps_each_event_s_name(tmp_path):
    # its events' names are the messages' :event-type headers: the chunk log wrote the
    # payloads bare (`{"role": "assistant", ...}`), a file inspect refused
    path = os.path.join(ROOT, "recordings", "bedrock-text-without-start.jsonl")
    data = export(path, "chunks").data
    first = data.splitlines()[0]
    assert first == b'{"messageStart":{"role":"assistant","p":"abcdefghijklmnopqrstuvwxyzABCDEF"}}'
    out = tmp_path / "bedrock.jsonl"
    out.write_bytes(data)
    assert said(str(out)) == said(path)[:1] == [("done", ["text-after-tool-start"])]


def test_the_bundled_chunk_logs_are_found():
    assert "recordings/deepseek-cumulative.chunks.jsonl" in CHUNK_LOGS
    assert len(CHUNK_LOGS) >= 20  # chat, Anthropic, Responses, Gemini, Bedrock, Ollama


@pytest.mark.parametrize("fmt", ["sse", "chunks", "recording"])
@pytest.mark.parametrize("path", CHUNK_LOGS)
def test_a_chunk_log_exported_says_what_it_said(path, fmt, tmp_path):
    out = tmp_path / f"out.{fmt}"
    out.write_bytes(export(os.path.join(ROOT, path), fmt).data)
    before, after = said(os.path.join(ROOT, path)), said(str(out))
    if fmt == "chunks":  # (a chunk log holds JSON lines: a line that is none is left out)
        before = [(end, [k for k in kinds if k != CHUNK_INVALID]) for end, kinds in before]
    assert after == before


def test_a_chunk_log_as_a_recording_ends_where_it_ended_with_no_done_invented(tmp_path):
    # the chunk log holds no [DONE]: inspect reads its last line as its end (`done`); its
    # recording read `finish-without-done` and `done-missing`, an end it never had
    path = os.path.join(ROOT, "recordings", "deepseek-cumulative.chunks.jsonl")
    data = export(path, "recording").data
    assert b"[DONE]" not in data
    out = tmp_path / "deepseek.jsonl"
    out.write_bytes(data)
    assert said(str(out)) == said(path) == [("done", ["args-cumulative"])]
    # cut before its finish: ended at its last line with no finish, as the chunk log says
    with open(path, "rb") as f:
        cut = f.read().splitlines(keepends=True)[:-1]
    log = tmp_path / "cut.chunks.jsonl"
    log.write_bytes(b"".join(cut))
    out.write_bytes(export(str(log), "recording").data)
    assert said(str(out)) == said(str(log))
    assert said(str(log)) == [("done", ["args-cumulative", "finish-reason-missing"])]


def test_a_chunk_log_that_held_done_keeps_it_in_its_recording(tmp_path):
    path = os.path.join(ROOT, "recordings", "deepseek-cumulative.chunks.jsonl")
    with open(path, "rb") as f:
        log = tmp_path / "done.chunks.jsonl"
        log.write_bytes(f.read() + b"data: [DONE]\n")
    data = export(str(log), "recording").data
    assert data.count(b"[DONE]") == 1
    out = tmp_path / "done.jsonl"
    out.write_bytes(data)
    assert said(str(out)) == said(str(log))


@pytest.mark.parametrize(
    "path",
    [
        "recordings/deepseek-cumulative.chunks.jsonl",
        "tests/fixtures/anthropic/vercel-ai-tool-no-args.jsonl",
        "tests/fixtures/responses/vercel-ai-parallel-wrapper-truncated-json.jsonl",
    ],
)
def test_the_replay_reads_a_chunk_log_and_its_recording_as_inspect_does(path, tmp_path):
    # the replay's model read a chunk log's end as an SSE body's (`done-missing`,
    # `event-name-missing`, `response-end-missing`) where inspect did not
    out = tmp_path / "out.jsonl"
    out.write_bytes(export(os.path.join(ROOT, path), "recording").data)
    for read in (os.path.join(ROOT, path), str(out)):
        result = _model(read, 1).result
        assert result is not None
        assert [(result.ended, sorted({a.kind for a in result.anomalies}))] == said(read)


def said_as_chunks(path: str, note: str, tmp_path) -> list[tuple[str, list[str]]]:
    """What `path`'s chunk log says (`said`), its export having said `note` alone."""
    done = export(path, "chunks")
    assert done.notes == (note,)
    out = tmp_path / "out.jsonl"
    out.write_bytes(done.data)
    return said(str(out))


def test_an_event_laid_out_over_lines_is_one_chunk_log_line_and_said(tmp_path):
    # a JSON array saved as Gemini streams it without alt=sse: each element pretty-printed;
    # its chunk log held the line breaks (a first line `{`, a file inspect refused)
    path = os.path.join(ROOT, "tests", "fixtures", "gemini-array", "two-calls.json")
    note = (
        "3 events' JSON were laid out over several lines: written on one line each (a chunk "
        "log holds an event a line), every line break as a space"
    )
    out = said_as_chunks(path, note, tmp_path)
    assert out == said(path) == [("done", ["finish-stop-with-calls", "id-missing"])]
    data = export(path, "chunks").data
    assert data.count(b"\n") == 3 and data.startswith(b'{   "candidates": [ ')


def test_a_stream_that_never_sent_its_end_marker_says_its_chunk_log_cannot_hold_that(tmp_path):
    # an SSE body cut between two events (no [DONE]): its chunk log reads its last line
    # as its end, `done`, with no `done-missing`; it said nothing of it
    path = os.path.join(ROOT, "tests", "golden", "openai-frames-2-5.sse")
    note = (
        "the stream ended before its end marker, and a chunk log holds none: inspect reads "
        "its last line as its end (--format sse or recording keeps how it ended)"
    )
    out = said_as_chunks(path, note, tmp_path)
    ((before, kinds),) = said(path)
    assert (before, "done-missing" in kinds) == ("truncated", True)
    assert out == [("done", [k for k in kinds if k != "done-missing"])]
    assert export(path, "chunks", frames="1-2").notes == ()  # (a selection ends where it ends)


def test_an_event_named_otherwise_than_its_data_s_type_says_its_chunk_log_loses_the_name(
    tmp_path,
):
    # `event: response.function_call_arguments.done` over data whose type is []: its
    # chunk log reads the event by its data, so event-schema-violation went, unsaid
    path = os.path.join(ROOT, "tests", "fuzz_cases", "responses-event-type-a-list.jsonl")
    note = (
        "an event's name differs from its data's type, and a chunk log holds no event "
        "names: inspect reads each by its data (--format sse keeps the names)"
    )
    out = said_as_chunks(path, note, tmp_path)
    assert "event-schema-violation" in said(path)[0][1]  # (its first stream: exchange 1)
    assert out == [("done", ["event-unknown", "parallel-wrapper"])]
