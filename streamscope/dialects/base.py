"""What a dialect gives the rest of streamscope: one record per dialect, every face asks it.

A face never names a dialect: it asks the stream's `Dialect` for its engine, its
strategies, how a frame reads in one line, and how a request carries the calls back; and
for its wire: which requests it claims, what ends its stream, its error document, the
facts of its request. Adding a dialect adds a package under `streamscope/dialects/` and a
line in its registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import orjson

from ..core.anomalies import Kind
from ..core.calls import Call, StrategyError, Unmodeled
from ..core.engine import Engine, Strategies
from ..core.frames import Frame, FrameHeader, named_by_type
from ..core.history import CallIds, History, Tool
from ..core.record import record
from ..framing import SSE
from ..framing.session import WsMessage

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..core.contract import Finding
    from ..core.engine import StreamResult
    from ..core.minimal import Ending, Tells
    from ..core.results import Carried


# The real SDK's answer for frames its emulation does not model: (frames, the request's
# tools, its response_format) -> calls, or the exception it raised.
RealSdk = Callable[
    [list[Frame], list[Any] | None, object], "list[Call] | StrategyError | Unmodeled"
]


_NOT_YET = object()


class Later:
    """A part of a dialect's record kept in a module of its own (its engine, strategies
    and SDK emulation, its fixture, its session rules), imported where it is first used:
    called, it calls the function or class it names; read, it reads that object's
    attributes. So a face that reads one Chat Completions stream imports no other
    dialect's engine and no SDK emulation but the one it runs."""

    __slots__ = ("module", "name", "_got")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name, self._got = module, name, _NOT_YET

    def load(self) -> Any:
        """The object named, its module imported the first time."""
        got = self._got
        if got is _NOT_YET:
            got = self._got = getattr(importlib.import_module(self.module), self.name)
        return got

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and the like ask the proxy, not the part
            raise AttributeError(attr)
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        return f"Later({self.module}:{self.name})"


def loaded(part: Any) -> Any:
    """The object a record's part names, imported now if it is a `Later`: for a loop
    that calls it on every frame (through the proxy, a call costs three times as much)."""
    return part.load() if isinstance(part, Later) else part


def later(module: str, name: str) -> Any:
    """`name` of `module`, imported on first use (`Later`): for a dialect's record."""
    return Later(module, name)


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


@record(frozen=True, slots=True)
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

    def call_fields(self) -> list[tuple[str, str]]:
        """A call table's columns in this dialect's words, each with the Call field it
        shows: its container and key, both ids where it has two (the item's, then the
        call_id a result echoes), its signature where calls carry one."""
        ids = [("item_id", "item_id"), ("call_id", "id")] if self.item_ids else [("id", "id")]
        signed = [("signature", "signature")] if self.signatures else []
        return [(self.container, "choice"), (self.key, "index"), *ids, *signed, ("name", "name")]


@record(frozen=True)
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
    # each output item's frames and where other frames restate it (`ItemFrames`), for a long
    # stream whose last event states every item again: its items go whole, each with its
    # restatements, where dropping frames alone leaves a restatement of nothing
    items: Callable[[list[object]], list[ItemFrames]] | None = None
    # keys that number the frames in order, a skip being a finding (`sequence_number`):
    # the items are first tried away without them, since any frame dropped skips one
    ordinals: frozenset[str] = frozenset()


@record(frozen=True)
class ItemFrames:
    """One output item of a stream, for `--minimal`: the frames that carry it (in the
    stream), and the entries of other frames that state it again (frame, path to the
    entry: a Responses response's final `output`), which go when its frames do."""

    frames: tuple[int, ...]
    echoes: tuple[tuple[int, tuple[Any, ...]], ...] = ()


class Minimize(Protocol):
    """A dialect's own `--minimal` search, where it has one: the smallest stream (frames'
    data, in their order; its events carry no SSE names) on which the same warnings,
    errors and client divergences hold. `payloads`: parse_payload of each frame, when the
    caller parsed them already (shared, never changed); `expect_done` False for a chunk
    log; `keep_calls`: robust's calls must stay as they were (core.minimal.held); `end`
    and `tells`: what the frames alone do not say (core.minimal.Ending, Tells)."""

    def __call__(
        self,
        frames: list[str],
        tools: list[Any] | None = ...,
        *,
        keep_fields: bool = ...,
        expect_done: bool = ...,
        payloads: list[object] | None = ...,
        keep_calls: bool = ...,
        end: Ending = ...,
        tells: Tells | None = ...,
    ) -> list[str]: ...


Pairs = list[tuple[str | None, str]]  # frames as (SSE event name, data)
# frames as (event name, data, headers): a binary framing's messages keep their headers
# (an AWS event stream's `:event-type`, or `:exception-type` for an exception)
Messages = list[tuple[str | None, str, tuple[FrameHeader, ...]]]


@record(frozen=True)
class SessionDriver:
    """How `export --format pytest` drives a recorded WebSocket session through the
    dialect's own SDK, against a local server playing the session back."""

    # the SDK's package, which the module imports ("openai"): its client, and the
    # BaseModel its events derive from (sdk_dict reads them as dicts)
    package: str
    # the client's constructor, as source: str.format fields {base} (the local server's
    # http:// base URL) and {ws} (the same as ws://), each written as a Python expression
    client: str
    # the call on `client` that opens the connection, as source, given the handshake's
    # recorded URL (whatever it needs from it quoted with repr); it passes the module's
    # `options` as the SDK's websocket connection options
    connect: Callable[[str], str]
    words: str  # that call in the module's docstring ("client.beta.responses.connect()")
    needs: str  # what the module needs installed besides pytest, in words


@record(frozen=True)
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
    # how a session of the dialect is replayed over a WebSocket (None: its SDK has no
    # WebSocket client, or the dialect is never read over one)
    session: SessionDriver | None = None
    # where its SDK reads a frame's headers too (an AWS event stream's: an exception
    # message raises, a chunk carries an event): how it is served, headers and all, used
    # in place of `served`, `literal` and `events` (None: the frames' names and data
    # are all it reads)
    framed: Framed | None = None
    # the SDK's stream helper the dialect's `sdk` strategy runs, where the module reads
    # the stream without it (`create(stream=True)`): where the helper raises, the test
    # does not (None: the module reads as the strategy does, and fails where it raises)
    helper: str | None = None


@record(frozen=True)
class Framed:
    """A fixture's serving of frames whose headers its SDK reads as well as their data:
    what `export --format pytest` gives it are Messages, not Pairs."""

    served: Callable[[Messages], Messages]  # the messages the module serves its SDK
    literal: Callable[[Messages], str]  # those messages as Python source (the module's)
    events: Callable[[Messages], list[Any]]  # what the embedded accumulator is given

    def fixture(
        self,
        template: str,
        reference: Callable[[], str],
        expected: Callable[[Call], dict[Any, Any]],
    ) -> Fixture:
        """The fixture serving frames so; given bare pairs, it reads each as a message with
        no headers."""

        def bare(pairs: Pairs) -> Messages:
            return [(name, data, ()) for name, data in pairs]

        def served(pairs: Pairs) -> Pairs:
            return [(name, data) for name, data, _ in self.served(bare(pairs))]

        return Fixture(
            template,
            served,
            lambda pairs: self.literal(bare(pairs)),
            lambda pairs: self.events(bare(pairs)),
            reference,
            expected,
            framed=self,
        )


class FinalWatch(Protocol):
    """What a recorder asks of a stream it relays: was its final event relayed? A client
    that leaves once it was ended a `complete` stream. `seen` runs after every relayed read
    (the proxy's hot path): a watch looks for its marker in few bytes."""

    relayed: bool

    def seen(self, data: bytes) -> None: ...


@record(slots=True)
class Watch:
    """A final-event watch's state: whether the event was relayed (the proxy sets it once
    the whole body was), and bytes kept from the read before (an event cut across two).
    As it stands, the watch of a dialect that names no final event."""

    relayed: bool = False
    _tail: bytes = b""

    def seen(self, data: bytes) -> None:
        pass


class FinalEvent(Protocol):
    """A new watch for the final event of the stream a request to `path` (its query left
    off) asks for, relayed in `framing` (told from the request and the response: None
    where it is not told)."""

    def __call__(self, path: str, framing: str | None = None) -> FinalWatch: ...


def no_final_event(path: str, framing: str | None = None) -> FinalWatch:
    """The watch of a stream with no final event: its end is its body's."""
    return Watch()


@record(slots=True)
class ResponseFacts:
    """What a stream's events say of the response besides its calls, as `export --format
    otlp` reports it: the id the provider gave it, the model that answered, and the tokens
    it counted (input with any cached tokens, output with any reasoning tokens). None:
    no event said it."""

    id: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def read(
        self,
        obj: object,
        id: str = "",
        model: str = "",
        usage: str = "",
        input: tuple[str, ...] = (),
        output: tuple[str, ...] = (),
    ) -> None:
        """Take what one JSON object of an event says: its fields `id` and `model` (""
        none), and the token counts of its object `usage` ("": the object itself), each
        the sum of the fields `input` and `output` name. A later event's value replaces an
        earlier one's (usage is counted up to the end); a value of the wrong type is no
        fact."""
        if not isinstance(obj, dict):
            return
        for name, key in (("id", id), ("model", model)):
            value = obj.get(key) if key else None
            if isinstance(value, str) and value:
                setattr(self, name, value)
        counts = obj.get(usage) if usage else obj
        if not isinstance(counts, dict):
            return
        for name, keys in (("input_tokens", input), ("output_tokens", output)):
            found = [counts.get(k) for k in keys]
            found = [c for c in found if isinstance(c, int) and not isinstance(c, bool)]
            if found:
                setattr(self, name, sum(found))


def no_response_facts(payload: object, facts: ResponseFacts) -> None:
    """A dialect whose events say none of it."""


# A request's headers as a recording or a HAR keeps them: [name, value] pairs.
RequestHeaders = Sequence[Sequence[str]]


@record(frozen=True, slots=True)
class RequestFacts:
    """What a request body (and its path) says about the exchange, as its dialect reads it."""

    model: str | None = None
    stream: bool | None = None  # None: the request does not say
    tools: list[Any] | None = None
    # what else the request asks of the SDK strategy's reading, handed to its engine:
    # Chat Completions' `response_format`; for Anthropic Messages, the exchange as the
    # SDK's client saw it (anthropic.wire.SdkExchange: the path it posted to, whether its
    # beta client sent it, and once the response is read its `request-id`)
    response_format: object = None


def body_facts(path: str, body: object) -> RequestFacts:
    """The facts most dialects keep in the body: `model`, `stream`, `tools`,
    `response_format` (any JSON type may stand there: only the expected ones are kept)."""
    if not isinstance(body, dict):
        return RequestFacts()
    model, tools = body.get("model"), body.get("tools")
    return RequestFacts(
        model if isinstance(model, str) else None,
        body.get("stream") is True,
        tools if isinstance(tools, list) else None,
        body.get("response_format"),
    )


def no_error_headers(status: int, kind: str) -> tuple[tuple[str, str], ...]:
    return ()


def no_chunk_key(event: str | None, payload: object) -> str | None:
    return None


def openai_error(status: int, kind: str, message: str) -> bytes:
    """The error document OpenAI and the servers compatible with it answer with (and the
    openai SDK reads): `{"error": {"message", "type", "param", "code"}}`."""
    return orjson.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})


@record(slots=True)
class Turn:
    """One stream of a WebSocket session: the client message that opened it (parsed JSON,
    None when no client message did), the server messages of it as frames, the client
    messages sent while it ran, whether its final event came, and when it opened (ns
    from the recording's start)."""

    turn: int  # 1-based within the session
    request: object
    frames: list[Frame]
    client: list[WsMessage]
    ended: bool
    start_ns: int
    # the tools in force for its response where the session declared them beside its
    # request (Realtime's session.update); None: its request's own, if any
    tools: list[Any] | None = None


@record(frozen=True, slots=True)
class SessionPlay:
    """How `serve` plays a recorded session of the dialect back (playback/sessions.py):
    the client messages that open a turn (their `type`; matched with the recorded ones
    by `match_keys`), the server events that begin one the server began itself and those
    that end one (a client message sent while a turn runs waits for nothing), and the
    `error` event its clients read for a client message nothing recorded answers:
    (message, the client's message as parsed JSON, a count for a unique event id) -> the
    event's JSON."""

    opens: frozenset[str]
    starts: frozenset[str]
    ends: frozenset[str]
    error_event: Callable[[str, object, int], bytes]


class SessionContract(Protocol):
    def __call__(
        self,
        exchange: int,
        turns: Sequence[Turn],
        results: Sequence[StreamResult],
        responses: Mapping[str, StreamResult],
    ) -> tuple[list[Finding], int]:
        """The findings, and how many turns carried back the calls of a response."""
        ...


@record(frozen=True, slots=True)
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
    ids: CallIds  # whose a call's id is, as its API documents it
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
    # How `--minimal` reads its frames (export/minimize_events.py), or its own search
    # (`minimize`, whose judge also knows what its engine surely does): one of the two.
    shape: Shape | None = None
    minimize: Minimize | None = None
    # Its events carry SSE names (`event:` lines) that exports must keep.
    named_events: bool = False
    # Its SDK is shown a chunk log's events (which come with no SSE names) each named by
    # its `type`, as the API sends it (Anthropic's skips an unnamed event): by its
    # emulation (the engine's chunk_log) and by the real SDK where that declines.
    chunk_names: bool = False
    # The key a chunk log wraps an event's data in, where its name is not in its data (a
    # Bedrock message's `:event-type`: `{"messageStart": {...}}`, as botocore yields it):
    # (the frame's event name, its parsed payload) -> the key, None: the data alone.
    chunk_key: Callable[[str | None, object], str | None] = no_chunk_key
    # The key `inspect --json` gives the installed SDK's version under (None: the SDK
    # strategy's name: `openai_sdk_version`)
    version_key: str | None = None
    # The distribution the SDK strategy stands for (its verified release: versions.py)
    sdk_package: str = "openai"
    # The anomaly kinds only this dialect's streams have, kind -> Kind (severity, meaning,
    # why); the shared ones are core/anomalies.py's. Its engine's log files both.
    kinds: Mapping[str, Kind] = field(default_factory=dict)
    # -- its wire: what the recorder, playback, HAR and the error documents ask of it --
    # Header names only its clients send (lower case), telling a request's API where its
    # path and body do not (`anthropic-version`).
    client_headers: frozenset[str] = frozenset()
    # A new watch for the final event of the stream a request to this path asks for, in
    # the framing its response streams in (the recorder's).
    final_event: FinalEvent = no_final_event
    # Its error document: (HTTP status, error type, message) -> the JSON body its
    # clients' SDK reads as the API's own errors.
    error_document: Callable[[int, str, str], bytes] = openai_error
    # The headers that go with it, (HTTP status, error type) -> headers, where its clients
    # read the error's type from one (Bedrock's `x-amzn-ErrorType`)
    error_headers: Callable[[int, str], tuple[tuple[str, str], ...]] = no_error_headers
    # The facts of a request it claims: (URL path, parsed JSON body) -> RequestFacts.
    facts: Callable[[str, object], RequestFacts] = body_facts
    # ... where its URL's query or its headers tell them (Realtime's `?model=`, the
    # anthropic SDK's beta client's `?beta=true`): (the whole URL, the parsed body, the
    # request's headers as [name, value] pairs) -> RequestFacts, read instead of `facts`
    # (None: `facts` on the path).
    url_facts: Callable[[str, object, RequestHeaders], RequestFacts] | None = None
    # What its response's headers add to the request's `response_format` for the SDK
    # strategy (the anthropic SDK's errors name its `request-id`): (that response_format,
    # the response's headers as [name, value] pairs) -> the one its engine is opened with
    # (None: they add nothing).
    answer_facts: Callable[[object, RequestHeaders], object] | None = None
    # What playback compares to pick the recorded request that answers one (the model
    # as `facts` reads it), and the key holding its turns, with what one is called.
    match_keys: tuple[str, ...] = ("model", "messages", "tools")
    turns: tuple[str, str] = ("messages", "message")
    # The requests it answers, as users write them: `POST .../chat/completions`.
    endpoints: tuple[str, ...] = ()
    # Its exchanges in a sentence ("the files hold no {noun} exchange"); "": its title.
    noun: str = ""
    # Why no recorded response answers a request for a stream (True) or for none, in
    # its own words (None: as `"stream": true` says it).
    unserved: Callable[[bool], str] | None = None
    # The framings its streams come in (names in streamscope.framing), the usual first,
    # and the one a request to this URL (its query included) gets when its facts say it
    # asks for a stream (None: the first).
    framings: tuple[str, ...] = ("sse",)
    framing_of: Callable[[str], str] | None = None
    # Over a WebSocket (framing `websocket`): its session's messages split into turns,
    # each read as a stream of its own (None: it is never read over a WebSocket).
    session: Callable[[Sequence[WsMessage]], list[Turn]] | None = None
    # A session's own contract: (exchange, its turns, their results, every stream of the
    # recording by response id) -> (findings, turns checked) (None: it checks nothing).
    session_contract: SessionContract | None = None
    # What one client message of a session (its parsed JSON) sends for earlier calls, and
    # whether it asks for a response (core/results.session_answer); None: its sessions'
    # results are not read
    session_results: Callable[[object], Carried | None] | None = None
    # How the tools a session declared beside its requests (Turn.tools: Realtime's
    # session.update) read as the request's (None: a turn's tools are its request's own)
    session_tools: Callable[[list[Any]], list[Tool]] | None = None
    # How `serve` plays one of its sessions back (None: every client message is answered
    # by what followed it, none opens a turn).
    session_play: SessionPlay | None = None
    # The fixture of a stream in a framing its clients read otherwise, by framing name
    # (Claude on Bedrock's AWS event stream, read by AnthropicBedrock): `fixture_for`.
    fixtures: Mapping[str, Fixture] = field(default_factory=dict)
    # What one event's payload says of the response (ResponseFacts.take), and the
    # operation its requests are, as the GenAI semantic conventions name it
    # (`export --format otlp`)
    response_facts: Callable[[object, ResponseFacts], None] = no_response_facts
    operation: str = "chat"

    def fixture_for(self, framing: str | None) -> Fixture:
        """The fixture `export --format pytest` writes for a stream in `framing` (None:
        SSE's): the framing's own where it has one, else `fixture`."""
        return self.fixtures.get(framing or SSE, self.fixture)

    def real_answer(
        self,
        frames: list[Frame],
        tools: list[Any] | None,
        response_format: object,
        chunk_log: bool = False,
    ) -> list[Call] | StrategyError | Unmodeled:
        """What the real SDK builds or raises on `frames`, where its emulation declined
        their shape: a chunk log's events shown it named as the emulation was shown them
        (`chunk_names`); an oracle that fails itself says so rather than guess."""
        if chunk_log and self.chunk_names:
            frames = [named_by_type(f) for f in frames]
        try:
            got: list[Call] | StrategyError | Unmodeled = self.real_sdk(
                frames, tools, response_format
            )
        except Exception as exc:
            got = StrategyError.from_exception(exc, 0)
        return got

    def answered(
        self,
        others: Strategies,
        frames: Callable[[], list[Frame]],
        tools: list[Any] | None,
        chunk_log: bool = False,
    ) -> Strategies:
        """`others`, with the real SDK's answer (`real_answer`, on `frames()`, made only
        then) where its emulation declined the shape (Unmodeled), as inspect gives it:
        one on which the real SDK raises is not one on which it builds other calls, though
        the emulation declines both (what the minimizers' judges compare)."""
        if not isinstance(others.get(self.sdk), Unmodeled):
            return others
        return {**others, self.sdk: self.real_answer(frames(), tools, None, chunk_log)}
