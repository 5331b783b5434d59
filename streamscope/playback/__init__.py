"""Playing recordings back: the library that picks an exchange, the transport, `serve`."""

from .library import Library, playback_transport

__all__ = ["Library", "playback_transport"]
