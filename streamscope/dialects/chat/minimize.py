"""`--minimal` for Chat Completions: shrink a stream to the smallest fixture that still
shows the same problems (the dialect's own search, `Dialect.minimize`).

A stream is a list of SSE data strings (JSON text, "[DONE]", or any other text), each as
sent (core.frames.as_sent: a frame whose bytes are not UTF-8 holds them, and is read as
its framing reads it, U+FFFD and `invalid-utf8`; it is never re-serialized). Its
`signature` is what one engine pass says about it that a fixture must keep
(core/minimal.py). `minimize` looks for the smallest stream with the same signature
that ends as the stream did: with its [DONE], when that was its last frame (done-missing
is an info kind, which the signature does not hold).

The workhorse is Zeller's delta debugging (ddmin): split what is left into n chunks, keep
a chunk alone or drop it (keep its complement) when the signature still holds, otherwise
double n, until every single item is needed. Rounds of these steps run until a round
changes nothing:

1. ddmin over whole frames;
2. unless `join_fragments` is False, join fragments: each string that accumulates by
   concatenation (a choice's `content`, `reasoning_content`, `refusal`; one call's
   `function.arguments`, the call being its choice and tool-call index) is appended to
   the previous one of the same target, or else that one is prepended to it, and its key
   removed; then each `finish_reason` moves onto the previous chunk of its choice. This
   only moves text the stream carried, in its order, never invents any, and it is what
   lets a fixture shrink below one frame per argument fragment (dropping a fragment
   alone breaks the arguments' JSON, which the signature sees);
3. ddmin over the fields of the JSON frames, coarse to fine, each level over every frame
   at once: keys of the chunk envelope, entries of `choices`, keys of each choice, keys
   of `delta`, entries of `delta.tool_calls`, keys of each tool call, keys of its
   `function` object. Values are never rewritten, only keys and entries removed;
4. unless `keep_fields`, the `VOLATILE` keys of the envelope and of each choice (which
   step 3 leaves alone): all at once, or by ddmin when some of them matter (a key whose
   removal changes the signature stays).

Every step keeps a change only when the signature still holds. JSON frames come out
re-serialized compactly by orjson (when that alone would change the signature, every frame
is kept as its original text and only whole frames are removed). Each candidate costs
at most one engine pass (a small one is read in parts, robust and the anomaly rules
first, then the four client strategies, then the SDK emulation, each only when those
before match; many are rejected with no pass at all, by rules that follow what the
engine surely does); results are cached by candidate, and after `max_runs` candidates
the smallest stream found so far is returned. Everything is ordered, so the result is
deterministic.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from itertools import groupby
from typing import Any

import orjson

from ...core.anomalies import Anomaly
from ...core.calls import Call
from ...core.collector import collector_paused
from ...core.engine import ALL, CLIENTS, ROBUST, SDK, Strategies
from ...core.frames import INVALID, Frame, sent_frame
from ...core.minimal import (
    ENDED,
    LONG,
    MAX_RUNS,
    Ending,
    Exhausted,
    Signature,
    Tells,
    bounded_ddmin,
    by_path,
    carriers,
    clients,
    ddmin,
    held,
    kinds,
    narrowed,
    prune,
    reach,
    spans,
)
from .. import LOOK
from . import facts as chat_facts
from . import shape
from .engine import StreamEngine
from .facts import (
    NEEDS,
    Parsed,
    calls_file,
    docs_differs,
    docs_raise,
    surely,
)
from .shape import VOLATILE

LOOK_FIRST = LONG
SDK_NAME = "openai-sdk"  # the strategy that stands for the SDK (Dialect.sdk)
FEED = 2  # a long stream's searches judge at most this many times its frames
NodePath = tuple[Any, ...]  # to a node in a frame's tree, or (frame, *that path)
Site = tuple[int, NodePath]  # a string that accumulates: (frame, path to it)


def signature(
    frames: list[str], tools: list[Any] | None = None, expect_done: bool = True
) -> Signature:
    """One engine pass over `frames` (SSE data strings, as sent: core.frames.as_sent)."""
    engine = StreamEngine(1, tools, marks=False)  # the kinds alone are read
    for n, data in enumerate(frames, 1):
        engine.feed(sent_frame(n, data))
    return _analysed(engine, frames, tools, expect_done)[0]


def _answered(others: Strategies, frames: list[str], tools: list[Any] | None) -> Strategies:
    """`others` as inspect gives them (Dialect.answered), the frames parsed only if asked."""
    from . import CHAT

    def fed() -> list[Frame]:
        return [sent_frame(n, data) for n, data in enumerate(frames, 1)]

    return CHAT.answered(others, fed, tools)


def _analysed(
    engine: StreamEngine,
    frames: list[str],
    tools: list[Any] | None,
    expect_done: bool,
    keep_calls: bool = False,
    end: Ending = ENDED,
) -> tuple[Signature, list[Anomaly], list[Call]]:
    """The signature of `frames` (which `engine` was fed), with the anomalies and
    robust's calls it was read from."""
    # what finish() reports of it, without the rest of a StreamResult: its end rules
    # (the last anomalies), then what the client strategies built
    robust, _ = end.read(engine, expect_done)
    found = clients(robust, _answered(engine.others_at_end(), frames, tools))
    entries = engine.log.entries()
    calls = held(robust) if keep_calls else None
    return Signature(kinds(entries), *found, calls), entries, robust


def _clients_of(target: Signature, sdk: bool) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The target's differs and raises of the SDK emulation alone, or of the others."""
    return (
        frozenset(n for n in target.differs if (n == SDK_NAME) == sdk),
        frozenset(r for r in target.raises if (r[0] == SDK_NAME) == sdk),
    )


_UNSET = Signature(frozenset(), frozenset(), frozenset())  # a judge's target before aim()


class _Tester:
    """Judges candidates: the same answer as comparing `signature` with the target, with a
    cache, a budget, and exact shortcuts that reject without running the engine."""

    def __init__(
        self,
        target: Signature,
        tools: list[Any] | None,
        expect_done: bool,
        max_runs: int,
        keep_calls: bool = False,
        end: Ending = ENDED,
        tells: Tells | None = None,
    ) -> None:
        self.keep_calls = keep_calls  # robust's calls are part of the signature
        self.end, self.tells = end, tells  # (core/minimal.py)
        # the text every candidate ends with: the stream's [DONE] where it ended with one
        # (a minimal stream ends as the stream did; done-missing, an info kind, is no part
        # of the signature); None: any
        self.last: str | None = None
        self.aim(target)
        self.tools = tools
        self.expect_done = expect_done
        self.max_runs = max_runs
        self.runs = 0  # candidates judged (run or rejected beforehand): the budget counts them
        # frames a long stream's searches may still judge, by search (set by minimize)
        self.left: dict[str, int] = {}
        self.engine_runs = 0  # candidates the engine read (the whole of it, or a part)
        # Candidates up to LOOK_FIRST frames are read in parts (in_parts): robust and the
        # anomaly rules first, the client strategies only when the kinds match (small
        # candidates often fail early; big ones mostly pass, and would pay for the
        # construction of every part).
        self.cache: dict[tuple[str, ...], bool] = {}
        self.best: list[str] | None = None
        # Candidates share most of their frames: each text is parsed, and read by the
        # engine's fast-path test, once.
        self.parsed: dict[str, Parsed] = {}

    def aim(self, target: Signature) -> None:
        self.target = target
        self.needs = target.kinds.intersection(NEEDS)
        # a candidate whose docs snippet surely raises cannot match a target where it did not
        self.docs_run = all(name != "openai-docs" for name, _ in target.raises)
        # nor one where it surely raises or differs, a target where it did neither
        self.docs_same = self.docs_run and "openai-docs" not in target.differs
        # what in_parts compares each part of the client strategies with
        self.parts = [(part, _clients_of(target, part == SDK)) for part in (CLIENTS, SDK)]

    def facts(self, frames: Iterable[str]) -> list[Parsed]:
        parsed = self.parsed
        out = list(map(parsed.get, frames))
        if None in out:  # texts not seen before (a Parsed is never None nor equal to it)
            out = [parsed.get(d) or parsed.setdefault(d, chat_facts.parsed(d)) for d in frames]
        return out  # type: ignore[return-value]

    def fact(self, text: str, payload: object) -> Parsed:
        """The facts of `text`, whose parse_payload the caller has (`payload`)."""
        got = self.parsed.get(text)
        if got is None:
            got = self.parsed[text] = chat_facts.parsed(text, payload)
        return got

    def seed(self, frames: list[str], payloads: list[object]) -> None:
        """Facts of `frames` from their payloads (parse_payload of each), parsed already."""
        for data, payload in zip(frames, payloads, strict=True):
            self.fact(data, payload)

    def _fed(
        self, frames: list[str], part: str = ALL, facts: list[Parsed] | None = None
    ) -> StreamEngine:
        engine = StreamEngine(1, self.tools, part=part, marks=False)
        feed, bulk = engine.feed, engine.bulk
        if facts is None:
            facts = self.facts(frames)
        plains = [got.plain for got in facts]
        i, end = 0, len(frames)
        while i < end:
            taken = bulk(i + 1, plains, i) if plains[i] is not None else 0
            if taken:
                i += taken
                continue
            got = facts[i]  # a Frame only when one is read
            if got.utf8 is None:
                feed(Frame(i + 1, frames[i], got.payload), got.plain, got.problem)
            else:  # bytes that are not UTF-8, as its framing reads them
                feed(sent_frame(i + 1, frames[i], got.payload), got.plain, got.problem)
            i += 1
        return engine

    def signature(self, frames: list[str]) -> Signature:
        self.engine_runs += 1
        engine = self._fed(frames)
        return _analysed(engine, frames, self.tools, self.expect_done, self.keep_calls, self.end)[0]

    def in_parts(self, frames: list[str], facts: list[Parsed] | None = None) -> bool:
        """Does `frames` show the target's signature? Read in parts, each only when those
        before it match: robust and the anomaly rules (the kinds: every anomaly is
        theirs, and robust's calls), the four client strategies, the SDK emulation (the
        costliest)."""
        self.engine_runs += 1
        if facts is None:
            facts = self.facts(frames)
        engine = self._fed(frames, ROBUST, facts)
        robust, _ = self.end.read(engine, self.expect_done)
        if kinds(engine.log.entries()) != self.target.kinds:
            return False
        if self.keep_calls and held(robust) != self.target.calls:
            return False
        for part, want in self.parts:
            others = self._fed(frames, part, facts).others_at_end()
            if clients(robust, _answered(others, frames, self.tools)) != want:
                return False
        return True

    def _tells(self, frames: list[str], facts: list[Parsed] | None) -> bool:
        """Do the candidate's first frames tell the stream's dialect (`tells`)?"""
        assert self.tells is not None
        first = frames[:LOOK]
        known = facts[:LOOK] if facts is not None else self.facts(first)
        # (built as they are read: the first frame most often tells)
        return self.tells(
            sent_frame(n, d, got.payload)
            for n, (d, got) in enumerate(zip(first, known, strict=True), 1)
        )

    def rejects(self, frames: list[str], facts: list[Parsed] | None = None) -> bool:
        """Does the candidate surely show a kind the target lacks, or surely lack one of
        the target's kinds of NEEDS?"""
        # each distinct text's facts once: every fact is a union over the frames
        filed, may = surely(self.facts(set(frames)) if facts is None else facts)
        return not filed <= self.target.kinds or not self.needs <= may

    def __call__(self, frames: list[str], facts: list[Parsed] | None = None) -> bool:
        """`facts`: self.facts(frames), when the caller has them (a field step does)."""
        last = self.last
        if last is not None and (not frames or frames[-1] != last):
            return False  # (no engine pass, no budget: it does not end as the stream did)
        key = tuple(frames)
        ok = self.cache.get(key)
        if ok is None:
            if self.runs >= self.max_runs:
                raise Exhausted
            self.runs += 1
            if self.tells is not None and not self._tells(frames, facts):
                ok = False
            elif len(frames) > LOOK_FIRST:  # the facts of each distinct text, once
                ok = not self.rejects(frames) and self.signature(frames) == self.target
            else:  # a few frames: following their calls costs little beside the engine
                if facts is None:
                    facts = self.facts(frames)
                ok = (  # the cheapest rules first
                    not self.rejects(frames, facts)
                    and not (self.docs_run and docs_raise(facts))
                    and not (self.docs_same and docs_differs(facts))
                    and calls_file(facts) <= self.target.kinds
                    and self.in_parts(frames, facts)
                )
            self.cache[key] = ok
        if ok and (self.best is None or _smaller(frames, self.best)):
            self.best = list(frames)
        return ok


def _smaller(a: list[str], b: list[str]) -> bool:
    """Fewer frames, or as many and fewer characters (counted only then)."""
    if len(a) != len(b):
        return len(a) < len(b)
    return sum(map(len, a)) < sum(map(len, b))


_RAW = object()  # the tree of a frame kept as text (not JSON, or not re-serialized)


def _dumps(tree: object) -> str:
    # orjson's refusal (nesting past 255 levels, a lone surrogate, an int past 64 bits)
    # keeps the frame as sent: its own bytes
    return orjson.dumps(tree).decode()


def _units(tree: object, kind: str, role: str, volatile: bool) -> list[NodePath]:
    """Paths of what one level may remove in one frame (volatile keys only, or none)."""
    out: list[NodePath] = []
    for got, path, node in shape.containers(tree):
        if got != role:
            continue
        if kind == "entries":
            out.extend(path + (i,) for i in range(len(node)))  # type: ignore[arg-type]
            continue
        for key in node:  # type: ignore[attr-defined]
            if ((key in shape.VOLATILE_KEYS) and role in shape.VOLATILE_ROLES) == volatile:
                out.append(path + (key,))
    return out


class _Stream:
    """The current candidate: each frame's tree (or _RAW) and its text."""

    def __init__(self, trees: list[object], texts: list[str]) -> None:
        self.trees = trees
        self.texts = texts

    def keep_frames(self, keep: list[int]) -> None:
        self.trees = [self.trees[i] for i in keep]
        self.texts = [self.texts[i] for i in keep]

    def render(
        self,
        units: list[NodePath],
        spans: list[tuple[int, int, int]],
        kept: int,
        memos: dict[int, dict[int, tuple[object, str, Parsed]]],
        test: _Tester,
        facts: list[Parsed],
    ) -> tuple[list[object], list[str], list[Parsed]]:
        """Trees, texts and the judge's facts keeping only the units whose bits are set
        in `kept` (bit u: unit u), of `units` ((frame, *path), in frame order); `spans`:
        for each frame with units, (frame, its first unit, the bits of all its units from
        there); `facts`: those of the frames as they are. `memos[frame]` keeps the frame's
        pruned tree, text and facts by its kept bits: ddmin asks for the same frame with
        the same units removed again and again (clear them when the trees change)."""
        trees, texts, facts = list(self.trees), list(self.texts), list(facts)
        for i, first, every in spans:
            bits = (kept >> first) & every
            if bits == every:
                continue  # nothing of this frame removed
            memo = memos[i]
            got = memo.get(bits)
            if got is None:
                gone = {
                    units[first + j][1:] for j in range(every.bit_length()) if not bits >> j & 1
                }
                tree = prune(trees[i], gone)
                text = _dumps(tree)
                # the tree is what its text parses to: orjson reads its own writing back
                got = memo[bits] = (tree, text, test.fact(text, tree))
            trees[i], texts[i], facts[i] = got
        return trees, texts, facts

    def edited(
        self, frames: set[int], edit: Callable[[list[object]], None]
    ) -> tuple[list[object], list[str]]:
        """Trees and texts after `edit` changed copies of the trees of `frames`."""
        trees, texts = list(self.trees), list(self.texts)
        for f in frames:
            trees[f] = copy.deepcopy(trees[f])
        edit(trees)
        for f in sorted(frames):
            texts[f] = _dumps(trees[f])
        return trees, texts


def _frame_phase(stream: _Stream, test: _Tester) -> None:
    # ddmin over the texts themselves (no list of positions to map for every candidate);
    # equal texts have equal trees, so the kept texts, matched to the first frames that
    # carry them, give the stream ddmin kept, whichever of equal frames it kept.
    if test.left and len(stream.texts) > LOOK_FIRST:  # narrowed, and still long
        kept, test.left["frames"] = bounded_ddmin(list(stream.texts), test, test.left["frames"])
    else:
        kept = ddmin(list(stream.texts), test)
    keep, j = [], 0
    for i, text in enumerate(stream.texts):
        if j < len(kept) and text == kept[j]:
            keep.append(i)
            j += 1
    stream.keep_frames(keep)


def _findings_phase(
    stream: _Stream, test: _Tester, found: list[Anomaly], robust: list[Call]
) -> None:
    """Before any search, on a long stream: keep the frames that carry its findings (the
    target's analysis names them: core.minimal.carriers), with the shortest prefix or
    suffix they need (narrowed), when that keeps the signature. A quirk in the middle
    of 20,000 calls, or on every fragment, is then found in a few passes, where ddmin
    alone judged ever longer candidates. Judged outside the run budget, as _ends_phase."""
    texts = stream.texts
    n = len(texts)
    if n <= LOOK_FIRST:
        return
    runs, budget = test.runs, test.max_runs
    test.max_runs = runs + 4 * n.bit_length() + 8  # two gallops and bisections
    try:
        seed, aim = carriers(found, robust, n), reach(spans(found, robust))
        kept = narrowed(n, seed, lambda keep: test([texts[i] for i in keep]), aim)
    except Exhausted:  # not narrowed: the searches run as before, unbounded
        kept = None
    finally:
        test.runs, test.max_runs = runs, budget
    if kept is not None:
        stream.keep_frames(kept)
        # what is left is searched within a few analyses' work
        test.left = {"frames": FEED * n, "fields": 3 * FEED * n}


def _ends_phase(stream: _Stream, test: _Tester) -> None:
    """Before ddmin, on a long stream: keep its first k and last k frames alone, for the
    least k of 1, 2, 4, ... that keeps the signature.

    ddmin drops one of n chunks at a time. Where every drop in the middle files a kind
    the target lacks (calls opened one after another: a gap in their indexes), only
    the last chunk before the stream's end can go at each granularity, and ddmin tries
    every chunk before it: cubic in the stream (20,000 single-chunk calls never ended).
    The ends often hold what the signature needs (the first call, the finish, [DONE]);
    when they do not, these few candidates cost about two engine passes over the stream
    (most are rejected without one) and change nothing. They are judged outside the
    budget, so that a budget bounds ddmin's steps as before."""
    texts = stream.texts
    n = len(texts)
    if n <= LOOK_FIRST:
        return
    runs, budget = test.runs, test.max_runs
    test.max_runs = runs + n  # a doubling k asks at most log2(n) questions
    try:
        k = 1
        while 2 * k < n:
            if test(texts[:k] + texts[n - k :]):
                stream.keep_frames([*range(k), *range(n - k, n)])
                return
            k *= 2
    finally:
        test.runs, test.max_runs = runs, budget


def _field_phase(stream: _Stream, test: _Tester, kind: str, role: str, volatile: bool) -> None:
    units = [
        (i,) + path
        for i, tree in enumerate(stream.trees)
        if tree is not _RAW
        for path in _units(tree, kind, role, volatile)
    ]
    if not units:
        return
    every = range(len(units))  # ddmin works on the units' numbers
    # a candidate's kept units as one integer's bits, cut into each frame's bits
    bit = [1 << u for u in every]
    spans = []
    for i, group in groupby(every, lambda u: units[u][0]):
        numbers = list(group)
        spans.append((i, numbers[0], (1 << len(numbers)) - 1))
    memos: dict[int, dict[int, tuple[object, str, Parsed]]] = {
        i: {} for i, _, _ in spans
    }  # the trees stay as they are
    facts = test.facts(stream.texts)
    # ddmin asks about the same units again and again: a repeated question gets the
    # judge's answer without rendering the candidate again (the judge would only find it
    # in its cache, and its best candidate cannot change: it was weighed the first time)
    answers: dict[tuple[int, ...], bool] = {}

    def judged(kept: list[int]) -> bool:
        key = tuple(kept)
        ok = answers.get(key)
        if ok is None:
            mask = sum(map(bit.__getitem__, kept))  # distinct powers of two: their union
            _, texts, known = stream.render(units, spans, mask, memos, test, facts)
            ok = answers[key] = test(texts, known)
        return ok

    if volatile and judged([]):  # usually none of them matters
        kept: list[int] = []
    elif test.left and len(stream.texts) > LOOK_FIRST:
        kept = by_path(units, judged, test.left, len(stream.texts))
    else:
        kept = ddmin(list(every), judged)
    if len(kept) < len(units):
        mask = sum(map(bit.__getitem__, kept))
        stream.trees, stream.texts, _ = stream.render(units, spans, mask, memos, test, facts)


def _join_phase(stream: _Stream, test: _Tester) -> None:
    """Join each fragment to the one before it of the same target: appended to it, or,
    when that changes the signature, that one prepended to this one."""
    for sites in shape.join_sites(stream.trees):
        into = sites[0]
        for site in sites[1:]:

            def backward(trees: list[object], into: Site = into, site: Site = site) -> None:
                holder = shape.at(trees[into[0]], into[1][:-1])
                holder[into[1][-1]] += shape.take(trees, site)

            def forward(trees: list[object], into: Site = into, site: Site = site) -> None:
                holder = shape.at(trees[site[0]], site[1][:-1])
                holder[site[1][-1]] = shape.take(trees, into) + holder[site[1][-1]]

            both = {into[0], site[0]}
            trees, texts = stream.edited(both, backward)
            if test(texts):
                stream.trees, stream.texts = trees, texts
                continue
            trees, texts = stream.edited(both, forward)
            if test(texts):
                stream.trees, stream.texts = trees, texts
            into = site


def _finish_phase(stream: _Stream, test: _Tester) -> None:
    """Move each finish_reason onto the previous chunk of its choice, when that one has none
    (the chunk it leaves is then usually dropped as a whole)."""
    for f, tree in enumerate(stream.trees):
        for i, choice in enumerate(shape.choices(tree)):
            if not isinstance(choice, dict) or choice.get("finish_reason") is None:
                continue
            key = shape.key(choice.get("index"))
            found = next(
                (
                    (g, j)
                    for g in range(f - 1, -1, -1)
                    for j, other in enumerate(shape.choices(stream.trees[g]))
                    if isinstance(other, dict) and shape.key(other.get("index")) == key
                ),
                None,
            )
            if found is None:
                continue
            g, j = found
            if shape.choices(stream.trees[g])[j].get("finish_reason") is not None:
                continue

            def move(trees: list[object], f: int = f, i: int = i, g: int = g, j: int = j) -> None:
                shape.choices(trees[g])[j]["finish_reason"] = shape.choices(trees[f])[i].pop(
                    "finish_reason"
                )

            trees, texts = stream.edited({f, g}, move)
            if test(texts):
                stream.trees, stream.texts = trees, texts


@collector_paused
def minimize(
    frames: list[str],
    tools: list[Any] | None = None,
    keep_fields: bool = False,
    expect_done: bool = True,
    join_fragments: bool = True,
    max_runs: int = MAX_RUNS,
    payloads: list[object] | None = None,
    keep_calls: bool = False,
    end: Ending = ENDED,
    tells: Tells | None = None,
) -> list[str]:
    """The smallest stream found (frames in their original order) with the same signature.

    `frames` are SSE data strings, as sent; `tools` the request's tools (they decide
    name-undeclared); `expect_done` False for a chunk log, which never holds [DONE].
    With `keep_fields`, the VOLATILE keys are kept; with `join_fragments` False, nothing
    is ever changed, only frames, keys and list entries removed. At most `max_runs`
    engine passes. `payloads`, when the caller parsed the frames already, are
    parse_payload of each (never changed: the minimiser shares them). `keep_calls`:
    robust's calls stay as they were (a fixture that asserts them: fragments are joined,
    never dropped). `end`: how the stream ended past its frames, which every candidate
    is read with; `tells`: where the written stream's dialect is told by its frames,
    whether a candidate's still tell it (core/minimal.py).
    """
    frames = list(frames)  # (the caller's list is left as it is)
    # The target's pass reads the frames through the judge's facts, as every candidate does.
    test = _Tester(_UNSET, tools, expect_done, max_runs, keep_calls, end, tells)
    if payloads is not None:
        test.seed(frames, payloads)
    fed = test._fed(frames)
    target, found, robust = _analysed(fed, frames, tools, expect_done, keep_calls, end)
    test.aim(target)
    if frames and frames[-1].strip() == "[DONE]":  # (Frame.is_done: no JSON is [DONE])
        test.last = frames[-1]
    trees, texts = [], []
    dumped: dict[str, tuple[object, str]] = {}  # a stream repeats its texts: each once
    for frame, got in zip(frames, test.facts(frames), strict=True):
        done = dumped.get(frame)
        if done is None:
            # a frame whose bytes are not UTF-8 is kept as sent: never re-serialized
            tree = got.payload if got.utf8 is None else INVALID
            try:
                text = frame if tree is INVALID else _dumps(tree)
            except TypeError:  # nested past what orjson writes (255 levels): kept as sent
                tree, text = _RAW, frame
            # the same string when equal: its facts are known
            done = dumped[frame] = (
                _RAW if tree is INVALID else tree,
                frame if text == frame else text,
            )
        trees.append(done[0])
        texts.append(done[1])
    stream = _Stream(trees, texts)
    try:
        if texts != frames and not test(texts):
            # Re-serializing alone changes what the engine sees: keep the frames as sent.
            stream = _Stream([_RAW] * len(frames), list(frames))
        test.best = list(stream.texts)
        _findings_phase(stream, test, found, robust)
        _ends_phase(stream, test)
        steps: list[tuple[Callable[..., None], tuple[Any, ...]]] = [(_frame_phase, ())]
        if join_fragments:
            steps += [(_join_phase, ()), (_finish_phase, ())]
        steps += [(_field_phase, (kind, role, False)) for kind, role in shape.LEVELS]
        if not keep_fields:
            steps += [(_field_phase, ("keys", role, True)) for role in shape.VOLATILE_ROLES]
        # A step that left a stream as it was leaves it so again: it would ask the judge the
        # same questions, all answered from its cache (no budget spent, no better stream
        # found). The last round mostly repeats steps on the stream they last saw.
        idle: set[tuple[Any, ...]] = set()
        while True:
            before = stream.texts
            for number, (step, args) in enumerate(steps):
                key = (number, tuple(stream.texts))
                if key in idle:
                    continue
                step(stream, test, *args)
                if stream.texts == list(key[1]):
                    idle.add(key)
            if stream.texts == before:
                break
    except Exhausted:  # the smallest passing candidate, maybe mid-phase
        return test.best if test.best is not None else list(frames)
    return stream.texts


__all__ = ["MAX_RUNS", "VOLATILE", "Signature", "minimize", "signature"]
