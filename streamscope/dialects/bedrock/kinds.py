"""The anomaly kinds only Bedrock Converse streams have: the Dialect record carries them,
and the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py:
`block-stop-missing`, `block-index-reused`, `message-stop-missing`, `stop-reason-mismatch`,
`provider-error`, `frame-invalid`... are filed in their shared words)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING

KINDS: dict[str, tuple[str, str]] = {
    "tool-delta-without-start": (
        ERROR,
        "a toolUse delta names a contentBlockIndex no contentBlockStart opened (no id, no name)",
    ),
    "text-after-tool-start": (
        WARNING,
        "a text block (which has no contentBlockStart) opens after a toolUse block started",
    ),
    "block-type-changed": (
        ERROR,
        "deltas of another type (text, toolUse, reasoningContent) arrive at one contentBlockIndex",
    ),
    "tool-input-empty": (
        INFO,
        "a toolUse block stopped with no input text (a tool without arguments): its input is {}",
    ),
    "tool-use-without-calls": (
        WARNING,
        "stopReason is tool_use but no toolUse block the client must answer was streamed",
    ),
    "server-tool-use": (
        INFO,
        "a toolUse block of type server_tool_use: Bedrock runs it, the client answers nothing",
    ),
    "event-after-stop": (
        WARNING,
        "an event arrives after messageStop (other than metadata), or after metadata",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"message-stop-missing"})
CUT_CALL: frozenset[str] = frozenset({"block-stop-missing"})
