"""Gemini's answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from functools import partial

from hypothesis import strategies as st

from streamscope.framing.sse import SseDecoder

from .events import run, sse
from .test_gemini import CASES, NOT_HERE, QUIET_EXTRA, streams

DIALECT = "gemini"
framing = SseDecoder
body = sse
bodies = st.builds(partial(sse, named=False), streams)  # Gemini names no event
OWN_TESTS: frozenset[str] = frozenset()

__all__ = ["CASES", "NOT_HERE", "QUIET_EXTRA", "run"]
