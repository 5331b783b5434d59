"""`streamscope serve` (a mock provider on 127.0.0.1) and `playback_transport` (no server),
driven by the real openai client: same bytes, same chunking, matching, order, timing."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import subprocess
import sys
import time

import httpx
import httpx2
import openai
import orjson
import pytest

from streamscope.playback import playback_transport
from streamscope.playback.library import Library
from streamscope.playback.serve import ServeServer
from streamscope.recording import RecordingIndex, RecordingWriter
from streamscope.recording.format import RecordingError

from .helpers import serve_command, sse_body

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
OPENAI = os.path.join(ROOT, "openai.jsonl")
ALIBABA = os.path.join(ROOT, "alibaba-empty-id.jsonl")
GEMINI = os.path.join(ROOT, "gemini-no-index.sse")
DEEPSEEK = os.path.join(ROOT, "deepseek-cumulative.chunks.jsonl")
MODES = ["server", "httpx2", "httpx"]  # a mock provider, or the transport in each client
ANY = {"model": "whatever", "messages": [{"role": "user", "content": "unrelated"}], "stream": True}


def reads(path: str, exchange: int) -> list[bytes]:
    with RecordingIndex.open(path) as index:
        return [c.data_bytes for c in index.chunks(exchange)]


def request(path: str, exchange: int) -> dict:
    with RecordingIndex.open(path) as index:
        return index.line(index.exchange(exchange).request).json_body()


def gemini_bytes() -> bytes:
    with open(GEMINI, "rb") as f:
        return f.read()


def chunk_log_body(path: str) -> bytes:
    with open(path, "rb") as f:
        lines = [line.strip() for line in f if line.strip()]
    return b"".join(b"data: " + line + b"\n\n" for line in lines) + b"data: [DONE]\n\n"


def payloads(body: bytes) -> list[dict]:
    """The JSON chunks of an SSE body (the test's own parse, not the code's)."""
    out = []
    for line in body.replace(b"\r\n", b"\n").split(b"\n"):
        if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
            out.append(orjson.loads(line[5:]))
    return out


# Expected: (file, the request to send, the body that must come back)
SAMPLES = {
    "openai-1": (OPENAI, lambda: request(OPENAI, 1), lambda: b"".join(reads(OPENAI, 1))),
    "openai-2": (OPENAI, lambda: request(OPENAI, 2), lambda: b"".join(reads(OPENAI, 2))),
    "alibaba-1": (ALIBABA, lambda: request(ALIBABA, 1), lambda: b"".join(reads(ALIBABA, 1))),
    "alibaba-2": (ALIBABA, lambda: request(ALIBABA, 2), lambda: b"".join(reads(ALIBABA, 2))),
    "gemini": (GEMINI, lambda: ANY, gemini_bytes),
    "deepseek": (DEEPSEEK, lambda: ANY, lambda: chunk_log_body(DEEPSEEK)),
}


@contextlib.contextmanager
def provider(mode: str, paths, speed: float = 0.0, strict: bool = False, **kw):
    """(sync client, async client factory, the list of selections) against a server or a
    transport. Make and close the async client inside its event loop (`async with`), so no
    connection outlives its loop."""
    paths = [paths] if isinstance(paths, str) else paths
    if mode == "server":
        server = ServeServer(paths, speed=speed, strict=strict, **kw)
        server.start()
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
        try:
            yield (
                client,
                lambda: openai.AsyncOpenAI(
                    api_key="sk-test", base_url=server.base_url, max_retries=0
                ),
                server.app.selections,
            )
        finally:
            client.close()
            server.stop()
    else:
        transport = playback_transport(paths, speed=speed, strict=strict, **kw)
        base = "http://provider.test/v1"
        package = httpx2 if mode == "httpx2" else httpx
        client = openai.OpenAI(
            api_key="sk-test",
            base_url=base,
            max_retries=0,
            http_client=package.Client(transport=transport),
        )
        try:
            yield (
                client,
                lambda: openai.AsyncOpenAI(
                    api_key="sk-test",
                    base_url=base,
                    max_retries=0,
                    http_client=package.AsyncClient(transport=transport),
                ),
                transport.selections,
            )
        finally:
            client.close()


def raw_body(client: openai.OpenAI, body: dict) -> bytes:
    with client.chat.completions.with_streaming_response.create(**body) as response:
        return b"".join(response.iter_bytes())


def create_args(body: dict) -> dict:
    return {**body, "stream": True}


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_client_gets_the_recorded_bytes_and_chunks(mode, sample):
    path, make_request, make_body = SAMPLES[sample]
    body, expected = make_request(), make_body()
    with provider(mode, path) as (client, aclient, _):
        assert raw_body(client, create_args(body)) == expected
        # the chunks the SDK builds are the recorded ones, sync and async
        want = payloads(expected)
        got = [c.to_dict() for c in client.chat.completions.create(**create_args(body))]
        assert got == want

        async def collect():
            async with aclient() as client:
                stream = await client.chat.completions.create(**create_args(body))
                return [c.to_dict() async for c in stream]

        assert asyncio.run(collect()) == want


@pytest.mark.parametrize("mode", MODES)
def test_stream_helper_assembles_the_recorded_calls_and_answer(mode):
    first, second = request(OPENAI, 1), request(OPENAI, 2)
    with provider(mode, OPENAI) as (client, aclient, selections):
        kwargs = {k: first[k] for k in ("model", "messages", "tools")}
        with client.chat.completions.stream(**kwargs) as stream:
            message = stream.get_final_completion().choices[0].message
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]
        assert calls == [
            (
                "call_Qm3xF8bVt2LcN9pR1sWd7yKe",
                "get_weather",
                '{"city": "Paris", "unit": "celsius"}',
            ),
            ("call_7HbZkT0uWq4eYs2mNd9LpXa1", "get_local_time", '{"timezone": "Europe/Paris"}'),
        ]

        async def answer():
            kwargs = {k: second[k] for k in ("model", "messages", "tools")}
            async with aclient() as client, client.chat.completions.stream(**kwargs) as stream:
                return (await stream.get_final_completion()).choices[0].message.content

        assert asyncio.run(answer()).startswith("It's 14 °C and partly cloudy in Paris")
        assert [(s.entry.exchange, s.how) for s in selections] == [(1, "body"), (2, "body")]


def test_transport_keeps_the_recorded_read_boundaries():
    transport = playback_transport([OPENAI, GEMINI])
    with httpx.Client(transport=transport, base_url="http://p/v1") as client:
        for exchange in (1, 2):
            with client.stream("POST", "/chat/completions", json=request(OPENAI, exchange)) as r:
                assert list(r.iter_raw()) == reads(OPENAI, exchange)
        with client.stream("POST", "/chat/completions", json=ANY) as r:
            events = list(r.iter_raw())
        assert b"".join(events) == gemini_bytes()
        assert events[0] == b": keep-alive\r\n\r\n"
        assert all(e.endswith(b"\r\n\r\n") for e in events)


@pytest.mark.parametrize("mode", MODES)
def test_matched_by_body_whatever_the_order(mode):
    with provider(mode, OPENAI) as (client, _, selections):
        body2 = request(OPENAI, 2)
        # keys other than model, messages and tools do not count
        body2 |= {"temperature": 0.5, "stream_options": {"include_usage": True}}
        assert raw_body(client, body2) == b"".join(reads(OPENAI, 2))
        assert raw_body(client, body2) == b"".join(reads(OPENAI, 2))  # sent again: again
        assert raw_body(client, request(OPENAI, 1)) == b"".join(reads(OPENAI, 1))
        assert [(s.entry.exchange, s.how) for s in selections] == [
            (2, "body"),
            (2, "body"),
            (1, "body"),
        ]


@pytest.mark.parametrize("mode", MODES)
def test_unmatched_requests_get_the_next_exchange_in_order(mode):
    with provider(mode, [OPENAI, GEMINI]) as (client, _, selections):
        got = [raw_body(client, create_args(ANY)) for _ in range(4)]
        assert got == [
            b"".join(reads(OPENAI, 1)),
            b"".join(reads(OPENAI, 2)),
            gemini_bytes(),
            b"".join(reads(OPENAI, 1)),  # all served: round again
        ]
        assert [s.how for s in selections] == ["order"] * 4


@pytest.mark.parametrize("mode", MODES)
def test_strict_names_what_did_not_match(mode):
    with provider(mode, OPENAI, strict=True) as (client, _, _selections):
        assert raw_body(client, request(OPENAI, 1)) == b"".join(reads(OPENAI, 1))

        wrong_id = copy.deepcopy(request(OPENAI, 2))
        wrong_id["messages"][2]["tool_calls"][0]["id"] = "call_made_up"
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(**wrong_id)
        name = "streamscope serve" if mode == "server" else "streamscope playback"
        assert e.value.body["type"] == "unmatched_request"
        assert e.value.body["message"] == (
            f"{name}: no recorded exchange matches this request: messages differ from "
            "openai.jsonl exchange 2 at message 3 (role assistant), tool_calls[0].id: "
            'the request has "call_made_up", the recording "call_Qm3xF8bVt2LcN9pR1sWd7yKe"'
        )

        extra = copy.deepcopy(request(OPENAI, 1))
        extra["messages"].append({"role": "user", "content": "and tomorrow?"})
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(**extra)
        assert e.value.body["message"].endswith(
            "messages differ from openai.jsonl exchange 1 at message 3 (role user): "
            "the request has 3 messages, the recording 2"
        )

        other_model = request(OPENAI, 1) | {"model": "gpt-5"}
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(**other_model)
        assert e.value.body["message"].endswith(
            'model differs from openai.jsonl exchange 1: the request has "gpt-5", '
            'the recording "gpt-4o-mini"'
        )
        with pytest.raises(openai.NotFoundError) as e:
            client.models.list()
        assert (
            "only POST .../chat/completions and POST .../responses are served, not GET /v1/models"
        ) in str(e.value)


@pytest.mark.parametrize("mode", MODES)
def test_strict_still_serves_a_raw_sse_body_to_anything(mode):
    with provider(mode, GEMINI, strict=True) as (client, _, selections):
        assert raw_body(client, create_args(ANY)) == gemini_bytes()
        assert selections[0].how == "any"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_timing_is_the_recorded_timing_divided_by_speed(mode):
    body = create_args(request(OPENAI, 1))
    elapsed = {}
    for speed in (1, 4, 0):
        with provider(mode, OPENAI, speed=speed) as (client, _, _selections):
            with contextlib.suppress(openai.NotFoundError):  # warm up: connection, imports
                client.models.list()
            start = time.monotonic()
            assert raw_body(client, body) == b"".join(reads(OPENAI, 1))
            elapsed[speed] = time.monotonic() - start
    # the recorded exchange lasts about 0.55 s from request to last read
    assert elapsed[4] < 0.5 * elapsed[1]
    assert elapsed[4] > 0.1 * elapsed[1]  # it still waits
    assert elapsed[0] < 0.2
    assert elapsed[0] < elapsed[4]


def _odd_recording(path: str, cut: str = "upstream-error") -> None:
    """Exchange 1: a non-stream JSON answer; 2: a stream whose upstream failed midway."""
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hello"},
                "finish_reason": "stop",
            }
        ],
    }
    url = "http://127.0.0.1/v1/chat/completions"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        body = {"model": "m", "messages": [{"role": "user", "content": "json please"}]}
        w.request(ex, "POST", url, [("content-type", "application/json")], orjson.dumps(body))
        w.response(ex, 200, [("content-type", "application/json"), ("content-length", "999")])
        w.chunk(ex, orjson.dumps(completion))
        w.end(ex, "complete")
        ex = w.new_exchange()
        body = {"model": "m", "messages": [{"role": "user", "content": "stream"}], "stream": True}
        w.request(ex, "POST", url, [], orjson.dumps(body))
        w.response(ex, 200, [("content-type", "text/event-stream")])
        w.chunk(ex, sse_body([{"choices": [{"index": 0, "delta": {"content": "par"}}]}], False))
        w.end(ex, cut, "RemoteProtocolError: peer closed connection")
        ex = w.new_exchange()  # not a chat completion: not served
        w.request(ex, "GET", "http://127.0.0.1/v1/models", [], b"")
        w.response(ex, 200, [("content-type", "application/json")])
        w.end(ex, "complete")


@pytest.mark.slow
@pytest.mark.parametrize("cut", ["upstream-error", "recorder-stopped"])
@pytest.mark.parametrize("mode", MODES)
def test_non_stream_answers_and_recorded_upstream_failures(mode, tmp_path, cut):
    path = str(tmp_path / "odd.jsonl")
    _odd_recording(path, cut)
    with provider(mode, path) as (client, _, selections):
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "json please"}]
        )
        assert completion.choices[0].message.content == "hello"
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "stream"}], stream=True
        )
        seen = []
        with pytest.raises(
            (httpx.RemoteProtocolError, httpx2.RemoteProtocolError, openai.APIError)
        ):
            for chunk in stream:
                seen.append(chunk.choices[0].delta.content)
        assert seen == ["par"]
        assert len(selections) == 2
        # the GET exchange is not servable: unmatched requests cycle over the two others
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert selections[-1].entry.exchange == 1


def _cut_off(tmp_path) -> tuple[str, int, int]:
    """openai.jsonl as kill -9 of its recorder leaves it: cut inside exchange 2's third
    chunk line. (path, the cut line's number, its byte offset)"""
    with open(OPENAI, "rb") as f:
        lines = f.readlines()
    offset = sum(map(len, lines[:18]))
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(lines[:18]) + lines[18][:100])
    return str(path), 19, offset


@pytest.mark.parametrize("mode", ["server", "httpx"])
def test_an_exchange_the_recording_stops_inside_is_served_cut_not_ended(tmp_path, mode):
    """Its client sees the connection fail after the last whole read, as for an upstream
    error, never a clean end; the exchange that ended is served whole."""
    path, line, offset = _cut_off(tmp_path)
    if mode == "server":
        server = ServeServer([path])
        server.start()
        client = httpx.Client(base_url=server.base_url)
    else:
        transport = playback_transport(path)
        client = httpx.Client(transport=transport, base_url="http://p/v1")
    try:
        first = client.post("/chat/completions", json=request(OPENAI, 1))
        assert first.content == b"".join(reads(OPENAI, 1))
        got = []
        second = client.stream("POST", "/chat/completions", json=request(OPENAI, 2))
        with pytest.raises(httpx.RemoteProtocolError), second as r:
            assert r.status_code == 200
            for data in r.iter_raw():
                got.append(data)
        assert b"".join(got) == b"".join(reads(OPENAI, 2)[:2])
    finally:
        client.close()
        if mode == "server":
            server.stop()
    library = Library(path)
    assert library.notes == [
        f"cut.jsonl: recording ends with a cut-off line {line} at byte {offset} (the writer "
        "was interrupted); exchange 2 never ended (no end line): served cut after its last read"
    ]
    library.close()


def test_serve_says_where_a_recording_was_cut_off(tmp_path):
    path, line, offset = _cut_off(tmp_path)
    with (
        serve_command(path) as (base, said),
        httpx.Client(base_url=base) as client,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        client.post("/chat/completions", json=request(OPENAI, 2))
    assert said[1] == (
        f"streamscope: cut.jsonl: recording ends with a cut-off line {line} at byte {offset} "
        "(the writer was interrupted); exchange 2 never ended (no end line): served cut "
        "after its last read"
    )


def test_transport_options_and_reuse():
    transport = playback_transport(OPENAI, exchange=2)
    for _ in range(2):  # closing a client closes the files; the next use opens them again
        with httpx.Client(transport=transport, base_url="http://p/v1") as client:
            r = client.post("/chat/completions", json=ANY)
            assert r.content == b"".join(reads(OPENAI, 2))
    with pytest.raises(RecordingError, match="no exchange 7"):
        playback_transport(OPENAI, exchange=7)
    with pytest.raises(ValueError, match="speed"):
        playback_transport(OPENAI, speed=-1)


def test_server_refuses_what_it_cannot_serve(tmp_path):
    with pytest.raises(RecordingError, match="no such file"):
        ServeServer([str(tmp_path / "missing.jsonl")])
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    with pytest.raises(RecordingError, match="not a streamscope recording"):
        ServeServer([OPENAI, str(junk)])


@pytest.mark.slow
def test_server_survives_a_client_leaving_midstream():
    lines = []
    with ServeServer([OPENAI], speed=1, log=lines.append) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert "serving 2 exchanges from openai.jsonl" in server.describe()
        with httpx.Client(base_url=server.base_url) as client:
            with client.stream("POST", "/chat/completions", json=ANY) as r:
                next(r.iter_raw())  # one read, then gone
            start = time.monotonic()
            r = client.post("/chat/completions", json=request(OPENAI, 1))
            assert r.content == b"".join(reads(OPENAI, 1))
            assert time.monotonic() - start < 5
    assert lines[:2] == [
        "POST /v1/chat/completions -> openai.jsonl exchange 1 (next in order)",
        "POST /v1/chat/completions -> openai.jsonl exchange 1 (matched by body)",
    ]


def test_playback_imports_no_server_and_no_sdk():
    code = (
        "import sys, streamscope.playback\n"
        "print(','.join(m for m in ('uvicorn', 'openai', 'textual', 'httpx', 'httpx2')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("mode", MODES)
def test_a_non_stream_request_is_not_answered_with_a_stream(mode):
    with provider(mode, [OPENAI, GEMINI]) as (client, _, _selections):
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(**{**request(OPENAI, 1), "stream": False})
        assert e.value.body["message"].endswith(
            "no recorded exchange matches this request: the request asks for a non-stream "
            'response ("stream" is not true) and the files hold only streams'
        )


@pytest.mark.parametrize("body", [b"not json", b"", b"[1, 2]"], ids=["text", "empty", "array"])
@pytest.mark.parametrize("strict", [False, True], ids=["loose", "strict"])
@pytest.mark.parametrize("mode", ["server", "transport"])
def test_a_body_that_is_no_json_object_gets_a_400_not_a_stream(mode, strict, body):
    # it asks for no stream; loose, it was answered with the next recorded stream
    headers = {"content-type": "application/json"}
    if mode == "server":
        server = ServeServer([OPENAI], strict=strict)
        server.start()
        try:
            r = httpx.post(f"{server.base_url}/chat/completions", content=body, headers=headers)
        finally:
            server.stop()
    else:
        transport = playback_transport([OPENAI], strict=strict)
        with httpx2.Client(transport=transport, base_url="http://p/v1") as client:
            r = client.post("/chat/completions", content=body, headers=headers)
    assert r.status_code == 400 and "event-stream" not in r.headers["content-type"]
    assert r.json()["error"]["message"].endswith("the request body is not a JSON object")


def test_the_transport_can_be_tied_to_one_http_package():
    transport = playback_transport(OPENAI, http="httpx2")
    with httpx2.Client(transport=transport, base_url="http://p/v1") as client:
        assert client.post("/chat/completions", json=ANY).content == b"".join(reads(OPENAI, 1))
    with (
        httpx.Client(transport=transport, base_url="http://p/v1") as client,
        pytest.raises(TypeError, match="made for httpx2"),
    ):
        client.post("/chat/completions", json=ANY)
    with pytest.raises(ValueError, match="http must be one of httpx2, httpx"):
        playback_transport(OPENAI, http="requests")


def test_messages_sent_as_an_object_are_compared_not_a_crash(tmp_path):
    path = tmp_path / "object.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        body = orjson.dumps({"model": "m", "messages": {"a": 1}, "stream": True})
        w.request(ex, "POST", "https://x.test/v1/chat/completions", [], body)
        w.response(ex, 200, [("content-type", "text/event-stream")])
        w.chunk(ex, b"data: [DONE]\n\n")
        w.end(ex, "complete")
    library = Library(str(path))
    got = library.select(orjson.dumps({"model": "m", "messages": {"a": 2}, "stream": True}), True)
    assert got.message == (
        "messages differ from object.jsonl exchange 1 at a: the request has 2, the recording 1"
    )
