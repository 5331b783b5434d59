"""`export --format recording` writes a recording as the recorder would: a HAR's or a
--no-redact recording's secrets are masked on the way out, and counted."""

from __future__ import annotations

import base64
import json

import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.recording import RecordingIndex, RecordingWriter, iter_records
from streamscope.recording.format import Request

from .test_har import SECRET, entry, write

BODY_KEY = "sk-har-body-key-0043"
REQUEST = json.dumps({"model": "m", "api_key": BODY_KEY, "messages": [], "stream": True})


def har(tmp_path) -> str:
    """One chat call whose key is in its header and its postData, the stream echoing both
    (and the header's key base64-encoded)."""
    said = f"{SECRET} {BODY_KEY} {base64.b64encode(SECRET.encode()).decode()}"
    delta = {"index": 0, "delta": {"content": said}, "finish_reason": None}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    body = b"data: " + json.dumps({**chunk, "choices": [delta]}).encode() + b"\n\n"
    body += b"data: [DONE]\n\n"
    e = entry("https://api.test/v1/chat/completions", REQUEST.encode(), body, False, 0)
    doc = {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [e]}}
    return write(tmp_path, "keys.har", doc)


def export(*args: str) -> None:
    done = CliRunner().invoke(main, ["export", *args])
    assert done.exit_code == 0, done.output


def masked(path) -> int:
    return json.loads(CliRunner().invoke(main, ["inspect", "--json", str(path)]).output)["masked"]


def leaked(path) -> list[str]:
    text = path.read_text()
    b64 = base64.b64encode(SECRET.encode()).decode()
    return [s for s in (SECRET, BODY_KEY, b64) if s in text]


@pytest.mark.parametrize("which", [[], ["--exchange", "1"]], ids=["whole", "one-exchange"])
def test_a_hars_keys_are_masked_when_exported_as_a_recording(tmp_path, which):
    out = tmp_path / "out.jsonl"
    export(har(tmp_path), *which, "--format", "recording", "-o", str(out))
    assert leaked(out) == []
    (request,) = [r for _, r in iter_records(out) if isinstance(r, Request)]
    assert len(request.body_bytes) == len(REQUEST)  # masked in place, its length kept
    assert json.loads(request.body_bytes)["api_key"].startswith("[REDACTED")
    # header 1, postData 1; the stream: both keys and the base64 form
    assert masked(out) == 5
    text = CliRunner().invoke(main, ["inspect", str(out)]).output
    assert "5 values masked (secrets" in text


def test_a_recording_made_without_masking_is_masked_when_exported(tmp_path):
    source, out = tmp_path / "clear.jsonl", tmp_path / "out.jsonl"
    with RecordingWriter(source, redact=False) as w:
        x = w.new_exchange()
        headers = [("authorization", f"Bearer {SECRET}")]
        w.request(x, "POST", "https://api.test/v1/chat/completions", headers, b'{"model":"m"}')
        w.response(x, 200, [("content-type", "text/event-stream")])
        first = b'data: {"choices":[{"index":0,"delta":{"content":"key sk-har-'
        second = b'secret-0042"}}]}\n\ndata: [DONE]\n\n'
        w.chunk(x, first)  # the key split over two reads
        w.chunk(x, second)
        w.end(x, "complete")
    assert SECRET in source.read_text()  # --no-redact: the user's choice, kept
    export(str(source), "--format", "recording", "-o", str(out), "--exchange", "1")
    assert leaked(out) == [] and masked(out) == 2  # the header, the echo
    with RecordingIndex.open(out) as index:
        reads = [c.data_bytes for c in index.chunks(1)]
    assert [len(r) for r in reads] == [len(first), len(second)]  # the reads as they came


@pytest.mark.parametrize(
    "fmt, extra",
    [
        ("sse", []),
        ("sse", ["--frames", "1-1"]),
        ("chunks", []),
        ("pytest", []),
    ],
)
def test_every_export_of_a_har_masks_its_keys_and_says_how_many(tmp_path, fmt, extra):
    out = tmp_path / f"out.{fmt}"
    done = CliRunner().invoke(
        main, ["export", har(tmp_path), "--format", fmt, *extra, "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    assert leaked(out) == []
    assert "3 values masked (secrets the request carried)" in done.stderr
    assert "[REDACTED" in out.read_text()


def test_an_export_keeps_the_session_ids_and_masks_the_session_tokens(tmp_path):
    """The ids an agent's own logs name its session by survive export; its tokens do not."""
    source, out = tmp_path / "clear.jsonl", tmp_path / "out.jsonl"
    session = "0195f3a8-6c2e-7d41-9b0a-3f5e8c1d2a47"
    headers = [
        ("x-claude-code-session-id", session),
        ("session_id", session),
        ("X-Amz-Security-Token", "s80-amz-security-token"),
    ]
    body = json.dumps(
        {"model": "m", "prompt_cache_key": session, "session_token": "s81-body-session-token"}
    ).encode()
    with RecordingWriter(source, redact=False) as w:
        x = w.new_exchange()
        w.request(x, "POST", f"https://api.test/v1/responses?thread-id={session}", headers, body)
        w.response(x, 200, [("content-type", "text/event-stream")])
        w.chunk(x, b"data: s80-amz-security-token\n\n")
        w.end(x, "complete")
    export(str(source), "--format", "recording", "-o", str(out))
    text = out.read_text()
    assert "s80-amz-security-token" not in text and "s81-body-session-token" not in text
    (request,) = [r for _, r in iter_records(out) if isinstance(r, Request)]
    assert request.url.endswith(f"?thread-id={session}")
    assert request.headers[:2] == headers[:2] and request.headers[2][1] == "[REDACTED]"
    assert json.loads(request.body_bytes)["prompt_cache_key"] == session
    assert masked(out) == 3  # the header, the body's token, the echo
