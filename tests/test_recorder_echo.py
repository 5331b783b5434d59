"""An upstream that echoes the request's key (plain, base64, split over reads) leaves it
nowhere in the recording, through the real proxy and through recording_transport; the
client still gets every byte, and `inspect` says how many values were masked."""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import httpx2
import openai
import orjson
import pytest
from click.testing import CliRunner

from streamscope import recording_transport
from streamscope.cli import main
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingIndex, RecordingWriter, iter_records
from streamscope.recording.format import End, Request
from streamscope.recording.mask import body_mask

KEY = "sk-proj-s60EchoedBack0123456789abcdef"
BASIC_USER, BASIC_PASSWORD = "alice", "s61-basic-password"


def chunk(content: str) -> bytes:
    delta = {"index": 0, "delta": {"content": content}, "finish_reason": None}
    event = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return b"data: " + orjson.dumps({**event, "choices": [delta]}) + b"\n\n"


def echo_reads(key: str) -> list[bytes]:
    """A stream whose content holds the key and its base64, each split over two reads."""
    body = chunk(f"you sent {key} ") + chunk(f"or {base64.b64encode(key.encode()).decode()}")
    body += b"data: [DONE]\n\n"
    first, b64 = body.index(key.encode()), body.index(base64.b64encode(key.encode()))
    cuts = [first + 5, b64 + 9, len(body)]
    return [body[a:b] for a, b in zip([0, *cuts[:-1]], cuts, strict=True)]


class Echo(BaseHTTPRequestHandler):
    """POST: model "echo-error" answers 401 with the credential in the message, plain and
    base64 (as OpenAI does: "Incorrect API key provided: sk-..."); any other model streams
    echo_reads, one flushed chunk each, 50 ms apart."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        scheme, _, credential = self.headers.get("authorization", "").partition(" ")
        if body["model"] == "echo-error":
            shown = credential
            if scheme == "Basic":  # the decoded pair too, as a debugging upstream may
                shown += " = " + base64.b64decode(credential).decode()
            message = f"Incorrect API key provided: {shown}. Base64: "
            message += base64.b64encode(credential.encode()).decode()
            data = orjson.dumps({"error": {"message": message, "type": "invalid_request"}})
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for read in echo_reads(credential):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(read), read))
            self.wfile.flush()
            time.sleep(0.05)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


@pytest.fixture(scope="module")
def echo():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def forms(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [raw, base64.b64encode(raw), base64.b64encode(raw).rstrip(b"=")]


def assert_nowhere(path, *secrets: str) -> None:
    text = path.read_bytes()
    for secret in secrets:
        for form in forms(secret):
            assert form not in text, form
    # nor in any chunk that was recorded as base64 (a read cut inside a character)
    for _, record in iter_records(path):
        for form in (f for s in secrets for f in forms(s)):
            assert form not in getattr(record, "data_bytes", b""), form


def recorded_reads(path, exchange: int) -> list[bytes]:
    with RecordingIndex.open(path) as index:
        return [c.data_bytes for c in index.chunks(exchange)]


def masked_json(path) -> int:
    done = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    return json.loads(done.output).get("masked", 0)


def ask(client: openai.OpenAI) -> str:
    stream = client.chat.completions.create(model="echo-stream", messages=[], stream=True)
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


def check_recording(path) -> None:
    """Exchange 1: the error echoing the key; 2: the stream echoing it over reads."""
    assert_nowhere(path, KEY)
    error = b"".join(recorded_reads(path, 1))
    assert b"Incorrect API key provided: [REDACTED" in error and json.loads(error)
    reads = recorded_reads(path, 2)
    sent = echo_reads(KEY)
    # the same reads, lengths and all: only the key's bytes differ. (On a loaded machine
    # TCP may hand two of the server's writes over as one read, 50 ms apart or not: a
    # read then holds whole writes, never a part of one.)
    cuts = list(itertools.accumulate(len(r) for r in reads))
    assert set(cuts) <= set(itertools.accumulate(len(r) for r in sent)), cuts
    whole = b"".join(sent)
    for form in forms(KEY)[:2]:
        whole = whole.replace(form, body_mask(len(form)))
    assert b"".join(reads) == whole
    ends = [r for _, r in iter_records(path) if isinstance(r, End)]
    assert [e.reason for e in ends] == ["complete", "complete"]
    # header 1 + body 2 (key, base64) in the error; header 1 + body 2 in the stream
    assert [e.masked for e in ends] == [2, 2]
    assert masked_json(path) == 6


@pytest.mark.slow
def test_the_proxy_records_no_key_the_upstream_echoes(tmp_path, echo):
    path = tmp_path / "echo.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse(echo), writer)
        server.start()
        try:
            client = openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
            with pytest.raises(openai.AuthenticationError) as failed:
                client.chat.completions.create(model="echo-error", messages=[])
            assert KEY in str(failed.value)  # the client is given the bytes as they came
            content = ask(client)
        finally:
            server.stop()
    assert content.startswith(f"you sent {KEY} or ")  # ...and every byte of the stream
    check_recording(path)
    # the stream still parses as before, the key masked in its content
    text = CliRunner().invoke(main, ["inspect", str(path)]).output
    assert "6 values masked (secrets" in text and "you sent [REDACTED*" in text


def test_recording_transport_records_no_key_the_upstream_echoes(tmp_path, echo):
    path = tmp_path / "echo.jsonl"
    http = httpx2.Client(transport=recording_transport(path))
    client = openai.OpenAI(api_key=KEY, base_url=echo, max_retries=0, http_client=http)
    with client:
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model="echo-error", messages=[])
        assert ask(client).startswith(f"you sent {KEY}")
    check_recording(path)


@pytest.mark.slow
def test_a_basic_credential_echoed_base64_encoded_is_recorded_nowhere(tmp_path, echo):
    path = tmp_path / "basic.jsonl"
    pair = f"{BASIC_USER}:{BASIC_PASSWORD}"
    with RecordingWriter(path) as writer:
        # the credentials in the upstream URL: the proxy sends them as Basic
        url = echo.replace("http://", f"http://{pair}@")
        server = ProxyServer(Upstream.parse(url), writer)
        server.start()
        try:
            r = httpx.post(server.base_url + "/chat/completions", json={"model": "echo-error"})
        finally:
            server.stop()
    assert r.status_code == 401 and base64.b64encode(pair.encode()).decode() in r.text
    basic = base64.b64encode(pair.encode()).decode()
    assert_nowhere(path, pair, BASIC_PASSWORD, basic)
    (request,) = [r for _, r in iter_records(path) if isinstance(r, Request)]
    assert dict(request.headers)["authorization"] == "Basic [REDACTED]"
    assert masked_json(path) >= 4  # the header, the credential, its pair, its base64
