"""A big recording's line index, scanned in child processes while the replay starts.

The scan of a 111 MB recording (300,000 lines) takes about 0.45 s of CPU, and importing
and starting the TUI about as long again. In one process the two take turns (the scan
holds the interpreter lock); forked before the TUI is imported, the child scans on the
other core, sends the index back through a pipe (its offsets and line numbers: a few
MB) and exits, and the replay's first frame comes about 0.3 s sooner.

The replay checks every line as inspect reads it (`check`), which nearly doubles the
scan. A current-version recording's check is then split off into a second child: one
indexes as a plain scan does, the other reads each chunk line
(`reader.chunk_lines_ok`), which is all the check adds; where it finds none amiss the
two scans are the same, and the checked scan is made here only where it finds one (it
then says which line, and why). The two children and the TUI's start share two cores:
the first frame of that recording comes about 0.2 s sooner again.

Only where `os.fork` is safe to use this way: Linux, a process with no other thread
yet, a plain UTF-8 recording (a UTF-16 one is read through a converted copy, which the
child would make again). Everywhere else, and for small files, the index is scanned in
the process as before (`scan_ahead` returns None).
"""

from __future__ import annotations

import os
import pickle
import signal
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .copies import coding_of
from .format import SAME_LINES_SINCE, RecordingError
from .reader import Progress, RecordingIndex, chunk_lines_ok, schema_version

AHEAD_FROM = 8 << 20  # bytes: a smaller file is scanned in well under the TUI's start-up
PROGRESS_EVERY = 0.1  # seconds between two progress messages from the child
_LENGTH = struct.Struct("<Q")  # each message: its length, then its pickle


class Ahead:
    """The scan running in child processes; `index` waits for it, once."""

    def __init__(
        self,
        path: str,
        children: list[tuple[int, int]],
        tolerant: bool,
        check: bool,
    ) -> None:
        """`children`: (pid, the pipe read from it) of the child that indexes, then of the
        one that checks the chunk lines, if the check was split off."""
        self.path, self.tolerant, self.check = path, tolerant, check
        self.pids = [pid for pid, _ in children]  # the child that indexes first
        self._pipes = [os.fdopen(reading, "rb") for _, reading in children]
        self._index: RecordingIndex | None = None
        self._lock = threading.Lock()

    def index(
        self, progress: Progress | None = None, *, tolerant: bool, check: bool = False
    ) -> RecordingIndex:
        """The index the children scanned, as `RecordingIndex.open(path, tolerant=...,
        check=...)` would have made it; its RecordingError or OSError raised here.
        `progress` hears the child's progress while it scans. A child that died first
        (killed, out of memory) costs nothing but the wait: the file is then scanned here,
        as it is where the chunk lines' check found one amiss."""
        if (tolerant, check) != (self.tolerant, self.check):
            raise ValueError("the scan ahead was made with another tolerance or check")
        with self._lock:
            if self._index is None and not self._pipes[0].closed:
                self._index = self._receive(progress)
            if self._index is None:  # the child left without the index, or asked again
                # after its error: scanned here, as without it (the same error, if any)
                self._index = RecordingIndex.open(
                    self.path, progress, tolerant=self.tolerant, check=self.check
                )
            return self._index

    def _receive(self, progress: Progress | None) -> RecordingIndex | None:
        try:
            got: tuple[Any, ...] | None = None  # ("index", state) or ("error", exception)
            for message in _messages(self._pipes[0]):
                if message[0] == "progress":
                    if progress is not None:
                        progress(*message[1:])
                else:
                    got = message
                    break
            if got is None:  # the child died before it sent the index
                return None
            if len(self._pipes) > 1:  # the chunk lines' check, split off
                verdict = next(_messages(self._pipes[1]), None)
                if verdict != ("checked", True):  # one is amiss (or the child died)
                    return None
            if got[0] == "error":
                raise got[1]
            return RecordingIndex.from_state(
                self.path, got[1], tolerant=self.tolerant, check=self.check
            )
        finally:  # (each child leaves once it has sent what it found; one still at work
            self.close()  # when this ends early, a Ctrl+C or a dead sibling, is stopped)

    def close(self, stop: bool = True) -> None:
        """Reap the children; with `stop`, stop first each that still scans (the replay
        left before it asked for the index)."""
        for pid, pipe in zip(self.pids, self._pipes, strict=True):
            if pipe.closed:
                continue
            pipe.close()
            try:
                if stop and os.waitpid(pid, os.WNOHANG) == (0, 0):
                    os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except ChildProcessError:  # (reaped already)
                pass


def _messages(pipe: Any) -> Iterator[tuple[Any, ...]]:
    """The messages a child sent, up to the end of its pipe (or a message cut short)."""
    while True:
        head = pipe.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return
        size = _LENGTH.unpack(head)[0]
        data = pipe.read(size)
        if len(data) < size:
            return
        yield pickle.loads(data)


def scan_ahead(path: str, tolerant: bool = True, check: bool = False) -> Ahead | None:
    """Start scanning `path`'s index in child processes, as `RecordingIndex.open` with
    `tolerant` and `check` would, or None where that does not pay or is not safe (see the
    module's docstring); the caller then scans as before."""
    if not _may_fork():
        return None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size < AHEAD_FROM:
            return None  # (a pipe would block here: it is read as before)
        with open(path, "rb") as f:
            if coding_of(f.read(4)) is not None:
                return None
    except OSError:
        return None  # (opening it again says why)
    split = check and _current(path)
    children = [_fork(lambda pipe: _scan(path, tolerant, check and not split, pipe))]
    if split:
        children.append(_fork(lambda pipe: _check(path, pipe)))
    return Ahead(path, children, tolerant, check)


def _current(path: str) -> bool:
    """A recording of the current line format (whose chunk lines a plain scan takes by
    their prefix); False for an older one, or a file that is none (its scan says why)."""
    try:
        return schema_version(path) >= SAME_LINES_SINCE
    except (RecordingError, OSError):
        return False


def _fork(work: Callable[[Any], None]) -> tuple[int, int]:
    """A child that runs `work` on the writing end of a pipe, then leaves without running
    the parent's exit code: (its pid, the reading end)."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(reading)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a Ctrl+C is the parent's)
            work(os.fdopen(writing, "wb"))
        finally:
            os._exit(0)
    os.close(writing)
    return pid, reading


def _may_fork() -> bool:
    """Linux, and no thread but this one: a lock another thread held at the fork would
    stay held in the child."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _send(pipe: Any, *message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_LENGTH.pack(len(data)) + data)
    pipe.flush()


def _check(path: str, pipe: Any) -> None:
    try:
        try:
            ok = chunk_lines_ok(path)
        except OSError:
            ok = False  # (the checked scan says why)
        _send(pipe, "checked", ok)
    except BrokenPipeError:  # the replay left before the check was done
        pass


def _scan(path: str, tolerant: bool, check: bool, pipe: Any) -> None:
    def send(*message: object) -> None:
        _send(pipe, *message)

    last = 0.0

    def progress(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY:
            last = now
            send("progress", done, total)

    try:
        try:
            index = RecordingIndex.open(path, progress, tolerant=tolerant, check=check)
        except (RecordingError, OSError) as e:
            send("error", e)
            return
        send("index", index.state())
    except BrokenPipeError:  # the replay left before the scan was done
        pass
