"""The anomaly kinds only Bedrock Converse streams have: the Dialect record carries them,
and the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py:
`block-stop-missing`, `block-index-reused`, `message-stop-missing`, `stop-reason-mismatch`,
`provider-error`, `frame-invalid`... are filed in their shared words)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING, Kind

KINDS: dict[str, Kind] = {
    "tool-delta-without-start": Kind(
        ERROR,
        "a toolUse delta names a contentBlockIndex no contentBlockStart opened (no id, no name)",
        "without its start the call has no id and no name: no client can run it or answer it",
    ),
    "text-after-tool-start": Kind(
        WARNING,
        "a text block (which has no contentBlockStart) opens after a toolUse block started",
        "a text block opens without a start event: a correct client keys it by its index, while one that sends deltas to the last started block (last-start) glues the text into the tool's input",
    ),
    "block-type-changed": Kind(
        ERROR,
        "deltas of another type (text, toolUse, reasoningContent) arrive at one contentBlockIndex",
        "one index holds two kinds of content: every client keeps one and loses or mixes the other",
    ),
    "tool-input-empty": Kind(
        INFO,
        "a toolUse block stopped with no input text (a tool without arguments): its input is {}",
        "it is how a tool without arguments is called: the clients read the input as {}",
    ),
    "tool-use-without-calls": Kind(
        WARNING,
        "stopReason is tool_use but no toolUse block the client must answer was streamed",
        "a client that answers a tool_use stop with tool results has nothing to answer, and loops or errors",
    ),
    "server-tool-use": Kind(
        INFO,
        "a toolUse block of type server_tool_use: Bedrock runs it, the client answers nothing",
        "Bedrock runs the tool itself: a correct client answers nothing, only one that answers every toolUse sends a result nobody asked for",
    ),
    "event-after-stop": Kind(
        WARNING,
        "an event arrives after messageStop (other than metadata), or after metadata",
        "a client that reads to the body's end keeps it; one that stops at messageStop misses what follows (the usage, or more content)",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"message-stop-missing"})
CUT_CALL: frozenset[str] = frozenset({"block-stop-missing"})
