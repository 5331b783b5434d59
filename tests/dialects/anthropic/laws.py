"""Anthropic Messages' answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.framing.sse import SseDecoder

from .events import run, sse
from .test_anthropic import CASES, CHAT_ONLY, QUIET_EXTRA, streams

DIALECT = "anthropic-messages"
framing = SseDecoder
body = sse
bodies = st.builds(sse, streams, st.booleans())  # with `event:` names and without
NOT_HERE = frozenset(CHAT_ONLY)
# dialect-unknown: a stream no dialect claims (test_anthropic.py reads one as Chat);
# dialect-mismatch: a stream whose events are another dialect's than its request names
# (tests/test_dialect_mismatch.py, Anthropic's events on the others' requests and theirs here)
OWN_TESTS = frozenset({"dialect-unknown", "dialect-mismatch"})

__all__ = ["CASES", "QUIET_EXTRA", "run"]
