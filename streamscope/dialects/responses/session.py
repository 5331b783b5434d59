"""The Responses API over a WebSocket (Codex's transport): a session's turns and their
contract.

Each client `{"type": "response.create", ...}` opens a turn (its other fields are a
Responses request body); the server's messages until that response's final event
(`response.completed`, `.incomplete`, `.failed`, or `error`) are the turn's frames, read
like an SSE stream's events. A `generate: false` prewarm is a turn like any other. Server
messages that come with no turn open open a turn of their own (no request), so none is
left unread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import orjson

from ...core import jsonio
from ...core.contract import KINDS as CONTRACT_KINDS
from ...core.contract import Finding
from ...core.engine import StreamResult
from ...core.results import Carried
from ...framing.session import WsMessage, frame_of
from ...text import quote
from ..base import SessionPlay, Turn
from .history import WORDS, history

FINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
# (kind, message, the turn it is about, the turn and stream whose calls it names)
_Add = Callable[[str, str, int, "tuple[int, StreamResult] | None"], None]


def error_event(message: str, asked: object, number: int) -> bytes:
    """The error a Responses WebSocket sends for a message it cannot take (the openai
    SDK's BetaResponseWsError): the HTTP status it stands for, and the error."""
    error = {"type": "invalid_request_error", "code": "unmatched_message", "message": message}
    return orjson.dumps({"type": "error", "status": 400, "error": {**error, "param": None}})


# Playback (serve): each response.create opens a turn, its final event ends it.
PLAY = SessionPlay(
    frozenset({"response.create"}), frozenset({"response.created"}), FINAL, error_event
)


def _json(message: WsMessage) -> object:
    if message.opcode != "text":
        return None
    try:
        return jsonio.loads(message.data)
    except orjson.JSONDecodeError:
        return None


def session(messages: Sequence[WsMessage]) -> list[Turn]:
    """The turns of a session, in the order they opened."""
    turns: list[Turn] = []
    current: Turn | None = None
    offset = 0
    for m in messages:
        if m.opcode in ("close", "ping", "pong"):
            continue
        if m.sender == "client":
            body = _json(m)
            if isinstance(body, dict) and body.get("type") == "response.create":
                if current is not None and not current.ended:
                    turns.append(current)  # its final event never came
                current = Turn(len(turns) + 1, body, [], [], False, m.t_ns)
                offset = 0
            elif current is not None:
                current.client.append(m)
            continue
        if current is None:
            current = Turn(len(turns) + 1, None, [], [], False, m.t_ns)
            offset = 0
        frame = frame_of(m, len(current.frames) + 1, current.start_ns, offset)
        offset = frame.end
        current.frames.append(frame)
        if frame.event in FINAL:
            current.ended = True
            turns.append(current)
            current = None
    if current is not None:
        turns.append(current)
    return turns


def carried(body: object) -> Carried | None:
    """A `response.create`: its input items as a request body's (the outputs it sends,
    the calls it sends back with the history); it asks for a response."""
    if not isinstance(body, dict) or body.get("type") != "response.create":
        return None
    read = history(body)
    entries = read.entries() if read is not None else []
    return Carried(entries, WORDS.turn, read.error_field if read is not None else None, True)


def _key(value: object) -> object:
    """A call_id as a dict key (any JSON value may stand there: an object is not one)."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else quote(value)


def _items(request: object) -> list[dict[str, object]]:
    if not isinstance(request, dict):
        return []
    items = request.get("input")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def session_contract(
    exchange: int,
    turns: Sequence[Turn],
    results: Sequence[StreamResult],
    responses: Mapping[str, StreamResult],
) -> tuple[list[Finding], int]:
    """Each turn that continues a response (`previous_response_id`) answers every call of
    it with a `function_call_output` of its `call_id`; a turn that sends the history
    again sends each call back as it was assembled. The response named is looked up in
    the session first, then in the whole recording."""
    findings: list[Finding] = []
    compared = 0
    by_id: dict[str, tuple[int, StreamResult]] = {}
    last: tuple[int, StreamResult] | None = None  # the session's latest turn with calls

    def add(kind: str, message: str, turn: int, of: tuple[int, StreamResult] | None) -> None:
        f = Finding(exchange, kind, message, CONTRACT_KINDS[kind][0], exchange)
        f.turn, f.stream_turn = turn, (None if of is None else of[0])
        if of is not None:
            f.stream = of[1].exchange
        findings.append(f)

    for t, result in zip(turns, results, strict=True):
        request = t.request
        previous = request.get("previous_response_id") if isinstance(request, dict) else None
        items = _items(request)
        answered = [i.get("call_id") for i in items if i.get("type") in _OUTPUTS]
        sent = {
            _key(i.get("call_id")): i
            for i in items
            if i.get("type") in ("function_call", "custom_tool_call")
        }
        of: tuple[int, StreamResult] | None = None
        if isinstance(previous, str):
            of = by_id.get(previous)
            if of is None and previous in responses:
                of = (0, responses[previous])
            if of is None:
                add(
                    "continuation-missing",
                    f"response {t.turn} continues {quote(previous)}, a response this "
                    "recording does not hold: its calls are not checked",
                    t.turn,
                    None,
                )
        elif sent or answered:
            of = last  # the history sent again: the calls come back with it
        if of is not None and of[1].tool_calls:
            compared += 1
            _answers(of, t.turn, answered, sent, isinstance(previous, str), add)
        if result.response_id:
            by_id[result.response_id] = (t.turn, result)
        if result.tool_calls:
            last = (t.turn, result)
    return findings, compared


def _answers(
    of: tuple[int, StreamResult],
    turn: int,
    answered: list[object],
    sent: Mapping[object, dict[str, object]],
    continued: bool,
    add: _Add,
) -> None:
    where = f"response {of[0]}" if of[0] else f"exchange {of[1].exchange}'s response"
    ids = [c.id for c in of[1].tool_calls]
    for c in of[1].tool_calls:
        back = sent.get(_key(c.id))
        if not continued:
            if back is None:
                add(
                    "tool-call-dropped",
                    f"response {turn} sends the history again without the call {quote(c.id)} "
                    f"{where} made",
                    turn,
                    of,
                )
                continue
            if back.get("name") != c.name:
                add(
                    "tool-call-name-changed",
                    f"response {turn} sends call {quote(c.id)} back named "
                    f"{quote(back.get('name'))}; {where} named it {quote(c.name)}",
                    turn,
                    of,
                )
            field = "arguments" if back.get("type") == "function_call" else "input"
            if back.get(field) != c.arguments:
                add(
                    "tool-call-arguments-changed",
                    f"response {turn} sends call {quote(c.id)} back with other {field} than "
                    f"{where} streamed",
                    turn,
                    of,
                )
        if c.id not in answered:
            add(
                "tool-result-missing",
                f"response {turn} continues {where} without a function_call_output for its "
                f"call {quote(c.id)}: the model is left waiting for that result",
                turn,
                of,
            )
    for cid in answered:
        if cid not in ids and _key(cid) not in sent:
            add(
                "tool-result-id-mismatch",
                f"response {turn} sends a function_call_output for {quote(cid)}, a call "
                f"{where} did not make",
                turn,
                of,
            )
