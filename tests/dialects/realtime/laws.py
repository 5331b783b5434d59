"""The OpenAI Realtime API's answers to the dialect laws (tests/dialects/test_laws.py).

A turn's frames are a session's server messages; the laws read them as a client logs a
session's server events, one JSON line each (the NDJSON framing: the same frames, a line
each, with no event names), which is also how a saved file of them is read."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.framing.ndjson import LineDecoder

from .events import body, run
from .test_realtime import CASES, NOT_HERE, QUIET_EXTRA, streams

DIALECT = "openai-realtime"
framing = LineDecoder
bodies = st.builds(body, streams)
OWN_TESTS: frozenset[str] = frozenset()

__all__ = ["CASES", "NOT_HERE", "QUIET_EXTRA", "body", "run"]
