"""The line above the client strategy's calls: which client, and whether it could read them."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...core.calls import StrategyError
from ...text import one_line, visible
from ..model import FrameState
from .common import clients


class StrategyLabel(Static):
    # one line high, always: its updates never ask for a layout pass
    DEFAULT_CSS = "StrategyLabel { height: 1; }"

    state: reactive[FrameState | None] = reactive(None, init=False)
    strategy: reactive[int] = reactive(0, init=False)  # which client, in the dialect's order

    def _watch_any(self) -> None:
        state = self.state
        if state is None:
            return
        others = clients(state)
        name = others[self.strategy % len(others)]
        got = state.strategy_calls()[name]
        if isinstance(got, (list, StrategyError)):
            width = self.size.width or self.app.size.width
            self.update(
                fitted(name, got, state.number, width),
                layout=False,  # one line high (#strategy-label): no layout pass per frame
            )
        else:  # the SDK's emulation does not model this stream's shape
            self.update(
                Text(f"{name}: not available here ({visible(str(got))})", style="yellow"),
                layout=False,
            )

    watch_state = watch_strategy = _watch_any


def strategy_label(name: str, got: object, n: int, short: int = 0) -> Text:
    """`short`: 1, the legend in fewer words; 2, none (a long client name, a small
    terminal: the line holds one row)."""
    if isinstance(got, StrategyError):
        # the SDK's message on one line as inspect says it: a line break as ↵, every
        # other control character escaped
        error = one_line(got.error)
        if got.why is not None:  # one line: why first, it is what the error does not say
            return Text(
                f"{name} raised at frame {got.frame}: {visible(got.why)} ({error})",
                style="bold red",
            )
        return Text(f"{name}: raised {error} at frame {got.frame}", style="bold red")
    legend = ("(≠ marks what differs from robust)", "(≠: differs from robust)", "")[short]
    return Text(f"{name} at frame {n} {legend}".rstrip(), style="bold")


def fitted(name: str, got: object, n: int, width: int) -> Text:
    """The label and its key hint in `width` columns: the legend says less, then the hint
    goes, before anything is cut."""
    hints = (" · s: next strategy", " · s: next")
    for short, hint in ((0, hints[0]), (1, hints[0]), (1, hints[1]), (2, hints[1]), (2, "")):
        label = strategy_label(name, got, n, short) + Text(hint, style="dim")
        if label.cell_len <= width:
            return label
    return label


# robust's legend, in fewer words as the width asks (nothing is cut)
ROBUST_LEGENDS = (
    " · green: this frame changed it · ⚠ a trap",
    " · green: changed · ⚠ a trap",
    " · green: changed",
    "",
)


def robust_label(width: int) -> Text:
    """The line above robust's calls in `width` columns: the legend says less, then goes."""
    for legend in ROBUST_LEGENDS:
        label = Text("robust: streamscope's reading", style="bold") + Text(legend, style="dim")
        if label.cell_len <= width:
            break
    return label


class RobustLabel(Static):
    """The line above robust's calls, fitted to its width."""

    DEFAULT_CSS = "RobustLabel { height: 1; }"

    def on_resize(self) -> None:
        self.update(robust_label(self.content_region.width), layout=False)
