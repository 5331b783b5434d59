"""The anomaly kinds only Anthropic Messages streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py,
which holds the block kinds Bedrock's Converse stream has too)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "block-start-input-nonempty": (
        WARNING,
        "a tool block's start carries a non-empty input and fragments follow",
    ),
    "partial-json-empty": (INFO, 'a tool block\'s first (or only) fragment is ""'),
    "block-delta-without-start": (ERROR, "a delta or stop for an index with no open block"),
    "message-start-repeated": (
        ERROR,
        "a second message_start arrives while the first message is open",
    ),
    "event-name-missing": (WARNING, "events carry no event: name (the official SDK skips them)"),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"message-stop-missing"})
CUT_CALL: frozenset[str] = frozenset({"block-stop-missing"})
