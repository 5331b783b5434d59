"""The Realtime API over its WebSocket: a session's turns and their contract.

A turn is one response: from the server's `response.created` to its `response.done`,
with the client messages sent since the turn before it began (`session.update`,
`conversation.item.create`, `input_audio_buffer.*`, the `response.create` that asked for
it: its `request`; a response the server's voice detection began has none). The server
messages that come between two responses (`session.updated`, `conversation.item.created`,
`input_audio_buffer.speech_started`, an `error` answering the client) are read with the
next response, before its `response.created`; those after the last response, and client
messages after it, make a turn of their own, so none is left unread.

Responses may overlap (an out-of-band `response.create` with `conversation: "none"`
while another runs): each server event that names its response (`response_id`, or
`response.id` on `response.created` / `response.done`) goes to that response's turn; an
event that names none goes to the latest response under way.

The contract: each call a turn assembled (its `call_id`) is answered by a later client
`conversation.item.create` whose item is `{"type": "function_call_output", "call_id":
...}`, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import orjson

from ...core import jsonio
from ...core.contract import KINDS as CONTRACT_KINDS
from ...core.contract import Finding
from ...core.engine import StreamResult
from ...core.history import Entry, Result, Tool
from ...core.record import record
from ...core.results import Carried
from ...framing.session import CONTROL, WsMessage, frame_of
from ...text import quote
from ..base import Turn
from .robust import CREATED, RESPONSE_DONE
from .wire import client_facts

OUTPUT = "function_call_output"


def parsed(message: WsMessage) -> object:
    """A text message's JSON (None: a binary message, or no JSON)."""
    if message.opcode != "text":
        return None
    try:
        return jsonio.loads(message.data)
    except orjson.JSONDecodeError:
        return None


def _response_of(payload: object) -> object:
    """The response an event names: `response.id` of created / done, else `response_id`."""
    if not isinstance(payload, dict):
        return None
    if payload.get("type") in (CREATED, RESPONSE_DONE):
        response = payload.get("response")
        return response.get("id") if isinstance(response, dict) else None
    return payload.get("response_id")


@record(slots=True)
class _Open:
    """A turn being built: its server messages (made frames once it is placed)."""

    turn: Turn
    offset: int = 0
    ids: list[object] = field(default_factory=list)

    def add(self, m: WsMessage) -> None:
        t = self.turn
        frame = frame_of(m, len(t.frames) + 1, t.start_ns, self.offset)
        self.offset = frame.end
        t.frames.append(frame)


def session(messages: Sequence[WsMessage]) -> list[Turn]:
    """The turns of a session, in the order their responses began."""
    turns: list[Turn] = []
    placed: list[_Open] = []  # each turn's builder
    running: list[_Open] = []  # responses under way, oldest first
    client: list[WsMessage] = []  # client messages since the last turn began
    waiting: list[WsMessage] = []  # server messages waiting for the next turn
    request: object = None  # the latest response.create among `client`

    def begin(first: WsMessage) -> _Open:
        nonlocal client, waiting, request
        earliest = min((m.t_ns for m in (*client, *waiting, first)), default=first.t_ns)
        t = _Open(Turn(len(turns) + 1, request, [], client, False, earliest))
        for m in waiting:
            t.add(m)
        turns.append(t.turn)
        placed.append(t)
        client, waiting, request = [], [], None
        return t

    for m in messages:
        if m.opcode in CONTROL:
            continue
        if m.sender == "client":
            client.append(m)
            body = parsed(m)
            if isinstance(body, dict) and body.get("type") == "response.create":
                request = body
            continue
        payload = parsed(m)
        kind = payload.get("type") if isinstance(payload, dict) else None
        rid = _response_of(payload)
        if kind == CREATED:
            t = begin(m)
            t.ids.append(rid)
            running.append(t)
            t.add(m)
            continue
        named = [t for t in running if rid is not None and rid in t.ids]
        target = named[-1] if named else (running[-1] if running else None)
        if target is None and isinstance(kind, str) and kind.startswith("response."):
            target = begin(m)  # a response whose response.created never came
            target.ids.append(rid)
            running.append(target)
        if target is None:
            waiting.append(m)
            continue
        target.add(m)
        if kind == RESPONSE_DONE:
            target.turn.ended = True
            running.remove(target)
    if (waiting or client) and not turns:  # no response at all: one turn of everything
        start = min(m.t_ns for m in (*waiting, *client))
        t = _Open(Turn(1, request, [], client, False, start))
        for m in waiting:
            t.add(m)
        turns.append(t.turn)
    elif waiting or client:  # after the last response: read with it
        last = placed[-1]
        last.turn.client.extend(client)
        for m in waiting:
            last.add(m)
    for turn, tools in zip(turns, tools_in_force(turns), strict=True):
        turn.tools = tools  # (declared in session.update, which opens no turn)
    return turns


def declared(tools: list[Any]) -> list[Tool]:
    """Tools as a session declares them (`{"type": "function", "name": ...}`; a tool
    of another type, as an MCP server, has only its type to name it)."""
    out = []
    for tool in tools:
        tool = tool if isinstance(tool, dict) else {}
        out.append(Tool(tool.get("name") or tool.get("type"), tool.get("description")))
    return out


def tools_in_force(turns: Sequence[Turn]) -> list[list[Any] | None]:
    """The tools each turn's response was asked with (for `name-undeclared`): its own
    `response.create`'s `response.tools` where it names some, else those of the last
    `session.update` the client sent before the response began (None: none declared).
    A session declares its tools in session.update, which no turn's `request` is."""
    updates: list[tuple[int, list[Any]]] = []  # (when, its tools), in order
    for t in turns:
        for m in t.client:
            body = parsed(m)
            if isinstance(body, dict) and body.get("type") == "session.update":
                _, tools = client_facts(body)
                if tools is not None:
                    updates.append((m.t_ns, tools))
    out: list[list[Any] | None] = []
    for t in turns:
        _, own = client_facts(t.request)
        began = _began(t)
        before = [tools for at, tools in updates if began is None or at < began]
        out.append(own if own is not None else (before[-1] if before else None))
    return out


def carried(body: object) -> Carried | None:
    """A `conversation.item.create` of a function_call_output: one result, the message
    itself (the item carries no error flag); a `response.create` asks for a response."""
    if not isinstance(body, dict):
        return None
    kind = body.get("type")
    if kind == "response.create":
        return Carried([], "", None, True)
    item = body.get("item")
    if kind != "conversation.item.create" or not isinstance(item, dict):
        return None
    if item.get("type") != OUTPUT:
        return None
    cid = item.get("call_id")
    return Carried([Entry(0, "tool", cid, 0, Result(cid, item.get("output")))], "")


def is_response(turn: Turn) -> bool:
    """Whether a turn holds a response (not only the messages after the last one)."""
    return any(isinstance(f.event, str) and f.event.startswith("response.") for f in turn.frames)


def _outputs(turn: Turn) -> list[tuple[object, int]]:
    """The function_call_outputs the client sent with a turn: (call_id, when: ns)."""
    out = []
    for m in turn.client:
        body = parsed(m)
        if not isinstance(body, dict) or body.get("type") != "conversation.item.create":
            continue
        item = body.get("item")
        if isinstance(item, dict) and item.get("type") == OUTPUT:
            out.append((item.get("call_id"), m.t_ns))
    return out


def _began(turn: Turn) -> int | None:
    """When a turn's response began (ns from the recording's start; None: it holds none)."""
    first = next(
        (f for f in turn.frames if isinstance(f.event, str) and f.event.startswith("response.")),
        None,
    )
    return None if first is None else turn.start_ns + (first.time_ns or 0)


@record(slots=True)
class _Made:
    """A call a turn assembled, when it began, and the turns of its answers."""

    turn: int
    at: int  # when its first event came (ns)
    call_id: object
    item_id: object
    name: object
    # each answer: where it was sent, in words, and the turn whose messages hold it
    answers: list[tuple[str, int]] = field(default_factory=list)


def _key(value: object) -> object:
    """A call_id as a dict key (any JSON value may stand there)."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else quote(value)


def session_contract(
    exchange: int,
    turns: Sequence[Turn],
    results: Sequence[StreamResult],
    responses: Mapping[str, StreamResult],
) -> tuple[list[Finding], int]:
    """Each call's call_id answered, once, by a function_call_output the client sends
    after the call began; an output naming a call_id no call before it carried is a
    mismatch (one naming a call's item id, the item-id-for-call-id mistake, says so).
    Returns the findings and how many turns' calls were checked."""
    findings: list[Finding] = []

    def add(kind: str, message: str, turn: int | None, of: int | None) -> None:
        f = Finding(exchange, kind, message, CONTRACT_KINDS[kind][0], exchange)
        f.turn, f.stream_turn = turn, of
        findings.append(f)

    began = [(t.turn, b) for t in turns if (b := _began(t)) is not None]

    def sent(at: int) -> tuple[str, int | None]:
        """Where a client message sent at `at` stands, in words, and the next response."""
        after = next((turn for turn, b in began if b > at), None)
        return (
            ("after the last response", None)
            if after is None
            else (f"before response {after}", after)
        )

    made: list[_Made] = []
    for t, result in zip(turns, results, strict=True):
        for c in result.tool_calls:
            first = t.frames[c.first_frame - 1] if 0 < c.first_frame <= len(t.frames) else None
            at = t.start_ns + (first.time_ns or 0) if first is not None else t.start_ns
            made.append(_Made(t.turn, at, c.id, c.item_id, c.name))
    outputs = sorted((at, k, cid, t.turn) for t in turns for k, (cid, at) in enumerate(_outputs(t)))
    for at, _, cid, turn in outputs:
        words, _next = sent(at)
        before = [c for c in made if c.at < at]
        call = next((c for c in before if _key(c.call_id) == _key(cid)), None)
        if call is not None:
            call.answers.append((words, turn))
            continue
        of_item = next((c for c in before if isinstance(cid, str) and c.item_id == cid), None)
        if of_item is not None:
            why = (
                f"it is the item id of call {quote(of_item.call_id)} ({quote(of_item.name)}) "
                f"of response {of_item.turn}: the output must echo the call_id, and the "
                "server rejects it (invalid_tool_call_id)"
            )
        else:
            why = "no call before it carried that call_id"
        add(
            "tool-result-id-mismatch",
            f"a function_call_output sent {words} names call_id {quote(cid)}: {why}",
            turn,
            None if of_item is None else of_item.turn,
        )
    seen: set[object] = set()
    for call in made:
        key = _key(call.call_id)
        if key in seen:
            continue  # (a call_id two calls carry: id-reused says so in its stream)
        seen.add(key)
        if not call.answers:
            later = next((turn for turn, b in began if b > call.at and turn > call.turn), None)
            where = (
                f"response {later} began without it"
                if later is not None
                else "the session ended without it"
            )
            add(
                "tool-result-missing",
                f"no function_call_output answers call {quote(call.call_id)} "
                f"({quote(call.name)}) of response {call.turn}: {where}, and the model is "
                "left without the call's result",
                later if later is not None else call.turn,
                call.turn,
            )
        elif len(call.answers) > 1:
            where = " and ".join(dict.fromkeys(w for w, _ in call.answers))
            add(
                "tool-result-repeated",
                f"call {quote(call.call_id)} ({quote(call.name)}) of response {call.turn} is "
                f"answered by {len(call.answers)} function_call_outputs (sent {where}): the "
                "tool ran more than once (a client acting on every done event), and the "
                "conversation holds each result",
                call.answers[1][1],
                call.turn,
            )
    return findings, len({c.turn for c in made})
