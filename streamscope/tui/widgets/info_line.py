"""The stream screen's top line: where we are, playing, reading, the filter."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...text import plural, quote, visible
from ..model import FrameState, StreamModel
from .common import cut_cells, ms


class InfoLine(Static):
    """Bound to the stream screen's state: it repaints itself when any of it changes."""

    # one line high, always: its updates never ask for a layout pass
    DEFAULT_CSS = "InfoLine { height: 1; }"

    frame: reactive[int] = reactive(0, init=False)
    speed: reactive[float] = reactive(1.0, init=False)
    playing: reactive[bool] = reactive(False, init=False)
    filter_text: reactive[str] = reactive("", init=False)
    rows: reactive[list[int]] = reactive(list, init=False)  # the frames the filter shows
    version: reactive[int] = reactive(0, init=False)  # the model grew (read on, --follow)
    state: reactive[FrameState | None] = reactive(None, init=False)  # what the panes show

    def __init__(
        self, model: StreamModel, title: str, follow: bool, approximate: bool = False, **kw
    ) -> None:
        super().__init__(**kw)
        self.model, self.title_text, self.follow = model, title, follow
        # times spread over a HAR entry's receive time, not taken per read: said beside each
        self.approximate = approximate

    def on_mount(self) -> None:
        self.show()

    def _watch_any(self) -> None:
        self.show()

    def on_resize(self) -> None:
        self.show()

    watch_frame = watch_speed = watch_playing = _watch_any
    watch_filter_text = watch_rows = watch_version = watch_state = _watch_any

    def show(self) -> None:
        model, n = self.model, self.frame
        t = model.time(n) if n else None
        when = ms(t)
        if not model.timed:  # (a cassette's: said, not shown as 0ms)
            when = "no times recorded"
        elif self.approximate:  # before the first frame too: the note is where times are read
            when = f"{when} (approximate)" if t is not None else "times approximate"
        playing = f" · playing ×{self.speed:g}" if self.playing else ""
        if self.state is not None and self.state.number != n:  # computed in a thread
            playing += f" · working out frame {n}…"
        if model.reading is not None:
            playing += f" · reading {model.reading:.0%}"
        elif model.end.get("end_reason") == "unfinished":
            playing += " · open (still being written)" if self.follow else " · unfinished"
        shown = (
            f" · filter {quote(self.filter_text)}: {plural(len(self.rows), 'frame')}"
            if self.filter_text
            else ""
        )
        rest = f" · frame {n}/{model.total} · {when}{playing}{shown}"
        title = visible(self.title_text)
        room = self.size.width - 2  # (its padding)
        if room > 0 and cell_len(title) + cell_len(rest) > room:  # the title gives way first
            # its file's name first: "exchange 1 · response 2" says which stream this is
            name, sep, which = title.partition(" · ")
            left = room - cell_len(rest) - cell_len(sep + which)
            whole = max(room - cell_len(rest), 6)
            title = cut_cells(name, left) + sep + which if left >= 6 else cut_cells(title, whole)
        self.update(
            Text(cut_cells(f"{title}{rest}", max(room, 0)), style="bold"),
            layout=False,  # one line high (the stylesheet's #info): no layout pass per frame
        )
