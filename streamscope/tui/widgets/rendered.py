"""A widget's content rendered once, at the width it will be shown at.

Textual renders a Static's Rich renderable up to three times a step: to measure its height
for a layout pass, to paint it, and again after a resize. For a table or a page of
highlighted JSON that is Rich's whole layout each time. Rendered once here, the later
passes take its lines as Textual's strips (a Textual Visual: no segment is split or
styled again, which for a frame detail of thousands of lines was most of a key's time);
and the widget knows its height, so a step asks for a layout pass only when the height
changed.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.css.styles import RulesMap
from textual.render import measure
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Static


class Rendered(Visual):
    """`renderable`'s lines at the width of `options`, and at any other width Textual asks
    for (kept too: in a pane that gains a scrollbar, Textual lays the content out at the
    old width, then the new one). Printed by Rich, it is its lines."""

    def __init__(self, renderable: RenderableType, console: Console, options: ConsoleOptions):
        self.renderable = renderable
        self.width = options.max_width
        self._console, self._options = console, options
        self._lines: dict[int, list[list[Segment]]] = {}
        self._strips: tuple[int, RichStyle, list[Strip]] | None = None  # the last drawn

    @property
    def lines(self) -> list[list[Segment]]:
        """The lines at the width it was made for (rendered when first asked: a page shown
        in a narrower pane is laid out only at that pane's width)."""
        return self.lines_at(self.width)

    def lines_at(self, width: int) -> list[list[Segment]]:
        lines = self._lines.get(width)
        if lines is None:
            if len(self._lines) > 1:  # (a few widths at most: a resize lays out anew)
                self._lines = {w: got for w, got in self._lines.items() if w == self.width}
            options = self._options.update_width(width)
            lines = self._lines[width] = self._console.render_lines(
                self.renderable, options, pad=False
            )
        return lines

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return measure(
            self._console, self.renderable, container_width, container_width=container_width
        )

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines_at(width))

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        # the widget's style under each segment's, as Textual's post_render applies it
        base = style.rich_style
        if self._strips is None or self._strips[:2] != (width, base):
            lines = self.lines_at(width)
            self._strips = (width, base, [Strip(line).apply_style(base) for line in lines])
        strips = self._strips[2]
        return strips if height is None else strips[:height]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width != self.width:  # (another console: Rich lays it out itself)
            yield from console.render(self.renderable, options)
            return
        end = Segment.line()
        for line in self.lines:
            yield from line
            yield end

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)


class RenderedStatic(Static):
    """A Static whose `show_rendered` renders its content at the widget's width, once, and
    asks for a layout pass only when the content's height changed."""

    _height = -1  # lines of what was last shown (-1: not known)

    def show_rendered(self, renderable: RenderableType) -> None:
        width = self.size.width
        if width <= 0:  # not laid out yet: Textual measures it as usual
            self._height = -1
            self.update(renderable)
            return
        # the options Textual paints a Rich renderable with (textual.visual.RichVisual)
        options = self.app.console_options.update_width(width).update(highlight=False)
        rendered = Rendered(renderable, self.app.console, options)
        height = len(rendered.lines)
        self.update(rendered, layout=height != self._height)
        self._height = height
