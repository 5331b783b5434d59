"""The file every reader opens for a path: itself, or a private copy of it.

Two inputs are copied, once, into a private temporary folder (0700, removed at exit),
and every reader opens the copy instead (`readable`):

- A UTF-16 file (what Windows tools write, PowerShell's `>` among them) is read as
  UTF-8. Every reader works on bytes and finds lines by their b"\\n", which UTF-16 splits
  across two bytes. A file that begins with a UTF-16 byte order mark (LE or BE) is
  decoded into a UTF-8 copy: its kind, lines and frames are the text's, and sniffing
  notes it (line numbers are the file's; byte offsets count the UTF-8 text). A code unit
  that is no character (a lone surrogate) is kept as bytes that are not valid UTF-8, so
  the readers report it where it is; an odd last byte (a file cut inside a code unit) is
  read as U+FFFD. A copy is made again when the file changes (a recording being written).
- A pipe (`cmd | streamscope inspect /dev/stdin`, `<(cmd)`, a named FIFO) can be read
  only once, while the readers open their input several times (to sniff it, index it,
  read an exchange): its bytes are kept whole in a copy, decoded as above if they are
  UTF-16. It is looked up by `os.stat`, which never blocks, as opening a FIFO again
  would wait for a writer that has gone. A child process (the replay's analysis) cannot
  read it again: it is handed the copy (`piped`, `given`) and reads it in the pipe's name.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import threading
from typing import BinaryIO

# (a UTF-32 LE mark also begins FF FE: it is followed by two NULs, not text)
CODINGS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
NAMES = {"utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}
_BLOCK = 1 << 20

_copies: dict[
    tuple[str, int, int, int, int], tuple[str, str | None]
] = {}  # (path, dev, inode, size, mtime) -> (copy, coding); a pipe's size and mtime: -1
_lock = threading.Lock()
_folder: str | None = None
_given: dict[str, tuple[str, str | None]] = {}  # a parent's pipe: path -> (copy, coding)


def coding_of(head: bytes) -> str | None:
    """The UTF-16 coding a file's first bytes name by their byte order mark, or None."""
    coding = CODINGS.get(head[:2])
    if coding is None or head[2:4] == b"\0\0":
        return None
    return coding


def readable(path: str) -> str:
    """The file to read for `path`: itself, or its copy (a UTF-16 file's, a pipe's)."""
    return text_of(path)[0]


def text_of(path: str) -> tuple[str, str | None]:
    """(the file to read for `path`, the UTF-16 coding it was decoded from, or None)."""
    known = _given.get(path)
    if known is not None:
        return known
    try:
        st = os.stat(path)
        if stat.S_ISFIFO(st.st_mode):
            return _piped(path, st)
        f = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError:
        return path, None  # opening it again says why
    with f:
        coding = coding_of(f.read(4))
        if coding is None:
            return path, None
        st = os.fstat(f.fileno())
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with _lock:
            known = _copies.get(key)
            if known is None:
                for old in [k for k in _copies if k[0] == path]:  # the file has changed:
                    with contextlib.suppress(OSError):  # (a reader may hold it open: POSIX
                        os.unlink(_copies.pop(old)[0])  # keeps it while it does)
                f.seek(2)
                known = _copies[key] = (_copy(f, coding), coding)
        return known


def piped(path: str) -> tuple[str, str | None] | None:
    """A pipe's (copy, coding), the copy made now if it is not yet; None: `path` is no pipe."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _piped(path, st) if stat.S_ISFIFO(st.st_mode) else None


def name_of(path: str) -> str:
    """What a screen calls `path`: a file by its own name; a pipe by its path as given
    (`/dev/fd/63` of a shell's `<(cmd)`, as inspect names it: its own name, `63`, says
    nothing)."""
    with _lock:
        read = path in _given or any(k[0] == path and k[3] == -1 for k in _copies)
    if not read:  # (not read yet, or no pipe)
        with contextlib.suppress(OSError):
            read = stat.S_ISFIFO(os.stat(path).st_mode)
    return path if read else os.path.basename(path)


def given(path: str, copy: str, coding: str | None) -> None:
    """In a child process: `path` is a pipe its parent read whole into `copy` (`piped`)."""
    _given[path] = (copy, coding)


def _piped(path: str, st: os.stat_result) -> tuple[str, str | None]:
    """A pipe's copy, made at its first read (its bytes are read once, to the end)."""
    key = (path, st.st_dev, st.st_ino, -1, -1)  # (a pipe never changes: it is read out)
    with _lock:
        known = _copies.get(key)
        if known is None:
            with open(path, "rb") as f:
                head = f.read(4)  # (blocks for 4 bytes or the end, as a pipe has no seek)
                coding = coding_of(head)
                known = _copies[key] = (_copy(f, coding, head[2:] if coding else head), coding)
    return known


def _copy(f: BinaryIO, coding: str | None, head: bytes = b"") -> str:
    """A copy of `head` (read from `f` already, its byte order mark left off) and the
    rest of `f`: as UTF-8 text decoded from `coding`, or as they are (None)."""
    import atexit  # (here: only a UTF-16 file or a pipe needs them, and they cost every
    import shutil  # start-up)
    import tempfile

    global _folder
    if _folder is None:  # 0700: the copies hold whole conversations
        _folder = tempfile.mkdtemp(prefix="streamscope-copies-")
        atexit.register(shutil.rmtree, _folder, True)
    fd, name = tempfile.mkstemp(suffix=".copy", dir=_folder)
    with open(fd, "wb") as out:
        if coding is None:
            out.write(head)
            shutil.copyfileobj(f, out, _BLOCK)
            return name
        decoder = codecs.getincrementaldecoder(coding)("surrogatepass")
        out.write(decoder.decode(head).encode("utf-8", "surrogatepass"))
        while block := f.read(_BLOCK):
            out.write(decoder.decode(block).encode("utf-8", "surrogatepass"))
        try:
            tail = decoder.decode(b"", final=True)
        except UnicodeDecodeError:  # an odd last byte
            tail = "\ufffd"
        out.write(tail.encode("utf-8", "surrogatepass"))
    return name
