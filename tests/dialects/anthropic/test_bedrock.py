"""Claude on Bedrock (InvokeModelWithResponseStream) read as Anthropic Messages: the
invoke paths claimed for Anthropic bodies only, the model and the stream told by the path,
the AWS event stream's chunks read as the events they carry (every strategy, every rule and
the conversation contract), and bad input one finding each."""

from __future__ import annotations

import struct

import orjson
import pytest

from streamscope.analysis import analyze
from streamscope.dialects import claimant, request_facts, streams_in
from streamscope.dialects.anthropic import ANTHROPIC

from ...anthropic_stream import TOOL_ID, TOOL_INPUT, tool_use_events
from ...bedrock_invoke import (
    URL,
    chunk,
    events_json,
    exception,
    invoke_body,
    request_body,
    write_recording,
)

PATH = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"


def test_the_invoke_paths_are_claimed_for_anthropic_bodies_only():
    body = request_body()
    assert claimant(URL, body) is ANTHROPIC
    assert claimant(PATH.replace("-with-response-stream", ""), body) is ANTHROPIC
    assert claimant("/bedrock" + PATH, body) is ANTHROPIC  # under a proxy's mount
    llama = {"prompt": "hi", "max_gen_len": 64}
    titan = {"inputText": "hi"}
    mistral = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 9}  # no version
    for other in (llama, titan, mistral, None, [1], "x"):
        assert claimant(PATH, other) is None, other


def test_the_path_tells_model_stream_and_framing():
    facts = request_facts(ANTHROPIC, URL, request_body())
    assert facts.model == "anthropic.claude-sonnet-4-5-20250929-v1:0" and facts.stream is True
    assert facts.tools == request_body()["tools"]
    plain = request_facts(ANTHROPIC, PATH.replace("-with-response-stream", ""), request_body())
    assert plain.stream is False
    assert streams_in(ANTHROPIC.name, URL, request_body()) == "aws-eventstream"
    assert streams_in(ANTHROPIC.name, "/v1/messages", {"stream": True}) == "sse"


def read(tmp_path, body: bytes, **options) -> object:
    path = tmp_path / "bedrock.jsonl"
    write_recording(str(path), body, **options)
    return analyze(path)


def kinds(stream) -> list[str]:
    return [a.kind for a in stream.anomalies]


def test_a_bedrock_stream_reads_as_the_same_stream_over_sse(tmp_path):
    (stream,) = read(tmp_path, invoke_body(), reads=7).streams
    sse = tmp_path / "api.sse"
    sse.write_bytes(b"".join(tool_use_events()))
    (over_sse,) = analyze(sse).streams
    assert stream.dialect == "anthropic-messages" and stream.framing == "aws-eventstream"
    assert [(c.id, c.name, orjson.loads(c.arguments)) for c in stream.tool_calls] == [
        (TOOL_ID, "get_weather", TOOL_INPUT)
    ]
    assert stream.tool_calls == over_sse.tool_calls and kinds(stream) == kinds(over_sse)
    assert stream.strategies == over_sse.strategies  # every client, the SDK's too


def test_the_conversation_contract_holds_over_bedrock(tmp_path):
    same, changed = tmp_path / "same.jsonl", tmp_path / "changed.jsonl"
    write_recording(str(same), sent_back=TOOL_INPUT)
    assert analyze(same).contract == [] and analyze(same).compared == 1
    write_recording(str(changed), sent_back={"city": "Lyon"})
    assert [f.kind for f in analyze(changed).contract] == ["tool-call-arguments-changed"]


def test_an_exception_is_the_error_event_the_sdk_raises_on(tmp_path):
    body = b"".join(map(chunk, events_json()[:3])) + exception(
        "throttlingException", "Too many requests"
    )
    (stream,) = read(tmp_path, body).streams
    assert kinds(stream).count("provider-error") == 1
    error = next(a for a in stream.anomalies if a.kind == "provider-error")
    assert "Too many requests" in error.message
    sdk = stream.strategies["anthropic-sdk"]
    assert "throttlingException" in sdk.error


BODY = invoke_body()
FIRST = struct.unpack_from(">I", BODY)[0]  # where the second message begins


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (BODY[:FIRST] + chunk(b"", raw="%%%") + BODY[FIRST:], "frame-invalid"),
        (BODY[:FIRST] + chunk(b"{not json") + BODY[FIRST:], "chunk-invalid-json"),
        (BODY[: FIRST - 1] + bytes([BODY[FIRST - 1] ^ 1]) + BODY[FIRST:], "frame-invalid"),
        (BODY[:-7], "stream-truncated"),
    ],
    ids=["not-base64", "not-json", "bad-crc", "truncated"],
)
def test_bad_input_is_one_finding(tmp_path, body, kind):
    (stream,) = read(tmp_path, body).streams
    assert kinds(stream).count(kind) == 1, kinds(stream)


def test_a_llama_invoke_stream_is_no_anthropic_stream_and_reads(tmp_path):
    path = tmp_path / "llama.jsonl"
    body = b"".join(chunk(orjson.dumps({"generation": g})) for g in ("Hel", "lo"))
    write_recording(str(path), body, request={"prompt": "Hi", "max_gen_len": 64})
    (stream,) = analyze(path).streams
    assert stream.dialect != "anthropic-messages" and stream.framing == "aws-eventstream"
