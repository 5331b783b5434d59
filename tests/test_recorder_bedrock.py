"""The recorder's Amazon Bedrock side, as a user meets it: `streamscope record -- python
agent.py` with an agent on boto3 (ConverseStream) or on the anthropic SDK's
AnthropicBedrock (InvokeModelWithResponseStream), against a fake Bedrock runtime that
checks every request's SigV4 signature for its own host. The agent runs unchanged: the
proxy signs each request again for the upstream with the environment's credentials."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.recording import iter_records
from streamscope.recording.format import REDACTED, Request

from .fakes import bedrock as fake
from .test_recorder import ends, exchange_bytes, streamscope

pytestmark = pytest.mark.slow  # subprocesses, real SDKs, a server

TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather in a city",
        "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]

# boto3's bedrock-runtime client, streaming a tool loop: the call, its result, the answer.
BOTO3_AGENT = f"""
import json, os
import boto3

MODEL, TOOLS = {fake.MODEL!r}, {TOOLS!r}
client = boto3.client("bedrock-runtime", region_name="{fake.REGION}", **json.loads(os.environ.get("AGENT_KEYS", "{{}}")))
config = {{"tools": [{{"toolSpec": {{"name": t["name"], "description": t["description"],
    "inputSchema": {{"json": t["schema"]}}}}}} for t in TOOLS]}}


def turn(messages):
    stream = client.converse_stream(modelId=MODEL, messages=messages, toolConfig=config)["stream"]
    blocks, stop = {{}}, None
    for event in stream:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {{"toolUse": {{**use, "input": ""}}}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            at, d = delta["contentBlockIndex"], delta["delta"]
            if "text" in d:
                blocks.setdefault(at, {{"text": ""}})["text"] += d["text"]
            else:
                blocks[at]["toolUse"]["input"] += d["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    content = [blocks[i] for i in sorted(blocks)]
    for block in content:
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    return content, stop


messages = [{{"role": "user", "content": [{{"text": "What is the weather in Paris?"}}]}}]
try:
    content, stop = turn(messages)
except Exception as e:  # what the agent's user reads
    print(json.dumps({{"error": f"{{type(e).__name__}}: {{e}}"}}))
    raise SystemExit(1)
call = next(b["toolUse"] for b in content if "toolUse" in b)
result = {{"toolResult": {{"toolUseId": call["toolUseId"], "content": [{{"text": "14 °C"}}]}}}}
messages += [{{"role": "assistant", "content": content}}, {{"role": "user", "content": [result]}}]
answer, _ = turn(messages)
print(json.dumps({{"call": call, "stop": stop, "lead": content[0].get("text"),
    "answer": "".join(b.get("text", "") for b in answer)}}))
"""

# The anthropic SDK's Bedrock client (ANTHROPIC_BEDROCK_BASE_URL, as streamscope sets it):
# messages.stream for the call, create(stream=True) for the answer.
ANTHROPIC_AGENT = f"""
import json
from anthropic import AnthropicBedrock

MODEL = {fake.MODEL!r}
TOOLS = [{{"name": t["name"], "description": t["description"], "input_schema": t["schema"]}}
    for t in {TOOLS!r}]
client = AnthropicBedrock(aws_region="{fake.REGION}", max_retries=0)
question = [{{"role": "user", "content": "What is the weather in Paris?"}}]
with client.messages.stream(model=MODEL, max_tokens=512, messages=question, tools=TOOLS) as s:
    message = s.get_final_message()
call = next(b for b in message.content if b.type == "tool_use")
result = {{"type": "tool_result", "tool_use_id": call.id, "content": "14 °C"}}
history = [*question, {{"role": "assistant", "content": [b.to_dict() for b in message.content]}},
    {{"role": "user", "content": [result]}}]
answer = ""
for event in client.messages.create(model=MODEL, max_tokens=512, messages=history, tools=TOOLS,
        stream=True):
    if event.type == "content_block_delta" and event.delta.type == "text_delta":
        answer += event.delta.text
print(json.dumps({{"call": {{"id": call.id, "name": call.name, "input": call.input}},
    "stop": message.stop_reason, "answer": answer}}))
"""


def aws_env(credentials: bool = True) -> dict[str, str]:
    """The environment the agent and the proxy share: the test credentials, and nothing
    of this machine's (no config files, no instance metadata asked)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_CONFIG_FILE="/nonexistent/config",
        AWS_SHARED_CREDENTIALS_FILE="/nonexistent/credentials",
        AWS_EC2_METADATA_DISABLED="true",
        AWS_MAX_ATTEMPTS="1",
    )
    if credentials:
        env.update(fake.CREDENTIALS)
    return env


def record(tmp_path, upstream: fake.FakeBedrock, agent: str, env: dict[str, str]):
    (tmp_path / "agent.py").write_text(agent)
    out = tmp_path / "run.jsonl"
    done = streamscope(
        "record",
        "--bedrock-upstream",
        upstream.url,
        "-o",
        str(out),
        "--",
        sys.executable,
        "agent.py",
        env=env,
        cwd=tmp_path,
    )
    # `streamscope` merges os.environ back in: the AWS variables are the test's alone
    return done, out


def requests(path) -> list[Request]:
    return [r for _, r in iter_records(path) if isinstance(r, Request)]


def assert_no_credential(text: str, upstream: fake.FakeBedrock) -> None:
    for secret in (fake.ACCESS_KEY, fake.SECRET_KEY, fake.SESSION_TOKEN):
        assert secret not in text
    for received in upstream.received:  # the signatures the upstream was sent
        signed = received.headers["authorization"].rsplit("Signature=", 1)[1]
        assert signed not in text


def assert_signed_and_masked(request: Request, upstream: fake.FakeBedrock) -> None:
    """Recorded as sent upstream: its host, and the re-signed Authorization with its key
    id and signature masked, its scope and signed header names readable."""
    headers = {k.lower(): v for k, v in request.headers}
    assert headers["host"] == upstream.host
    assert re.fullmatch(
        rf"AWS4-HMAC-SHA256 Credential=\[REDACTED\]/\d{{8}}/{fake.REGION}/bedrock/aws4_request, "
        r"SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=\[REDACTED\]",
        headers["authorization"],
    ), headers["authorization"]
    assert headers["x-amz-security-token"] == REDACTED
    assert re.fullmatch(r"\d{8}T\d{6}Z", headers["x-amz-date"])


@pytest.fixture
def upstream():
    with fake.FakeBedrock() as server:
        yield server


@pytest.mark.parametrize(
    ("agent", "operation", "events", "dialect"),
    [  # (boto3 sends the model id's colon percent-encoded, the anthropic SDK as it is)
        (BOTO3_AGENT, "%3A0/converse-stream", fake.converse_events, "bedrock-converse"),
        (
            ANTHROPIC_AGENT,
            ":0/invoke-with-response-stream",
            fake.anthropic_events,
            "anthropic-messages",
        ),
    ],
    ids=["boto3", "anthropic"],
)
def test_record_a_bedrock_agent_signed_again_for_the_upstream(
    tmp_path, upstream, agent, operation, events, dialect
):
    done, out = record(tmp_path, upstream, agent, aws_env())
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)  # the agent ran its whole loop, unchanged
    call = said["call"]
    assert fake.TOOL_ID in (call.get("toolUseId"), call.get("id"))
    assert call["input"] == fake.TOOL_INPUT and said["stop"] == "tool_use"
    assert said["answer"] == fake.ANSWER
    assert "AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:" in done.stderr
    assert "2 exchanges" in done.stderr

    # every request reached the upstream signed for it, and its signature held
    assert [r.verified for r in upstream.received] == [True, True], [
        r.why for r in upstream.received
    ]
    first, second = requests(out)
    for request in (first, second):
        assert request.url == f"{upstream.url}/model/{fake.MODEL[:-2]}{operation}"
        assert_signed_and_masked(request, upstream)
    # the body as sent, byte for byte: what was signed
    assert [first.body_bytes, second.body_bytes] == [r.body for r in upstream.received]
    # every byte the upstream streamed is the recording's, untouched
    assert exchange_bytes(out, 1) == b"".join(events(1))
    assert exchange_bytes(out, 2) == b"".join(events(2))
    assert {e.reason for e in ends(out).values()} == {"complete"}
    assert_no_credential(out.read_text() + done.stderr, upstream)

    # read as a user reads it: the dialect, the framing, the call, the contract held
    # (in this process: a subprocess would add only an interpreter's start)
    seen = CliRunner().invoke(main, ["inspect", "--json", "--strict", str(out)])
    assert seen.exit_code == 0, seen.output
    report = json.loads(seen.stdout)
    first_stream, second_stream = report["streams"]
    assert first_stream["dialect"] == dialect and first_stream["framing"] == "aws-eventstream"
    (got,) = first_stream["tool_calls"]
    assert (got["id"], got["name"]) == (fake.TOOL_ID, "get_weather")
    assert json.loads(got["arguments"]) == fake.TOOL_INPUT
    assert not second_stream["tool_calls"] and second_stream["content"] == fake.ANSWER
    assert not report["contract"], report["contract"]
    text = CliRunner().invoke(main, ["inspect", str(out)]).stdout
    assert "every assembled call came back unchanged, every result matched" in text, text
    # and exported, its first stream replays through the client's own SDK, green
    module = tmp_path / "test_fixture.py"
    made = CliRunner().invoke(
        main, ["export", str(out), "--exchange", "1", "--format", "pytest", "-o", str(module)]
    )
    assert made.exit_code == 0, made.output
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # it needs no plugin
    )
    assert "1 passed" in ran.stdout, ran.stdout + ran.stderr


def test_without_credentials_record_says_so_and_the_agent_reads_an_error(tmp_path, upstream):
    """An agent with keys of its own (in its code) and none in the environment: the proxy
    cannot sign for the upstream. It says so once, answers an error document the client
    reads, and records the exchange with its end reason; nothing reaches the upstream."""
    keys = {
        "aws_access_key_id": fake.ACCESS_KEY,
        "aws_secret_access_key": fake.SECRET_KEY,
        "aws_session_token": fake.SESSION_TOKEN,
    }
    env = {**aws_env(credentials=False), "AGENT_KEYS": json.dumps(keys)}
    done, out = record(tmp_path, upstream, BOTO3_AGENT, env)
    assert done.returncode == 1, done.stderr  # the agent's own failure: boto3's modelled error
    error = json.loads(done.stdout)["error"]
    assert error.startswith("AccessDeniedException") and "ConverseStream" in error
    assert "Traceback" not in done.stderr
    said = "streamscope: bedrock side: cannot sign the request for "
    missing = [line for line in done.stderr.splitlines() if line.startswith(said)]
    assert len(missing) == 1 and "no AWS credentials in the environment" in missing[0]
    assert f"exchange 1 failed: HTTP 403: cannot sign the request for {upstream.url}" in done.stderr
    assert upstream.received == []
    (only,) = requests(out)
    (end,) = ends(out).values()
    assert end.reason == "upstream-error" and "no AWS credentials" in (end.error or "")
    assert "Signature=[REDACTED]" in dict((k.lower(), v) for k, v in only.headers)["authorization"]
    assert "no AWS credentials" in exchange_bytes(out, 1).decode()  # the document it read
    assert fake.ACCESS_KEY not in out.read_text() and fake.SESSION_TOKEN not in out.read_text()
    assert fake.ACCESS_KEY not in done.stderr


def test_without_botocore_record_says_so_in_one_line(tmp_path, upstream):
    """The proxy's botocore hidden (an import that fails), the agent's own still there:
    record names what is missing, in one line, and keeps running."""
    shadow = tmp_path / "shadow" / "botocore"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    # the agent takes the shadow off its path first: its boto3 signs as ever
    agent = "import sys; sys.path = [p for p in sys.path if 'shadow' not in p]\n" + BOTO3_AGENT
    env = {**aws_env(), "PYTHONPATH": str(tmp_path / "shadow")}
    done, out = record(tmp_path, upstream, agent, env)
    assert done.returncode == 1, done.stderr
    said = json.loads(done.stdout)["error"]
    assert said.startswith("AccessDeniedException") and "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("streamscope: bedrock")]
    assert said == [
        "streamscope: bedrock side: cannot sign the request for "
        f"{upstream.url}: botocore is not installed (pip install 'streamscope[bedrock]')"
    ]
    assert upstream.received == []
    (end,) = ends(out).values()
    assert end.reason == "upstream-error" and "botocore is not installed" in (end.error or "")


def test_without_an_upstream_each_request_goes_to_the_region_it_is_signed_for(
    tmp_path, upstream, monkeypatch
):
    """No --bedrock-upstream: the side asks bedrock_origin where each request goes (the
    region of its signature; here answered by the fake, the origin asked for kept)."""
    import dataclasses

    import boto3

    from streamscope.providers import bedrock_origin
    from streamscope.record.proxy import ProxyServer, Upstream
    from streamscope.recording import RecordingWriter

    for name, value in aws_env().items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    asked: list[str] = []

    def local(path: str, headers=None) -> str:
        asked.append(bedrock_origin(path, headers))
        return upstream.url

    path = tmp_path / "regions.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse("http://127.0.0.1:9"), writer, sides={"bedrock": None})
        route = server.app.route("bedrock")
        monkeypatch.setattr(route, "side", dataclasses.replace(route.side, origin_of=local))
        server.start()
        try:
            for region in ("eu-west-3", "ap-northeast-1"):
                client = boto3.client(
                    "bedrock-runtime",
                    region_name=region,
                    endpoint_url=server.base_url_of("bedrock"),
                )
                stream = client.converse_stream(
                    modelId=fake.MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}]
                )["stream"]
                assert any("messageStop" in event for event in stream)
        finally:
            server.stop()
    assert asked == [
        f"https://bedrock-runtime.{r}.amazonaws.com" for r in ("eu-west-3", "ap-northeast-1")
    ]
    assert [r.verified for r in upstream.received] == [True, True]
    # signed again in the client's own region
    assert [r.headers["authorization"].split("/")[2] for r in upstream.received] == [
        "eu-west-3",
        "ap-northeast-1",
    ]
