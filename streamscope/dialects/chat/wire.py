"""Chat Completions' wire: the requests it claims and its final event, `data: [DONE]`."""

from __future__ import annotations

import re

from ...core.record import record
from ..base import ResponseFacts, Watch

# What its requests' paths end with (any prefix before: `/v1`, Azure's deployments).
PATH = "/chat/completions"
ENDPOINTS = ("POST .../chat/completions",)


def claims_request(path: str, body: object) -> bool:
    return path.endswith(PATH)


# What a chunk may carry beside `choices` (a usage-only chunk, an error, a gateway's own
# fields): an event with none but these may be a chunk, whose `[DONE]` then tells.
CHUNK_KEYS = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "system_fingerprint"}
    | {"service_tier", "error", "provider", "citations", "prompt_filter_results"}
    | {"obfuscation", "x_groq"}
)


def may_be_chunk(payload: object) -> bool:
    """Whether an event that tells no dialect may still be a Chat Completions chunk."""
    return isinstance(payload, dict) and payload.keys() <= CHUNK_KEYS


_DONE = re.compile(rb"^data: ?\[DONE\]\r?\n", re.MULTILINE)


def _may_end(data: bytes) -> bool:
    """`b"[DONE]" in data`, at memchr speed on the usual read: the substring search costs
    ~1 ns a byte on JSON events (their `]`s defeat its skips), a second of CPU per GB
    relayed; the `D`s of a read are few (JSON keys are lower case), so each is looked at.
    Past 64 of them the substring search takes the rest of the read."""
    find = data.find
    i = find(b"D")
    looked = 0
    while i >= 0:
        if data[i - 1 : i + 5] == b"[DONE]":
            return True
        looked += 1
        if looked > 64:
            return find(b"[DONE]", i) >= 0
        i = find(b"D", i + 1)
    return False


def final_event(path: str, framing: str | None = None) -> DoneEvent:
    return DoneEvent()


@record(slots=True)
class DoneEvent(Watch):
    """Whether a Chat Completions stream's final event, `data: [DONE]`, was relayed."""

    def seen(self, data: bytes) -> None:
        """Called after each relayed read; cheap unless the read may hold `[DONE]`."""
        if self.relayed:
            return
        if (_may_end(data) and _DONE.search(data)) or (
            self._tail and _DONE.search(self._tail + data[:16])  # split across two reads
        ):
            self.relayed = True
        self._tail = data[-16:]


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """A chunk's `id` and `model`, and the `usage` the last chunk carries (where the
    request asked for it: `stream_options.include_usage`)."""
    facts.read(payload, "id", "model", "usage", ("prompt_tokens",), ("completion_tokens",))
