"""Chat Completions' answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import strategies as st

from streamscope.framing.sse import SseDecoder

from ...helpers import run
from ..anthropic.test_anthropic import CHAT_ONLY
from ..gemini.test_gemini import NOT_HERE as GEMINI_NOT_HERE
from .test_anomalies import CASES
from .test_anomalies import NEGATIVE_EXTRA as QUIET_EXTRA
from .test_fast_path import PIECES

DIALECT = "chat-completions"
framing = SseDecoder


def body(events: list[Any], done: bool = True) -> bytes:
    """An SSE body: `data:` per chunk (a str sent as it is), then `data: [DONE]`."""
    datas = [e.encode() if isinstance(e, str) else orjson.dumps(e) for e in events]
    return b"".join(b"data: " + d + b"\n\n" for d in [*datas, *([b"[DONE]"] if done else [])])


bodies = st.builds(body, st.lists(PIECES, max_size=25), st.booleans())
# Kinds of other dialects' words, never on a Chat Completions stream: those Gemini's tests
# list as Anthropic's and Responses' (block, message, item, sequence), less Chat's own.
NOT_HERE = frozenset(GEMINI_NOT_HERE - CHAT_ONLY - set(CASES))
# Kinds with tests of their own (test_anomalies.py) instead of a case.
OWN_TESTS = frozenset({"args-double-encoded", "invalid-utf8", "frame-invalid"})

__all__ = ["CASES", "QUIET_EXTRA", "run"]
