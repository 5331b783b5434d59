"""A one-line question asked at the foot of a screen (go to a frame, filter)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label

from ...text import cut
from .key_footer import KeyFooter

ANSWER_ROOM = 12  # the columns a long question leaves for its answer (cut with … to fit)


def number_answered(value: str | None) -> int | None:
    """The whole number an answer gives in ASCII digits (spaces around it allowed), else
    None: `str.isdigit` also takes "²" and "٣", which `int` refuses or reads otherwise."""
    text = (value or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 30:
        return None
    return int(text)


class Answer(Input):
    """The answer's line. Its editing keys (Backspace, Left, Home...) act here, in their
    turn among the letters: Textual checks an input's bindings once the key has gone back
    up to the app, behind the keys typed since (`a b Backspace c` typed fast read "ab")."""

    async def handle_key(self, event: events.Key) -> bool:
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if await self.app.run_action(binding.action, self):
                event.stop()
                return True
        return await super().handle_key(event)


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
    # Enter and Escape are the app's first (priority): the question closes, and the focus
    # goes back, before the next key is handed out, so the keys typed after them are the
    # screen's however fast (handed to the answer, they went into the hidden line)
    BINDINGS = [
        Binding("enter", "submit", "Answer", priority=True),
        Binding("escape", "cancel", "Cancel", priority=True),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._done: Callable[[str | None], None] | None = None
        self._question = ""
        self._back: Widget | None = None  # what had the focus before the question

    def compose(self) -> ComposeResult:
        yield Label()
        yield Answer(compact=True, id="answer")

    @property
    def asking(self) -> bool:
        return self.has_class("-asking")

    def ask(self, question: str, done: Callable[[str | None], None], value: str = "") -> None:
        """Show `question`; `done` gets the answer (None: cancelled)."""
        self._done, self._back = done, self.screen.focused
        self._question = question
        self._fit()
        answer = self.query_one(Input)
        answer.value = value
        self.add_class("-asking")
        self._footer(False)
        # focused now, not once the keys already typed are handled (Widget.focus waits
        # for them): every key typed after the question is the answer's, however fast
        self.screen.set_focus(answer)

    def _fit(self) -> None:
        """The question in the line's width less the answer's room: at 60 columns the
        filter's took the whole line, and what was typed was out of sight."""
        width = (self.size.width or self.app.size.width) - 2 - ANSWER_ROOM  # (its padding)
        # (as typed: a filter is no markup)
        self.query_one(Label).update(Text(cut(self._question, max(width, 1))))

    def on_resize(self) -> None:
        if self.asking:
            self._fit()

    async def _answered(self) -> str:
        """The answer once the keys typed before Enter are in it (they wait in its queue)."""
        answer = self.query_one(Input)
        typed = asyncio.Event()
        if answer.call_later(typed.set):  # (after them; not scheduled: the app is closing)
            await typed.wait()
        return answer.value

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

    async def action_submit(self) -> None:
        self._close(await self._answered())

    async def action_cancel(self) -> None:
        await self._answered()  # (the keys before Escape edit the answer, not the screen)
        self._close(None)

    @on(Input.Blurred)
    def _left(self, event: Input.Blurred) -> None:
        # focus moved away (a click elsewhere): the question is dropped, not left open
        if self.asking and not self.query_one(Input).has_focus:
            self._close(None)
