"""Every key of the replay, once: the screens bind them (screens/bindings.py), the footer
and the command palette show them, the help screen and `replay --help` list them.

Pure data, no Textual: `streamscope --help` reads it without loading the TUI.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.record import record

# Textual's key names as a person types them
TYPED = {
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "question_mark": "?",
    "slash": "/",
    "plus": "+",
    "equals_sign": "=",
    "minus": "-",
    "right_curly_bracket": "}",
    "left_curly_bracket": "{",
}


@record(frozen=True, slots=True)
class Key:
    id: str
    keys: tuple[str, ...]  # Textual's names of the keys that do it
    action: str
    label: str  # its name in the footer and the command palette
    what: str  # what it does, in the help's, the palette's and `replay --help`'s words
    footer: bool = True  # shown in the footer
    # before any widget's own use of the key; a question's key (g, /) is, so that it is
    # asked before the keys typed after it are handed out: they are all the answer's
    priority: bool = False
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
BACK = Key(
    "back",
    ("q",),
    "app.back",
    "Back",
    "back to where it was opened from (the exchanges, a session); on the first screen, quit",
)
QUIT = replace(BACK, label="Quit")  # the exchanges screen's q
OPEN = Key(
    "open",
    ("enter",),
    "open",
    "Open",
    "open the selected exchange (its stream, its WebSocket session, or its request and "
    "response); in a session, the selected message's response at that message",
)
# A WebSocket session's responses, one after the other: on the session's screen the
# cursor goes to the response's first message, on a response's stream its stream opens
NEXT_TURN = Key(
    "next_turn",
    ("right_curly_bracket",),
    "turn(1)",
    "Next response",
    "the next response of a WebSocket session",
    display="}",
)
PREV_TURN = Key(
    "prev_turn",
    ("left_curly_bracket",),
    "turn(-1)",
    "Previous response",
    "the previous response of a WebSocket session",
    footer=False,
    display="{",
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
    FIRST := Key(
        "first",
        ("home",),
        "jump(0)",
        "First",
        "before the first frame (in a session: its first message)",
        footer=False,
        priority=True,
    ),
    LAST := Key(
        "last",
        ("end",),
        "jump(-1)",
        "Last",
        "the last frame, with the repair panel (in a session: its last message)",
        footer=False,
        priority=True,
    ),
    GOTO := Key(
        "goto",
        ("g",),
        "goto",
        "Go to",
        "go to a frame by its number (in a session: a message)",
        footer=False,
        priority=True,
    ),
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
        priority=True,
        display="/",
    ),
    Key(
        "arguments",
        ("a",),
        "arguments",
        "Args",
        "every call's arguments at this frame, whole, and the tool results the next request sent",
    ),
    Key(
        "request",
        ("r",),
        "request",
        "Request",
        "the request: messages, tools, parameters, contract findings",
    ),
    replace(NEXT_TURN, footer=False),  # (a response of a session only: see check_action)
    replace(PREV_TURN, footer=False),
    HELP,
    BACK,
)
EXCHANGES = (OPEN, QUIT, HELP)
REQUEST = (BACK, HELP)
SESSION = (
    Key("down", ("down",), "move(1)", "Down", "the next message", footer=False, priority=True),
    Key("up", ("up",), "move(-1)", "Up", "the previous message", footer=False, priority=True),
    Key(
        "page_down",
        ("pagedown",),
        "page(1)",
        "Page down",
        "a page of messages on",
        footer=False,
        priority=True,
    ),
    Key(
        "page_up",
        ("pageup",),
        "page(-1)",
        "Page up",
        "a page of messages back",
        footer=False,
        priority=True,
    ),
    FIRST,
    LAST,
    GOTO,
    NEXT_TURN,
    PREV_TURN,
    OPEN,
    HELP,
    BACK,
)

# `replay A B`: two streams stepped together (tui/sidebyside.py)
SIDE_BY_SIDE = (
    Key("next", ("right", "n"), "step(1)", "Next", "both sides to the next aligned step"),
    Key("prev", ("left", "p"), "step(-1)", "Prev", "both sides to the previous aligned step"),
    Key(
        "next_difference",
        ("right_square_bracket",),
        "difference",
        "Difference",
        "the next step where the two sides' tables differ anew",
        display="]",
    ),
    HELP,
    replace(QUIT, what="quit (on the help page: close it)"),
)

# A footer too narrow for every key leaves keys out, these first to last, until the rest
# fit (at 60 columns the stream screen's Play and Filter): the help (?) and back (q) keys
# are never left out; every key stays bound, listed by ? and the command palette
LEFT_OUT_FIRST = (
    "play",
    "filter",
    "arguments",
    "strategy",
    "request",
    "next_anomaly",
    "next_difference",
    "prev",
    "next_turn",
    "open",
    "next",
)


def every() -> list[Key]:
    """Every key the replay answers, once each, in the help's order."""
    seen: dict[tuple[str, ...], Key] = {}
    for key in (*STREAM[:-2], *SESSION[:4], OPEN, PALETTE, HELP, BACK):
        seen.setdefault(key.keys, key)
    return list(seen.values())


def listed() -> str:
    """Every key, one a line, as `replay --help` lists them ("\\b": click keeps the lines)."""
    every_key = every()
    width = max(len(k.typed) for k in every_key) + 3
    lines = [f"  {k.typed:<{width}}{k.what}" for k in every_key]
    side = [f"  {k.typed:<{width}}{k.what}" for k in SIDE_BY_SIDE]
    return (
        "\b\nKeys (? lists them on every screen, with how to read it):\n"
        + "\n".join(lines)
        + "\n\n\b\nSide by side (replay A B):\n"
        + "\n".join(side)
    )
