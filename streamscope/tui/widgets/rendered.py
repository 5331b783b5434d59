"""A widget's content rendered once, at the width it will be shown at.

Textual renders a Static's Rich renderable up to three times a step: to measure its height
for a layout pass, to paint it, and again after a resize. For a table or a page of
highlighted JSON that is Rich's whole layout each time. Rendered once here, the later
passes copy lines; and the widget knows its height, so a step asks for a layout pass only
when the height changed.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from textual.widgets import Static


class Rendered:
    """`renderable`'s lines at the width of `options`; at any other width, `renderable` itself."""

    def __init__(self, renderable: RenderableType, console: Console, options: ConsoleOptions):
        self.renderable = renderable
        self.width = options.max_width
        self.lines = console.render_lines(renderable, options, pad=False)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width != self.width:  # resized since: Rich lays it out again
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
