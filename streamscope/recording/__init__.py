"""Recordings: the JSONL file of LLM HTTP exchanges (format in recordings/README.md).

Pure Python (stdlib + orjson): nothing here imports textual, httpx, uvicorn or openai.
"""

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
