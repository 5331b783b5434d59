"""Two streams stepped together (`replay A B`), computed without Textual.

The rule, said on screen: a step moves both sides to the first frame where the same share
of their arguments' characters (robust's calls, all of them) has been assembled; a side
with no arguments at all steps by the share of its frames. A frame that begins a call (its
id and name, before any argument) is a step of its own. The last step is both sides' last
frame. The progress is read off robust's events in one pass (linear in the frames; the
exact count frame by frame only where the events do not tell it). The pairing of streams,
and what differs in the end, are `diff`'s (analysis/diff.py): this only aligns the frames
of one pair and compares the tables there.
"""

from __future__ import annotations

import json
from bisect import bisect_left

from ..analysis.diff import CallChange, compare_calls
from ..core.calls import Call, StrategyError
from ..core.events import APPEND, NEW_CALL, REPLACE, SET
from ..core.record import record
from .model import StreamModel

RULE = "aligned by the share of argument characters assembled"
BY_FRAMES = "aligned by frame (neither side has arguments)"

# the event fields that hold a call's arguments (robust's events, core/events.py)
_ARGUMENTS = frozenset({"arguments", "input", "args"})

Progress = tuple[float, int]  # the share of the arguments (or frames) so far, calls begun


def _chars(calls: list[Call]) -> int:
    out = 0
    for c in calls:
        out += _length(c.arguments)
    return out


def _length(a: object) -> int:
    if isinstance(a, str):
        return len(a)
    if a is None:
        return 0
    # arguments as a JSON value (whole from their first frame), as compact text
    return len(json.dumps(a, default=str, separators=(",", ":"), ensure_ascii=False))


def _counted(model: StreamModel) -> list[tuple[int, int]] | None:
    """Per frame (0: before the first), robust's argument characters and calls begun so
    far, read off the events robust gives as each frame is fed once: linear in the frames,
    where asking for every call at every frame is calls x frames. None where the events do
    not tell it (arguments set by path, Gemini's partialArgs) or end elsewhere than robust's
    own calls (the exact count is then taken frame by frame)."""
    lengths: dict[tuple[int, object, int], int] = {}
    valued: set[tuple[int, object, int]] = set()  # arguments held as a JSON value
    chars = begun = 0
    out = [(0, 0)]
    for events in model.replayed():
        for e in events:
            k = (e.choice, e.index, e.call)
            if e.op == NEW_CALL:
                begun += 1
                lengths[k] = 0
                valued.discard(k)
            elif e.field.startswith("$"):
                return None
            elif e.field not in _ARGUMENTS:
                continue
            elif e.op == APPEND and isinstance(e.new, str) and e.new:
                if k in valued:  # text after a value (Anthropic's `input: {}`): the text
                    valued.discard(k)
                    chars -= lengths.pop(k, 0)
                lengths[k] = lengths.get(k, 0) + len(e.new)
                chars += len(e.new)
            elif e.op == REPLACE or (e.op == SET and (k in valued or not lengths.get(k))):
                n = _length(e.new)
                chars += n - lengths.get(k, 0)
                lengths[k] = n
                if not isinstance(e.new, str):
                    valued.add(k)
        out.append((chars, begun))
    end = model.at(model.total).engine.calls_now()
    if len(out) != model.total + 1 or out[-1] != (_chars(end), len(end)):
        return None
    return out


def _exact(model: StreamModel) -> list[tuple[int, int]]:
    out = [(0, 0)]
    for n in range(1, model.total + 1):
        calls = model.at(n).engine.calls_now()
        out.append((_chars(calls), len(calls)))
    return out


def progress(model: StreamModel) -> tuple[list[Progress], bool]:
    """Per frame (0: before the first), the share assembled so far and the calls begun,
    never going back (arguments a frame overwrote shorter do not undo the progress already
    shown); a frame that begins a call (its id and name, no argument yet) is progress.
    And whether the share is of the frames: the stream's calls hold no argument."""
    total = model.total
    counted = _counted(model)
    if counted is None:
        counted = _exact(model)
    last = counted[-1][0]
    out, most, calls = [], 0.0, 0
    for n, (c, begun) in enumerate(counted):
        most = max(most, c / last) if last > 0 else (n / total if total else 1.0)
        calls = max(calls, begun)
        out.append((most, calls))
    return out, last <= 0


@record(slots=True)
class Step:
    a: int  # A's frame
    b: int
    share: float  # of the arguments assembled, this step's


@record(slots=True)
class Aligned:
    a: StreamModel
    b: StreamModel
    steps: list[Step]
    strategies: tuple[str, ...] = ()  # the clients shown beside robust (diff's changed ones)
    by_frames: tuple[bool, bool] = (False, False)  # a side with no arguments: by its frames

    @classmethod
    def of(cls, a: StreamModel, b: StreamModel, strategies: tuple[str, ...] = ()) -> Aligned:
        (pa, fa), (pb, fb) = progress(a), progress(b)
        steps: list[Step] = []
        for at in sorted({*pa, *pb}):
            step = Step(_first(pa, at), _first(pb, at), at[0])
            if not steps or (steps[-1].a, steps[-1].b) != (step.a, step.b):
                steps.append(step)
        end = Step(a.total, b.total, 1.0)
        if (steps[-1].a, steps[-1].b) != (end.a, end.b):
            steps.append(end)
        return cls(a, b, steps, strategies, (fa, fb))

    def measure(self) -> str:
        """What a step's share is of, as the step line says it."""
        fa, fb = self.by_frames
        if fa and fb:
            return f"of the frames · {BY_FRAMES}"
        if fa or fb:
            side, other = ("A", "B") if fa else ("B", "A")
            return f"({other}'s arguments, {side}'s frames: {side} has no arguments) · {RULE}"
        return f"of the arguments · {RULE}"

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
        """The next step whose differences are not those of step i: a difference that
        appears, or a differing cell whose value changes on either side (a client that
        rewrites an id at every frame), as the ≠ marks show them; None when none is left."""
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


def _first(shares: list[Progress], at: Progress) -> int:
    """The first frame whose progress reaches `at` (progress never goes back)."""
    return min(bisect_left(shares, at), len(shares) - 1)


def _fields(changes: list[tuple[str, CallChange]]) -> list[tuple[str, int, str, str, str]]:
    """Each differing cell: the table, the call, the field, and its value on each side."""
    return [
        (name, c.position, f, _cell(c.a, f), _cell(c.b, f))
        for name, c in changes
        for f in (c.fields or ["call"])
    ]


def _cell(call: Call | None, field: str) -> str:
    if call is None:
        return ""
    return repr(call.key() if field == "call" else getattr(call, field))
