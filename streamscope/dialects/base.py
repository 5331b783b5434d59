"""What a dialect gives the rest of streamscope: one record per dialect, every face asks it.

A face never names a dialect: it asks the stream's `Dialect` for its engine, its
strategies, how a frame reads in one line, and how a request carries the calls back.
Adding a dialect adds a package under `streamscope/dialects/` and a line in its registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from ..core.calls import Call, StrategyError, Unmodeled
from ..core.engine import Engine
from ..core.frames import Frame
from ..core.history import History

if TYPE_CHECKING:
    from typing_extensions import Unpack


# The real SDK's answer for frames its emulation does not model: (frames, the request's
# tools, its response_format) -> calls, or the exception it raised.
def stream_flag(url: str, body: object) -> str | None:
    """The framing a request asks its stream in, for the dialects that ask with
    `"stream": true` in the body: SSE; None when it asks for no stream."""
    return "sse" if isinstance(body, dict) and body.get("stream") is True else None


RealSdk = Callable[
    [list[Frame], list[Any] | None, object], "list[Call] | StrategyError | Unmodeled"
]


class EngineOptions(TypedDict, total=False):
    """How an engine reads, besides its request (every dialect's engine takes them)."""

    collect_events: bool
    part: str
    marks: bool
    chunk_log: bool


class EngineClass(Protocol):
    """A dialect's engine class, opened on an exchange with its request's tools and
    response_format."""

    def __call__(
        self,
        exchange: int = ...,
        tools: list[Any] | None = ...,
        response_format: object | None = ...,
        **options: Unpack[EngineOptions],
    ) -> Engine: ...


@dataclass(frozen=True, slots=True)
class Terms:
    """What a dialect calls the parts of a stream, in the words its users know."""

    key: str  # what a call is keyed by: "index", "block"
    container: str  # what holds the calls: "choice", "message"
    finish: str  # the field that says why it stopped: "finish_reason", "stop_reason"
    columns: tuple[str, str]  # the call table's short headers for container and key
    # calls carry two ids (Call.item_id beside the id a result echoes): the call table
    # shows both, keyed by the call's key alone (one container per stream)
    item_ids: bool = False
    # calls carry a signature that must go back with them (Gemini's thoughtSignature): the
    # call table shows it where others show the type (one type only: functionCall)
    signatures: bool = False


@dataclass(frozen=True)
class Shape:
    """What a dialect tells `--minimal` about its frames (export/minimize_events.py)."""

    # (role, path, node) of every container of a frame the field steps look into
    containers: Callable[[object], Iterator[tuple[str, tuple[Any, ...], object]]]
    levels: tuple[tuple[str, str], ...]  # ("keys" | "entries", role), coarse to fine
    volatile: frozenset[str]  # keys that never matter to accumulation
    volatile_roles: tuple[str, ...]  # the roles whose keys may be volatile
    # the string fields that accumulate by concatenation, grouped by what they build,
    # each group in stream order: [(frame, path to the string), ...]
    sites: Callable[[list[object]], list[list[tuple[int, tuple[Any, ...]]]]]


Pairs = list[tuple[str | None, str]]  # frames as (SSE event name, data)


@dataclass(frozen=True)
class Fixture:
    """How `export --format pytest` replays a stream through the dialect's own SDK."""

    # the module's text: str.format fields version, source, where, story, frames,
    # expected, reference
    template: str
    served: Callable[[Pairs], Pairs]  # the frames the SDK hands the test's accumulator
    literal: Callable[[Pairs], str]  # those frames as Python source (FRAMES)
    events: Callable[[Pairs], list[Any]]  # what the embedded accumulator is given for them
    reference: Callable[[], str]  # the embedded accumulator's source
    expected: Callable[[Call], dict[Any, Any]]  # a call as EXPECTED holds it


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str  # as `inspect --json` says it: "chat-completions", "anthropic-messages"
    title: str  # in words, for people: "Chat Completions", "Anthropic Messages"
    engine: EngineClass  # reads one stream, every strategy side by side
    strategies: tuple[str, ...]  # robust first, then the clients in the contract's order
    sdk: str  # the strategy that stands for the official SDK (run for real when not emulated)
    # The fast-path reading of a payload: (call key, fragment) for a frame that only adds
    # one argument fragment (chat: (-1, text) for a content fragment), None for any other.
    plain: Callable[[object], tuple[int, str] | None]
    plain_summary: Callable[[int, str], str]  # the one-line summary of such a frame
    summarize: Callable[[Frame], str]  # the one-line summary of any frame
    # A request body's history, for the contract and the replay (None: it carries none).
    history: Callable[[object], History | None]
    terms: Terms
    # Does a request to this URL path with this body speak the dialect?
    claims_request: Callable[[str, object], bool]
    # Does a request body, sent to a path no dialect claims, look like the dialect's?
    claims_body: Callable[[object], bool]
    # Does this event (its parsed payload, its SSE event name) belong to the dialect?
    claims_event: Callable[[object, str | None], bool]
    # The official SDK, run for real where its emulation raised Unmodeled (the SDK is
    # imported only when called), and the installed SDK's version (None: not installed).
    real_sdk: RealSdk
    sdk_version: Callable[[], str | None]
    fixture: Fixture
    # How `--minimal` reads its frames; None: minimize.py's own path (Chat Completions),
    # whose judge also knows the dialect's sure consequences.
    shape: Shape | None = None
    # Its events carry SSE names (`event:` lines) that exports must keep.
    named_events: bool = False
    # The key `inspect --json` gives the installed SDK's version under (None: the SDK
    # strategy's name: `openai_sdk_version`)
    version_key: str | None = None
    # The distribution the SDK strategy stands for (its verified release: versions.py)
    sdk_package: str = "openai"
    # The framings its streams come in (names in streamscope.framing), the usual first.
    framings: tuple[str, ...] = ("sse",)
    # The framing a request (its URL, query included, and its parsed JSON body) asks its
    # stream in; None when it asks for no stream.
    streams_in: Callable[[str, object], str | None] = stream_flag
