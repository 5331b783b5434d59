"""The anomaly kinds only OpenAI Responses streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "args-done-only": (
        WARNING,
        "a call's arguments arrive only in .done / output_item.done, with no delta",
    ),
    "args-done-mismatch": (ERROR, ".done or output_item.done differs from the accumulated deltas"),
    "delta-unknown-item": (ERROR, "a delta names an item_id / output_index no added item has"),
    "items-interleaved": (INFO, "deltas of two open items alternate"),
    "sequence-disorder": (WARNING, "sequence_number goes back or skips"),
    "delta-empty": (INFO, 'an argument delta is "" (bridges that require text stop on it)'),
    "final-output-mismatch": (
        WARNING,
        "the final response's output leaves out a call the stream carried",
    ),
    "response-end-missing": (
        WARNING,
        "the stream ended without response.completed, .incomplete or .failed",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"response-end-missing"})
CUT_CALL: frozenset[str] = frozenset()
