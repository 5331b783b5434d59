"""`dialect-mismatch`: a stream read in the dialect its request names whose events are
another dialect's (a gateway that relays one API's stream to a client of another).

The stream stays read in the request's dialect: that is how the client that sent the
request reads it, so its strategies show what that client really built. Its first
events are looked at as a stream without a request is told (`of_event`, the first LOOK
frames): when none of them is the request's dialect's and one is another's, that
dialect's robust reading runs beside it over every frame, and the finding at that
frame says how many calls the events hold read in their own dialect. A frame the
request's dialect claims ends the look at once; so does `[DONE]` for Chat Completions,
and an end marker alone tells no other dialect (it holds no calls).
"""

from __future__ import annotations

from ..core.anomalies import AnomalyLog
from ..core.engine import ROBUST, Engine
from ..core.frames import Frame
from ..text import plural, quote
from . import DIALECTS, LOOK, of_event
from .base import Dialect
from .chat import CHAT


class DialectCheck:
    """Fed a stream's frames in order beside its engine (`feed` says whether it still
    wants them); `file` puts the finding in the engine's log before it finishes.

    `told`: the dialect the request names (the one the stream is read in); `request`:
    the request in words (`POST /v1/chat/completions`)."""

    __slots__ = ("told", "request", "exchange", "held", "looked", "other", "at", "engine")

    def __init__(self, told: Dialect, request: str, exchange: int = 1) -> None:
        self.told = told
        self.request = request
        self.exchange = exchange
        self.held: list[Frame] = []  # the frames looked at so far, while undecided
        self.looked = 0
        self.other: Dialect | None = None  # the first other dialect an event tells
        self.at: Frame | None = None  # ... and that event's frame
        self.engine: Engine | None = None  # that dialect's robust reading, once decided

    def feed(self, frame: Frame) -> bool:
        """Look at the next frame; False once the stream is the request's dialect's (no
        more frames are wanted: the caller may drop the check)."""
        engine = self.engine
        if engine is not None:
            engine.feed(frame)
            return True
        if self.looked >= LOOK:
            return False
        self.looked += 1
        if frame.is_done:
            if self.told is CHAT:
                return self._ours()
        elif self.told.claims_event(frame.payload, frame.event):
            return self._ours()
        elif self.other is None:
            name = of_event(frame.payload, frame.event)
            if name is not None:
                self.other, self.at = DIALECTS[name], frame
        self.held.append(frame)
        if self.looked >= LOOK:
            return self._decide()
        return True

    def _ours(self) -> bool:
        self.held = []
        self.other = self.at = None
        self.looked = LOOK
        return False

    def _decide(self) -> bool:
        """The first frames are looked at: another dialect's reading opened on them (True),
        or none told another dialect (False)."""
        self.engine = self._other_reading()
        self.held = []
        return self.engine is not None

    def _other_reading(self) -> Engine | None:
        """The other dialect's robust reading, fed the frames held (None: no other)."""
        if self.other is None:
            return None
        engine = self.other.engine(self.exchange, None, None, part=ROBUST, marks=False)
        for frame in self.held:
            engine.feed(frame)
        return engine

    def file(self, log: AnomalyLog, copy: bool = False) -> None:
        """At the stream's end: `dialect-mismatch` in `log` when the events are another
        dialect's (`copy`: a stream that may grow, whose frames may still come: the
        check is left as it stands)."""
        engine = self.engine
        if engine is None:  # fewer than LOOK frames: the ones there are tell
            engine = self._other_reading()
        elif copy:
            engine = engine.copy()
        other, at = self.other, self.at
        if engine is None or other is None or at is None:
            return
        calls, _ = engine.end()
        names = [quote(c.name, 40) for c in calls if c.name]
        listed = ", ".join(names[:4]) + (", …" if len(names) > 4 else "")
        found = plural(len(calls), "tool call")
        told = self.told.title
        log.add(
            "dialect-mismatch",
            at.number,
            f"the request ({self.request}) is {told}, but the events are {other.title}"
            f"{_what(at)}: read as {other.title}, robust finds {found}"
            + (f" ({listed})" if listed else "")
            + f"; read here as {told}, as the request's client reads them",
        )


def _what(frame: Frame) -> str:
    """The event in a few words, ` (an event "message_start")`; "" when it names none."""
    p = frame.payload
    kind = p.get("type") if isinstance(p, dict) else None
    name = kind if isinstance(kind, str) else frame.event
    return f" (an event {quote(name, 40)})" if name else ""
