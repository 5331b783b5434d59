"""The tool-call dialects streamscope reads, one package each, and how a stream's is told.

A stream's dialect is told once, where the stream is opened: from its request (the URL
path, then the body) when there is one, else from its first events, never from a file
name. A stream no dialect fits is read as Chat Completions and says so
(`dialect-unknown`). The same rule (`claimant`) tells the recorder what ends a stream,
playback which exchanges answer a request and a HAR which entries to keep; with the
headers only a dialect's clients send (`speaker`), it tells which error document a
client reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from ..core import jsonio
from ..core.anomalies import KINDS as SHARED_KINDS
from ..core.anomalies import Kind, worst_severity
from ..core.contract import KINDS as CONTRACT_KINDS
from ..core.engine import Engine
from ..core.frames import Frame
from ..framing import of_response
from ..framing.session import CONTROL, WsMessage, frame_of
from .anthropic import ANTHROPIC
from .base import (
    Dialect,
    EngineOptions,
    FinalWatch,
    RequestFacts,
    RequestHeaders,
    Turn,
    Watch,
    body_facts,
)
from .bedrock import BEDROCK
from .chat import CHAT
from .chat.wire import may_be_chunk
from .gemini import GEMINI
from .ollama import OLLAMA
from .realtime import REALTIME
from .responses import RESPONSES
from .versions import VERIFIED

if TYPE_CHECKING:
    from typing_extensions import Unpack

DIALECTS: dict[str, Dialect] = {
    d.name: d for d in (CHAT, ANTHROPIC, RESPONSES, GEMINI, OLLAMA, REALTIME, BEDROCK)
}
DEFAULT = CHAT

# Every anomaly kind, kind -> Kind (severity, meaning, why): the shared ones, then each
# dialect's own.
ANOMALY_KINDS: dict[str, Kind] = {
    **SHARED_KINDS,
    **{k: v for d in DIALECTS.values() for k, v in d.kinds.items()},
}


def severity(kind: str) -> str | None:
    """An anomaly's or a contract finding's severity (None for a kind neither registry knows)."""
    known = ANOMALY_KINDS.get(kind) or CONTRACT_KINDS.get(kind)
    return known[0] if known else None


def worst(kinds: Iterable[str]) -> str | None:
    """The most severe severity among anomaly and contract kinds (None when there are none)."""
    return worst_severity(s for s in map(severity, kinds) if s is not None)


# How many frames a stream is looked at to tell its dialect.
LOOK = 64


def path_of(url: str) -> str:
    """A URL's path (a bare path stays itself), its query left off."""
    if not isinstance(url, str):
        return ""
    if url.startswith("/"):  # a request target: `//x` is a path here, not a host
        return url.split("?", 1)[0]
    try:
        return urlsplit(url).path
    except ValueError:  # a recorded URL that does not parse (a bad IPv6 host)
        return url.split("?", 1)[0]


def claimant(url: str, body: object) -> Dialect | None:
    """The dialect that claims a request (`url`: its URL or its path) as one of its API's
    (`claims_request`: by its path, the body helping where a path is shared); None when
    none does."""
    path = path_of(url).rstrip("/")
    return next((d for d in DIALECTS.values() if d.claims_request(path, body)), None)


def look_alike(body: object) -> Dialect | None:
    """The dialect whose request bodies this one looks like (`claims_body`), for a stream
    to a path no dialect claims (a gateway's own)."""
    return next((d for d in DIALECTS.values() if d.claims_body(body)), None)


def sent_body(body: bytes) -> object:
    """A request body as it is sent, parsed (None: no JSON, which tells nothing)."""
    try:
        return jsonio.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


def claimant_sent(url: str, body: bytes) -> Dialect | None:
    """claimant, for a request body as it is sent (one that is no JSON tells nothing)."""
    return claimant(url, sent_body(body))


def of_client(header_names: Iterable[str]) -> Dialect | None:
    """The dialect whose clients alone send one of these headers (`anthropic-version`)."""
    names = {name.lower() for name in header_names}
    return next((d for d in DIALECTS.values() if not d.client_headers.isdisjoint(names)), None)


def speaker(url: str, body: bytes, header_names: Iterable[str]) -> Dialect | None:
    """The dialect a request speaks (claimant), else the one whose client sent it (a
    request no dialect claims, such as a client's `GET .../models`)."""
    return claimant_sent(url, body) or of_client(header_names)


def of_request(url: str, body: object) -> str | None:
    """The name of the dialect a stream's request speaks: the one that claims it, else
    the one its body looks like; None when neither tells."""
    d = claimant(url, body) or look_alike(body)
    return None if d is None else d.name


def request_facts(
    told: Dialect | None, url: str, body: object, headers: RequestHeaders = ()
) -> RequestFacts:
    """What a request says of its exchange (model, stream, tools), as its dialect reads it
    (one that speaks none: as most dialects keep them, in the body); `headers`: the
    request's, where they are known."""
    if told is not None and told.url_facts is not None:
        return told.url_facts(url, body, headers)
    read = body_facts if told is None else told.facts
    return read(path_of(url), body)


def answered_facts(
    told: Dialect | None, response_format: object, headers: RequestHeaders
) -> object:
    """The request's `response_format` with what its response's headers add to it for
    the SDK strategy, as its dialect reads them (`Dialect.answered`)."""
    if told is None or told.answer_facts is None:
        return response_format
    return told.answer_facts(response_format, headers)


def endpoints() -> Iterator[str]:
    """Every request a registered dialect answers, as users write them."""
    for d in DIALECTS.values():
        yield from d.endpoints


def streams_in(name: str | None, url: str, body: object) -> str | None:
    """The framing a request told dialect `name` asks its stream in, None when its facts
    say it asks for no stream (a request no dialect tells: as most say it, in the body)."""
    told = DIALECTS.get(name or "")
    if not request_facts(told, url, body).stream:
        return None
    d = told or DEFAULT
    return d.framing_of(url) if d.framing_of is not None else d.framings[0]


def final_watch(
    told: Dialect, url: str, body: bytes, status: int, headers: Sequence[tuple[str, str]]
) -> FinalWatch:
    """The recorder's watch for the final event of the response to a request (`url`
    with its query) that dialect `told` speaks: its framing told from the request and
    the response once, as a reader tells it. A body sent encoded (gzip) is no framing's
    bytes: its end is its body's."""
    coding = next((v for k, v in headers if k.lower() == "content-encoding"), "identity")
    if coding.strip().lower() not in ("", "identity"):
        return Watch()
    asked = streams_in(told.name, url, sent_body(body))
    return told.final_event(path_of(url), of_response(status, headers, asked))


def of_event(payload: object, event: str | None) -> str | None:
    """The dialect one event belongs to; None when it does not tell (a ping, [DONE]...)."""
    for d in DIALECTS.values():
        if d.claims_event(payload, event):
            return d.name
    return None


def of_frame(frame: Frame, foreign: int = 0) -> str | None:
    """The dialect one frame tells, if any, after `foreign` frames (`is_foreign`).
    `data: [DONE]` ends Chat Completions streams, and tells it unless an event before it
    was no chunk: an API of its own ends with it too (Gemini's Interactions API)."""
    if frame.is_done:
        return CHAT.name if not foreign else None
    return of_event(frame.payload, frame.event)


def is_foreign(frame: Frame) -> bool:
    """A frame that told no dialect and is no Chat Completions chunk either (it has keys
    no chunk has, or is no JSON object): after one, `[DONE]` tells nothing."""
    return not frame.is_done and not may_be_chunk(frame.payload)


def of_frames(frames: Iterable[Frame], limit: int = LOOK) -> str | None:
    """The dialect the first frames tell (at most `limit` of them are read)."""
    foreign = 0
    for k, frame in enumerate(frames):
        if k >= limit:
            break
        told = of_frame(frame, foreign)
        if told is not None:
            return told
        foreign += is_foreign(frame)
    return None


def sdk_versions() -> dict[str, str | None]:
    """`openai_sdk_version`, `anthropic_sdk_version`, `google_genai_version`: the installed
    SDK release each SDK strategy stands for (None: not installed)."""
    return {
        d.version_key or f"{d.sdk.replace('-', '_')}_version": d.sdk_version()
        for d in DIALECTS.values()
    }


def sdk_verified() -> dict[str, str]:
    """The release each SDK strategy's emulation reproduces, by strategy name
    (`{"openai-sdk": "3.63.0", "anthropic-sdk": "2.17.0", "parts": "3.6.1"}`)."""
    return {d.sdk: VERIFIED[d.sdk_package] for d in DIALECTS.values()}


def sdk_note(dialects: Iterable[str | None]) -> str | None:
    """One sentence naming each SDK strategy of `dialects` (names as told; None: Chat
    Completions) whose installed package differs from the release its
    emulation was verified against; None when none differs or none is installed."""
    seen: dict[str, str] = {}
    for told in dialects:
        d = dialect(told)
        installed = d.sdk_version()
        verified = VERIFIED[d.sdk_package]
        if installed is not None and installed != verified:
            seen[d.sdk] = (
                f"{d.sdk} reproduces {d.sdk_package} {verified}, the release it was verified "
                f"against; {d.sdk_package} {installed} is installed and may accumulate otherwise"
            )
    return "; ".join(seen.values()) or None


class UnknownDialect(ValueError):
    """A dialect name no registered dialect has: a caller's mistake, never read as Chat."""

    def __init__(self, name: object) -> None:
        known = ", ".join(DIALECTS)
        super().__init__(f"no dialect is named {name!r} (the dialects: {known})")


def dialect(name: str | None) -> Dialect:
    """The dialect named `name`; None (the stream did not tell its dialect) is read as
    Chat Completions, as the contract says. Raises UnknownDialect for any other name."""
    if name is None:
        return DEFAULT
    found = DIALECTS.get(name)
    if found is None:
        raise UnknownDialect(name)
    return found


def unknown(name: str | None) -> str | None:
    """Why a stream told `name` is read as Chat Completions (None: its dialect reads it;
    UnknownDialect for a name no dialect has)."""
    if name is not None:
        dialect(name)  # a name no dialect has raises
        return None
    titles = ", ".join(d.title for d in DIALECTS.values())
    return (
        f"neither the request nor the first events tell the dialect ({titles}): "
        f"read as {DEFAULT.title}"
    )


def of_session(messages: Sequence[WsMessage], start_ns: int = 0) -> str | None:
    """The dialect a session's first server messages tell (a handshake whose path no
    dialect claims), among those read over a WebSocket."""
    frames = (
        frame_of(m, k + 1, start_ns, 0)
        for k, m in enumerate(m for m in messages if m.sender == "server" and m.opcode == "text")
    )
    for k, frame in enumerate(frames):
        if k >= LOOK:
            break
        for d in DIALECTS.values():
            if d.session is not None and d.claims_event(frame.payload, frame.event):
                return d.name
    return None


def session_turns(told: Dialect, messages: Sequence[WsMessage], start_ns: int) -> list[Turn]:
    """A WebSocket session's turns as dialect `told` splits them; a dialect that is never
    read over a WebSocket gets one turn of every server message, so none goes unread."""
    if told.session is not None:
        return told.session(messages)
    frames: list[Frame] = []
    for m in messages:
        if m.sender == "server" and m.opcode not in CONTROL:
            frames.append(frame_of(m, len(frames) + 1, start_ns, frames[-1].end if frames else 0))
    client = [m for m in messages if m.sender == "client"]
    return [Turn(1, None, frames, client, False, start_ns)] if frames or client else []


def open_engine(
    name: str | None,
    exchange: int = 1,
    tools: list[Any] | None = None,
    response_format: object | None = None,
    **options: Unpack[EngineOptions],
) -> Engine:
    """The engine of the dialect told `name`; a stream that told none (None) is read as
    Chat Completions with `dialect-unknown` said once. Raises UnknownDialect."""
    engine = dialect(name).engine(exchange, tools, response_format, **options)
    why = unknown(name)
    if why is not None:
        engine.log.add("dialect-unknown", 0, why)
    return engine


__all__ = [
    "ANOMALY_KINDS",
    "DEFAULT",
    "LOOK",
    "DIALECTS",
    "Dialect",
    "UnknownDialect",
    "FinalWatch",
    "final_watch",
    "sent_body",
    "RequestFacts",
    "claimant",
    "claimant_sent",
    "look_alike",
    "of_client",
    "speaker",
    "dialect",
    "endpoints",
    "of_event",
    "of_frame",
    "is_foreign",
    "of_frames",
    "of_request",
    "open_engine",
    "path_of",
    "request_facts",
    "answered_facts",
    "sdk_note",
    "sdk_verified",
    "sdk_versions",
    "severity",
    "streams_in",
    "unknown",
    "worst",
]
