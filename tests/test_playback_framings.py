"""`serve` and `playback_transport` answer a Gemini stream in the framing its request
asked for, whatever the recording's: `alt=sse` gets SSE, no `alt=sse` one JSON array
(application/json); the same bytes as recorded when the framings agree, the events
written again when they do not, and `inspect` reads either back with the same calls.
A saved JSON-array body is served too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import orjson
import pytest

from streamscope.framing import content_type
from streamscope.playback import playback_transport
from streamscope.playback.serve import ServeServer
from streamscope.providers import GOOGLE
from streamscope.recording import RecordingIndex, iter_records
from streamscope.recording.format import Request

from .gemini_stream import array_reads, turn

SAMPLE = "recordings/gemini-parallel-signature.jsonl"  # recorded with alt=sse


def recorded_request(path: str) -> Request:
    return next(r for _, r in iter_records(path) if isinstance(r, Request))


def inspect_calls(path) -> list[tuple[str, str, str]]:
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    (stream,) = json.loads(done.stdout)["streams"][:1]
    return [(c["name"], c["arguments"], stream["framing"]) for c in stream["tool_calls"]]


def sample_calls() -> list[tuple[str, str]]:
    return [(n, a) for n, a, _ in inspect_calls(SAMPLE)]


def post(client: httpx2.Client, url: str, request: Request, sse: bool) -> httpx2.Response:
    params = {"alt": "sse"} if sse else {}
    return client.post(url.split("?")[0], params=params, content=request.body_bytes)


@pytest.fixture(scope="module")
def served():
    with ServeServer([SAMPLE]) as server:
        yield server


@pytest.mark.parametrize("mode", ["serve", "transport"])
def test_an_array_request_gets_a_json_array_with_the_same_calls(tmp_path, served, mode):
    request = recorded_request(SAMPLE)
    path = request.url.split("googleapis.com", 1)[1]
    if mode == "serve":
        client, url = httpx2.Client(), served.base_url_for(GOOGLE) + path
    else:
        client, url = httpx2.Client(transport=playback_transport(SAMPLE)), request.url
    with client:
        response = post(client, url, request, sse=False)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type("json-array")
    body = response.content
    assert body.startswith(b"[{") and body.endswith(b"}]") and b"data:" not in body
    assert len(orjson.loads(body)) >= 2  # one JSON document, an element an event
    saved = tmp_path / "answer.json"
    saved.write_bytes(body)
    assert inspect_calls(saved) == [(n, a, "json-array") for n, a in sample_calls()]


def test_an_sse_request_gets_the_recorded_bytes(served):
    request = recorded_request(SAMPLE)
    path = request.url.split("googleapis.com", 1)[1]
    with httpx2.Client() as client:
        response = post(client, served.base_url_for(GOOGLE) + path, request, sse=True)
    assert response.headers["content-type"].startswith(content_type("sse"))
    with RecordingIndex.open(SAMPLE) as index:
        recorded = b"".join(c.data_bytes for c in index.chunks(1))
    assert response.content == recorded


@pytest.fixture()
def array_recording(tmp_path):
    """The sample's first turn recorded as Google streams it without alt=sse."""
    request = recorded_request(SAMPLE)
    body = request.json_body()
    reads = array_reads(body)
    saved = tmp_path / "array.json"
    saved.write_bytes(b"".join(reads))
    return saved, request, turn(body)


@pytest.mark.parametrize("sse", [True, False])
def test_a_saved_json_array_body_is_served_in_either_framing(tmp_path, array_recording, sse):
    saved, request, docs = array_recording
    path = request.url.split("googleapis.com", 1)[1]
    with ServeServer([str(saved)]) as server, httpx2.Client() as client:
        response = post(client, server.base_url_for(GOOGLE) + path, request, sse=sse)
    assert response.status_code == 200, response.text
    out = tmp_path / ("answer.sse" if sse else "answer.json")
    out.write_bytes(response.content)
    if sse:
        assert response.headers["content-type"] == content_type("sse")
        assert response.content == b"".join(b"data: " + orjson.dumps(d) + b"\r\n\r\n" for d in docs)
    else:  # the framing agrees: the bytes as saved
        assert response.content == saved.read_bytes()
    framing = "sse" if sse else "json-array"
    assert inspect_calls(out) == [(n, a, framing) for n, a, _ in inspect_calls(saved)]
    assert inspect_calls(saved)  # the calls are there to compare


def test_a_stream_the_recorded_client_left_is_not_closed_when_written_again(tmp_path):
    """The bytes show no end: an array written from them claims none (no closing ])."""
    left = tmp_path / "left.jsonl"
    lines = []
    for line in Path(SAMPLE).read_bytes().splitlines():
        d = orjson.loads(line)
        if d.get("type") == "end" and d.get("exchange") == 1:
            d["reason"] = "client-closed"
        lines.append(orjson.dumps(d))
    left.write_bytes(b"\n".join(lines) + b"\n")
    request = recorded_request(str(left))
    with httpx2.Client(transport=playback_transport(str(left))) as client:
        body = post(client, request.url, request, sse=False).content
    assert body.startswith(b"[{") and not body.rstrip().endswith(b"]")
