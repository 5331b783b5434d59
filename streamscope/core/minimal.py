"""What every `--minimal` search shares: the signature a fixture keeps, Zeller's ddmin,
pruning a JSON tree, and the budget.

A stream's `Signature` is what one engine pass says about it that a fixture must keep:
the warning and error anomaly kinds, the strategies whose calls differ from robust's, and
the strategies that raised (with the exception's type name; an SDK emulation's
`Unmodeled` counts as raising); and, for a fixture that asserts the calls (the pytest
module), robust's calls themselves: ids, names, arguments and signatures as the provider
sent them, so that no fragment the arguments need is dropped. The searches themselves are the dialects' (a dialect's
own, `Dialect.minimize`) or export's over a dialect's `Shape` (export/minimize_events.py).

Beside the signature a search is told what its frames alone do not say (export/kept.py
decides both): how the stream ended past its last frame (`Ending`), which every candidate
is read with, and, where the written stream's dialect is told by its frames, a test that
a candidate's frames still tell it (`Tells`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from .anomalies import SERIOUS, Anomaly
from .calls import Call, StrategyError
from .engine import Engine
from .frames import Frame, Truncation
from .record import record

T = TypeVar("T")

MAX_RUNS = 5000  # candidates judged before the smallest found so far is returned


@record(frozen=True)
class Signature:
    """What a minimized stream must still show."""

    kinds: frozenset[str]  # warning and error anomaly kinds (info kinds are ignored)
    differs: frozenset[str]  # strategies whose calls differ from robust
    raises: frozenset[tuple[str, str]]  # (strategy, exception type name) for those that raised
    # robust's calls (`held`), when the fixture asserts them; None: they may change
    calls: tuple[tuple[Any, ...], ...] | None = None


@record(frozen=True)
class Ending:
    """How a stream ended past its last frame, as `inspect` reads it: the body cut inside
    an event (its framing's truncation), the recorded end's reason and error. The
    minimal stream is written ending the same way, so every candidate is read with it:
    `stream-truncated` stays a finding, and a client's cut stays a client's."""

    truncation: Truncation | None = None
    reason: str | None = None
    error: str | None = None

    def read(self, engine: Engine, expect_done: bool) -> tuple[list[Call], list[Any]]:
        """`engine`'s end rules (Engine.end), with this ending."""
        return engine.end(self.truncation, self.reason, self.error, expect_done)


ENDED = Ending()  # a stream that ended after its last frame, as its frames say


# Does a candidate's frames (its first ones: LOOK at most are looked at) tell the dialect
# the stream's own frames tell? Asked where the written stream's dialect is told by them.
Tells = Callable[[Iterable[Frame]], bool]


def held(
    robust: list[Call], key: Callable[[Call], tuple[Any, ...]] = Call.key
) -> tuple[tuple[Any, ...], ...]:
    """Robust's calls as a signature keeps them: `key`, what `differs` compares (a Gemini
    call's thoughtSignature too, which the fixture asserts)."""
    return tuple(key(c) for c in robust)


def clients(
    robust: list[Call],
    strategies: Mapping[str, object],
    key: Callable[[Call], tuple[Any, ...]] = Call.key,
) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The signature's differs and raises: the strategies whose calls are not robust's
    (StreamResult.differs, `key` what it compares), and those that raised; of the
    client strategies in `strategies`."""
    keys = [key(c) for c in robust]
    differs = frozenset(
        name
        for name, got in strategies.items()
        if isinstance(got, list) and [key(c) for c in got] != keys
    )
    raises = frozenset(
        (name, _exception_name(got))
        for name, got in strategies.items()
        if not isinstance(got, list)
    )
    return differs, raises


def kinds(anomalies: list[Anomaly]) -> frozenset[str]:
    return frozenset(a.kind for a in anomalies if a.severity in SERIOUS)


def _exception_name(got: object) -> str:
    # A StrategyError says "Type: message"; the SDK emulation's Unmodeled is an exception.
    if isinstance(got, StrategyError):
        return got.error.split(":", 1)[0]
    return type(got).__name__


class Exhausted(Exception):
    """The engine-run budget is spent."""


def ddmin(items: list[T], test: Callable[[list[T]], bool]) -> list[T]:
    """Zeller's ddmin: a 1-minimal sublist of `items` (order kept) that passes `test`.

    `items` itself is assumed to pass; the empty list is tried first.
    """
    if not items or test([]):
        return []
    n = 2
    while len(items) >= 2:
        n = min(n, len(items))
        bounds = _bounds(len(items), n)
        reduced = False
        for a, b in bounds:
            chunk = items[a:b]
            if test(chunk):
                items, n, reduced = chunk, 2, True
                break
        if not reduced and n > 2:  # with two chunks the complements are the chunks
            for a, b in bounds:
                rest = items[:a] + items[b:]
                if test(rest):
                    items, n, reduced = rest, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(items):
                break
            n = min(2 * n, len(items))
    return items


def _bounds(size: int, n: int) -> list[tuple[int, int]]:
    """Where the n chunks of a list of `size` items start and end (sizes differ by 1 at
    most, the bigger ones last)."""
    out, start = [], 0
    for i in range(n):
        end = start + (size - start) // (n - i)
        out.append((start, end))
        start = end
    return out


def prune(node: object, removed: set[tuple[Any, ...]]) -> object:
    """`node` without the paths in `removed` (relative to `node`): containers on the way
    to a removed path are new, everything else is shared (trees are never changed in
    place: an edit deep-copies its trees first)."""
    trie: dict[Any, Any] = {}
    for path in removed:
        at = trie
        for step in path[:-1]:
            at = at.setdefault(step, {})
            if at is True:  # an ancestor goes too
                break
        else:
            at[path[-1]] = True
    return _pruned(node, trie)


def _pruned(node: object, trie: dict[Any, Any]) -> object:
    items: Iterable[tuple[Any, Any]]
    if isinstance(node, dict):
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return node
    kept = []
    for k, v in items:
        sub = trie.get(k)
        if sub is None:
            kept.append((k, v))
        elif sub is not True:
            kept.append((k, _pruned(v, sub)))
    return dict(kept) if isinstance(node, dict) else [v for _, v in kept]


# -- the frames that carry the findings, before any search (a long stream) --

LONG = 100  # a stream longer than this is first narrowed to its findings' frames


def carriers(anomalies: list[Anomaly], calls: list[Call], n: int) -> set[int]:
    """Positions (0-based) of the frames that carry the findings of one analysis of `n`
    frames: each warning's and error's frame; the first and last frame of every call
    one of them names (its choice and index), an opener and a closer; the stream's
    first frame and its last two (its start, the finish and a `[DONE]`)."""
    named = {(a.choice, a.index) for a in anomalies if a.severity in SERIOUS}
    out = {a.frame - 1 for a in anomalies if a.severity in SERIOUS}
    for c in calls:
        if (c.choice, c.index) in named:
            out.update((c.first_frame - 1, c.last_frame - 1))
    out.update((0, n - 2, n - 1))
    return {i for i in out if 0 <= i < n}


def spans(anomalies: list[Anomaly], calls: list[Call]) -> set[int]:
    """The positions (0-based) a stream's findings are on: each warning's and error's
    frame, and every frame of each call one of them names (its first to its last)."""
    named = {(a.choice, a.index) for a in anomalies if a.severity in SERIOUS}
    out = {a.frame - 1 for a in anomalies if a.severity in SERIOUS}
    for c in calls:
        if (c.choice, c.index) in named:
            out.update(range(c.first_frame - 1, c.last_frame))
    return out


def reach(at: set[int]) -> tuple[int, int] | None:
    """The first and last of the positions a stream's findings are on (`spans`), which
    `narrowed` aims its prefix and suffix at; None: no finding."""
    return (min(at), max(at)) if at else None


def narrowed(
    n: int,
    seed: set[int],
    test: Callable[[list[int]], bool],
    aim: tuple[int, int] | None = None,
    prove: Callable[[list[int]], bool] | None = None,
) -> list[int] | None:
    """The positions of a candidate of `n` frames that passes `test`: `seed` alone, or with
    the shortest prefix of the stream that makes it pass, or else that and the shortest
    suffix (what a finding needs before it, such as the calls whose indexes come before
    the one it names, read off the stream rather than searched for frame by frame).
    Each is found by galloping then bisection; with `aim` (the finding's frames, `reach`)
    the gallop starts where the prefix or suffix would first take them all in, and goes
    down while the candidate passes (a finding that needs the calls before it costs a
    few candidates as long as what is kept, not a bisection of the stream), else up.
    `prove`: the whole judge, where `test` is a quicker guess at it; what is returned
    passes it (the suffix's candidate, else the prefix's). None: nothing smaller than
    the stream passed."""

    def with_(p: int, s: int) -> list[int]:
        return sorted(seed.union(range(p), range(n - s, n)))

    answers: dict[tuple[int, ...], bool] = {}  # (a prefix into the seed is the one before it)

    def passes(keep: list[int]) -> bool:
        key = tuple(keep)
        if key not in answers:
            answers[key] = test(keep)
        return answers[key]

    def least(ok: Callable[[int], bool], limit: int, guess: int | None) -> int | None:
        """The least k in 0..limit with ok(k), assuming ok grows with k (None: none),
        galloping from `guess` when there is one, else from 1."""
        if ok(0):
            return 0
        lo, hi, step = 0, 1, 1  # ok(lo) fails; hi is the next to try
        if guess is not None and 1 < guess <= limit:
            if ok(guess):  # down while it passes, to half the guess at most
                hi = guess
                while guess - step > guess // 2:
                    if not ok(guess - step):
                        lo = guess - step
                        break
                    hi, step = guess - step, 2 * step
                else:  # the answer is small: up from 1, below what passed
                    limit, hi, step = hi, 1, 1
            else:
                lo, hi = guess, guess + 1
        while hi < limit and not ok(hi):
            lo, hi, step = hi, hi + step, 2 * step
        if hi >= limit:
            hi = limit
            if not ok(limit):
                return None
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid
        return hi

    if len(seed) >= n:
        return None
    # the whole prefix is the stream, which passes; a suffix is looked for only as far
    # as it would keep fewer frames than the prefix found, and not at all when one that
    # takes in the findings would keep nearly as many (a finding in the middle of a
    # stream: its search and proof cost two analyses of half the stream for a few frames
    # the searches after it drop as well)
    first, last = aim if aim is not None else (None, None)
    p = least(lambda k: passes(with_(k, 0)), n, None if last is None else last + 1)
    p = n if p is None else p
    s_aim = None if first is None else n - first
    worth = p > 1 and (s_aim is None or 4 * s_aim <= 3 * p)
    s = least(lambda k: passes(with_(0, k)), p - 1, s_aim) if worth else None
    for out in ([] if s is None else [with_(0, s)]) + [with_(p, 0)]:
        if len(out) < n and (prove is None or prove(out)):
            return out
    return None


class Bounded(Generic[T]):
    """A test that stops answering (raises Exhausted) past `budget` frames judged, and
    keeps the smallest candidate that passed: ddmin on what narrowing kept is bounded
    by the work of a few analyses, whatever the stream's shape."""

    def __init__(
        self,
        test: Callable[[list[T]], bool],
        budget: int,
        weight: Callable[[list[T]], int] = len,
    ) -> None:
        self.test, self.budget, self.weight = test, budget, weight
        self.best: list[T] | None = None
        self.seen: dict[tuple[T, ...], bool] = {}  # (ddmin asks some candidates again)

    def __call__(self, items: list[T]) -> bool:
        key = tuple(items)
        if key in self.seen:  # judged already: no frames judged again
            return self.seen[key]
        self.budget -= self.weight(items)
        if self.budget < 0:
            raise Exhausted
        ok = self.seen[key] = self.test(items)
        if ok and (self.best is None or len(items) < len(self.best)):
            self.best = list(items)
        return ok


def bounded_ddmin(
    items: list[T],
    test: Callable[[list[T]], bool],
    budget: int,
    weight: Callable[[list[T]], int] = len,
) -> tuple[list[T], int]:
    """ddmin, or the smallest passing candidate it found once `budget` was spent, each
    candidate costing its `weight` (its length: the frames judged); the items as they
    were when none passed; with the budget left (negative: spent)."""
    bounded = Bounded(test, budget, weight)
    try:
        return ddmin(items, bounded), bounded.budget
    except Exhausted:
        return (bounded.best if bounded.best is not None else items), bounded.budget


def by_path(
    units: list[tuple[Any, ...]],
    judged: Callable[[list[int]], bool],
    left: dict[str, int] | None,
    frames: int,
) -> list[int]:
    """The field units (frame, *path) kept when each of their paths within a frame is
    tried without in turn (`one_by_one`: a key is removed from every frame that has it,
    or from none), bounded by `left["fields"]` frames judged (one candidate: the whole
    stream's `frames`), or unbounded (`left` None). What a fixture keeps of thousands of
    frames is then decided in a few passes; a short stream's units are searched one by
    one after it, from what this kept."""
    paths: dict[tuple[Any, ...], list[int]] = {}
    for u, unit in enumerate(units):
        paths.setdefault(unit[1:], []).append(u)
    groups = list(paths.values())

    def kept_units(kept: list[int]) -> list[int]:
        return sorted(u for g in kept for u in groups[g])

    kept = list(range(len(groups)))
    if left is None:
        return kept_units(one_by_one(kept, lambda kept: judged(kept_units(kept))))
    bounded: Bounded[int] = Bounded(
        lambda kept: judged(kept_units(kept)), left["fields"], lambda _: frames
    )
    try:
        kept = one_by_one(kept, bounded)
    except Exhausted:
        kept = bounded.best if bounded.best is not None else kept
    left["fields"] = bounded.budget
    return kept_units(kept)


def one_by_one(items: list[T], test: Callable[[list[T]], bool]) -> list[T]:
    """What `items` (assumed to pass) keeps when none at all fails `test` and each is
    then tried without, in turn: one candidate an item. A level's keys are mostly needed
    (an event's `type`, a block's `index`), where ddmin's halves and quarters all fail
    first: about three candidates an item."""
    if not items or test([]):
        return []
    kept = list(items)
    for item in items:
        without = [k for k in kept if k != item]
        if test(without):
            kept = without
    return kept
