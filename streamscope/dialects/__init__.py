"""The tool-call dialects streamscope reads, one package each, and how a stream's is told.

A stream's dialect is told once, where the stream is opened: from its request (the URL
path, then the body) when there is one, else from its first events, never from a file
name. A stream no dialect fits is read as Chat Completions and says so (`dialect-unknown`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core.engine import Engine
from ..core.frames import Frame
from .anthropic import ANTHROPIC
from .base import Dialect, EngineOptions, stream_flag
from .chat import CHAT
from .gemini import GEMINI
from .responses import RESPONSES
from .versions import VERIFIED

if TYPE_CHECKING:
    from typing_extensions import Unpack

DIALECTS: dict[str, Dialect] = {d.name: d for d in (CHAT, ANTHROPIC, RESPONSES, GEMINI)}
DEFAULT = CHAT

# How many frames a stream is looked at to tell its dialect.
LOOK = 64


def of_request(url: str, body: object) -> str | None:
    """The dialect a request speaks, by its path, else by its body; None when they do
    not tell."""
    try:
        path = urlsplit(url).path.rstrip("/") if isinstance(url, str) else ""
    except ValueError:  # a recorded URL that does not parse (a bad IPv6 host)
        path = url.split("?", 1)[0].rstrip("/")
    for d in DIALECTS.values():
        if d.claims_request(path, body):
            return d.name
    for d in DIALECTS.values():  # a path no dialect claims (a gateway's own): the body
        if d.claims_body(body):
            return d.name
    return None


def streams_in(name: str | None, url: str, body: object) -> str | None:
    """The framing a request told dialect `name` asks its stream in (None: no stream);
    a request no dialect tells asks with `"stream": true`, as most do."""
    d = DIALECTS.get(name or "")
    return (d.streams_in if d is not None else stream_flag)(url, body)


def of_event(payload: object, event: str | None) -> str | None:
    """The dialect one event belongs to; None when it does not tell (a ping, [DONE]...)."""
    for d in DIALECTS.values():
        if d.claims_event(payload, event):
            return d.name
    return None


def of_frame(frame: Frame) -> str | None:
    """The dialect one frame tells, if any (`data: [DONE]` ends Chat Completions streams)."""
    return CHAT.name if frame.is_done else of_event(frame.payload, frame.event)


def of_frames(frames: Iterable[Frame], limit: int = LOOK) -> str | None:
    """The dialect the first frames tell (at most `limit` of them are read)."""
    for k, frame in enumerate(frames):
        if k >= limit:
            break
        told = of_frame(frame)
        if told is not None:
            return told
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
    (`{"openai-sdk": "3.57.0", "anthropic-sdk": "2.15.0", "parts": "3.6.1"}`)."""
    return {d.sdk: VERIFIED[d.sdk_package] for d in DIALECTS.values()}


def sdk_note(dialects: Iterable[str | None]) -> str | None:
    """One sentence naming each SDK strategy of `dialects` (names as told, None or an
    unknown one: Chat Completions) whose installed package differs from the release its
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


def dialect(name: str | None) -> Dialect:
    """The dialect that reads a stream told `name` (Chat Completions when none reads it)."""
    return DIALECTS.get(name or "", DEFAULT)


def unknown(name: str | None) -> str | None:
    """Why a stream told `name` is read as Chat Completions (None: its dialect reads it)."""
    if name in DIALECTS:
        return None
    return (
        "neither the request nor the first events tell the dialect (Chat Completions, "
        "Anthropic Messages, OpenAI Responses, Gemini): read as Chat Completions"
    )


def open_engine(
    name: str | None,
    exchange: int = 1,
    tools: list[Any] | None = None,
    response_format: object | None = None,
    **options: Unpack[EngineOptions],
) -> Engine:
    """The engine of the dialect told `name`; one that fits none is read as Chat
    Completions with `dialect-unknown` said once."""
    engine = dialect(name).engine(exchange, tools, response_format, **options)
    why = unknown(name)
    if why is not None:
        engine.log.add("dialect-unknown", 0, why)
    return engine


__all__ = [
    "DEFAULT",
    "LOOK",
    "DIALECTS",
    "Dialect",
    "dialect",
    "of_event",
    "of_frame",
    "of_frames",
    "of_request",
    "open_engine",
    "sdk_note",
    "sdk_verified",
    "sdk_versions",
    "streams_in",
    "unknown",
]
