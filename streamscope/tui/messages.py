"""The replay's typed messages: what changed, for the screens and widgets that show it."""

from __future__ import annotations

from textual.message import Message


class FrameSelected(Message):
    """The user picked a frame in the frame list."""

    def __init__(self, frame: int) -> None:
        super().__init__()
        self.frame = frame


class OpenExchange(Message):
    """Open exchange `exchange`: its stream, its session, or its request and response;
    `turn`: that response (1-based) of its WebSocket session."""

    def __init__(self, exchange: int, turn: int | None = None) -> None:
        super().__init__()
        self.exchange, self.turn = exchange, turn


class RecordingGrew(Message):
    """--follow: lines were appended to the recording and indexed; the app's exchange
    infos and the open stream's model are up to date."""


class StreamRead(Message):
    """More of a long stream was read in the background (its model says how much)."""


class OpenTurn(Message):
    """Open response `turn` (its index among the session's turns) of the WebSocket
    session `exchange` at frame `frame`; `replace`: in place of the screen shown."""

    def __init__(self, exchange: int, turn: int, frame: int = 0, replace: bool = False) -> None:
        super().__init__()
        self.exchange, self.turn, self.frame, self.replace = exchange, turn, frame, replace


class Progressed(Message):
    """A worker read `done` of `total` (a loading screen's bar): posted, not waited for."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total
