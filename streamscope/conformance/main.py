"""`streamscope conformance`: choose the cases, run them, print the card, exit 0 only
when every case passes."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

import orjson

from ..core.links import pasteable
from ..record.runner import cannot_run
from ..recording.mask import mask_argv
from ..text import plural, say, visible
from .card import MARKS, text, title, to_json
from .cases import Case, cases, samples_folder, select
from .grade import NO_REQUEST, Grade, expected, passed
from .run import Children, Plan, conform, run_loop


class Refused(Exception):
    """Bad usage: one line, exit status 2."""


def default_output() -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(os.getcwd(), "recordings", f"conformance-{stamp}")
    n = 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(os.getcwd(), "recordings", f"conformance-{stamp}-{n}")
    return path


def listing(chosen: Sequence[Case], skipped: Sequence[str]) -> str:
    out = []
    for c in chosen:
        out.append(f"{c.dialect}  {c.id}")
        out.append(f"    expected: {expected(c)}")
        if c.kinds:
            out.append(f"    kinds: {', '.join(c.kinds)}")
        if c.reference:
            out.append(f"    stands for: {c.reference}")
    for why in skipped:
        out.append(f"not a case: {why}")
    return "\n".join(out)


def chosen_cases(dialects: Sequence[str], only: Sequence[str]) -> tuple[list[Case], list[str]]:
    folder = samples_folder()
    if folder is None:
        raise Refused("the bundled sample recordings are missing from this installation")
    every, skipped = cases(folder)
    have = list(dict.fromkeys(c.dialect for c in every))
    for d in dialects:
        if d not in have:
            raise Refused(f"--dialect {d!r}: no cases; the dialects with cases: {', '.join(have)}")
    got = select(every, dialects, only)
    if not got:
        names = sorted({k for c in every for k in c.kinds} | {c.name for c in every})
        raise Refused(
            f"--only {', '.join(only)}: no case has that kind or sample; the kinds: {', '.join(names)}"
        )
    return got, skipped


def run(
    command: list[str],
    dialects: Sequence[str],
    only: Sequence[str],
    as_json: bool,
    timeout: float,
    speed: float,
    jobs: int,
    output: str | None,
    loop: bool = False,
) -> int:
    chosen, _ = chosen_cases(dialects, only)
    if loop and len({c.dialect for c in chosen}) > 1:
        raise Refused("--loop serves one dialect's cases one after another: name it with --dialect")
    problem = cannot_run(command)
    if problem is not None:
        say(problem[1])
        return problem[0]
    out = output or default_output()
    folder = samples_folder()
    assert folder is not None
    one_dialect = len({c.dialect for c in chosen}) == 1
    total = len(chosen)

    shown = visible(" ".join(mask_argv(command)[0]))
    seen: list[str] = []

    def each(g: Grade) -> None:
        if not one_dialect and not seen:
            mine = sum(c.dialect == g.case.dialect for c in chosen)
            say(f"it asks the {title(g.case.dialect)} API: {plural(mine, 'case')}")
        seen.append(g.case.dialect)
        mark = MARKS[g.verdict]
        took = f" ({g.ran.seconds:.1f} s)" if g.ran is not None else ""
        say(f"{mark} {g.case.id}{took}")

    children = Children()
    if one_dialect:
        say(
            f"{plural(total, 'case')} of {title(chosen[0].dialect)}, each served to {shown}; recordings in {out}"
        )
    else:
        say(
            f"serving {shown} each dialect's first case, to see which API it asks; recordings in {out}"
        )

    def stop(signum: int, _frame: object) -> None:
        children.stop_all()
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        plan = Plan(command, folder, out, timeout, speed, jobs, each, children)
        if loop:
            grades, found = run_loop(chosen, plan), None
        else:
            grades, found = conform(chosen, plan, not one_dialect)
    except KeyboardInterrupt:
        children.stop_all()
        say("stopped: no card (the recordings made so far are kept)")
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if grades == [] and found is not None:
        say(f"the client asks the {title(found)} API, for which no case was chosen")
        return 2
    if not any(not g.got.startswith(NO_REQUEST) for g in grades):
        say(
            "the client sent no request to the provider streamscope served: does it read its "
            "SDK's base URL variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, ...)?"
        )
        return 2
    if as_json:
        card = to_json(grades, command, out)
        sys.stdout.write(orjson.dumps(card, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        width = shutil.get_terminal_size((100, 24)).columns
        print(text(grades, width))
        print(f"\nrecordings: {pasteable(out)}")
    return 0 if passed(grades) else 1
