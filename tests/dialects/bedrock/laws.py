"""Bedrock Converse's answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.framing.aws_eventstream import EventStreamDecoder

from .events import body, run
from .test_bedrock import CASES, NOT_HERE, QUIET_EXTRA, streams

DIALECT = "bedrock-converse"
bodies = st.builds(body, streams)
OWN_TESTS: frozenset[str] = frozenset()


# A Bedrock stream is read, and written again by `export --minimal`, as the event stream.
framing = EventStreamDecoder


__all__ = ["CASES", "NOT_HERE", "QUIET_EXTRA", "run"]
