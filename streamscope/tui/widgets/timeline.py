"""The timeline: inter-frame gaps as a heat bar, anomaly ticks, a cursor."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import groupby
from operator import itemgetter

from rich.console import Group, RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...core.anomalies import SEVERITY_ORDER
from ...marks import STYLE
from ...text import cut, plural
from ..model import StreamModel
from .common import ms

_HEAT = ["green"] * 3 + ["yellow"] * 3 + ["red"] * 3  # a bar's style by its level (0-8)


def _runs(cells: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """(style, text) of consecutive cells of one style, joined."""
    for style, group in groupby(cells, key=itemgetter(0)):
        yield style, "".join(text for _, text in group)


class Timeline(Widget):
    """Inter-frame gaps as a heat bar, ticks at anomaly frames, a cursor at this frame."""

    DEFAULT_CSS = "Timeline { height: 3; }"
    BARS = " ▁▂▃▄▅▆▇█"

    frame: reactive[int] = reactive(0, init=False)  # where the cursor is
    version: reactive[int] = reactive(0, init=False)  # the model grew (read on, --follow)

    def __init__(self, model: StreamModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self._cache: tuple = ((), [], {}, 0)  # (key, levels, column -> worst, top gap)

    def _columns(self, cols: int) -> tuple[list[int], dict[int, str | None], int]:
        """Per column: the bar's level and the worst anomaly ticked there, and the largest
        gap; computed once per stream length and width (a maximum per column of the
        model's gaps), so moving the cursor costs nothing on a long stream."""
        model = self.model
        total = model.total
        key = (total, cols, len(model.anomaly_frames), model.result is None)
        if self._cache[0] == key:
            return self._cache[1], self._cache[2], self._cache[3]
        gaps = model.gaps  # kept by the model as it reads: no pass over the frames here
        peaks = []
        for col in range(cols):  # a short stream spreads each frame over several columns
            lo = col * total // cols
            peaks.append(max(gaps[lo : max(lo + 1, (col + 1) * total // cols)] or [0]))
        top = max(peaks) if peaks else 0
        levels = [max(1, int(8 * p / top)) if top else 1 for p in peaks]
        # each anomaly frame f ticks column (f - 1) * cols // total with its worst severity:
        # column c holds the frames from ceil(c * total / cols) + 1 to the next one's start
        worst_at: dict[int, str | None] = {}
        starts = [-(-c * total // cols) + 1 for c in range(cols + 1)]
        for level in sorted(model.tick_frames, key=SEVERITY_ORDER.__getitem__, reverse=True):
            frames = model.tick_frames[level]  # least severe first: the worst is set last
            for col in range(cols):
                i = bisect_left(frames, starts[col])
                if i < len(frames) and frames[i] < starts[col + 1]:
                    worst_at[col] = level
        self._cache = (key, levels, worst_at, top)
        return levels, worst_at, top

    def _stats(self, top: int, width: int) -> str:
        """The stream's times in one line of `width`: in fewer words where the full ones
        do not fit (80 columns), the legend last, then cut."""
        model = self.model
        total = model.total
        frames = plural(total, "frame")
        # the legend only where the bar above has a ▲ to explain
        legend = " · ▲ anomalies" if model.tick_frames else ""
        # a cassette, a chunk log, a raw body: no frame's time is known (nor any gap)
        if not total:  # (a recording cut before its first frame: no time, no gap to say)
            said = [frames]
        elif not model.timed or (model.time(1) is None and model.time(total) is None):
            said = [f"no times recorded · {frames}{legend}"]
        else:
            # the last frame's time, not the exchange's (the list's `took` runs to its end)
            end = model.time(total)
            first, last = ms(model.time(1)), ms(end)
            rate = total / (end / 1e9) if end else None
            fps, per_s = (f"{rate:,.0f} frames/s", f"{rate:,.0f}/s") if rate else ("no timing",) * 2
            gap = f"largest gap {ms(top)}"
            said = [
                f"first frame {first} · last frame {last} · {frames} · {fps} · {gap}{legend}",
                f"first {first} · last {last} · {frames} · {per_s} · {gap}{legend}",
                f"first {first} · last {last} · {frames} · {per_s} · {gap}",
            ]
        return next((line for line in said if len(line) <= width), cut(said[-1], width))

    def render(self) -> RenderableType:
        model = self.model
        total = model.total
        width = max(self.size.width - 1, 10)
        bar, ticks = Text(), Text()
        cols = width if total else 1
        levels, ticked, top = self._columns(cols) if total else ([1], {}, 0)
        here_col = (self.frame - 1) * cols // total if self.frame else -1
        one_line = self.size.height < 3  # the bar alone, anomaly columns marked on it

        def bar_style(col: int, level: int) -> str:
            if col == here_col:
                return "reverse"
            if one_line and col in ticked:  # the severity's colour over the heat's
                return f"{_HEAT[level]} {STYLE.get(ticked[col] or '', '')} reverse"
            return _HEAT[level]

        # runs of one style appended at once: a span per column made Rich's render of the
        # bar the dearest part of a step on a wide terminal
        for style, run in _runs(
            (bar_style(c, level), self.BARS[level]) for c, level in enumerate(levels)
        ):
            bar.append(run, style)
        if one_line:
            return bar
        for style, run in _runs(
            (STYLE.get(ticked[col] or "", ""), "▲")
            if col in ticked
            else ("bold", "┃" if col == here_col else " ")
            for col in range(len(levels))
        ):
            ticks.append(run, style)
        stats = Text(self._stats(top, self.size.width), style="dim")
        return Group(bar, ticks, stats)
