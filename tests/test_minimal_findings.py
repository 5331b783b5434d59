"""`export --minimal` keeps what `inspect` finds on the stream: its warning and error kinds
and its dialect, as `inspect` reads the file written.

The search once judged candidates by their frames alone: a body cut inside an event (the
anthropic-sdk-python fixtures end inside `message_stop`), a connection that failed, a
client that left, a recording that stops before its end line all read `stream-truncated`,
and their minimal streams ended whole. And where the dialect is told by the frames (a
saved body), the minimal stream of a Responses error event dropped the `sequence_number`
that told it, and read as Chat Completions' or as no file streamscope reads."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from streamscope.analysis.driver import analyze
from streamscope.core.anomalies import SERIOUS
from streamscope.dialects.chat.appendix_a import A1, A2, calls, chunk, tc
from streamscope.export.fixtures import export
from streamscope.inputs import open_input
from streamscope.recording.writer import RecordingWriter

from .helpers import sse_body, tool_def
from .test_minimal_clients import FIXTURES, _divergences, _minimal, _streams


def _found(path: str, exchange: int | None = None) -> tuple[str | None, frozenset[str]]:
    """The dialect the file's first stream is told (None: none tells it) and its
    warning and error kinds, as `inspect` reads them."""
    analysis = analyze(path, exchange)
    stream = analysis.streams[0]
    told = next(i.dialect for i in analysis.exchanges if i.exchange == stream.exchange)
    return told, frozenset(a.kind for a in stream.anomalies if a.severity in SERIOUS)


def _first(path: str) -> int | None:
    with open_input(path) as source:
        return next(i.exchange for i in source.infos() if i.stream) if source.recorded else None


@pytest.mark.parametrize("name", _streams())
def test_minimal_keeps_the_kinds_the_dialect_and_the_clients_inspect_finds(name, tmp_path):
    """One search a fixture, both halves of what it keeps checked on it: the kinds and
    dialect here, which clients differ from robust and which raise (test_minimal_clients'
    docstring). As two tests, two workers each searched most fixtures."""
    path = os.path.join(FIXTURES, name)
    out, exchange = _minimal(path, str(tmp_path))
    assert out is not None, "an empty minimal stream tells no dialect"
    first = _first(path)
    assert _found(out, exchange) == _found(path, first)
    assert _divergences(out, exchange) == _divergences(path, first)


# -- how a stream ends past its last frame ---------------------------------------------

TOOLS = [tool_def("get_weather")]
CALL = [
    chunk({"role": "assistant"}),
    chunk(calls(tc(0, "call_1", "get_weather", type="function"))),
    chunk(calls(tc(0, args=A1))),
    chunk(calls(tc(0, args=A2))),
    chunk({}, "tool_calls"),
]
EVENTS = [e + b"\n\n" for e in sse_body(CALL).split(b"\n\n") if e]  # (with [DONE])
CUT = EVENTS[3][:30]  # the fourth event, cut inside its data


def _recording(path, reads: list[bytes], reason: str | None, error=None, headers=()) -> str:
    """A recording of one Chat Completions exchange (None: no end line)."""
    with RecordingWriter(path, redact=False) as w:
        x = w.new_exchange()
        body = {"model": "m", "stream": True, "messages": [], "tools": TOOLS}
        url = "https://api.test/v1/chat/completions"
        w.request(x, "POST", url, [("content-type", "application/json")], json.dumps(body).encode())
        w.response(x, 200, [("content-type", "text/event-stream"), *headers])
        for r in reads:
            w.chunk(x, r)
        if reason is not None:
            w.end(x, reason, error)
    return str(path)


ANTHROPIC_LOG = os.path.join(FIXTURES, "anthropic", "vercel-ai-text-then-tool-use.jsonl")
GEMINI_ARRAY = os.path.join(FIXTURES, "gemini-array", "two-calls.json")


def _lines(path: str) -> list[bytes]:
    with open(path, "rb") as f:
        return f.read().splitlines(True)


def _array() -> bytes:
    with open(GEMINI_ARRAY, "rb") as f:
        return f.read()


ENDINGS = {  # name: (file name, how it is made)
    "SSE cut in an event": ("cut.sse", lambda p: p.write_bytes(b"".join(EVENTS[:3]) + CUT)),
    "SSE cut after a comment": (
        "comment.sse",
        lambda p: p.write_bytes(b"".join(EVENTS[:3]) + b": ping\n\n" + CUT),
    ),
    "chunk log cut in a line": (
        "cut.jsonl",
        lambda p: p.write_bytes(
            b"".join(json.dumps(c).encode() + b"\n" for c in CALL[:3])
            + json.dumps(CALL[3])[:30].encode()
        ),
    ),
    "Anthropic chunk log cut": (
        "anthropic.jsonl",
        lambda p: p.write_bytes(
            b"".join(_lines(ANTHROPIC_LOG)[:-3]) + _lines(ANTHROPIC_LOG)[-3][:20]
        ),
    ),
    "JSON array cut in an element": (
        "cut.json",
        lambda p: p.write_bytes(_array()[: len(_array()) * 2 // 3]),
    ),
    "JSON array never closed": (
        "open.json",
        lambda p: p.write_bytes(_array().rstrip().rstrip(b"]")),
    ),
    "recording cut in an event": (
        "tail.jsonl",
        lambda p: _recording(p, EVENTS[:3] + [CUT], "complete"),
    ),
    "connection failed": (
        "failed.jsonl",
        lambda p: _recording(p, EVENTS[:3], "upstream-error", "connection reset by peer"),
    ),
    "client closed": ("closed.jsonl", lambda p: _recording(p, EVENTS[:3], "client-closed")),
    "no end line": ("unfinished.jsonl", lambda p: _recording(p, EVENTS[:3], None)),
}


@pytest.mark.parametrize("how", ENDINGS)
def test_a_minimal_stream_ends_as_the_stream_did(how, tmp_path):
    name, make = ENDINGS[how]
    path = tmp_path / name
    make(path)
    exchange = _first(str(path))
    told, found = _found(str(path), exchange)
    assert "stream-truncated" in found
    fmt = "recording" if exchange is not None else "sse"
    got = export(str(path), fmt, exchange=exchange, minimal=True)
    assert got.notes == ()
    out = tmp_path / ("minimal" + ("" if exchange is not None else os.path.splitext(name)[1]))
    out.write_bytes(got.data)
    assert _found(str(out), 1 if exchange is not None else None) == (told, found)
    assert analyze(str(out)).streams[0].ended == analyze(str(path)).streams[0].ended


def test_the_unfinished_event_is_written_as_it_was_received(tmp_path):
    """The bytes after the last frame, comments and all, end the minimal stream."""
    path = tmp_path / "cut.sse"
    path.write_bytes(b"".join(EVENTS[:3]) + b": ping\n\n" + CUT)
    assert export(str(path), "sse", minimal=True).data.endswith(b"\n\n: ping\n\n" + CUT)


def test_a_recording_keeps_its_end_line_as_recorded(tmp_path):
    """Its reason and error, or none where the recording stops before it; the whole
    exchange exported as a recording too (it wrote `complete`)."""
    failed = _recording(tmp_path / "f.jsonl", EVENTS[:3], "upstream-error", "reset")
    for minimal in (True, False):
        last = json.loads(export(failed, "recording", minimal=minimal).data.splitlines()[-1])
        assert (last["type"], last["reason"], last["error"]) == ("end", "upstream-error", "reset")
        unfinished = _recording(tmp_path / f"u{minimal}.jsonl", EVENTS[:3], None)
        last = json.loads(export(unfinished, "recording", minimal=minimal).data.splitlines()[-1])
        assert last["type"] == "chunk"


def test_an_end_the_written_stream_cannot_hold_is_left_out_and_said(tmp_path):
    """A compressed body cut inside its gzip stream is written decoded; a bare body holds
    no recorded end; a chunk log holds whole events: the minimal stream then ends after
    its last frame, the search judges it so, and a note says what was left out."""
    data = gzip.compress(b"".join(EVENTS))[:-12]  # (its gzip trailer and more gone)
    cut = _recording(
        tmp_path / "gz.jsonl", [data], "complete", headers=[("content-encoding", "gzip")]
    )
    assert "stream-truncated" in _found(cut, 1)[1]
    got = export(cut, "recording", minimal=True)
    assert any("gzip" in n and "ends after its last frame" in n for n in got.notes)
    (tmp_path / "gz-min.jsonl").write_bytes(got.data)
    assert "stream-truncated" not in _found(str(tmp_path / "gz-min.jsonl"), 1)[1]
    failed = _recording(tmp_path / "f.jsonl", EVENTS[:3], "upstream-error")
    assert any("upstream-error" in n for n in export(failed, "sse", minimal=True).notes)
    (tmp_path / "cut.sse").write_bytes(b"".join(EVENTS[:3]) + CUT)
    got = export(str(tmp_path / "cut.sse"), "chunks", minimal=True)
    assert any("another framing" in n for n in got.notes) and got.data.endswith(b"}\n")


def test_a_responses_error_event_keeps_what_tells_its_dialect(tmp_path):
    """Alone, `{"type": "error", ...}` is Anthropic's error event as much as the Responses
    API's: its `sequence_number` tells which, and stays."""
    path = os.path.join(FIXTURES, "responses", "vercel-ai-error-event-only.sse")
    data = export(path, "sse", minimal=True).data
    assert b'"sequence_number"' in data
