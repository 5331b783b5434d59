"""A modal page of text (help, arguments)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    Label,
    Static,
)

from ..widgets.rendered import Rendered


class TextScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.heading = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.heading, style="bold"))
            with VerticalScroll():
                # rendered once per width: Textual lays a page out and paints it several
                # times as it opens (Rich's whole table and wrapping each time)
                options = self.app.console_options.update(highlight=False)
                yield Static(Rendered(self.body, self.app.console, options))
            yield Label(Text("escape or q closes", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
