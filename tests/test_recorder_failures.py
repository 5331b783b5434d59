"""Write failures and commands that cannot run: clear lines, whole streams, no stray files."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

import httpx
import pytest

from streamscope.analysis import analyze
from streamscope.recording import iter_records

from .test_recorder import streamscope


def _file_size_limit(limit: int):
    def apply() -> None:  # in the recorder's process: its writes beyond `limit` fail (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.slow
def test_a_failed_write_keeps_relaying_says_so_once_and_exits_non_zero(tmp_path, upstream):
    path = tmp_path / "full.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "proxy", "--upstream", upstream.url, "-o", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_file_size_limit(4000),  # a disk that fills up during the first stream
    )
    try:
        base = proc.stdout.readline().strip()
        bodies = []
        for _ in range(2):  # the second exchange is relayed too, unrecorded
            body = {"model": "openai", "stream": True, "messages": []}
            with httpx.stream("POST", base + "/chat/completions", json=body, timeout=10) as r:
                bodies.append(b"".join(r.iter_raw()))
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(20)
    finally:
        proc.kill()
    served = [b for model, _, b in upstream.served if model == "openai"][-2:]
    assert bodies == served  # the client's streams are whole
    stderr = proc.stderr.read()
    lost = [line for line in stderr.splitlines() if "cannot write" in line]
    assert lost == [
        f"streamscope: {path}: cannot write the recording: File too large; "
        "recording stopped, relaying continues"
    ]
    assert "Traceback" not in stderr and "incomplete" in stderr
    assert status == 1
    assert path.read_bytes().endswith(b"\n") and os.path.getsize(path) <= 4000
    list(iter_records(path))  # every line on disk is whole and reads back
    assert analyze(path).stopped is None


@pytest.mark.slow
def test_record_into_dev_full_runs_the_command_and_exits_non_zero(upstream):
    code = (
        "import os, httpx\n"
        "r = httpx.post(os.environ['OPENAI_BASE_URL'] + '/chat/completions', json={'model': 'json'})\n"
        "print(r.json()['object'])\n"
    )
    done = streamscope(
        "record", "--upstream", upstream.url, "-o", "/dev/full", "--", sys.executable, "-c", code
    )
    assert done.stdout.strip() == "chat.completion"  # relayed although nothing was recorded
    assert "streamscope: /dev/full: cannot write the recording: No space left on device" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    assert done.returncode == 1


def test_record_a_command_that_does_not_exist(tmp_path, upstream):
    out = tmp_path / "never.jsonl"
    done = streamscope("record", "--upstream", upstream.url, "-o", str(out), "--", "no-such-cmd")
    assert done.returncode == 127
    assert done.stderr == "streamscope: cannot run 'no-such-cmd': no such command\n"
    assert not out.exists()


def test_record_a_file_that_is_not_executable(tmp_path, upstream):
    script = tmp_path / "agent.sh"
    script.write_text("echo hi\n")
    out = tmp_path / "never.jsonl"
    done = streamscope("record", "--upstream", upstream.url, "-o", str(out), "--", str(script))
    assert done.returncode == 126
    assert len(done.stderr.splitlines()) == 1 and "not an executable" in done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_an_output_that_cannot_be_opened_is_named(tmp_path, upstream):
    # (a missing folder is made, as the default output's is: a file in the way is not)
    (tmp_path / "no").write_text("")
    out = tmp_path / "no" / "such" / "dir.jsonl"
    done = streamscope("record", "--upstream", upstream.url, "-o", str(out), "--", "true")
    assert done.returncode == 2
    assert done.stderr == f"streamscope: {out}: cannot write the recording: Not a directory\n"
