"""What of a recorded response head HTTP/1.1 can send again (RFC 9110, as h11 checks it).

A recording keeps a head as the upstream (or a hand, or a HAR tool) wrote it, so it may
hold what no server can send: a status outside 200-599 (a 1xx, as a 101 outside a
WebSocket session; every reader refuses one outside 100-599, or skips its entry), a
header name that is not a token, a value with CR, LF, NUL, ESC or another control
character, or a character that is not latin-1. Sending such a head cuts the connection or makes the
server answer a bare 500. So a head is checked once, when the files are loaded:

- a header that cannot be sent is left out, and said (`notes`, on stderr for `serve`);
  a value's leading and trailing spaces and tabs are not part of it (RFC 9110 5.5) and
  are not sent;
- a status that cannot be sent refuses the exchange (`refusal`): a request it answers
  gets a JSON error (502) saying why, never a head that is not the recorded one;
- a 204 or 304 has no body (RFC 9110 6.4.1): its recorded bytes are not sent, and said.
"""

from __future__ import annotations

import re
from dataclasses import field

from ..core.record import record
from ..text import quote

_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
# visible ASCII and obs-text (latin-1 0x80-0xff), single spaces or tabs between
_VALUE = re.compile(r"[\x21-\x7e\x80-\xff]+(?:[ \t]+[\x21-\x7e\x80-\xff]+)*")
_OWS = " \t"
BODILESS = (204, 304)


@record(slots=True)
class Head:
    """A recorded head as it can be sent: its headers, what was left out, and whether
    the status refuses the whole exchange."""

    headers: list[tuple[str, str]]
    notes: list[str] = field(default_factory=list)
    refusal: str | None = None  # why this exchange cannot be replayed at all
    bodiless: bool = False  # its status carries no body


def sendable(status: object, headers: list[tuple[str, str]], label: str) -> Head:
    """The head of `label` (a file and exchange, for the notes) as HTTP can send it."""
    head = Head([])
    if type(status) is not int or not 200 <= status <= 599:
        head.refusal = (
            f"{label}'s recorded status {quote(status, 40)} cannot be sent as an HTTP "
            "response (a final status is 200 to 599)"
        )
    elif status in BODILESS:
        head.bodiless = True
    for name, value in headers:
        why = _unsendable(name, value)
        if why is None:
            head.headers.append((name, value.strip(_OWS)))
        else:
            head.notes.append(f"{label}: its recorded header {quote(name, 60)} is left out: {why}")
    return head


def _unsendable(name: str, value: str) -> str | None:
    """Why a header cannot be sent over HTTP/1.1, or None when it can."""
    if not _TOKEN.fullmatch(name):
        return "its name is not an HTTP token"
    value = value.strip(_OWS)
    if not value or _VALUE.fullmatch(value):
        return None
    bad = next(
        ch for ch in value if not (ch in _OWS or "\x21" <= ch <= "\x7e" or "\x80" <= ch <= "\xff")
    )
    if ord(bad) > 0xFF:
        return f"its value holds {quote(bad)}, which is not latin-1"
    return f"its value holds the control character {quote(bad)}"
