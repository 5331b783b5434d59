"""What every `--minimal` search shares: the signature a fixture keeps, Zeller's ddmin,
pruning a JSON tree, and the budget.

A stream's `Signature` is what one engine pass says about it that a fixture must keep:
the warning and error anomaly kinds, the strategies whose calls differ from robust's, and
the strategies that raised (with the exception's type name; an SDK emulation's
`Unmodeled` counts as raising); and, for a fixture that asserts the calls (the pytest
module), robust's calls themselves: ids, names, arguments and signatures as the provider
sent them, so that no fragment the arguments need is dropped. The searches themselves are the dialects' (a dialect's
own, `Dialect.minimize`) or export's over a dialect's `Shape` (export/minimize_events.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .anomalies import ERROR, WARNING, Anomaly
from .calls import Call, StrategyError

T = TypeVar("T")

MAX_RUNS = 5000  # candidates judged before the smallest found so far is returned


@dataclass(frozen=True)
class Signature:
    """What a minimized stream must still show."""

    kinds: frozenset[str]  # warning and error anomaly kinds (info kinds are ignored)
    differs: frozenset[str]  # strategies whose calls differ from robust
    raises: frozenset[tuple[str, str]]  # (strategy, exception type name) for those that raised
    # robust's calls (`held`), when the fixture asserts them; None: they may change
    calls: tuple[tuple[Any, ...], ...] | None = None


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
    return frozenset(a.kind for a in anomalies if a.severity in (ERROR, WARNING))


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
