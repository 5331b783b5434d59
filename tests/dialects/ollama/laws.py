"""Ollama's answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.inputs.reads import LineDecoder

from ..gemini.test_gemini import NOT_HERE as GEMINI_NOT_HERE
from .events import body, run
from .test_ollama import CASES, QUIET_EXTRA, streams


class framing:  # noqa: N801 (a decoder class, as the other adapters name theirs)
    """NDJSON read by read: whole lines to the chunk log's decoder."""

    def __init__(self) -> None:
        self.decoder, self.held = LineDecoder(), b""

    def feed(self, data: bytes, time_ns: int | None = None) -> list:
        *whole, self.held = (self.held + data).split(b"\n")
        return [f for line in whole for f in self.decoder.feed(line + b"\n", time_ns)]

    def finish(self):
        if self.held:
            self.decoder.feed(self.held)
        return self.decoder.finish()


DIALECT = "ollama-chat"
bodies = st.builds(body, streams)
# Kinds in other dialects' words: Anthropic's, Responses' and Gemini's own.
NOT_HERE = frozenset(k for k in GEMINI_NOT_HERE if k not in CASES) | {
    "parallel-in-one-chunk",
    "partial-args-unterminated",
    "thought-signature",
}
OWN_TESTS: frozenset[str] = frozenset()

__all__ = ["CASES", "QUIET_EXTRA", "run"]
