"""The frame list: every frame (or the filtered ones), rendered line by line on demand."""

from __future__ import annotations

from bisect import bisect_left

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.events import Click
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...dialects import worst
from ...marks import MARK, STYLE
from ..messages import FrameSelected
from ..model import StreamModel
from .common import ms

SUMMARY_KEPT = 7  # the summary's columns kept before the time and the gap: its kind and …


def summary(text: str, room: int) -> str:
    """A frame's summary in `room` columns: whole, or cut and ending in an ellipsis (cut
    bare, it read as whole). Only what fits is measured (a megabyte frame's summary)."""
    if room <= 0:
        return ""
    piece = text[: room + 1]  # (a character takes a column or more)
    if len(text) > len(piece) or cell_len(piece) > room:
        return set_cell_size(piece, room - 1) + "…"
    return piece


class FrameList(ScrollView, can_focus=True):
    """Every frame (or the filtered ones): number, time, gap, summary, anomaly marks.

    Lines are rendered on demand, so a stream of a million frames costs nothing to show.
    """

    DEFAULT_CSS = "FrameList { scrollbar-size-vertical: 1; }"

    frame: reactive[int] = reactive(0, init=False)  # the current frame, highlighted
    rows: reactive[list[int]] = reactive(list, init=False)  # the frames the filter shows

    def __init__(self, model: StreamModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.set_reactive(FrameList.rows, list(range(1, model.total + 1)))
        self.virtual_size = Size(1, len(self.rows))  # lines are cut to the width: no side scroll

    def watch_rows(self, rows: list[int]) -> None:
        self.virtual_size = Size(1, len(rows))
        self.watch_frame(self.frame)

    def watch_frame(self, frame: int) -> None:
        """Keep the current frame in view."""
        rows = self.rows  # sorted frame numbers: found by bisection, no index of every row
        y = bisect_left(rows, frame)
        if y < len(rows) and rows[y] == frame:
            top = self.scroll_offset.y
            height = max(self.size.height, 1)
            if not top <= y < top + height:
                self.scroll_to(y=max(0, y - height // 2), animate=False)

    def on_resize(self) -> None:
        # the call tables above grow as calls open: a jump can shrink the list after it
        # scrolled the frame into view
        self.watch_frame(self.frame)

    def rows_index(self) -> dict[int, int]:
        cached = getattr(self, "_index", None)
        if cached is None or cached[0] is not self.rows:
            cached = (self.rows, {f: i for i, f in enumerate(self.rows)})
            self._index = cached
        return cached[1]

    def render_line(self, y: int) -> Strip:
        row = self.scroll_offset.y + y
        width = self.scrollable_content_region.width  # not the scrollbar's column
        if row >= len(self.rows):
            return Strip.blank(width)
        n = self.rows[row]
        model = self.model
        kinds = model.marks.get(n, [])
        level = worst(kinds)
        mark = MARK[level] if level else " "
        t, gap = model.time(n), model.gap(n)
        digits = len(str(model.total))
        # narrow (beside a request at 60 columns), the gap goes, then the time: the summary
        # keeps its first word, the frame's kind ("finish", "tc0 arg")
        left = width - digits - 2 - SUMMARY_KEPT
        head = f"{mark}{n:>{digits}} "
        if left >= 8:
            head += f"{ms(t):>7} "
        if left >= 16:
            head += f"{('+' + ms(gap)) if gap is not None else '':>7} "
        text = summary(model.summaries[n - 1], width - len(head))
        base = Style(reverse=True, bold=True) if n == self.frame else Style()
        segments = [
            Segment(mark, base + Style.parse(STYLE[level]) if level else base),
            Segment(head[1:], base + Style(dim=n != self.frame)),
            Segment(text, base),
        ]
        return Strip(segments).adjust_cell_length(width, base)

    def on_click(self, event: Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
            self.post_message(FrameSelected(self.rows[row]))
