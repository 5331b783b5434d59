"""`dialect-mismatch`: a recording whose request names one dialect but whose events are
another's (a misrouted gateway) is read as the request's client reads it, and says so:
the warning at the other dialect's first event names both dialects and the calls the
events hold read in their own. Never on a stream whose events are its request's."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis.driver import analyze
from streamscope.cli import main
from streamscope.dialects.chat.appendix_a import FIXTURES
from streamscope.inputs import open_input
from streamscope.recording import RecordingError, RecordingWriter
from streamscope.tui.model import StreamModel

from . import anthropic_stream, gemini_stream, responses_stream
from .helpers import sse_body

ROOT = Path(__file__).resolve().parents[1]

# Each dialect's request (URL, body) and a stream of its events with its calls' names.
REQUESTS = {
    "chat-completions": (
        "https://gw.example/v1/chat/completions",
        {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "anthropic-messages": (
        "https://gw.example/v1/messages",
        {"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": True, "messages": []},
    ),
    "openai-responses": (
        "https://gw.example/v1/responses",
        {"model": "gpt-5", "stream": True, "input": "hi"},
    ),
    "gemini": (
        "https://gw.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
}
EVENTS = {
    "chat-completions": (sse_body(FIXTURES["Q0"]), ["get_weather"]),
    "anthropic-messages": (b"".join(anthropic_stream.tool_use_events()), ["get_weather"]),
    "openai-responses": (b"".join(responses_stream.function_call_events()), ["get_weather"]),
    "gemini": (b"".join(gemini_stream.events_for({})), ["get_weather", "get_weather"]),
}
TITLES = {
    "chat-completions": "Chat Completions",
    "anthropic-messages": "Anthropic Messages",
    "openai-responses": "OpenAI Responses",
    "gemini": "Gemini",
}
PATHS = {
    "chat-completions": "/v1/chat/completions",
    "anthropic-messages": "/v1/messages",
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
}
PAIRS = [(asked, sent) for asked in REQUESTS for sent in EVENTS if asked != sent]


def record(path: Path, asked: str, body: bytes) -> Path:
    """A recording of one exchange: a request in dialect `asked`, answered by `body`."""
    url, request = REQUESTS[asked]
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", url, [("content-type", "application/json")], orjson.dumps(request))
        w.response(ex, 200, [("content-type", "text/event-stream")])
        w.chunk(ex, body)
        w.end(ex, "complete")
    return path


def inspect(*args: str):
    return CliRunner().invoke(main, ["inspect", *args])


def mismatches(stream: dict) -> list[dict]:
    return [a for a in stream["anomalies"] if a["kind"] == "dialect-mismatch"]


@pytest.mark.parametrize(("asked", "sent"), PAIRS)
def test_events_of_another_dialect_are_read_as_the_request_says_and_named(tmp_path, asked, sent):
    body, names = EVENTS[sent]
    path = record(tmp_path / "misrouted.jsonl", asked, body)
    result = inspect(str(path), "--json")
    assert result.exit_code == 0, result.output
    (stream,) = orjson.loads(result.output)["streams"]
    assert stream["dialect"] == asked  # the request's client reads the stream so
    assert stream["tool_calls"] == []
    (found,) = mismatches(stream)
    assert found["severity"] == "warning" and found["frame"] == 1
    message = found["message"]
    assert f"the request (POST {PATHS[asked]}) is {TITLES[asked]}" in message
    assert f"the events are {TITLES[sent]}" in message
    calls = f"{len(names)} tool call{'s' if len(names) > 1 else ''}"
    assert f"read as {TITLES[sent]}, robust finds {calls} (" in message
    assert all(f'"{n}"' in message for n in names)
    assert inspect(str(path), "--strict").exit_code == 1  # a warning: --strict fails on it


@pytest.mark.parametrize(("asked", "sent"), PAIRS)
def test_the_calls_it_counts_are_those_the_events_hold_read_alone(tmp_path, asked, sent):
    """The count is the other dialect's robust reading of the same bytes: the body saved
    alone (no request: its events tell the dialect) reads as many calls."""
    body, _ = EVENTS[sent]
    alone = tmp_path / "body.sse"
    alone.write_bytes(body)
    (read,) = analyze(alone).streams
    assert read.dialect == sent and read.tool_calls
    (stream,) = analyze(record(tmp_path / "r.jsonl", asked, body)).streams
    (found,) = [a for a in stream.anomalies if a.kind == "dialect-mismatch"]
    n = len(read.tool_calls)
    assert f"robust finds {n} tool call{'s' if n > 1 else ''}" in found.message


def test_the_report_names_both_dialects_each_way(tmp_path):
    chat_path = record(tmp_path / "a.jsonl", "chat-completions", EVENTS["anthropic-messages"][0])
    out = inspect(str(chat_path)).output
    (line,) = [x for x in out.splitlines() if "dialect-mismatch" in x]
    assert "warning frame 1" in line
    assert (
        "the request (POST /v1/chat/completions) is Chat Completions, but the events are " in line
    )
    assert 'Anthropic Messages (an event "message_start")' in line
    assert "robust finds 1 tool call" in line and "no tool calls" in out
    anthropic_path = record(
        tmp_path / "b.jsonl", "anthropic-messages", EVENTS["chat-completions"][0]
    )
    out = inspect(str(anthropic_path)).output
    (line,) = [x for x in out.splitlines() if "dialect-mismatch" in x]
    assert "the request (POST /v1/messages) is Anthropic Messages" in line
    assert "but the events are Chat Completions: read as Chat Completions" in line
    assert "Exchange 1 · Anthropic Messages" in out


def test_the_finding_is_at_the_first_event_of_the_other_dialect(tmp_path):
    """A `ping` and a comment before it tell no dialect: the finding is at the event
    that does."""
    body = b': keep-alive\n\nevent: ping\ndata: {"type": "ping"}\n\n'
    body += EVENTS["anthropic-messages"][0]
    (stream,) = analyze(record(tmp_path / "r.jsonl", "chat-completions", body)).streams
    (found,) = [a for a in stream.anomalies if a.kind == "dialect-mismatch"]
    assert found.frame == 2


def test_an_event_of_the_requests_dialect_among_the_first_rules_it_out(tmp_path):
    """A Chat Completions stream that opens with one stray event of another API's shape
    is still the request's: nothing is said."""
    stray = b'data: {"type": "response.created", "sequence_number": 0, "response": {}}\n\n'
    body = stray + EVENTS["chat-completions"][0]
    (stream,) = analyze(record(tmp_path / "r.jsonl", "chat-completions", body)).streams
    assert "dialect-mismatch" not in {a.kind for a in stream.anomalies}
    assert [c.name for c in stream.tool_calls] == ["get_weather"]


def test_a_stream_without_a_request_is_told_by_its_events_and_never_mismatched(tmp_path):
    path = tmp_path / "body.sse"
    path.write_bytes(EVENTS["anthropic-messages"][0])
    (stream,) = orjson.loads(inspect(str(path), "--json").output)["streams"]
    assert stream["dialect"] == "anthropic-messages" and len(stream["tool_calls"]) == 1
    assert mismatches(stream) == []


def test_the_replay_shows_it_as_inspect_does(tmp_path):
    path = record(tmp_path / "r.jsonl", "openai-responses", EVENTS["gemini"][0])
    with open_input(str(path)) as source:
        ex = source.exchange(1)
        info = ex.info
        model = StreamModel(
            ex.reads,
            1,
            info.tools,
            end={"end_reason": info.end_reason, "status": info.status},
            told=ex.dialect(),
            check=info.dialect_check(),
        )
        result = model.build()
    (found,) = [a for a in result.anomalies if a.kind == "dialect-mismatch"]
    (inspected,) = analyze(path).streams
    assert [(a.kind, a.frame, a.message) for a in inspected.anomalies] == [
        (a.kind, a.frame, a.message) for a in result.anomalies
    ]
    assert found.frame in model.anomaly_frames


def test_scan_counts_and_lists_it(tmp_path):
    folder = tmp_path / "scanned"
    folder.mkdir()
    record(folder / "misrouted.jsonl", "chat-completions", EVENTS["anthropic-messages"][0])
    record(folder / "right.jsonl", "anthropic-messages", EVENTS["anthropic-messages"][0])
    result = CliRunner().invoke(
        main, ["scan", "-j", "1", "--kind", "dialect-mismatch", str(folder)]
    )
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.output.splitlines() if ".jsonl#" in x]  # one a finding
    assert "misrouted.jsonl#1@1  dialect-mismatch  the request (POST" in line
    rows = CliRunner().invoke(main, ["scan", "-j", "1", "--jsonl", str(folder)]).output
    kinds = {orjson.loads(r)["file"].rsplit("/", 1)[-1]: orjson.loads(r) for r in rows.splitlines()}
    assert "dialect-mismatch" in kinds["misrouted.jsonl"]["anomaly_kinds"]
    assert "dialect-mismatch" not in kinds["right.jsonl"]["anomaly_kinds"]


def _inputs() -> list[Path]:
    """Every input the project ships: the bundled samples and the tests' fixtures and
    corpora (files streamscope reads; notes and licenses are not)."""
    ends = (".jsonl", ".sse", ".ndjson", ".har", ".json", ".yaml", ".yml", ".chunks")
    ends += (".recording", ".bin", ".gz")
    folders = [ROOT / "recordings", ROOT / "tests" / "fixtures", ROOT / "tests" / "fuzz_cases"]
    folders.append(ROOT / "tests" / "golden")
    return sorted(p for f in folders for p in f.rglob("*") if p.is_file() and p.name.endswith(ends))


def test_no_bundled_recording_or_test_corpus_is_said_to_be_mismatched():
    inputs = _inputs()
    assert len(inputs) > 150
    read = 0
    for path in inputs:
        try:
            analysis = analyze(path)
        except RecordingError:
            continue  # (the corpora hold inputs that are refused on purpose)
        read += 1
        for s in analysis.streams:
            assert "dialect-mismatch" not in {a.kind for a in s.anomalies}, (path, s.exchange)
    assert read > 150
