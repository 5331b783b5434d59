"""Gemini's JSON-array stream through every face: a saved body (plain or gzip), a
recording (its body gzip-encoded, as Google sends it) and a HAR entry are read as
`gemini` in the `json-array` framing by inspect, inspect --json, export and the replay;
bad arrays are findings or one line, never a traceback or a hang."""

from __future__ import annotations

import base64
import gzip
import os
import zlib
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.recording.writer import RecordingWriter

FIXTURE = Path(__file__).parent.parent / "fixtures" / "gemini-array" / "two-calls.json"
BODY = FIXTURE.read_bytes()
CALLS = [
    ("get_weather", '{"city":"Paris","unit":"celsius"}'),
    ("get_time", '{"zone":"Europe/Paris"}'),
]
URL = (
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent"
)
REQUEST = orjson.dumps({"contents": [{"role": "user", "parts": [{"text": "weather?"}]}]})
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def calls_of(path: Path, exchange: int | None = None) -> list[tuple[str, str]]:
    got = run("inspect", "--json", str(path))
    assert got.exit_code == 0, got.output
    doc = orjson.loads(got.output)
    (stream,) = [s for s in doc["streams"] if exchange in (None, s["exchange"])]
    assert stream["dialect"] == "gemini" and stream["framing"] == "json-array", stream
    return [(c["name"], c["arguments"]) for c in stream["tool_calls"]]


def recording(path: Path, body: bytes, url: str = URL, encoded: bool = True) -> Path:
    headers = [("content-type", "application/json; charset=UTF-8")]
    pieces = [body[k : k + 97] for k in range(0, len(body), 97)]
    if encoded:  # one flushed gzip piece a read, as a streaming server writes it
        headers.append(("content-encoding", "gzip"))
        c = zlib.compressobj(wbits=31)
        pieces = [c.compress(p) + c.flush(zlib.Z_SYNC_FLUSH) for p in pieces] + [c.flush()]
    with RecordingWriter(str(path), overwrite=True) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", url, [("content-type", "application/json")], REQUEST, t_ns=0)
        w.response(ex, 200, headers, t_ns=1000)
        for k, p in enumerate(pieces):
            w.chunk(ex, p, t_ns=2000 + k)
        w.end(ex, "complete", t_ns=10_000)
    return path


def test_a_saved_body_plain_or_gzip_is_read_as_gemini(tmp_path):
    assert calls_of(FIXTURE) == CALLS
    gz = tmp_path / "body.json.gz"
    gz.write_bytes(gzip.compress(BODY))
    assert calls_of(gz) == CALLS
    text = run("inspect", str(FIXTURE))
    assert text.exit_code == 0 and "Gemini in a JSON array" in text.output


def test_a_recording_of_a_gzip_json_array_is_a_gemini_stream(tmp_path):
    path = recording(tmp_path / "rec.jsonl", BODY)
    assert calls_of(path) == CALLS
    # asked with alt=sse, an application/json body is no stream: its calls are not read
    sse = recording(tmp_path / "sse.jsonl", BODY, URL + "?alt=sse")
    assert analyze(str(sse)).streams == []


def test_a_har_entry_holding_a_json_array_is_a_gemini_stream(tmp_path):
    entry = {
        "startedDateTime": "2025-01-01T00:00:00Z",
        "time": 10,
        "request": {
            "method": "POST",
            "url": URL,
            "headers": [],
            "postData": {"mimeType": "application/json", "text": REQUEST.decode()},
        },
        "response": {
            "status": 200,
            "headers": [{"name": "content-type", "value": "application/json"}],
            "content": {
                "mimeType": "application/json",
                "encoding": "base64",
                "text": base64.b64encode(BODY).decode(),
            },
        },
        "timings": {"send": 1, "wait": 1, "receive": 8},
    }
    path = tmp_path / "x.har"
    path.write_bytes(orjson.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    assert calls_of(path) == CALLS


def test_export_sse_and_recording_of_a_json_array(tmp_path):
    out = tmp_path / "out.jsonl"
    got = run("export", str(FIXTURE), "--format", "recording", "-o", str(out))
    assert got.exit_code == 0, got.output
    (stream,) = analyze(str(out)).streams
    assert [(c.name, c.arguments) for c in stream.tool_calls] == CALLS
    # the body as the client read it (gzip undone): the array, every byte, read again alike
    sse = tmp_path / "body.json"
    got = run(
        "export", str(recording(tmp_path / "r.jsonl", BODY)), "--format", "sse", "-o", str(sse)
    )
    assert got.exit_code == 0 and sse.read_bytes() == BODY, got.output
    got = run(
        "export",
        str(FIXTURE),
        "--format",
        "recording",
        "--minimal",
        "-o",
        str(tmp_path / "m.jsonl"),
    )
    assert got.exit_code == 0, got.output


@pytest.mark.parametrize(
    "body, said",
    [
        (BODY[:-3], "stream-truncated"),  # never closed
        (BODY + b"]", "frame-invalid"),  # closed twice
        (b"[" + BODY[1:].replace(b"\n,\r\n", b"\n,\r\n42,\r\n", 1), "frame-invalid"),  # no object
        (b'"index": tru'.join(BODY.rsplit(b'"index": 0', 1)), "frame-invalid"),  # not JSON
    ],
)
def test_bad_arrays_are_findings_at_their_frame_in_every_face(tmp_path, body, said):
    path = tmp_path / "bad.json"
    path.write_bytes(body)
    doc = run("inspect", "--json", str(path))
    assert doc.exception is None or isinstance(doc.exception, SystemExit), doc.output
    kinds = [a["kind"] for s in orjson.loads(doc.output)["streams"] for a in s["anomalies"]]
    assert said in kinds
    text = run("inspect", str(path))
    assert said in text.output and "Traceback" not in text.output
    rec = recording(tmp_path / "bad.jsonl", body)
    kinds = [a.kind for s in analyze(str(rec)).streams for a in s.anomalies]
    assert said in kinds
    got = run("export", str(path), "--format", "sse")
    assert (
        "Traceback" not in got.output
        and got.exception is None
        or isinstance(got.exception, SystemExit)
    )


def test_a_file_whose_first_element_is_no_event_is_one_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(BODY.replace(b'"index": 0', b'"index": tru', 1))
    got = run("inspect", str(path))
    assert (
        got.exit_code == 2 and str(path) in got.output and len(got.output.strip().splitlines()) == 1
    )


def test_a_gzip_body_cut_short_is_one_finding(tmp_path):
    whole = gzip.compress(BODY * 1)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    got = run("inspect", "--json", str(cut))
    assert got.exception is None or isinstance(got.exception, SystemExit), got.output
    kinds = [a["kind"] for s in orjson.loads(got.output)["streams"] for a in s["anomalies"]]
    assert "stream-truncated" in kinds
    rec = recording(tmp_path / "cut.jsonl", BODY)
    lines = rec.read_bytes().splitlines()
    rec.write_bytes(b"\n".join(lines[:-4] + lines[-1:]) + b"\n")  # the last pieces lost
    (stream,) = analyze(str(rec)).streams
    assert stream.ended == "truncated"


def test_huge_and_deep_arrays_do_not_blow_up(tmp_path):
    element = orjson.dumps(orjson.loads(BODY)[0])
    many = tmp_path / "many.json"
    many.write_bytes(b"[" + b",\r\n".join([element] * 100_000) + b"]")
    got = run("inspect", "--json", str(many))
    assert got.exit_code == 0 and orjson.loads(got.output)["streams"][0]["frames"] == 100_000
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" + element + b"," + b'{"a":' * 10_000 + b"1" + b"}" * 10_000 + b"]")
    got = run("inspect", "--json", str(deep))
    kinds = [a["kind"] for a in orjson.loads(got.output)["streams"][0]["anomalies"]]
    assert "chunk-invalid-json" in kinds


async def test_the_replay_steps_through_a_json_array(tmp_path):
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import StreamScreen

    app = ReplayApp(str(recording(tmp_path / "rec.jsonl", BODY)), exchange=1)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(200):
            if isinstance(app.screen, StreamScreen):
                break
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, StreamScreen)
        await pilot.press("end")
        assert screen.frame == screen.model.total == 3
        assert os.path.exists(tmp_path / "rec.jsonl")
