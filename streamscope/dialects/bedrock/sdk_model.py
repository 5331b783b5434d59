"""The `strands` strategy: what a strands-agents agent builds from a Converse stream.

strands' BedrockModel iterates boto3's `response["stream"]`: botocore reads each event
stream message, raises `EventStreamError` for an exception message, drops an event type
its model lacks, and parses the payload against the event's shape (only modelled members
kept, so the `p` padding goes; a union with other than one member set raises
`ResponseParserError`; a union member it does not know becomes `SDK_UNKNOWN_MEMBER`;
blobs base64-decoded). `strands.event_loop.streaming.process_stream` then folds the
events into one assistant message, ignoring `contentBlockIndex` throughout:

- `contentBlockStart` with a `toolUse` sets *the* current tool use (`toolUseId`, `name`,
  input ""), replacing whatever was current; any other start clears it;
- a `toolUse` delta appends its `input` to the current tool use (creating one with no id
  or name when none is current); a text delta appends to the one text buffer;
- `contentBlockStop` finalises the current tool use: input that is empty or blank is
  `{}`, else `json.loads` of it, `{}` where that fails; a tool use without id or name is
  dropped; then the buffered text becomes a text block.

So the calls are the message's toolUse blocks, in the order their stops came; strands
keeps no type, so a server tool's use is one it runs as a client's (`client_type`). Their input is the parsed
value, shown as compact JSON.

What this emulation declines (`Unmodeled`: the real client answers, oracle.py): a frame
the framing could not read whole, bytes that are not UTF-8, a payload that is no JSON
object, a value of another JSON type than the model declares where botocore or strands
would trip over it, a guardrail `trace`, and a `:message-type: error` message.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from typing import Any

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import Frame
from .robust import CLIENT, EVENTS, EXCEPTIONS, SERVER, message_type, quick_delta

OPERATION = "ConverseStream"

# The shapes botocore parses the events with (bedrock-runtime's model), as far as they
# matter here: "s" a scalar kept as sent, "b" a blob, "d" a document, ("list", shape),
# ("union", {member: shape}), a dict a structure's members in the model's order, and
# "decline" a member this emulation does not follow.
_S, _B, _D = "s", "b", "d"
_POSITION = {"documentIndex": _S, "start": _S, "end": _S}
SHAPES: dict[str, Any] = {
    "messageStart": {"role": _S},
    "contentBlockStart": {
        "start": (
            "union",
            {
                "toolUse": {"toolUseId": _S, "name": _S, "type": _S},
                "toolResult": {"toolUseId": _S, "type": _S, "status": _S},
                "image": {"format": _S},
            },
        ),
        "contentBlockIndex": _S,
    },
    "contentBlockDelta": {
        "delta": (
            "union",
            {
                "text": _S,
                "toolUse": {"input": _S},
                "toolResult": ("list", ("union", {"text": _S, "json": _D})),
                "reasoningContent": (
                    "union",
                    {"text": _S, "redactedContent": _B, "signature": _S},
                ),
                "citation": {
                    "title": _S,
                    "source": _S,
                    "sourceContent": ("list", {"text": _S}),
                    "location": (
                        "union",
                        {
                            "web": {"url": _S, "domain": _S},
                            "documentChar": _POSITION,
                            "documentPage": _POSITION,
                            "documentChunk": _POSITION,
                            "searchResultLocation": {
                                "searchResultIndex": _S,
                                "start": _S,
                                "end": _S,
                            },
                        },
                    ),
                },
                "image": {
                    "source": (
                        "union",
                        {"bytes": _B, "s3Location": {"uri": _S, "bucketOwner": _S}},
                    ),
                    "error": {"message": _S},
                },
            },
        ),
        "contentBlockIndex": _S,
    },
    "contentBlockStop": {"contentBlockIndex": _S},
    "messageStop": {"stopReason": _S, "additionalModelResponseFields": _D},
    "metadata": {
        "usage": {
            "inputTokens": _S,
            "outputTokens": _S,
            "totalTokens": _S,
            "cacheReadInputTokens": _S,
            "cacheWriteInputTokens": _S,
            "cacheDetails": ("list", {"ttl": _S, "inputTokens": _S}),
        },
        "metrics": {"latencyMs": _S},
        "trace": "decline",
        "performanceConfig": {"latency": _S},
        "serviceTier": {"type": _S},
    },
    **{name: {"message": _S} for name in EXCEPTIONS if name != "modelStreamErrorException"},
    "modelStreamErrorException": {
        "message": _S,
        "originalStatusCode": _S,
        "originalMessage": _S,
    },
}
# The name botocore gives a union in its error (the model's shape names).
UNION_NAMES = {
    ("contentBlockStart", "start"): "ContentBlockStart",
    ("contentBlockDelta", "delta"): "ContentBlockDelta",
    ("delta", "toolResult"): "ToolResultBlockDelta",
    ("delta", "reasoningContent"): "ReasoningContentBlockDelta",
    ("citation", "location"): "CitationLocation",
    ("image", "source"): "ImageSource",
}


def _declined(what: str) -> Unmodeled:
    return Unmodeled(f"strands' (and botocore's) handling of {what} is not emulated")


class ParserError(Exception):
    """botocore's ResponseParserError, as the emulation raises it."""


def parse(shape: Any, value: object, where: tuple[str, str] = ("", "")) -> object:
    """`value` as botocore's JSON parser reads it against `shape`."""
    if shape == "decline":
        raise _declined(f"the member {where[1]}")
    if shape in (_S, _D):
        return value
    if shape == _B:
        if not isinstance(value, str):
            raise _declined("a blob that is not a string")
        try:
            return base64.b64decode(value)
        except (binascii.Error, ValueError):
            raise _declined("a blob that is not base64") from None
    if isinstance(shape, tuple) and shape[0] == "list":
        if not isinstance(value, list):
            raise _declined("a list of another JSON type")
        return [None if v is None else parse(shape[1], v, where) for v in value]
    union = isinstance(shape, tuple)
    members = shape[1] if union else shape
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _declined("a structure of another JSON type")
    if union:
        cleaned = {k: v for k, v in value.items() if k != "__type" and v is not None}
        if len(cleaned) != 1:
            name = UNION_NAMES.get(where, where[1])
            raise ParserError(
                f"Invalid service response: {name} must have one and only one member set."
            )
        (tag,) = cleaned
        if tag not in members:
            return {"SDK_UNKNOWN_MEMBER": {"name": tag}}
    out: dict[str, object] = {}
    for name, member in members.items():
        raw = value.get(name)
        if raw is not None:
            out[name] = parse(member, raw, (where[1], name))
    return out


def _body(data: str) -> object:
    """A payload as botocore's `_parse_body_as_json` reads it (text that is no JSON: its
    `message`)."""
    if not data:
        return {}
    try:
        return json.loads(data)
    except ValueError:
        return {"message": data}
    except RecursionError:
        raise _declined("nesting past Python's recursion limit") from None


# strands streams ConverseStream only: Amazon Nova's events through
# InvokeModelWithResponseStream (in `chunk` messages) are no stream it reads.
NOT_CONVERSE = Unmodeled(
    "strands reads ConverseStream only; this stream came through "
    "InvokeModelWithResponseStream (its events in chunk messages)"
)


def invoked(frame: Frame) -> bool:
    """Whether a frame came in an InvokeModelWithResponseStream `chunk` message."""
    return any(h.name == ":event-type" and h.value == "chunk" for h in frame.headers)


def botocore_event(frame: Frame) -> dict[str, Any] | None:
    """What boto3's event stream yields for a frame (None: nothing); raises the error it
    raises as a StrategyError's text (EventStreamError), Unmodeled where not emulated."""
    if frame.headers and invoked(frame):
        raise NOT_CONVERSE
    if frame.invalid is not None or frame.bad_utf8:
        raise _declined("a message the framing could not read whole, or not UTF-8")
    kind = message_type(frame)
    name = frame.event
    if kind is None and name is None and not frame.headers:
        return _yielded(frame.payload)
    if kind is None:
        # a saved SSE: the event its name says, as the message carried it
        if frame.headers or name is None:
            raise _declined("an event without its headers")
        kind = "exception" if name.endswith("Exception") else "event"
    if kind == "error":
        raise _declined("a :message-type error message")
    body = _body(frame.data)
    if kind == "exception":
        shape = SHAPES.get(name) if name in EXCEPTIONS else None
        if shape is None:
            headers = {h.name: h.value for h in frame.headers}
            code, said = headers.get(":error-code", ""), headers.get(":error-message", "")
        else:
            parsed = parse(shape, body, ("", name or ""))
            if not isinstance(parsed, dict):
                raise _declined("an exception that is not an object")
            code, said = name, parsed.get("Message", parsed.get("message", ""))
        raise _Raised(
            f"EventStreamError: An error occurred ({code}) when calling the {OPERATION} "
            f"operation: {said}"
        )
    if kind != "event":
        raise _declined(f"a :message-type {kind!r} message")
    if name not in SHAPES:
        return None  # botocore knows no such event: it yields nothing
    parsed = parse(SHAPES[name], body, ("", name))
    return {name: parsed}


def _yielded(payload: object) -> dict[str, Any]:
    """A chunk log's line: what boto3 yielded, `{"contentBlockDelta": {...}}`, parsed
    already."""
    if isinstance(payload, dict) and len(payload) == 1:
        ((name, body),) = payload.items()
        if name in SHAPES and isinstance(body, dict):
            return {name: body}
    raise _declined("a line that is not one event as boto3 yields it")


class _Raised(Exception):
    """What the client raised, as its StrategyError says it."""


def client_type(kind: object) -> str:
    """The type of a call strands runs: it keeps none, and runs every toolUse as a
    client's, so a client's use keeps the type its start named (`tool_use`, or `toolUse`
    where it named none) and a server tool's use becomes a client's (`toolUse`)."""
    return kind if isinstance(kind, str) and kind != SERVER else CLIENT


class _Tool:
    __slots__ = ("fields", "first", "fragments", "kind")

    def __init__(self, fields: dict[str, Any], first: int, kind: object = None) -> None:
        self.fields = fields
        self.first = first
        self.fragments = 0
        self.kind = client_type(kind)


def input_json(value: object) -> str:
    """A tool use's input as strands holds it (the parsed value), as compact JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class StrandsEmulation:
    """Feed frames; `calls()` mid-stream, `finish()` at the end."""

    def __init__(self) -> None:
        self.current: _Tool | None = None  # state["current_tool_use"] (None: {})
        self.found: list[Call] = []
        self.error: StrategyError | None = None

    def copy(self) -> StrandsEmulation:
        new = copy.copy(self)
        if self.current is not None:
            new.current = _Tool(dict(self.current.fields), self.current.first)
            new.current.kind = self.current.kind
            new.current.fragments = self.current.fragments
        new.found = list(self.found)  # (a call is never changed once made)
        return new

    def feed(self, frame: Frame) -> None:
        if self.error is not None:
            return  # the stream raised: the agent's turn is over
        n = frame.number
        quick = quick_delta(frame)
        if quick is not None:  # most of a stream: what botocore yields is the delta itself
            self._delta(n, quick[3])
            return
        try:
            event = botocore_event(frame)
        except _Raised as raised:
            self.error = StrategyError(str(raised), n)
            return
        except ParserError as raised:
            self.error = StrategyError(f"ResponseParserError: {raised}", n)
            return
        if event is None:
            return
        ((name, body),) = event.items()
        try:
            self._fold(n, name, body)
        except KeyError as missing:
            self.error = StrategyError.from_exception(missing, n)

    def plain(self, n: int, delta: dict[str, Any]) -> None:
        """A contentBlockDelta of one text or toolUse input string (what quick_delta
        takes), told by the caller."""
        if self.error is None:
            self._delta(n, delta)

    def _fold(self, n: int, name: str, body: Any) -> None:
        if body is None:
            raise _declined("an event whose payload is null")
        if name == "messageStart":
            body["role"]  # noqa: B018 (strands reads it: KeyError when missing)
        elif name == "contentBlockStart":
            start = body["start"]
            tool = start.get("toolUse")
            self.current = None
            if tool:
                self.current = _Tool(
                    {"toolUseId": tool["toolUseId"], "name": tool["name"], "input": ""},
                    n,
                    tool.get("type"),
                )
        elif name == "contentBlockDelta":
            self._delta(n, body["delta"])
        elif name == "contentBlockStop":
            self._stop(n)
        elif name == "messageStop":
            body["stopReason"]  # noqa: B018

    def _delta(self, n: int, delta: dict[str, Any]) -> None:
        if "toolUse" in delta:
            piece = delta["toolUse"].get("input", "")
            if self.current is None:
                self.current = _Tool({}, n)
            fields = self.current.fields
            held = fields.get("input", "")
            if not isinstance(piece, str) or not isinstance(held, str):
                raise _declined("toolUse.input that is not a string")
            fields["input"] = held + piece
            self.current.fragments += 1
        elif "text" in delta:
            # (strands gathers the text; only its type decides anything about the calls)
            if not isinstance(delta["text"], str):
                raise _declined("text that is not a string")
        elif "reasoningContent" in delta:
            reasoning = delta["reasoningContent"]
            for key in ("text", "signature"):
                if key in reasoning and not isinstance(reasoning[key], str):
                    raise _declined(f"reasoning {key} that is not a string")

    def _stop(self, n: int) -> None:
        tool = self.current
        if tool is None:
            return
        fields = tool.fields
        raw = fields.get("input", "")
        if isinstance(raw, str) and not raw.strip():
            value: object = {}
        else:
            try:
                value = json.loads(raw)
            except ValueError:
                value = {}
            except RecursionError:
                raise _declined("input nested past Python's recursion limit") from None
        self.current = None
        tid, name = fields.get("toolUseId", ""), fields.get("name", "")
        if not tid or not name:
            return  # strands logs "incomplete tool use block" and skips it
        try:
            args = input_json(value)
        except (ValueError, RecursionError):
            raise _declined("input it cannot write back") from None
        call = Call(0, len(self.found), tid, tool.kind, name, args, tool.fragments, tool.first, n)
        self.found.append(call)

    def calls(self) -> list[Call]:
        return list(self.found)

    def finish(self, frames: int) -> list[Call] | StrategyError:
        return self.error or self.calls()


__all__ = ["EVENTS", "SHAPES", "StrandsEmulation", "botocore_event", "input_json"]
