"""streamscope: see exactly what an LLM provider streamed, and what every client made of it."""

__version__ = "0.1.0"
