"""Claude on Bedrock's InvokeModelWithResponseStream as the service sends it, for the
framing, dialect, playback and export tests: each Anthropic event (tests/anthropic_stream.py's)
base64 in the `bytes` of a `chunk` message, with a `p` of padding, as Bedrock pads them;
an exception is a `:message-type: exception` message."""

from __future__ import annotations

import base64

import orjson

from streamscope.framing.aws_eventstream import encode
from streamscope.recording import RecordingWriter

from .anthropic_stream import QUESTION, TOOLS, answer_events, follow_up, tool_use_events

MODEL_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"
# as boto3 and the anthropic SDK send it: the model id percent-encoded in the path
URL = (
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
    "anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
)
CHUNK_HEADERS = [
    (":event-type", 7, "chunk"),
    (":content-type", 7, "application/json"),
    (":message-type", 7, "event"),
]


def chunk(inner: bytes, padding: str | None = "abcdefghij", raw: str | None = None) -> bytes:
    """A chunk message carrying `inner` (base64, or `raw` as its `bytes` as it is), with
    a `p` of padding (None: none, as streamscope writes one)."""
    said = base64.b64encode(inner).decode() if raw is None else raw
    fields = {"bytes": said} if padding is None else {"bytes": said, "p": padding}
    return encode(CHUNK_HEADERS, orjson.dumps(fields))


def exception(kind: str = "modelStreamErrorException", message: str = "boom") -> bytes:
    return encode(
        [
            (":exception-type", 7, kind),
            (":content-type", 7, "application/json"),
            (":message-type", 7, "exception"),
        ],
        orjson.dumps({"message": message}),
    )


def sse_data(event: bytes) -> bytes:
    """The data of one SSE event of tests/anthropic_stream.py."""
    return next(line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:"))


def events_json(turn: int = 1) -> list[bytes]:
    """A turn's Anthropic events (1: text, then a tool_use; 2: the answer), their JSON."""
    return [sse_data(e) for e in (tool_use_events() if turn == 1 else answer_events())]


def invoke_body(turn: int = 1) -> bytes:
    """A turn as Bedrock streams it."""
    return b"".join(chunk(e) for e in events_json(turn))


def request_body(messages: list | None = None) -> dict:
    return {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "messages": QUESTION if messages is None else messages,
        "tools": TOOLS,
    }


def write_recording(
    path: str,
    body: bytes | None = None,
    reads: int = 3,
    sent_back: dict | None = None,
    request: dict | None = None,
) -> bytes:
    """A recording of one invoke stream (its body cut in `reads` reads; its request
    `request`, else a Messages body), and with `sent_back` (the tool input the client
    sent back) the turn after it; the body."""
    body = invoke_body() if body is None else body
    turns = [(request_body() if request is None else request, body)]
    if sent_back is not None:
        turns.append((request_body(follow_up(sent_back)), invoke_body(2)))
    with RecordingWriter(path) as w:
        for request, streamed in turns:
            ex = w.new_exchange()
            w.request(
                ex, "POST", URL, [("content-type", "application/json")], orjson.dumps(request)
            )
            w.response(ex, 200, [("content-type", "application/vnd.amazon.eventstream")])
            size = max(1, -(-len(streamed) // reads))
            for i in range(0, len(streamed), size):
                w.chunk(ex, streamed[i : i + size])
            w.end(ex, "complete")
    return body
