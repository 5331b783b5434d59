"""Field events: what one frame did to the accumulator, in the robust reading."""

from __future__ import annotations

from ..text import quote
from .record import record

# ops
SET = "set"  # a field took its first value
APPEND = "append"  # an argument fragment was concatenated
IGNORED = "ignored"  # a value the robust reading declines ("" / null / a repeat)
OVERWRITE = "overwrite"  # a client that overwrites on every present field would change old -> new
NEW_CALL = "new-call"
REPLACE = "replace"  # cumulative arguments: the snapshot replaced the text
FINISH = "finish"
CONTENT = "content"
REASONING = "reasoning"
STOP = "stop"  # a block ends (Anthropic's content_block_stop)
CLOSE = "close"  # a streamed call ends (Gemini's closing functionCall part)
MESSAGE = "message"  # a message begins (Anthropic's message_start)
MESSAGE_END = "message-end"  # a message ends (Anthropic's message_stop)

# What a call's key and its container are called, per dialect.
CHAT_WORDS = ("index", "choice")
BLOCK_WORDS = ("block", "message")
RESPONSE = "response"  # the container of Responses and Realtime: numbered as inspect names it


def response_number(turn: int | None, choice: int) -> int:
    """The response a Responses or Realtime call is in, numbered as the report names it:
    a session's response (`turn`) by its number in the session ("Exchange 1, response
    2"), a stream's own by its number in the stream, 1 first, as its findings say it
    ("output 0 of response 2"; a call's container index `choice` counts them from 0
    within the stream)."""
    return turn if turn is not None else choice + 1


@record(slots=True)
class FieldEvent:
    frame: int
    op: str
    choice: int
    index: object = None
    field: str = ""
    old: object = None
    new: object = None
    call: int = -1  # position of the call in the choice's call list, -1 for none
    words: tuple[str, str] = CHAT_WORDS  # (key, container): ("block", "message") for Anthropic

    def describe(self, turn: int | None = None) -> str:
        """The event in plain words, for the TUI's frame detail. `turn`: the session's
        response the stream is (a Responses or Realtime response is named by it, else by
        its number in the stream, as inspect's `response` column names it)."""

        def q(value: object) -> str:
            return quote(value, 60)

        key, container = self.words
        if container == RESPONSE:
            container = f"{RESPONSE} {response_number(turn, self.choice)}"
        else:
            container = f"{container} {self.choice}"
        where = f"{key} {self.index}" if self.index is not None else f"no {key}"
        if self.op == NEW_CALL:
            return f"{where}: a new call begins"
        if self.op == STOP:
            return f"{where}: the block ends"
        if self.op == CLOSE:
            return f"{where}: its closing part ends the call"
        if self.op == MESSAGE_END:
            return f"{container} ends"
        if self.op == MESSAGE:
            return f"{container} begins ({self.field} {q(self.new)})"
        if self.op == SET:
            return f"{where}: {self.field} = {q(self.new)}"
        if self.op == APPEND:  # "input" for a custom call
            return f"{where}: {self.field or 'arguments'} += {q(self.new)}"
        if self.op == REPLACE:
            return f"{where}: arguments replaced by the growing snapshot {q(self.new)}"
        if self.op == IGNORED:
            return f"{where}: {self.field} {q(self.new)} ignored (kept {q(self.old)})"
        if self.op == OVERWRITE:
            return f"{where}: {self.field} {q(self.new)} ignored; a naive client would lose {q(self.old)}"
        if self.op == FINISH:
            return f"{container}: {self.field or 'finish_reason'} {q(self.new)}"
        if self.op == CONTENT:
            return f"{container}: content += {q(self.new)}"
        if self.op == REASONING:
            return f"{container}: reasoning += {q(self.new)}"
        return f"{where}: {self.op} {self.field}"
