"""End reasons that say what happened: a client leaving after [DONE], and stop signals."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest

from streamscope.analysis import analyze

from .test_recorder import ends, record_agent, start_proxy_process, stop_mid_stream
from .upstream import Upstream as StandIn


@pytest.fixture(scope="module")
def paused():
    """A provider that holds the body open for 5 s after data: [DONE]."""
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
