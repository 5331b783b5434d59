"""Anthropic Messages' wire: the requests it claims, its final event (`event: message_stop`)
and its error document.

Claude on Amazon Bedrock speaks it too: `POST .../model/{modelId}/invoke` and
`.../invoke-with-response-stream` with a Messages body that names its
`anthropic_version` (`bedrock-2023-05-31`) and neither its model (the path's, percent-
encoded) nor `stream` (the path says). The same paths serve Llama, Mistral and Titan
bodies, which are no Anthropic Messages: only a body with `messages` and
`anthropic_version` is claimed. The stream comes in the AWS event stream, each event in a
`chunk` message (the framing delivers the event it carries); an exception message is
the `error` event the anthropic SDK's Bedrock decoder makes of it (`bedrock_error`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

from ...core.frames import Frame
from ...core.record import record
from ...framing.aws_eventstream import fault
from ..base import (
    FinalWatch,
    RequestFacts,
    RequestHeaders,
    ResponseFacts,
    Watch,
    body_facts,
    no_final_event,
)

ENDPOINTS = (
    "POST .../v1/messages",
    "POST .../model/{id}/invoke-with-response-stream",
    "POST .../model/{id}/invoke",
)
# Every client of the Anthropic API sends it.
CLIENT_HEADERS = frozenset({"anthropic-version"})
EVENTSTREAM = "aws-eventstream"  # the framing Bedrock's invoke streams in
# Bedrock's InvokeModel paths: (the model id, percent-encoded; whether it streams)
_INVOKE = re.compile(r"/model/([^/]+)/invoke(-with-response-stream)?$")


def _invoke(path: str) -> re.Match[str] | None:
    return _INVOKE.search(path) if "/model/" in path else None


def _bedrock_body(body: object) -> bool:
    """A Messages body as Bedrock takes it: `messages` and its `anthropic_version`."""
    return (
        isinstance(body, dict)
        and isinstance(body.get("messages"), list)
        and "anthropic_version" in body
    )


def claims_request(path: str, body: object) -> bool:
    """`.../v1/messages`, or another path ending in `/messages` (a gateway's) whose body
    holds `messages`: OpenAI's `/threads/{id}/messages` hold a message, not a list;
    Bedrock's invoke paths with a Messages body."""
    if path.endswith("/v1/messages"):
        return True
    if _invoke(path) is not None:
        return _bedrock_body(body)
    return (
        path.endswith("/messages")
        and isinstance(body, dict)
        and isinstance(body.get("messages"), list)
    )


def facts(path: str, body: object) -> RequestFacts:
    """The body's facts; on Bedrock's invoke paths the model and the stream are the
    path's (the model id percent-decoded, as Bedrock reads it)."""
    told = body_facts(path, body)
    found = _invoke(path)
    if found is None:
        return told
    return RequestFacts(unquote(found[1]), found[2] is not None, told.tools, None)


# the beta with which the SDK's BetaMessageStream parses tool input in trailing-strings mode
FINE_GRAINED = "fine-grained-tool-streaming-2025-05-14"


@record(frozen=True, slots=True)
class BetaStream:
    """A request the SDK's beta client sent (`client.beta.messages.stream(...)`: `POST
    /v1/messages?beta=true`), whose stream BetaMessageStream reads; `betas` is its
    `anthropic-beta` header as sent ("" for none), which that class reads too."""

    betas: str = ""

    @property
    def fine_grained(self) -> bool:
        """Whether BetaMessageStream parses its tool input in trailing-strings mode."""
        return FINE_GRAINED in self.betas


@record(frozen=True, slots=True)
class SdkExchange:
    """The exchange as the anthropic SDK's client saw it, besides its stream, where a
    recording holds its request (`url_facts`) and response (`answer_facts`): what the
    APIStatusError an `event: error` raises names (`make_status_error`), and whether its beta
    client sent it.

    `path`: the path it posted to, as sent, without the query (its request URL's
    `raw_path`: a gateway's prefix kept, `/model/{id}/invoke-with-response-stream` on
    Bedrock); `request_id`: its response's `request-id` header as httpx reads it (several
    joined by ", "; None: it had none); `beta`: a request the beta client sent (None: the
    plain client's). The default is what a stream alone says: the SDK's own path and no
    header, as a chunk log or an SSE body, which hold no request, are read."""

    path: str = "/v1/messages"
    request_id: str | None = None
    beta: BetaStream | None = None


PLAIN = SdkExchange()


def sdk_exchange(response_format: object) -> SdkExchange:
    """A request's `response_format` as the anthropic SDK strategy reads it."""
    return response_format if isinstance(response_format, SdkExchange) else PLAIN


def url_facts(url: str, body: object, headers: RequestHeaders = ()) -> RequestFacts:
    """`facts` on the URL's path, with the exchange as the SDK's client saw it
    (`response_format`: an SdkExchange, the path as sent). A request to
    `/v1/messages?beta=true` (what the SDK's beta client, `client.beta.messages.stream(...)`,
    sends) is one BetaMessageStream reads, with the `anthropic-beta` header it was sent with
    (a BetaStream). The header alone says nothing: the plain client sends it too, and never
    reads it."""
    if url.startswith("/"):  # a request target (`//x` is a path here, not a host)
        path, _, query = url.partition("?")
    else:
        try:
            parts = urlsplit(url)
        except ValueError:  # a recorded URL that does not parse (a bad IPv6 host)
            return facts("", body)
        path, query = parts.path, parts.query
    told = facts(path, body)
    beta = None
    if ("beta", "true") in parse_qsl(query):
        beta = BetaStream(
            ", ".join(
                value
                for name, value in ((h[0], h[1]) for h in headers if len(h) == 2)
                if name.lower() == "anthropic-beta"
            )
        )
    return replace(told, response_format=SdkExchange(path or "/", None, beta))


def answer_facts(response_format: object, headers: RequestHeaders) -> object:
    """The request's SdkExchange with its response's `request-id` header, as httpx's
    `headers.get` reads it (named in any case; several joined by ", ")."""
    if not isinstance(response_format, SdkExchange):
        return response_format
    said = [h[1] for h in headers if len(h) == 2 and h[0].lower() == "request-id"]
    return replace(response_format, request_id=", ".join(said) if said else None)


def framing_of(url: str) -> str:
    """Bedrock's streaming invoke answers in the AWS event stream; the API, in SSE."""
    path = url.split("?", 1)[0]
    found = _invoke(path)
    return EVENTSTREAM if found is not None and found[2] is not None else "sse"


def bedrock_error(frame: Frame) -> Frame:
    """An AWS exception (or error) message as the `error` event the anthropic SDK's
    Bedrock decoder makes of it (`{"type": "error", "error": {"type", "message"}}`);
    any other frame as it is."""
    if not frame.headers:
        return frame
    said = fault(frame)
    if said is None:
        return frame
    kind, message = said
    event = {"type": "error", "error": {"type": kind, "message": message}}
    return Frame(
        frame.number,
        orjson.dumps(event).decode(),
        event,
        frame.time_ns,
        "error",
        frame.first_read,
        frame.last_read,
        frame.start,
        frame.end,
        frame.bad_utf8,
        frame.invalid,
        frame.headers,
    )


def error_document(status: int, kind: str, message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


# The field line at the start of the read's last event (re.match at its `event:`).
_MESSAGE_STOP = re.compile(rb"^event: ?message_stop\r?\n", re.MULTILINE)


def _is_message_stop(data: bytes, i: int) -> bool:
    """Whether the `event:` at `i` starts the line `event: message_stop`: a slice compared
    first, so the regex (which checks where the line starts and ends) runs once a stream."""
    return b"message_stop" in data[i + 6 : i + 20] and _MESSAGE_STOP.match(data, i) is not None


def final_event(path: str, framing: str | None = None) -> FinalWatch:
    """`event: message_stop` in SSE; in the AWS event stream the events are base64 in
    their chunks: the body's end ends it."""
    if framing == EVENTSTREAM:
        return no_final_event(path, framing)
    return MessageStop()


class MessageStop(Watch):
    """Whether an Anthropic Messages stream's final event, `event: message_stop`, was relayed.

    The final event is the last of its read and every Anthropic event has an `event:`
    line, so only the read's last one is looked at, found by a search back from the end:
    a few hundred bytes, however long the read. `_tail` ends with the bytes before this
    read (the previous read itself, not a copy, unless it was shorter than the line), for
    an `event:` line cut across reads.
    """

    __slots__ = ()

    def seen(self, data: bytes) -> None:
        if self.relayed:
            return
        last, i = data, data.rfind(b"event:")
        if i < 0 and self._tail:  # no line of its own: the final one may have begun before
            last = self._tail[-24:] + data[:24]
            i = last.rfind(b"event:")
        self.relayed = i >= 0 and _is_message_stop(last, i)
        self._tail = data if len(data) >= 24 else (self._tail + data)[-24:]


def response_facts(payload: object, facts: ResponseFacts) -> None:
    """`message_start`'s message id and model and its usage, and `message_delta`'s usage
    (output tokens counted to the end); input tokens with the cache's."""
    message = payload.get("message") if isinstance(payload, dict) else None
    cached = ("cache_creation_input_tokens", "cache_read_input_tokens")
    facts.read(
        message if isinstance(message, dict) else payload,
        "id",
        "model",
        "usage",
        ("input_tokens", *cached),
        ("output_tokens",),
    )
