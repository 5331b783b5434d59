"""`--minimal` for a dialect that tells it its frames' `Shape` (`Dialect.shape`).

Zeller's ddmin (core/minimal.py), on frames that are (event name, data) pairs: over
whole frames, then each fragment joined to the one before it of the same target (the
dialect's `Shape.sites`: one block's `partial_json`, one block's text), then over the
fields of the JSON frames, level by level (the dialect's `Shape.levels`), then the
volatile fields. A change is kept only when the signature (the warning and error kinds,
the clients that differ from robust, those that raise) still holds. Every candidate is
judged by one engine pass, cached; nothing is ever invented: a fragment moved into the
one before it leaves `""` behind, and only keys are removed.

A dialect with a search of its own (`Dialect.minimize`, whose judge also rejects
candidates by rules that follow what its engine surely does) takes that one instead.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

import orjson

from ..core.calls import Call
from ..core.engine import value_key
from ..core.frames import INVALID, Frame, FrameHeader, parse_payload
from ..core.minimal import MAX_RUNS, Exhausted, Signature, clients, ddmin, held, kinds, prune
from ..dialects.base import Dialect, Shape

Pair = tuple[str | None, str]  # (SSE event name, data) of one frame


class _Judge:
    """A candidate shows the target's signature? One engine pass each, cached."""

    def __init__(
        self,
        told: Dialect,
        tools: list | None,
        expect_done: bool,
        max_runs: int,
        judged: Callable[[list[Pair]], Signature] | None = None,
        headers: Mapping[str | None, tuple[FrameHeader, ...]] | None = None,
        keep_calls: bool = False,
    ) -> None:
        self.told, self.tools, self.expect_done = told, tools, expect_done
        self.keep_calls = keep_calls  # robust's calls are part of the signature
        self.headers = headers or {}
        self.judged = judged
        self.max_runs, self.runs = max_runs, 0
        self.cache: dict[tuple[Pair, ...], bool] = {}
        self.parsed: dict[str, object] = {}
        self.target: Signature | None = None
        self.best: list[Pair] | None = None

    def signature(self, frames: list[Pair]) -> Signature:
        if self.judged is not None:
            return self.judged(frames)
        engine = self.told.engine(1, self.tools, marks=False)
        parsed = self.parsed
        for n, (name, data) in enumerate(frames, 1):
            payload = parsed.get(data)
            if payload is None:
                payload = parsed[data] = parse_payload(data)
            engine.feed(Frame(n, data, payload, event=name, headers=self.headers.get(name, ())))
        robust, _ = engine.end(expect_done=self.expect_done)
        key = value_key if engine.by_value else Call.key
        found = clients(robust, engine.others_at_end(), key)
        calls = held(robust, key) if self.keep_calls else None
        return Signature(kinds(engine.log.entries()), *found, calls)

    def __call__(self, frames: list[Pair]) -> bool:
        key = tuple(frames)
        ok = self.cache.get(key)
        if ok is None:
            if self.runs >= self.max_runs:
                raise Exhausted
            self.runs += 1
            ok = self.cache[key] = self.signature(frames) == self.target
        if ok and (self.best is None or _smaller(frames, self.best)):
            self.best = list(frames)
        return ok


def _smaller(a: list[Pair], b: list[Pair]) -> bool:
    if len(a) != len(b):
        return len(a) < len(b)
    return sum(len(d) for _, d in a) < sum(len(d) for _, d in b)


def _dumps(tree: object) -> str:
    return orjson.dumps(tree).decode()


def _at(tree: object, path: tuple) -> object:
    for step in path:
        tree = tree[step]  # type: ignore[index]
    return tree


class _Stream:
    """The current candidate: each frame's name, tree (None: kept as text) and text."""

    def __init__(self, frames: list[Pair]) -> None:
        self.names = [name for name, _ in frames]
        self.trees: list[object] = []
        self.texts: list[str] = []
        for _, data in frames:
            tree, text = parse_payload(data), data
            if tree is not INVALID:
                try:
                    text = _dumps(tree)
                except TypeError:  # nested past what orjson writes: kept as sent
                    tree = INVALID
            self.trees.append(None if tree is INVALID else tree)
            self.texts.append(text)

    def pairs(self, texts: list[str] | None = None) -> list[Pair]:
        return list(zip(self.names, texts if texts is not None else self.texts, strict=True))

    def keep(self, kept: list[int]) -> None:
        self.names = [self.names[i] for i in kept]
        self.trees = [self.trees[i] for i in kept]
        self.texts = [self.texts[i] for i in kept]

    def edited(self, frames: set[int], edit: Callable[[list[object]], None]) -> tuple:
        trees, texts = list(self.trees), list(self.texts)
        for f in frames:
            trees[f] = copy.deepcopy(trees[f])
        edit(trees)
        for f in frames:
            texts[f] = _dumps(trees[f])
        return trees, texts


def _frames(stream: _Stream, judge: _Judge) -> None:
    every = list(range(len(stream.texts)))
    pairs = stream.pairs()
    kept = ddmin(every, lambda keep: judge([pairs[i] for i in keep]))
    stream.keep(kept)


def _joins(stream: _Stream, judge: _Judge, shape: Shape) -> None:
    """Join each fragment to the one before it of the same target: appended to it, or,
    when that changes the signature, that one prepended to this one; "" stays behind."""
    for sites in shape.sites(stream.trees):
        into = sites[0]
        for site in sites[1:]:

            def backward(trees: list[object], into: tuple = into, site: tuple = site) -> None:
                holder, key = _at(trees[site[0]], site[1][:-1]), site[1][-1]
                moved, holder[key] = holder[key], ""  # type: ignore[index]
                target = _at(trees[into[0]], into[1][:-1])
                target[into[1][-1]] += moved  # type: ignore[index]

            def forward(trees: list[object], into: tuple = into, site: tuple = site) -> None:
                holder, key = _at(trees[into[0]], into[1][:-1]), into[1][-1]
                moved, holder[key] = holder[key], ""  # type: ignore[index]
                target = _at(trees[site[0]], site[1][:-1])
                target[site[1][-1]] = moved + target[site[1][-1]]  # type: ignore[index]

            both = {into[0], site[0]}
            for edit in (backward, forward):
                trees, texts = stream.edited(both, edit)
                if judge(stream.pairs(texts)):
                    stream.trees, stream.texts = trees, texts
                    break
            into = site


def _fields(
    stream: _Stream, judge: _Judge, shape: Shape, kind: str, role: str, volatile: bool
) -> None:
    units: list[tuple] = []
    for i, tree in enumerate(stream.trees):
        if tree is None:
            continue
        for got, path, node in shape.containers(tree):
            if got != role:
                continue
            if kind == "entries":
                units.extend((i, *path, k) for k in range(len(node)))  # type: ignore[arg-type]
                continue
            for key in node:
                if ((key in shape.volatile) and role in shape.volatile_roles) == volatile:
                    units.append((i, *path, key))
    if not units:
        return

    def render(kept: list[int]) -> tuple[list[object], list[str]]:
        gone: dict[int, set[tuple]] = {}
        keep = set(kept)
        for u, unit in enumerate(units):
            if u not in keep:
                gone.setdefault(unit[0], set()).add(unit[1:])
        trees, texts = list(stream.trees), list(stream.texts)
        for i, paths in gone.items():
            trees[i] = prune(trees[i], paths)
            texts[i] = _dumps(trees[i])
        return trees, texts

    def judged(kept: list[int]) -> bool:
        return judge(stream.pairs(render(kept)[1]))

    every = list(range(len(units)))
    kept = [] if volatile and judged([]) else ddmin(every, judged)
    if len(kept) < len(units):
        stream.trees, stream.texts = render(kept)


def minimize_events(
    frames: list[Pair],
    told: Dialect,
    shape: Shape,
    tools: list | None = None,
    keep_fields: bool = False,
    expect_done: bool = True,
    join_fragments: bool = True,
    max_runs: int = MAX_RUNS,
    signature: Callable[[list[Pair]], Signature] | None = None,
    headers: Mapping[str | None, tuple[FrameHeader, ...]] | None = None,
    keep_calls: bool = False,
) -> list[Pair]:
    """The smallest stream found (frames in their original order) with the same signature:
    one engine pass's, or `signature`'s (a session's, where the stream is one turn).
    `headers`: a binary framing's headers of each event name's frames, which the engine
    is shown them with (an AWS exception message is told by its headers). `keep_calls`:
    robust's calls stay as they were (a fixture that asserts them)."""
    judge = _Judge(told, tools, expect_done, max_runs, signature, headers, keep_calls)
    judge.target = judge.signature(list(frames))
    stream = _Stream(list(frames))
    if not judge(stream.pairs()):  # re-serializing alone changes what the engine sees
        stream.trees = [None] * len(frames)
        stream.texts = [data for _, data in frames]
    judge.best = stream.pairs()
    steps: list[Callable[[], None]] = [lambda: _frames(stream, judge)]
    if join_fragments:
        steps.append(lambda: _joins(stream, judge, shape))
    for kind, role in shape.levels:
        steps.append(lambda kind=kind, role=role: _fields(stream, judge, shape, kind, role, False))
    if not keep_fields:
        for role in shape.volatile_roles:
            steps.append(lambda role=role: _fields(stream, judge, shape, "keys", role, True))
    try:
        while True:
            before = stream.pairs()
            for step in steps:
                step()
            if stream.pairs() == before:
                break
    except Exhausted:
        return judge.best
    return stream.pairs()
