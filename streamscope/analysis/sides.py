"""One side of `diff`: a file's analysis, with what the analysis does not keep and a diff
reads (each stream's request body, to pair streams by request, and its frames' times,
for the timing shape). The comparing itself is pure (diff.py)."""

from __future__ import annotations

import os
from dataclasses import field

from ..core.contract import Finding
from ..core.engine import StreamResult
from ..core.record import record
from ..inputs import RECORDED, open_input
from ..inputs.encoding import read_request
from .driver import Analysis, analyze

Key = tuple[int, int | None]  # a stream: its exchange, and its response in a session


@record(slots=True)
class Timing:
    """A stream's timing shape, as a user feels it (None: the input keeps no times)."""

    first_call_ns: int | None  # request to the frame of the first call fragment
    fragments: list[int]  # per call, in the robust reading's order
    largest_gap_ns: int | None  # between two frames that follow each other
    frames: int
    # the frame the first call began in (its id and name, or the whole call; None: no call)
    first_call_frame: int | None = None
    timed: bool = True  # every frame keeps its time (an SSE body, a cassette: none does)


@record(slots=True)
class Side:
    source: str
    format: str
    exchange: int | None  # FILE#N: only that exchange
    recorded: bool  # the input holds requests (a recording, a HAR)
    analysis: Analysis
    # stream -> the request that opened it, parsed: its exchange's body, or a session's
    # response's client message (its response.create)
    requests: dict[Key, object] = field(default_factory=dict)
    timings: dict[Key, Timing] = field(default_factory=dict)
    response: int | None = None  # FILE#N.R: only that response of session N

    @property
    def streams(self) -> list[StreamResult]:
        if self.response is None:
            return self.analysis.streams
        return [s for s in self.analysis.streams if s.turn == self.response]

    @property
    def contract(self) -> list[Finding]:
        """The contract findings of what was named (a response: its own and its
        exchange's, not its session's other responses')."""
        found = self.analysis.contract
        return [f for f in found if self.response is None or f.turn in (None, self.response)]


def key(stream: StreamResult) -> Key:
    return (stream.exchange, stream.turn)


def load(
    path: str | os.PathLike[str], exchange: int | None = None, response: int | None = None
) -> Side:
    """Read one side (`response`: of session `exchange`, that response alone). Raises
    RecordingError (bad input) and OSError, as `analyze` does."""
    analysis = analyze(path, exchange)
    recorded = analysis.format in RECORDED
    side = Side(analysis.source, analysis.format, exchange, recorded, analysis, response=response)
    with open_input(path) as source:
        # a cassette's frames all carry their request's time: no time was recorded
        untimed = source.untimed
        for stream in side.streams:
            ex = source.exchange(stream.exchange)
            n = stream.turn or 0  # a session's response: its own request and frames
            ws = ex.session() if n else None
            if ws is not None and n <= len(ws.turns):
                turn = ws.turns[n - 1]
                if side.recorded:
                    side.requests[key(stream)] = turn.request
                side.timings[key(stream)] = _timing(
                    stream, [f.time_ns for f in turn.frames], untimed
                )
                continue
            if side.recorded and ex.request is not None:
                side.requests[key(stream)] = read_request(ex.request).json()
            if stream.turn is None:
                side.timings[key(stream)] = _timing(
                    stream, [f.time_ns for f in ex.frames()], untimed
                )
    return side


def _timing(stream: StreamResult, times: list[int | None], untimed: bool = False) -> Timing:
    if untimed:
        times = [None] * len(times)
    known = [t for t in times if t is not None]
    timed = len(known) == len(times)
    gaps = [b - a for a, b in zip(known, known[1:], strict=False)]
    # (a call with no argument fragment, its arguments whole in its opening frame or
    # none, still began at its frame)
    first = min((c.first_frame for c in stream.tool_calls if c.first_frame > 0), default=None)
    at = times[first - 1] if first is not None and first <= len(times) else None
    return Timing(
        first_call_ns=at,
        fragments=[c.fragments for c in stream.tool_calls],
        largest_gap_ns=max(gaps) if gaps and timed else None,
        frames=len(times),
        first_call_frame=first,
        timed=timed,
    )
