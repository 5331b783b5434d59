"""What `--strict` fails on: the one rule `inspect` and `scan` both ask.

A run fails when it finds any error or warning (a stream's anomaly or a contract
finding) or an exchange that is not a stream failed. Info findings never fail it, nor
does what only follows from the client closing a stream early (`cut_by_client`: the
engine lowers those to warnings and marks them).
"""

from __future__ import annotations

from .anomalies import INFO


def fails(severity: str, cut_by_client: bool = False) -> bool:
    """Whether one finding fails `--strict`."""
    return severity != INFO and not cut_by_client


def exchange_failure(stream: bool, status: int | None, ended: str | None) -> str | None:
    """Why an exchange that is not a stream failed, in a few words (None: it did not;
    a stream says it itself, in its anomalies). Any failure fails `--strict`.
    `ended` is the end line's reason (None: the recording has no end line for it)."""
    if stream:
        return None
    if status is not None and status >= 400:
        return f"HTTP {status}"
    if ended == "complete" or (ended is None and status is None):
        return None  # a whole answer, or a request never answered (no response line)
    if ended is None:
        return "the recording stops before this exchange ended"
    return f"ended {ended}"
