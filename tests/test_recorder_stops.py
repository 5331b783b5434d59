"""End reasons that say what happened: a client leaving after its stream's final event
(`data: [DONE]`, Anthropic's `event: message_stop`), and stop signals."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import anthropic
import pytest

from streamscope.analysis import analyze
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter

from .anthropic_stream import MODEL, QUESTION
from .test_recorder import ends, record_agent, start_proxy_process, stop_mid_stream
from .upstream import Upstream as StandIn

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out


@pytest.fixture(scope="module")
def paused():
    """A provider that holds the body open for 5 s after the final event."""
    with StandIn(tail_pause=5.0) as up:
        yield up


@pytest.mark.parametrize("mode", ["create", "async", "helper"])
def test_an_sdk_agent_against_a_provider_that_pauses_after_done_is_complete(tmp_path, paused, mode):
    """The SDK closes at data: [DONE]; the provider was still holding the body open."""
    out = tmp_path / "pause.jsonl"
    done = record_agent(paused, out, mode)
    assert done.returncode == 0, done.stderr
    assert {e.reason for e in ends(out).values()} == {"complete"}
    assert not re.search(r"\d+ errors?:", done.stderr)  # no stream-truncated, no client-closed
    assert {s.ended for s in analyze(out).streams} == {"done"}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_to_proxy_mid_stream_is_recorded_as_the_recorder_stopping(
    tmp_path, upstream, sig
):
    proc, base, path = start_proxy_process(tmp_path, upstream)
    try:
        stop_mid_stream(base, lambda: proc.send_signal(sig))
        status = proc.wait(20)
    finally:
        proc.kill()
    stderr = proc.stderr.read()
    assert status == 0, stderr
    assert "Traceback" not in stderr
    end = ends(path)[1]
    assert end.reason == "recorder-stopped" and sig.name in end.error
    (stream,) = analyze(path).streams
    assert stream.ended == "recorder-stopped"
    assert "stream-truncated" in {a.kind for a in stream.anomalies}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_to_record_reaches_the_child_and_ends_every_exchange(tmp_path, upstream, sig):
    path = tmp_path / "sig.jsonl"
    child = (
        "import os, httpx\n"
        "with httpx.stream('POST', os.environ['OPENAI_BASE_URL'] + '/chat/completions',"
        " json={'model': 'slow'}, timeout=30) as r:\n"
        "    for i, _ in enumerate(r.iter_raw()):\n"
        "        if i == 2: print(os.getpid(), flush=True)\n"
    )
    command = [sys.executable, "-m", "streamscope", "record", "--upstream", upstream.url]
    proc = subprocess.Popen(
        [*command, "-o", str(path), "--", sys.executable, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        pid = int(proc.stdout.readline())
        proc.send_signal(sig)
        status = proc.wait(20)
    finally:
        proc.kill()
    assert status == 128 + sig  # the child died of the forwarded signal: its status is ours
    with pytest.raises(ProcessLookupError):
        import os

        os.kill(pid, 0)  # the child is not left running
    end = ends(path)[1]
    assert end.reason in ("client-closed", "recorder-stopped")
    assert "1 exchange," in proc.stderr.read()


@pytest.fixture(scope="module")
def paced():
    """The same, its events 30 ms apart: a client can leave before the last one is sent."""
    with StandIn(pace=0.03, tail_pause=5.0) as up:
        yield up


@pytest.mark.parametrize(
    "leave_at, reason", [("message_stop", "complete"), ("content_block_delta", "client-closed")]
)
def test_an_anthropic_client_leaving_right_after_message_stop_ended_a_complete_stream(
    tmp_path, paced, leave_at, reason
):
    """Anthropic's final event is `event: message_stop`: leaving after it is no cut."""
    path = tmp_path / "stop.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(paced.url),
            writer,
            timeout=30,
            sides={"anthropic": Upstream.parse(paced.url.removesuffix("/v1"))},
        )
        server.start()
        client = anthropic.Anthropic(
            api_key="sk-ant-test", base_url=server.base_url_of("anthropic"), max_retries=0
        )
        started = time.monotonic()
        try:
            with client.messages.create(
                model=MODEL, max_tokens=64, messages=QUESTION, stream=True
            ) as events:
                for event in events:
                    if event.type == leave_at:
                        break  # leaving the `with` closes the response
        finally:
            client.close()
        deadline = time.monotonic() + 5
        while server.app.open and time.monotonic() < deadline:  # the proxy sees it leave
            time.sleep(0.01)
        server.stop()
    assert time.monotonic() - started < 4  # not held by the provider's 5 s pause
    assert ends(path)[1].reason == reason
