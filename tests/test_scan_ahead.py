"""A big recording's index scanned in a child process (recording/ahead.py) while the replay
starts: the same index as a scan in the process, the same errors, and no child left."""

from __future__ import annotations

import os
import shutil
import sys
import threading

import pytest

from streamscope.recording import ahead as ahead_module
from streamscope.recording.ahead import scan_ahead
from streamscope.recording.format import RecordingError
from streamscope.recording.reader import RecordingIndex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "recordings", "buggy-agent-uuid.jsonl")

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="scanned ahead where fork is"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scanned ahead on Linux"),
]


@pytest.fixture(autouse=True)
def any_size(monkeypatch):
    """Every file is scanned ahead, and the test runner's own threads do not stop it (the
    child only scans and leaves)."""
    monkeypatch.setattr(ahead_module, "AHEAD_FROM", 0)
    monkeypatch.setattr(ahead_module, "_may_fork", lambda: True)


def _gone(pids: list[int]) -> bool:
    """Every child reaped."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def _same(a: RecordingIndex, b: RecordingIndex) -> None:
    assert a._offsets == b._offsets
    assert a._exchanges == b._exchanges
    assert [str(e) for e in a.errors] == [str(e) for e in b.errors]
    assert a.stopped_at == b.stopped_at
    assert a._unended == b._unended
    assert a.exchanges() == b.exchanges() and len(a) == len(b)
    for n in (2, 3):
        assert a.raw_line(n) == b.raw_line(n)


def test_the_index_is_the_one_a_scan_in_the_process_makes(tmp_path):
    path = str(tmp_path / "rec.jsonl")
    shutil.copy(SAMPLE, path)
    with open(path, "ab") as f:  # a bad line (skipped and kept) and a cut-off last line
        f.write(b'{"type":"chunk","exchange":1,"t_ns":1,"data":5}\nnot json\n{"type":"chu')
    seen: list[tuple[int, int]] = []
    ahead = scan_ahead(path)
    assert ahead is not None
    got = ahead.index(lambda done, total: seen.append((done, total)), tolerant=True)
    _same(got, RecordingIndex.open(path, tolerant=True))
    assert got.errors and got.stopped_at is not None
    assert ahead.index(tolerant=True) is got  # (asked again: the same, no child)
    assert _gone(ahead.pids)


def test_a_scan_that_fails_raises_its_error_here(tmp_path):
    path = str(tmp_path / "rec.jsonl")
    shutil.copy(SAMPLE, path)
    with open(path, "ab") as f:
        f.write(b"not json\n{}\n")
    ahead = scan_ahead(path, tolerant=False)
    assert ahead is not None
    with pytest.raises(RecordingError) as ours:
        ahead.index(tolerant=False)
    with pytest.raises(RecordingError) as theirs:
        RecordingIndex.open(path)
    assert str(ours.value) == str(theirs.value)
    assert ours.value.line == theirs.value.line and ours.value.offset == theirs.value.offset
    assert _gone(ahead.pids)


def test_a_checked_scan_refuses_a_chunk_line_as_the_scan_in_the_process_does(tmp_path):
    """As the replay scans a file no one is writing: every chunk line read as inspect
    reads it (the plain scan takes one by its prefix)."""
    path = str(tmp_path / "rec.jsonl")
    shutil.copy(SAMPLE, path)
    with open(path, "ab") as f:
        f.write(b'{"type":"chunk","exchange":1,"t_ns":1,"data":5}\n')
    RecordingIndex.open(path).close()  # (taken by its prefix)
    ahead = scan_ahead(path, tolerant=False, check=True)
    assert ahead is not None
    with pytest.raises(RecordingError) as ours:
        ahead.index(tolerant=False, check=True)
    with pytest.raises(RecordingError) as theirs:
        RecordingIndex.open(path, check=True)
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value).endswith("field 'data' is not a string (a JSON number)")
    assert _gone(ahead.pids)


def _chunk_lines(path: str, extra: bytes) -> None:
    """SAMPLE's lines, `extra` after its first chunk line."""
    with open(SAMPLE, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"chunk"'))
    with open(path, "wb") as f:
        f.writelines([*lines[: at + 1], extra, *lines[at + 1 :]])


@pytest.mark.parametrize(
    "extra",
    [
        b"",  # none amiss: the plain scan's index is the checked one
        b'{"type":"chunk","exchange":1,"t_ns":1,"data":5}\n',  # a field's type
        b'{"type":"chunk","exchange":1,"t_ns":1,"data":"x"\n',  # no JSON
        b'{"type":"chunk","exchange":1,"t_ns":1.5,"data":"x"}\n',
        b'{"type":"chunk","exchange":1,"t_ns":1,"data":"x","data_b64":"eA=="}\n',
        b'{"type":"chunk","exchange":7,"t_ns":1,"data":"x"}\n',  # an exchange no line opened
        b'{"type":"chunk","exchange":1,"t_ns":1,"data":"x"}\n{"type":"end"}\n',
    ],
)
@pytest.mark.parametrize("tolerant", [False, True])
def test_a_checked_scan_split_in_two_children_is_the_checked_scan(tmp_path, extra, tolerant):
    """The replay's scan: one child indexes as a plain scan, the other checks the chunk
    lines; the index, or the error, is the one a checked scan in the process makes."""
    path = str(tmp_path / "rec.jsonl")
    _chunk_lines(path, extra)
    ahead = scan_ahead(path, tolerant=tolerant, check=True)
    assert ahead is not None and len(ahead.pids) == 2
    try:
        theirs = RecordingIndex.open(path, tolerant=tolerant, check=True)
    except RecordingError as e:
        with pytest.raises(RecordingError) as ours:
            ahead.index(tolerant=tolerant, check=True)
        assert (str(ours.value), ours.value.line) == (str(e), e.line)
    else:
        _same(ahead.index(tolerant=tolerant, check=True), theirs)
    assert _gone(ahead.pids)


def test_a_version_0_recording_is_checked_in_one_child(tmp_path):
    """Its lines are each read whole by either scan: nothing to split off."""
    from .test_recording import V0

    path = str(tmp_path / "v0.jsonl")
    with open(path, "wb") as f:
        f.write(V0)
    ahead = scan_ahead(path, tolerant=False, check=True)
    assert ahead is not None and len(ahead.pids) == 1
    _same(ahead.index(tolerant=False, check=True), RecordingIndex.open(path, check=True))


def test_a_check_child_that_dies_first_leaves_the_checked_scan_to_this_process(tmp_path):
    import signal

    path = str(tmp_path / "rec.jsonl")
    _chunk_lines(path, b'{"type":"chunk","exchange":1,"t_ns":1,"data":5}\n')
    ahead = scan_ahead(path, tolerant=True, check=True)
    assert ahead is not None
    os.kill(ahead.pids[1], signal.SIGKILL)
    got = ahead.index(tolerant=True, check=True)
    _same(got, RecordingIndex.open(path, tolerant=True, check=True))
    assert [e.line for e in got.errors] == [5]  # (the plain scan takes it by its prefix)
    assert _gone(ahead.pids)


def test_a_child_that_dies_first_leaves_the_scan_to_this_process(tmp_path):
    import signal

    path = str(tmp_path / "rec.jsonl")
    shutil.copy(SAMPLE, path)
    ahead = scan_ahead(path)
    assert ahead is not None
    os.kill(ahead.pids[0], signal.SIGKILL)  # (before or after it sent the index: the same)
    _same(ahead.index(tolerant=True), RecordingIndex.open(path, tolerant=True))
    assert _gone(ahead.pids)


def test_an_error_asked_for_again_is_the_same_error(tmp_path):
    path = str(tmp_path / "rec.jsonl")
    with open(path, "wb") as f:
        f.write(b"not a recording\n")
    ahead = scan_ahead(path, tolerant=False)
    assert ahead is not None
    said = []
    for _ in range(2):
        with pytest.raises(RecordingError) as error:
            ahead.index(tolerant=False)
        said.append(str(error.value))
    assert said[0] == said[1] and "not valid JSON" in said[0]


def test_a_replay_that_leaves_first_stops_and_reaps_the_child(tmp_path):
    path = str(tmp_path / "rec.jsonl")
    shutil.copy(SAMPLE, path)
    ahead = scan_ahead(path, tolerant=False, check=True)  # (two children)
    assert ahead is not None and len(ahead.pids) == 2
    ahead.close()
    assert _gone(ahead.pids)
    for pid in ahead.pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_not_scanned_ahead_where_it_does_not_pay_or_is_not_safe(tmp_path, monkeypatch):
    utf16 = str(tmp_path / "utf16.jsonl")
    with open(SAMPLE, encoding="utf-8") as f, open(utf16, "w", encoding="utf-16") as out:
        out.write(f.read())
    assert scan_ahead(utf16) is None  # (read through a converted copy)
    assert scan_ahead(str(tmp_path / "missing.jsonl")) is None  # (opening it says why)
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    assert scan_ahead(fifo) is None  # (opening a pipe with no writer would block)
    assert scan_ahead(str(tmp_path)) is None  # a folder
    monkeypatch.setattr(ahead_module, "AHEAD_FROM", 8 << 20)
    assert scan_ahead(SAMPLE) is None  # small: scanned in the process
    monkeypatch.setattr(ahead_module, "AHEAD_FROM", 0)
    monkeypatch.setattr(ahead_module, "_may_fork", lambda: False)
    assert scan_ahead(SAMPLE) is None  # another thread: no fork
    monkeypatch.undo()
    running = threading.Event()
    thread = threading.Thread(target=running.wait)
    thread.start()
    try:
        assert not ahead_module._may_fork()
    finally:
        running.set()
        thread.join()


def test_the_replay_opens_a_recording_scanned_ahead(tmp_path):
    from streamscope.tui.app import ReplayApp

    path = str(tmp_path / "rec.jsonl")
    shutil.copy(SAMPLE, path)
    ahead = scan_ahead(path, tolerant=False, check=True)  # (as the CLI scans it)
    assert ahead is not None
    app = ReplayApp(path, ahead=ahead)
    assert app.input.ahead is ahead
    plain = ReplayApp(path)
    assert [i.exchange for i in app.input.infos()] == [i.exchange for i in plain.input.infos()]
    assert [i.stream for i in app.input.infos()] == [i.stream for i in plain.input.infos()]
    assert _gone(ahead.pids)
    app.input.close()
    plain.input.close()


def test_a_file_that_is_no_recording_is_read_as_it_is_and_its_scan_stopped(tmp_path):
    from streamscope.tui.app import ReplayApp

    path = str(tmp_path / "body.sse")
    with open(path, "w") as f:
        f.write('data: {"choices":[]}\n\ndata: [DONE]\n\n')
    ahead = scan_ahead(path)
    assert ahead is not None
    app = ReplayApp(path, ahead=ahead)
    assert not app.recorded and app.input.ahead is None
    assert _gone(ahead.pids)


def _big_recording(path: str) -> None:
    """openai.jsonl's exchange 1, its chunk lines said again until the file is past the
    size `streamscope replay` scans ahead from (8 MiB), its end line last."""
    with open(os.path.join(ROOT, "recordings", "openai.jsonl"), "rb") as f:
        lines = [line for line in f.read().splitlines(keepends=True) if b'"exchange":2' not in line]
    chunks = [line for line in lines if line.startswith(b'{"type":"chunk"')]
    head = [line for line in lines if not line.startswith((b'{"type":"chunk"', b'{"type":"end"'))]
    end = [line for line in lines if line.startswith(b'{"type":"end"')]
    body = b"".join(chunks)
    with open(path, "wb") as f:
        f.writelines(head)
        f.write(body * ((8 << 20) // len(body) + 1))
        f.writelines(end)


def test_replay_of_a_big_recording_says_a_missing_exchange_before_the_screen(tmp_path, monkeypatch):
    """The CLI forks the scan before the TUI is imported: an exchange the file lacks is
    still one line and exit 2, said before any screen is drawn."""
    import subprocess

    path = str(tmp_path / "big.jsonl")
    _big_recording(path)
    monkeypatch.setattr(ahead_module, "AHEAD_FROM", 8 << 20)
    ahead = scan_ahead(path)  # (as the CLI's: past the size, so scanned ahead)
    assert ahead is not None and ahead.index(tolerant=True).exchanges() == [1]
    run = subprocess.run(
        [sys.executable, "-m", "streamscope", "replay", path, "--exchange", "9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.strip().endswith("there is no exchange 9 (exchange: 1)"), run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and not run.stdout


def test_replay_of_a_big_file_that_is_no_recording_says_why_in_one_line(tmp_path):
    import subprocess

    path = str(tmp_path / "big.jsonl")
    with open(path, "wb") as f:
        f.write(b"{not json\n" + b"x" * (9 << 20) + b"\n")
    run = subprocess.run(
        [sys.executable, "-m", "streamscope", "replay", path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
