"""Recordings: the JSONL file of LLM HTTP exchanges (format in recordings/README.md).

Pure Python (stdlib + orjson): nothing here imports textual, httpx, uvicorn or openai.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time __getattr__ imports each name's module on first use
    from streamscope.recording.format import (
        END_REASONS,
        REDACTED,
        SCHEMA_VERSION,
        Chunk,
        End,
        Header,
        Record,
        RecordingError,
        Request,
        Response,
        Stopped,
    )
    from streamscope.recording.migrate import MIGRATIONS, migrate
    from streamscope.recording.reader import (
        ExchangeIndex,
        RecordingIndex,
        RecordingReader,
        iter_raw,
        iter_records,
    )
    from streamscope.recording.redact import SECRET_HEADERS, redact_headers, redact_json_paths
    from streamscope.recording.writer import RecordingExists, RecordingWriter

__all__ = [
    "END_REASONS",
    "MIGRATIONS",
    "REDACTED",
    "SCHEMA_VERSION",
    "SECRET_HEADERS",
    "Chunk",
    "End",
    "ExchangeIndex",
    "Header",
    "Record",
    "RecordingError",
    "RecordingExists",
    "RecordingIndex",
    "RecordingReader",
    "RecordingWriter",
    "Request",
    "Response",
    "Stopped",
    "iter_raw",
    "iter_records",
    "migrate",
    "redact_headers",
    "redact_json_paths",
]

# name -> its module: `import streamscope.recording.format` (every input reads it) loads
# no writer, masking or migration until one is asked for
_LAZY = {
    "END_REASONS": "streamscope.recording.format",
    "REDACTED": "streamscope.recording.format",
    "SCHEMA_VERSION": "streamscope.recording.format",
    "Chunk": "streamscope.recording.format",
    "End": "streamscope.recording.format",
    "Header": "streamscope.recording.format",
    "Record": "streamscope.recording.format",
    "RecordingError": "streamscope.recording.format",
    "Request": "streamscope.recording.format",
    "Response": "streamscope.recording.format",
    "Stopped": "streamscope.recording.format",
    "MIGRATIONS": "streamscope.recording.migrate",
    "migrate": "streamscope.recording.migrate",
    "ExchangeIndex": "streamscope.recording.reader",
    "RecordingIndex": "streamscope.recording.reader",
    "RecordingReader": "streamscope.recording.reader",
    "iter_raw": "streamscope.recording.reader",
    "iter_records": "streamscope.recording.reader",
    "SECRET_HEADERS": "streamscope.recording.redact",
    "redact_headers": "streamscope.recording.redact",
    "redact_json_paths": "streamscope.recording.redact",
    "RecordingExists": "streamscope.recording.writer",
    "RecordingWriter": "streamscope.recording.writer",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'streamscope.recording' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
