"""A WebSocket session's messages, a line each, under the heading of the response each
belongs to; rendered line by line on demand, like the frame list."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...framing.session import WsMessage
from ...marks import MARK, STYLE
from ...text import cut
from ..session_rows import Row, Shown
from .common import ms

SENDER = {"client": Style(color="cyan"), "server": Style(color="magenta")}
HEADING = Style(bold=True)
KIND_WIDTH = 40  # the most the type column takes (the summary has the rest)


class MessageList(ScrollView, can_focus=True):
    """Every message of a session: number, time from the handshake, who sent it, opcode,
    type, summary; a heading before each response's messages. `cursor` is the selected
    line (a message's, never a heading's)."""

    DEFAULT_CSS = "MessageList { scrollbar-size-vertical: 1; }"

    cursor: reactive[int] = reactive(0, init=False)

    class Picked(Message):
        """A line was clicked."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    def __init__(
        self,
        rows: Sequence[Row],
        messages: Sequence[WsMessage],
        shown: Callable[[int], Shown],
        heading: Callable[[Row], Text],
        start_ns: int,
        **kw,
    ) -> None:
        super().__init__(**kw)
        self.rows = rows
        self.messages = messages
        self.shown = shown
        self.heading = heading
        self.start_ns = start_ns
        self.digits = len(str(len(messages)))
        kinds = (len(shown(r.message).kind) for r in rows[:2000] if r.message is not None)
        self.kind_width = min(KIND_WIDTH, max(kinds, default=4))
        self.virtual_size = Size(1, len(rows))

    def watch_cursor(self, row: int) -> None:
        """Keep the selected line in view."""
        top, height = self.scroll_offset.y, max(self.size.height, 1)
        if not top <= row < top + height:
            self.scroll_to(y=max(0, row - height // 2), animate=False)
        self.refresh()

    def on_resize(self) -> None:
        self.watch_cursor(self.cursor)

    def render_line(self, y: int) -> Strip:
        i = self.scroll_offset.y + y
        width = self.scrollable_content_region.width  # (the scrollbar's column left out)
        if i >= len(self.rows):
            return Strip.blank(width)
        row = self.rows[i]
        base = Style(reverse=True, bold=True) if i == self.cursor else Style()
        if row.message is None:  # a heading, ruled to the width
            line = Text("── ", style=HEADING) + self.heading(row) + Text(" ")
            line.truncate(max(width - 2, 0))
            strip = Strip(list(line.render(self.app.console, end="")))
            rule = Segment("─" * max(width - strip.cell_length, 0), Style(dim=True))
            return Strip([*strip, rule]).simplify()
        m, s = self.messages[row.message], self.shown(row.message)
        mark = MARK["error"] if s.bad else " "
        head = f"{row.message + 1:>{self.digits}} {ms(m.t_ns - self.start_ns):>7} "
        kind_w = self._kind_width(width)
        fixed = 1 + len(head) + 14 + kind_w + 1
        summary = cut(s.summary, width - fixed) if width > fixed else ""
        segments = [
            Segment(mark, base + Style.parse(STYLE["error"]) if s.bad else base),
            Segment(head, base + Style(dim=i != self.cursor)),
            Segment(f"{s.sender:<7}", base + SENDER.get(s.sender, Style())),
            Segment(f"{cut(s.opcode, 6):<7}", base + Style(dim=s.opcode == "text")),
            Segment(f"{cut(s.kind, kind_w):<{kind_w}} ", base + Style(bold=True)),
            Segment(summary, base),
        ]
        return Strip(segments).adjust_cell_length(width, base)

    def _kind_width(self, width: int) -> int:
        """The type column: as wide as the types, at most 45% of what the others leave."""
        rest = width - (1 + self.digits + 9 + 14)
        return max(4, min(self.kind_width, rest * 45 // 100))

    def columns(self) -> Text:
        """The columns' names, over the lines as they are laid out at this width."""
        kind_w = self._kind_width(self.scrollable_content_region.width)
        names = (
            f" {'#':>{self.digits}} {'time':>7} {'from':<7}{'opcode':<7}{'type':<{kind_w}} summary"
        )
        return Text(names, style="dim")

    def on_click(self, event: Click) -> None:
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
            self.post_message(self.Picked(row))
