"""Bedrock streams other projects recorded from the real service (tests/fixtures/bedrock/,
attributed in its README): read with the right dialect, and robust's calls and text equal
what each project's test asserts it assembles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.analysis import analyze

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bedrock"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_projects_stream_reads_as_the_project_assembles_it(name):
    want = EXPECTED[name]
    (stream,) = analyze(FIXTURES / name).streams
    assert (stream.dialect, stream.framing) == (want["dialect"], "aws-eventstream")
    assert stream.ended == "done" or want["dialect"] == "anthropic-messages", stream.ended
    calls = [c for c in stream.tool_calls if c.type != "server_tool_use"]
    assert [c.name for c in calls] == [c["name"] for c in want["calls"]]
    for call, expected in zip(calls, want["calls"], strict=True):
        # (where the test asserts only that the id is a string: Nova's are UUIDs)
        assert call.id == expected["id"] if expected["id"] else isinstance(call.id, str)
        assert call.id
        assert json.loads(call.arguments) == expected["input"]
    if "text" in want:
        assert stream.content == want["text"]
    # what the project's stream holds is no fault of the stream's
    assert not [a.kind for a in stream.anomalies if a.severity == "error"]
    # and strands, which reads ConverseStream, builds the same calls from it (a server
    # tool's use aside: strands runs it as a client's)
    if isinstance(stream.strategies.get("strands"), list) and len(calls) == len(stream.tool_calls):
        assert not stream.differs("strands"), stream.strategies["strands"]


def test_strands_is_not_said_to_read_nova_through_invoke():
    (stream,) = analyze(FIXTURES / "otel-invoke-nova-parallel-calls.bin").streams
    said = stream.strategies["strands"]
    assert not isinstance(said, list) and "ConverseStream only" in str(said)


def test_a_server_tool_is_reported_as_one_beside_the_call_the_client_runs():
    (stream,) = analyze(FIXTURES / "pydantic-ai-code-execution-server-tool.bin").streams
    assert [(c.name, c.type) for c in stream.tool_calls] == [
        ("nova_code_interpreter", "server_tool_use"),
        ("final_result", "tool_use"),  # (the type as sent)
    ]
    assert "server-tool-use" in {a.kind for a in stream.anomalies}
