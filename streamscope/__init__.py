"""streamscope: see exactly what an LLM provider streamed, and what every client made of it."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy, so `import streamscope.core...` never pulls httpx in (the import-hygiene test).
    if name == "playback_transport":
        from .playback import playback_transport

        return playback_transport
    raise AttributeError(f"module 'streamscope' has no attribute {name!r}")
