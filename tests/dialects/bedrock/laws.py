"""Bedrock Converse's answers to the dialect laws (tests/dialects/test_laws.py)."""

from __future__ import annotations

from hypothesis import strategies as st

from streamscope.core.frames import Frame, Truncation
from streamscope.framing import of_bytes
from streamscope.framing.aws_eventstream import EventStreamDecoder
from streamscope.framing.sse import SseDecoder

from .events import body, run
from .test_bedrock import CASES, NOT_HERE, QUIET_EXTRA, streams

DIALECT = "bedrock-converse"
bodies = st.builds(body, streams)
OWN_TESTS: frozenset[str] = frozenset()


class framing:  # noqa: N801 (the laws call it as they call a decoder class)
    """The event stream, or SSE: `export --minimal` writes a stream anew as SSE events
    named by their `:event-type` (the event stream framing has no writer), and the laws
    read that back. Told by the first bytes, as `inspect` tells a saved body."""

    def __init__(self) -> None:
        self.head = b""
        self.inner: EventStreamDecoder | SseDecoder | None = None

    def _pick(self) -> EventStreamDecoder | SseDecoder:
        self.inner = (
            EventStreamDecoder() if of_bytes(self.head) == "aws-eventstream" else SseDecoder()
        )
        return self.inner

    def feed(self, data: bytes, time_ns: int | None = None) -> list[Frame]:
        if self.inner is None:
            self.head += data
            if len(self.head) < 12:
                return []
            data, self.head = self.head, b""
            return self._pick().feed(data, time_ns)
        return self.inner.feed(data, time_ns)

    def flush(self) -> list[Frame]:
        if self.inner is None:
            head, self.head = self.head, b""
            return [*self._pick().feed(head, None), *self.inner.flush()] if head else []
        return self.inner.flush()

    def finish(self) -> Truncation | None:
        return None if self.inner is None else self.inner.finish()


__all__ = ["CASES", "NOT_HERE", "QUIET_EXTRA", "run"]
