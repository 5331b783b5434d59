"""Which of the three inputs a file is, by its content (never by its name)."""

from __future__ import annotations

import os

import orjson

from ..recording.format import RecordingError

RECORDING, SSE, CHUNKS = "recording", "sse", "chunks"
_SSE_FIELDS = (b"data", b"event", b"id", b"retry")
_HEAD = 1 << 16


def _error(
    path: str, what: str, line: int | None = None, offset: int | None = None
) -> RecordingError:
    where = []
    if line is not None:
        where.append(f"line {line}")
    if offset is not None:
        where.append(f"byte {offset}" if line is None else f"(byte {offset})")
    at = f" {' '.join(where)}:" if where else ""
    return RecordingError(f"{path}:{at} {what}", path, line, offset)


def sniff(path: str | os.PathLike[str]) -> str:
    """ "recording", "sse" or "chunks"; RecordingError (one line, with a position) otherwise."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            head = f.read(_HEAD)
    except FileNotFoundError:
        raise _error(name, "no such file") from None
    except IsADirectoryError:
        raise _error(name, "is a directory, not a file") from None
    except OSError as e:
        raise _error(name, e.strerror or str(e)) from None
    if not head.strip():
        raise _error(name, "the file is empty", offset=0)
    nul = head.find(b"\x00")
    if nul >= 0:
        raise _error(name, "binary data (a NUL byte), not text", offset=nul)
    start = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    # the first non-blank line decides
    pos = start
    while pos < len(head) and head[pos : pos + 1] in b"\r\n \t":
        pos += 1
    end = min(
        (i for i in (head.find(b"\n", pos), head.find(b"\r", pos)) if i >= 0), default=len(head)
    )
    first = head[pos:end]
    line_no = head.count(b"\n", 0, pos) + 1
    try:
        first.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _error(name, "binary data (not UTF-8 text)", line_no, pos + e.start) from None
    if first.startswith(b":") or first.split(b":", 1)[0].strip() in _SSE_FIELDS:
        return SSE
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        if "schema_version" in obj:
            return RECORDING
        choices = obj.get("choices")
        if (
            isinstance(choices, list)
            and choices
            and isinstance(choices[0], dict)
            and "message" in choices[0]
        ):
            raise _error(
                name,
                "a whole chat.completion response (choices[].message), not a stream; "
                "streamscope reads streamed chunks",
                line_no,
                pos,
            )
        if "choices" in obj or obj.get("object") == "chat.completion.chunk":
            return CHUNKS
    shown = first[:30].decode("utf-8", "replace")
    raise _error(
        name,
        f"not a streamscope recording, an SSE body or chat.completion.chunk JSON lines "
        f"(it begins {shown!r})",
        line_no,
        pos,
    )
