"""`recording_transport`: the real openai client (sync and async) on httpx2 and httpx,
recording in-process against a loopback provider; compared with the proxy's recording.
The real anthropic client too (sync and async, on httpx2, its only HTTP package), and the
openai client on the Responses API."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anthropic
import httpx
import httpx2
import openai
import pytest

from streamscope import async_recording_transport, recording_transport
from streamscope.analysis import analyze
from streamscope.http import clients
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingIndex, RecordingWriter, iter_records
from streamscope.recording.format import End, Request, Response

from . import responses_stream
from .anthropic_stream import (
    ANSWER,
    MODEL,
    QUESTION,
    TOOL_ID,
    TOOL_INPUT,
    TOOLS,
    answer_events,
    follow_up,
    tool_use_events,
)
from .test_recorder_secrets import (
    ANTHROPIC_HEADERS,
    ANTHROPIC_KEY,
    anthropic_client,
    assert_anthropic_secrets_masked,
)
from .upstream import OK, RawUpstream, sample_reads
from .upstream import Upstream as StandIn

# openai 3.57 builds on httpx2 and still takes an httpx client; an older one takes httpx only
OPENAI_HTTP = clients.load(clients.openai_package())
OPENAI_PACKAGES = [httpx2, httpx] if OPENAI_HTTP is httpx2 else [httpx]
SECRET = "sk-test-secret-inprocess-77"
TURN_1 = {"model": "openai", "messages": [{"role": "user", "content": "weather in Paris?"}]}


@pytest.fixture(scope="module")
def upstream():
    with StandIn(pace=0.02) as up:  # reads far enough apart to stay separate reads
        yield up


def records(path, kind):
    return [r for _, r in iter_records(path) if isinstance(r, kind)]


def reads(path, exchange=1) -> list[bytes]:
    with RecordingIndex.open(path) as index:
        return [c.data_bytes for c in index.chunks(exchange)]


def calls(path):
    return [[(c.id, c.name, c.arguments) for c in s.tool_calls] for s in analyze(path).streams]


@pytest.mark.slow
@pytest.mark.parametrize("package", OPENAI_PACKAGES)
def test_sync_client_is_recorded_as_the_proxy_records_it(upstream, tmp_path, package):
    mine, theirs = tmp_path / "in-process.jsonl", tmp_path / "proxy.jsonl"
    transport = recording_transport(mine)
    client = openai.OpenAI(
        api_key=SECRET,
        base_url=upstream.url,
        max_retries=0,
        http_client=package.Client(transport=transport),
    )
    with client:
        seen = [c.to_dict() for c in client.chat.completions.create(**TURN_1, stream=True)]
    assert seen  # the caller got the stream

    with RecordingWriter(theirs) as writer:
        server = ProxyServer(Upstream.parse(upstream.url), writer)
        server.start()
        try:
            proxied = openai.OpenAI(api_key=SECRET, base_url=server.base_url, max_retries=0)
            with proxied:
                list(proxied.chat.completions.create(**TURN_1, stream=True))
        finally:
            server.stop()

    # same frames, same bytes, read by read, and the same calls for inspect
    assert reads(mine) == reads(theirs) == sample_reads("openai", 1)
    assert calls(mine) == calls(theirs) and calls(mine)[0]
    (req,), (resp,), (end,) = records(mine, Request), records(mine, Response), records(mine, End)
    assert req.url == upstream.url + "/chat/completions" and req.json_body()["stream"] is True
    assert resp.status == 200 and end.reason == "complete"
    assert SECRET not in mine.read_text()  # masked at write time, as the proxy masks it
    assert ("Authorization", "Bearer [REDACTED]") in [
        (k.title(), v) for k, v in req.headers if k.lower() == "authorization"
    ]
    assert upstream.auth[-1] == f"Bearer {SECRET}"  # the provider still got the key


@pytest.mark.slow
@pytest.mark.parametrize("package", OPENAI_PACKAGES)
def test_async_client_is_recorded(upstream, tmp_path, package):
    path = tmp_path / "async.jsonl"

    async def run() -> list:
        http = package.AsyncClient(transport=async_recording_transport(path))
        async with openai.AsyncOpenAI(
            api_key=SECRET, base_url=upstream.url, max_retries=0, http_client=http
        ) as client:
            stream = await client.chat.completions.create(**TURN_1, stream=True)
            return [c async for c in stream]

    assert asyncio.run(run())
    assert reads(path) == sample_reads("openai", 1)
    assert records(path, End)[0].reason == "complete"
    assert SECRET not in path.read_text()


@pytest.mark.parametrize("package", OPENAI_PACKAGES)
def test_the_recorded_request_head_is_the_one_the_upstream_received(tmp_path, package):
    """Accept-Encoding included: the client asks for gzip, the upstream is asked for
    identity, and the recording says identity."""
    path = tmp_path / "sent.jsonl"
    with RawUpstream(OK) as raw, package.Client(transport=recording_transport(path)) as http:
        assert "gzip" in http.headers["accept-encoding"]
        r = http.post(raw.url + "/chat/completions", json={"model": "json"})
        assert r.status_code == 200
    (request,) = records(path, Request)
    received = [line.split(": ", 1) for line in raw.heads[0][1:]]
    assert [list(h) for h in request.headers] == received
    assert ["accept-encoding", "identity"] in [[k.lower(), v] for k, v in request.headers]


def test_the_stream_reaches_the_caller_read_by_read(upstream, tmp_path):
    path = tmp_path / "live.jsonl"
    url = upstream.url + "/chat/completions"
    with (
        httpx2.Client(transport=recording_transport(path)) as http,
        http.stream("POST", url, json={"model": "slow"}) as r,
    ):
        first = next(r.iter_raw())  # arrives while the provider is still sending (10 s in all)
        assert reads(path) == [first]  # written as it arrived, before the next read
    (end,) = records(path, End)
    assert end.reason == "client-closed"


def test_a_cut_stream_ends_with_the_true_reason(upstream, tmp_path):
    path = tmp_path / "drop.jsonl"
    with (
        httpx.Client(transport=recording_transport(path)) as http,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        http.post(upstream.url + "/chat/completions", json={"model": "drop"})
    (end,) = records(path, End)
    assert end.reason == "upstream-error" and "RemoteProtocolError" in end.error
    assert len(reads(path)) >= 1


def test_an_unreachable_upstream_and_an_existing_file(tmp_path):
    path = tmp_path / "down.jsonl"
    with (
        httpx2.Client(transport=recording_transport(path)) as http,
        pytest.raises(httpx2.ConnectError),
    ):
        http.post("http://127.0.0.1:9/v1/chat/completions", json={})
    (end,) = records(path, End)
    assert end.reason == "upstream-error" and not records(path, Response)
    with pytest.raises(FileExistsError):
        recording_transport(path)
    recording_transport(path, overwrite=True).close()
    assert len(list(iter_records(path))) == 1  # only the header: started again


def test_it_wraps_the_transport_given(tmp_path):
    body = b'data: {"choices":[]}\n\ndata: [DONE]\n\n'
    seen = threading.Event()

    def handler(request):
        seen.set()
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    path = tmp_path / "mock.jsonl"
    inner = httpx2.MockTransport(handler)
    with httpx2.Client(transport=recording_transport(path, inner)) as http:
        assert http.post("http://x.test/v1/chat/completions", json={}).content == body
    assert seen.is_set() and b"".join(reads(path)) == body


# -- the anthropic SDK (its clients are httpx2 clients)


def streamed_call(client) -> dict:
    """Turn 1 with create(stream=True): the tool call as an agent assembles it from the
    events (its input from the input_json_delta fragments)."""
    call, fragments = {}, []
    with client.messages.create(
        model=MODEL, max_tokens=1024, messages=QUESTION, tools=TOOLS, stream=True
    ) as events:
        for event in events:
            if event.type == "content_block_start" and event.content_block.type == "tool_use":
                call = {"id": event.content_block.id, "name": event.content_block.name}
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                fragments.append(event.delta.partial_json)
    return {**call, "input": json.loads("".join(fragments))}


def helper_call(client) -> dict:
    """Turn 1 with the SDK's stream helper: the tool call it assembled."""
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=QUESTION, tools=TOOLS
    ) as stream:
        message = stream.get_final_message()
    (call,) = [block for block in message.content if block.type == "tool_use"]
    return {"id": call.id, "name": call.name, "input": call.input}


def anthropic_turns(client, first_turn) -> tuple[dict, str]:
    """The tool call `first_turn` read, then the answer's text, read with create(stream=True)."""
    call = first_turn(client)
    answer = ""
    with client.messages.create(
        model=MODEL, max_tokens=1024, messages=follow_up(call["input"]), tools=TOOLS, stream=True
    ) as events:
        for event in events:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                answer += event.delta.text
    return call, answer


async def async_anthropic_turns(client) -> tuple[dict, str]:
    async with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=QUESTION, tools=TOOLS
    ) as stream:
        message = await stream.get_final_message()
    (call,) = [block for block in message.content if block.type == "tool_use"]
    answer = ""
    events = await client.messages.create(
        model=MODEL, max_tokens=1024, messages=follow_up(call.input), tools=TOOLS, stream=True
    )
    async with events:
        async for event in events:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                answer += event.delta.text
    return {"id": call.id, "name": call.name, "input": call.input}, answer


def assert_anthropic_recording(path, upstream) -> None:
    """Both turns recorded as the provider sent them, read by read, complete, masked."""
    assert reads(path, 1) == tool_use_events() and reads(path, 2) == answer_events()
    assert [r.url for r in records(path, Request)] == [upstream.url + "/messages"] * 2
    assert [e.reason for e in records(path, End)] == ["complete"] * 2
    assert_anthropic_secrets_masked(path, upstream.headers[-1])


CALL = {"id": TOOL_ID, "name": "get_weather", "input": TOOL_INPUT}


@pytest.mark.slow
@pytest.mark.parametrize("first_turn", [helper_call, streamed_call])
def test_an_anthropic_client_is_recorded(upstream, tmp_path, first_turn):
    path = tmp_path / "anthropic.jsonl"
    http = httpx2.Client(transport=recording_transport(path))
    with anthropic_client(upstream.url.removesuffix("/v1"), http_client=http) as client:
        assert anthropic_turns(client, first_turn) == (CALL, ANSWER)
    assert_anthropic_recording(path, upstream)


@pytest.mark.slow
def test_an_async_anthropic_client_is_recorded(upstream, tmp_path):
    path = tmp_path / "anthropic-async.jsonl"

    async def run() -> tuple[dict, str]:
        http = httpx2.AsyncClient(transport=async_recording_transport(path))
        client = anthropic.AsyncAnthropic(
            api_key=ANTHROPIC_KEY,
            base_url=upstream.url.removesuffix("/v1"),
            max_retries=0,
            default_headers=ANTHROPIC_HEADERS,
            http_client=http,
        )
        async with client:
            return await async_anthropic_turns(client)

    assert asyncio.run(run()) == (CALL, ANSWER)
    assert_anthropic_recording(path, upstream)


@pytest.fixture(scope="module")
def holding():
    """A provider that holds the body open for 0.5 s after the final event."""
    with StandIn(pace=0.02, tail_pause=0.5) as up:
        yield up


@pytest.mark.slow
@pytest.mark.parametrize(
    "leave_at, reason", [("message_stop", "complete"), ("content_block_delta", "client-closed")]
)
def test_an_anthropic_client_leaving_after_message_stop_ended_a_complete_stream(
    holding, tmp_path, leave_at, reason
):
    path = tmp_path / "leave.jsonl"
    http = httpx2.Client(transport=recording_transport(path))
    with anthropic_client(holding.url.removesuffix("/v1"), http_client=http) as client:
        events = client.messages.create(model=MODEL, max_tokens=64, messages=QUESTION, stream=True)
        with events:
            for event in events:
                if event.type == leave_at:
                    break  # leaving the `with` closes the response
    (end,) = records(path, End)
    assert end.reason == reason


# -- the openai SDK on the Responses API


def responses_turns(client) -> tuple[dict, str]:
    """Turn 1 with `responses.stream(...)` (the call it assembled), turn 2 with
    `responses.create(stream=True)` (the answer's text from its deltas)."""
    with client.responses.stream(
        model=responses_stream.MODEL,
        input=responses_stream.QUESTION,
        tools=responses_stream.TOOLS,
    ) as stream:
        first = stream.get_final_response()
    (call,) = [item for item in first.output if item.type == "function_call"]
    events = client.responses.create(
        model=responses_stream.MODEL,
        input=responses_stream.follow_up(),
        tools=responses_stream.TOOLS,
        stream=True,
    )
    with events:
        answer = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    return {"call_id": call.call_id, "arguments": json.loads(call.arguments)}, answer


RESPONSES_TURNS = (
    {"call_id": responses_stream.CALL_ID, "arguments": responses_stream.ARGUMENTS},
    responses_stream.ANSWER,
)


def assert_responses_recording(path, upstream) -> None:
    """Both turns recorded as the provider sent them, read by read, complete, masked."""
    assert reads(path, 1) == responses_stream.function_call_events()
    assert reads(path, 2) == responses_stream.answer_events()
    assert [r.url for r in records(path, Request)] == [upstream.url + "/responses"] * 2
    assert [e.reason for e in records(path, End)] == ["complete"] * 2
    assert SECRET not in path.read_text()
    assert upstream.auth[-1] == f"Bearer {SECRET}"


@pytest.mark.slow
@pytest.mark.parametrize("package", OPENAI_PACKAGES)
def test_an_openai_responses_client_is_recorded(upstream, tmp_path, package):
    path = tmp_path / "responses.jsonl"
    http = package.Client(transport=recording_transport(path))
    with openai.OpenAI(
        api_key=SECRET, base_url=upstream.url, max_retries=0, http_client=http
    ) as client:
        assert responses_turns(client) == RESPONSES_TURNS
    assert_responses_recording(path, upstream)


@pytest.mark.slow
def test_an_async_openai_responses_client_is_recorded(upstream, tmp_path):
    path = tmp_path / "responses-async.jsonl"

    async def run() -> tuple[dict, str]:
        http = OPENAI_HTTP.AsyncClient(transport=async_recording_transport(path))
        async with openai.AsyncOpenAI(
            api_key=SECRET, base_url=upstream.url, max_retries=0, http_client=http
        ) as client:
            async with client.responses.stream(
                model=responses_stream.MODEL,
                input=responses_stream.QUESTION,
                tools=responses_stream.TOOLS,
            ) as stream:
                first = await stream.get_final_response()
            (call,) = [item for item in first.output if item.type == "function_call"]
            events = await client.responses.create(
                model=responses_stream.MODEL,
                input=responses_stream.follow_up(),
                tools=responses_stream.TOOLS,
                stream=True,
            )
            answer = ""
            async with events:
                async for event in events:
                    if event.type == "response.output_text.delta":
                        answer += event.delta
        return {"call_id": call.call_id, "arguments": json.loads(call.arguments)}, answer

    assert asyncio.run(run()) == RESPONSES_TURNS
    assert_responses_recording(path, upstream)


@pytest.mark.slow
@pytest.mark.parametrize(
    "leave_at, reason",
    [
        ("response.completed", "complete"),
        ("response.function_call_arguments.delta", "client-closed"),
    ],
)
def test_a_responses_client_leaving_after_its_final_event_ended_a_complete_stream(
    holding, tmp_path, leave_at, reason
):
    path = tmp_path / "leave.jsonl"
    http = OPENAI_HTTP.Client(transport=recording_transport(path))
    with (
        openai.OpenAI(
            api_key=SECRET, base_url=holding.url, max_retries=0, http_client=http
        ) as client,
        client.responses.stream(
            model=responses_stream.MODEL, input=responses_stream.QUESTION
        ) as stream,
    ):
        for event in stream:
            if event.type == leave_at:
                break  # leaving the `with` closes the response
    (end,) = records(path, End)
    assert end.reason == reason


def readme_example() -> str:
    """The docs' `recording_transport` example (docs/in-process.md), as written there."""
    page = (Path(__file__).parent.parent / "docs" / "in-process.md").read_text()
    section = page[page.index("## `recording_transport`") :]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
@pytest.mark.skipif(OPENAI_HTTP is not httpx2, reason="the documented example is openai 3.57's")
def test_the_docs_example_runs_twice_in_an_empty_folder_without_a_traceback(tmp_path):
    """The first run creates ./recordings and its recordings; the second keeps them and
    says so in one line (RecordingExists), exit status 1."""
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    assert "RecordingExists" in script.read_text()
    folder = tmp_path / "empty"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY")}
    env |= {"OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}

    def run() -> subprocess.CompletedProcess:
        command = [sys.executable, str(script)]
        return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)

    first = run()
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    made = {p.name: p.read_bytes() for p in (folder / "recordings").iterdir()}
    assert set(made) == {"run.jsonl", "claude-run.jsonl"}
    assert all(b'"type":"header"' in data for data in made.values())
    second = run()
    assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
    assert second.stderr.strip() == (
        f"{os.path.join('recordings', 'run.jsonl')}: already exists; "
        "streamscope never overwrites it without overwrite=True"
    )
    assert {p.name: p.read_bytes() for p in (folder / "recordings").iterdir()} == made


def test_an_existing_recording_is_refused_with_recording_exists_and_replaced_when_asked(
    tmp_path,
):
    import streamscope

    path = tmp_path / "deep" / "er" / "r.jsonl"  # the folders are made
    recording_transport(path).close()
    with pytest.raises(streamscope.RecordingExists) as refused:
        recording_transport(path)
    assert isinstance(refused.value, FileExistsError) and "\n" not in str(refused.value)
    assert str(refused.value).startswith(f"{path}: already exists")
    recording_transport(path, overwrite=True).close()  # asked: replaced
    assert len(path.read_bytes().splitlines()) == 1
