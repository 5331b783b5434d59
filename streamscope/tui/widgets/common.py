"""What the widgets share: how long a list may be, durations, the clients shown, an
exchange's worst finding."""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size, set_cell_size
from rich.text import Text

from ...analysis.driver import ExchangeSummary
from ...core.anomalies import worst_severity
from ...marks import MARK, STYLE
from ..model import FrameState

# the rows of each list a panel shows (a frame's changes, its anomalies, the calls
# repaired, their results): one chunk of 3,000 Gemini candidates made 58,000 lines of
# frame detail, and each key that drew them took seconds
ROWS = 50


def and_more(text: Text, count: int, what: str, where: str) -> None:
    """The line that says how many of `count` rows were left out (none: no line)."""
    if count > ROWS:
        text.append(f"  … {count - ROWS:,} more {what} not shown here ({where})\n", style="italic")


def cut_cells(text: str, width: int) -> str:
    """`text` cut to `width` screen columns with an ellipsis, 0 no limit, as text.cut
    (which counts characters: a wide character, as in a CJK file name, takes two)."""
    if not width or cell_len(text) <= width:
        return text
    # (a wide character cut in two is padded with a space by set_cell_size: dropped)
    return set_cell_size(text, width - 1).rstrip(" ") + "…"


def tail_cells(text: str, width: int) -> str:
    """The end of `text` in `width` screen columns, an ellipsis before it where it was cut
    (a path's end tells more than its start); "" where `width` holds no more than that."""
    if cell_len(text) <= width:
        return text
    if width < 2:
        return ""
    kept, room = len(text), width - 1
    while kept and (cells := get_character_cell_size(text[kept - 1])) <= room:
        kept, room = kept - 1, room - cells
    return "…" + text[kept:]


def ms(ns: int | None) -> str:
    if ns is None:
        return "—"
    return f"{ns / 1e6:,.0f}ms" if ns < 10e9 else f"{ns / 1e9:,.1f}s"


def clients(state: FrameState) -> tuple[str, ...]:
    """The client strategies shown beside robust, in the stream's dialect."""
    return state.engine.strategy_names[1:]


def worst_of(s: ExchangeSummary) -> Text:
    """The worst of a stream's anomalies and its request's contract findings, by kind (a
    contract break named first, then the others at its severity counted), or "clean"."""
    level = worst_severity(x.severity for x in s.seen)
    if level is None:
        return Text("clean", style="green")
    contract = [f.kind for f in s.findings]
    at_level = sorted(
        {x.kind for x in s.seen if x.severity == level}, key=lambda k: (k not in contract, k)
    )
    more = f" +{len(at_level) - 1}" if len(at_level) > 1 else ""
    return Text(f"{MARK[level]} {at_level[0]}{more}", style=STYLE[level])
