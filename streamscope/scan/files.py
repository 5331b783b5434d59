"""Which files a scan reads: PATHs as folders (walked, links followed once), globs and
files; every path that cannot be walked is one line, never the end of the scan."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

GLOB_CHARS = frozenset("*?[")


@dataclass(slots=True)
class Found:
    files: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    named: set[str] = field(default_factory=set)  # files named themselves on the command line
    missing: list[str] = field(default_factory=list)  # PATHs naming nothing there is to read


def find_files(paths: list[str], exclude: set[str] | None = None) -> Found:
    """The files under `paths`, sorted within each, each once (`exclude`: real paths to
    leave out, such as the scan's own database)."""
    found = Found()
    seen: set[str] = set(exclude or ())

    def add(path: str) -> None:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            found.files.append(path)

    def take(path: str) -> bool:
        """A folder walked or a file added; False when `path` is neither."""
        if os.path.isdir(path):
            _walk(path, add, found)
        elif os.path.isfile(path):
            add(path)
        else:
            return False
        return True

    for path in paths:
        if take(path):
            if os.path.isfile(path):
                found.named.add(path)
        elif os.path.lexists(path):  # a link to nowhere, a socket, a FIFO
            found.problems.append((path, "not a regular file (a broken link?)"))
            found.missing.append(path)
        elif GLOB_CHARS & set(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                found.problems.append((path, "matches no file"))
                found.missing.append(path)
            for match in matches:
                take(match)
        else:
            found.problems.append((path, "no such file or folder"))
            found.missing.append(path)
    return found


def _walk(top: str, add, found: Found) -> None:
    """Every regular file below `top`, following links to folders once each (a link back
    up the tree is one line, then skipped); dot files and folders are left out."""
    visited: set[tuple[int, int]] = set()
    count = 0

    def onerror(e: OSError) -> None:
        found.problems.append((e.filename or top, e.strerror or str(e)))

    for folder, dirs, names in os.walk(top, followlinks=True, onerror=onerror):
        try:
            st = os.stat(folder)
        except OSError as e:
            found.problems.append((folder, e.strerror or str(e)))
            dirs[:] = []
            continue
        key = (st.st_dev, st.st_ino)
        if key in visited:
            found.problems.append((folder, "a symbolic link loop: read once, skipped here"))
            dirs[:] = []
            continue
        visited.add(key)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                add(path)
                count += 1
            else:
                found.problems.append((path, "not a regular file (a broken link?)"))
    if count == 0:
        found.problems.append((top, "no files in this folder"))
