"""`streamscope serve` answering Bedrock's clients in the AWS event stream: the real
anthropic SDK's AnthropicBedrock and boto3's bedrock-runtime
`invoke_model_with_response_stream`, from an Anthropic API recording (SSE, its events
written as chunk messages) and from a Bedrock recording (its bytes as recorded); and a
Bedrock recording served to the Anthropic API's own client, in SSE."""

from __future__ import annotations

import contextlib

import anthropic
import httpx2
import orjson
import pytest

from streamscope.framing.aws_eventstream import EventStreamDecoder
from streamscope.playback.serve import ServeServer
from streamscope.providers import ANTHROPIC
from streamscope.recording import RecordingWriter

from .anthropic_stream import MODEL, QUESTION, TOOL_ID, TOOL_INPUT, TOOLS, tool_use_events
from .bedrock_invoke import MODEL_ID, events_json, request_body, write_recording

pytestmark = pytest.mark.slow
boto3 = pytest.importorskip("boto3")


@pytest.fixture(autouse=True)
def aws(monkeypatch, tmp_path):
    """Dummy credentials, and no AWS file or instance metadata of the machine's."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "AKIDSTREAMSCOPETEST",
        "AWS_SECRET_ACCESS_KEY": "not-a-secret",
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def api_recording(tmp_path) -> str:
    """A tool call as the recorder writes it from the Anthropic API (SSE)."""
    path = str(tmp_path / "anthropic.jsonl")
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        body = {"max_tokens": 1024, "messages": QUESTION, "model": MODEL, "tools": TOOLS}
        w.request(
            ex,
            "POST",
            "https://api.anthropic.com/v1/messages",
            [("anthropic-version", "2023-06-01")],
            orjson.dumps({**body, "stream": True}),
        )
        w.response(ex, 200, [("content-type", "text/event-stream; charset=utf-8")])
        for event in tool_use_events():
            w.chunk(ex, event)
        w.end(ex, "complete")
    return path


@contextlib.contextmanager
def served(path: str):
    server = ServeServer([path])
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", server
    finally:
        server.stop()


def bedrock_stream(base: str) -> anthropic.types.Message:
    client = anthropic.AnthropicBedrock(base_url=base, aws_region="us-east-1", max_retries=0)
    with client.messages.stream(
        model=MODEL_ID, max_tokens=1024, messages=QUESTION, tools=TOOLS
    ) as stream:
        for _ in stream:
            pass
        return stream.get_final_message()


def boto3_events(base: str) -> list[dict]:
    client = boto3.client("bedrock-runtime", endpoint_url=base, region_name="us-east-1")
    answer = client.invoke_model_with_response_stream(
        modelId=MODEL_ID, body=orjson.dumps(request_body())
    )
    return [orjson.loads(event["chunk"]["bytes"]) for event in answer["body"]]


def tool_use(message) -> list[tuple[str, str, dict]]:
    return [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]


@pytest.mark.parametrize("recorded", ["api", "bedrock"])
def test_anthropic_bedrock_streams_the_recorded_tool_call(recorded, api_recording, tmp_path):
    path = api_recording if recorded == "api" else str(tmp_path / "bedrock.jsonl")
    if recorded == "bedrock":
        write_recording(path)
    with served(path) as (base, server):
        message = bedrock_stream(base)
    assert tool_use(message) == [(TOOL_ID, "get_weather", TOOL_INPUT)]
    assert message.stop_reason == "tool_use"
    # an API request's model is no Bedrock model id: in order; a Bedrock one matches
    assert server.app.selections[0].how == ("order" if recorded == "api" else "body")


@pytest.mark.parametrize("recorded", ["api", "bedrock"])
def test_boto3_reads_every_recorded_event_in_its_chunk(recorded, api_recording, tmp_path):
    path = api_recording if recorded == "api" else str(tmp_path / "bedrock.jsonl")
    if recorded == "bedrock":
        write_recording(path)
    with served(path) as (base, server):
        events = boto3_events(base)
    assert events == [orjson.loads(e) for e in events_json()]
    if recorded == "bedrock":  # its request matched: the model is the path's
        assert server.app.selections[0].how == "body"


def test_a_bedrock_recording_is_served_byte_exact(tmp_path):
    path = str(tmp_path / "bedrock.jsonl")
    body = write_recording(path, reads=4)
    url_path = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
    with (
        served(path) as (base, _),
        httpx2.Client() as client,
        client.stream("POST", base + url_path, json=request_body()) as answer,
    ):
        reads = list(answer.iter_raw())
        kind = answer.headers["content-type"]
    assert b"".join(reads) == body and len(reads) == 4  # the recorded bytes and reads
    assert kind == "application/vnd.amazon.eventstream"


def test_a_bedrock_recording_is_served_to_the_api_client_in_sse(tmp_path):
    path = str(tmp_path / "bedrock.jsonl")
    write_recording(path)
    with served(path) as (base, server):
        client = anthropic.Anthropic(
            base_url=server.base_url_for(ANTHROPIC), api_key="sk-ant-test", max_retries=0
        )
        with client.messages.stream(
            model=MODEL, max_tokens=1024, messages=QUESTION, tools=TOOLS
        ) as stream:
            message = stream.get_final_message()
    assert tool_use(message) == [(TOOL_ID, "get_weather", TOOL_INPUT)]


def test_an_sse_stream_written_as_chunks_reads_back_as_its_events(api_recording):
    with served(api_recording) as (base, _), httpx2.Client() as client:
        url_path = f"/model/{MODEL_ID}/invoke-with-response-stream"
        body = client.post(base + url_path, json=request_body()).content
    frames = EventStreamDecoder().feed(body)
    assert [f.invalid for f in frames] == [None] * len(events_json())
    assert [f.payload for f in frames] == [orjson.loads(e) for e in events_json()]
    assert {h.value for f in frames for h in f.headers} == {"chunk", "application/json", "event"}


def test_boto3_converse_stream_gets_the_recorded_converse_events_byte_exact():
    """serve answers ConverseStream in the event stream as recorded: boto3 reads the two
    turns of the bundled sample, the first with its call, the second matched by its
    messages (the toolResult) and answering in text."""
    sample = "recordings/bedrock-text-without-start.jsonl"
    with served(sample) as (base, server):
        client = boto3.client("bedrock-runtime", endpoint_url=base, region_name="us-east-1")
        from streamscope.inputs import open_input

        with open_input(sample) as source:
            first, second = (source.exchange(n).request.json_body() for n in (1, 2))
        model = "us.anthropic.claude-sonnet-4-20250514-v1:0"
        turns = []
        for asked in (second, first):  # (out of order: each is matched by its body)
            keys = ("messages", "system", "toolConfig", "inferenceConfig")
            answer = client.converse_stream(
                modelId=model, **{k: asked[k] for k in keys if k in asked}
            )
            turns.append(list(answer["stream"]))
        with httpx2.Client() as raw:
            body = raw.post(f"{base}/model/{model}/converse-stream", json=first).content
    later, earlier = turns
    starts = [e["contentBlockStart"] for e in earlier if "contentBlockStart" in e]
    assert [s["start"]["toolUse"]["name"] for s in starts] == ["get_weather"]
    assert not any("contentBlockStart" in e for e in later)
    assert "".join(
        e["contentBlockDelta"]["delta"].get("text", "") for e in later if "contentBlockDelta" in e
    ).startswith("It is 14")
    assert [s.how for s in server.app.selections] == ["body", "body", "body"]
    with open_input(sample) as source:
        wire = source.exchange(1).wire
        recorded = b"".join(data for data, _ in wire.reads_from(0, len(wire)))
    assert body == recorded  # the bytes as recorded, every CRC as it was


def test_a_request_serve_cannot_answer_is_a_modelled_bedrock_exception_to_boto3():
    with served("recordings/bedrock-text-without-start.jsonl") as (base, _):
        client = boto3.client("bedrock-runtime", endpoint_url=base, region_name="us-east-1")
        asked = [{"role": "user", "content": [{"text": "What is the weather in Paris?"}]}]
        # (the sample holds streams only: a Converse request without one is not served)
        with pytest.raises(client.exceptions.ValidationException) as raised:
            client.converse(modelId="us.anthropic.claude-sonnet-4-20250514-v1:0", messages=asked)
    assert "streamscope serve" in str(raised.value)
