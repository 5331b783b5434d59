"""The Responses API's wire: the requests it claims and its final events
(`event: response.completed`, `.incomplete`, `.failed`)."""

from __future__ import annotations

from ...core.record import record
from ..base import ResponseFacts, Watch

ENDPOINTS = ("POST .../responses",)


def claims_request(path: str, body: object) -> bool:
    """`.../responses` (a new response), or `.../responses/<id>` (a stored one, streamed
    again with `stream=true`)."""
    parts = path.rstrip("/").rsplit("/", 2)
    return parts[-1] == "responses" or (len(parts) == 3 and parts[1] == "responses")


# A Responses stream's final event lines, as they stand between a `\n` and the next.
_RESPONSE_ENDS = frozenset(
    b"event:" + space + b"response." + name + cr
    for space in (b"", b" ")
    for name in (b"completed", b"incomplete", b"failed")
    for cr in (b"", b"\r")
)
# Bytes kept from the read before: more than the longest final event line, `\n` included.
_EDGE = 40


def _blank_line(data: bytes, start: int = 0) -> bool:
    """Whether `data` holds, from `start`, a line end followed by an empty line: the end
    of an event. `\n\r\n` is the end of `\r\n\r\n` (CRLF lines)."""
    return data.find(b"\n\n", start) >= 0 or data.find(b"\n\r\n", start) >= 0


def final_event(path: str, framing: str | None = None) -> ResponseEnd:
    return ResponseEnd()


@record(slots=True)
class ResponseEnd(Watch):
    """Whether a Responses stream's final event was relayed: once its final event is whole, its
    `event: response.completed` (`.incomplete`, `.failed`) line and the empty line that
    ends it. The event carries the whole response in its data, often over several reads:
    a client that left before it had all of it did not get the stream's end.

    Only the read's last `event:` line is looked at (the final event is the stream's last
    event), found by a search back from the read's end for `\n` + `event:`: a raw `\n`
    always ends a line (JSON data holds none), so the name inside an event's JSON is never
    taken for its line, and the search goes back over the last event only. `_tail` (the
    read before, or the last `_EDGE` bytes) finds a line cut across two reads; it starts
    as `\n`, the start of the stream being the start of a line.
    """

    _tail: bytes = b"\n"
    _open: bool = False  # the final event's line was relayed, not yet the empty line after it

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        if self._open:
            self.relayed = _blank_line(self._tail[-2:] + data[:2]) or _blank_line(data)
        else:
            self._look(data)
        self._tail = data if len(data) >= _EDGE else (self._tail + data)[-_EDGE:]

    def _look(self, data: bytes) -> None:
        """Find the final event's line among this read's lines, then its end."""
        buf, i = data, data.rfind(b"\nevent:") + 1
        if not i and not (data.startswith(b"event:") and self._tail.endswith(b"\n")):
            # the read's only line may have begun in the read before
            buf = self._tail[-_EDGE:] + data[:_EDGE]
            i = buf.rfind(b"\nevent:") + 1
            if not i:
                return
        end = _final_line(buf, i)
        if end >= 0:
            self._open = True
            self.relayed = _blank_line(buf, end) or (buf is not data and _blank_line(data))


def _final_line(buf: bytes, i: int) -> int:
    """Where the line starting at `i` ends (its `\n`) if it names a final event, else -1
    (another event, or a line not finished in `buf`)."""
    end = buf.find(b"\n", i, i + _EDGE)
    return end if end >= 0 and buf[i:end] in _RESPONSE_ENDS else -1


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """The `response` a `response.created` ... `response.completed` event carries: its id,
    model and usage."""
    response = payload.get("response") if isinstance(payload, dict) else None
    facts.read(response, "id", "model", "usage", ("input_tokens",), ("output_tokens",))
