"""The request of one exchange with the contract's findings (see ../conversation.py)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...dialects import dialect
from ...inputs import describe_numbers
from ..conversation import call_key, conversation


class ConversationView(Static):
    """The request of one exchange: messages, tools, parameters and the contract's findings."""

    def show(
        self,
        body: object,
        told: str | None,
        exchange: int,
        summaries: dict | None,
        error: str | None = None,
        turn: int | None = None,
    ) -> None:
        """`body` read in the dialect `told`; `summaries`: the analysis of every exchange
        (None while it runs); `error`: why it could not run; `turn`: the response of a
        WebSocket session whose request `body` is."""
        history = dialect(told).history(body)
        if summaries is None:
            head = Text("checking the contract across the recording …\n\n", style="dim")
            self.update(head + conversation(history, [], {}))
            return
        if error is not None:  # a recording the analysis cannot read: the request, unchecked
            head = Text(f"the contract was not checked: {error}\n\n", style="yellow")
            self.update(head + conversation(history, [], {}))
            return
        row = summaries.get(exchange)
        mine = row.response(turn) if row is not None else None
        findings = mine.findings if mine is not None else []
        # the calls of the earlier streams of this request's own conversation (the
        # contract's pairing): another conversation's call of the same name is not its
        thread = mine.conversation if mine is not None else None
        earlier = {
            call_key(c.id, c.name): (_where(s.exchange, r.turn, exchange), c.name, r.response_id)
            for s in summaries.values()
            if (thread is None or s.conversation == thread)
            for r in s.streams()
            if s.exchange < exchange
            or (s.exchange == exchange and turn is not None and (r.turn or 0) < turn)
            for c in r.calls
        }
        head = Text()
        if thread is not None:
            ours = sorted(s.exchange for s in summaries.values() if s.conversation == thread)
            if len(ours) > 1:
                head.append("Conversation ", style="bold")
                head.append(f"begun at exchange {thread} ({describe_numbers(ours)})\n")
        self.update(head + conversation(history, findings, earlier))


def _where(exchange: int, turn: int | None, asking: int) -> str:
    """An earlier stream in words: another exchange's, or a response of a session."""
    if turn is None:
        return f"exchange {exchange}'s stream"
    return f"response {turn}" if exchange == asking else f"exchange {exchange}'s response {turn}"
