"""streamscope: see exactly what an LLM provider streamed, and what every client made of it.

The in-process API, for code that lives beside an agent (the command line is `streamscope`,
the pytest plugin is loaded by pytest itself):

- `playback_transport(path)` / `async_playback_transport(path)`: a transport for an
  httpx2 or httpx client (and so for openai, anthropic and google-genai clients) that
  answers from recorded streams, with no server and no socket (`PlaybackTransport`).
- `recording_transport(path)` / `async_recording_transport(path)`: a transport that
  records what a client sends and receives (`RecordingTransport`).
- `RecordingExists`: raised by `recording_transport` for a recording already there;
  `RecordingError`: raised for a file that cannot be read or served.

Every name is imported on first use: `import streamscope` loads no HTTP package, SDK or UI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ imports on first use
    from .playback.library import PlaybackTransport, async_playback_transport, playback_transport
    from .record.transport import (
        RecordingTransport,
        async_recording_transport,
        recording_transport,
    )
    from .recording.format import RecordingError
    from .recording.writer import RecordingExists

__version__ = "0.1.0"

__all__ = [
    "PlaybackTransport",
    "RecordingError",
    "RecordingExists",
    "RecordingTransport",
    "__version__",
    "async_playback_transport",
    "async_recording_transport",
    "playback_transport",
    "recording_transport",
]

# name -> the module that defines it (imported by __getattr__ on first use)
_LAZY = {
    "PlaybackTransport": "playback.library",
    "playback_transport": "playback.library",
    "async_playback_transport": "playback.library",
    "RecordingTransport": "record.transport",
    "recording_transport": "record.transport",
    "async_recording_transport": "record.transport",
    "RecordingError": "recording.format",
    "RecordingExists": "recording.writer",
}


def __getattr__(name: str) -> Any:
    # Lazy, so `import streamscope.core...` never pulls httpx in (the import-hygiene test).
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'streamscope' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
