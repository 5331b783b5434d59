"""Plain fragments the engine has taken but not yet applied (see StreamEngine.feed).

Most frames of a long stream add one fragment to a call already under way, or to the
content. Every strategy accepts the first such frame of a call in a few steps
(`fast_args`); later ones for any accepted call are only appended here, and each
strategy takes the whole run at once (`extend`) when anything else happens or the
state is read.
"""

from __future__ import annotations

from dataclasses import field

from ...core.record import record


@record(slots=True)
class Run:
    args: dict[int, list[str]] = field(default_factory=dict)  # per call index, in order
    lasts: dict[int, int] = field(default_factory=dict)  # per call index, its latest frame
    order: list[str] = field(default_factory=list)  # every argument fragment, in order
    content: list[str] = field(default_factory=list)
    # Frames whose call is not the previous fragment's: `interleaved`, counted in bulk.
    switches: list[int] = field(default_factory=list)
    first_switch: int = -1  # the call index the first of them went back to
    left: set[int] = field(default_factory=set)  # call indexes a switch went away from
    cur: int = -1  # the call index of the latest argument fragment
    last: int = 0  # the frame of the latest fragment
    args_last: int = 0  # the frame of the latest argument fragment
