"""The footer of keys, redrawn only when the keys it shows change."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from ..keys import LEFT_OUT_FIRST

NARROW = 90  # columns below which the footer leaves the palette's hint out


class KeyFooter(Footer):
    """Textual's footer rebuilds its keys on every focus change and every return to its
    screen (a dozen widgets mounted again: 20-30 ms of each `g`, `?` or Escape); this one
    rebuilds them only when what it shows differs.

    Too narrow for every key, it leaves some out (keys.LEFT_OUT_FIRST), so that those it
    shows fit, ? and q among them: Textual's ran them off the right edge.
    (Compact: its widths are those of a compact footer.)"""

    _shown: Any = None
    # the keys it has, as built last: (the key, its columns, the key's id); its palette hint's
    _widths: tuple[tuple[str, int, str | None], ...] = ()
    _palette = 0
    _left_out: frozenset[str] = frozenset()  # the keys (Textual's names) left out

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

    def compose(self) -> ComposeResult:
        built = list(super().compose())
        active = self.screen.active_bindings
        widths, self._palette = [], 0
        for widget in built:
            if isinstance(widget, FooterKey):
                # compact: "key label", a column after it (the palette's: a bar before it)
                cells = cell_len(widget.key_display) + 1 + cell_len(widget.description) + 1
                if widget.has_class("-command-palette"):
                    self._palette = cells
                elif widget.key in active:
                    widths.append((widget.key, cells, active[widget.key][1].id))
        self._widths = tuple(widths)
        self._left_out = left_out = self._leaves_out(self.size.width or self.app.size.width)
        for widget in built:
            if not (isinstance(widget, FooterKey) and widget.key in left_out):
                yield widget

    def _leaves_out(self, width: int) -> frozenset[str]:
        """The keys left out at `width` columns: the first of LEFT_OUT_FIRST, until the
        rest fit."""
        need = self._palette + sum(cells for _, cells, _ in self._widths)
        out: set[str] = set()
        for goes in LEFT_OUT_FIRST:
            for key, cells, id in self._widths:
                if need > width and id == goes:
                    out.add(key)
                    need -= cells
        return frozenset(out)

    def on_resize(self, event: events.Resize) -> None:
        # a small terminal's footer, on every screen, has room for the screen's own keys,
        # not the palette's hint (ctrl+p still opens it; ? lists it)
        self.show_command_palette = event.size.width >= NARROW
        if self._shown is not None and self._leaves_out(event.size.width) != self._left_out:
            self._shown = None  # (built again: the keys it has are the same)
            self.call_next(self.bindings_changed, self.screen)

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
