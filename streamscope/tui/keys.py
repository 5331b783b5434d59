"""Every key of the replay, once: the screens bind them (screens/bindings.py), the footer
and the command palette show them, the help screen and `replay --help` list them.

Pure data, no Textual: `streamscope --help` reads it without loading the TUI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# Textual's key names as a person types them
TYPED = {
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "question_mark": "?",
    "slash": "/",
    "plus": "+",
    "equals_sign": "=",
    "minus": "-",
}


@dataclass(frozen=True, slots=True)
class Key:
    id: str
    keys: tuple[str, ...]  # Textual's names of the keys that do it
    action: str
    label: str  # its name in the footer and the command palette
    what: str  # what it does, in the help's, the palette's and `replay --help`'s words
    footer: bool = True  # shown in the footer
    priority: bool = False  # before any widget's own use of the key
    display: str | None = None  # the footer's short form of the key ("spc")

    @property
    def typed(self) -> str:
        """The keys as a person types them: "right, n"."""
        return ", ".join(TYPED.get(k, k) for k in self.keys)


HELP = Key(
    "help",
    ("question_mark",),
    "app.help",
    "Help",
    "every key, and how to read the screen",
    display="?",
)
BACK = Key("back", ("q",), "app.back", "Back", "back to the exchanges; on them, quit")
QUIT = replace(BACK, label="Quit")  # the exchanges screen's q
OPEN = Key(
    "open",
    ("enter",),
    "open",
    "Open",
    "open the selected exchange: its stream, or its request and response",
)
# Textual binds it itself, on every screen: listed, not bound here
PALETTE = Key(
    "palette",
    ("ctrl+p",),
    "app.command_palette",
    "Palette",
    "command palette: every action by name",
)

STREAM = (
    Key(
        "next",
        ("right", "n"),
        "step(1)",
        "Next",
        "the next frame (within the filter)",
        priority=True,
    ),
    Key(
        "prev",
        ("left", "p"),
        "step(-1)",
        "Prev",
        "the previous frame (within the filter)",
        footer=False,
        priority=True,
    ),
    Key(
        "next_anomaly",
        ("right_square_bracket",),
        "anomaly(1)",
        "Anomaly",
        "the next frame with an anomaly",
        display="]",
    ),
    Key(
        "prev_anomaly",
        ("left_square_bracket",),
        "anomaly(-1)",
        "Previous anomaly",
        "the previous frame with an anomaly",
        footer=False,
        display="[",
    ),
    Key(
        "first",
        ("home",),
        "jump(0)",
        "First",
        "before the first frame",
        footer=False,
        priority=True,
    ),
    Key(
        "last",
        ("end",),
        "jump(-1)",
        "Last",
        "the last frame, with the repair panel",
        footer=False,
        priority=True,
    ),
    Key("goto", ("g",), "goto", "Go to", "go to a frame by its number", footer=False),
    Key(
        "play",
        ("space",),
        "play",
        "Play",
        "play or pause at the recorded timing",
        priority=True,
        display="spc",
    ),
    Key(
        "faster",
        ("plus", "equals_sign"),
        "speed(2)",
        "Faster",
        "play twice as fast",
        footer=False,
        display="+",
    ),
    Key(
        "slower", ("minus",), "speed(0.5)", "Slower", "play half as fast", footer=False, display="-"
    ),
    Key(
        "strategy",
        ("s",),
        "strategy",
        "Client",
        "show the next client strategy beside robust",
    ),
    Key(
        "filter",
        ("slash",),
        "filter",
        "Filter",
        "show only frames whose summary or anomaly kind has some text",
        display="/",
    ),
    Key(
        "arguments",
        ("a",),
        "arguments",
        "Arguments",
        "every call's arguments at this frame, whole",
        footer=False,
    ),
    Key(
        "request",
        ("r",),
        "request",
        "Request",
        "the request: messages, tools, parameters, contract findings",
    ),
    HELP,
    BACK,
)
EXCHANGES = (OPEN, QUIT, HELP)
REQUEST = (BACK, HELP)


def every() -> list[Key]:
    """Every key the replay answers, once each, in the help's order."""
    seen: dict[tuple[str, ...], Key] = {}
    for key in (*STREAM[:-2], OPEN, PALETTE, HELP, BACK):
        seen.setdefault(key.keys, key)
    return list(seen.values())


def listed() -> str:
    """Every key, one a line, as `replay --help` lists them ("\\b": click keeps the lines)."""
    every_key = every()
    width = max(len(k.typed) for k in every_key) + 3
    lines = [f"  {k.typed:<{width}}{k.what}" for k in every_key]
    return "\b\nKeys (? lists them on every screen, with how to read it):\n" + "\n".join(lines)
