"""The anomaly kinds only Ollama streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "call-before-done": (
        INFO,
        "calls come in a done: false line before the final one (clients reading only done: true lose them)",
    ),
    "args-string": (
        ERROR,
        "function.arguments is a JSON string, not an object (a proxy re-encoded it)",
    ),
    "done-line-missing": (WARNING, "the body ended with no done: true line"),
    "done-reason-stop-with-calls": (
        INFO,
        "calls were made and done_reason is stop (Ollama has no tool-call done reason)",
    ),
    "line-after-done": (WARNING, "a line arrives after the done: true line"),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"done-line-missing"})
CUT_CALL: frozenset[str] = frozenset()
