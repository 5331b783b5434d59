"""Playing recordings back: the library that picks an exchange, the transport, `serve`.

Lazy: the pytest plugin (`streamscope.pytest_plugin`) loads in every pytest run of the
user's environment, and importing this package must not load the library."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .library import Library, PlaybackTransport, async_playback_transport, playback_transport

__all__ = ["Library", "PlaybackTransport", "async_playback_transport", "playback_transport"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import library

        return getattr(library, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
