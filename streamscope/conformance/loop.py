"""`conformance --loop`: one client process that runs its conversation again and again,
each case served in turn.

A request whose history carries no call back (no assistant turn with calls, no tool
result) begins a conversation: it gets the next case's stream; a request that carries
one continues the case begun last: it gets that case's final text. The client is told
how many conversations to run in STREAMSCOPE_CONFORMANCE_CASES; a conversation begun
after the last case gets an error. The run is recorded whole, then cut into one
recording per case (as `export --format recording` writes an exchange), graded alike.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import orjson

from ..dialects import DEFAULT, Dialect, claimant
from ..inputs import open_input
from ..inputs.encoding import request_json
from ..playback.library import Library, Selection, Unmatched
from ..recording.private import write_private
from ..text import plural
from .cases import Case, joined
from .grade import FAIL, NO_REQUEST, Grade, Ran, exited, expected, grade

CASES_VARIABLE = "STREAMSCOPE_CONFORMANCE_CASES"


def continues(got: Any, speaks: Dialect) -> bool:
    """Whether a request body (parsed) carries calls back (an answer to a stream), by
    its history."""
    history = speaks.history(got) if isinstance(got, dict) else None
    if history is None:
        return False
    return any(e.role == "tool" or (e.role == "assistant" and e.value) for e in history.entries())


def _parsed(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


class CaseLibrary(Library):
    """The cases' served files, answered in turn (see the module docstring)."""

    def __init__(self, files: Sequence[str], cases: Sequence[Case]) -> None:
        super().__init__(list(files))
        if len(self.entries) != 2 * len(cases):  # (each case: its stream, its text)
            raise ValueError("each served case holds two exchanges")
        self.cases = list(cases)
        self.begun = 0  # cases whose stream was served
        self.last = time.monotonic()  # when the last request came
        self.finished = threading.Event()  # the last case's text was served
        self.answered: set[int] = set()  # the cases whose text was served
        self.began: list[float] = []  # when each case's stream was asked for

    def select(
        self, body: bytes, strict: bool = False, dialect: Dialect | None = None, path: str = ""
    ) -> Selection | Unmatched:
        speaks = dialect or DEFAULT
        again = continues(_parsed(body), speaks)
        with self._lock:
            self.last = time.monotonic()
            if not again:
                self.begun += 1
                self.began.append(self.last)
            k = self.begun - 1
            if not 0 <= k < len(self.cases):
                n = len(self.cases)
                return Unmatched(f"all {plural(n, 'case')} were served: the run is over")
            if self.cases[k].dialect != speaks.name:
                return Unmatched(
                    f"this run serves {self.cases[k].dialect} cases, not {speaks.name}"
                )
            if again:
                self.answered.add(k)
                if k == len(self.cases) - 1:
                    self.finished.set()
            entry = self.entries[2 * k + (1 if again else 0)]
            self.served[entry.number] += 1
            return Selection(entry, "order")


def cut(whole: str, cases: Sequence[Case], out: str) -> dict[int, str]:
    """The whole run's recording cut into one recording per case begun, in `out` (its
    exchanges in order, numbered from 1), by case index. Its requests are told apart as
    CaseLibrary told them (`continues`); a request no dialect claims (a client's
    `HEAD /`) goes with the case it came in."""
    by_case: dict[int, list[int]] = {}
    k = -1
    with open_input(whole) as source:
        for n in source.numbers():
            request = source.exchange(n).request
            if request is not None:
                got = request_json(request)
                told = claimant(request.url, got)
                if told is not None and request.method.upper() == "POST":
                    k += 0 if continues(got, told) else 1
            if 0 <= k < len(cases):
                by_case.setdefault(k, []).append(n)
    paths = {}
    for k, numbers in by_case.items():
        path = os.path.join(out, f"{cases[k].sample_name}.jsonl")
        write_private(path, joined([(whole, n) for n in numbers]))
        paths[k] = path
    return paths


def grades(
    cases: Sequence[Case],
    paths: dict[int, str],
    library: CaseLibrary,
    status: int | None,
    said: str,
    timeout: float,
    heard: Sequence[tuple[float, str]] = (),
) -> list[Grade]:
    """Each case graded by its recording. The client's end (its exit, or its hang)
    belongs to the last case begun, or to the next one where that one's text was served
    (it ended before asking for it); the cases before, the client went on from; the
    rest, it never reached."""
    out = []
    ended = time.monotonic()
    last = library.begun - 1
    if last in library.answered and last + 1 < len(cases):
        last += 1  # its end came before it asked the next case
    for k, case in enumerate(cases):
        if k == last and k not in paths:  # it ended before asking this one
            ran = Ran(status, 0.0, said, "", timeout)
            got = f"{NO_REQUEST}; {exited(ran)}"
            out.append(Grade(case, FAIL, expected(case), got, [], ran=ran))
            continue
        if k > last or k not in paths:
            why = "hung" if status is None else f"exited {status}"
            got = f"not run: the client {why} before this case"
            out.append(Grade(case, FAIL, expected(case), got, []))
            continue
        # its time: from its first request to the next case's (the last: to the end)
        began = library.began[k] if k < len(library.began) else ended
        took = (library.began[k + 1] if k + 1 < len(library.began) else ended) - began
        if k < last:
            end = began + took
            wrote = [line for t, line in heard if began <= t < end]
            ran = Ran(0, took, wrote[-1] if wrote else "", paths[k], timeout, went_on=True)
        else:
            ran = Ran(status, took, said, paths[k], timeout)
        out.append(grade(case, ran))
    return out
