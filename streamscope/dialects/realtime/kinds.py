"""The anomaly kinds only OpenAI Realtime streams have: the Dialect record carries them, and
the registry (dialects.ANOMALY_KINDS) joins them to the shared ones (core/anomalies.py,
where the kinds it shares with the Responses API are: args-done-mismatch,
delta-unknown-item, final-output-mismatch)."""

from __future__ import annotations

from ...core.anomalies import INFO, WARNING, Kind

KINDS: dict[str, Kind] = {
    "call-never-done": Kind(
        WARNING,
        "a function call got no .done and no output_item.done (clients that act on a done "
        "event never run it)",
        "the deltas may be whole, but clients that run a call at its done event never run it",
    ),
    "response-done-missing": Kind(
        WARNING,
        "a response began and the stream ended without its response.done",
        "what streamed may be whole, but clients that wait for response.done never finish the response",
    ),
    "responses-in-one-stream": Kind(
        INFO,
        "one stream holds several responses (a whole session's server events, saved as one)",
        "it is how a whole session's server events are saved: each response is read on its own, and nothing is wrong",
    ),
}

# Of these, what a client's cut causes: the response's missing end, a call not yet done.
CUT_STREAM: frozenset[str] = frozenset({"response-done-missing"})
CUT_CALL: frozenset[str] = frozenset({"call-never-done"})
