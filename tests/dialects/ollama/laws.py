"""Ollama's answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.framing.ndjson import LineDecoder

from ..gemini.test_gemini import NOT_HERE as GEMINI_NOT_HERE
from .events import body, run
from .test_ollama import CASES, QUIET_EXTRA, streams

DIALECT = "ollama-chat"
framing = LineDecoder
bodies = st.builds(body, streams)
# Kinds in other dialects' words: Anthropic's, Responses' and Gemini's own.
NOT_HERE = frozenset(k for k in GEMINI_NOT_HERE if k not in CASES) | {
    "parallel-in-one-chunk",
    "partial-args-unterminated",
    "thought-signature",
}
OWN_TESTS: frozenset[str] = frozenset()

__all__ = ["CASES", "QUIET_EXTRA", "run"]
