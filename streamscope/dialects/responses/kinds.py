"""The anomaly kinds only OpenAI Responses streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py;
the kinds the Realtime API's streams share with these are there)."""

from __future__ import annotations

from ...core.anomalies import INFO, WARNING, Kind

KINDS: dict[str, Kind] = {
    "args-done-only": Kind(
        WARNING,
        "a call's arguments arrive only in .done / output_item.done, with no delta",
        "the whole value is in .done, where a correct client reads it; clients that build the arguments from the deltas alone lose them",
    ),
    "items-interleaved": Kind(
        INFO,
        "deltas of two open items alternate",
        "every delta names its item, so clients that key by item are right; only those that add deltas to the last added item mix them",
    ),
    "sequence-disorder": Kind(
        WARNING,
        "sequence_number goes back or skips",
        "events arrive in order on the connection, but clients that order or deduplicate by sequence_number (resuming a stream) drop or reorder them",
    ),
    "delta-empty": Kind(
        INFO,
        'an argument delta is "" (bridges that require text stop on it)',
        "an empty delta adds nothing to a correct client; bridges that require non-empty text stop on it",
    ),
    "response-end-missing": Kind(
        WARNING,
        "the stream ended without response.completed, .incomplete or .failed",
        "what streamed may be whole, but clients that wait for response.completed never finish the response",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"response-end-missing"})
CUT_CALL: frozenset[str] = frozenset()
