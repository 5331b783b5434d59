"""An exchange that is not a stream: its request and its response."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    Static,
)

from ...inputs import Exchange
from ...inputs.encoding import request_json
from ...recording.format import RecordingError
from ...text import visible
from ..conversation import response
from ..session import Session
from ..widgets import (
    ConversationView,
)
from ..widgets.key_footer import KeyFooter
from .bindings import REQUEST


class RequestScreen(Screen):
    """An exchange that is not a stream: its request (the conversation) and its response."""

    BINDINGS = REQUEST

    def __init__(self, session: Session, exchange: Exchange) -> None:
        super().__init__()
        self.session = session
        self.exchange = exchange

    def compose(self) -> ComposeResult:
        ex, info = self.exchange, self.exchange.info
        yield Static(
            Text(
                f"{visible(self.session.name)} · exchange {ex.number} · "
                f"not a stream · HTTP {info.status if info.status is not None else '(none)'}",
                style="bold",
            ),
            id="title",
        )
        with VerticalScroll(id="request-scroll"):
            yield Static(id="response")
            yield ConversationView(id="conversation")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#request-scroll").focus()
        self.query_one(ConversationView).show(
            self._body(), self.exchange.info.dialect, self.exchange.number, None
        )
        self._show_response(None)  # at once; why it failed once the analysis says
        self.session.when_analysed(self._analysed)

    def _body(self) -> object:
        request = self.exchange.request
        return request_json(request) if request is not None else None

    def _analysed(self, summaries: dict) -> None:
        views = self.query(ConversationView) if self.is_attached else ()
        if not views:  # (the screen is gone, or going)
            return
        mine = summaries.get(self.exchange.number)
        self._show_response(mine.failure if mine is not None else None)
        views.first().show(
            self._body(),
            self.exchange.info.dialect,
            self.exchange.number,
            summaries,
            self.session.analysis_error,
        )

    def _show_response(self, failure: str | None) -> None:
        """The response's head and body (its first 4096 reads); `failure`: why it failed."""
        ex = self.exchange
        try:
            reads = ex.reads  # (as the client read it: decompressed)
            body = b"".join(d for d, _ in reads.reads_from(0, min(len(reads), 4096)))
        except RecordingError as e:  # a bad line in the body: said, the rest still shown
            body = b""
            failure = f"{failure + '; ' if failure else ''}the body cannot be read: {e}"
        self.query_one("#response", Static).update(
            response(ex.info.status, ex.info.headers, body, failure)
        )
