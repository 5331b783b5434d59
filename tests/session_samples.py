"""Recordings that hold a WebSocket session beside other exchanges, for the replay's
tests and screenshots (scripts/screenshots.py): Codex's two turns (tests/ws_session.py)
after an ordinary HTTP stream, as one recording."""

from __future__ import annotations

from pathlib import Path

import orjson

from .ws_session import codex_turns, write_session

ROOT = Path(__file__).resolve().parent.parent
HTTP_SAMPLE = ROOT / "recordings" / "openai.jsonl"  # one Chat Completions stream


def with_http_first(path: Path, session: Path) -> Path:
    """`path`: the HTTP sample's exchange(s), then the session of recording `session` as
    the next exchange (its lines renumbered, its times after the sample's)."""
    head, *http = HTTP_SAMPLE.read_bytes().splitlines()
    header = orjson.loads(head)
    header["schema_version"] = 2  # (a v1 file read as v2: nothing else changes)
    lines = [orjson.loads(line) for line in http]
    last = max(d["exchange"] for d in lines)
    after = max(d["t_ns"] for d in lines)
    for line in session.read_bytes().splitlines()[1:]:
        d = orjson.loads(line)
        d["exchange"] = last + 1
        d["t_ns"] += after
        lines.append(d)
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in [header, *lines]))
    return path


def codex_after_http(folder: Path, answer_call: bool = True) -> Path:
    """A recording: exchange 1 an HTTP stream, exchange 2 Codex's session of two turns
    (the second answering the first's call, or not: a contract break)."""
    session = write_session(folder / "session-only.jsonl", codex_turns(answer_call))
    return with_http_first(folder / "codex-session.jsonl", session)
