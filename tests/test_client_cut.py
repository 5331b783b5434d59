"""A stream the client closed: what follows from the cut is the client's, not the provider's."""

from __future__ import annotations

import orjson
import pytest

from streamscope.analysis import analyze
from streamscope.recording import RecordingWriter

from .helpers import run


def _delta(index: int, args: str, cid: str | None = None) -> dict:
    call: dict = {"index": index, "function": {"arguments": args}}
    if cid is not None:
        call |= {"id": cid, "type": "function", "function": {"name": "f", "arguments": args}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


# call 0 ends with arguments that do not parse (the provider's), call 1 is cut mid-way
CHUNKS = [
    _delta(0, "", "call_0"),
    _delta(0, '{"a": 1,,}'),
    _delta(1, "", "call_1"),
    _delta(1, '{"b": '),
]


def _by_index(result) -> dict:
    return {(a.kind, a.index): a for a in result.anomalies}


def test_the_cut_is_a_warning_said_as_the_clients_and_the_providers_own_errors_stay():
    found = _by_index(run(CHUNKS, done=False, end_reason="client-closed"))
    cut = found[("args-invalid-json", 1)]
    assert (cut.severity, cut.cut_by_client) == ("warning", True)
    assert "cut by the client" in cut.message
    whole = found[("args-invalid-json", 0)]  # it ended before the cut: still an error
    assert (whole.severity, whole.cut_by_client) == ("error", False)
    truncated = found[("stream-truncated", None)]
    assert (truncated.severity, truncated.cut_by_client) == ("warning", True)
    assert found[("finish-reason-missing", None)].cut_by_client


def test_a_stream_the_connection_cut_is_still_an_error():
    found = _by_index(run(CHUNKS, done=False, end_reason="upstream-error"))
    assert found[("stream-truncated", None)].severity == "error"
    assert found[("args-invalid-json", 1)].severity == "error"
    assert not any(a.cut_by_client for a in found.values())


def test_a_client_that_left_after_the_end_cut_nothing():
    ended = [*CHUNKS[:2], {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    result = run(ended, done=True, end_reason="client-closed")
    assert not any(a.cut_by_client for a in result.anomalies)
    assert result.ended == "done"


def _event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {orjson.dumps(data).decode()}\n\n".encode()


# A tool call cut mid-arguments in each other dialect: (the request's URL, the body so far)
CUT = {
    "anthropic-messages": (
        "https://api.anthropic.com/v1/messages",
        _event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": "m",
                    "stop_reason": None,
                },
            },
        )
        + _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
            },
        )
        + _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"city": "Pa'},
            },
        ),
    ),
    "gemini": (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/m:streamGenerateContent?alt=sse",
        b"data: "
        + orjson.dumps(
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "f",
                                        "willContinue": True,
                                        "partialArgs": [
                                            {
                                                "jsonPath": "$.city",
                                                "stringValue": "Pa",
                                                "willContinue": True,
                                            }
                                        ],
                                    }
                                }
                            ],
                        }
                    }
                ]
            }
        )
        + b"\n\n",
    ),
    "openai-responses": (
        "https://api.openai.com/v1/responses",
        _event(
            "response.created",
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {"id": "resp_1", "status": "in_progress", "output": []},
            },
        )
        + _event(
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": 1,
                "output_index": 0,
                "item": {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "f",
                    "arguments": "",
                },
            },
        )
        + _event(
            "response.function_call_arguments.delta",
            {
                "type": "response.function_call_arguments.delta",
                "sequence_number": 2,
                "output_index": 0,
                "item_id": "fc_1",
                "delta": '{"city": "Pa',
            },
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CUT))
def test_every_dialect_says_the_cut_is_the_clients(tmp_path, name):
    url, body = CUT[name]
    path = tmp_path / "cut.jsonl"
    with RecordingWriter(str(path)) as w:
        x = w.new_exchange()
        w.request(x, "POST", url, [], orjson.dumps({"model": "m", "stream": True}))
        w.response(x, 200, [("content-type", "text/event-stream")])
        w.chunk(x, body)
        w.end(x, "client-closed")
    (stream,) = analyze(path).streams
    assert stream.dialect == name and stream.ended == "client-closed"
    # what --strict fails on: nothing
    assert [a.kind for a in stream.anomalies if a.severity != "info" and not a.cut_by_client] == []
    assert {"stream-truncated"} < {a.kind for a in stream.anomalies if a.cut_by_client}
