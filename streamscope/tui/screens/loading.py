"""A progress bar while a big input is indexed."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import (
    Label,
    ProgressBar,
)

from ...text import visible
from ..messages import Progressed
from .bindings import WAITING


class Loading(Screen):
    """A progress bar while a big input is indexed or a stream is read."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="loading"):
            # text, not markup, its control characters escaped: it names the file
            yield Label(Text(visible(self.what)))
            yield ProgressBar(total=100, show_eta=False, id="progress")

    def say(self, what: str) -> None:
        """What is being read now (the bar starts again)."""
        self.what = what
        self.query_one(Label).update(Text(visible(what)))
        self.progress(0, 1)

    def progress(self, done: int, total: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)

    def on_progressed(self, message: Progressed) -> None:
        self.progress(message.done, message.total)


class Waiting(Loading):
    """The first screen while a followed recording is not written yet: q quits."""

    BINDINGS = WAITING
