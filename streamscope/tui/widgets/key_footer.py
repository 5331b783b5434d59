"""The footer of keys, redrawn only when the keys it shows change."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's footer rebuilds its keys on every focus change and every return to its
    screen (a dozen widgets mounted again: 20-30 ms of each `g`, `?` or Escape); this one
    rebuilds them only when what it shows differs."""

    _shown: Any = None

    _held = False  # shown again, its keys not looked at until the focus is back

    def bindings_changed(self, screen: Screen) -> None:
        if not self.display or self._held:  # (a question is asked: looked at after it)
            return
        shown = tuple(
            (binding, enabled, tooltip)
            for _, binding, enabled, tooltip in screen.active_bindings.values()
            if binding.show
        )
        if shown == self._shown and self.children:
            return
        self._shown = shown
        super().bindings_changed(screen)

    def watch_show_command_palette(self) -> None:
        # (Textual's footer shows the change at its next rebuild, which this one skips
        # when the keys are the same: a narrow screen's footer kept the palette's hint)
        if self.is_mounted and self._shown is not None:
            self._shown = None
            self.call_next(self.bindings_changed, self.screen)

    def show(self, shown: bool) -> None:
        """Shown or hidden (the question's line takes its place)."""
        self.display = shown
        if shown:
            # its keys looked at once the focus is back (Textual moves it from the app's
            # queue): they are then those it showed before, and it is not built again
            self._held = True
            self.app.call_later(self._release)

    def _release(self) -> None:
        self._held = False
        # (from the footer's own queue, where Textual's footer builds its keys)
        self.call_next(self.bindings_changed, self.screen)
