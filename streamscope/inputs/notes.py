"""What a HAR or a cassette cannot tell, said in a note on every file read from one (and
kept by a recording exported from one): its own module, so telling a recording's times
needs neither reader imported."""

from __future__ import annotations

HAR_TIMING = (
    "a HAR keeps no per-read timing: each body is cut into its SSE events, spread over the "
    "entry's receive time (times are approximate)"
)
HAR_END = "a HAR does not say how a transfer ended: entries are read as complete"
CASSETTE_TIMING = (
    "a cassette keeps no reads and no times: each body is one read (its chunking and "
    "timing were not recorded)"
)
CASSETTE_END = "a cassette does not say how a transfer ended: interactions are read as complete"
