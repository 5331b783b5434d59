"""Text for people on a terminal: `[bold]…[/]` markup written with ANSI styles to a
terminal and plain to a pipe, and a borderless table that folds its cells to the width.

`inspect`'s text report prints through this, not Rich: Rich's import alone was an eighth of
the command's wait (14 ms of 125), and the report needs five styles and one table.
Markup is the report's own: a tag is one of `STYLES`' words (several: "bold red") or
`/`, which ends the latest; `escape` makes any text literal, so recorded text (already
made visible: no control character) can never style or break a line.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Sequence
from typing import TextIO

# each style's SGR parameter (marks.STYLE's strings are made of these words)
STYLES = {"bold": "1", "dim": "2", "red": "31", "yellow": "33", "cyan": "36"}
RESET = "\x1b[0m"
# (left to right: an escaped backslash, an escaped bracket, a tag)
_MARKUP = re.compile(r"\\\\|\\\[|\[(/|[a-z]+(?: [a-z]+)*)\]")


def escape(text: str) -> str:
    """`text` read back as it is from markup, whatever brackets and backslashes it holds."""
    return text.replace("\\", "\\\\").replace("[", "\\[")


def render(markup: str, color: bool) -> str:
    """`markup` as a line to write: its tags as ANSI styles (`color`) or gone, its escapes
    undone; a tag of words that are not styles is text."""
    if "[" not in markup and "\\" not in markup:
        return markup
    stack: list[str] = []

    def tag(m: re.Match[str]) -> str:
        token = m.group()
        if token == "\\\\":
            return "\\"
        if token == "\\[":
            return "["
        name = m.group(1)
        if name == "/" and stack:
            stack.pop()
        elif name != "/" and all(w in STYLES for w in name.split()):
            stack.append(_sgr(name))
        else:
            return token
        return RESET + "".join(f"\x1b[{s}m" for s in stack) if color else ""

    line = _MARKUP.sub(tag, markup)
    return line + RESET if color and stack else line


def _sgr(style: str) -> str:
    """A style's words ("bold red") as one SGR parameter list ("1;31")."""
    return ";".join(STYLES[w] for w in style.split())


def cell_len(text: str) -> int:
    """How many terminal columns `text` takes: wide (East Asian) characters two, combining
    and format characters none."""
    if text.isascii():
        return len(text)
    return sum(_cells(c) for c in text)


def pad(text: str, width: int) -> str:
    """`text` with spaces after it to fill `width` terminal columns (cell_len)."""
    return text + " " * (width - cell_len(text))


def _cells(c: str) -> int:
    if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def fold(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` columns, broken after spaces where it can be, a
    word wider than a line cut (a wide character too wide for a line still gets one)."""
    lines: list[str] = []
    line = ""
    for word in _WORDS.findall(text):
        if cell_len(line + word.rstrip(" ")) <= width:
            line += word
            continue
        if line:
            lines.append(line.rstrip(" "))
        while cell_len(word.rstrip(" ")) > width:
            piece, word = _cut(word, width)
            lines.append(piece)
        line = word
    return [*lines, line.rstrip(" ")] if line or not lines else lines


_WORDS = re.compile(r"[^ ]* *")  # each word with the spaces after it (and one last "")


def _cut(word: str, width: int) -> tuple[str, str]:
    """The first `width` columns of `word` (one character at least), and the rest."""
    used = 0
    for i, c in enumerate(word):
        used += _cells(c) if not c.isascii() else 1
        if used > width:
            return word[: max(i, 1)], word[max(i, 1) :]
    return word, ""


def widths_within(natural: Sequence[int], room: int) -> list[int]:
    """Column widths within `room`: each column capped at the widest width that fits
    them all (at least 1), so the widest columns narrow and short ones stay whole; what
    room the cap leaves goes to the capped columns."""
    lo, hi = 1, max(natural)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(w, mid) for w in natural) <= room:
            lo = mid
        else:
            hi = mid - 1
    widths = [min(w, lo) for w in natural]
    spare = room - sum(widths)  # (less than one a capped column: handed out left to right)
    for i, w in enumerate(natural):
        if spare > 0 and w > lo:
            widths[i] += 1
            spare -= 1
    return widths


def _color_wanted(terminal: bool) -> bool:
    """Colour on a terminal, as the common variables say: NO_COLOR (any value) turns it
    off, FORCE_COLOR on even in a pipe, TERM=dumb off."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return terminal and os.environ.get("TERM") != "dumb"


def _columns(file: TextIO) -> int:
    """The terminal's width (COLUMNS first, as shells set it), else 80."""
    try:
        return max(1, int(os.environ["COLUMNS"]))
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(file.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class Console:
    """Lines of markup written to `file` (standard output): styled where it is a terminal
    (or `color` says so), `width` columns wide (default: the terminal's)."""

    def __init__(
        self, file: TextIO | None = None, width: int | None = None, color: bool | None = None
    ) -> None:
        self.file = file if file is not None else sys.stdout
        try:
            self.is_terminal = self.file.isatty()
        except (AttributeError, ValueError):
            self.is_terminal = False
        self.color = _color_wanted(self.is_terminal) if color is None else color
        self.width = width if width is not None else _columns(self.file)

    def print(self, markup: str = "") -> None:
        self.file.write(render(markup, self.color) + "\n")

    def style(self, text: str, style: str) -> str:
        """Plain `text` (no markup read in it) in `style`, as written to this console."""
        if not self.color:
            return text
        return f"\x1b[{_sgr(style)}m{text}{RESET}"

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[str]], fold_rows: int) -> None:
        """Plain `rows` under bold `columns`, a space each side of every cell, each column
        as wide as its widest cell. Wider than the console, cells fold to fit, but for more
        rows than `fold_rows`: those are written a row a line, the terminal wrapping them
        (a reader of thousands of rows wants them whole, one to a line)."""
        natural = [max(map(cell_len, cells)) for cells in zip(columns, *rows, strict=True)]
        room = self.width - 2 * len(natural)
        widths = natural
        if sum(natural) > room and len(rows) <= fold_rows:
            widths = widths_within(natural, max(room, len(natural)))
        out = []
        for n, cells in enumerate((columns, *rows)):
            parts = [
                fold(c, w) if cell_len(c) > w else [c] for c, w in zip(cells, widths, strict=True)
            ]
            for k in range(max(map(len, parts))):
                line = "".join(
                    f" {pad(p, w)} "
                    for p, w in (
                        (p[k] if k < len(p) else "", w) for p, w in zip(parts, widths, strict=True)
                    )
                ).rstrip()
                out.append(self.style(line, "bold") if n == 0 else line)
        self.file.write("\n".join(out) + "\n")
