"""Reading recordings lazily: sequentially (RecordingReader) or by line (RecordingIndex).

Both read the file in big blocks and keep no lines. A cut-off last line (no trailing
newline and not valid JSON: what kill -9 of the writer leaves) ends reading quietly and is
reported in `stopped_at`; any other bad line raises a one-line RecordingError.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from itertools import accumulate, repeat
from operator import add
from typing import Any, BinaryIO

import orjson

from streamscope.recording.copies import readable
from streamscope.recording.format import (
    BOM,
    ESCAPED_E,
    MAX_T_NS,
    SAME_LINES_SINCE,
    Chunk,
    Header,
    Message,
    Record,
    RecordingError,
    Stopped,
    body_record,
    decode_b64,
    escaped_key,
    key_twice,
    located,
)
from streamscope.recording.migrate import check_version, header_version, migrate

from ..core import jsonio
from ..core.record import record

BLOCK = 1 << 22  # 4 MiB reads: few syscalls, bounded memory
HEADER_LIMIT = 1 << 20  # a header line is small; this stops a junk file being read whole

Progress = Callable[[int, int], None]  # progress(bytes_done, bytes_total)

# A recording's lines are read by orjson alone: no line holds a lone surrogate or an
# integer past 64 bits (format.line_json), which the stdlib would read (core/jsonio.py).
_loads = orjson.loads
_JSONError = orjson.JSONDecodeError


def _not_json(line: bytes) -> str:
    """Why orjson refused a line: not JSON, or JSON that holds what no line holds."""
    try:
        jsonio.loads(line)
    except _JSONError as refused:
        if "depth limit" in str(refused):  # (JSON, but deeper than any line is read)
            return "JSON nested more than 1,024 levels deep, deeper than a line is read"
        return "not valid JSON"
    return "holds a lone surrogate or an integer past 64 bits, which no recording line holds"


# The lines that open an exchange: its request, or its response where no request was
# recorded (a stream exported as a recording). Any other line of an exchange comes after.
_OPENS = ("request", "response")


def _second(kind: str, exchange: int, first: int) -> str:
    """Why a request, response or end line cannot be read: its exchange has one already
    (two recordings spliced, lines repeated); the index and the line reader both say so."""
    return f"a second {kind} line for exchange {exchange} (first on line {first})"


def _unplaced(kind: str, exchange: int) -> str:
    """Why a chunk, message or end line of an exchange no line opened before it cannot be
    read (an exchange number edited or cut): it belongs to no exchange a reader shows."""
    a = "an" if kind == "end" else "a"  # (a chunk, a message)
    return (
        f"{a} {kind} line of exchange {exchange}, which has no request or response line before it"
    )


def _open(path: str) -> BinaryIO:
    try:
        # (a UTF-16 file is read as its UTF-8 copy: recording/copies.py)
        return open(readable(path), "rb", buffering=0)  # noqa: SIM115 (callers close it)
    except OSError as e:
        raise RecordingError(f"{path}: cannot open: {e.strerror or e}", path) from None


def _read_header(path: str) -> tuple[Header, dict[Any, Any], int]:
    """(header, its migrated dict, the file's schema version); RecordingError if not one."""
    with _open(path) as f:
        line = f.readline(HEADER_LIMIT)
    if not line:
        raise RecordingError(f"{path}: empty file, not a streamscope recording", path, 1, 0)
    if line.startswith(BOM):  # an editor's byte order mark: skipped (the input layer notes it)
        line = line[len(BOM) :]
    try:
        d = _loads(line)
    except _JSONError:
        raise located(path, 1, 0, f"{_not_json(line)} (expected the recording header)") from None
    try:
        version = header_version(d)
        if version is None:
            raise ValueError("not a streamscope recording (no header line)")
        check_version(version)
        if version < SAME_LINES_SINCE:
            d = migrate(d, version)
        return Header.from_json(d), d, version
    except ValueError as e:
        raise located(path, 1, 0, str(e)) from None


def _blocks(
    path: str, progress: Progress | None, start: int = 0, before: int = 0
) -> Iterator[tuple[int, int, list[bytes], bool, bytes]]:
    """Yield (line_no before the first, byte offset of the first, lines without "\\n",
    whole, the bytes they were split from, which begin at that offset) for the lines from
    byte `start`, which begins line `before + 1`: a block's whole lines at a time, then a
    last line without its newline (whole False), if any."""
    with _open(path) as f:
        total = os.fstat(f.fileno()).st_size
        f.seek(start)
        n, offset, done = before, start, start
        pending: list[bytes] = []  # a line longer than a block, in pieces (no O(n^2) joins)
        while block := f.read(BLOCK):
            done += len(block)
            if b"\n" not in block:
                pending.append(block)
                continue
            if pending:
                pending.append(block)
                block = b"".join(pending)
            lines = block.split(b"\n")
            tail = lines.pop()
            pending = [tail] if tail else []
            yield n, offset, lines, True, block
            n += len(lines)
            offset += len(block) - len(tail)
            if progress is not None:
                progress(done, max(total, done))
        if pending:
            last = b"".join(pending)
            yield n, offset, [last], False, last
        if progress is not None:
            progress(done, max(total, done))


def _lines(
    path: str, progress: Progress | None, start: int = 0, before: int = 0
) -> Iterator[tuple[int, int, bytes, bool]]:
    """Yield (line_no, byte_offset, line without "\\n", had_newline) for every line from
    byte `start`, which begins line `before + 1`."""
    for n, offset, lines, whole, _ in _blocks(path, progress, start, before):
        for line in lines:
            n += 1
            yield n, offset, line, whole
            offset += len(line) + 1


class RecordingReader:
    """Sequential reading. Iterate for (line_no, Record), or (line_no, dict) when raw.

    The header is read (and checked) on construction; `stopped_at` is set once iteration
    reaches a cut-off last line. A bad line raises RecordingError, or, when `tolerant`, is
    skipped and kept in `errors`. Each iteration rereads the file; `more` reads on from
    where the last one stopped.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        raw: bool = False,
        progress: Progress | None = None,
        tolerant: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self.raw = raw
        self.progress = progress
        self.tolerant = tolerant
        self.errors: list[RecordingError] = []
        self.stopped_at: Stopped | None = None
        self.header, self._header_dict, self.version = _read_header(self.path)
        self._opened: set[int] = set()  # the exchanges a request or response line opened
        self._firsts: dict[tuple[str, int], int] = {}  # (request/response/end, exchange): its line
        # where `more` goes on: the end of the last line read, and that line's number
        self._next = (0, 0)
        self._unended = False  # that line was read before its newline was written
        self.bytes_read = 0  # by the line passes, not the header check (a test counts it)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        """Every line from the start (each iteration rereads the file)."""
        self._next, self._unended = (0, 0), False
        self.errors = []
        self._opened, self._firsts = set(), {}
        return self.more()

    def more(self) -> Iterator[tuple[int, Any]]:
        """The lines appended since the last iteration stopped (a recording being written):
        only the new bytes are read. A cut-off last line is read again next time."""
        self.stopped_at = None
        start, before = self._next
        if self._unended:  # skip that line's newline, if it has come since
            with _open(self.path) as f:
                f.seek(start)
                newline = f.read(1) == b"\n"
            start += newline
            self.bytes_read += newline  # read here, once, like every other byte
            self._unended = False
        reached = [start]

        def progress(done: int, total: int) -> None:
            reached[0] = done
            if self.progress is not None:
                self.progress(done, total)

        path, version, raw, opened, firsts = (
            self.path,
            self.version,
            self.raw,
            self._opened,
            self._firsts,
        )
        # inspect's hot path: a current-version chunk line is checked inline
        fast = raw and version >= SAME_LINES_SINCE
        n, offset, line, whole = 0, 0, None, True
        cut = False
        try:
            for n, offset, line, whole in _lines(path, progress, start, before):  # noqa: B007
                if n == 1:
                    yield 1, self._header_dict if raw else self.header
                    continue
                try:
                    d = _loads(line)
                except _JSONError:
                    if not whole:  # cut off: read again next time, it may be whole then
                        cut = True
                        self.stopped_at = Stopped(n, offset)
                        return
                    self._bad(located(path, n, offset, _not_json(line)))
                    continue
                # (the hot path's lines, as writers write them, pass the cheap test inline)
                if not (
                    line.startswith(_CHUNK_PREFIX)
                    and line.find(b'e"', _CHUNK_AT) < 0
                    and line.find(ESCAPED_E, _CHUNK_AT) < 0  # ("typ\u0065": key_twice)
                ):
                    twice = key_twice(line)
                    if twice is not None:
                        self._bad(located(path, n, offset, twice))
                        continue
                if fast and _chunk_ok(d) and d["exchange"] in opened:  # inspect's hot path
                    yield n, d
                    continue
                try:
                    if version < SAME_LINES_SINCE:
                        d = migrate(d, version)
                    rec = body_record(d)  # every field's type checked, once, here
                    if rec.type in _OPENS:
                        opened.add(rec.exchange)
                    elif rec.exchange not in opened:
                        raise ValueError(_unplaced(rec.type, rec.exchange))
                    if rec.type != "chunk" and rec.type != "message":  # one of each
                        first = firsts.setdefault((rec.type, rec.exchange), n)
                        if first != n:
                            raise ValueError(_second(rec.type, rec.exchange, first))
                    if raw:
                        rec = d
                except ValueError as e:
                    self._bad(located(path, n, offset, str(e)))
                    continue
                yield n, rec
        finally:  # the next pass starts after the last line taken
            self.bytes_read += reached[0] - start
            if cut:
                self._next, self._unended = (offset, n - 1), False
            elif line is not None:
                self._next, self._unended = (offset + len(line) + whole, n), not whole

    def _bad(self, error: RecordingError) -> None:
        if not self.tolerant:
            raise error
        self.errors.append(error)


def _chunk_ok(d: object) -> bool:
    """A current-version chunk line whose every field has its type, checked inline (the
    hot path of inspect and of a checked index); False: `body_record` says what is wrong."""
    return (
        type(d) is dict
        and d.get("type") == "chunk"
        and type(d.get("exchange")) is int
        and type(t := d.get("t_ns")) is int
        and -MAX_T_NS <= t <= MAX_T_NS
        and (
            (type(d.get("data")) is str and "data_b64" not in d)
            or (
                type(b64 := d.get("data_b64")) is str and "data" not in d and _b64_ok(b64)
            )  # a binary body's (an AWS event stream)
        )
    )


def _chunks_ok(lines: list[bytes]) -> bool:
    """Every line is a whole chunk line, as inspect reads it (JSON, its fields' types)."""
    try:
        return all(map(_chunk_ok, map(_loads, lines)))
    except _JSONError:
        return False


def schema_version(path: str | os.PathLike[str]) -> int:
    """The schema version the recording's header declares; RecordingError if it is none."""
    return _read_header(os.fspath(path))[2]


def chunk_lines_ok(path: str | os.PathLike[str]) -> bool:
    """Does every whole line that begins as a chunk line (`_CHUNK_PREFIX`) read as inspect
    reads it (JSON, each field's type: `_chunk_ok`)? That is all a checked scan
    (`RecordingIndex.open(check=True)`) reads beyond a plain one, which takes such a line
    by its prefix: where this holds, the two index a recording alike, errors included
    (recording/ahead.py checks in one process while another indexes). False says only
    that they may differ: the checked scan then says which line, and why."""
    prefix = _CHUNK_PREFIX
    for _, _, lines, whole, _ in _blocks(os.fspath(path), None):
        if whole and not _chunks_ok([line for line in lines if line.startswith(prefix)]):
            return False
    return True


def _b64_ok(text: str) -> bool:
    try:
        decode_b64(text)
    except ValueError:
        return False  # (the line's record says why)
    return True


def iter_records(path: str | os.PathLike[str], progress: Progress | None = None) -> RecordingReader:
    """Iterate (line_no, Record) from line 1 (the Header); then check `.stopped_at`."""
    return RecordingReader(path, progress=progress)


def iter_raw(
    path: str | os.PathLike[str], progress: Progress | None = None, tolerant: bool = False
) -> RecordingReader:
    """Like iter_records but yields migrated dicts (every field's type checked): for hot paths."""
    return RecordingReader(path, raw=True, progress=progress, tolerant=tolerant)


@record(slots=True)
class ExchangeIndex:
    """Line numbers of one exchange's lines (None: not recorded, e.g. still running)."""

    exchange: int
    request: int | None = None
    response: int | None = None
    end: int | None = None
    chunks: array[Any] = field(default_factory=lambda: array("I"))
    messages: array[Any] = field(default_factory=lambda: array("I"))  # a WebSocket session's


# Writers put "type" and "exchange" first, so a chunk line is recognised by this prefix
# without parsing it. Lines that do not match (v0 files, hand-edited lines, non-chunk
# lines, which are few) are parsed fully.
_CHUNK_PREFIX = b'{"type":"chunk","exchange":'
_CHUNK_AT = len(_CHUNK_PREFIX)
_RUN = 256  # lines the scan tries to index at once (one exchange's chunks, most of them)


def _one_exchange_chunks(
    n: int,
    lines: list[bytes],
    exchanges: dict[Any, Any],
    block: bytes,
    at: int,
    end: int,
    check: bool = False,
) -> bool:
    """When every line (lines n+1...) is a chunk line of the first one's exchange, as the
    line-by-line scan's prefix test reads it (with `check`, each parsed and its fields'
    types checked, as inspect reads it), add them to that exchange and say True.
    `block[at:end]` holds the lines (counted there, not joined again)."""
    first = lines[0]
    if not first.startswith(_CHUNK_PREFIX):
        return False
    comma = first.find(b",", _CHUNK_AT)
    digits = first[_CHUNK_AT:comma]
    if not digits.isdigit():
        return False
    prefix = first[: comma + 1]  # {"type":"chunk","exchange":N,
    if sum(map(bytes.startswith, lines, repeat(prefix))) != len(lines):
        return False
    # A line giving "type" or "exchange" twice, however spelt ("typ\u0065" is "type"):
    # refused. Either ends `e"` or ESCAPED_E; each prefix ends two strings in `e"`.
    if block.count(b'e"', at, end) != 2 * len(lines):  # (a text ends in "e" too: count)
        if block.count(b'"exchange"', at, end) != len(lines):
            return False
        if block.count(b'"type"', at, end) != len(lines):
            return False
        if escaped_key(block, at, end):
            return False
    elif block.find(ESCAPED_E, at, end) >= 0 and escaped_key(block, at, end):
        return False
    if check and not _chunks_ok(lines):
        return False  # (the line-by-line scan says which line, and why)
    ex = exchanges.get(int(digits))
    if ex is None:  # no line opened the exchange before them: said line by line
        return False
    ex.chunks.fromlist(list(range(n + 1, n + len(lines) + 1)))
    return True


class RecordingIndex:
    """Random access by line number, after one scan that keeps 8 bytes per line.

    Chunk lines are not validated by the scan (only their exchange number is read) unless
    `check`; a bad one raises RecordingError when it is read with line() or chunks().
    A bad line raises RecordingError, or, when `tolerant` (the replay opens what it can),
    is skipped and kept in `errors`.
    """

    def __init__(
        self,
        path: str,
        header: Header,
        version: int,
        offsets: array[Any],
        exchanges: dict[int, ExchangeIndex],
        stopped_at: Stopped | None,
        errors: list[RecordingError] | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.version = version
        self.stopped_at = stopped_at
        self.errors = errors or []  # lines skipped by a tolerant scan
        self._offsets = offsets  # start of every line, plus the end of the last one
        self._exchanges = exchanges
        self._f = _open(path)
        self._lock = threading.Lock()  # seek + read must not interleave between threads
        self._check = False  # validate chunk lines too when scanning (see open)
        self._tolerant = False  # keep bad lines in `errors` instead of raising
        self._unended = False  # the last line indexed had no newline (yet)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        progress: Progress | None = None,
        *,
        check: bool = False,
        tolerant: bool = False,
    ) -> RecordingIndex:
        path = os.fspath(path)
        header, _, version = _read_header(path)
        index = cls(path, header, version, array("q"), {}, None)
        index._check, index._tolerant = check, tolerant
        index._scan(progress)
        return index

    def state(self) -> tuple[Any, ...]:
        """What a scan found, to be sent to another process (recording/ahead.py): the
        open file and the lock stay behind."""
        return (
            self._offsets.tobytes(),
            self._exchanges,
            self.stopped_at,
            self.errors,
            self._unended,
        )

    @classmethod
    def from_state(
        cls,
        path: str | os.PathLike[str],
        state: tuple[Any, ...],
        *,
        tolerant: bool = False,
        check: bool = False,
    ) -> RecordingIndex:
        """The index `state()` describes, of the recording at `path`, as `open` would have
        made it (its header read again here)."""
        path = os.fspath(path)
        header, _, version = _read_header(path)
        data, exchanges, stopped_at, errors, unended = state
        offsets = array("q")
        offsets.frombytes(data)
        index = cls(path, header, version, offsets, exchanges, stopped_at, errors)
        index._tolerant, index._check, index._unended = tolerant, check, unended
        return index

    def refresh(self, progress: Progress | None = None) -> int:
        """Index the lines appended since the last scan (a recording being written): reads
        only the new bytes, from the end of the last whole line. Returns how many lines
        were added."""
        before = len(self)
        if readable(self.path) != self._f.name:  # a UTF-16 file grew: its new UTF-8 copy
            with self._lock:
                self._f.close()
                self._f = _open(self.path)
        self._scan(progress)
        return len(self) - before

    def _scan(self, progress: Progress | None) -> None:
        """Index lines from where the last scan stopped (the start, the first time)."""
        path, version, offsets, exchanges = self.path, self.version, self._offsets, self._exchanges
        start = offsets.pop() if offsets else 0  # the end of the last line indexed
        if self._unended:  # that line was indexed before its newline was written
            with self._lock:
                self._f.seek(start)
                start += self._f.read(1) == b"\n"
        self._unended = False
        self.stopped_at = None  # a cut-off last line is read again: it may be whole now
        runs = version >= SAME_LINES_SINCE  # (runs of chunk lines: checked with `check`)
        fast = runs and not self._check
        end = start
        for n, offset, lines, whole, block in _blocks(path, progress, start, len(offsets)):
            base = offset  # where `block` begins in the file
            for i in range(0, len(lines), _RUN):
                run = lines[i : i + _RUN]
                size = sum(map(len, run)) + len(run)  # (their newlines too)
                at = offset - base
                if (
                    runs
                    and whole
                    and n > 0
                    and _one_exchange_chunks(n, run, exchanges, block, at, at + size, self._check)
                ):
                    # The common run: chunk lines of one exchange only, indexed at C speed
                    # as the line-by-line loop below would index each of them.
                    # line i starts after the lines before it and their i newlines
                    starts = accumulate(map(len, run[:-1]), initial=offset)
                    offsets.fromlist(list(map(add, starts, range(len(run)))))
                    n += len(run)
                    offset = end = offset + size
                    continue
                for line in run:
                    n += 1
                    if not self._index_line(n, offset, line, whole, fast):
                        break  # a cut-off last line: read again by the next scan
                    end = offset + len(line) + whole
                    offset = end
        offsets.append(end)

    def _index_line(self, n: int, offset: int, line: bytes, whole: bool, fast: bool) -> bool:
        """Index one line; False for a cut-off last line (not indexed: read again later)."""
        offsets, exchanges, version = self._offsets, self._exchanges, self.version
        if n == 1:
            offsets.append(offset)
            return True
        if fast and whole and line.startswith(_CHUNK_PREFIX) and key_twice(line) is None:
            digits = line[_CHUNK_AT : line.find(b",", _CHUNK_AT)]
            ex = exchanges.get(int(digits)) if digits.isdigit() else None
            if ex is not None:  # (None: no line opened its exchange before it, said below)
                ex.chunks.append(n)
                offsets.append(offset)
                return True
        offsets.append(offset)
        self._unended = not whole
        refused = None  # (why orjson refused the line; a `null` line is None, not refused)
        try:
            d = _loads(line)
        except _JSONError:
            if not whole:
                offsets.pop()
                self.stopped_at = Stopped(n, offset)
                return False
            refused = _not_json(line)
        try:
            if refused is not None:
                raise ValueError(refused)
            twice = key_twice(line)
            if twice is not None:
                raise ValueError(twice)
            rec = body_record(d if version >= SAME_LINES_SINCE else migrate(d, version))
            ex = exchanges.get(rec.exchange)
            if ex is None and rec.type not in _OPENS:
                raise ValueError(_unplaced(rec.type, rec.exchange))
            if ex is None:
                ex = exchanges[rec.exchange] = ExchangeIndex(rec.exchange)
            if rec.type == "chunk":
                ex.chunks.append(n)
            elif rec.type == "message":
                ex.messages.append(n)
            elif getattr(ex, rec.type) is not None:
                raise ValueError(_second(rec.type, rec.exchange, getattr(ex, rec.type)))
            else:
                setattr(ex, rec.type, n)
        except ValueError as e:
            error = located(self.path, n, offset, str(e))
            if not self._tolerant:
                raise error from None
            self.errors.append(error)
        return True

    def __len__(self) -> int:
        """Number of readable lines, the header included."""
        return len(self._offsets) - 1

    def exchanges(self) -> list[int]:
        return sorted(self._exchanges)

    def line_size(self, n: int) -> int:
        """Line `n`'s bytes, its newline included (1-based, as `line`)."""
        return int(self._offsets[n] - self._offsets[n - 1])

    def exchange(self, exchange: int) -> ExchangeIndex:
        return self._exchanges[exchange]

    def raw_line(self, n: int) -> dict[Any, Any]:
        """Line `n` (1-based) as a migrated dict."""
        if not 1 <= n <= len(self):
            raise IndexError(f"{self.path}: no line {n} (lines 1 to {len(self)})")
        start, stop = self._offsets[n - 1], self._offsets[n]
        with self._lock:
            self._f.seek(start)
            data = self._f.read(stop - start)
        try:
            d = _loads(data)
            return d if self.version >= SAME_LINES_SINCE else migrate(d, self.version)
        except (_JSONError, ValueError) as e:
            what = _not_json(data) if isinstance(e, _JSONError) else str(e)
            raise located(self.path, n, start, what) from None

    def raw_lines(self, numbers: Sequence[int], start: int, stop: int) -> Iterator[dict[Any, Any]]:
        """Lines numbers[start:stop] in order, each as `raw_line` gives it, read in blocks:
        lines next to each other in the file (one stream's chunks, mostly) are one read
        of up to BLOCK bytes instead of a seek and a read each."""
        offsets, path, current = self._offsets, self.path, self.version >= SAME_LINES_SINCE
        size = len(self)
        want = min(1 << 16, BLOCK)  # small first (a replay jump reads a few hundred lines)
        k = start
        while k < stop:
            first = numbers[k]
            if not 1 <= first <= size:
                raise IndexError(f"{path}: no line {first} (lines 1 to {size})")
            base, end, j = offsets[first - 1], offsets[first], k + 1
            while j < stop and numbers[j] == numbers[j - 1] + 1 and end - base < want:
                if numbers[j] > size:
                    break
                end = offsets[numbers[j]]
                j += 1
            want = min(want * 2, BLOCK)
            with self._lock:
                self._f.seek(base)
                block = self._f.read(end - base)
            for i in range(k, j):
                n = numbers[i]
                at = offsets[n - 1]
                try:
                    d = _loads(block[at - base : offsets[n] - base])
                    if not current:
                        d = migrate(d, self.version)
                except (_JSONError, ValueError) as e:
                    what = (
                        _not_json(block[at - base : offsets[n] - base])
                        if isinstance(e, _JSONError)
                        else str(e)
                    )
                    raise located(path, n, at, what) from None
                yield d
            k = j

    def line(self, n: int) -> Record:
        """Line `n` (1-based) as its dataclass."""
        if n == 1:
            return self.header
        d = self.raw_line(n)
        try:
            return body_record(d)
        except ValueError as e:
            raise located(self.path, n, self._offsets[n - 1], str(e)) from None

    def chunks(self, exchange: int) -> Iterator[Chunk]:
        for n in self._exchanges[exchange].chunks:
            rec = self.line(n)
            if not isinstance(rec, Chunk):
                raise located(self.path, n, self._offsets[n - 1], "expected a chunk line")
            yield rec

    def messages(self, exchange: int) -> Iterator[Message]:
        """A WebSocket session's frames, in order, each line checked field by field."""
        for n in self._exchanges[exchange].messages:
            rec = self.line(n)
            if not isinstance(rec, Message):
                raise located(self.path, n, self._offsets[n - 1], "expected a message line")
            yield rec

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> RecordingIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
