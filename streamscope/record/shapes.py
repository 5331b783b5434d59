"""The error documents streamscope answers with itself, each in its client's API's shape.

The recorder's proxy (an upstream it cannot reach) and the playback (a request nothing
recorded answers) both answer with an error the client's own SDK reads as it reads the
API's: the openai SDK OpenAI's `{"error": {"message", "type", ...}}`, the anthropic SDK
Anthropic's `{"type": "error", "error": {...}}`, google-genai (and @google/genai) Google's
`{"error": {"code", "message", "status"}}`, raised as its APIError with the message.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from .final import gemini_method, speaks_anthropic

OPENAI, ANTHROPIC, GOOGLE = "openai", "anthropic", "google"
# google.rpc.Code's names for the HTTP statuses streamscope answers with.
GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    502: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# The headers every Google API client sends (the SDKs' telemetry, and the API key).
_GOOGLE_HEADERS = frozenset({"x-goog-api-client", "x-goog-api-key"})


def shape_of(header_names: Iterable[str], path: str = "") -> str:
    """The shape a request's client reads: ANTHROPIC for a request that carries
    `anthropic-version`, GOOGLE for one to a Gemini method or from a Google client, else
    OPENAI."""
    names = [name.lower() for name in header_names]
    if speaks_anthropic(names):
        return ANTHROPIC
    if gemini_method(path) is not None or not _GOOGLE_HEADERS.isdisjoint(names):
        return GOOGLE
    return OPENAI


def error_document(shape: str, status: int, kind: str, message: str) -> bytes:
    """An error of `shape`: `kind` is the OpenAI and Anthropic error type; Google's
    documents name the status instead (`status` 404 is NOT_FOUND)."""
    if shape == ANTHROPIC:
        return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})
    if shape == GOOGLE:
        code = GOOGLE_STATUS.get(status, "UNKNOWN")
        return orjson.dumps({"error": {"code": status, "message": message, "status": code}})
    return orjson.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})
