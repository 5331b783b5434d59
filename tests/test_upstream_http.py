"""The upstream client on legal and broken HTTP, proxies from the environment, custom CAs."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys

import httpx
import pytest

from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.record.upstream import UpstreamClosed, UpstreamPool, UpstreamTimeout
from streamscope.recording import RecordingWriter, Request, Response, iter_records

from .test_recorder import ends, exchange_bytes, streamscope
from .upstream import OK, SSE, ForwardProxy, RawUpstream, chunked_with_length
from .upstream import Upstream as StandIn


def through_proxy(tmp_path, upstream_url: str, **request) -> tuple[httpx.Response, object]:
    """One POST through an in-process recording proxy (`request`: more of httpx.post's
    arguments); the response and the recording."""
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse(upstream_url), writer, timeout=5)
        server.start()
        try:
            # trust_env=False: this client goes straight to the recorder, whatever *_PROXY say
            url = server.base_url + "/chat/completions"
            response = httpx.post(url, json={"model": "json"}, trust_env=False, **request)
        except httpx.HTTPError as e:
            response = e
        server.stop()
    return response, path


def test_interim_103_early_hints_is_skipped_for_the_real_response(tmp_path):
    hints = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
    with RawUpstream(hints + OK) as raw:
        r, path = through_proxy(tmp_path, raw.url)
    assert r.status_code == 200 and r.content == SSE
    assert ends(path)[1].reason == "complete" and exchange_bytes(path, 1) == SSE


@pytest.mark.slow
@pytest.mark.parametrize("length", [b"abc", b"12, 13", b"-1"])
def test_a_bad_content_length_is_a_clean_502(tmp_path, length):
    with RawUpstream(b"HTTP/1.1 200 OK\r\nContent-Length: " + length + b"\r\n\r\nhello") as raw:
        r, path = through_proxy(tmp_path, raw.url)
    assert r.status_code == 502 and "Content-Length" in r.json()["error"]["message"]
    end = ends(path)[1]
    assert end.reason == "upstream-error" and "Content-Length" in end.error


def test_a_length_beside_chunked_transfer_coding_is_dropped_not_forwarded(tmp_path):
    """RFC 9112 6.3: with Transfer-Encoding, Content-Length is ignored. Passed on, it
    made the client expect 40 bytes of a longer chunked stream and fail."""
    stream = b"".join(b'data: {"n": %d}\n\n' % i for i in range(5)) + b"data: [DONE]\n\n"
    assert len(stream) != 40
    with RawUpstream(chunked_with_length(stream, 40)) as raw:
        r, path = through_proxy(tmp_path, raw.url)
    assert r.status_code == 200 and r.content == stream
    assert "content-length" not in r.headers
    assert ends(path)[1].reason == "complete" and exchange_bytes(path, 1) == stream
    (response,) = [r for _, r in iter_records(path) if isinstance(r, Response)]
    names = [k.lower() for k, _ in response.headers]  # recorded as the upstream sent them
    assert "transfer-encoding" in names and ("content-length", "40") in [
        (k.lower(), v) for k, v in response.headers
    ]


def test_the_recorded_request_head_is_the_one_the_upstream_received(tmp_path):
    """Host, identity encoding, the body's length, no hop-by-hop header: the recording
    says what was sent, not what the client asked of the proxy."""
    headers = {
        "Accept-Encoding": "gzip, deflate",
        "Connection": "keep-alive, X-Hop",
        "X-Hop": "for the proxy only",
        "Keep-Alive": "timeout=5",
        "X-Kept": "yes",
    }
    with RawUpstream(OK) as raw:
        r, path = through_proxy(tmp_path, raw.url, headers=headers)
    assert r.status_code == 200
    (request,) = [r for _, r in iter_records(path) if isinstance(r, Request)]
    received = [tuple(line.split(": ", 1)) for line in raw.heads[0][1:]]
    assert [list(h) for h in request.headers] == [list(h) for h in received]
    sent = {k.lower(): v for k, v in request.headers}
    assert sent["accept-encoding"] == "identity" and sent["host"] == raw.url.split("/")[2]
    assert sent["x-kept"] == "yes" and sent["content-length"] == str(len(b'{"model":"json"}'))
    assert not {"x-hop", "keep-alive", "connection"} & set(sent)


def test_a_request_framed_both_ways_goes_upstream_by_its_chunked_body(tmp_path):
    """The client's side: a request with Transfer-Encoding: chunked and a Content-Length
    is read by its chunks (RFC 9112 6.3); the upstream gets that body and its true length,
    and the recording says so."""
    body = b'{"model":"json","n":1}'
    raw_request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: 3\r\nConnection: close\r\n\r\n"
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    )
    path = tmp_path / "r.jsonl"
    with RawUpstream(OK) as raw, RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse(raw.url), writer, timeout=5)
        server.start()
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as client:
                client.sendall(raw_request)
                answer = b""
                while more := client.recv(65536):
                    answer += more
        finally:
            server.stop()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(SSE)
    assert raw.bodies == [body]
    received = dict(line.lower().split(": ", 1) for line in raw.heads[0][1:])
    assert received["content-length"] == str(len(body)) and "transfer-encoding" not in received
    (request,) = [r for _, r in iter_records(path) if isinstance(r, Request)]
    assert request.body_bytes == body
    assert [line.split(": ", 1) for line in raw.heads[0][1:]] == [list(h) for h in request.headers]


def test_broken_chunked_framing_mid_body_is_an_upstream_error(tmp_path):
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    with RawUpstream(head + b"6\r\ndata: \r\nzz\r\n") as raw:
        r, path = through_proxy(tmp_path, raw.url)
    assert isinstance(r, httpx.HTTPError)  # the client sees its connection fail
    end = ends(path)[1]
    assert end.reason == "upstream-error" and "chunk" in end.error
    assert exchange_bytes(path, 1) == b"data: "  # what came before is kept


def test_a_stale_kept_alive_connection_is_retried_and_a_fresh_one_is_not():
    async def scenario() -> tuple[int, BaseException | None]:
        with RawUpstream(None, OK) as raw:  # the first connection is closed unanswered
            pool = UpstreamPool(f"http://127.0.0.1:{raw.port}", timeout=5)
            pool.idle.append(await pool._connect())  # as if kept alive from a past request
            response = await pool.request("POST", "/v1/x", [], b"{}")
            pool.close()
        with RawUpstream(None) as raw:
            pool = UpstreamPool(f"http://127.0.0.1:{raw.port}", timeout=5)
            try:
                await pool.request("POST", "/v1/x", [], b"{}")
            except UpstreamClosed as e:
                return response.status, e
        return response.status, None

    status, fresh_error = asyncio.run(scenario())
    assert status == 200 and fresh_error is not None


def test_http_proxy_from_the_environment(tmp_path, upstream, monkeypatch):
    with ForwardProxy() as forward:
        monkeypatch.setenv("HTTP_PROXY", forward.url)
        monkeypatch.setenv("NO_PROXY", "")
        r, path = through_proxy(tmp_path, upstream.url)
    assert r.status_code == 200
    assert forward.seen == [f"POST {upstream.url}/chat/completions HTTP/1.1"]
    assert ends(path)[1].reason == "complete"


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 (openssl), as a private CA would issue."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        + ["-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    with StandIn(tls=(cert, key)) as up:
        yield up, cert


@pytest.mark.slow
@pytest.mark.parametrize("no_proxy", ["", "127.0.0.1"])
def test_https_through_connect_with_ssl_cert_file(tmp_path, tls, no_proxy):
    secure, cert = tls
    out = tmp_path / "tls.jsonl"
    child = [sys.executable, "-m", "streamscope.demo.agent", "create"]
    with ForwardProxy() as forward:
        env = {"HTTPS_PROXY": forward.url, "NO_PROXY": no_proxy, "SSL_CERT_FILE": cert}
        env |= {"AGENT_MODEL": "openai", "OPENAI_API_KEY": "sk-test"}
        done = streamscope(
            "record", "--upstream", secure.url, "-o", str(out), "--", *child, env=env
        )
    assert done.returncode == 0, done.stderr
    assert {e.reason for e in ends(out).values()} == {"complete"}
    port = secure.url.split(":")[2].split("/")[0]
    assert forward.seen == ([] if no_proxy else [f"CONNECT 127.0.0.1:{port} HTTP/1.1"])


def test_an_untrusted_certificate_is_a_502_naming_the_reason(tmp_path, tls, monkeypatch):
    secure, _ = tls
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    r, path = through_proxy(tmp_path, secure.url)
    assert r.status_code == 502 and "CERTIFICATE_VERIFY_FAILED" in r.text


@pytest.mark.slow
def test_an_upstream_that_never_answers_times_out_and_a_cancel_stays_a_cancel():
    """The read timeout is this task's own cancel: it becomes UpstreamTimeout, while a
    cancel from outside (the client left) still cancels."""

    async def scenario() -> tuple[BaseException, bool]:
        with socket.create_server(("127.0.0.1", 0)) as server:  # accepts, never answers
            pool = UpstreamPool(f"http://127.0.0.1:{server.getsockname()[1]}", timeout=0.2)
            with pytest.raises(UpstreamTimeout) as timed_out:
                await pool.request("POST", "/v1/x", [], b"{}")
            slow = UpstreamPool(f"http://127.0.0.1:{server.getsockname()[1]}", timeout=30)
            task = asyncio.ensure_future(slow.request("POST", "/v1/x", [], b"{}"))
            await asyncio.sleep(0.1)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return timed_out.value, True
            return timed_out.value, False

    error, cancelled = asyncio.run(scenario())
    assert "no upstream read within 0.2 s" in str(error)
    assert cancelled
