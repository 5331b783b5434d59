"""How every face shows a severity: its mark and its style (Rich and Textual read the
same style strings). The replay, `inspect`'s report and the docs ask here."""

from __future__ import annotations

from .core.anomalies import ERROR, INFO, WARNING

MARK = {ERROR: "✗", WARNING: "!", INFO: "i"}
STYLE = {ERROR: "bold red", WARNING: "yellow", INFO: "cyan"}


def label(severity: str) -> str:
    """The severity with its mark: "✗ error"."""
    return f"{MARK[severity]} {severity}"


# a count of findings in each severity's word: "info" is no count noun ("5 infos")
_COUNTED = {
    ERROR: ("error", "errors"),
    WARNING: ("warning", "warnings"),
    INFO: ("info finding", "info findings"),
}


def counted(n: int, severity: str) -> str:
    """How many findings of a severity, as every text report counts them: "1 error",
    "2 warnings", "5 info findings"."""
    one, many = _COUNTED[severity]
    return f"{n} {one if n == 1 else many}"


def legend() -> str:
    """Every mark with its severity, most severe first: "✗ error, ! warning, i info"."""
    return ", ".join(map(label, MARK))
