"""The help text: keys and how to read the screen, reflowing to any width."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...core.anomalies import ERROR
from ...marks import MARK, legend
from .. import keys as replay_keys

# the clients `s` cycles through, when no stream is open (the first dialect's)
CLIENTS = ("guarded", "naive", "openai-sdk", "openai-docs", "by-id")

READING = (
    "robust is streamscope's reading of the stream; green cells are what this frame "
    "changed, ⚠ yellow marks a value a naive client would have overwritten, ≠ red marks "
    "where another client's table differs from robust. The frame list marks anomalies "
    f"({legend()}); the timeline shows gaps between frames (taller: longer) "
    "and ▲ anomaly frames. In the request (r), a green id is one an earlier stream "
    "assembled, a red one is where the contract broke, with the finding's words under it. "
    "A WebSocket session lists every message, client and server, under the response it "
    f"belongs to ({MARK[ERROR]} marks a message whose frames broke the protocol); Enter opens that "
    "response's stream at that message, } and { go from response to response."
)


def help_text(clients: tuple[str, ...] = CLIENTS) -> RenderableType:
    """The keys and how to read the screen, as text that reflows to any width; `clients`:
    the strategies of the stream shown (its dialect's)."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold cyan", no_wrap=True)
    keys.add_column(ratio=1)
    for key in replay_keys.every():
        keys.add_row(key.typed, key.what)
    return Group(
        Text("Keys", style="bold"),
        keys,
        Text(""),
        Text(f"s shows each client beside robust in turn: {', '.join(clients)}"),
        Text(""),
        Text("Reading the screen", style="bold"),
        Text(READING),
    )
