"""Every face shows what `export` writes: the credentials a --no-redact recording, a HAR or a
cassette holds in clear (its headers, its `?key=` query, its command line) are masked
wherever the file holds them, when it is read (inputs/masking.py), in every encoding the
recorder masks; a key a model echoes token by token across two events too."""

from __future__ import annotations

import base64
import json

import httpx
import orjson
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.cli import main
from streamscope.inputs import open_input
from streamscope.playback.library import playback_transport
from streamscope.recording import RecordingWriter
from streamscope.recording.mask import Secrets, mask_pieces

from .test_har import entry, write

KEY = "AIzaSyFaces0123456789abcdefghijklmnopq"
ARGV_KEY = "sk-proj-argvFaces0123456789abcdefghij"
SESSION = "sess-faces-4242-keep-me"
URL = f"https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key={KEY}"
CHAT = "https://api.openai.com/v1/chat/completions"


def delta(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    event = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return b"data: " + orjson.dumps({**event, "choices": [choice]}) + b"\n\n"


def split_echo(key: str) -> list[bytes]:
    """A stream whose deltas spell the key across two events ("echo sk", "-proj-...")."""
    return [delta("echo " + key[:2]), delta(key[2:] + " ok"), b"data: [DONE]\n\n"]


def recording(tmp_path) -> str:
    """A --no-redact recording: a Gemini call whose 401 echoes its ?key= (plain and
    base64) and a chat stream, keyed on its command line, that echoes that key token by
    token."""
    path = str(tmp_path / "clear.jsonl")
    with RecordingWriter(path, argv=["agent", "--api-key", ARGV_KEY], redact=False) as w:
        ex = w.new_exchange()
        body = json.dumps({"contents": [], "session_id": SESSION}).encode()
        w.request(ex, "POST", URL, [("x-goog-api-key", KEY)], body)
        w.response(ex, 401, [("content-type", "application/json")])
        said = f"API key not valid: {KEY} ({base64.b64encode(KEY.encode()).decode()})"
        w.chunk(ex, json.dumps({"error": {"code": 401, "message": said}}).encode())
        w.end(ex, "complete", f"HTTP 401: {said}")
        ex = w.new_exchange()
        chat = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
        w.request(ex, "POST", CHAT, [("content-type", "application/json")], chat)
        w.response(ex, 200, [("content-type", "text/event-stream")])
        for read in split_echo(ARGV_KEY):
            w.chunk(ex, read)
        w.end(ex, "complete")
    return path


def leaks(text: str) -> list[str]:
    b64 = base64.b64encode(KEY.encode()).decode()
    return [s for s in (KEY, b64, ARGV_KEY, ARGV_KEY[2:], KEY[4:]) if s in text]


def test_inspect_text_and_json_show_no_credential_of_a_no_redact_recording(tmp_path):
    path = recording(tmp_path)
    for args in (["inspect", path], ["inspect", "--json", path], ["inspect", "--full", path]):
        done = CliRunner().invoke(main, args)
        assert leaks(done.output) == [], args
    report = json.loads(CliRunner().invoke(main, ["inspect", "--json", path]).output)
    assert report["masked"] >= 6  # query, header, argv, the body's echoes, the split key


def test_every_read_of_the_file_is_masked_and_ids_stay(tmp_path):
    path = recording(tmp_path)
    with open_input(path) as source:  # what replay, serve, scan, diff and export read
        assert ARGV_KEY not in " ".join(source.header.argv or [])
        first, second = source.exchange(1), source.exchange(2)
        assert first.request is not None and first.end is not None
        shown = first.request.url + repr(first.request.headers) + first.end.error
        body = b"".join(d for d, _ in first.wire.reads_from(0, len(first.wire)))
        assert leaks(shown + body.decode()) == []
        assert SESSION in first.request.body_bytes.decode()  # an identifier, no credential
        stream = b"".join(d for d, _ in second.reads.reads_from(0, len(second.reads)))
        assert leaks(stream.decode()) == []
        assert b"echo **" in stream and second.body_masked == 1
        text = "".join(f.data for f in second.frames())
        assert "[DONE]" in text  # the events still parse, every length kept
        assert len(stream) == len(b"".join(split_echo(ARGV_KEY)))


def test_scan_diff_and_the_reports_show_no_credential(tmp_path):
    path = recording(tmp_path)
    runs = [
        ["scan", "--jsonl", path],
        ["diff", "--json", f"{path}#2", f"{path}#2"],
        ["export", path, "--exchange", "2", "--format", "md"],
        ["export", path, "--exchange", "2", "--format", "html"],
    ]
    for args in runs:
        done = CliRunner().invoke(main, args)
        assert done.output and leaks(done.output) == [], args


def test_follow_and_live_read_the_file_masked(tmp_path):
    from streamscope.analysis.driver import FollowedSummaries
    from streamscope.analysis.live import LiveFindings

    path = recording(tmp_path)
    rows = FollowedSummaries(path).update()
    assert len(rows) == 2 and leaks(repr(rows)) == []
    assert leaks(repr(LiveFindings(path).update(final=True))) == []


def test_a_gzipped_echo_in_a_no_redact_recording_is_read_decoded_and_masked(tmp_path):
    import gzip

    said = json.dumps({"error": {"message": f"API key not valid: {KEY}"}}).encode()
    path = str(tmp_path / "gz.jsonl")
    with RecordingWriter(path, redact=False) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", URL, [("x-goog-api-key", KEY)], b'{"contents": []}')
        w.response(ex, 401, [("content-type", "application/json"), ("content-encoding", "gzip")])
        w.chunk(ex, gzip.compress(said))
        w.end(ex, "complete")
    with open_input(path) as source:
        x = source.exchange(1)
        assert x.response is not None and x.end is not None
        assert "content-encoding" not in repr(x.response.headers).lower()
        body = b"".join(d for d, _ in x.reads.reads_from(0, len(x.reads)))
        assert b"API key not valid: [REDACTED" in body and x.end.masked == 1
    shown = CliRunner().invoke(main, ["inspect", path]).output
    assert "API key not valid" in shown and leaks(shown) == []


def test_serve_sends_no_echoed_key(tmp_path):
    path = recording(tmp_path)
    with httpx.Client(transport=playback_transport(path, exchange=1)) as client:
        got = client.post(URL.replace(KEY, "other-key-000000"), json={"contents": []})
    assert got.status_code == 401
    assert leaks(got.text + repr(got.headers)) == []


def test_a_hars_query_key_and_its_echo_are_masked_in_inspect(tmp_path):
    said = json.dumps({"error": {"message": f"API key not valid: {KEY}"}}).encode()
    e = entry(URL, b'{"contents": []}', said, False, 0)
    e["response"]["status"] = 400
    e["response"]["headers"] = [{"name": "Content-Type", "value": "application/json"}]
    e["response"]["content"]["mimeType"] = "application/json"
    doc = {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [e]}}
    har = write(tmp_path, "key.har", doc)
    for args in (["inspect", har], ["inspect", "--json", har]):
        assert leaks(CliRunner().invoke(main, args).output) == [], args


def test_a_key_split_across_two_deltas_is_masked_in_each():
    reads = split_echo(ARGV_KEY)
    pieces, counts = mask_pieces(Secrets([ARGV_KEY]), reads)
    assert sum(counts) == 1 and [len(p) for p in pieces] == [len(r) for r in reads]
    text = "".join(
        json.loads(p[6:])["choices"][0]["delta"]["content"] for p in pieces[:2]
    )  # each event still parses, the assembled content masked
    assert ARGV_KEY[2:] not in text and text.startswith("echo **")
    # its JSON-escaped pieces too (a delta holding "\u002d" for "-")
    escaped = [reads[0], reads[1].replace(b'"-proj', b'"\\u002dproj')]
    pieces, counts = mask_pieces(Secrets([ARGV_KEY]), escaped)
    assert sum(counts) == 1 and b"proj" not in pieces[1]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_a_key_split_at_any_points_across_deltas_is_masked_in_every_reader(data):
    """Whatever points split the key into deltas (2 characters or more first), and
    whatever reads cut the stream: the recorder's masking (read by read) and the
    readers' (whole) mask it in the assembled content, every length kept."""
    from streamscope.recording.mask import BodyStream

    key = ARGV_KEY
    cuts = sorted(data.draw(st.sets(st.integers(2, len(key) - 1), min_size=1, max_size=4)))
    parts = [key[a:b] for a, b in zip([0, *cuts], [*cuts, len(key)], strict=True)]
    events = [delta("echo " + parts[0]), *map(delta, parts[1:]), b"data: [DONE]\n\n"]
    body = b"".join(events)
    bounds = sorted(data.draw(st.sets(st.integers(1, len(body) - 1), max_size=5)))
    reads = [body[a:b] for a, b in zip([0, *bounds], [*bounds, len(body)], strict=True)]
    secrets = Secrets([key, f"Bearer {key}"])
    stream = BodyStream(secrets)
    recorded = [d for r in reads for _, d in stream.feed(0, r)] + [d for _, d in stream.finish()]
    read, _ = mask_pieces(secrets, reads)
    for pieces in (recorded, read):
        assert [len(p) for p in pieces] == [len(r) for r in reads]
        whole = b"".join(pieces)
        text = "".join(
            json.loads(e[6:])["choices"][0]["delta"]["content"]
            for e in whole.split(b"\n\n")
            if e.startswith(b"data: {")
        )
        assert key[2:] not in text and key[:3] not in text
