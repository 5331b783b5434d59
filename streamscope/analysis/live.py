"""`record --live`: each finding of a recording being written, said once, when it is known.

The recording's appended lines are read as `replay --follow` reads them (RecordingPass,
one pass, no line read twice): an open stream's engine is fed each frame as its chunk
line lands, so a rule that fires mid-stream is said then; the end-of-stream rules when
the stream's end line comes; a WebSocket session's turns when it ends; the contract's
findings (across exchanges) as soon as a request carries the calls back. Only what the
recording holds is read (its secrets already masked), and every line is made safe by
text.py before a terminal sees it.

A finding said live is a first sighting: a count (`x4`), a severity a client's cut
lowers, or an entry a later frame takes back are for the summary `record` prints at the
end, which stays the whole verdict.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from ..core.anomalies import Anomaly
from ..core.contract import Finding
from ..core.record import record
from ..inputs.masking import FileMask
from ..recording.reader import RecordingReader
from ..text import cut, visible
from .driver import RecordingPass

_WIDTH = 200  # a finding's message, cut to this many characters


@record(frozen=True, slots=True)
class LiveLine:
    """One finding as `record --live` says it."""

    exchange: int
    severity: str
    kind: str
    message: str
    frame: int | None = None  # None: a contract finding (about a request, not a frame)
    turn: int | None = None  # a WebSocket session's response

    def text(self) -> str:
        where = f"exchange {self.exchange}"
        if self.turn is not None:
            where += f" response {self.turn}"
        where += f" frame {self.frame}" if self.frame is not None else " request"
        return visible(f"{where} {self.severity} {self.kind}: {cut(self.message, _WIDTH)}")


class LiveFindings:
    """The findings of the recording at `path` as it grows: `update` reads what was
    appended since the last and gives the findings not said before."""

    def __init__(self, path: str) -> None:
        self.reader = RecordingReader(path, raw=True, tolerant=True)
        self.mask = FileMask()  # its lines as every face reads them (inputs/masking.py)
        self.seen = RecordingPass()
        self._said: set[tuple[object, ...]] = set()
        self._checked_on: tuple[int, int] | None = None

    def update(self, final: bool = False) -> list[LiveLine]:
        """The findings first known since the last update (`final`: the recording is
        whole, so every request's dialect is told and the contract is checked last)."""
        seen, out = self.seen, []
        touched: set[int] = set()
        lines = self.mask.feed(self.reader.more())
        if final:  # (an exchange held to its end that never came: read as it is)
            lines = itertools.chain(lines, self.mask.finish())
        for _, d in lines:
            seen.feed(d)
            if d["type"] != "header":
                touched.add(d["exchange"])
        for ex in sorted(touched):
            live = seen.live.get(ex)
            if live is not None and live.engine is not None:  # open: what it found so far
                out += self._anomalies(ex, None, live.engine.log.entries())
            elif ex in seen.streams:
                out += self._anomalies(ex, None, seen.streams[ex].anomalies)
            elif ex in seen.sessions:
                for result in seen.sessions[ex][1]:
                    out += self._anomalies(ex, result.turn, result.anomalies)
        checked_on = (len(seen.streams) + len(seen.sessions), len(seen.conversations))
        if final or checked_on != self._checked_on:
            self._checked_on = checked_on
            out += self._findings(seen.contract(final=final).findings)
        return out

    def _anomalies(self, ex: int, turn: int | None, found: Iterable[Anomaly]) -> list[LiveLine]:
        out = []
        for a in found:
            key = ("anomaly", ex, turn, a.kind, a.choice, repr(a.index))
            if key not in self._said:
                self._said.add(key)
                out.append(LiveLine(ex, a.severity, a.kind, a.text(), a.frame, turn))
        return out

    def _findings(self, found: Iterable[Finding]) -> list[LiveLine]:
        out = []
        for f in found:
            key = ("contract", f.exchange, f.turn, f.kind, repr(f.call), f.stream, f.message)
            if key not in self._said:
                self._said.add(key)
                out.append(LiveLine(f.exchange, f.severity, f.kind, f.message, None, f.turn))
        return out


__all__ = ["LiveFindings", "LiveLine"]
