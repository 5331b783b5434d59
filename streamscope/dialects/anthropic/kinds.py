"""The anomaly kinds only Anthropic Messages streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py,
which holds the block kinds Bedrock's Converse stream has too)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING, Kind

KINDS: dict[str, Kind] = {
    "block-start-input-nonempty": Kind(
        WARNING,
        "a tool block's start carries a non-empty input and fragments follow",
        'the start\'s input and the fragments are two JSON texts: the SDK takes the fragments, while clients that glue them (start-concat) build {}{"a":1}',
    ),
    "partial-json-empty": Kind(
        INFO,
        'a tool block\'s first (or only) fragment is ""',
        "an empty fragment adds nothing to a correct client (a call with no arguments has input {}); only a client that parses each fragment on its own fails on it",
    ),
    "block-delta-without-start": Kind(
        ERROR,
        "a delta or stop for an index with no open block",
        "the fragment has no block to join: its call's id and name never arrived, so every client drops it or raises",
    ),
    "message-start-repeated": Kind(
        ERROR,
        "a second message_start arrives while the first message is open",
        "two messages spliced into one body share block indexes: every client mixes their blocks or loses the first message's",
    ),
    "event-name-missing": Kind(
        WARNING,
        "events carry no event: name (the official SDK skips them)",
        "the data is whole, but the official SDK dispatches by event name and skips these events, so its users lose what they carry",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"message-stop-missing"})
CUT_CALL: frozenset[str] = frozenset({"block-stop-missing"})
