"""The anomaly kinds only OpenAI Realtime streams have: the Dialect record carries them, and
the registry (dialects.ANOMALY_KINDS) joins them to the shared ones (core/anomalies.py,
where the kinds it shares with the Responses API are: args-done-mismatch,
delta-unknown-item, final-output-mismatch)."""

from __future__ import annotations

from ...core.anomalies import INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "call-never-done": (
        WARNING,
        "a function call got no .done and no output_item.done (clients that act on a done "
        "event never run it)",
    ),
    "response-done-missing": (
        WARNING,
        "a response began and the stream ended without its response.done",
    ),
    "responses-in-one-stream": (
        INFO,
        "one stream holds several responses (a whole session's server events, saved as one)",
    ),
}

# Of these, what a client's cut causes: the response's missing end, a call not yet done.
CUT_STREAM: frozenset[str] = frozenset({"response-done-missing"})
CUT_CALL: frozenset[str] = frozenset({"call-never-done"})
