"""The request of one exchange with the contract's findings (see ../conversation.py)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...text import quote
from ..conversation import conversation


class ConversationView(Static):
    """The request of one exchange: messages, tools, parameters and the contract's findings."""

    def show(
        self, body: object, exchange: int, summaries: dict | None, error: str | None = None
    ) -> None:
        """`summaries`: the analysis of every exchange (None while it runs); `error`: why
        it could not run."""
        if summaries is None:
            head = Text("checking the contract across the recording …\n\n", style="dim")
            self.update(head + conversation(body, [], {}))
            return
        if error is not None:  # a recording the analysis cannot read: the request, unchecked
            head = Text(f"the contract was not checked: {error}\n\n", style="yellow")
            self.update(head + conversation(body, [], {}))
            return
        mine = summaries.get(exchange)
        findings = [(k, w) for k, w in mine.findings] if mine is not None else []
        earlier = {
            quote(cid): (s.exchange, name)
            for s in summaries.values()
            if s.exchange < exchange
            for cid, name in s.calls
        }
        self.update(conversation(body, findings, earlier))
