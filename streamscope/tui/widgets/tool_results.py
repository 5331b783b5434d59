"""What the request that continues a stream sent for each of its calls, in the replay: the
tool's result on a line, whether it says it failed, and how long the tools ran."""

from __future__ import annotations

from rich.text import Text

from ...analysis.driver import AnswerSummary
from ...core.calls import Call
from ...core.results import flag, no_flag, ran
from ...marks import STYLE
from ...text import cut, quote
from .common import ROWS, and_more

WIDE = 200  # characters of a result the panel shows (`a` shows more)


def results_panel(calls: list[Call], answer: AnswerSummary | str | None, wide: int = WIDE) -> Text:
    """`answer`: the request that continues the stream; a string: why there is none; None:
    not known yet (the analysis runs)."""
    if not calls:
        return Text()
    text = Text("Tool results", style="bold")
    if answer is None:
        text.append("  (the analysis is still running)\n", style="dim")
        return text
    if isinstance(answer, str):
        text.append(f": none ({answer}); tool run time unknown\n", style="dim")
        return text
    text.append(f" sent by {answer.by()}\n", style="bold")
    text.append(f"  {ran(answer.gap_ns, answer.timing)}\n", style="dim")
    width = len(str(len(calls)))
    for i, (call, got) in enumerate(zip(calls[:ROWS], answer.results, strict=False), 1):
        text.append(f"  {i:>{width}} {quote(call.name, 40)}", style="bold cyan")
        if got is None:
            text.append("  no result answers it\n", style=STYLE["warning"])
            continue
        text.append(
            f"  {flag(got.error, got.error_field, got.error_said)}",
            style=STYLE["error"] if got.error is True else "dim",
        )
        text.append(f"  {got.where}\n", style="dim")
        # (made safe and put on one line by the analysis: ResultLine)
        text.append(f"    {cut(got.content, wide)}\n")
    and_more(text, len(calls), "calls", "inspect shows every result")
    note = no_flag(answer.results)
    if note is not None:
        text.append(f"  ({note})\n", style="dim")
    return text
