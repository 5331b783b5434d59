"""A one-line question asked at the foot of a screen (go to a frame, filter)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label

from .key_footer import KeyFooter


class AskLine(Horizontal):
    """The question and its answer, in the keys' line while it is asked. Asked here, not
    in a dialog over the screen: the frames stay in sight, and no screen is opened and
    closed (which restyled and repainted the whole stream screen: 100-200 ms of each `g`).
    The screen's keys are off meanwhile (its `check_action`): they are the answer's."""

    DEFAULT_CSS = """
    AskLine {
        dock: bottom;
        height: 1;
        display: none;
        background: $surface;
    }
    AskLine.-asking {
        display: block;
    }
    AskLine > Label {
        padding: 0 1;
        color: $accent;
        text-style: bold;
    }
    AskLine > Input {
        width: 1fr;
    }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._done: Callable[[str | None], None] | None = None
        self._back: Widget | None = None  # what had the focus before the question

    def compose(self) -> ComposeResult:
        yield Label()
        yield Input(compact=True, id="answer")

    @property
    def asking(self) -> bool:
        return self.has_class("-asking")

    def ask(self, question: str, done: Callable[[str | None], None], value: str = "") -> None:
        """Show `question`; `done` gets the answer (None: cancelled)."""
        self._done, self._back = done, self.screen.focused
        self.query_one(Label).update(Text(question))  # (as typed: a filter is no markup)
        answer = self.query_one(Input)
        answer.value = value
        self.add_class("-asking")
        self._footer(False)
        # focused now, not once the keys already typed are handled (Widget.focus waits
        # for them): every key typed after the question is the answer's, however fast
        self.screen.set_focus(answer)

    def _close(self, value: str | None) -> None:
        done, back = self._done, self._back
        self._done = self._back = None
        if back is not None and back.is_attached:
            self.screen.set_focus(back)  # (now: the keys typed after Enter are the screen's)
        # the line and the footer trade places in one step: one layout pass, the panes
        # above keep their size (two steps resized them twice: 75 ms at 20,000 calls)
        self.remove_class("-asking")
        self._footer(True)
        if done is not None:
            done(value)

    def _footer(self, shown: bool) -> None:
        for footer in self.screen.query(KeyFooter):
            footer.show(shown)

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(event.value)

    def action_cancel(self) -> None:
        self._close(None)

    @on(Input.Blurred)
    def _left(self, event: Input.Blurred) -> None:
        # focus moved away (a click elsewhere): the question is dropped, not left open
        if self.asking and not self.query_one(Input).has_focus:
            self._close(None)
