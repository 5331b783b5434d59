"""The help text: keys and how to read the screen, reflowing to any width."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...marks import legend

# the clients `s` cycles through, when no stream is open (the first dialect's)
CLIENTS = ("guarded", "naive", "openai-sdk", "openai-docs", "by-id")

KEYS = (
    ("→ n  ← p", "next / previous frame (within the filter, if one is set)"),
    ("] [", "next / previous frame with an anomaly"),
    ("home end", "before the first frame / the last frame (the repair panel)"),
    ("g", "go to a frame by number"),
    ("space", "play / pause at the recorded timing"),
    ("+ -", "play faster / slower"),
    ("s", "show the next client strategy ({clients})"),
    ("/", "filter frames by summary text or anomaly kind; an empty filter shows all"),
    ("a", "every call's arguments, whole"),
    ("r", "the request: messages, tools, parameters and the contract's findings"),
    ("enter", "open the selected exchange (exchanges screen)"),
    ("ctrl+p", "command palette: every action by name"),
    ("?", "this help"),
    ("q", "back, or quit"),
)


READING = (
    "robust is streamscope's reading of the stream; green cells are what this frame "
    "changed, ⚠ yellow marks a value a naive client would have overwritten, ≠ red marks "
    "where another client's table differs from robust. The frame list marks anomalies "
    f"({legend()}); the timeline shows gaps between frames (taller: longer) "
    "and ▲ anomaly frames. In the request (r), a green id is one an earlier stream "
    "assembled, a red one is where the contract broke, with the finding's words under it."
)


def help_text(clients: tuple[str, ...] = CLIENTS) -> RenderableType:
    """The keys and how to read the screen, as text that reflows to any width; `clients`:
    the strategies of the stream shown (its dialect's)."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold cyan", no_wrap=True)
    keys.add_column(ratio=1)
    for key, what in KEYS:
        keys.add_row(key, what.format(clients=", ".join(clients)))
    return Group(
        Text("Keys", style="bold"),
        keys,
        Text(""),
        Text("Reading the screen", style="bold"),
        Text(READING),
    )
