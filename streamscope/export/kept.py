"""What an export keeps of a stream beside its frames (and `--minimal` beside its
findings): how it ended past its last frame, and the dialect its frames tell.

An export whose frames reach the stream's end ends as the stream did: after a body cut
inside an event (its framing's truncation), the bytes after its last frame, as received,
follow the frames written (`Tail`), and a recording keeps the recorded end's reason and
error (or, where the recording stops before the end line, no end line), so `inspect`
reads `stream-truncated`, and who cut the stream, on the export too. Every candidate of
a `--minimal` search is read with that end (core.minimal.Ending). Where the written
stream cannot end so (a chunk log of an SSE body, a compressed body written decoded, the
recorded end in a bare body), the end is left out of the search and of the file, and a
note says so.

Where the written stream's dialect is told by its frames (a saved body, or a recording
whose request tells none), every candidate's frames must tell the one the stream's own
frames tell (core.minimal.Tells): the frames that told it (a Responses event's
`sequence_number`) stay, and a saved body still reads as the kind of file it is.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from ..core.codings import Undecodable
from ..core.engine import UNFINISHED
from ..core.frames import Frame, Truncation
from ..core.minimal import ENDED, Ending, Tells
from ..core.record import record
from ..dialects import of_frames
from ..inputs.sniff import opens


@record(frozen=True, slots=True)
class Tail:
    """A body's unfinished end, as received, for the frames written before it."""

    after: bytes  # every byte after the stream's last frame
    # where no frame is kept: the bytes before its first (an array's `[`), then the
    # unfinished event (an array's separator would open no array)
    alone: bytes

    def written(self, pieces: list[bytes]) -> list[bytes]:
        """The pieces a stream is written in, ending as the body did."""
        return [*pieces, self.after] if pieces else [self.alone]


def tail_of(
    body: bytes, bounds: tuple[int, int] | None, truncation: Truncation | None
) -> Tail | None:
    """The unfinished end of `body`, whose frames span `bounds` (the first's start, the
    last's end; None: it has none); None where the framing cut nothing, or where what is
    cut is the Content-Encoding's stream (a decoded body cannot end inside it)."""
    if truncation is None or isinstance(truncation, Undecodable):
        return None
    if bounds is None:
        return Tail(body, body)
    first, last = bounds
    return Tail(body[last:], body[:first] + body[truncation.offset :])


@record(frozen=True, slots=True)
class Kept:
    """How an export ends: what every candidate of a search is read with, the bytes it
    ends with, and why what it cannot keep is left out (a line each)."""

    ending: Ending = ENDED
    tail: Tail | None = None
    notes: tuple[str, ...] = ()

    @property
    def end_line(self) -> bool:
        """Does the recording written hold an end line (not where the source stops before
        the exchange's)?"""
        return self.ending.reason != UNFINISHED


def kept(
    truncation: Truncation | None,
    tail: Tail | None,
    recorded_end: tuple[str, str | None] | None,
    same_framing: bool,
    recording: bool,
) -> Kept:
    """How an export of a body that ended so (`truncation`, its `tail`; the recorded end
    line's `(reason, error)`, None: a saved body) ends, written in the body's own framing
    or not (`same_framing`), as a `recording` or a bare body."""
    notes = []
    carried = tail if same_framing else None
    if truncation is not None and carried is None:
        how = "decoded" if tail is None else "in another framing"
        notes.append(
            f"{truncation.describe()}; the stream written ({how}) ends after its last frame"
        )
    reason = error = None
    if recorded_end is not None and recording:
        reason, error = recorded_end
    elif recorded_end is not None and recorded_end[0] != "complete":
        notes.append(
            f"the recorded end ({recorded_end[0]}) is not in a bare body: --format recording "
            "keeps it"
        )
    ending = Ending(truncation if carried is not None else None, reason, error)
    return Kept(ending, carried, tuple(notes))


def tells(frames: list[Frame], saved: str | None) -> Tells:
    """Do a candidate's frames tell the dialect `frames` (the stream's first) tell, and,
    saved in framing `saved` (None: a recording's body), open the file as `frames` do (a
    chunk log's first line must be an event: inputs/sniff.opens)?"""
    want = of_frames(frames)
    # (a file its first frame opens stays one its first frame opens)
    opener = saved if saved is not None and frames and opens(saved, frames[0].payload) else None

    def same(candidate: Iterable[Frame]) -> bool:
        it = iter(candidate)
        head = next(it, None)
        if head is None:
            return want is None
        if opener is not None and not opens(opener, head.payload):
            return False
        return of_frames(itertools.chain((head,), it)) == want

    return same
