"""The line under streamscope's calls: the traps this frame held, or the text so far."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...text import quote
from ..model import FrameState

_LONG = "⚠ this frame: "


class TrapLine(Static):
    """The old and new value of every id, name or type this frame tried to overwrite; on a
    text answer, what it says so far. Hidden when there is neither."""

    # one line high, unless the values it quotes need more: its updates ask for a layout
    # pass only when its height or its display changes
    DEFAULT_CSS = "TrapLine { height: 1; }"

    state: reactive[FrameState | None] = reactive(None, init=False)

    def watch_state(self, state: FrameState | None) -> None:
        line = None if state is None else self._line(state)
        if line is not None:
            width = self.size.width or self.app.size.width
            if line.cell_len > width and line.plain.startswith(_LONG):
                line = line[len(_LONG) :]  # the values first: the words go
                line = Text("⚠ ", style="bold yellow") + line
            # whole values wrap; more than three lines of them are cut
            height = min(3, -(-line.cell_len // max(width, 1)))
            if self.styles.height is None or self.styles.height.value != height:
                self.styles.height = height
            self.update(line, layout=False)
        shown = line is not None
        if self.display != shown:  # only a change of display needs a layout pass
            self.display = shown

    @staticmethod
    def _line(state: FrameState) -> Text | None:
        caught = [
            e
            for e in state.events
            if e.op in ("overwrite", "ignored") and e.field in ("id", "name", "type")
        ]
        engine = state.engine
        if caught:
            line = Text(_LONG, style="bold yellow")
            for i, e in enumerate(caught):
                if i:
                    line.append(" · ")
                line.append(
                    f"{e.field} {quote(e.new, 48)} kept {quote(e.old, 160)}",  # ids whole
                    style="yellow" if e.op == "overwrite" else "cyan",
                )
            return line
        if not state.strategy_calls()["robust"]:  # a text answer: what it says so far
            said = engine.content_now()
            if said:
                return Text("content so far: ", style="bold") + Text(quote(said, 160))
        return None
