"""The replay's typed messages: what changed, for the screens and widgets that show it."""

from __future__ import annotations

from textual.message import Message


class FrameSelected(Message):
    """The user picked a frame in the frame list."""

    def __init__(self, frame: int) -> None:
        super().__init__()
        self.frame = frame


class OpenExchange(Message):
    """Open exchange `exchange`: its stream, or its request and response."""

    def __init__(self, exchange: int) -> None:
        super().__init__()
        self.exchange = exchange


class RecordingGrew(Message):
    """--follow: lines were appended to the recording and indexed; the app's exchange
    infos and the open stream's model are up to date."""


class StreamRead(Message):
    """More of a long stream was read in the background (its model says how much)."""
