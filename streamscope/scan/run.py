"""Run the per-file analysis over many files: in this process (`-j 1`), in a pool of
worker processes, or on Ray; each file's rows go to the sinks as they come, in file
order, so memory holds a few files' rows at a time whatever the number of files."""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.pool
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator

from ..core.record import record
from .rows import FileRows, analyze_file
from .store import Stamp, stamp

Sink = Callable[[FileRows], None]


@record(slots=True)
class Done:
    """One file analysed, with its stamp before and after (None: it could not be stat'ed)."""

    rows: FileRows
    before: Stamp | None
    changed: bool  # it changed while it was read (grew, was rewritten)


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def scan_one(path: str, keep_stamp: bool = False) -> Done:
    """`analyze_file`, noting whether the file changed while it was read."""
    before_st = _stat(path)
    before = None
    if keep_stamp and before_st is not None:
        try:
            before = stamp(path)
        except OSError:
            before = None
    rows = analyze_file(path)
    after = _stat(path)
    return Done(rows, before, before_st is not None and after != before_st)


def _scan_one_stamped(path: str) -> Done:
    return scan_one(path, True)


def open_pool(jobs: int) -> multiprocessing.pool.Pool | None:
    """Worker processes for `local` (None for one job: the work runs in this process).
    Open it before anything starts threads (DuckDB): then the workers are forked."""
    if jobs <= 1:
        return None
    # what exists now (the analysis's modules) is left out of the workers' collections:
    # a collection that walked it would write to every page the fork shares; the pool
    # forks its workers as it opens, so this process collects as before afterwards
    gc.freeze()
    try:
        return _context().Pool(jobs, initializer=_worker_start)
    finally:
        gc.unfreeze()


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the scan: the terminal sends SIGINT to every process of
    its group, and a worker it interrupted printed its traceback. The scan says one line
    and ends the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def local(
    paths: list[str], pool: multiprocessing.pool.Pool | None, keep_stamp: bool
) -> Iterator[Done]:
    """Each file's result in `paths` order: in `pool`, else here."""
    work = _scan_one_stamped if keep_stamp else scan_one
    if pool is None or len(paths) <= 1:
        yield from map(work, paths)
        return
    # chunks of up to 32 files: each task costs the pool more than passing its rows
    # (chunks of 8 spent a tenth more CPU on 2,000 files), and a big file still does not
    # hold back many small ones behind it
    chunk = max(1, min(32, len(paths) // 16))
    yield from pool.imap(work, paths, chunksize=chunk)


def _context() -> multiprocessing.context.BaseContext:
    # fork is cheapest, and safe while this process holds no DuckDB (its threads and
    # connections must not be inherited: a forked child crashed collecting one). Else a
    # fork server: a fresh interpreter that imports the analysis once and forks workers.
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and "duckdb" not in sys.modules:
        return multiprocessing.get_context("fork")
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


class Progress:
    """`scanned N/M files` on stderr, redrawn at most ten times a second; only on a
    terminal (a CI log gets no carriage returns)."""

    def __init__(self, total: int, enabled: bool | None = None) -> None:
        self.total = total
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done = 0
        self._last = 0.0

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= 0.1 or self.done == self.total:
            self._last = now
            width = 30
            filled = width * self.done // max(1, self.total)
            bar = "#" * filled + "-" * (width - filled)
            print(f"\r[{bar}] {self.done}/{self.total} files", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled and self.done:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)


def run(results: Iterable[Done], sinks: list[Callable[[Done], None]], progress: Progress) -> None:
    try:
        for done in results:
            for sink in sinks:
                sink(done)
            progress.step()
    finally:
        progress.close()
