"""The OpenAI Responses API's answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.framing.sse import SseDecoder

from .events import run, sse
from .test_responses import CASES, NOT_HERE, QUIET_EXTRA, streams

DIALECT = "openai-responses"
framing = SseDecoder
body = sse
bodies = st.builds(sse, streams, st.booleans())  # with `event:` names and without
OWN_TESTS: frozenset[str] = frozenset()

__all__ = ["CASES", "NOT_HERE", "QUIET_EXTRA", "run"]
