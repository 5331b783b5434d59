"""The scan's summary, folded from rows one file at a time: its size does not grow with
the number of files (counts, and the first few references of each kind)."""

from __future__ import annotations

from collections import Counter
from dataclasses import field

from ..core.anomalies import INFO
from ..core.links import link, pasteable, stream_link
from ..core.record import record
from ..core.verdict import exchange_failure, fails
from ..text import plural, times, visible
from .rows import FileRows

REFS = 3  # references kept per kind and group: enough to open a few with `replay`
LISTED = 50  # --strict findings listed in full; the rest are counted


@record(slots=True)
class Group:
    """One provider host and model."""

    exchanges: int = 0
    streams: int = 0
    kinds: Counter = field(default_factory=Counter)  # streams with the kind
    contract: Counter = field(default_factory=Counter)  # findings of the kind
    refs: dict[str, list[str]] = field(default_factory=dict)
    places: Counter = field(default_factory=Counter)  # each kind's links, listed or not
    last: dict[str, str] = field(default_factory=dict)  # each kind's latest link


@record(slots=True)
class Summary:
    files: int = 0
    unreadable: list[str] = field(default_factory=list)  # one line each
    unreadable_files: list[str] = field(default_factory=list)  # whose line it is
    notes: list[str] = field(default_factory=list)  # paths that were not files, changed files
    groups: dict[tuple[str, str], Group] = field(default_factory=dict)
    severity: dict[str, str] = field(default_factory=dict)
    failing: list[str] = field(default_factory=list)  # --strict: what fails it
    failing_count: int = 0
    from_store: int = 0  # files unchanged since the last scan (rows read back)
    # --kind: every finding of this kind, (file, exchange, turn, frame, link, count,
    # message); this list alone grows with the files, one entry per finding of the kind
    kind: str | None = None
    found: list[tuple[str, int, int, int, str, int, str]] = field(default_factory=list)

    def add(self, rows: FileRows) -> None:
        self.files += 1
        if rows.error is not None:
            self.unreadable.append(rows.error)
            self.unreadable_files.append(rows.file)
            return
        per_exchange = {}
        frames = {(e.exchange, e.turn): e.frames for e in rows.exchanges}
        linked: set[tuple[str, int, int | None]] = set()
        for e in rows.exchanges:
            failure = exchange_failure(e.stream, e.status, e.ended)
            if failure is not None:
                self._fail(f"{pasteable(link(rows.file, e.exchange))}: failed: {failure}")
            g = self.groups.setdefault((e.host or "(no host)", e.model or "(no model)"), Group())
            per_exchange[e.exchange] = g
            g.exchanges += e.turn in (None, 1)  # a session has a row per response
            g.streams += e.stream
            for kind in dict.fromkeys(e.anomaly_kinds):
                g.kinds[kind] += 1
        for a in rows.anomalies:  # each kind's link: to the frame it is first seen at
            self.severity[a.kind] = a.severity
            at = stream_link(
                rows.file, a.exchange, a.turn, a.frame, frames.get((a.exchange, a.turn), 0)
            )
            if a.exchange in per_exchange and (a.kind, a.exchange, a.turn) not in linked:
                linked.add((a.kind, a.exchange, a.turn))  # an exchange's first, once
                self._ref(per_exchange[a.exchange], a.kind, at)
            self._found(a.kind, rows.file, a.exchange, a.turn, a.frame, at, a.count, a.message)
            if fails(a.severity, a.cut_by_client):
                self._fail(f"{pasteable(at)}: {a.kind}: {a.message}")
        for c in rows.contract:
            self.severity[c.kind] = c.severity
            g = per_exchange.get(c.exchange) or self.groups.setdefault(
                ("(no host)", "(no model)"), Group()
            )
            g.contract[c.kind] += 1
            at = link(rows.file, c.exchange, response=c.turn)
            self._ref(g, c.kind, at)
            self._found(c.kind, rows.file, c.exchange, c.turn, 0, at, 1, c.message)
            if fails(c.severity):
                self._fail(f"{pasteable(at)}: {c.kind}: {c.message}")

    def _found(
        self,
        kind: str,
        file: str,
        exchange: int,
        turn: int | None,
        frame: int,
        at: str,
        count: int,
        message: str,
    ) -> None:
        if kind == self.kind:
            self.found.append((file, exchange, turn or 0, frame, at, count, message))

    def kind_lines(self) -> list[str]:
        """--kind: each finding of the kind, in file order: its link (shell-quoted, to
        paste), how often the stream had it as inspect says it (`KIND ×4`), its message."""
        return [
            f"{pasteable(at)}  {times(kind, n)}  {visible(m)}"
            for *_, at, n, m in sorted(self.found)
            for kind in [self.kind or ""]
        ]

    def unreadable_named(self, files: set[str]) -> list[str]:
        """The lines of the unreadable files among `files`."""
        return [
            x for f, x in zip(self.unreadable_files, self.unreadable, strict=True) if f in files
        ]

    def _ref(self, g: Group, kind: str, ref: str) -> None:
        # a place's findings of a kind come together (rows are in exchange order), so a
        # link that is not the kind's latest is a new place: counted, not kept
        refs = g.refs.setdefault(kind, [])
        if g.last.get(kind) == ref or ref in refs:
            return
        g.last[kind] = ref
        g.places[kind] += 1
        if len(refs) < REFS:
            refs.append(ref)

    def _fail(self, line: str) -> None:
        self.failing_count += 1
        if len(self.failing) < LISTED:
            self.failing.append(line)

    @property
    def exchanges(self) -> int:
        return sum(g.exchanges for g in self.groups.values())

    @property
    def streams(self) -> int:
        return sum(g.streams for g in self.groups.values())

    def lines(self, seconds: float | None = None) -> list[str]:
        """The summary as text lines, every file-derived string made safe to print."""
        took = f" in {seconds:.1f} s" if seconds is not None else ""
        read = self.files - len(self.unreadable)
        head = f"scanned {plural(self.files, 'file')}{took}: {read} read"
        if self.from_store:
            head += f" ({self.from_store} unchanged since the last scan)"
        out = [
            f"{head}, {len(self.unreadable)} unreadable; "
            f"{plural(self.exchanges, 'exchange')}, {plural(self.streams, 'stream')}"
        ]
        order = sorted(self.groups.items(), key=lambda kv: (-kv[1].streams, kv[0]))
        for (host, model), g in order:
            # an info contract finding (a client's id filled in, the link kept) is no break
            breaks = sum(n for k, n in g.contract.items() if not self._kept(k))
            out.append("")
            out.append(
                f"{visible(host)}  {visible(model)}: {plural(g.exchanges, 'exchange')}, "
                f"{plural(g.streams, 'stream')}, {plural(breaks, 'contract break')}"
            )
            for kind, n in sorted(g.kinds.items(), key=lambda kv: (-kv[1], kv[0])):
                share = f"{100 * n / g.streams:.1f}%" if g.streams else "-"
                # the count padded, so the shares line up under each other
                out.append(self._kind_line(g, kind, f"{plural(n, 'stream'):<11} {share:>6}"))
            for kind, n in sorted(g.contract.items(), key=lambda kv: (-kv[1], kv[0])):
                word = "finding" if self._kept(kind) else "break"
                out.append(self._kind_line(g, kind, f"{plural(n, word)} (contract)"))
        if self.unreadable or self.notes:
            out.append("")
            out += [f"unreadable: {visible(line)}" for line in self.unreadable]
            out += [visible(line) for line in self.notes]
        return out

    def _kept(self, kind: str) -> bool:
        """A contract kind whose findings say the conversation held (info)."""
        return self.severity.get(kind) == INFO

    def _kind_line(self, g: Group, kind: str, counts: str) -> str:
        listed = g.refs.get(kind, [])
        refs = " ".join(pasteable(r) for r in listed)
        if g.places[kind] > len(listed):
            refs += f" +{g.places[kind] - len(listed)} more"
        return f"  {kind:<28} {self.severity.get(kind, ''):<8} {counts:<22} {refs}"

    def failing_lines(self) -> list[str]:
        out = [visible(line) for line in self.failing]
        if self.failing_count > len(self.failing):
            out.append(f"... and {self.failing_count - len(self.failing)} more")
        return out
