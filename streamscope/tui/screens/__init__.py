"""The replay's screens, one per module."""

from .exchanges import ExchangesScreen
from .help import help_text
from .loading import Loading, Waiting
from .request import RequestScreen
from .stream import StreamScreen
from .text_screen import TextScreen
from .websocket import SessionScreen

__all__ = [
    "ExchangesScreen",
    "Loading",
    "Waiting",
    "RequestScreen",
    "SessionScreen",
    "StreamScreen",
    "TextScreen",
    "help_text",
]
