"""The rows as DuckDB tables (`--db FILE`) and Parquet files (`--parquet DIR`).

Rows are buffered and loaded in batches through a temporary JSON Lines file (DuckDB's
reader is far faster than one INSERT per row). The `files` table keeps each file's size,
mtime and content hash, so a later scan into the same database reads only files that
changed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import asdict

from ..core.record import record
from ..recording.private import FILE_MODE, open_private, private_folders
from .errors import ScanError
from .rows import AnomalyRow, CallRow, ContractRow, ExchangeRow, FileRows, file_text, stored

EXTRA = "duckdb"  # the optional extra that brings DuckDB: pip install 'streamscope[duckdb]'

SCHEMA = {
    "files": {
        "file": "VARCHAR",
        "size": "BIGINT",
        "mtime_ns": "BIGINT",
        "sha256": "VARCHAR",
        "format": "VARCHAR",
        "error": "VARCHAR",
    },
    "exchanges": {
        "file": "VARCHAR",
        "exchange": "INTEGER",
        "stream": "BOOLEAN",
        "dialect": "VARCHAR",
        "host": "VARCHAR",
        "model": "VARCHAR",
        "status": "INTEGER",
        "ended": "VARCHAR",
        "frames": "BIGINT",
        "calls": "INTEGER",
        "anomaly_kinds": "VARCHAR[]",
        "contract_kinds": "VARCHAR[]",
        "started_ns": "BIGINT",
        "duration_ms": "DOUBLE",
        "turn": "INTEGER",
        "framing": "VARCHAR",
    },
    "calls": {
        "file": "VARCHAR",
        "exchange": "INTEGER",
        "position": "INTEGER",
        "id": "VARCHAR",
        "name": "VARCHAR",
        "type": "VARCHAR",
        "arguments_chars": "BIGINT",
        "repaired": "BOOLEAN",
        "turn": "INTEGER",
    },
    "anomalies": {
        "file": "VARCHAR",
        "exchange": "INTEGER",
        "kind": "VARCHAR",
        "severity": "VARCHAR",
        "frame": "BIGINT",
        "count": "BIGINT",
        "cut_by_client": "BOOLEAN",
        "message": "VARCHAR",
        "turn": "INTEGER",
    },
    "contract": {
        "file": "VARCHAR",
        "exchange": "INTEGER",
        "stream": "INTEGER",
        "kind": "VARCHAR",
        "severity": "VARCHAR",
        "message": "VARCHAR",
        "turn": "INTEGER",
    },
}
# Columns later releases added, each NULL in the rows an older scan stored.
ADDED = {"turn": "INTEGER", "framing": "VARCHAR"}
ROW_TYPES = {
    "exchanges": ExchangeRow,
    "calls": CallRow,
    "anomalies": AnomalyRow,
    "contract": ContractRow,
}
BATCH = 200  # files per load


class StoreError(ScanError):
    """The database cannot be opened or written, or DuckDB is not installed."""


@record(frozen=True, slots=True)
class Stamp:
    """What tells a file changed: size and mtime first (no read), then the content."""

    size: int
    mtime_ns: int
    sha256: str


def stamp(path: str) -> Stamp:
    st = os.stat(path)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return Stamp(st.st_size, st.st_mtime_ns, h.hexdigest())


def connect(path: str):
    """A DuckDB connection to `path`, the file (and the WAL DuckDB keeps beside it) 0600:
    they hold paths, hosts, models, tool names and the findings' messages."""
    try:
        import duckdb
    except ImportError:
        raise StoreError(
            f"--db and --parquet need DuckDB: pip install 'streamscope[{EXTRA}]'"
        ) from None
    try:
        if path != ":memory:":
            _private(path)
            _private(path + ".wal", only_if_there=True)
        with _umask():  # what DuckDB creates itself (the WAL) too
            return duckdb.connect(path)
    except duckdb.Error as e:
        raise StoreError(f"{path}: cannot open it as a DuckDB database: {_line(e)}") from None
    except OSError as e:
        raise StoreError(f"{path}: cannot open it: {e.strerror or e}") from None


def _private(path: str, only_if_there: bool = False) -> None:
    """A database file there already made 0600; a new one left for DuckDB to create
    (it takes no empty file), under a umask that makes it 0600."""
    if os.path.isfile(path):
        os.close(open_private(path, os.O_RDONLY))
    elif not only_if_there:
        private_folders(os.path.dirname(os.path.abspath(path)))


class _umask:
    """The umask that makes every file created meanwhile 0600 (folders 0700)."""

    def __enter__(self) -> None:
        self.old = os.umask(0o077)

    def __exit__(self, *exc: object) -> None:
        os.umask(self.old)


def _line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


class Store:
    def __init__(self, path: str | None, name: str | None = None) -> None:
        """The database at `path` (None: in memory); `name` is the output its errors name
        (default: `path`; an in-memory store names the Parquet folder it is written to)."""
        self.path = path or ":memory:"
        self.name = name or self.path
        self.con = connect(self.path)
        for table, columns in SCHEMA.items():
            cols = ", ".join(f'"{c}" {t}' for c, t in columns.items())
            self.con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({cols})")
            for col, kind in ADDED.items():
                if col in columns:  # a store an older streamscope made lacks it
                    self.con.execute(f'ALTER TABLE {table} ADD COLUMN IF NOT EXISTS "{col}" {kind}')
        self._pending: list[tuple[FileRows, Stamp | None]] = []
        self._stamps: dict[str, tuple[int, int, str]] | None = None

    # -- incremental: what the last scan saw

    def stamps(self) -> dict[str, tuple[int, int, str]]:
        if self._stamps is None:
            got = self.con.execute("SELECT file, size, mtime_ns, sha256 FROM files").fetchall()
            self._stamps = {f: (s, m, h) for f, s, m, h in got if s is not None}
        return self._stamps

    def unchanged(self, path: str) -> bool | None:
        """True when `path` is as the last scan read it: same size and mtime (not read),
        or the same content under a new mtime (read to hash, then its stamp is updated).
        None when it was never scanned or changed."""
        key = file_text(path)
        known = self.stamps().get(key)
        if known is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if (st.st_size, st.st_mtime_ns) == known[:2]:
            return True
        if st.st_size != known[0]:
            return None
        now = stamp(path)
        if now.sha256 != known[2]:
            return None
        self.con.execute("UPDATE files SET mtime_ns = ? WHERE file = ?", [now.mtime_ns, key])
        return True

    def rows_of(self, files: list[str]) -> list[FileRows]:
        """The stored rows of `files` (unchanged since the last scan), in their order."""
        if not files:
            return []
        files = [file_text(f) for f in files]
        self.con.execute("CREATE OR REPLACE TEMP TABLE wanted (file VARCHAR)")
        self.con.executemany("INSERT INTO wanted VALUES (?)", [[f] for f in files])
        out = {
            f: FileRows(f, fmt, err)
            for f, fmt, err in self.con.execute(
                "SELECT file, format, error FROM files WHERE file IN (SELECT file FROM wanted)"
            ).fetchall()
        }
        for table, row_type in ROW_TYPES.items():
            cols = ", ".join(f'"{c}"' for c in SCHEMA[table])
            query = (
                f"SELECT {cols} FROM {table} WHERE file IN (SELECT file FROM wanted) ORDER BY ALL"
            )
            for values in self.con.execute(query).fetchall():
                getattr(out[values[0]], table).append(row_type(*values))
        return [out[f] for f in files if f in out]

    # -- writing

    def add(self, rows: FileRows, st: Stamp | None) -> None:
        """`rows` replace the file's earlier ones; `st` None: not kept as read (it
        changed during the scan), so the next scan reads it again."""
        self._pending.append((rows, st))
        if len(self._pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        import duckdb

        try:
            self._flush()
        except (duckdb.InterruptException, RuntimeError) as e:
            if isinstance(e, duckdb.InterruptException) or "interrupted" in str(e):
                # Ctrl-C as DuckDB loads a batch: its transaction is undone, what the
                # earlier batches wrote stays, and the scan ends as an interrupted one
                raise KeyboardInterrupt from None
            raise
        except (duckdb.Error, OSError) as e:
            raise StoreError(f"{self.name}: cannot write: {_line(e)}") from None

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        con = self.con
        con.execute("CREATE OR REPLACE TEMP TABLE gone (file VARCHAR)")
        con.executemany("INSERT INTO gone VALUES (?)", [[r.file] for r, _ in pending])
        with tempfile.TemporaryDirectory(prefix="streamscope-scan-") as tmp:
            lines: dict[str, list[bytes]] = {t: [] for t in SCHEMA}
            for rows, st in pending:
                lines["files"].append(
                    stored(
                        {
                            "file": rows.file,
                            "size": st.size if st else None,
                            "mtime_ns": st.mtime_ns if st else None,
                            "sha256": st.sha256 if st else None,
                            "format": rows.format,
                            "error": rows.error,
                        }
                    )
                )
                for table in ROW_TYPES:
                    lines[table] += [stored(asdict(r)) for r in getattr(rows, table)]
            con.execute("BEGIN")
            for table, columns in SCHEMA.items():
                con.execute(f"DELETE FROM {table} WHERE file IN (SELECT file FROM gone)")
                if not lines[table]:
                    continue
                path = os.path.join(tmp, f"{table}.jsonl")
                with open(path, "wb") as f:
                    f.write(b"\n".join(lines[table]) + b"\n")
                spec = "{" + ", ".join(f"'{c}': '{t}'" for c, t in columns.items()) + "}"
                con.execute(
                    f"INSERT INTO {table} SELECT * FROM read_json(?, format='newline_delimited', "
                    f"columns={spec})",
                    [path],
                )
            con.execute("COMMIT")
        self._stamps = None

    def write_parquet(self, folder: str) -> list[str]:
        """Each table as FOLDER/TABLE.parquet (DuckDB writes Parquet itself), each 0600
        and whole or not at all: written beside, then renamed over what was there."""
        import duckdb

        self.flush()
        out, parts = [], []
        try:
            private_folders(folder)
            for table in SCHEMA:
                path = os.path.join(folder, f"{table}.parquet")
                part = os.path.join(folder, f".{table}.parquet.{os.getpid()}.part")
                parts.append(part)
                with _umask():
                    self.con.execute(f"COPY {table} TO '{_sql_text(part)}' (FORMAT parquet)")
                os.chmod(part, FILE_MODE)
                out.append(path)
            for part, path in zip(parts, out, strict=True):
                os.replace(part, path)
        except (duckdb.Error, OSError) as e:
            raise StoreError(
                f"{folder}: cannot write Parquet: {e.strerror if isinstance(e, OSError) else _line(e)}"
            ) from None
        finally:
            for part in parts:
                if os.path.exists(part):
                    os.unlink(part)
        return out

    def close(self) -> None:
        self.flush()
        self.con.close()


def _sql_text(text: str) -> str:
    return text.replace("'", "''")
