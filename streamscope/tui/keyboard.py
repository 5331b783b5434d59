"""Where the replay's keys come from: standard input, which Textual reads (its file
descriptor 0) and puts in raw mode. When it is no terminal (a stream piped in, `<
FILE`, /dev/null) the screen would take its bytes as keys, or none at its end, and only
Ctrl-C would leave it: the app is refused in one line instead (`NoKeyboard`), before
the screen. A shell's `<(cmd)` leaves standard input the terminal."""

from __future__ import annotations

import os
from typing import Any

from textual.app import App
from textual.notifications import SeverityLevel

NO_KEYBOARD = (
    "standard input is not a terminal: replay reads its keys there "
    "(a piped stream: pass it as <(cmd), or save it to a file first)"
)


class NoKeyboard(Exception):
    """Standard input is no terminal: the screen would have no keys (one line)."""


class KeyboardApp(App):
    """An app whose screen reads its keys from standard input: `run` raises NoKeyboard
    when that is no terminal (a headless run, as tests make, needs none)."""

    def run(self, **kwargs: Any) -> Any:
        if not kwargs.get("headless") and not os.isatty(0):
            raise NoKeyboard(NO_KEYBOARD)
        return super().run(**kwargs)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notice, its text never read as markup (whatever a screen asks): it quotes
        what a file holds, its path among it, and a `[/x]` there raised MarkupError (a
        followed file's notice, then the following itself, stopped without a word)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)
