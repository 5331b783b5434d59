"""The conversation history a request carries, read the same way for every dialect.

Each dialect reads its request body into a `History` (`Dialect.history`): the messages
in order, each with its text, the tool calls it sends back and the tool results it
gives. The contract checks it (contract.py) and the replay shows it (tui/conversation.py),
so a request is read in one place per dialect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
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


@dataclass(slots=True)
class Result:
    """A tool result: the call id it answers, and what it says."""

    answers: object
    content: object = None


@dataclass(slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CallIds:
    """Whose a call's id is, as the dialect's API documents it (on its Dialect record, and
    what its History's `client_ids` says; docs/anomalies.md states every dialect's rule)."""

    # The id is optional and the client's to fill in where the model sent none: a filled
    # id, the same on the call and its result, is tool-call-id-filled, not substituted.
    client: bool
    rule: str  # the rule in words, from the API's documentation


@dataclass(slots=True)
class History:
    turns: list[Turn]
    system: object = None  # a system prompt given beside the messages (Anthropic's `system`)
    tools: list[tuple[object, object]] = field(default_factory=list)  # (name, description)
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
