"""streamscope: see exactly what an LLM provider streamed, and what every client made of it."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy, so `import streamscope.core...` never pulls httpx in (the import-hygiene test).
    if name in ("playback_transport", "async_playback_transport"):
        from . import playback

        return getattr(playback, name)
    if name in ("recording_transport", "async_recording_transport"):
        from .record import transport

        return getattr(transport, name)
    if name == "RecordingExists":  # what recording_transport raises for an existing file
        from .recording import RecordingExists

        return RecordingExists
    raise AttributeError(f"module 'streamscope' has no attribute {name!r}")
