"""`streamscope scan`: find the files, skip those the database says are unchanged, run
the analysis, and hand every file's rows to the summary, --jsonl, the database."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict

from ..core.record import record
from ..recording.private import private_folders
from ..text import plural, say
from .files import find_files
from .rows import dumps, file_text
from .run import Done, Progress, local, open_pool, run
from .store import Store, StoreError
from .summary import Summary


@record(frozen=True, slots=True)
class Options:
    paths: list[str]
    jobs: int
    jsonl: bool = False
    db: str | None = None
    parquet: str | None = None
    strict: bool = False
    engine: str = "local"
    progress: bool | None = None  # None: only on a terminal
    kind: str | None = None  # list every finding of this kind instead of the summary


def scan(o: Options) -> int:
    """Run a scan; the exit status (1: --strict found what fails it). Raises ScanError."""
    started = time.monotonic()
    pool = open_pool(o.jobs) if o.engine == "local" else None  # first: see open_pool
    try:
        return _scan(o, pool, started)
    except RuntimeError as e:  # DuckDB's word for a query Ctrl-C stopped
        if "interrupted" in str(e):
            raise KeyboardInterrupt from None
        raise
    finally:
        if pool is not None:
            pool.terminate()


def _scan(o: Options, pool, started: float) -> int:
    if o.parquet:  # before the work, not after it
        try:
            private_folders(o.parquet)
        except OSError as e:
            raise StoreError(f"{o.parquet}: cannot make the Parquet folder: {e.strerror}") from None
    store = Store(o.db, o.db or o.parquet) if (o.db or o.parquet) else None
    exclude = {os.path.realpath(o.db), os.path.realpath(o.db) + ".wal"} if o.db else set()
    found = find_files(o.paths, exclude)
    summary = Summary(kind=o.kind)
    summary.notes += [f"{file_text(p)}: {why}" for p, why in found.problems]
    todo = found.files
    if store is not None and o.db:  # incremental: files as the last scan read them
        same = [p for p in todo if store.unchanged(p)]
        if same:
            skip = set(same)
            todo = [p for p in todo if p not in skip]
            for rows in store.rows_of(same):
                summary.add(rows)
                if o.jsonl:
                    _write_jsonl(rows)
            summary.from_store = len(same)
    bad_named: list[str] = []  # files the command line named that could not be read
    sinks = [lambda d: _summarize(summary, d)]
    if found.named:
        named = {file_text(p) for p in found.named}  # as the rows name them
        sinks.append(
            lambda d: (
                bad_named.append(d.rows.file)
                if d.rows.error is not None and d.rows.file in named
                else None
            )
        )
    if o.jsonl:
        sinks.append(lambda d: _write_jsonl(d.rows))
    if store is not None:
        sinks.append(lambda d: store.add(d.rows, None if d.changed else d.before))
    if o.engine == "ray":
        from .ray_engine import ray_results

        results = ray_results(todo, store is not None)
    else:
        results = local(todo, pool, store is not None)
    try:
        run(results, sinks, Progress(len(todo), o.progress))
        if store is not None:
            store.flush()
            if o.parquet:
                store.write_parquet(o.parquet)
    finally:
        if store is not None:
            store.close()
    if o.jsonl:
        for line in summary.unreadable + summary.notes:
            say(line)
    elif o.kind is not None:  # the findings alone on stdout, each link ready to paste
        for line in summary.kind_lines():
            print(line)
        # a file that is no recording (a README beside them) is counted, as the summary
        # counts it, not said as an error; one the command line named is said (exit 2)
        for line in [*summary.unreadable_named(set(bad_named)), *summary.notes]:
            say(line)
        files = len({f[0] for f in summary.found})
        unread = len(summary.unreadable)
        said = f" ({unread} unreadable, skipped)" if unread else ""
        say(
            f"{o.kind}: {plural(len(summary.found), 'finding')} in {plural(files, 'file')} "
            f"of {summary.files} scanned{said}"
        )
    else:
        for line in summary.lines(time.monotonic() - started):
            print(line)
    if o.strict and summary.failing_count:
        say(f"--strict: {plural(summary.failing_count, 'finding')}:")
        for line in summary.failing_lines():
            print(f"  {line}", file=sys.stderr)
    # a PATH that names nothing, or a file named itself that is no input, is bad input
    # (exit 2), as for every command; what folders hold is only counted
    if found.missing or bad_named:
        return 2
    return 1 if o.strict and summary.failing_count else 0


def _summarize(summary: Summary, done: Done) -> None:
    summary.add(done.rows)
    summary.notes += [f"{done.rows.file}: {note}" for note in done.rows.notes]
    if done.changed:
        summary.notes.append(f"{done.rows.file}: changed while it was read; scan it again")


def _write_jsonl(rows) -> None:
    out = sys.stdout.buffer
    if rows.error is not None:
        out.write(dumps({"file": rows.file, "error": rows.error}) + b"\n")
        return
    for e in rows.exchanges:
        d = asdict(e)
        d["format"] = rows.format
        out.write(dumps(d) + b"\n")
