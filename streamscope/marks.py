"""How every face shows a severity: its mark and its style (Rich and Textual read the
same style strings). The replay, `inspect`'s report and the docs ask here."""

from __future__ import annotations

from .core.anomalies import ERROR, INFO, WARNING

MARK = {ERROR: "✗", WARNING: "!", INFO: "i"}
STYLE = {ERROR: "bold red", WARNING: "yellow", INFO: "cyan"}


def label(severity: str) -> str:
    """The severity with its mark: "✗ error"."""
    return f"{MARK[severity]} {severity}"


def legend() -> str:
    """Every mark with its severity, most severe first: "✗ error, ! warning, i info"."""
    return ", ".join(map(label, MARK))
