"""The report card: a table per dialect in text, or the same as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from ..core.links import pasteable
from ..dialects import DIALECTS
from ..recording.mask import mask_argv
from ..text import cut, visible
from .grade import FAIL, PASS, SKIP, Grade, behaves_like, passed, summary

SCHEMA = 1
MARKS = {PASS: "pass", FAIL: "FAIL", SKIP: "skip"}  # a failure stands out


def title(name: str) -> str:
    found = DIALECTS.get(name)
    return found.title if found is not None else name


def _by_dialect(grades: Sequence[Grade]) -> list[tuple[str, list[Grade]]]:
    return [(d, list(g)) for d, g in groupby(grades, key=lambda g: g.case.dialect)]


def builds_like(grades: Sequence[Grade]) -> str:
    """`your client behaves like `naive` (on every case)`, or the closest."""
    names, best, total = behaves_like(grades)
    if not names:
        return "it behaved like no known client on any case"
    known = [n for n in names if n != "robust"] or names
    said = " and ".join(f"`{n}`" for n in known)
    if best == total:
        return f"your client behaves like {said} (on every case)"
    return f"closest: {said} ({best} of {total} cases)"


def text(grades: Sequence[Grade], width: int = 100) -> str:
    """The card as a person reads it: per dialect a summary line and a table, then each
    failure whole: what was expected, what the client sent, why, the link to replay."""
    width = max(width, 60)
    out: list[str] = []
    for name, group in _by_dialect(grades):
        out.append(f"{title(name)}: {summary(group)}; {builds_like(group)}")
        out.append("")
        kind_w = min(26, max(len(g.case.name) for g in group))
        sample_w = min(24, max(len(g.case.sample_name) for g in group))
        rows = [("", "case", "sample", "expected", "sent back", "behaves like")]
        for g in group:
            want, did = g.brief()
            mark = MARKS[g.verdict]
            rows.append(
                (mark, g.case.name, g.case.sample_name, want, did, ", ".join(g.like) or "none")
            )
        want_w = max(len(r[3]) for r in rows)
        fixed = 2 + 4 + 2 + kind_w + 2 + sample_w + 2 + want_w + 2
        rest = max(20, width - fixed)
        did_w = min(max(len(r[4]) for r in rows), max(12, rest * 3 // 5))
        like_w = max(8, rest - did_w - 2)
        for mark, kind, sample, want, did, like in rows:
            cells = (
                f"{mark:4}",
                f"{cut(visible(kind), kind_w):{kind_w}}",
                f"{cut(visible(sample), sample_w):{sample_w}}",
                f"{want:{want_w}}",
                f"{cut(visible(did), did_w):{did_w}}",
                cut(like, like_w),
            )
            out.append(("  " + "  ".join(cells)).rstrip())
        for g in group:
            if g.verdict == FAIL:
                out += [""] + _failure(g, width)
        out.append("")
    return "\n".join(out).rstrip("\n")


def _failure(g: Grade, width: int) -> list[str]:
    w = max(20, width - 17)
    lines = [
        f"  FAIL {visible(g.case.id)}",
        f"       expected   {cut(visible(g.expected), w)}",
        f"       sent back  {cut(visible(g.got), w)}",
    ]
    if g.findings:
        f = g.findings[0]
        more = f" (and {len(g.findings) - 1} more)" if len(g.findings) > 1 else ""
        lines.append(f"       why        {cut(visible(f.message + more), w * 2)}")
    if g.link is not None:
        lines.append(f"       replay     {pasteable(g.link)}")
    return lines


def to_json(grades: Sequence[Grade], command: Sequence[str], recordings: str) -> dict[str, object]:
    shown, _ = mask_argv(list(command))
    dialects = []
    for name, group in _by_dialect(grades):
        names, best, total = behaves_like(group)
        dialects.append(
            {
                "dialect": name,
                "cases": len(group),
                "passed": sum(g.verdict == PASS for g in group),
                "behaves_like": names,
                "behaves_like_cases": best,
                "grades": [g.to_json() for g in group],
            }
        )
    return {
        "schema": SCHEMA,
        "command": shown,
        "recordings": recordings,
        "passed": passed(grades),
        "dialects": dialects,
    }
