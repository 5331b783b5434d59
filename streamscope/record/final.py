"""A stream's final event: a client that leaves once it was relayed ended a `complete` stream.

Chat Completions streams end with `data: [DONE]`, Anthropic Messages streams with
`event: message_stop`. The check runs after every relayed read (the proxy's hot path, and
the in-process recorder's), so each marker is looked for in few bytes, and an exchange
looks only for its own API's: one whose request carries `anthropic-version` (every client
of the Anthropic API sends it) for `message_stop`, every other one for `[DONE]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_DONE = re.compile(rb"^data: ?\[DONE\]\r?\n", re.MULTILINE)
# The field line at the start of the read's last event (re.match at its `event:`).
_MESSAGE_STOP = re.compile(rb"^event: ?message_stop\r?\n", re.MULTILINE)


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


def _is_message_stop(data: bytes, i: int) -> bool:
    """Whether the `event:` at `i` starts the line `event: message_stop`: a slice compared
    first, so the regex (which checks where the line starts and ends) runs once a stream."""
    return b"message_stop" in data[i + 6 : i + 20] and _MESSAGE_STOP.match(data, i) is not None


@dataclass(slots=True)
class FinalEvent:
    """Whether a body's final event (SSE `data: [DONE]`), or its whole body, was relayed."""

    relayed: bool = False
    _tail: bytes = b""

    def seen(self, data: bytes) -> None:
        """Called after each relayed read; cheap unless the read may hold `[DONE]`."""
        if self.relayed:
            return
        if (_may_end(data) and _DONE.search(data)) or (
            self._tail and _DONE.search(self._tail + data[:16])  # split across two reads
        ):
            self.relayed = True
        self._tail = data[-16:]


class MessageStop(FinalEvent):
    """The same for an Anthropic Messages stream, whose final event is `event: message_stop`.

    The final event is the last of its read and every Anthropic event has an `event:`
    line, so only the read's last one is looked at, found by a search back from the end:
    a few hundred bytes, however long the read. `_tail` ends with the bytes before this
    read (the previous read itself, not a copy, unless it was shorter than the line), for
    an `event:` line cut across reads.
    """

    __slots__ = ()

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        last, i = data, data.rfind(b"event:")
        if i < 0 and self._tail:  # no line of its own: the final one may have begun before
            last = self._tail[-24:] + data[:24]
            i = last.rfind(b"event:")
        self.relayed = i >= 0 and _is_message_stop(last, i)
        self._tail = data if len(data) >= 24 else (self._tail + data)[-24:]


def speaks_anthropic(header_names: Iterable[str]) -> bool:
    """Whether a request is to the Anthropic API: its clients all send `anthropic-version`."""
    return any(name.lower() == "anthropic-version" for name in header_names)


def final_event(header_names: Iterable[str]) -> FinalEvent:
    """What ends the stream a request with these headers asks for."""
    return MessageStop() if speaks_anthropic(header_names) else FinalEvent()
