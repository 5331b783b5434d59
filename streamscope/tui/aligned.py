"""Two streams stepped together (`replay A B`), computed without Textual.

The rule, said on screen: a step moves both sides to the first frame where the same share
of their arguments' characters (robust's calls, all of them) has been assembled; a side
with no arguments at all steps by the share of its frames. The last step is both sides'
last frame. The pairing of streams, and what differs in the end, are `diff`'s
(analysis/diff.py): this only aligns the frames of one pair and compares the tables there.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from dataclasses import dataclass

from ..analysis.diff import CallChange, compare_calls
from ..core.calls import Call, StrategyError
from .model import StreamModel

RULE = "aligned by the share of argument characters assembled"


def _chars(calls: list[Call]) -> int:
    out = 0
    for c in calls:
        a = c.arguments
        if isinstance(a, str):
            out += len(a)
        elif a is not None:  # arguments as a JSON value (whole from their first frame)
            out += len(json.dumps(a, default=str))
    return out


def progress(model: StreamModel) -> list[float]:
    """Per frame (0: before the first), the share assembled so far, never going back
    (arguments a frame overwrote shorter do not undo the progress already shown)."""
    total = model.total
    chars = [0] + [_chars(model.at(n).engine.calls_now()) for n in range(1, total + 1)]
    if chars[-1] <= 0:
        return [n / total if total else 1.0 for n in range(total + 1)]
    out, most = [], 0.0
    for c in chars:
        most = max(most, c / chars[-1])
        out.append(most)
    return out


@dataclass(slots=True)
class Step:
    a: int  # A's frame
    b: int
    share: float  # of the arguments assembled, this step's


@dataclass(slots=True)
class Aligned:
    a: StreamModel
    b: StreamModel
    steps: list[Step]
    strategies: tuple[str, ...] = ()  # the clients shown beside robust (diff's changed ones)

    @classmethod
    def of(cls, a: StreamModel, b: StreamModel, strategies: tuple[str, ...] = ()) -> Aligned:
        pa, pb = progress(a), progress(b)
        steps: list[Step] = []
        for share in sorted({*pa, *pb}):
            step = Step(_first(pa, share), _first(pb, share), share)
            if not steps or (steps[-1].a, steps[-1].b) != (step.a, step.b):
                steps.append(step)
        end = Step(a.total, b.total, 1.0)
        if (steps[-1].a, steps[-1].b) != (end.a, end.b):
            steps.append(end)
        return cls(a, b, steps, strategies)

    def calls(self, i: int, strategy: str = "robust") -> tuple[Built, Built]:
        """What `strategy` builds on each side at step i (robust: its calls as they stand)."""
        step = self.steps[i]
        return _built(self.a, step.a, strategy), _built(self.b, step.b, strategy)

    def differences(self, i: int) -> list[tuple[str, CallChange]]:
        """The calls that differ between the two sides at step i, in robust's table and
        then in each of `strategies`' (as `diff` compares calls)."""
        out = []
        for name in ("robust", *self.strategies):
            a, b = self.calls(i, name)
            if isinstance(a, list) and isinstance(b, list):
                out += [(name, c) for c in compare_calls(a, b)]
        return out

    def next_difference(self, i: int) -> int | None:
        """The next step whose differences are not those of step i (a difference that
        appears, changes or grows), None when none is left."""
        here = _fields(self.differences(i))
        for j in range(i + 1, len(self.steps)):
            there = _fields(self.differences(j))
            if there and there != here:
                return j
        return None


Built = list[Call] | StrategyError | None  # None: the side's dialect has no such client


def _built(model: StreamModel, frame: int, strategy: str) -> Built:
    state = model.at(frame)
    if strategy == "robust":
        return state.engine.calls_now()
    got = model.view(state).strategy_calls().get(strategy)
    return got if isinstance(got, list | StrategyError) else None


def _first(shares: list[float], share: float) -> int:
    """The first frame whose share reaches `share` (shares never go back)."""
    return min(bisect_left(shares, share), len(shares) - 1)


def _fields(changes: list[tuple[str, CallChange]]) -> list[tuple[str, int, str]]:
    return [(name, c.position, f) for name, c in changes for f in (c.fields or ["call"])]
