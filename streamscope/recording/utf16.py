"""UTF-16 inputs (what Windows tools write, PowerShell's `>` among them) read as UTF-8.

Every reader works on bytes and finds lines by their b"\\n", which UTF-16 splits across
two bytes. A file that begins with a UTF-16 byte order mark (LE or BE) is decoded once
into a UTF-8 copy (in a private temporary folder, removed at exit), and every reader opens
that copy instead (`readable`): its kind, lines and frames are the text's, and sniffing
notes it (line numbers are the file's; byte offsets count the UTF-8 text). A code unit
that is no character (a lone surrogate) is kept as bytes that are not valid UTF-8, so the
readers report it where it is; an odd last byte (a file cut inside a code unit) is read as
U+FFFD. A copy is made again when the file changes (a recording being written).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import threading
from typing import BinaryIO

# (a UTF-32 LE mark also begins FF FE: it is followed by two NULs, not text)
CODINGS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
NAMES = {"utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}
_BLOCK = 1 << 20

_copies: dict[
    tuple[str, int, int, int, int], tuple[str, str]
] = {}  # (path, dev, inode, size, mtime) -> (copy, coding)
_lock = threading.Lock()
_folder: str | None = None


def coding_of(head: bytes) -> str | None:
    """The UTF-16 coding a file's first bytes name by their byte order mark, or None."""
    coding = CODINGS.get(head[:2])
    if coding is None or head[2:4] == b"\0\0":
        return None
    return coding


def readable(path: str) -> str:
    """The file to read for `path`: itself, or the UTF-8 copy of a UTF-16 file."""
    return text_of(path)[0]


def text_of(path: str) -> tuple[str, str | None]:
    """(the file to read for `path`, the UTF-16 coding it was decoded from, or None)."""
    try:
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
                known = _copies[key] = (_copy(f, coding), coding)
        return known


def _copy(f: BinaryIO, coding: str) -> str:
    """A UTF-8 copy of the UTF-16 text after the byte order mark."""
    import atexit  # (here: only a UTF-16 file needs them, and they cost every start-up)
    import shutil
    import tempfile

    global _folder
    if _folder is None:  # 0700: the copies hold whole conversations
        _folder = tempfile.mkdtemp(prefix="streamscope-utf16-")
        atexit.register(shutil.rmtree, _folder, True)
    fd, name = tempfile.mkstemp(suffix=".utf8", dir=_folder)
    decoder = codecs.getincrementaldecoder(coding)("surrogatepass")
    f.seek(2)
    with open(fd, "wb") as out:
        while block := f.read(_BLOCK):
            out.write(decoder.decode(block).encode("utf-8", "surrogatepass"))
        try:
            tail = decoder.decode(b"", final=True)
        except UnicodeDecodeError:  # an odd last byte
            tail = "\ufffd"
        out.write(tail.encode("utf-8", "surrogatepass"))
    return name
