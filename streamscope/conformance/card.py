"""The report card: a table per dialect in text, or the same as JSON."""

from __future__ import annotations

import textwrap
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
    shown = [f"`{n}`" for n in known[:3]]
    if len(known) > 3:
        shown.append(f"{len(known) - 3} others")
    said = ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else shown[0]
    if best == total:
        return f"your client behaves like {said} (on every case)"
    return f"it behaves most like {said} ({best} of {total} cases)"


def text(grades: Sequence[Grade], width: int = 100) -> str:
    """The card as a person reads it: per dialect a summary line and a table, then each
    failure whole: what was expected, what the client sent, why, the link to replay.
    No line is longer than `width` but the long ones a failure's detail wraps."""
    width = max(width, 60) - 1  # (a line as wide as the terminal wraps in some)
    out: list[str] = []
    for name, group in _by_dialect(grades):
        out += textwrap.wrap(f"{title(name)}: {summary(group)}; {builds_like(group)}", width)
        out.append("")
        rows = [("", "case", "sample", "expected", "sent back", "behaves like")]
        for g in group:
            want, did = g.brief()
            like = ", ".join(g.like) or "none"
            rows.append((MARKS[g.verdict], g.case.name, g.case.sample_name, want, did, like))
        want_w = max(len(r[3]) for r in rows)
        # case, sample, sent back, behaves like: as wide as they are, narrowed (the
        # widest first, none under its least) to fit beside the fixed ones
        kind_w, sample_w, did_w, like_w = _fit(
            [min(26, max(len(r[i]) for r in rows)) for i in (1, 2)]
            + [min(48, max(len(r[i]) for r in rows)) for i in (4, 5)],
            [18, 10, 13, 10],
            width - 2 - 4 - want_w - 2 * 5,
        )
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


def _fit(widths: list[int], least: list[int], room: int) -> list[int]:
    """`widths` narrowed one by one, the widest above its least first, to sum to at
    most `room` (then under the leasts, to 5, where even those do not fit)."""
    widths = list(widths)
    for floor in (least, [5] * len(least)):  # (a narrow terminal: under the leasts too)
        while sum(widths) > room:
            wide = [i for i, (w, m) in enumerate(zip(widths, floor, strict=True)) if w > m]
            if not wide:
                break
            widths[max(wide, key=lambda i: widths[i])] -= 1
    return widths


_INDENT = " " * 18  # under a failure's "       sent back  "


def _failure(g: Grade, width: int) -> list[str]:
    lines = [f"  FAIL {visible(g.case.id)}"]

    def field(label: str, value: str) -> None:
        head = f"       {label:<9}  "
        wrapped = textwrap.wrap(
            visible(value), width, initial_indent=head, subsequent_indent=_INDENT
        )
        lines.extend(wrapped or [head.rstrip()])

    field("expected", g.expected)
    field("sent back", g.got)
    if g.findings:
        f = g.findings[0]
        more = f" (and {len(g.findings) - 1} more)" if len(g.findings) > 1 else ""
        field("why", f.message + more)
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
