"""Anthropic Messages' wire: the requests it claims, its final event (`event: message_stop`)
and its error document."""

from __future__ import annotations

import re

import orjson

from ..base import Watch

ENDPOINTS = ("POST .../v1/messages",)
# Every client of the Anthropic API sends it.
CLIENT_HEADERS = frozenset({"anthropic-version"})


def claims_request(path: str, body: object) -> bool:
    """`.../v1/messages`, or another path ending in `/messages` (a gateway's) whose body
    holds `messages`: OpenAI's `/threads/{id}/messages` hold a message, not a list."""
    if path.endswith("/v1/messages"):
        return True
    return (
        path.endswith("/messages")
        and isinstance(body, dict)
        and isinstance(body.get("messages"), list)
    )


def error_document(status: int, kind: str, message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


# The field line at the start of the read's last event (re.match at its `event:`).
_MESSAGE_STOP = re.compile(rb"^event: ?message_stop\r?\n", re.MULTILINE)


def _is_message_stop(data: bytes, i: int) -> bool:
    """Whether the `event:` at `i` starts the line `event: message_stop`: a slice compared
    first, so the regex (which checks where the line starts and ends) runs once a stream."""
    return b"message_stop" in data[i + 6 : i + 20] and _MESSAGE_STOP.match(data, i) is not None


def final_event(path: str, framing: str | None = None) -> MessageStop:
    return MessageStop()


class MessageStop(Watch):
    """Whether an Anthropic Messages stream's final event, `event: message_stop`, was relayed.

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
