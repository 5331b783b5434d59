"""Bindings several screens share."""

from __future__ import annotations

from textual.binding import Binding

HELP = Binding(
    "question_mark",
    "app.help",
    "Help",
    key_display="?",
    id="help",
    tooltip="every key, and how to read the screen",
)


BACK = Binding("q", "app.back", "Back", id="back", tooltip="back to the exchanges, or quit")
