"""Without --follow, the replay refuses exactly what inspect refuses, in inspect's one line
and exit status 2, before any screen; a cut-off last line (the writer interrupted) is
read as inspect reads it. --follow keeps its tolerance for a file being written, and
refuses a pipe."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from streamscope.recording.format import RecordingError
from streamscope.recording.reader import RecordingIndex, iter_raw

ROOT = Path(__file__).resolve().parents[1]
OPENAI = ROOT / "recordings" / "openai.jsonl"
LINES = OPENAI.read_bytes().splitlines(keepends=True)
CHUNK = 3  # line 4: exchange 1's first chunk line
END = next(i for i, line in enumerate(LINES) if line.startswith(b'{"type":"end"'))


def _field(i: int, key: str, value: object) -> list[bytes]:
    lines = list(LINES)
    d = orjson.loads(lines[i])
    d[key] = value
    lines[i] = orjson.dumps(d) + b"\n"
    return lines


def _bad(case: str) -> list[bytes]:
    lines = list(LINES)
    if case == "cut-in-the-middle":  # line 4 cut to its first 60 bytes, the rest kept
        lines[CHUNK] = lines[CHUNK][:60] + b"\n"
    elif case in ("null", "list", "string"):  # a line that is no object, after the header
        lines.insert(1, {"null": b"null\n", "list": b"[1]\n", "string": b'"x"\n'}[case])
    elif case == "non-utf8":
        lines[CHUNK] = lines[CHUNK].replace(b"chatcmpl", b"chat\xffmpl", 1)
    elif case == "chunk-data-list":
        lines = _field(CHUNK, "data", [1])
    elif case == "chunk-data-null":
        lines = _field(CHUNK, "data", None)
    elif case == "chunk-type-object":
        lines = _field(CHUNK, "type", {"a": 1})
    elif case == "request-body-object":
        lines = _field(1, "body", {})
    elif case == "response-status-string":
        lines = _field(2, "status", "200")
    elif case == "response-headers-number":
        lines = _field(2, "headers", 5)
    elif case == "end-reason-null":
        lines = _field(END, "reason", None)
    elif case == "only-null":  # the header, then `null`
        lines = [LINES[0], b"null\n"]
    return lines


CASES = [
    "cut-in-the-middle",
    "null",
    "list",
    "string",
    "non-utf8",
    "chunk-data-list",
    "chunk-data-null",
    "chunk-type-object",
    "request-body-object",
    "response-status-string",
    "response-headers-number",
    "end-reason-null",
    "only-null",
]


def _write(tmp_path: Path, case: str) -> str:
    path = tmp_path / f"{case}.jsonl"
    path.write_bytes(b"".join(_bad(case)))
    return str(path)


def _streamscope(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "streamscope", *args],
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


@pytest.mark.parametrize("case", CASES)
def test_the_index_refuses_each_line_as_inspect_reads_it(tmp_path, case):
    """One home for the words: the replay's checked index says what inspect's reader says."""
    path = _write(tmp_path, case)
    with pytest.raises(RecordingError) as inspect_said:
        for _ in iter_raw(path):
            pass
    with pytest.raises(RecordingError) as index_said:
        RecordingIndex.open(path, check=True)
    assert str(index_said.value) == str(inspect_said.value)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_replay_refuses_what_inspect_refuses_in_its_one_line(tmp_path, case):
    path = _write(tmp_path, case)
    inspect = _streamscope("inspect", path)
    assert inspect.returncode == 2
    (said,) = inspect.stderr.splitlines()
    # (standard input no terminal is refused too, but only once the input is read: the
    # line said is the input's)
    replay = _streamscope("replay", path, stdin=subprocess.DEVNULL)
    assert (replay.returncode, replay.stdout, replay.stderr) == (2, "", said + "\n")
    assert "Traceback" not in replay.stderr


def _on_a_terminal(args: list[str], seconds: float = 30) -> tuple[int | None, bytes]:
    """Run streamscope with a terminal on stdin, stdout and stderr: (its exit status,
    None if it was still running after `seconds`; everything it wrote)."""
    parent, child = os.openpty()
    done = subprocess.Popen(
        [sys.executable, "-m", "streamscope", *args],
        stdin=child,
        stdout=child,
        stderr=child,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"},
    )
    os.close(child)
    out = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([parent], [], [], 0.1)
            if ready:
                try:
                    data = os.read(parent, 1 << 16)
                except OSError:  # (the child closed its side)
                    data = b""
                if not data and done.poll() is not None:
                    break
                out += data
            elif done.poll() is not None:
                break
    finally:
        status = done.poll()
        if status is None:
            done.kill()
        done.wait()
        os.close(parent)
    return status, out


@pytest.mark.slow
def test_on_a_terminal_the_refusal_comes_before_any_screen(tmp_path):
    path = _write(tmp_path, "cut-in-the-middle")
    status, out = _on_a_terminal(["replay", path])
    assert status == 2, out
    assert b"\x1b" not in out  # no screen: not one escape code
    assert out.decode().strip().splitlines() == [
        f"streamscope: {path}: line 4 (byte 1757): not valid JSON"
    ]


def test_a_cut_off_last_line_is_read_as_inspect_reads_it(tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(LINES[:-1]) + LINES[-1][:30])  # the writer killed mid-line
    assert _streamscope("inspect", str(path)).returncode == 0
    with RecordingIndex.open(path, check=True) as index:
        assert index.stopped_at is not None and index.stopped_at.line == len(LINES)
    replay = _streamscope("replay", str(path), stdin=subprocess.DEVNULL)
    assert replay.returncode == 2  # (no terminal: past the input's check)
    assert "standard input is not a terminal" in replay.stderr, replay.stderr


def test_following_a_pipe_is_one_line(tmp_path):
    reading, writing = os.pipe()
    try:
        os.write(writing, LINES[0])  # a pipe whose writer is still there: it never ends
        replay = _streamscope(
            "replay", "--follow", f"/dev/fd/{reading}", stdin=subprocess.DEVNULL, pass_fds=[reading]
        )
    finally:
        os.close(reading)
        os.close(writing)
    assert replay.returncode == 2 and replay.stdout == ""
    assert replay.stderr.splitlines() == [
        f"streamscope: /dev/fd/{reading}: --follow watches a file being written, not a pipe "
        "(without --follow, a pipe is read once and whole)"
    ]
