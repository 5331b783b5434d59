"""Playing recordings back: the library that picks an exchange, the transport, `serve`."""

from .library import Library, PlaybackTransport, async_playback_transport, playback_transport

__all__ = ["Library", "PlaybackTransport", "async_playback_transport", "playback_transport"]
