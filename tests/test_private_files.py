"""Recordings hold whole conversations and requests: every file streamscope writes one
into is 0600, and the folders it makes for them 0700, whatever the umask.
(Cassettes: test_pytest_plugin.py.)"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys

import httpx2
import pytest
from click.testing import CliRunner

from streamscope import recording_transport
from streamscope.cli import main
from streamscope.record.runner import default_output
from streamscope.recording import RecordingWriter

from .upstream import Upstream as StandIn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@contextlib.contextmanager
def umask(value: int):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


# 022 is the usual umask (files readable by all); 0o277 would leave the owner unable to
# write, and 0 would give everyone everything: none of them decides a recording's mode.
@pytest.mark.parametrize("mask", [0o022, 0o002, 0o000, 0o277])
def test_a_recording_is_0600_whatever_the_umask(tmp_path, mask):
    path = tmp_path / "r.jsonl"
    with umask(mask), RecordingWriter(path, argv=["x"]):
        pass
    assert mode(path) == 0o600


def test_an_existing_file_replaced_by_a_recording_is_made_private(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("old")
    os.chmod(path, 0o644)
    with RecordingWriter(path, overwrite=True):
        pass
    assert mode(path) == 0o600


def test_a_device_is_written_to_as_it_is(tmp_path):
    before = mode("/dev/null")
    RecordingWriter("/dev/null").close()
    assert mode("/dev/null") == before


def test_the_recordings_folder_record_makes_is_0700(tmp_path):
    with umask(0o022):
        path = default_output(str(tmp_path))
    assert mode(tmp_path / "recordings") == 0o700
    assert os.path.dirname(path) == str(tmp_path / "recordings")


def test_a_recording_in_folders_not_there_yet_makes_them_0700(tmp_path):
    path = tmp_path / "new" / "deeper" / "r.jsonl"
    with umask(0o022), RecordingWriter(path, argv=["x"]):
        pass
    assert mode(path) == 0o600
    assert mode(path.parent) == mode(path.parent.parent) == 0o700


# `record -o` and `proxy -o` with a folder still to make (docs/commands/proxy.md's example
# in a fresh folder): made as the default ./recordings is, 0700
_CHILD = (
    "import os, urllib.request\n"
    "urllib.request.urlopen(urllib.request.Request(os.environ['OPENAI_BASE_URL'] "
    "+ '/chat/completions', b'{\"model\": \"json\"}', {'Content-Type': 'application/json'}))\n"
)


def test_record_o_makes_the_folder_it_names_as_the_default_one_is_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with StandIn() as up, umask(0o022):
        done = CliRunner().invoke(
            main,
            ["record", "--upstream", up.url, "-o", "recordings/run.jsonl", "--"]
            + [sys.executable, "-c", _CHILD],
        )
    assert done.exit_code == 0, done.output
    assert "cannot write the recording" not in done.output
    assert mode(tmp_path / "recordings") == 0o700
    assert mode(tmp_path / "recordings" / "run.jsonl") == 0o600


@pytest.mark.slow
def test_proxy_o_makes_the_folder_it_names_as_the_default_one_is_made(tmp_path):
    with StandIn() as up, umask(0o022):
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamscope", "proxy", "--port", "0", "--upstream", up.url]
            + ["-o", "recordings/run.jsonl"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            base = proc.stdout.readline().strip()  # type: ignore[union-attr]
            assert base.startswith("http://127.0.0.1:"), proc.communicate(timeout=10)
            env = {**os.environ, "OPENAI_BASE_URL": base}
            subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True, timeout=30)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert mode(tmp_path / "recordings") == 0o700
    assert mode(tmp_path / "recordings" / "run.jsonl") == 0o600


def test_recording_transport_makes_its_folders_0700_and_its_file_0600(tmp_path):
    (tmp_path / "was").mkdir(mode=0o755)
    os.chmod(tmp_path / "was", 0o755)
    path = tmp_path / "was" / "new" / "deeper" / "run.jsonl"
    with (
        StandIn() as up,
        umask(0o022),
        httpx2.Client(transport=recording_transport(path)) as client,
    ):
        assert client.post(up.url + "/chat/completions", json={"model": "json"}).is_success
    assert mode(path) == 0o600
    assert mode(path.parent) == mode(path.parent.parent) == 0o700
    assert mode(tmp_path / "was") == 0o755  # a folder that was there is left as it was


@pytest.mark.parametrize("fmt", ["recording", "sse", "chunks", "pytest"])
def test_an_exported_file_is_0600(tmp_path, fmt):
    out = tmp_path / f"out.{fmt}"
    source = os.path.join(ROOT, "recordings", "alibaba-empty-id.jsonl")
    with umask(0o022):
        done = CliRunner().invoke(main, ["export", source, "--format", fmt, "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert mode(out) == 0o600


@pytest.mark.slow
def test_record_under_umask_022_writes_a_private_recording_in_a_private_folder(tmp_path):
    child = (
        "import os, httpx\n"
        "httpx.post(os.environ['OPENAI_BASE_URL'] + '/chat/completions', json={'model': 'json'})\n"
    )
    with StandIn() as up, umask(0o022):
        done = subprocess.run(
            [sys.executable, "-m", "streamscope", "record", "--upstream", up.url, "--"]
            + [sys.executable, "-c", child],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    (name,) = os.listdir(tmp_path / "recordings")
    assert mode(tmp_path / "recordings") == 0o700
    assert mode(tmp_path / "recordings" / name) == 0o600
