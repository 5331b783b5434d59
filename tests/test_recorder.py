"""The recorder with real parts: the openai SDK as the recorded child, a loopback upstream."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from streamscope.analysis import analyze
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingIndex, RecordingWriter, iter_records
from streamscope.recording.format import End

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENT = "streamscope.demo.agent"
SECRET = "sk-test-secret-4f9a"
OPENAI_IDS = ["call_Qm3xF8bVt2LcN9pR1sWd7yKe", "call_7HbZkT0uWq4eYs2mNd9LpXa1"]


def streamscope(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "streamscope", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        **kw,
    )


def ends(path) -> dict[int, End]:
    return {r.exchange: r for _, r in iter_records(path) if isinstance(r, End)}


def exchange_bytes(path, exchange: int) -> bytes:
    with RecordingIndex.open(path) as index:
        return b"".join(c.data_bytes for c in index.chunks(exchange))


def record_agent(upstream, out, mode: str) -> subprocess.CompletedProcess:
    """`streamscope record` of the packaged openai-SDK agent against the stand-in."""
    env = {"AGENT_MODEL": "openai", "OPENAI_API_KEY": SECRET}
    command = [sys.executable, "-m", AGENT, mode]
    return streamscope(
        "record", "--upstream", upstream.url, "-o", str(out), "--", *command, env=env
    )


@pytest.mark.parametrize("mode", ["create", "async", "helper"])
def test_record_an_openai_agent(tmp_path, upstream, mode):
    out = tmp_path / "run.jsonl"
    done = record_agent(upstream, out, mode)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # the child's stdout is its own
    assert [c["id"] for c in result["calls"]] == OPENAI_IDS
    assert "2 exchanges, 2 streams" in done.stderr and "streamscope inspect" in done.stderr

    analysis = analyze(out)
    assert [c.id for c in analysis.streams[0].tool_calls] == OPENAI_IDS
    assert analysis.contract == []
    assert {e.reason for e in ends(out).values()} == {"complete"}
    assert SECRET not in out.read_text()  # redacted at write time ...
    assert f"Bearer {SECRET}" in upstream.auth  # ... and still sent upstream


def test_every_byte_passes_through_unchanged(tmp_path, upstream):
    out = tmp_path / "raw.jsonl"
    done = record_agent(upstream, out, "raw")
    assert done.returncode == 0, done.stderr
    received = json.loads(done.stdout)["sha256"]
    served = {digest for _, digest, _ in upstream.served}
    assert set(received) <= served
    recorded = [hashlib.sha256(exchange_bytes(out, ex)).hexdigest() for ex in (1, 2)]
    assert recorded == received


def _proxy(tmp_path, upstream, timeout: float):
    path = tmp_path / "proxy.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse(upstream.url), writer, timeout=timeout)
        server.start()
        server.path = path
        yield server
        server.stop()


@pytest.fixture
def proxy(tmp_path, upstream):
    """An in-process proxy in front of the stand-in upstream. Its read timeout is long: on
    a loaded machine a read may wait more than half a second (50 streams at once, four
    test workers on two cores), and a head that timed out is a whole 504 to the client,
    which is not what these tests are about."""
    yield from _proxy(tmp_path, upstream, 30)


@pytest.fixture
def impatient_proxy(tmp_path, upstream):
    """The same with a read timeout of 2 s, for the test of the timeout: long enough for
    the head to come on a loaded machine, short enough for the test."""
    yield from _proxy(tmp_path, upstream, 2)


def post(server, model: str, **kw):
    return httpx.stream(
        "POST",
        server.base_url + "/chat/completions",
        json={
            "model": model,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            **kw,
        },
        timeout=10,
    )


def test_fifty_concurrent_streams_are_relayed_and_recorded_whole(proxy):
    received: dict[str, bytes] = {}
    samples = ["openai", "alibaba-empty-id", "ids-repeated", "parallel-index-0", "vllm"]

    def one(i: int) -> None:
        with post(proxy, samples[i % 5], user=f"client-{i}") as r:
            received[f"client-{i}"] = b"".join(r.iter_raw())

    threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    proxy.stop()
    assert len(received) == 50
    assert {e.reason for e in ends(proxy.path).values()} == {"complete"}
    with RecordingIndex.open(proxy.path) as index:
        assert len(index.exchanges()) == 50
        for ex in index.exchanges():
            who = index.line(index.exchange(ex).request).json_body()["user"]
            assert b"".join(c.data_bytes for c in index.chunks(ex)) == received[who]


def test_upstream_unreachable_gives_a_502_and_says_so(tmp_path):
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse("http://127.0.0.1:9/v1"), writer)
        server.start()
        r = httpx.post(server.base_url + "/chat/completions", json={"model": "m"})
        server.stop()
    assert r.status_code == 502
    assert "upstream unreachable" in r.json()["error"]["message"]
    assert ends(path)[1].reason == "upstream-error"


def test_upstream_drop_reaches_the_client_and_the_recording(proxy):
    with pytest.raises(httpx.RemoteProtocolError), post(proxy, "drop") as r:
        for _ in r.iter_raw():
            pass
    proxy.stop()
    end = ends(proxy.path)[1]
    assert end.reason == "upstream-error" and end.error
    assert len(exchange_bytes(proxy.path, 1)) > 0  # what came before the drop is kept


def test_client_disconnect_cancels_the_upstream_request(proxy, upstream):
    before = upstream.cancelled
    with post(proxy, "slow") as r:
        reads = r.iter_raw()
        next(reads), next(reads)
    deadline = time.monotonic() + 5
    while upstream.cancelled == before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert upstream.cancelled == before + 1
    proxy.stop()
    assert ends(proxy.path)[1].reason == "client-closed"


def test_upstream_timeout(impatient_proxy):
    proxy = impatient_proxy
    started = time.monotonic()
    with pytest.raises(httpx.RemoteProtocolError), post(proxy, "stall") as r:
        for _ in r.iter_raw():
            pass
    assert time.monotonic() - started < 5
    proxy.stop()
    assert ends(proxy.path)[1].reason == "timeout"


def test_non_streaming_responses_are_recorded(proxy):
    r = httpx.post(proxy.base_url + "/chat/completions", json={"model": "json"})
    assert r.json()["object"] == "chat.completion"
    proxy.stop()
    assert exchange_bytes(proxy.path, 1) == r.content
    assert ends(proxy.path)[1].reason == "complete"


def start_proxy_process(tmp_path, upstream) -> tuple[subprocess.Popen, str, str]:
    path = str(tmp_path / "killed.jsonl")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "proxy", "--upstream", upstream.url, "-o", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = proc.stdout.readline().strip()
    assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
    return proc, base, path


def stop_mid_stream(base: str, stop) -> None:
    """Stream a slow answer from `base`, call `stop()` after three reads, read what follows."""
    with httpx.stream("POST", base + "/chat/completions", json={"model": "slow"}, timeout=10) as r:
        reads = r.iter_raw()
        for _ in range(3):
            next(reads)
        stop()
        with pytest.raises(httpx.HTTPError):  # the client sees its stream cut
            for _ in reads:
                pass


def test_kill_9_mid_stream_leaves_a_readable_recording(tmp_path, upstream):
    proc, base, path = start_proxy_process(tmp_path, upstream)
    try:

        def kill() -> None:
            proc.kill()
            proc.wait(10)

        stop_mid_stream(base, kill)
    finally:
        proc.kill()
    analysis = analyze(path)
    (stream,) = analysis.streams
    assert stream.ended == "truncated" and stream.frames >= 3
    assert "stream-truncated" in {a.kind for a in stream.anomalies}


def test_sigint_to_record_stops_the_child_and_closes_every_exchange(tmp_path, upstream):
    path = tmp_path / "int.jsonl"
    child = (
        "import os, httpx, sys\n"
        "with httpx.stream('POST', os.environ['OPENAI_BASE_URL'] + '/chat/completions',"
        " json={'model': 'slow'}, timeout=30) as r:\n"
        "    for i, _ in enumerate(r.iter_raw()):\n"
        "        if i == 2: print('streaming', flush=True)\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamscope",
            "record",
            "--upstream",
            upstream.url,
            "-o",
            str(path),
            "--",
            sys.executable,
            "-c",
            child,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout.readline().strip() == "streaming"
        proc.send_signal(signal.SIGINT)
        status = proc.wait(20)
    finally:
        proc.kill()
    assert status != 0  # the child was interrupted, and its status is ours
    assert ends(path)[1].reason == "client-closed"
    assert "1 exchange," in proc.stderr.read()


def test_child_exit_status_and_default_output(tmp_path, upstream):
    done = streamscope(
        "record",
        "--upstream",
        upstream.url,
        "--",
        sys.executable,
        "-c",
        "import sys; sys.exit(3)",
        cwd=tmp_path,
    )
    assert done.returncode == 3
    # no request was made: no empty recording is left behind, and the summary says so
    assert list((tmp_path / "recordings").glob("*")) == []
    assert "the command made no request through the proxy, so no recording was kept" in done.stderr


def test_env_names_and_path_prefix(tmp_path, upstream):
    base = upstream.url.replace("/v1", "/compatible-mode/v1")
    code = "import os; print(os.environ['OPENAI_BASE_URL'], os.environ['OPENAI_API_BASE'], os.environ['MY_URL'])"
    done = streamscope(
        "record",
        "--upstream",
        base,
        "--env",
        "MY_URL",
        "-o",
        str(tmp_path / "e.jsonl"),
        "--",
        sys.executable,
        "-c",
        code,
    )
    urls = done.stdout.split()
    assert len(set(urls)) == 1 and urls[0].endswith("/compatible-mode/v1")


def test_json_body_redaction_and_no_redact(tmp_path, upstream):
    code = (
        "import os, httpx\n"
        "httpx.post(os.environ['OPENAI_BASE_URL'] + '/chat/completions', json={'model': 'json', "
        "'messages': [{'role': 'user', 'content': os.environ['SAY']}]},"
        " headers={'Authorization': 'Bearer ' + os.environ['KEY']})\n"
    )
    masked = tmp_path / "m.jsonl"
    secrets = {"SAY": "my password is hunter2", "KEY": SECRET}
    done = streamscope(
        "record",
        "--upstream",
        upstream.url,
        "--redact-json",
        "messages.*.content",
        "-o",
        str(masked),
        "--",
        sys.executable,
        "-c",
        code,
        env=secrets,
    )
    assert done.returncode == 0, done.stderr
    text = masked.read_text()
    assert "hunter2" not in text and SECRET not in text
    clear = tmp_path / "c.jsonl"
    done = streamscope(
        "record",
        "--upstream",
        upstream.url,
        "--no-redact",
        "-o",
        str(clear),
        "--",
        sys.executable,
        "-c",
        code,
        env=secrets,
    )
    assert "IN CLEAR" in done.stderr
    assert SECRET in clear.read_text()


def test_refuses_to_overwrite_a_recording(tmp_path, upstream):
    existing = tmp_path / "r.jsonl"
    existing.write_text("keep me\n")
    done = streamscope("record", "--upstream", upstream.url, "-o", str(existing), "--", "true")
    assert done.returncode == 2 and "never overwrites" in done.stderr
    assert existing.read_text() == "keep me\n"


def test_a_client_leaving_before_the_answer_cancels_the_upstream_request(tmp_path, upstream):
    path = tmp_path / "early.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(Upstream.parse(upstream.url), writer, timeout=30)
        server.start()
        before = upstream.cancelled
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(server.base_url + "/chat/completions", json={"model": "late"}, timeout=0.3)
        deadline = time.monotonic() + 5
        while upstream.cancelled == before and time.monotonic() < deadline:
            time.sleep(0.02)
        server.stop()
    assert upstream.cancelled == before + 1
    assert ends(path)[1].reason == "client-closed"


def test_the_record_banner_is_a_short_line_then_one_line_a_side(tmp_path, upstream):
    """Each side on its own line, its variable's value first, then where it goes."""
    out = tmp_path / "r.jsonl"
    code = "import os; print(os.environ['OPENAI_BASE_URL'])"
    done = streamscope(
        "record", "--upstream", upstream.url, "-o", str(out), "--", sys.executable, "-c", code
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"streamscope: recording into {out}"
    sides = lines[1 : 1 + sum(line.startswith("  ") for line in lines)]
    assert sides[0] == (
        f"  OPENAI_BASE_URL={done.stdout.strip()} (also OPENAI_API_BASE) -> {upstream.url}"
    )
    assert any(s.startswith("  ANTHROPIC_BASE_URL=") for s in sides)
    assert all(s.count("=http://127.0.0.1:") == s.count(" -> ") == 1 for s in sides), sides
