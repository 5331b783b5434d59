"""A WebSocket server's own words (RFC 6455): checking an opening handshake, the `101`
that accepts it, the HTTP answer that refuses it, and what a close frame may carry.

`serve` speaks these; the recorder relays the upstream's instead (record/relay.py), so
they live beside http/websocket.py, which hands both the upgraded connection.

No extension is accepted: the `101` names no Sec-WebSocket-Extensions, so a client that
offered permessage-deflate (the `websockets` package does by default) sends every frame
uncompressed, and a frame with RSV1 set is a protocol error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from collections.abc import Sequence
from http import HTTPStatus

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 1.3
VERSION = "13"
# The close codes a peer may send (RFC 6455 7.4): 1004, 1005, 1006 and 1015 never go on
# the wire, 1016-2999 are reserved, 3000-4999 are registered or private.
_SENDABLE = frozenset((1000, 1001, 1002, 1003, *range(1007, 1015), *range(3000, 5000)))


def accept(key: str) -> str:
    """The Sec-WebSocket-Accept answering a Sec-WebSocket-Key."""
    digest = hashlib.sha1((key + GUID).encode("latin-1")).digest()
    return base64.b64encode(digest).decode("ascii")


def tokens(value: str | None) -> list[str]:
    """A comma-separated header's items, lowercased."""
    return [t.strip().lower() for t in (value or "").split(",") if t.strip()]


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    found = [v for k, v in headers if k.lower() == name]
    return ", ".join(found) if found else None


def problem(method: str, headers: list[tuple[str, str]]) -> tuple[int, str] | None:
    """Why an upgrade request is no WebSocket opening handshake (RFC 6455 4.2.1), as the
    status to refuse it with and a sentence; None when it is one."""
    if method != "GET":
        return 405, f"a WebSocket handshake is a GET, not {method}"
    if "websocket" not in tokens(_header(headers, "upgrade")):
        return 400, "the Upgrade header does not name websocket"
    if "upgrade" not in tokens(_header(headers, "connection")):
        return 400, "the Connection header does not name Upgrade"
    version = _header(headers, "sec-websocket-version")
    if version is None or version.strip() != VERSION:
        return 426, f"Sec-WebSocket-Version must be {VERSION}"
    key = _header(headers, "sec-websocket-key")
    try:
        ok = key is not None and len(base64.b64decode(key.strip(), validate=True)) == 16
    except (binascii.Error, ValueError):
        ok = False
    if not ok:
        return 400, "Sec-WebSocket-Key is not 16 bytes in base64"
    return None


def offered_protocols(headers: list[tuple[str, str]]) -> list[str]:
    """The subprotocols the client offers (Sec-WebSocket-Protocol), as it wrote them."""
    value = _header(headers, "sec-websocket-protocol") or ""
    return [p.strip() for p in value.split(",") if p.strip()]


def head(status: int, headers: Sequence[tuple[str, str]]) -> bytes:
    """An HTTP/1.1 response head."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    lines = [f"HTTP/1.1 {status} {phrase}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def switching(
    request_headers: list[tuple[str, str]],
    headers: Sequence[tuple[str, str]] = (),
    protocol: str | None = None,
) -> bytes:
    """The `101` accepting a handshake that `problem` passed: `headers` first (the
    recorded ones, none of the handshake's own), then Upgrade, Connection, the accept,
    and the subprotocol chosen (None: none)."""
    key = (_header(request_headers, "sec-websocket-key") or "").strip()
    own = [
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-accept", accept(key)),
    ]
    if protocol is not None:
        own.append(("sec-websocket-protocol", protocol))
    return head(101, [*headers, *own])


def refusal(status: int, body: bytes, extra: Sequence[tuple[str, str]] = ()) -> bytes:
    """An HTTP answer refusing the upgrade: a JSON body, then the connection closes."""
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(body))),
        *extra,
        ("connection", "close"),
    ]
    return head(status, headers) + body


def close_payload(code: int | None, reason: str = "") -> bytes:
    """A close frame's payload: the code and the UTF-8 reason, cut to fit 125 bytes."""
    if code is None:
        return b""
    data = reason.encode("utf-8")[:123]
    return struct.pack(">H", code) + data.decode("utf-8", "ignore").encode("utf-8")


def close_problem(payload: bytes) -> str | None:
    """Why a close frame's payload cannot be sent (RFC 6455 5.5, 7.4); None: it can."""
    if not payload:
        return None
    if len(payload) == 1:
        return "its payload is 1 byte (a code takes 2)"
    if len(payload) > 125:
        return f"its payload is {len(payload)} bytes (a control frame holds 125)"
    (code,) = struct.unpack(">H", payload[:2])
    if code not in _SENDABLE:
        return f"its code {code} is not one a peer may send"
    try:
        payload[2:].decode("utf-8")
    except UnicodeDecodeError:
        return "its reason is not UTF-8"
    return None
