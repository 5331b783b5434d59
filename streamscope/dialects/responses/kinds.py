"""The anomaly kinds only OpenAI Responses streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py;
the kinds the Realtime API's streams share with these are there)."""

from __future__ import annotations

from ...core.anomalies import INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "args-done-only": (
        WARNING,
        "a call's arguments arrive only in .done / output_item.done, with no delta",
    ),
    "items-interleaved": (INFO, "deltas of two open items alternate"),
    "sequence-disorder": (WARNING, "sequence_number goes back or skips"),
    "delta-empty": (INFO, 'an argument delta is "" (bridges that require text stop on it)'),
    "response-end-missing": (
        WARNING,
        "the stream ended without response.completed, .incomplete or .failed",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"response-end-missing"})
CUT_CALL: frozenset[str] = frozenset()
