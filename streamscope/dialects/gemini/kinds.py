"""The anomaly kinds only Gemini streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING, Kind

KINDS: dict[str, Kind] = {
    "parallel-in-one-chunk": Kind(
        INFO,
        "one chunk holds several functionCall parts (index-0 clients merge them)",
        "each part is a call of its own, in order, as google-genai returns them; only clients that put every call of a chunk on index 0 merge them",
    ),
    "partial-args-unterminated": Kind(
        ERROR,
        "a streamed call never gets its closing part",
        "the streamed call never closed: its arguments are incomplete for every client, and clients that emit a call at its closing part never emit it",
    ),
    "partial-args-without-open": Kind(
        ERROR,
        "partialArgs arrive with no open named call",
        "the arguments belong to no named call: every client drops them or adds them to the wrong call",
    ),
    "thought-signature": Kind(
        INFO,
        "a call carries thoughtSignature, which must be sent back verbatim",
        "it is harmless while the client sends the part back as it came; a client that drops it gets thought-signature-dropped, the error",
    ),
    "malformed-function-call": Kind(
        ERROR,
        "finishReason: MALFORMED_FUNCTION_CALL",
        "Gemini could not produce the call: there is none to run, for any client",
    ),
    "args-absent": Kind(
        INFO,
        "a call part carries no args: a call with no arguments, read as {}",
        "it is how Gemini sends a call with no arguments: the SDK and clients read the arguments as {}",
    ),
    "finish-stop-with-calls": Kind(
        INFO,
        "calls were made and finishReason is STOP (Gemini has no tool-call finish reason)",
        "it is how Gemini ends a turn with calls: a correct client looks at the parts, not at the finish reason",
    ),
    "candidate-finish-missing": Kind(
        WARNING,
        "the stream ended with no finishReason for a candidate",
        "what streamed may be whole, but clients that act on a candidate's finishReason never act",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"candidate-finish-missing"})
CUT_CALL: frozenset[str] = frozenset({"partial-args-unterminated"})
