"""scripts/conformance_cards.py: a card says why its cases were not graded, and a cell cut
short says so."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "conformance_cards.py"


def _script():
    spec = importlib.util.spec_from_file_location("conformance_cards", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _grade(case: str, verdict: str, got: str) -> dict:
    return {
        "case": case,
        "sample": f"{case}.sse",
        "verdict": verdict,
        "got": got,
        "calls": [{}],
        "refuse": False,
        "findings": [],
        "sent": None,
        "like": [],
    }


def _result(*grades: dict) -> dict:
    dialect = {"cases": len(grades), "passed": 0, "behaves_like": [], "behaves_like_cases": 0}
    return {"dialects": [{**dialect, "grades": list(grades)}]}


def test_a_card_names_the_reason_its_cases_were_not_graded() -> None:
    custom = "not graded: a custom tool's call, and the client declared no custom tool"
    result = _result(_grade("custom-tool", "skip", custom), _grade("clean", "fail", "no call"))
    lines = _script().section("sdk", "the SDK", "openai 3.63.0", result)
    assert lines[2] == (
        "the SDK (openai 3.63.0): **0 of 1 cases pass** (1 not graded: a custom tool's "
        "call, and the client declared no custom tool); it behaves like none on 0 of 1 cases."
    )


def test_a_long_cell_is_cut_with_an_ellipsis_and_keeps_its_findings() -> None:
    got = '"call_1" "get_weather" {"city": "' + "x" * 200 + '"} (tool-call-id-substituted)'
    lines = _script().section("sdk", "the SDK", "openai 3.63.0", _result(_grade("c", "fail", got)))
    cell = lines[-2].split(" | ")[4]
    assert len(cell) == 140
    assert cell.endswith("x… (tool-call-id-substituted)")
