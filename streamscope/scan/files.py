"""Which files a scan reads: PATHs as folders (walked, links followed once), globs and
files; every path that cannot be walked is one line, never the end of the scan.

A glob is matched against the same walk (one home for its rules: links to folders
followed once each, dot files left out), so a link loop under it costs one line, not
the minutes `glob.glob(recursive=True)` spends following it round."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import field

from ..core.record import record

GLOB_CHARS = frozenset("*?[")


@record(slots=True)
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
            found.problems.append((path, not_regular(path)))
            found.missing.append(path)
        elif GLOB_CHARS & set(path):
            if not _glob(path, add, found):
                found.problems.append((path, "matches no file"))
                found.missing.append(path)
        else:
            found.problems.append((path, "no such file or folder"))
            found.missing.append(path)
    found.problems = list(dict.fromkeys(found.problems))  # a folder two PATHs walk: once
    return found


def not_regular(path: str) -> str:
    """Why a path that exists is no file the scan reads, in what it is."""
    try:
        mode = os.stat(path).st_mode  # through a link, to what it names
    except FileNotFoundError:  # the path exists (lexists): a link to nowhere
        return "a symbolic link to nothing (broken link)"
    except OSError as e:
        return e.strerror or str(e)
    what = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFSOCK: "a socket"}
    kind = what.get(stat.S_IFMT(mode), "a device")
    return f"not a regular file: {kind}, which a scan does not read"


def _walk(top: str, add: Callable[[str], None], found: Found) -> None:
    """Every regular file below `top` (see `_below`)."""
    count = 0
    for path in _below(top, found):
        add(path)
        count += 1
    if count == 0:
        found.problems.append((top, "no files in this folder"))


def _below(
    top: str,
    found: Found,
    wanted: Callable[[str], bool] = lambda path: True,
    descend: Callable[[str], bool] = lambda folder: True,
) -> Iterator[str]:
    """Every regular file below `top`, sorted, following links to folders once each (a
    link back up the tree is one line, then skipped); dot files and folders are left
    out. Bounded by the real folders below `top`, whatever the links. `wanted`: whether a
    path that is no regular file is said (a glob says only those it matches); `descend`:
    whether a folder is walked into (a glob without `**` goes no deeper than it names)."""
    visited: set[tuple[int, int]] = set()

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
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and descend(os.path.join(folder, d))
        )
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                yield path
            elif wanted(path):
                found.problems.append((path, not_regular(path)))


def _glob(pattern: str, add: Callable[[str], None], found: Found) -> int:
    """The files a glob names (`*`, `?`, `[...]` within a name, `**` any folders), found
    by walking the folder its literal part names: a file matches when its path, or the
    path of a folder it is under, matches the pattern (as a folder the shell names).
    The number of files that match."""
    parts = pattern.split(os.sep)
    fixed = 0
    while fixed < len(parts) - 1 and not GLOB_CHARS & set(parts[fixed]):
        fixed += 1
    base = os.sep.join(parts[:fixed]) or (os.sep if fixed else "")
    matches = _matcher(parts[fixed:])
    top = base or os.curdir
    if not os.path.isdir(top):
        return 0

    def shown(path: str) -> str:
        return path if base else os.path.relpath(path, os.curdir)

    def matched(path: str) -> bool:
        steps = (os.path.relpath(path, base) if base else path).split(os.sep)
        return any(matches(os.sep.join(steps[: i + 1])) for i in range(len(steps)))

    def descend(folder: str) -> bool:
        rel = shown(folder)
        depth = len((os.path.relpath(rel, base) if base else rel).split(os.sep))
        return "**" in parts[fixed:] or depth < len(parts) - fixed or matched(rel)

    count = 0
    for path in _below(top, found, lambda p: matched(shown(p)), descend):
        if matched(shown(path)):
            add(shown(path))
            count += 1
    return count


def _matcher(parts: list[str]) -> Callable[[str], bool]:
    """The glob's parts after its literal folder as a test of a relative path."""
    sep = re.escape(os.sep)
    regex = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            regex += ".*" if last else f"(?:[^{sep}]+{sep})*"
            continue
        regex += _name(part, sep) + ("" if last else sep)
    return re.compile(regex, re.DOTALL).fullmatch  # type: ignore[return-value]


def _name(part: str, sep: str) -> str:
    """One name of a glob as a regex (fnmatch's rules, never crossing a folder)."""
    out, i = "", 0
    while i < len(part):
        c = part[i]
        i += 1
        if c == "*":
            out += f"[^{sep}]*"
        elif c == "?":
            out += f"[^{sep}]"
        elif c == "[":
            end = part.find("]", i + 1 if part[i : i + 1] in ("!", "]") else i)
            if end < 0:
                out += re.escape(c)
                continue
            inner = part[i:end]
            i = end + 1
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out += "[" + inner.replace("\\", "\\\\") + "]"
        else:
            out += re.escape(c)
    return out
