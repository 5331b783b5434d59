"""`export --format otlp`: a recording as OTLP/JSON traces (the GenAI semantic conventions'
inference spans, streamscope's findings as span events), and `--otlp-endpoint`: the same
sent as OTLP/HTTP protobuf to a collector."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from streamscope.cli import main
from streamscope.export.otlp import build, endpoint_url, to_protobuf

from .test_export_secrets import BODY_KEY, har
from .test_har import SECRET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUGGY = os.path.join(ROOT, "recordings", "anthropic-buggy-agent.jsonl")  # 2 turns, 1 conversation
CODEX = os.path.join(ROOT, "recordings", "codex-websocket.jsonl")  # a session of 3 responses
CHUNKS = os.path.join(ROOT, "recordings", "deepseek-cumulative.chunks.jsonl")  # no times


def spans(request: dict) -> list[dict]:
    return [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def attrs(item: dict) -> dict:
    """OTLP/JSON attributes as a dict of plain values."""
    out = {}
    for a in item["attributes"]:
        ((kind, value),) = a["value"].items()
        out[a["key"]] = (
            int(value)
            if kind == "intValue"
            else [next(iter(v.values())) for v in value["values"]]
            if kind == "arrayValue"
            else value
        )
    return out


def export(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(main, ["export", *args])
    return done.exit_code, done.stdout, done.stderr


def test_a_conversation_is_one_trace_of_a_span_per_exchange_and_parses_as_otlp():
    code, out, _ = export(BUGGY, "--format", "otlp", "-o", "-")
    assert code == 0
    request = json.loads(out)
    json_format.Parse(out, ExportTraceServiceRequest())  # (OTLP/JSON is protobuf's JSON)
    root, first, second = spans(request)
    assert {s["traceId"] for s in (root, first, second)} == {root["traceId"]}
    assert root["name"] == "conversation" and "parentSpanId" not in root
    assert first["parentSpanId"] == second["parentSpanId"] == root["spanId"]
    a = attrs(first)
    assert first["name"] == "chat claude-sonnet-4-5-20250929" and first["kind"] == 3  # CLIENT
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "anthropic"
    assert a["gen_ai.response.id"] == "msg_01Rv8NcQ3kX6mT2wP9bZ5hYs"
    assert a["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (470, 29)
    assert a["server.address"] == "api.anthropic.com" and a["server.port"] == 443
    assert a["gen_ai.request.stream"] is True and a["gen_ai.response.time_to_first_chunk"] > 0
    assert "gen_ai.conversation.id" not in a  # (no id the request carries: never made up)
    assert a["streamscope.conversation"] == 1 and a["streamscope.link"].endswith("#1")
    # the call robust assembled, its id and name without content, no arguments
    (message,) = json.loads(a["gen_ai.output.messages"])
    (part,) = message["parts"]
    assert part == {
        "type": "tool_call",
        "name": "get_weather",
        "id": "toolu_01Pz5MwK9rT3xQ7nV2bY6cLh",
    }
    assert message["finish_reason"] == "tool_use"
    # the anomaly at its frame's time, a client that builds other calls, the contract
    events = {e["name"]: [] for e in first["events"] + second["events"]}
    for e in first["events"] + second["events"]:
        events[e["name"]].append(e)
    (anomaly,) = events["streamscope.anomaly"]
    an = attrs(anomaly)
    assert an["streamscope.anomaly.kind"] == "partial-json-empty"
    assert an["streamscope.anomaly.link"].endswith("#1@3")
    assert (
        int(first["startTimeUnixNano"])
        < int(anomaly["timeUnixNano"])
        < int(first["endTimeUnixNano"])
    )
    clients = {
        attrs(e)["streamscope.client.name"]: attrs(e) for e in events["streamscope.client"][:4]
    }
    assert clients["start-concat"]["streamscope.client.differs"] is True
    kinds = {attrs(e)["streamscope.contract.kind"] for e in events["streamscope.contract"]}
    assert kinds == {"tool-result-id-mismatch", "tool-result-missing"}
    # the same request as protobuf: ids as bytes (hex in OTLP/JSON)
    message = ExportTraceServiceRequest.FromString(to_protobuf(request))
    span = message.resource_spans[0].scope_spans[0].spans[1]
    assert span.trace_id.hex() == first["traceId"] and len(span.span_id) == 8


def test_a_re_export_is_the_same_and_content_is_written_only_when_asked():
    plain = build(BUGGY).json()
    assert build(BUGGY).json() == plain  # ids from the file's bytes: the same trace again
    assert b"Weather in Madrid" not in plain and b"Madrid" not in plain
    assert b"gen_ai.input.messages" not in plain
    full = build(BUGGY, content=True)
    a = attrs(spans(full.request)[1])
    assert json.loads(a["gen_ai.input.messages"])[0]["parts"][0]["content"] == "Weather in Madrid?"
    (message,) = json.loads(a["gen_ai.output.messages"])
    assert message["parts"][0]["arguments"] == {"city": "Madrid"}


def test_a_session_is_a_span_per_response_and_a_file_without_times_says_so():
    root, *turns = spans(build(CODEX).request)
    assert [attrs(s)["streamscope.turn"] for s in turns] == [1, 2, 3]
    assert all(s["parentSpanId"] == root["spanId"] for s in turns)
    assert attrs(turns[1])["streamscope.link"].endswith("#1.2")
    _, stream = spans(build(CHUNKS).request)
    a = attrs(stream)
    assert a["streamscope.clock"] == "none" and "gen_ai.response.time_to_first_chunk" not in a
    assert a["gen_ai.response.model"] == "deepseek-chat"


def test_no_secret_goes_even_with_content(tmp_path):
    path = har(tmp_path)
    code, out, err = export(path, "--format", "otlp", "--include-content")
    assert code == 0
    assert SECRET not in out and BODY_KEY not in out
    assert "[REDACTED" in out  # (the text the stream echoed them in is there, masked)
    # a key-shaped word no request carried, in what the model wrote: masked too
    said = {"choices": [{"index": 0, "delta": {"content": "use sk-proj-abcdefgh12345678"}}]}
    body = tmp_path / "said.sse"
    body.write_text(f"data: {json.dumps(said)}\n\ndata: [DONE]\n\n")
    text = build(str(body), content=True).json()
    assert b"sk-proj-abcdefgh12345678" not in text and b"use [REDACTED" in text


def test_the_options_that_make_fixtures_are_refused_in_one_line():
    for args in (
        ["--frames", "1-2"],
        ["--minimal"],
        ["--redact-content"],
        ["-o", "x", "--otlp-endpoint", "http://h"],
    ):
        code, _, err = export(BUGGY, "--format", "otlp", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1, (args, err)
    code, _, err = export(BUGGY, "--format", "md", "--include-content")
    assert code == 2 and "--format otlp" in err
    assert endpoint_url("http://127.0.0.1:6006") == "http://127.0.0.1:6006/v1/traces"
    assert endpoint_url("http://h:4318/v1/traces") == "http://h:4318/v1/traces"


class Collector(BaseHTTPRequestHandler):
    """A fake OTLP/HTTP collector: keeps each body it is posted, answers `status`."""

    got: list[tuple[str, str, bytes]] = []
    status = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.got.append((self.path, self.headers["Content-Type"], body))
        answer = ExportTraceServiceResponse().SerializeToString() if self.status == 200 else b"nope"
        self.send_response(self.status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector():
    server = HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Collector.got, Collector.status = [], 200
    yield server
    server.shutdown()
    server.server_close()


def test_the_endpoint_gets_the_traces_as_protobuf(collector):
    url = f"http://127.0.0.1:{collector.server_port}"
    code, out, err = export(BUGGY, "--otlp-endpoint", url)
    assert code == 0 and out == "", err
    assert f"sent 3 spans in 1 trace to {url}/v1/traces" in err
    ((path, kind, body),) = Collector.got
    assert (path, kind) == ("/v1/traces", "application/x-protobuf")
    message = ExportTraceServiceRequest.FromString(body)
    names = [s.name for s in message.resource_spans[0].scope_spans[0].spans]
    assert names == ["conversation", *["chat claude-sonnet-4-5-20250929"] * 2]
    Collector.status = 415
    code, _, err = export(BUGGY, "--format", "otlp", "--otlp-endpoint", url)
    assert code == 2 and "answered 415" in err and len(err.strip().splitlines()) == 1
    collector.shutdown()
    collector.server_close()
    code, _, err = export(BUGGY, "--otlp-endpoint", url)
    assert code == 2 and "cannot send" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "name, span, provider, facts",
    [
        (
            "openai.jsonl",
            "chat gpt-4o-mini",
            "openai",
            ("chatcmpl-CLq8Yt3nVb1XwR5zLm0sDf2GhJ9Pa", "gpt-4o-mini-2024-07-18", None, None),
        ),
        (
            "responses-interleaved.jsonl",
            "chat Qwen3-30B-A3B-Instruct",
            "openai",
            ("resp_llama_7b1c2d3e", "Qwen3-30B-A3B-Instruct", 402, 58),
        ),
        (
            "gemini-streamed-args.jsonl",
            "generate_content gemini-3-pro-preview",
            "gcp.vertex_ai",
            ("xR3MaafLBp6Wz7IPhcyS-Ak", "gemini-3-pro-preview", 240, 153),
        ),
        (
            "bedrock-text-without-start.jsonl",
            "chat us.anthropic.claude-sonnet-4-20250514-v1:0",
            "aws.bedrock",
            (None, None, 412, 71),
        ),
        ("ollama-native-two-calls.ndjson", "chat", "ollama", (None, "qwen3:8b", 214, 61)),
        (
            "realtime-two-calls.jsonl",
            "chat gpt-realtime",
            "openai",
            ("resp_CPr8v1Lw", None, 356, 56),
        ),
    ],
)
def test_each_dialect_says_the_responses_id_model_and_usage(name, span, provider, facts):
    first = spans(build(os.path.join(ROOT, "recordings", name)).request)[1]
    a = attrs(first)
    assert (first["name"], a["gen_ai.provider.name"]) == (span, provider)
    keys = ("id", "model", "usage.input_tokens", "usage.output_tokens")
    assert (
        tuple(a.get(f"gen_ai.response.{k}" if i < 2 else f"gen_ai.{k}") for i, k in enumerate(keys))
        == facts
    )


def test_every_output_message_has_a_finish_reason_even_one_the_stream_never_finished():
    """The conventions' schema requires it: Phoenix drops a span's output messages (its
    tool calls with them) when one lacks it. A message another one cut into has none."""
    path = os.path.join(ROOT, "recordings", "anthropic-spliced-message.jsonl")
    code, out, _ = export(path, "--format", "otlp", "-o", "-")
    assert code == 0
    first = next(s for s in spans(json.loads(out)) if attrs(s).get("streamscope.exchange") == 1)
    messages = json.loads(attrs(first)["gen_ai.output.messages"])
    assert [m["finish_reason"] for m in messages] == ["", "tool_use"]
