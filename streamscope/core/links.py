"""Links to an exchange, a session's response and a frame: `FILE#N`, `FILE#N.R`,
`FILE#N@F`, `FILE#N.R@F`. One home for how a link is written and read: inspect and scan
print them beside each finding, every face that takes a FILE reads them."""

from __future__ import annotations

import os
import re

from ..text import CONTROL
from .record import record

_PLAIN = re.compile(r"[\w@%+=:,./-][\w@%+=:,./#-]*")  # needs no quotes in a shell
_TAIL = re.compile(r"([0-9]+)(?:\.([0-9]+))?(?:@([0-9]+))?")
SHAPES = "FILE#N, FILE#N@F, FILE#N.R or FILE#N.R@F"


class LinkError(ValueError):
    """A link whose file exists but whose #... names nothing a link can name."""


@record(frozen=True, slots=True)
class Link:
    file: str
    exchange: int
    response: int | None = None  # of the WebSocket session exchange N is
    frame: int | None = None  # 1-based, as the contract numbers frames


def link(file: str, exchange: int, frame: int | None = None, response: int | None = None) -> str:
    """The link to exchange `exchange` of `file` (its response `response`, its frame
    `frame`: None or 0 leaves it out, a frame 0 being no frame)."""
    out = f"{file}#{exchange}"
    if response is not None:
        out += f".{response}"
    if frame:
        out += f"@{frame}"
    return out


def pasteable(link_text: str) -> str:
    """A link as a terminal shows it (inspect, scan): shell-quoted, so it can be pasted
    into `streamscope replay` whatever the file's name (a space, `$`, a quote), and
    safe: a control character is written as an escape inside `$'...'`, never raw.
    JSON keeps the link as it is."""
    if _PLAIN.fullmatch(link_text):
        return link_text
    if CONTROL.search(link_text) is None:
        return "'" + link_text.replace("'", "'\"'\"'") + "'"
    out = link_text.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + CONTROL.sub(_escape, out) + "'"


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
        code -= 0xDC00  # as `$'\\xff'`: the shell gives the byte back
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def stream_link(file: str, exchange: int, turn: int | None, frame: int, frames: int) -> str:
    """A finding's link: to its frame when the stream has that frame, else to its
    exchange (a finding said of the stream as a whole, past its last frame)."""
    return link(file, exchange, frame if 1 <= frame <= frames else None, turn)


def parse(text: str) -> Link | None:
    """`text` as a link, None when it is a file's own name (a real file whose name holds
    `#` wins) or names no file that exists. Raises LinkError when the file exists and
    what follows `#` is no link, or numbers something from 0."""
    if os.path.exists(text):
        return None
    base, sep, tail = text.rpartition("#")
    if not sep or not base or not os.path.exists(base):
        return None
    m = _TAIL.fullmatch(tail)
    if m is None:
        raise LinkError(f"{text}: #{tail} is no link ({SHAPES}, numbered from 1)")
    exchange, response, frame = (int(g) if g is not None else None for g in m.groups())
    assert exchange is not None
    if exchange < 1:
        raise LinkError(f"{text}: exchanges are numbered from 1")
    if response is not None and response < 1:
        raise LinkError(f"{text}: a session's responses are numbered from 1")
    if frame is not None:
        check_frame(frame, text)
    return Link(base, exchange, response, frame)


def check_frame(frame: int, where: str) -> None:
    """The one rule for a frame number, a link's `@F` and an option's alike: frames
    are numbered from 1. Raises LinkError, said of `where`."""
    if frame < 1:
        raise LinkError(f"{where}: frames are numbered from 1")
