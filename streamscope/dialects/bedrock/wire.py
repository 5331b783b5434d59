"""What Bedrock's Converse API is on the wire, for its Dialect record: which requests it
claims, its final event, its error document and the facts of a request.

`POST /model/{modelId}/converse-stream` answers with an AWS event stream (one binary
message an event, the event's name in its `:event-type` header), ending with `metadata`
after `messageStop`; `POST /model/{modelId}/converse` answers with one JSON document. The
model is in the path, percent-encoded (an ARN or an inference profile's id holds `:` and
`/`), never in the body; tools are `toolConfig.tools[].toolSpec`. An error is the JSON
document `{"message": "..."}`, its type in the `x-amzn-ErrorType` header.
"""

from __future__ import annotations

import re
import struct
from typing import Any
from urllib.parse import unquote

import orjson

from ..base import RequestFacts, ResponseFacts, Watch
from .robust import EVENTS, EXCEPTIONS, keyed_event

ENDPOINTS = (
    "POST .../model/{modelId}/converse-stream",
    "POST .../model/{modelId}/converse",
)
# `/model/{id}/converse(-stream)`, behind any prefix; the id may hold an unencoded `/`.
# Amazon Nova takes the same messages through InvokeModel (`/invoke`,
# `/invoke-with-response-stream`, its body's `schemaVersion` "messages-v1") and streams
# the same events, one a `chunk` message, each named by its one key.
_PATH = re.compile(
    r"/model/(?P<model>.+)/(?P<op>converse|invoke)(?P<stream>-stream|-with-response-stream)?$"
)
# Keys of a Converse request only Bedrock takes.
_OWN_KEYS = (
    "inferenceConfig",
    "toolConfig",
    "additionalModelRequestFields",
    "additionalModelResponseFieldPaths",
    "guardrailConfig",
    "promptVariables",
    "performanceConfig",
)


def _match(path: str) -> re.Match[str] | None:
    return _PATH.search(path) if isinstance(path, str) else None


def claims_request(path: str, body: object) -> bool:
    """A request to `.../model/{modelId}/converse-stream` or `.../converse`, or Nova's
    messages through `.../invoke(-with-response-stream)` (an Anthropic body names its
    `anthropic_version`; Llama's, Mistral's and Titan's hold no Converse keys)."""
    found = _match(path)
    if found is None:
        return False
    if found["op"] == "converse":
        return found["stream"] in (None, "-stream")
    return (
        found["stream"] in (None, "-with-response-stream")
        and isinstance(body, dict)
        and "anthropic_version" not in body
        and (body.get("schemaVersion") == "messages-v1" or claims_body(body))
    )


def claims_body(body: object) -> bool:
    """A body sent to a path no dialect claims: `messages` and one of Converse's own keys,
    or a message holding a `toolUse` or `toolResult` block (no other API has them)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    if any(key in body for key in _OWN_KEYS):
        return True
    return any(
        isinstance(m, dict)
        and isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and ("toolUse" in b or "toolResult" in b) for b in m["content"])
        for m in body["messages"]
    )


# What botocore yields, logged a line each, names its event by its one key ("metadata"
# alone is too common a word to tell).
_WRAPPERS = tuple(e for e in (*EVENTS, *EXCEPTIONS) if e != "metadata")


def claims_event(payload: object, event: str | None) -> bool:
    """An event named as ConverseStream names them, or a logged botocore event (one key,
    the event's name)."""
    if event in EVENTS or event in EXCEPTIONS:
        return True
    if event is None:
        keyed = keyed_event(payload)
        return keyed is not None and keyed[0] in _WRAPPERS
    return False


def chunk_key(event: str | None, payload: object) -> str | None:
    """The key a chunk log's line wraps a message's payload in: its event's name (its
    `:event-type`, an exception's `:exception-type`), as botocore yields the event,
    `{"messageStart": {...}}`; None where the frame has no name (a chunk's event, which
    names itself by its one key) or its payload is no object (no key makes it an event)."""
    return event if event is not None and type(payload) is dict else None


def _tools(body: object) -> list[Any] | None:
    config = body.get("toolConfig") if isinstance(body, dict) else None
    tools = config.get("tools") if isinstance(config, dict) else None
    return tools if isinstance(tools, list) else None


def facts(path: str, body: object) -> RequestFacts:
    """The model (from the path, percent-decoded), whether it streams (the path says), and
    the tools (`toolConfig.tools`, each `{"toolSpec": {...}}`)."""
    found = _match(path)
    if found is None:
        return RequestFacts(tools=_tools(body))
    return RequestFacts(unquote(found["model"]), found["stream"] is not None, _tools(body))


def error_document(status: int, kind: str, message: str) -> bytes:
    """Bedrock's errors: `{"message": "..."}` (botocore reads the type from the
    `x-amzn-ErrorType` header the response carries beside it)."""
    return orjson.dumps({"message": message})


# The exception botocore names an error by (its `x-amzn-ErrorType`), by HTTP status, as
# the Converse API answers them.
_ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
}


def error_headers(status: int, kind: str) -> tuple[tuple[str, str], ...]:
    """The header botocore reads an error's type from (boto3 then raises its modelled
    exception: `client.exceptions.ValidationException`)."""
    named = _ERROR_TYPES.get(status)
    if named is None:
        named = "InternalServerException" if status >= 500 else "ValidationException"
    return (("x-amzn-ErrorType", f"{named}:http://internal.amazon.com/coral/com.amazon.bedrock/"),)


def final_event(path: str, framing: str | None = None) -> Watch:
    return MetadataEvent() if framing == "aws-eventstream" else Watch()


# The `:event-type` header of the stream's last event, as the wire writes it: name
# length, name, type 7 (string), value length, value.
_MARKER = b"\x0b:event-type\x07\x00\x08metadata"
_LIMIT = 16 * 1024 * 1024 + 128 * 1024 + 16  # the longest message botocore reads


class MetadataEvent(Watch):
    """Whether a Converse stream's final event, the `metadata` message after
    `messageStop`, was relayed whole.

    The watch follows the messages by their preludes' lengths (linear in the body, each
    message's bytes kept only until it is whole) and looks for the marker among a whole
    message's headers. A prelude that gives no possible length ends the watch: the body's
    end is then the stream's.
    """

    __slots__ = ("_buf", "_lost")

    def __init__(self) -> None:
        super().__init__()
        self._buf = b""
        self._lost = False

    def seen(self, data: bytes) -> None:
        if self.relayed or self._lost:
            return
        buf = self._buf + data if self._buf else data
        at = 0
        while len(buf) - at >= 12:
            total, headers = struct.unpack_from(">II", buf, at)
            if total < 16 or total > _LIMIT or headers > total - 16:
                self._lost = True
                self._buf = b""
                return
            if len(buf) - at < total:
                break
            if _MARKER in buf[at + 12 : at + 12 + headers]:
                self.relayed = True
                self._buf = b""
                return
            at += total
        self._buf = buf[at:]


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """The `metadata` event's `usage` (input tokens with the cache's)."""
    cached = ("cacheReadInputTokens", "cacheWriteInputTokens")
    facts.read(payload, usage="usage", input=("inputTokens", *cached), output=("outputTokens",))
