"""Files and folders only their owner can read: recordings hold whole conversations,
requests and (masked) headers, so they are created 0600 and their folders 0700 whatever
the umask (which can only take bits away, never make a file private)."""

from __future__ import annotations

import contextlib
import os
import stat

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folders(folder: str | os.PathLike[str]) -> list[str]:
    """Create `folder` and its missing parents 0700 (os.makedirs gives parents the umask's
    mode); folders that already exist are left as they are. Returns those it made,
    outermost first."""
    folder = os.path.abspath(os.fspath(folder))
    missing = []
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    made = []
    for path in reversed(missing):
        try:
            os.mkdir(path, FOLDER_MODE)
        except FileExistsError:  # made meanwhile by another process: theirs to keep
            continue
        os.chmod(path, FOLDER_MODE)  # the umask may have taken bits from the owner too
        made.append(path)
    return made


def private_folders_of(path: str | os.PathLike[str]) -> None:
    """The folders a file at `path` needs, created 0700 when missing."""
    private_folders(os.path.dirname(os.path.abspath(os.fspath(path))))


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """os.open with O_CREAT, the file 0600 whatever the umask. A regular file is made 0600
    even when it was there already (it is about to hold a recording); a device such as
    /dev/null or /dev/full is left alone."""
    fd = os.open(path, flags | os.O_CREAT, FILE_MODE)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            with contextlib.suppress(PermissionError):  # not ours: its owner decides
                os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` (replaced), the file 0600."""
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_private_whole(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` whole or not at all: into a 0600 file beside it, then
    renamed over it, so a failure (a full disk) leaves no half-written file and what
    was there stays. A path that is no regular file (/dev/stdout, a pipe) is written
    as it is."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isfile(path):
        write_private(path, data)
        return
    folder, name = os.path.split(os.path.abspath(path))
    temp = os.path.join(folder, f".{name}.{os.getpid()}.part")
    try:
        fd = open_private(temp, os.O_WRONLY | os.O_EXCL | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
