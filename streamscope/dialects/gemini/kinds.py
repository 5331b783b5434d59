"""The anomaly kinds only Gemini streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "parallel-in-one-chunk": (
        INFO,
        "one chunk holds several functionCall parts (index-0 clients merge them)",
    ),
    "partial-args-unterminated": (ERROR, "a streamed call never gets its closing part"),
    "partial-args-without-open": (ERROR, "partialArgs arrive with no open named call"),
    "thought-signature": (
        INFO,
        "a call carries thoughtSignature, which must be sent back verbatim",
    ),
    "malformed-function-call": (ERROR, "finishReason: MALFORMED_FUNCTION_CALL"),
    "args-absent": (INFO, "a call part carries no args: a call with no arguments, read as {}"),
    "finish-stop-with-calls": (
        INFO,
        "calls were made and finishReason is STOP (Gemini has no tool-call finish reason)",
    ),
    "candidate-finish-missing": (WARNING, "the stream ended with no finishReason for a candidate"),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"candidate-finish-missing"})
CUT_CALL: frozenset[str] = frozenset({"partial-args-unterminated"})
