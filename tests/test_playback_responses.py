"""`streamscope serve` and `playback_transport` answering the real openai client on the
Responses API: its `POST /v1/responses` gets a recorded Responses stream (matched by body,
else the next in order), a raw SSE body answers anything, and a mismatch reads as an
OpenAI error."""

from __future__ import annotations

import asyncio
import contextlib
import os

import httpx2
import openai
import orjson
import pytest

from streamscope.http import clients
from streamscope.playback import playback_transport
from streamscope.playback.serve import ServeServer
from streamscope.recording import RecordingWriter

from .helpers import serve_command
from .responses_stream import (
    ANSWER,
    ARGUMENTS,
    CALL_ID,
    MODEL,
    OUTPUT,
    QUESTION,
    RESPONSE_IDS,
    TOOLS,
    answer_events,
    function_call_events,
)
from .test_playback_anthropic import grouped

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
OPENAI = os.path.join(ROOT, "openai.jsonl")
# the HTTP package the installed openai builds on (httpx2 since 3.57, httpx before)
OPENAI_HTTP = clients.load(clients.openai_package())
MODES = ["server", "transport"]  # a mock provider, or the transport in an httpx2 client
RESULT = {"type": "function_call_output", "call_id": CALL_ID, "output": OUTPUT}
# Turn 2 goes on from turn 1's stored response: only the call's output is sent.
TURNS = [
    ({"input": QUESTION}, function_call_events),
    (
        {"input": [RESULT], "previous_response_id": RESPONSE_IDS[0]},
        lambda: answer_events(RESPONSE_IDS[0]),
    ),
]


def request_body(turn: dict) -> dict:
    return {"model": MODEL, "tools": TOOLS, **turn}


def write_recording(path: str) -> str:
    """Both turns of a function call, as the recorder writes them from the Responses API."""
    url = "https://api.openai.com/v1/responses"
    with RecordingWriter(path) as w:
        for turn, events in TURNS:
            ex = w.new_exchange()
            body = orjson.dumps({**request_body(turn), "stream": True})
            w.request(ex, "POST", url, [("content-type", "application/json")], body)
            w.response(ex, 200, [("content-type", "text/event-stream; charset=utf-8")])
            for read in grouped(events()):
                w.chunk(ex, read)
            w.end(ex, "complete")
    return path


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> str:
    return write_recording(str(tmp_path_factory.mktemp("responses") / "responses.jsonl"))


@contextlib.contextmanager
def provider(mode: str, paths, **options):
    """(an openai client, an async client factory, the selections) against `paths`."""
    paths = [paths] if isinstance(paths, str) else paths
    common = {"api_key": "sk-test", "max_retries": 0}
    if mode == "server":
        server = ServeServer(paths, **options)
        server.start()
        base = server.base_url
        client = openai.OpenAI(base_url=base, **common)
        try:
            yield (
                client,
                lambda: openai.AsyncOpenAI(base_url=base, **common),
                server.app.selections,
            )
        finally:
            client.close()
            server.stop()
    else:
        transport = playback_transport(paths, **options)
        base = "http://provider.test/v1"
        client = openai.OpenAI(
            base_url=base, http_client=OPENAI_HTTP.Client(transport=transport), **common
        )
        try:
            yield (
                client,
                lambda: openai.AsyncOpenAI(
                    base_url=base,
                    http_client=OPENAI_HTTP.AsyncClient(transport=transport),
                    **common,
                ),
                transport.selections,
            )
        finally:
            client.close()


def raw_body(client: openai.OpenAI, turn: dict) -> bytes:
    with client.responses.with_streaming_response.create(
        **request_body(turn), stream=True
    ) as response:
        return b"".join(response.iter_bytes())


def first_call(client: openai.OpenAI, turn: dict) -> tuple[str, dict]:
    """The response's id and its function call, as `responses.stream(...)` assembles them."""
    with client.responses.stream(**request_body(turn)) as stream:
        response = stream.get_final_response()
    (call,) = [item for item in response.output if item.type == "function_call"]
    assert call.call_id == CALL_ID and call.name == "get_weather"
    return response.id, call.parsed_arguments


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_assembles_the_recorded_call_and_answer(mode, recording):
    with provider(mode, recording) as (client, aclient, selections):
        response_id, arguments = first_call(client, TURNS[0][0])
        assert (response_id, arguments) == (RESPONSE_IDS[0], ARGUMENTS)

        async def answer() -> str:
            async with aclient() as client:
                events = await client.responses.create(
                    **request_body({"input": [RESULT], "previous_response_id": response_id}),
                    stream=True,
                )
                return "".join(
                    [e.delta async for e in events if e.type == "response.output_text.delta"]
                )

        assert asyncio.run(answer()) == ANSWER
        assert [(s.entry.exchange, s.how) for s in selections] == [(1, "body"), (2, "body")]
        # the bytes are the recorded ones, read by read
        assert raw_body(client, TURNS[1][0]) == b"".join(TURNS[1][1]())
    transport = playback_transport(recording, exchange=1)
    with httpx2.Client(transport=transport) as http:
        body = {**request_body(TURNS[0][0]), "stream": True}
        with http.stream("POST", "http://p/v1/responses", json=body) as r:
            assert list(r.iter_raw()) == grouped(function_call_events())


@pytest.mark.parametrize("mode", MODES)
def test_each_api_is_answered_from_its_own_exchanges(mode, recording):
    unmatched = {"input": "something else"}
    with provider(mode, [OPENAI, recording]) as (client, _, selections):
        # unmatched: the next in order among the Responses exchanges, never chat's
        assert raw_body(client, unmatched) == b"".join(function_call_events())
        assert raw_body(client, unmatched) == b"".join(TURNS[1][1]())
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        assert [c.id for c in stream][0].startswith("chatcmpl-")  # a chat stream
        assert [(s.entry.label, s.how) for s in selections] == [
            ("responses.jsonl exchange 1", "order"),
            ("responses.jsonl exchange 2", "order"),
            ("openai.jsonl exchange 1", "order"),
        ]


@pytest.mark.parametrize("mode", MODES)
def test_a_raw_responses_sse_body_answers_any_request(mode, tmp_path):
    path = tmp_path / "call.sse"
    path.write_bytes(b"".join(function_call_events()))
    with provider(mode, str(path), strict=True) as (client, _, selections):
        assert first_call(client, {"input": "anything"}) == (RESPONSE_IDS[0], ARGUMENTS)
        assert selections[0].how == "any"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_mismatch_reads_as_an_openai_error(mode, recording):
    name = "streamscope serve" if mode == "server" else "streamscope playback"
    unmatched = f"{name}: no recorded exchange matches this request: "
    with provider(mode, recording, strict=True) as (client, _, _selections):
        made_up = {**RESULT, "call_id": "call_made_up"}
        turn = {"input": [made_up], "previous_response_id": RESPONSE_IDS[0]}
        with pytest.raises(openai.BadRequestError) as e:
            client.responses.create(**request_body(turn), stream=True)
        assert e.value.body["type"] == "unmatched_request"
        assert e.value.body["message"] == unmatched + (
            "input differs from responses.jsonl exchange 2 at item 1 (type "
            f'function_call_output), call_id: the request has "call_made_up", the recording '
            f'"{CALL_ID}"'
        )
        turn = {"input": [RESULT], "previous_response_id": "resp_other"}
        with pytest.raises(openai.BadRequestError) as e:
            client.responses.create(**request_body(turn), stream=True)
        assert e.value.body["message"] == unmatched + (
            "previous_response_id differs from responses.jsonl exchange 2: the request has "
            f'"resp_other", the recording "{RESPONSE_IDS[0]}"'
        )
        with pytest.raises(openai.NotFoundError) as e:
            client.models.list()
        assert e.value.body["message"] == (
            f"{name}: only POST .../chat/completions and POST .../responses are served, "
            "not GET /v1/models"
        )
    with provider(mode, OPENAI) as (client, _, _selections):
        with pytest.raises(openai.BadRequestError) as e:
            client.responses.create(**request_body(TURNS[0][0]), stream=True)
        assert e.value.body["message"].endswith("the files hold no Responses exchange")


@pytest.mark.slow
def test_serve_answers_an_openai_client_on_the_responses_api(recording):
    with (
        serve_command(recording) as (base, _),  # an OpenAI client's base URL
        openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0) as client,
    ):
        assert first_call(client, TURNS[0][0]) == (RESPONSE_IDS[0], ARGUMENTS)
    assert base.endswith("/v1")
