"""A big recording's line index, scanned in a child process while the replay starts.

The scan of a 111 MB recording (300,000 lines) takes about 0.45 s of CPU, and importing
and starting the TUI about as long again. In one process the two take turns (the scan
holds the interpreter lock); forked before the TUI is imported, the child scans on the
other core, sends the index back through a pipe (its offsets and line numbers: a few
MB) and exits, and the replay's first frame comes about 0.3 s sooner.

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
from typing import Any

from .copies import coding_of
from .format import RecordingError
from .reader import Progress, RecordingIndex

AHEAD_FROM = 8 << 20  # bytes: a smaller file is scanned in well under the TUI's start-up
PROGRESS_EVERY = 0.1  # seconds between two progress messages from the child
_LENGTH = struct.Struct("<Q")  # each message: its length, then its pickle


class Ahead:
    """The scan running in a child process; `index` waits for it, once."""

    def __init__(self, path: str, pid: int, reading: int, tolerant: bool, check: bool) -> None:
        self.path, self.pid, self.tolerant, self.check = path, pid, tolerant, check
        self._pipe = os.fdopen(reading, "rb")
        self._index: RecordingIndex | None = None
        self._lock = threading.Lock()

    def index(
        self, progress: Progress | None = None, *, tolerant: bool, check: bool = False
    ) -> RecordingIndex:
        """The index the child scanned, as `RecordingIndex.open(path, tolerant=...,
        check=...)` would have made it; its RecordingError or OSError raised here.
        `progress` hears the child's progress while it scans. A child that died first
        (killed, out of memory) costs nothing but the wait: the file is then scanned here."""
        if (tolerant, check) != (self.tolerant, self.check):
            raise ValueError("the scan ahead was made with another tolerance or check")
        with self._lock:
            if self._index is None and not self._pipe.closed:
                self._index = self._receive(progress)
            if self._index is None:  # the child left without the index, or asked again
                # after its error: scanned here, as without it (the same error, if any)
                self._index = RecordingIndex.open(
                    self.path, progress, tolerant=self.tolerant, check=self.check
                )
            return self._index

    def _receive(self, progress: Progress | None) -> RecordingIndex | None:
        try:
            while True:
                head = self._pipe.read(_LENGTH.size)
                if len(head) < _LENGTH.size:  # the child died before it sent the index
                    return None
                kind, *what = pickle.loads(self._pipe.read(_LENGTH.unpack(head)[0]))
                if kind == "progress":
                    if progress is not None:
                        progress(*what)
                elif kind == "index":
                    self.close(stop=False)  # (it leaves once the index is sent)
                    return RecordingIndex.from_state(
                        self.path, what[0], tolerant=self.tolerant, check=self.check
                    )
                else:
                    raise what[0]
        finally:
            self.close()

    def close(self, stop: bool = True) -> None:
        """Reap the child; with `stop`, stop it first if it still scans (the replay left
        before it asked for the index)."""
        if self._pipe.closed:
            return
        self._pipe.close()
        try:
            if stop and os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except ChildProcessError:  # (reaped already)
            pass


def scan_ahead(path: str, tolerant: bool = True, check: bool = False) -> Ahead | None:
    """Start scanning `path`'s index in a child process, as `RecordingIndex.open` with
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
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: scan, send, leave without running the parent's exit code
        try:
            os.close(reading)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a Ctrl+C is the parent's)
            _scan(path, tolerant, check, os.fdopen(writing, "wb"))
        finally:
            os._exit(0)
    os.close(writing)
    return Ahead(path, pid, reading, tolerant, check)


def _may_fork() -> bool:
    """Linux, and no thread but this one: a lock another thread held at the fork would
    stay held in the child."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _scan(path: str, tolerant: bool, check: bool, pipe: Any) -> None:
    def send(*message: object) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        pipe.write(_LENGTH.pack(len(data)) + data)
        pipe.flush()

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
