"""`streamscope conformance`: choose the cases, run them, print the card, exit 0 only
when every case passes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

from ..core import jsonio
from ..core.links import pasteable
from ..record.runner import cannot_run
from ..recording.mask import mask_argv
from ..recording.private import private_folders
from ..text import plural, say, visible
from .card import MARKS, SCHEMA, text, title, to_json
from .cases import Case, cases, samples_folder, select
from .grade import NO_REQUEST, NO_STREAM, Grade, exited, expected, passed
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
    force: bool = False,
) -> int:
    chosen, _ = chosen_cases(dialects, only)
    if loop and len({c.dialect for c in chosen}) > 1:
        raise Refused("--loop serves one dialect's cases one after another: name it with --dialect")
    problem = cannot_run(command)
    if problem is not None:
        say(problem[1])
        return problem[0]
    out = output or default_output()
    _check_output(out, chosen, force)
    made = private_folders(out)  # (removed again, where nothing is recorded in them)
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
    # (where the recordings are is said at the end, when there are some)
    if one_dialect:
        say(f"{plural(total, 'case')} of {title(chosen[0].dialect)}, each served to {shown}")
    else:
        say(f"serving each dialect's first case to {shown}, to find the API it asks")

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
        kept = _kept(out, made)
        say(
            f"stopped: no card (the recordings made so far are kept in {pasteable(out)})"
            if kept
            else "stopped: no card, nothing recorded"
        )
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    why = _ungraded(grades, found)
    if why is not None:
        say(why)
        kept = _kept(out, made)
        if kept:
            say(f"recordings: {pasteable(out)}")
        if as_json:
            _write_json({"schema": SCHEMA, "error": why, "recordings": out if kept else None})
        return 2
    if as_json:
        _write_json(to_json(grades, command, out))
    else:
        # a terminal's width; a log (not a terminal) is read whole, not cut to 80
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
        print(text(grades, width))
        print(f"\nrecordings: {pasteable(out)}")
    return 0 if passed(grades) else 1


def _kept(out: str, made: list[str]) -> bool:
    """Whether `out` holds recordings; where it holds none, the folders made for it are
    removed (a run that recorded nothing leaves nothing behind)."""
    with contextlib.suppress(OSError):
        if os.listdir(out):
            return True
    for folder in reversed(made):
        with contextlib.suppress(OSError):  # (one another process wrote in meanwhile)
            os.rmdir(folder)
    return False


def _write_json(card: dict[str, object]) -> None:
    sys.stdout.buffer.write(jsonio.dumps(card, indent=True, newline=True, shown=True))


def _ungraded(grades: list[Grade], found: str | None) -> str | None:
    """Why the client cannot be graded at all (None: it can)."""
    if grades == [] and found is not None:
        return f"the client asks the {title(found)} API, for which no case was chosen"
    asked = [g for g in grades if not g.got.startswith(NO_REQUEST)]
    if not asked:
        ran = grades[0].ran if grades else None
        if ran is not None and (ran.status is None or ran.status != 0):
            return f"the client sent no request: it {exited(ran)}"
        return (
            "the client sent no request to the provider streamscope served: does it read its "
            "SDK's base URL variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, ...)?"
        )
    if all(g.got.startswith(NO_STREAM) for g in asked):
        return (
            "conformance grades clients that stream: the client's requests asked for no "
            "stream (`stream: true`, or its API's streaming call)"
        )
    return None


def _check_output(out: str, chosen: Sequence[Case], force: bool) -> None:
    """-o names a folder; the recordings it would hold again are refused without --force
    (and removed with it, each one replaced)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise Refused(f"-o {out}: not a folder")
    there = [
        os.path.join(out, f"{c.sample_name}.jsonl")
        for c in chosen
        if os.path.lexists(os.path.join(out, f"{c.sample_name}.jsonl"))
    ]
    if there and not force:
        raise Refused(
            f"{out} already holds recordings of these cases ({os.path.basename(there[0])}"
            f"{f' and {len(there) - 1} more' if len(there) > 1 else ''}); --force replaces them"
        )
    for path in there:
        try:
            os.remove(path)
        except OSError as e:
            raise Refused(f"{path}: cannot replace it: {e.strerror or e}") from None
