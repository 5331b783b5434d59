"""A severity's mark is spelled in one module (streamscope/marks.py): every face asks it."""

from __future__ import annotations

from pathlib import Path

from streamscope.marks import MARK, STYLE, label, legend

PACKAGE = Path(__file__).resolve().parents[1] / "streamscope"


def test_no_other_module_spells_a_mark():
    spelled = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "marks.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "✗" in line.split("#", 1)[0]
    ]
    assert spelled == []


def test_every_severity_has_a_mark_and_a_style():
    assert set(MARK) == set(STYLE) == {"error", "warning", "info"}
    assert label("warning") == "! warning"
    assert legend() == "✗ error, ! warning, i info"
