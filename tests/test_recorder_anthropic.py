"""The recorder's Anthropic side, as a user meets it: `streamscope record -- python agent.py`
with an agent on the real anthropic SDK, and the one proxy serving both APIs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import anthropic
import httpx
import pytest

from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter, iter_records
from streamscope.recording.format import REDACTED, Request

from .anthropic_stream import ANSWER, MODEL, QUESTION, TOOL_ID, TOOL_INPUT, TOOLS
from .test_recorder import ends, exchange_bytes, streamscope

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

SECRET = "sk-ant-api03-recorder-secret-9c1"

# A small agent, as a user writes one: the real anthropic client, streaming; the tool the
# model calls is run and its result sent back in a second request. It prints what it did
# and the sha256 of each response body as its HTTP client read it.
AGENT = f"""
import hashlib, json, os

import anthropic, httpx2

MODEL, QUESTION, TOOLS = {MODEL!r}, {QUESTION!r}, {TOOLS!r}
digests = []


class Tap(httpx2.SyncByteStream):
    def __init__(self, inner):
        self.inner, self.sha = inner, hashlib.sha256()
        digests.append(self.sha)

    def __iter__(self):
        for data in self.inner:
            self.sha.update(data)
            yield data

    def close(self):
        self.inner.close()


class Hashing(httpx2.HTTPTransport):
    def handle_request(self, request):
        response = super().handle_request(request)
        response.stream = Tap(response.stream)
        return response


key = os.environ["AGENT_KEY"]
client = anthropic.Anthropic(  # the base URL: ANTHROPIC_BASE_URL, as streamscope set it
    api_key=key,
    default_headers={{"x-api-key": key}},  # as the API's own documentation sends the key
    max_retries=0,
    http_client=httpx2.Client(transport=Hashing()),
)
with client.messages.stream(
    model=MODEL, max_tokens=1024, messages=QUESTION, tools=TOOLS
) as stream:
    message = stream.get_final_message()
call = next(block for block in message.content if block.type == "tool_use")
result = {{"type": "tool_result", "tool_use_id": call.id, "content": "14 °C, partly cloudy"}}
history = [
    *QUESTION,
    {{"role": "assistant", "content": [block.to_dict() for block in message.content]}},
    {{"role": "user", "content": [result]}},
]
answer = ""
with client.messages.create(
    model=MODEL, max_tokens=1024, messages=history, tools=TOOLS, stream=True
) as events:
    for event in events:
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            answer += event.delta.text
print(json.dumps({{
    "call": {{"id": call.id, "name": call.name, "input": call.input}},
    "stop_reason": message.stop_reason,
    "answer": answer,
    "sha256": [d.hexdigest() for d in digests],
}}))
"""


def anthropic_origin(upstream) -> str:
    """The stand-in as an Anthropic base URL: the SDK appends /v1/messages itself."""
    return upstream.url.removesuffix("/v1")


def requests(path) -> list[Request]:
    return [r for _, r in iter_records(path) if isinstance(r, Request)]


def test_record_an_anthropic_agent_end_to_end(tmp_path, upstream):
    (tmp_path / "agent.py").write_text(AGENT)
    out = tmp_path / "run.jsonl"
    seen = len(upstream.served)
    done = streamscope(
        "record",
        "--upstream",
        upstream.url,
        "--anthropic-upstream",
        anthropic_origin(upstream),
        "-o",
        str(out),
        "--",
        sys.executable,
        "agent.py",
        env={"AGENT_KEY": SECRET},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)  # the agent's stdout is its own
    assert said["call"] == {"id": TOOL_ID, "name": "get_weather", "input": TOOL_INPUT}
    assert said["stop_reason"] == "tool_use" and said["answer"] == ANSWER
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:" in done.stderr
    assert "2 exchanges" in done.stderr

    first, second = requests(out)
    # recorded as sent upstream: the proxy's /anthropic mount is not part of it
    assert first.url == second.url == anthropic_origin(upstream) + "/v1/messages"
    assert upstream.paths[-2:] == ["/v1/messages", "/v1/messages"]
    assert second.json_body()["messages"][-1]["content"][0]["tool_use_id"] == TOOL_ID
    # every byte the agent read is the recording's, and the upstream's
    recorded = [hashlib.sha256(exchange_bytes(out, ex)).hexdigest() for ex in (1, 2)]
    served = [digest for model, digest, _ in upstream.served[seen:] if model == MODEL]
    assert recorded == said["sha256"] == served
    assert {e.reason for e in ends(out).values()} == {"complete"}
    # the key never reaches the file, and still reaches the upstream
    assert SECRET not in out.read_text()
    headers = {k.lower(): v for k, v in first.headers}
    assert headers["x-api-key"] == REDACTED and headers["authorization"] == "Bearer [REDACTED]"
    assert upstream.headers[-1]["x-api-key"] == SECRET
    # the API's version is no secret: recorded as sent
    assert headers["anthropic-version"] == upstream.headers[-1]["anthropic-version"]

    # what a user does next: inspect it, export a regression test from it
    report = streamscope("inspect", str(out))
    assert report.returncode == 0, report.stderr
    assert "Anthropic Messages" in report.stdout and TOOL_ID in report.stdout
    assert "Conversation contract: every assembled call came back unchanged" in report.stdout
    doc = json.loads(streamscope("inspect", "--json", str(out)).stdout)
    first_stream = doc["streams"][0]
    assert {s["dialect"] for s in doc["streams"]} == {"anthropic-messages"}
    assert [c["id"] for c in first_stream["tool_calls"]] == [TOOL_ID]
    assert json.loads(first_stream["tool_calls"][0]["arguments"]) == TOOL_INPUT
    assert not {"done-missing", "finish-reason-missing", "chunk-schema-violation"} & {
        a["kind"] for a in first_stream["anomalies"]
    }
    assert first_stream["strategies"]["anthropic-sdk"]["differs"] is False
    module = tmp_path / "test_regression.py"
    assert streamscope("export", str(out), "--format", "pytest", "-o", str(module)).returncode == 0
    from .test_export import only_openai_and_pytest

    done = only_openai_and_pytest(module, "anthropic")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


@pytest.fixture
def both_sides(tmp_path, upstream):
    """An in-process proxy with an OpenAI and an Anthropic side, both the stand-in."""
    path = tmp_path / "both.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(upstream.url),
            writer,
            timeout=30,
            sides={"anthropic": Upstream.parse(anthropic_origin(upstream) + "/gateway")},
        )
        server.start()
        server.path = path
        yield server
        server.stop()


def test_one_port_two_upstreams_each_prefix_kept(both_sides, upstream):
    port = both_sides.port
    assert both_sides.base_url == f"http://127.0.0.1:{port}/v1"
    assert both_sides.base_url_of("anthropic") == f"http://127.0.0.1:{port}/anthropic/gateway"
    body = {"model": "json", "messages": []}
    assert httpx.post(both_sides.base_url + "/chat/completions", json=body).status_code == 200
    r = httpx.post(
        both_sides.base_url_of("anthropic") + "/v1/messages?beta=true",
        json=body,
        headers={"anthropic-version": "2023-06-01"},
    )
    assert r.status_code == 200
    both_sides.stop()
    assert upstream.paths[-2:] == ["/v1/chat/completions", "/gateway/v1/messages?beta=true"]
    assert [r.url for r in requests(both_sides.path)] == [
        upstream.url + "/chat/completions",
        anthropic_origin(upstream) + "/gateway/v1/messages?beta=true",
    ]


def test_an_openai_prefix_under_anthropic_moves_the_anthropic_mount(tmp_path):
    with RecordingWriter(tmp_path / "r.jsonl") as writer:
        server = ProxyServer(
            Upstream.parse("http://127.0.0.1:9/anthropic/v1"),
            writer,
            sides={"anthropic": Upstream.parse("http://127.0.0.1:9")},
        )
    assert server.base_url == f"http://127.0.0.1:{server.port}/anthropic/v1"  # as before
    assert (
        server.base_url_of("anthropic") == f"http://127.0.0.1:{server.port}/streamscope-anthropic"
    )
    server.sock.close()


def test_an_unreachable_anthropic_upstream_reads_as_an_anthropic_error(tmp_path):
    with RecordingWriter(tmp_path / "r.jsonl") as writer:
        server = ProxyServer(
            Upstream.parse("http://127.0.0.1:9/v1"),
            writer,
            sides={"anthropic": Upstream.parse("http://127.0.0.1:9")},
        )
        server.start()
        client = anthropic.Anthropic(
            api_key=SECRET, base_url=server.base_url_of("anthropic"), max_retries=0
        )
        try:
            with pytest.raises(anthropic.InternalServerError) as e:
                client.messages.create(model=MODEL, max_tokens=8, messages=QUESTION)
        finally:
            client.close()
            server.stop()
    assert e.value.status_code == 502 and e.value.type == "upstream_unreachable"
    assert e.value.api_message.startswith("streamscope: upstream unreachable: ")
    assert ends(tmp_path / "r.jsonl")[1].reason == "upstream-error"


def test_proxy_prints_both_base_urls_and_record_takes_anthropic_base_url_as_default(
    tmp_path, upstream
):
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "proxy", "-o", str(tmp_path / "p.jsonl")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        openai_base, anthropic_base = proc.stdout.readline(), proc.stdout.readline()
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    port = openai_base.split(":")[2].split("/")[0]
    assert openai_base.strip() == f"http://127.0.0.1:{port}/v1"
    assert anthropic_base.strip() == f"http://127.0.0.1:{port}/anthropic"
    assert f"\n  ANTHROPIC_BASE_URL={anthropic_base.strip()} -> https://api.anthropic.com\n" in err

    code = "import os; print(os.environ['ANTHROPIC_BASE_URL'])"
    done = streamscope(
        "record",
        "--upstream",
        upstream.url,
        "-o",
        str(tmp_path / "r.jsonl"),
        "--",
        sys.executable,
        "-c",
        code,
        env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/team"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("/anthropic/team")
    assert f"\n  ANTHROPIC_BASE_URL={done.stdout.strip()} -> http://127.0.0.1:9/team\n" in (
        done.stderr
    )


@pytest.mark.parametrize(
    "url", ["ftp://a:s3cr3t-pw@h/", "http://a:s3cr3t-pw@h:port/", "api.anthropic.com"]
)
def test_a_bad_anthropic_upstream_is_one_line_and_exit_2(url):
    done = streamscope("record", "--anthropic-upstream", url, "--", "true")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("streamscope: anthropic upstream")
    assert "s3cr3t-pw" not in done.stderr


def test_under_the_proxy_an_error_names_the_upstream_path_the_recording_holds(tmp_path):
    # The real SDK, posting to the proxy's /anthropic mount, names the URL it called; the
    # recording holds the URL the request went on to upstream (the mount taken off), and
    # nothing else of the client's: anthropic-sdk names that path, the mount absent, as
    # docs/dialects/anthropic-messages.md says.
    from streamscope.analysis.driver import analyze

    from .upstream import RawUpstream

    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message"}}
    start["message"] |= {"role": "assistant", "model": MODEL, "content": [], "usage": {}}
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    sse = b"".join(
        b"event: %s\ndata: %s\n\n" % (e["type"].encode(), json.dumps(e).encode())
        for e in (start, error)
    )
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nRequest-Id: req_1\r\n"
    answer = head + b"Content-Length: %d\r\n\r\n%s" % (len(sse), sse)
    path = tmp_path / "r.jsonl"
    with RawUpstream(answer) as up, RecordingWriter(path) as writer:
        gateway = up.url.removesuffix("/v1") + "/gateway"
        server = ProxyServer(
            Upstream.parse(up.url), writer, timeout=30, sides={"anthropic": Upstream.parse(gateway)}
        )
        server.start()
        try:
            client = anthropic.Anthropic(
                api_key="k", base_url=server.base_url_of("anthropic"), max_retries=0
            )
            stream = client.messages.stream(model=MODEL, max_tokens=8, messages=QUESTION)
            with pytest.raises(anthropic.APIStatusError) as raised, stream as events:
                for _ in events:
                    pass
        finally:
            server.stop()
    said = "Overloaded (request_id: req_1, path: {}, type: overloaded_error)"
    assert str(raised.value) == said.format("/anthropic/gateway/v1/messages")
    assert [r.url for r in requests(path)] == [gateway + "/v1/messages"]
    (read,) = analyze(path).streams
    got = read.strategies["anthropic-sdk"]
    assert got.error == "APIStatusError: " + said.format("/gateway/v1/messages")
