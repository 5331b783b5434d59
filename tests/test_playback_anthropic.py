"""`streamscope serve` and `playback_transport` answering the real anthropic client: its
`POST /v1/messages` gets a recorded Anthropic stream (matched by body, else the next in
order), a raw SSE body answers anything, and a mismatch reads as an Anthropic error."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import subprocess
import sys

import anthropic
import httpx2
import openai
import orjson
import pytest

from streamscope.playback import playback_transport
from streamscope.playback.serve import ServeServer
from streamscope.providers import ANTHROPIC
from streamscope.recording import RecordingWriter

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

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
OPENAI = os.path.join(ROOT, "openai.jsonl")
MODES = ["server", "transport"]  # a mock provider, or the transport in an httpx2 client
TURNS = [(QUESTION, tool_use_events), (follow_up(TOOL_INPUT), answer_events)]


def grouped(events: list[bytes], size: int = 3) -> list[bytes]:
    """The events as a provider's reads fall: a few to a read."""
    return [b"".join(events[i : i + size]) for i in range(0, len(events), size)]


def request_body(messages: list[dict]) -> dict:
    return {"max_tokens": 1024, "messages": messages, "model": MODEL, "tools": TOOLS}


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> str:
    """Both turns of a tool call, as the recorder writes them from the Anthropic API."""
    path = str(tmp_path_factory.mktemp("anthropic") / "anthropic.jsonl")
    url = "https://api.anthropic.com/v1/messages"
    with RecordingWriter(path) as w:
        for messages, events in TURNS:
            ex = w.new_exchange()
            body = orjson.dumps({**request_body(messages), "stream": True})
            w.request(ex, "POST", url, [("anthropic-version", "2023-06-01")], body)
            w.response(ex, 200, [("content-type", "text/event-stream; charset=utf-8")])
            for read in grouped(events()):
                w.chunk(ex, read)
            w.end(ex, "complete")
    return path


@contextlib.contextmanager
def provider(mode: str, paths, **options):
    """(an anthropic client, an async client factory, the selections) against `paths`."""
    paths = [paths] if isinstance(paths, str) else paths
    common = {"api_key": "sk-ant-test", "max_retries": 0}
    if mode == "server":
        server = ServeServer(paths, **options)
        server.start()
        base = server.base_url_for(ANTHROPIC)
        client = anthropic.Anthropic(base_url=base, **common)
        try:
            yield (
                client,
                lambda: anthropic.AsyncAnthropic(base_url=base, **common),
                server.app.selections,
            )
        finally:
            client.close()
            server.stop()
    else:
        transport = playback_transport(paths, **options)
        base = "http://provider.test"
        http = httpx2.Client(transport=transport)
        client = anthropic.Anthropic(base_url=base, http_client=http, **common)
        try:
            yield (
                client,
                lambda: anthropic.AsyncAnthropic(
                    base_url=base, http_client=httpx2.AsyncClient(transport=transport), **common
                ),
                transport.selections,
            )
        finally:
            client.close()


def raw_body(client: anthropic.Anthropic, messages: list[dict]) -> bytes:
    with client.messages.with_streaming_response.create(
        **request_body(messages), stream=True
    ) as response:
        return b"".join(response.iter_bytes())


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_assembles_the_recorded_tool_call_and_answer(mode, recording):
    with provider(mode, recording) as (client, aclient, selections):
        with client.messages.stream(**request_body(QUESTION)) as stream:
            message = stream.get_final_message()
        (call,) = [b for b in message.content if b.type == "tool_use"]
        assert (call.id, call.name, call.input) == (TOOL_ID, "get_weather", TOOL_INPUT)
        assert message.stop_reason == "tool_use"

        async def answer() -> str:
            async with aclient() as client:
                events = await client.messages.create(
                    **request_body(follow_up(call.input)), stream=True
                )
                return "".join(
                    [
                        e.delta.text
                        async for e in events
                        if e.type == "content_block_delta" and e.delta.type == "text_delta"
                    ]
                )

        assert asyncio.run(answer()) == ANSWER
        assert [(s.entry.exchange, s.how) for s in selections] == [(1, "body"), (2, "body")]
        # the bytes are the recorded ones, read by read
        assert raw_body(client, follow_up(TOOL_INPUT)) == b"".join(answer_events())
    transport = playback_transport(recording, exchange=1)
    with httpx2.Client(transport=transport) as http:
        body = {**request_body(QUESTION), "stream": True}
        with http.stream("POST", "http://p/v1/messages", json=body) as r:
            assert list(r.iter_raw()) == grouped(tool_use_events())


@pytest.mark.parametrize("mode", MODES)
def test_each_api_is_answered_from_its_own_exchanges(mode, recording):
    unmatched = [{"role": "user", "content": "something else"}]
    with provider(mode, [OPENAI, recording]) as (client, _, selections):
        # unmatched: the next in order among the Anthropic exchanges, never OpenAI's
        assert raw_body(client, unmatched) == b"".join(tool_use_events())
        assert raw_body(client, unmatched) == b"".join(answer_events())
        assert [(s.entry.label, s.how) for s in selections] == [
            ("anthropic.jsonl exchange 1", "order"),
            ("anthropic.jsonl exchange 2", "order"),
        ]
    transport = playback_transport([OPENAI, recording])
    with openai.OpenAI(
        api_key="sk-test",
        base_url="http://p/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=transport),
    ) as client:
        stream = client.chat.completions.create(model="m", messages=unmatched, stream=True)
        assert [c.id for c in stream][0].startswith("chatcmpl-")  # an OpenAI stream
    assert transport.selections[0].entry.label == "openai.jsonl exchange 1"


@pytest.mark.parametrize("mode", MODES)
def test_a_raw_anthropic_sse_body_answers_any_request(mode, tmp_path):
    path = tmp_path / "tool.sse"
    path.write_bytes(b"".join(tool_use_events()))
    with provider(mode, str(path), strict=True) as (client, _, selections):
        with client.messages.stream(**request_body(follow_up({}))) as stream:
            message = stream.get_final_message()
        assert [b.input for b in message.content if b.type == "tool_use"] == [TOOL_INPUT]
        assert selections[0].how == "any"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_mismatch_reads_as_an_anthropic_error(mode, recording):
    name = "streamscope serve" if mode == "server" else "streamscope playback"
    with provider(mode, recording, strict=True) as (client, _, _selections):
        other = copy.deepcopy(follow_up(TOOL_INPUT))
        other[2]["content"][0]["tool_use_id"] = "toolu_made_up"
        with pytest.raises(anthropic.BadRequestError) as e:
            client.messages.create(**request_body(other), stream=True)
        assert e.value.type == "unmatched_request"
        assert e.value.api_message == (
            f"{name}: no recorded exchange matches this request: messages differ from "
            "anthropic.jsonl exchange 2 at message 3 (role user), content[0].tool_use_id: "
            f'the request has "toolu_made_up", the recording "{TOOL_ID}"'
        )
        with pytest.raises(anthropic.NotFoundError) as e:
            client.models.list()
        assert e.value.api_message == (
            f"{name}: only POST .../v1/messages, POST .../model/{{id}}/invoke-with-response-stream "
            "and POST .../model/{id}/invoke are served, not GET /v1/models"
        )
    with provider(mode, OPENAI) as (client, _, _selections):
        with pytest.raises(anthropic.BadRequestError) as e:
            client.messages.create(**request_body(QUESTION), stream=True)
        assert e.value.api_message.endswith("the files hold no Anthropic Messages exchange")


@pytest.mark.slow
def test_serve_says_an_anthropic_clients_base_url(recording):
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "serve", recording],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = proc.stdout.readline().strip()  # an OpenAI client's, as before
        proc.stderr.readline()  # what is served
        said = proc.stderr.readline().strip()
        client = anthropic.Anthropic(
            api_key="sk-ant-test", base_url=said.rsplit(" ", 1)[1], max_retries=0
        )
        with client, client.messages.stream(**request_body(QUESTION)) as stream:
            assert stream.get_final_message().stop_reason == "tool_use"
    finally:
        proc.terminate()
        proc.wait(20)
    assert base.endswith("/v1")
    assert said == f"streamscope: an Anthropic client's base URL: {base.removesuffix('/v1')}"
