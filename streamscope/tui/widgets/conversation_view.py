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
    ) -> None:
        """`body` read in the dialect `told`; `summaries`: the analysis of every exchange
        (None while it runs); `error`: why it could not run."""
        history = dialect(told).history(body)
        if summaries is None:
            head = Text("checking the contract across the recording …\n\n", style="dim")
            self.update(head + conversation(history, [], {}))
            return
        if error is not None:  # a recording the analysis cannot read: the request, unchecked
            head = Text(f"the contract was not checked: {error}\n\n", style="yellow")
            self.update(head + conversation(history, [], {}))
            return
        mine = summaries.get(exchange)
        findings = mine.findings if mine is not None else []
        # the calls of the earlier streams of this request's own conversation (the
        # contract's pairing): another conversation's call of the same name is not its
        thread = mine.conversation if mine is not None else None
        earlier = {
            call_key(c.id, c.name): (s.exchange, c.name, s.response_id)
            for s in summaries.values()
            if s.exchange < exchange and (thread is None or s.conversation == thread)
            for c in s.calls
        }
        head = Text()
        if thread is not None:
            ours = sorted(s.exchange for s in summaries.values() if s.conversation == thread)
            if len(ours) > 1:
                head.append("Conversation ", style="bold")
                head.append(f"begun at exchange {thread} ({describe_numbers(ours)})\n")
        self.update(head + conversation(history, findings, earlier))
