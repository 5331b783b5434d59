"""RecordingWriter: append-only JSONL, one os.write per line.

One os.write of a whole line on an unbuffered O_APPEND fd means a kill -9 leaves only whole
lines plus at most one cut-off last line (which readers tolerate), and the lock means
concurrent exchanges never interleave within a line. chunk() is on the proxy's hot path:
one orjson.dumps and one os.write (a chunk or message line holds strictly decoded text,
ints and base64: nothing orjson refuses; the other lines go through format.line_json).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, cast

import orjson

from streamscope.core.codings import content_codings, without_codings
from streamscope.recording.format import (
    END_REASONS,
    OPCODES,
    Header,
    Headers,
    Request,
    line_json,
    without_surrogates,
)
from streamscope.recording.mask import (
    HeldFrame,
    Masking,
    argv_credentials,
    credentials,
    mask_argv,
    mask_request,
)
from streamscope.recording.private import open_private, private_folders_of

_CHUNK_LINE = orjson.OPT_APPEND_NEWLINE


def _text_pairs(headers: Iterable[tuple[str | bytes, str | bytes]]) -> Headers:
    """Accept str or raw bytes headers (httpx/h11 give bytes): UTF-8, else latin-1."""
    return [(_text(n), _text(v)) for n, v in headers]


def _text(x: str | bytes) -> str:
    if isinstance(x, str):
        return x
    try:
        return x.decode("utf-8")
    except UnicodeDecodeError:
        return x.decode("latin-1")


class RecordingExists(FileExistsError):
    """A recording is already at the path, and the writer was not told to replace it: a
    FileExistsError whose message is one line naming the path and what to do instead."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(errno.EEXIST, "already exists", os.fspath(path))

    def __str__(self) -> str:  # as `record -o` says it of an existing file
        return (
            f"{self.filename}: already exists; streamscope never overwrites it without "
            "overwrite=True"
        )


# The header's note of a recording written with pseudonymize_ids: every reader says it.
PSEUDONYMIZED = (
    "session, thread, conversation and request ids and cache keys are pseudonyms "
    "(--pseudonymize-ids): the same within this recording, not the agent's own"
)


def redacted_note(paths: Sequence[str]) -> str:
    """The header's note of a recording written with redact_json: every reader says it."""
    return (
        f'request body values at {", ".join(paths)} are recorded as "[REDACTED]" '
        "(--redact-json); null and empty values as sent"
    )


class RecordingWriter:
    """Write one recording. Thread-safe; use as a context manager or call close(). The
    file is made 0600, and the folders it needs 0700 where they are missing.

    With `on_error`, a failed write (disk full, I/O error) does not raise: the file is cut
    back to its last whole line, recording stops, `failure` says why and `on_error` is
    called once with the OSError, so a proxy can keep relaying. With `keep_empty=False`,
    close() removes a recording that holds no exchange (`removed` says so).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        argv: Sequence[str] | None = None,
        redact: bool = True,
        redact_json: Sequence[str] = (),
        *,
        overwrite: bool = False,
        created: str | None = None,
        on_error: Callable[[OSError], None] | None = None,
        keep_empty: bool = True,
        pseudonymize_ids: bool = False,
        on_note: Callable[[str], None] | None = None,
    ) -> None:
        if pseudonymize_ids and not redact:
            raise ValueError(
                "pseudonymize_ids needs redact: the ids would stand beside keys in clear"
            )
        self.path = os.fspath(path)
        self.redact = redact
        self.redact_json = tuple(redact_json)
        # told what a recording could not do as asked (a body --redact-json cannot read)
        self.on_note = on_note
        # 0600 whatever the umask, in folders made 0700 where missing: a recording holds
        # whole conversations (private.py)
        private_folders_of(self.path)
        fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
        try:
            # Checked on the open fd, not before opening, so there is no race.
            if os.fstat(fd).st_size:
                if not overwrite:
                    raise RecordingExists(path)
                os.ftruncate(fd, 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._lock = threading.Lock()
        self._next_exchange = 1
        self._size = 0  # bytes of whole lines written: where a failed write is cut back to
        self._requests = 0
        self._on_error = on_error
        self._keep_empty = keep_empty
        self.failure: str | None = None  # "No space left on device" once a write failed
        self.removed = False
        self.start_ns = time.monotonic_ns()
        if created is None:
            created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        # every secret-masking rule lives in mask.py, shared with export
        self._masking = Masking(pseudonymize_ids) if redact else None
        # compressed bodies with credentials to mask, held to their end: the response
        # line, the body's codings, its reads
        self._compressed: dict[int, tuple[dict[str, Any], list[str], list[tuple[int, bytes]]]] = {}
        masked = 0
        if argv is not None and self._masking is not None:
            self._masking.seen.update(dict.fromkeys(argv_credentials(argv)))
        if argv is not None:
            argv, masked = mask_argv(argv) if redact else (list(argv), 0)
            # an argument that is not UTF-8 (a file name's bytes) is a lone surrogate here,
            # which no UTF-8 JSON can hold: it is kept as its escape
            argv = [without_surrogates(a) for a in argv]
        notes = [PSEUDONYMIZED] if pseudonymize_ids else []
        if self.redact_json:
            notes.append(redacted_note(self.redact_json))
        self.header = Header(created=created, argv=argv, masked=masked, notes=notes or None)
        self._write(line_json(self.header.to_json()))

    # -- the line types

    def new_exchange(self) -> int:
        """Allocate the next exchange number (1, 2, 3...)."""
        with self._lock:
            n = self._next_exchange
            self._next_exchange += 1
            return n

    def request(
        self,
        exchange: int,
        method: str,
        url: str,
        headers: Iterable[tuple[str | bytes, str | bytes]],
        body: bytes | None,
        t_ns: int | None = None,
        client_headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        """`client_headers`: the headers the client sent, where the recorded ones are not
        (a request the proxy signed again): their credentials are masked too."""
        pairs = _text_pairs(headers)
        body = bytes(body or b"")
        if self._masking is None and not self.redact_json:
            rec = Request.of(exchange, self._t(t_ns), method, url, pairs, body)
        else:  # on what a compressed body decodes to (mask_request)
            known = credentials("", client_headers) if self._masking is not None else ()
            got = mask_request(self._masking, exchange, url, pairs, body, known, self.redact_json)
            if got.undecodable and self.redact_json and self.on_note is not None:
                self.on_note(
                    f"exchange {exchange}: {got.undecodable}; --redact-json cannot apply, "
                    "so the body is not recorded"
                )
            rec = Request.of(
                exchange,
                self._t(t_ns),
                method,
                got.url,
                got.headers,
                got.body,
                got.masked,
                got.decoded,
                got.redacted,
            )
        if self._write(line_json(rec.to_json())):
            self._requests += 1

    def response(
        self,
        exchange: int,
        status: int,
        headers: Iterable[tuple[str | bytes, str | bytes]],
        t_ns: int | None = None,
    ) -> None:
        pairs = _text_pairs(headers)
        masked = 0
        if self._masking is not None:
            pairs, masked = self._masking.headers(exchange, pairs)
        t = self._t(t_ns)
        rec = {"type": "response", "exchange": exchange, "t_ns": t, "status": status}
        rec["headers"] = pairs
        if masked:
            rec["masked"] = masked
        codings = content_codings(pairs)
        if codings and self._masking is not None and self._masking.secrets(exchange):
            # what a compressed body decodes to is masked whole, at its end (_release)
            with self._lock:
                self._compressed[exchange] = (rec, codings, [])
            return
        self._write(line_json(rec))

    def _release(self, exchange: int) -> int:
        """A compressed body held (and its response line): written as it came, or
        decoded and masked (Masking.compressed); how many values were masked."""
        with self._lock:
            held = self._compressed.pop(exchange, None)
        if held is None or self._masking is None:
            return 0
        rec, codings, reads = held
        reads, masked = self._masking.compressed(exchange, codings, reads)
        if masked:  # kept decoded, as a HAR's decoded body is
            rec["headers"] = without_codings(rec["headers"])
        self._write(line_json(rec))
        for t, data in reads:
            self._chunk(exchange, data, t)
        return masked

    def chunk(self, exchange: int, data: bytes, t_ns: int | None = None) -> None:
        if t_ns is None:
            t_ns = time.monotonic_ns() - self.start_ns
        held = self._compressed.get(exchange)
        if held is not None:
            held[2].append((t_ns, data))
            return
        if self._masking is not None:
            ready = self._masking.chunk(exchange, t_ns, data)
            if ready is not None:  # the exchange has credentials to mask in its body
                for t, piece in ready:  # a read may be held until the next one
                    self._chunk(exchange, piece, t)
                return
        self._chunk(exchange, data, t_ns)

    def _chunk(self, exchange: int, data: bytes, t_ns: int) -> None:
        try:
            rec = {"type": "chunk", "exchange": exchange, "t_ns": t_ns, "data": data.decode()}
        except UnicodeDecodeError:  # incl. a read that splits a multi-byte character
            b64 = base64.b64encode(data).decode("ascii")
            rec = {"type": "chunk", "exchange": exchange, "t_ns": t_ns, "data_b64": b64}
        self._write(orjson.dumps(rec, option=_CHUNK_LINE))

    def message(
        self,
        exchange: int,
        sender: str,
        opcode: int,
        fin: bool,
        payload: bytes,
        compressed: bool = False,
        t_ns: int | None = None,
    ) -> None:
        """One WebSocket frame of a session, as `sender` ("client" or "server") sent it:
        its opcode's number, its payload unmasked, inflated where `compressed`. Masked
        like a body's reads (mask.FrameMask): a frame whose end could begin a credential
        is written once its message's next frame (or the end) says whether it does, the
        frames after it waiting behind it, so the lines keep the order the frames came."""
        t = self._t(t_ns)
        if self._masking is not None:
            fields = (sender, opcode, fin, compressed)
            ready = self._masking.message(exchange, sender, opcode, fin, t, fields, payload)
            if ready is not None:
                self._held(exchange, ready)
                return
        self._message(exchange, t, payload, sender, opcode, fin, compressed, 0)

    def _held(self, exchange: int, frames: list[HeldFrame]) -> None:
        """Frames the masking let out, with the fields they were given."""
        for f in frames:
            sender, opcode, fin, compressed = cast("tuple[str, int, bool, bool]", f.fields)
            payload = f.payload if f.payload is not None else b""
            self._message(exchange, f.t_ns, payload, sender, opcode, fin, compressed, f.masked)

    def _message(
        self,
        exchange: int,
        t_ns: int,
        payload: bytes,
        sender: str,
        opcode: int,
        fin: bool,
        compressed: bool,
        masked: int,
    ) -> None:
        # the line Message.to_json makes, built here at once (a line per frame)
        name = OPCODES.get(opcode, opcode)
        rec = {"type": "message", "exchange": exchange, "t_ns": t_ns, "from": sender}
        rec["opcode"], rec["fin"] = name, fin
        if compressed:
            rec["compressed"] = True
        try:
            rec["data"] = payload.decode()
        except UnicodeDecodeError:
            rec["data_b64"] = base64.b64encode(payload).decode("ascii")
        if masked:
            rec["masked"] = masked
        self._write(orjson.dumps(rec, option=_CHUNK_LINE))

    def end(
        self, exchange: int, reason: str, error: str | None = None, t_ns: int | None = None
    ) -> None:
        if reason not in END_REASONS:
            raise ValueError(f"end reason must be one of {END_REASONS}, not {reason!r}")
        t = self._t(t_ns)
        masked = self._release(exchange)
        if self._masking is not None:
            # a session's frames held back (each counts its own masked values)
            self._held(exchange, self._masking.end_messages(exchange))
            held, error, n = self._masking.end(exchange, error)
            masked += n
            for t_read, piece in held:  # the reads held back, before the end
                self._chunk(exchange, piece, t_read)
        rec = {"type": "end", "exchange": exchange, "t_ns": t, "reason": reason, "error": error}
        if masked:
            rec["masked"] = masked
        self._write(line_json(rec))

    def shown(self, line: str) -> str:
        """A line the recorder says (its summary, an error) with every credential it has
        held masked: an upstream's error may echo one the recording reads back masked
        only where the recording could mask it."""
        return self._masking.text(line) if self._masking is not None else line

    # -- plumbing

    def _t(self, t_ns: int | None) -> int:
        return time.monotonic_ns() - self.start_ns if t_ns is None else t_ns

    def _write(self, line: bytes) -> bool:
        """Append one whole line; False when recording has stopped on a failed write."""
        with self._lock:
            if self._fd < 0:
                if self.failure is not None:
                    return False
                raise ValueError(f"{self.path}: recording is closed")
            try:
                n = os.write(self._fd, line)
                while n < len(line):  # short writes only on a full disk or a signal
                    n += os.write(self._fd, line[n:])
            except OSError as e:
                if self._on_error is None:
                    raise
                self.failure = e.strerror or str(e)
                self._fail()
                error = e
            else:
                self._size += n
                return True
        self._on_error(error)
        return False

    def _fail(self) -> None:
        """Cut the file back to its last whole line and stop recording (lock held)."""
        fd, self._fd = self._fd, -1
        with contextlib.suppress(OSError):  # a device such as /dev/full cannot be cut
            os.ftruncate(fd, self._size)
        with contextlib.suppress(OSError):
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def close(self) -> None:
        if self._fd >= 0:
            for exchange in list(self._compressed):  # no end line: its body as held
                self._release(exchange)
        if self._masking is not None and self._fd >= 0:
            for exchange in self._masking.open_exchanges():  # no end line: keep its reads
                self._held(exchange, self._masking.end_messages(exchange))
                for t, piece in self._masking.end(exchange, None)[0]:
                    self._chunk(exchange, piece, t)
        with self._lock:
            if self._fd >= 0:
                fd, self._fd = self._fd, -1
                os.close(fd)
            if not self._keep_empty and not self._requests and not self.removed:
                self.removed = _remove_regular(self.path)

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_regular(path: str) -> bool:
    """Remove `path` if it is a regular file (never a device such as /dev/full)."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.remove(path)
            return True
    except OSError:
        pass
    return False
