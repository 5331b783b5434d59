"""Gemini streamed without `alt=sse` (one JSON array, an element a read) through the
recorder: a client that leaves once it has the array's closing `]` ended a complete
stream (the proxy and the in-process transport alike), one that leaves before it did
not; the recording reads back as Gemini in the json-array framing, with its calls."""

from __future__ import annotations

import json

import httpx2
import pytest

from streamscope import recording_transport
from streamscope.analysis import analyze
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter

from .gemini_stream import CALLS, MODEL, QUESTION
from .test_recorder import ends
from .test_recorder_responses import end_of
from .upstream import Upstream as StandIn

BODY = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}]}
PATH = f"/v1beta/models/{MODEL}:streamGenerateContent"


@pytest.fixture(scope="module")
def holding():
    """A provider that holds each body open for 0.5 s after its closing `]`."""
    with StandIn(pace=0.01, tail_pause=0.5) as up:
        yield up


def read_until(response, leave_at: bytes) -> bytes:
    """The body read until it holds `leave_at` (the client then leaves)."""
    got = b""
    for data in response.iter_bytes():
        got += data
        if leave_at in got:
            break
    return got


@pytest.mark.parametrize("leave_at, reason", [(b"\n]", "complete"), (b"\n,", "client-closed")])
def test_a_client_leaving_after_the_closing_bracket_ended_a_complete_stream(
    tmp_path, holding, leave_at, reason
):
    path = tmp_path / "array.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(holding.url),
            writer,
            timeout=30,
            sides={"gemini": Upstream.parse(holding.url.removesuffix("/v1")), "vertex": None},
        )
        server.start()
        try:
            url = server.base_url_of("gemini") + PATH
            with httpx2.Client() as client, client.stream("POST", url, json=BODY) as response:
                assert response.headers["content-type"] == "application/json"
                read_until(response, leave_at)
            end = end_of(path, 1)
        finally:
            server.stop()
    assert end.reason == reason
    (stream,) = analyze(path).streams
    assert (stream.dialect, stream.framing) == ("gemini", "json-array")
    if reason == "complete":
        assert [(c.name, json.loads(c.arguments)) for c in stream.tool_calls] == [
            (c["name"], c["args"]) for c in CALLS
        ]


@pytest.mark.parametrize("leave_at, reason", [(b"\n]", "complete"), (b"\n,", "client-closed")])
def test_the_recording_transport_tells_the_array_end_too(tmp_path, holding, leave_at, reason):
    path = tmp_path / "array.jsonl"
    url = holding.url.removesuffix("/v1") + PATH
    with (
        httpx2.Client(transport=recording_transport(path)) as client,
        client.stream("POST", url, json=BODY) as response,
    ):
        read_until(response, leave_at)
    assert ends(path)[1].reason == reason
