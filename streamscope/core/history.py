"""The conversation history a request carries, read the same way for every dialect.

Each dialect reads its request body into a `History` (`Dialect.history`): the messages
in order, each with its text, the tool calls it sends back and the tool results it
gives. The contract checks it (contract.py) and the replay shows it (tui/conversation.py),
so a request is read in one place per dialect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any, NamedTuple

from .record import record


@record(slots=True)
class SentCall:
    """A call the request sends back in an assistant message."""

    id: object
    name: object
    arguments: object  # text as sent back (a custom call's input; an object as its JSON)
    type: object = "function"
    needs_result: bool = True  # False for a call the provider runs itself (a server tool)
    # the thoughtSignature sent with it (Gemini), None: none
    signature: object = None
    # what a tool result may name to answer it, where that is not the id (Gemini: the id,
    # or the name); None: its id
    result_keys: tuple[Any, ...] | None = None
    # False: a call no stream assembles as one (a client-run tool search in the Responses
    # API): its result is checked, but it is never compared with a stream's calls
    assembled: bool = True

    def answered_by(self) -> tuple[Any, ...]:
        """What a tool result may name to answer it, the one findings quote first."""
        return (self.id,) if self.result_keys is None else self.result_keys


@record(slots=True)
class Result:
    """A tool result: the call id it answers, and what it says."""

    answers: object
    content: object = None
    # whether the result says the tool failed, in the field its dialect has for it
    # (History.error_field: Anthropic's `is_error`, as sent, the API's false where absent);
    # None where the dialect has no such field
    error: object = None
    # what its dialect's field said, in words, where the field's name does not say it
    # ("no status sent", 'status "error"', "no error in response"); None: the field is
    # the flag itself (Anthropic's `is_error`), or the dialect has none
    error_said: str | None = None
    # its own entry in the request where its turn gathers several (the Responses API's
    # consecutive outputs, one input item each); None: its turn's
    item: int | None = None


@record(frozen=True, slots=True)
class Tool:
    """A tool the request declares: its name and description as sent."""

    name: object
    description: object = None
    # the namespaces it is nested in, outermost first (the Responses API's `namespace`
    # tools); () at the top
    within: tuple[object, ...] = ()
    # where it is declared when not in the request's own tools list: the index of the
    # input item that holds it (Codex's `additional_tools` item); None: the tools list
    item: int | None = None
    namespace: bool = False  # a namespace: the tools after it (within it) are its own


@record(slots=True)
class Turn:
    """One message of the request."""

    role: str  # as sent ("?" for a message that is not an object)
    content: object = None  # its text or parts as sent (None: none)
    calls: list[SentCall] | None = None  # an assistant message's calls (None: it has none)
    results: list[Result] = field(default_factory=list)
    raw: object = None  # the message itself when it is not an object
    # the request's entries the turn stands for, where one turn gathers several (the
    # Responses API's input items: consecutive calls, consecutive outputs); None: one,
    # at the turn's own index
    items: tuple[int, int] | None = None
    # an entry without a role that the client adds on its own side (Codex's
    # `configuration_update` after the user's message): it belongs to the user's turn, so
    # the answer sent back never starts at it (core/pairing.py)
    client: bool = False


@record(frozen=True, slots=True)
class Words:
    """How a dialect names, in findings, what answers a call and the field naming it."""

    result: str = "tool message"
    result_id: str = "tool_call_id"
    sent: str = "the assistant message"  # what carries a call back
    sent_all: str = "the assistant message"  # what carries the calls back
    turns: str = "Messages"  # what the request's turns are, as a heading
    turn: str = "message"  # one of them, in findings ("message 2")
    system: str = "System"  # the prompt beside them, as a heading


def function_or_custom(kind: object) -> object:
    return "custom" if kind == "custom" else "function"


@record(frozen=True, slots=True)
class CallIds:
    """Whose a call's id is, as the dialect's API documents it (on its Dialect record, and
    what its History's `client_ids` says; docs/anomalies.md states every dialect's rule)."""

    # The id is optional and the client's to fill in where the model sent none: a filled
    # id, the same on the call and its result, is tool-call-id-filled, not substituted.
    client: bool
    rule: str  # the rule in words, from the API's documentation


@record(slots=True)
class History:
    turns: list[Turn]
    system: object = None  # a system prompt given beside the messages (Anthropic's `system`)
    tools: list[Tool] = field(default_factory=list)  # in the order declared, nested ones flattened
    params: dict[Any, Any] = field(default_factory=dict)  # the other fields of the body
    words: Words = Words()
    # What `tool-call-type-changed` compares of a call's type (chat: custom or function).
    kind_of: Callable[[object], object] = function_or_custom
    # the stored response the request continues (the Responses API's
    # `previous_response_id`): its calls stay on the server, not in `turns`
    previous: str | None = None
    # a conversation the server keeps that the request adds to (the Responses API's
    # `conversation`: its items are prepended to `input`), so results in `turns` may
    # answer calls that are there, not here
    stored: str | None = None
    # the request's entries as sent (messages, contents, input items): what pairing
    # fingerprints to tell which request continues which stream (core/pairing.py)
    items: list[Any] = field(default_factory=list)
    # The API documents a call's id as optional and filled in by the client when the model
    # sent none (Gemini's functionCall.id): a client's id, the same on the call and on its
    # result, keeps the link (contract.py: tool-call-id-filled, not substituted)
    client_ids: bool = False
    # Whether `system` belongs to the conversation, so a request that continues another
    # sends it again unchanged: False where the API documents it as each request's own
    # (the Responses API's `instructions`, swapped freely between responses, as an agent
    # handing off to another does)
    system_carried: bool = True
    # the field of a tool result that says the tool failed (Anthropic's `is_error`); None:
    # the dialect has none (Result.error is then None)
    error_field: str | None = None

    def entries(self) -> list[Entry]:
        """The request's entries as the contract reads them, in order: one per turn, but
        one per result of a turn that gives results."""
        out: list[Entry] = []
        for i, turn in enumerate(self.turns):
            at = turn.items[0] if turn.items else i
            if turn.calls is not None:
                out.append(Entry(i, "assistant", turn.calls, at))
            elif turn.results:
                out += [Entry(i, "tool", r.answers, at, r) for r in turn.results]
            else:
                out.append(Entry(i, turn.role, None, at))
        return out


class Entry(NamedTuple):
    """One entry of a request as the contract reads it (History.entries)."""

    turn: int  # the turn it belongs to
    role: str  # "assistant" for a turn's calls, "tool" for a result, else the turn's role
    value: object  # the calls (a list of SentCall), the id a result answers, else None
    at: int  # the request's entry (message, input item) it stands at
    result: Result | None = None


def run_at(entries: list[Entry], k: int) -> list[Entry]:
    """The run of results starting at entry `k` (empty: none there)."""
    end = k
    while end < len(entries) and entries[end].role == "tool":
        end += 1
    return entries[k:end]


def tail(entries: list[Entry]) -> tuple[int, list[Entry]]:
    """The run of results a request ends with, and the entry it starts at: the results of
    the calls it sends back last (an agent's next turn), kept where a request's others
    are not (a long session would keep every earlier result once per request)."""
    k = len(entries)
    while k > 0 and entries[k - 1].role == "tool":
        k -= 1
    return k, entries[k:]
