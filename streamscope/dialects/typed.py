"""What the dialects of typed events (Anthropic Messages, the OpenAI Responses API) share:
the first look at each frame before its `type` decides the rest, the engine around their
strategies, and the text of the pytest module they export."""

from __future__ import annotations

import copy
import json
import textwrap
from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeGuard, TypeVar

import orjson

from ..core.anomalies import AnomalyLog
from ..core.calls import Call, Slot, StrategyError, Unmodeled
from ..core.engine import ALL, Emulation, Engine, Strategies
from ..core.frames import BAD_UTF8, INVALID, Frame, exactly, rounded
from ..text import cut, json_type, quote
from .base import SessionDriver
from .sdk_dict import as_dict


def is_index(value: object) -> TypeGuard[int]:
    """An index an event may name a block or an item by (a bool is not one)."""
    return type(value) is int and value >= 0


def named_index(
    log: AnomalyLog,
    n: int,
    payload: dict[Any, Any],
    key: str,
    what: str,
    bad: str = "",
    missing: str = "",
) -> int | None:
    """The block or item an event names by `payload[key]`, a non-negative integer; None,
    with `event-schema-violation` filed, when it names none (`bad` and `missing` end the
    finding's words where the key holds something else, or is not there)."""
    index = payload.get(key)
    if is_index(index):
        return index
    log.add(
        "event-schema-violation",
        n,
        lambda: (
            f"{what} with {key} {cut(quote(index), 30)}, not a non-negative integer{bad}"
            if key in payload
            else f"{what} with no {key}{missing}"
        ),
    )
    return None


def a_string(
    log: AnomalyLog,
    n: int,
    value: object,
    what: str,
    choice: int | None = None,
    index: object = None,
) -> str:
    """A name or id an event carries: `value` when it is a string, "" when it is absent
    (None); "" too, with `event-schema-violation` filed, for any other JSON type (`what`:
    the field in words, "block 2's name"): no client can dispatch or match one, and a
    list or object must never be hashed or compared as it is."""
    if isinstance(value, str):
        return value
    if value is not None:
        log.add(
            "event-schema-violation",
            n,
            lambda: f"{what} is a JSON {json_type(value)}, not a string: read as none",
            choice,
            index,
        )
    return ""


def id_and_name(
    log: AnomalyLog,
    n: int,
    obj: dict[Any, Any],
    keys: tuple[str, str],
    what: str,
    choice: int,
    index: object,
) -> tuple[str, str]:
    """A call's id and name, `obj[keys[0]]` and `obj[keys[1]]` as `a_string` reads them
    (`what`: whose fields, "block 2's")."""
    first, second = (a_string(log, n, obj.get(k), f"{what} {k}", choice, index) for k in keys)
    return first, second


def declared_tools(tools: object) -> frozenset[str] | None:
    """Names of the tools a request declared (`tools[].name`); None when it declared none
    (built-in tools are declared by type, not by name)."""
    if not isinstance(tools, list) or not tools:
        return None
    names = {t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
    return frozenset(names) or None


def not_an_event(frame: Frame) -> str | None:
    """A frame summary's words for data that is no event object; None for an object."""
    p = frame.payload
    if p is INVALID:
        return f"not JSON: {quote(frame.data, 30)}"
    if not isinstance(p, dict):
        return f"JSON {json_type(p)}"
    return None


def not_json(data: str) -> str:
    """Why a payload is not read as JSON, in words (nesting past the parser's limit named)."""
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if "depth limit" in str(e) or "recursion" in str(e).lower():
            return f"data {quote(data, 40)} nests deeper than 1024 levels: read as text"
    return f"data {quote(data, 60)} is not JSON"


def event_object(frame: Frame, log: AnomalyLog) -> dict[Any, Any] | None:
    """The frame's event object; None, with the anomaly filed, when its data is not JSON or
    not an object. Bytes that are not UTF-8 are named either way."""
    n, payload = frame.number, frame.payload
    if frame.invalid is not None:  # what the framing found (its payload is no event)
        log.add("frame-invalid", n, frame.invalid)
        return None
    if frame.bad_utf8:
        log.add("invalid-utf8", n, BAD_UTF8)
    if payload is INVALID:
        log.add("chunk-invalid-json", n, lambda: not_json(frame.data))
        return None
    if type(payload) is not dict:
        log.add(
            "event-schema-violation",
            n,
            f"the data is a JSON {json_type(payload)}, not an event object",
        )
        return None
    return payload


def events_template(sdk: str, built: str, reads: str, client: str, test: str) -> str:
    """The text of an exported pytest module that serves named events through the
    dialect's own SDK (`sdk`: the package; `built`: since when it builds on httpx2;
    `reads`: how the test reads the stream, in words; `client`: the client's constructor
    call; `test`: the test function, which reads each event with `_as_dict(event)`,
    sdk_dict's). The result is a str.format template of Fixture's fields; `client` and
    `test` are taken as they are."""
    braces = str.maketrans({"{": "{{", "}": "}}"})
    package = sdk.split(".")[0]
    about = textwrap.fill(
        f"The events are served through a MockTransport into a real {sdk} client; the test "
        f"reads them with {reads}, accumulates the tool calls with `accumulate` (streamscope's "
        "reading, in a few lines) and asserts the calls streamscope assembled. Swap "
        "`accumulate` for your client's own to see whether it gets them right. Needs only "
        f"{package} and pytest.",
        88,
    )
    http = textwrap.fill(
        f"The HTTP package the installed {package} builds its clients with: httpx2 {built}, "
        f"httpx before. Nothing else is imported, so {package} and pytest are all this needs.",
        88,
        initial_indent="# ",
        subsequent_indent="# ",
    )
    return (
        f'''"""Regression fixture: exported by streamscope {{version}} from {{source}}{{where}}.

{{story}}
{about.translate(braces)}
"""

import importlib

import {package}

{http}
_base = next(
    (
        c.__module__.partition(".")[0]
        for c in getattr({package}, "DefaultHttpxClient", object).__mro__[1:]
        if c.__module__.partition(".")[0] in ("httpx2", "httpx")
    ),
    "httpx",
)
http = importlib.import_module(_base)

# (SSE event name, data) of every event served
EVENTS = {{frames}}

# What streamscope's robust reading assembles from these events.
EXPECTED = {{expected}}


# -- swap this for your client's accumulator ----------------------------------------------
{{reference}}

# ------------------------------------------------------------------------------------------


def _client():
    body = "".join(
        (f"event: {{{{name}}}}\\n" if name else "") + "data: " + data + "\\n\\n" for name, data in EVENTS
    ).encode()

    def handler(request):
        return http.Response(200, headers={{{{"content-type": "text/event-stream"}}}}, content=body)

'''
        + f"    return {client.translate(braces)}\n\n\n"
        + f"{as_dict(package).translate(braces)}\n\n{test.translate(braces)}"
    )


def openai_session(connect: str | Callable[[str], str], words: str) -> SessionDriver:
    """A session replayed through an `openai.OpenAI` client's WebSocket connection
    (`connect`: the call opening it on `client`, as source, or what makes it from the
    handshake's URL: Realtime's `client.realtime.connect(model=...)` takes the model its
    query named), the client's HTTP and WebSocket base URLs both the local server's (an
    OPENAI_* variable cannot send it elsewhere)."""
    return SessionDriver(
        "openai",
        'openai.OpenAI(api_key="sk-fixture", base_url={base}, websocket_base_url={ws}, '
        "max_retries=0)",
        connect if callable(connect) else lambda url: connect,
        words,
        'openai with websockets (pip install "openai[realtime]")',
    )


class EventEmulation(Emulation, Protocol):
    """A typed-events dialect's SDK emulation: fed frame by frame, read at any frame,
    copied with the engine."""

    def feed(self, frame: Frame, /) -> None: ...

    @property
    def error(self) -> StrategyError | None: ...

    def calls(self) -> list[Call]: ...

    def copy(self) -> EventEmulation: ...


class EventReading(Protocol):
    """A typed-events dialect's robust reading, as the shared engine reads it."""

    @property
    def done_frame(self) -> int: ...

    @property
    def error_payload(self) -> str | None: ...

    def results(self) -> list[Call]: ...

    def copy(self, log: AnomalyLog) -> EventReading: ...


def emulated_or_real(
    frames: list[Frame],
    emulation: Callable[[], EventEmulation],
    installed: Callable[[], str | None],
    not_installed: str,
    real: Callable[[list[Frame]], list[Call] | StrategyError],
) -> list[Call] | StrategyError | Unmodeled:
    """An SDK strategy's answer on whole frames: its emulation's (made by `emulation`, fed
    every frame), or where it meets a shape it does not model, the real SDK's (`real`)
    when it is `installed`, else Unmodeled saying `not_installed`."""
    try:
        emu = emulation()
        for frame in frames:
            emu.feed(frame)
        return emu.finish(frames[-1].number if frames else 0)
    except Unmodeled:
        return real(frames) if installed() is not None else Unmodeled(not_installed)


def an_object(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (for reading optional members)."""
    return value if isinstance(value, dict) else {}


def sse_bytes(frame: Frame) -> bytes:
    """A frame as the SSE event that carried it (`event:` line, one `data:` line per line)."""
    head = f"event: {frame.event}\n" if frame.event is not None else ""
    lines = "".join(f"data: {line}\n" for line in frame.data.split("\n"))
    return (head + lines + "\n").encode("utf-8")


class FrameBody:
    """A response body for an SDK oracle, one frame per chunk; knows which frame the
    client is consuming.

    The client asks for frame k+1 only once every event of frame k has gone through the
    SDK's stream, so that is when frame k is reported done (`on_done`).
    """

    def __init__(self, frames: list[Frame], on_done: Callable[[int], None]) -> None:
        self.frames = frames
        self.on_done = on_done
        self.current = 0

    def __iter__(self) -> Iterator[bytes]:
        for frame in self.frames:
            if self.current:
                self.on_done(self.current)
            self.current = frame.number
            yield sse_bytes(frame)

    def client(
        self, http: str = "httpx2", path: str | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        """A client of the HTTP package `http` ("httpx2" or "httpx": the one the SDK builds
        on) whose every request is answered with this body (imported here, only when an
        oracle runs), with `headers` besides its content type; `path`: the one its request
        is taken to have been sent to, whatever the SDK asked for (the response's
        `request.url.raw_path`, which the SDK's errors name)."""
        import importlib

        package = importlib.import_module(http)

        def respond(request: Any) -> Any:
            if path is not None:
                request.url = request.url.copy_with(raw_path=path.encode())
            return package.Response(
                200,
                headers={"content-type": "text/event-stream", **(headers or {})},
                content=iter(self),
            )

        return package.Client(transport=package.MockTransport(respond))


class EventEngine(Engine):
    """The engine of a typed-events dialect: its `robust` reading (with `results()`,
    `copy(log)`, `done_frame`, `error_payload`), its plain client folds (`others`) and its
    SDK emulation (`sdk`, reported as `sdk_name`) side by side.

    A dialect's engine names its reading (`reader`), its client folds (`folds`) and how
    its emulation is made from the request's tools (`emulation`)."""

    sdk_name = ""
    reader: Callable[[AnomalyLog], EventReading]
    robust: EventReading
    folds: tuple[type, ...] = ()
    # the tool names a request's `tools` declare (None: not checked)
    declares = staticmethod(declared_tools)
    # the integer members of an event the rules judge (an index, a sequence number)
    numbers: tuple[str, ...] = ()

    def __init__(
        self,
        exchange: int = 1,
        tools: list[Any] | None = None,
        response_format: object | None = None,
        collect_events: bool = False,
        part: str = ALL,
        marks: bool = True,
        chunk_log: bool = False,
    ) -> None:
        super().__init__(exchange, part, marks, collect_events)
        self.declared = self.declares(tools)
        self.response_format = response_format  # what else the request asks of the SDK's reading
        self.robust = self.reader(self.log)
        self.others: list[Any] = [fold() for fold in self.folds] if self._clients else []
        self.sdk: EventEmulation | Unmodeled = (
            self.emulation(tools) if self._emulated else Unmodeled("not emulated")
        )
        # a chunk log holds the events an application logged, with no SSE event names
        self.chunk_log = chunk_log

    def emulation(self, tools: list[Any] | None) -> EventEmulation:
        """The SDK emulation, for a request that declared `tools`."""
        raise NotImplementedError

    def exact(self, frame: Frame) -> Frame:
        """`frame`, read again exactly (frames.exactly) where orjson rounded one of its
        `numbers`, an integer past 64 bits, to a float: robust, the folds and the SDK see
        the integer sent. For a frame off the quick path only: a plain one never pays."""
        p = frame.payload
        return exactly(frame) if type(p) is dict and self.rounded_in(p) else frame

    def rounded_in(self, payload: dict[Any, Any]) -> bool:
        """One of an event's `numbers` is `rounded` (a dialect whose events nest them
        says where)."""
        get = payload.get
        # (a loop, not any(): half the cost on every frame off the quick path)
        for key in self.numbers:  # noqa: SIM110
            if type(get(key)) is float and rounded(get(key)):  # (a float first: rare)
                return True
        return False

    def _sdk_feed(self, frame: Frame) -> None:
        sdk = self.sdk
        if isinstance(sdk, Unmodeled):
            return
        try:
            sdk.feed(frame)
        except Unmodeled as why:
            self.sdk = why

    def copy(self) -> EventEngine:
        new = copy.copy(self)
        new.log = self.log.copy()
        new.robust = self.robust.copy(new.log)
        new.others = [s.copy() for s in self.others]
        new.sdk = self.sdk if isinstance(self.sdk, Unmodeled) else self.sdk.copy()
        return new

    # -- the state at this frame, for the faces ------------------------------------------

    def calls_now(self) -> list[Call]:
        return self.robust.results()

    def _sdk_now(self) -> list[Call] | StrategyError | Unmodeled:
        """The SDK emulation's calls or error so far; Unmodeled where it meets a shape it
        does not reproduce (it may first meet it here, where its state is read)."""
        sdk = self.sdk
        if isinstance(sdk, Unmodeled):
            return sdk
        try:
            return sdk.error or sdk.calls()
        except Unmodeled as why:
            self.sdk = why
            return why

    def strategy_calls(self) -> Strategies:
        robust = self.robust.results()
        out: Strategies = {"robust": robust, self.sdk_name: self._sdk_now()}
        for s in self.others:
            out[s.name] = s.result()
        out.update(self.derived(robust))
        return {name: out[name] for name in self.strategy_names}

    def derived(self, robust: list[Call]) -> Strategies:
        """The strategies read off robust's own calls (a client that reads them alike and
        differs in one field only), by name; none unless a dialect has such a client."""
        return {}

    # -- the end of the stream ------------------------------------------------------------

    @property
    def done_seen(self) -> bool:
        return bool(self.robust.done_frame)

    @property
    def errored(self) -> bool:
        return bool(self.robust.error_payload)

    def others_at_end(self) -> Strategies:
        out: Strategies = {s.name: s.result() for s in self.others}
        if self._reads:  # read off robust's calls: the part that reads robust (settled: `end` ran)
            out.update(self.derived(self.robust.results()))
        if self._emulated:  # (else the emulation is not part of it)
            out[self.sdk_name] = self.sdk_at_end()
        return out


S = TypeVar("S", bound=Slot)


class Fold(Generic[S]):
    """A client strategy: a fold over the events its engine hands it, building calls in
    `slots` (of its own kind of Slot) until it raises (`error`)."""

    name = ""

    def __init__(self) -> None:
        self.slots: list[S] = []
        self.error: StrategyError | None = None

    def call(self, slot: S) -> Call:
        return slot.to_call()

    def calls(self) -> list[Call]:
        return [self.call(s) for s in self.slots]

    def result(self) -> list[Call] | StrategyError:
        return self.error if self.error is not None else self.calls()

    def copy(self) -> Fold[S]:
        """A deep copy, its slots copied first and directly (a replay copies folds of
        thousands of slots: deepcopy's own walk was half the copy); whatever else refers to
        a slot (a map by index, the current one) gets the same copy."""
        memo: dict[Any, Any] = {}
        slots = [s.__deepcopy__(memo) for s in self.slots]
        new = copy.copy(self)
        for name, value in vars(self).items():
            if name == "slots":
                new.slots = slots
            elif not isinstance(value, (int, float, str, bytes, type(None))):
                setattr(new, name, copy.deepcopy(value, memo))
        return new


def compact(value: object) -> str | None:
    """A JSON value as compact text, keys in the order held (no spaces, UTF-8 kept); None
    for a value nested deeper than Python writes."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):  # nested past orjson's writer
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            return None
