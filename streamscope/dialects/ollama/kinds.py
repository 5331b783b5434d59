"""The anomaly kinds only Ollama streams have: the Dialect record carries them, and
the registry (dialects.anomaly_kinds) joins them to the shared ones (core/anomalies.py)."""

from __future__ import annotations

from ...core.anomalies import ERROR, INFO, WARNING, Kind

KINDS: dict[str, Kind] = {
    "call-before-done": Kind(
        INFO,
        "calls come in a done: false line before the final one (clients reading only done: true lose them)",
        "it is how Ollama streams: a client that reads every line holds the calls, only one that reads only the done: true line loses them",
    ),
    "args-string": Kind(
        ERROR,
        "function.arguments is a JSON string, not an object (a proxy re-encoded it)",
        "the API types arguments as an object: ollama-python's model rejects a string, and clients that pass it to the tool hand it text where it wants an object",
    ),
    "done-line-missing": Kind(
        WARNING,
        "the body ended with no done: true line",
        "what streamed may be whole, but clients that wait for done: true never finish the answer",
    ),
    "done-reason-stop-with-calls": Kind(
        INFO,
        "calls were made and done_reason is stop (Ollama has no tool-call done reason)",
        "it is how Ollama ends a turn with calls: a correct client looks at tool_calls, not at done_reason",
    ),
    "line-after-done": Kind(
        WARNING,
        "a line arrives after the done: true line",
        "a client that reads to the body's end keeps it; one that stops at done: true never reads it",
    ),
}

# Of these, what a client's cut causes: the stream's missing end, an unfinished call.
CUT_STREAM: frozenset[str] = frozenset({"done-line-missing"})
CUT_CALL: frozenset[str] = frozenset()
