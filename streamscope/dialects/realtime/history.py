"""A Realtime session carries its calls back in client events, not in a request body: the
handshake (a GET) holds none, so no request has a history here. The session's contract
(session.py) reads the client's `conversation.item.create` events instead."""

from __future__ import annotations

from ...core.history import History


def history(body: object) -> History | None:
    return None
