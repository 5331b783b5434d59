"""The cases: each bundled sample whose stream assembles calls, named by its anomaly kind.

A case is served as a recording of two exchanges (`served`): the sample's stream with
calls, then a stream with only text in the same dialect (the sample's own next exchange
where it has one, else another sample's), so whatever a correct client sends next, it
gets a final answer and stops. The stream answers any request of its API unchanged, so
what a correct client sends back is determined by the stream alone: robust's calls.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

import orjson

from ..analysis import analyze
from ..bundled import samples_folder
from ..core.calls import Call
from ..core.engine import StreamResult
from ..core.record import record
from ..dialects import DIALECTS
from ..providers import VERTEX_AI, vertex_request
from ..text import quote

CLEAN = "clean"  # a case whose stream has no anomaly: the API's own shape
VERTEX = VERTEX_AI  # Gemini's partialArgs streams come from Vertex AI alone
_RANK = {"error": 0, "warning": 1, "info": 2}
# a stream that did not end as the API ends one cannot go back as it is
WHOLE = ("done", "finish-without-done")


@record(frozen=True, slots=True)
class Case:
    name: str  # the anomaly kind it stands for (its most severe, first seen); CLEAN: none
    sample: str  # the bundled sample's file name
    exchange: int  # the sample's exchange whose stream it serves
    dialect: str
    kinds: tuple[str, ...]  # every anomaly kind of the stream, most severe first
    frame: int  # where the named kind is first seen (1: a clean stream's first frame)
    reference: str  # the public reports the sample stands for (the samples' README)
    calls: tuple[Call, ...]  # what robust assembles: what a correct client sends back
    # why the right behaviour is to refuse (the calls cannot go back as streamed); None:
    # a correct client sends `calls` back
    refuse: str | None
    final: tuple[str, int]  # the sample and exchange of the text that answers next
    requested: bool = True  # the sample holds its request (a saved body answers any API)
    # the one API of its dialect whose streams have this shape (VERTEX: Gemini's
    # partialArgs are Vertex AI's alone); None: any
    only_on: str | None = None

    @property
    def id(self) -> str:
        """The case's name on the card: its kind, and its sample where the kind alone is
        not unique."""
        return f"{self.name} ({self.sample_name})"

    @property
    def sample_name(self) -> str:
        return self.sample.split(".", 1)[0]

    def matches(self, only: str) -> bool:
        """Whether `--only` names it: one of its kinds, or its sample."""
        return only in self.kinds or only == self.name or only == self.sample_name


def references(readme: str) -> dict[str, str]:
    """Each sample's `Source:` in the samples' README, by file name."""
    out: dict[str, str] = {}
    for bullet in re.split(r"\n(?=- `)", readme):
        names = re.findall(r"`([^`/]+\.(?:jsonl|sse|ndjson))`", bullet.split(":", 1)[0])
        source = re.search(r"Sources?:\s*(.*)", bullet, re.S)
        if not names or source is None:
            continue
        text = " ".join(source.group(1).split())
        text = re.split(r"\s#+ ", text)[0]  # (a bullet before a heading)
        # the citations, not the notes beside them ("The base URL is a placeholder")
        kept = [
            sentence
            for sentence in re.split(r"(?<=\.)\s+(?=[A-Z])", text)
            if re.search(r"#\d|/|\bPR\b|commit|docs", sentence)
        ]
        text = " ".join(kept) or text
        for name in names:
            out[name] = text
    return out


def _named(s: StreamResult) -> tuple[str, tuple[str, ...], int]:
    ranked = sorted(s.anomalies, key=lambda a: (_RANK.get(a.severity, 3), a.frame))
    kinds = tuple(dict.fromkeys(a.kind for a in ranked))
    if not ranked:
        return CLEAN, (), 1
    return ranked[0].kind, kinds, max(ranked[0].frame, 1)


def _refusal(s: StreamResult) -> str | None:
    if s.ended not in WHOLE:
        return f"the stream ended {s.ended}: its calls are not whole"
    # robust repairs (and reports) exactly the calls whose arguments do not parse
    broken = [c for c, repair in zip(s.tool_calls, s.repairs, strict=False) if repair is not None]
    if not broken:
        return None
    names = ", ".join(quote(c.name) for c in broken)
    said = f"the arguments of {names} do not parse"
    if len(broken) < len(s.tool_calls):
        said += "; the other calls go back unchanged"
    return said


def _text_only(s: StreamResult | None, told: str) -> bool:
    return s is not None and s.dialect == told and not s.tool_calls and s.ended in WHOLE


def cases(folder: str | None = None) -> tuple[list[Case], list[str]]:
    """Every case of the bundled samples, by dialect in the registry's order then by
    sample; and the samples that are not cases, each with why."""
    folder = folder or samples_folder()
    if folder is None:
        return [], ["the bundled samples are missing from this installation"]
    refs: dict[str, str] = {}
    readme = os.path.join(folder, "README.md")
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            refs = references(f.read())
    found: list[tuple[str, StreamResult, StreamResult | None, bool, str | None]] = []
    skipped: list[str] = []
    finals: dict[str, tuple[str, int]] = {}  # a dialect's first text answer
    for name in sorted(os.listdir(folder)):
        if name.endswith(".md") or name.startswith("streamscope-"):
            continue
        analysis = analyze(os.path.join(folder, name))
        if any(s.turn is not None for s in analysis.streams):
            skipped.append(f"{name}: a WebSocket session (not yet served as a case)")
            continue
        by_ex = {s.exchange: s for s in analysis.streams}
        first = next((s for s in analysis.streams if s.tool_calls), None)
        for s in analysis.streams:
            nxt = by_ex.get(s.exchange + 1)
            if s.tool_calls and _text_only(nxt, s.dialect):
                finals.setdefault(s.dialect, (name, s.exchange + 1))
        if first is None:
            skipped.append(f"{name}: no stream assembles a call")
            continue
        info = next((i for i in analysis.exchanges if i.exchange == first.exchange), None)
        url = info.url if info is not None else None
        found.append(
            (name, first, by_ex.get(first.exchange + 1), analysis.format == "recording", url)
        )
    out: list[Case] = []
    for name, s, nxt, requested, url in found:
        final = (name, s.exchange + 1) if _text_only(nxt, s.dialect) else finals.get(s.dialect)
        if final is None:
            skipped.append(f"{name}: no sample of its dialect answers with text")
            continue
        kind, kinds, frame = _named(s)
        out.append(
            Case(
                kind,
                name,
                s.exchange,
                s.dialect,
                kinds,
                frame,
                refs.get(name, ""),
                tuple(s.tool_calls),
                _refusal(s),
                final,
                requested,
                VERTEX if vertex_request(url) else None,
            )
        )
    order = list(DIALECTS)
    out.sort(key=lambda c: (order.index(c.dialect) if c.dialect in order else len(order), c.sample))
    return out, skipped


def select(
    all_cases: Iterable[Case], dialects: Iterable[str] = (), only: Iterable[str] = ()
) -> list[Case]:
    """The cases of `dialects` (all: none given) that `only` names (all: none given)."""
    want, names = set(dialects), list(only)
    return [
        c
        for c in all_cases
        if (not want or c.dialect in want) and (not names or any(c.matches(n) for n in names))
    ]


def joined(parts: Sequence[tuple[str, int]]) -> bytes:
    """One recording of exchanges of other inputs, (path, exchange) each, in order and
    numbered from 1 (each as `export --format recording` writes it; the first header
    stands for all)."""
    from ..export.fixtures import export

    lines: list[bytes] = []
    for n, (path, exchange) in enumerate(parts, 1):
        for i, line in enumerate(export(path, "recording", exchange).data.splitlines()):
            if i == 0:
                if not lines:
                    lines.append(line + b"\n")
                continue
            record = orjson.loads(line)
            record["exchange"] = n
            lines.append(orjson.dumps(record) + b"\n")
    return b"".join(lines)


def served(case: Case, folder: str) -> bytes:
    """The recording `serve` plays for a case: the sample's stream as exchange 1, the text
    that answers next as exchange 2."""
    name, number = case.final
    return joined(
        [(os.path.join(folder, case.sample), case.exchange), (os.path.join(folder, name), number)]
    )
