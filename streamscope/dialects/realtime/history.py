"""A Realtime session carries its calls back in client events, not in a request body: the
handshake (a GET) holds none, so no request has a history here. The session's contract
(session.py) reads the client's `conversation.item.create` events instead."""

from __future__ import annotations

from ...core.history import CallIds, History

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    False,
    "the model gives every function call its `call_id`, which the client's `function_call_output` item must name: another id is `tool-call-id-substituted`",
)


def history(body: object) -> History | None:
    return None
