"""The anomaly vocabulary of the analysis contract, and the collector that dedups it."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, NamedTuple

from ..text import quote
from .record import record

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}
# The severities that say something went wrong: an info kind is harmless, and what keeps
# a finding (a minimal reproducer's signature, a fixture's expected kinds, a graded
# conformance case) leaves it out.
SERIOUS = frozenset({ERROR, WARNING})


def worst_severity(severities: Iterable[str]) -> str | None:
    """The most severe of `severities` (None when there are none)."""
    return min(severities, key=SEVERITY_ORDER.__getitem__, default=None)


class Kind(NamedTuple):
    """A kind of finding as its registry holds it: its severity, what it means, and why it
    has that severity (error: the result or the conversation is wrong for some client;
    warning: a known trap some clients fall into; info: worth knowing, harmless to a
    correct client). docs/anomalies.md is written from these three."""

    severity: str
    meaning: str
    why: str


# kind -> Kind: the kinds every dialect shares (or several do), in the contract's order. A
# kind only one dialect has is in its package (dialects/<name>/kinds.py, on its Dialect
# record); the whole registry is dialects.ANOMALY_KINDS, and each engine hands its log the
# kinds it may file.
KINDS: dict[str, Kind] = {
    "id-empty-overwrite": Kind(
        WARNING,
        'a later delta has id "" or null for a call whose id is set',
        "a client that keeps the id it has is right; one that overwrites on every present "
        'field sends back id "", and one keyed by id splits the call',
    ),
    "name-empty-overwrite": Kind(
        WARNING,
        'a later delta has name "" or null for a named call',
        "a client that keeps the name it has is right; one that overwrites on every present "
        'field calls tool ""',
    ),
    "type-empty-or-null": Kind(
        WARNING,
        'a delta has type "" or null (the SDK stream helper asserts)',
        "the call reads right by every client that ignores the type, but openai-python's "
        'stream helper asserts a function call stays "function" and raises AssertionError',
    ),
    "id-repeated": Kind(
        WARNING,
        "a later delta repeats the call's id",
        "a client that keeps or overwrites the id is right; one that concatenates every "
        "string field (openai-python's accumulate_delta, LlamaIndex, LangChain 0.3) "
        "builds call_xcall_x",
    ),
    "name-repeated": Kind(
        WARNING,
        "a later delta repeats the call's full name",
        "a client that keeps or overwrites the name is right; one that concatenates it "
        "(openai-python) calls get_weatherget_weather",
    ),
    "id-changed": Kind(
        ERROR,
        "a later delta of the same call carries a different id",
        "no reading is right for every client: first-id and last-id clients send back "
        "different ids, concatenating ones a third, and at most one is the id the provider "
        "links the result to",
    ),
    "name-fragmented": Kind(
        WARNING,
        "the name arrives in pieces that must be concatenated",
        "joined, the name is whole (openai-python joins it); a client that overwrites keeps "
        "only the last piece and one that keeps the first only the first",
    ),
    "name-changed": Kind(
        ERROR,
        "a later delta carries a different name that is not a continuation",
        "the call has two names: whichever one a client keeps, some client runs another "
        "tool than the one it names",
    ),
    "id-missing": Kind(
        INFO,
        'a call ended with no id: "" goes on both sides, never an invented one (where the '
        "API leaves the id to the client, as Gemini's does, one id of the client's own on "
        "the call and its result alike keeps the link: tool-call-id-filled)",
        "nothing is lost: a correct client sends the call back with the id the stream gave "
        '("" or none) and answers it the same way; a client that substitutes an id is the '
        "contract's finding, not this one",
    ),
    "name-missing": Kind(
        ERROR,
        "a call ended with no name",
        'no client can run a call with no name: each drops it, calls tool "" or raises',
    ),
    "type-missing": Kind(
        INFO,
        "a call's first delta has no type",
        "its function object says what the call is, and clients read it as a function call "
        "with or without the type",
    ),
    "function-missing": Kind(
        WARNING,
        "a tool call delta has no function object",
        "the delta adds nothing a correct client loses, but openai-python's stream helper "
        "asserts function is not None (AssertionError) and the function-calling guide's "
        "snippet raises AttributeError",
    ),
    "index-missing": Kind(
        ERROR,
        "a tool call delta has no index",
        "the index is what ties a fragment to its call: openai-python raises TypeError "
        "(openai-python#2806), LangChain 1.x loses the call and index-keyed clients merge "
        "parallel calls",
    ),
    "index-invalid": Kind(
        ERROR,
        "index is not a non-negative integer",
        "it is no position: openai-python reads -1 as the last call and silently merges two "
        "calls, and clients that key by it raise or split",
    ),
    "index-gap": Kind(
        WARNING,
        "a call's first index skips over unused indexes",
        "clients that key calls by index in a map are right; those that use it as a list "
        "position (openai-python: IndexError) raise",
    ),
    "index-reused": Kind(
        WARNING,
        "a new call starts at an index an earlier call used",
        "a new id tells the calls apart, but index-keyed clients merge them into one call "
        "with joined arguments (openai-python, LiteLLM) or lose the second (the AI SDK "
        "before 3.x)",
    ),
    "index-moved": Kind(
        WARNING,
        "deltas of one call arrive under different indexes",
        "the id joins the deltas for a client that follows it; index-keyed clients split "
        "the call into broken halves",
    ),
    "id-reused": Kind(
        WARNING,
        "two different calls carry the same id",
        "index-keyed clients keep two calls; id-keyed clients merge them, and a result "
        "named by that id answers either",
    ),
    "same-index-twice-in-chunk": Kind(
        INFO,
        "one chunk holds two entries for the same index",
        "read in order they are fragments of one call, as openai-python 3.14 and later read "
        "them; older openai-python split the call and the function-calling guide's snippet "
        "raises",
    ),
    "interleaved": Kind(
        INFO,
        "fragments of different calls alternate",
        "each fragment names its call's index, so index-keyed clients join every call "
        "right; only clients that append to the last opened call mix them",
    ),
    "args-opener-nonempty": Kind(
        INFO,
        "a call's first delta already carries argument text",
        "the text is the start of the arguments and accumulators keep it once; only the "
        "function-calling guide's snippet counts it twice (the openai-docs strategy shows "
        "what it builds)",
    ),
    "args-not-string": Kind(
        ERROR,
        "function.arguments is not a string",
        "the API types arguments as a JSON string: openai-python keeps the object, "
        "LangChain raises ValidationError, the AI SDK loses the call, so clients hold "
        "different calls",
    ),
    "args-resent": Kind(
        WARNING,
        "a delta re-sends the complete arguments after they already parsed",
        "a client that stops at a complete value is right; clients that append every "
        "delta (nearly all) double the arguments into invalid JSON",
    ),
    "args-cumulative": Kind(
        WARNING,
        "argument deltas are growing snapshots rather than fragments",
        "each delta is the whole text so far: a snapshot-aware reading is right, and every "
        "appending client builds repeated, invalid JSON",
    ),
    "args-empty": Kind(
        WARNING,
        'a call ended with arguments "" or never sent',
        'a tool with no parameters is called so by some providers: clients that read "" as '
        "{} are right, those that parse the arguments raise or send back invalid JSON",
    ),
    "args-invalid-json": Kind(
        ERROR,
        "a call ended with arguments that do not parse",
        "no client can run the call as the model wrote it: each repairs it, substitutes {} "
        "or raises (the entry's repair says what)",
    ),
    # Not in the contract's table (new kinds may be added): a value the user should see.
    "args-double-encoded": Kind(
        WARNING,
        "arguments are a JSON string that itself holds JSON",
        "the text parses, to a string: a client that parses once hands the tool a string "
        "where its schema wants an object",
    ),
    "call-boundary-ambiguous": Kind(
        WARNING,
        "the bytes allow two readings of where calls begin or end",
        "robust takes one reading by its documented rules (the message names it); a client "
        "that takes the other builds other calls",
    ),
    "name-undeclared": Kind(
        ERROR,
        "the request declared tools and the call's name is not one of them",
        "no client has that tool to run: an agent loop answers with an error or stops",
    ),
    "tool-call-in-content": Kind(
        WARNING,
        "content holds what looks like a tool call, none was streamed",
        "clients that read tool_calls see only text and run nothing; only those that parse "
        "calls out of content (a chat template's <tool_call> tags) run it",
    ),
    "role-repeated": Kind(
        INFO,
        "role is sent on more than the first delta",
        "the calls are the same for every client; openai-python's snapshot concatenates the "
        'role into "assistantassistant…"',
    ),
    "delta-after-finish": Kind(
        WARNING,
        "deltas arrive after that choice's finish_reason",
        "a client that reads to the stream's end keeps them; one that stops or acts at "
        "finish_reason loses them",
    ),
    "finish-repeated": Kind(
        WARNING,
        "more than one frame carries a finish_reason for the same choice",
        "a client that reads the last one is right; one that acts at each finish_reason "
        "runs the calls early or twice",
    ),
    "finish-reason-mismatch": Kind(
        WARNING,
        "calls were assembled but finish_reason is not tool_calls",
        "the calls are whole, but clients that run calls only when finish_reason is "
        "tool_calls (agent loops, LiteLLM) answer with text and run nothing",
    ),
    "finish-reason-missing": Kind(
        WARNING,
        "the stream ended with no finish_reason",
        "what streamed may be whole, but clients that wait for a finish_reason to act never act",
    ),
    "done-missing": Kind(
        INFO,
        "the stream ended without data: [DONE]",
        "the body's end ends the stream for a correct client, openai-python included; only "
        "a client that waits for [DONE] hangs",
    ),
    "stream-truncated": Kind(
        ERROR,
        "the body ended inside an event, or the connection failed",
        "the answer is cut for every client: the last event, and what would have followed, "
        "never arrived",
    ),
    "chunk-invalid-json": Kind(
        ERROR,
        "a data payload is not JSON",
        "what it held is lost for every client, and those that parse every event "
        "(openai-python) raise",
    ),
    "chunk-schema-violation": Kind(
        WARNING,
        "a payload is not a valid chat.completion.chunk",
        "lenient clients read on; typed ones (the AI SDK's schemas, async-openai's serde) "
        "reject or misread the chunk",
    ),
    # Beyond the contract's table (new kinds may be added):
    "provider-error": Kind(
        ERROR,
        "the provider sent an error object in the stream",
        "the provider stopped the answer: what came before is incomplete for every client, "
        "and the SDKs raise",
    ),
    "invalid-utf8": Kind(
        WARNING,
        "an event's bytes are not valid UTF-8",
        "strict decoders raise and lenient ones put U+FFFD in the bytes' place, so clients "
        "hold different text",
    ),
    # The framing's (every dialect's): the contract's "Framings" section.
    "frame-invalid": Kind(
        ERROR,
        "the framing cannot read a frame: a bad CRC, an impossible length, an element that is not JSON",
        "no client can read the frame: what it held is lost, and the SDKs raise",
    ),
    # Dialects (the contract's second table): any dialect, then several.
    "dialect-unknown": Kind(
        INFO,
        "no dialect fits the stream; it is read as Chat Completions",
        "it says how streamscope read the stream, not that the stream is wrong: findings in "
        "Chat Completions' words may not fit it",
    ),
    "dialect-mismatch": Kind(
        WARNING,
        "the request names one dialect but the stream's events are another's; it is read "
        "in the request's",
        "the client that sent the request reads the events in its own dialect and finds "
        "none of the calls they hold (a gateway that relays another API's stream as it is)",
    ),
    "stop-reason-mismatch": Kind(
        WARNING,
        "tool calls were assembled but the stop reason does not say so",
        "the calls are whole, but clients that run calls only when the stop reason or "
        "status says tool use answer with text and run nothing",
    ),
    # Anthropic Messages and Bedrock's Converse stream (blocks keyed by their index in one
    # message, each closed by its own stop event, the message by its own):
    "block-stop-missing": Kind(
        ERROR,
        "the stream ended with a tool block open",
        "the block's input never ended (a max_tokens stop inside it): it is incomplete for "
        "every client",
    ),
    "block-index-reused": Kind(
        ERROR,
        "a block starts at an index an earlier block of the same message used",
        "clients keep a message's blocks by index, so the later block replaces or joins the "
        "earlier one and a call is lost or broken",
    ),
    "message-stop-missing": Kind(
        WARNING,
        "the stream ended without its message stop event (message_stop, messageStop)",
        "the blocks may be whole, but clients that finish the message at its stop event "
        "never finish it",
    ),
    # The OpenAI Responses API and Chat Completions:
    "parallel-wrapper": Kind(
        WARNING,
        "one call named parallel / multi_tool_use.parallel wraps tool_uses[]",
        "the real calls are inside it: a client that unpacks tool_uses[] runs them, the "
        "others call a tool nobody declared",
    ),
    # The OpenAI Responses API and the Realtime API (their calls are output items, keyed by
    # item_id, with deltas and whole values stated again at .done and the response's end):
    "args-done-mismatch": Kind(
        ERROR,
        ".done or output_item.done differs from the accumulated deltas",
        "clients that keep the deltas and clients that take the whole value run different "
        "arguments",
    ),
    "delta-unknown-item": Kind(
        ERROR,
        "a delta names an item_id / output_index no added item has",
        "the fragment belongs to no call: every client drops it or raises",
    ),
    "final-output-mismatch": Kind(
        WARNING,
        "the final response's output leaves out a call the stream carried",
        "clients that follow the stream's events hold the call; those that trust the final "
        "response's output lose it",
    ),
    # Beyond the contract (the event dialects):
    "event-schema-violation": Kind(
        WARNING,
        "an event does not fit its dialect's types (a wrong type, a missing field)",
        "lenient clients read on; typed ones (the SDKs' models) reject or misread the event",
    ),
    "event-unknown": Kind(
        INFO,
        "an event or delta of a type the dialect does not define",
        "the APIs add event types and their clients skip the ones they do not know: a "
        "correct client loses nothing",
    ),
}
Kinds = Mapping[str, Kind]


@record(slots=True)
class Anomaly:
    frame: int
    kind: str
    choice: int | None
    index: object
    severity: str
    message: str
    count: int = 1
    also: list[str] | None = None  # other problems filed under the same entry (schema only)
    # it follows from the client closing the stream early (a warning at most; --strict
    # does not fail on it): see `cut_by_client`
    cut_by_client: bool = False

    def text(self) -> str:
        if not self.also:
            return self.message
        return f"{self.message}; also: {'; '.join(self.also)}"

    def to_json(self) -> dict[Any, Any]:
        out = {
            "frame": self.frame,
            "kind": self.kind,
            "choice": self.choice,
            "index": self.index,
            "severity": self.severity,
            "message": self.text(),
        }
        if self.count > 1:
            out["count"] = self.count
        if self.cut_by_client:
            out["cut_by_client"] = True
        return out


_ALONE: dict[str, tuple[str]] = {}  # kind -> (kind,): the marks of a frame with one kind


# The kinds a later, better reading may take back (`AnomalyLog.discard`): a search that
# sees any other kind filed knows the stream's end still has it.
TAKEN_BACK = frozenset({"args-cumulative"})


class AnomalyLog:
    """One entry per (kind, choice, index): the first sighting, with a count of recurrences."""

    __slots__ = (
        "_by_key",
        "_mine",
        "_frames",
        "_layers",
        "_layers_top",
        "_tops",
        "_ordered",
        "marking",
        "kinds",
    )

    def __init__(self, marking: bool = True, kinds: Kinds = KINDS) -> None:
        self._by_key: dict[tuple[Any, ...], Anomaly] = {}
        # The keys of the entries this log may change in place. A copy shares every entry
        # with its original (a replay keeps dozens of copies of a stream of 20,000
        # anomalies: copying each entry was most of a step back's 100 ms); whichever log
        # changes a shared entry first changes its own clone (`_owned`).
        self._mine: set[tuple[Any, ...]] = set()
        self.kinds = kinds  # what may be filed, with its severity: the engine's dialect's
        # False: no frame is marked (the minimiser reads the kinds alone, and a long
        # interleaved stream marks most of its frames)
        self.marking = marking
        # Every frame an anomaly was seen at, for the faces' markers: frame -> its kinds,
        # replaced (never changed in place) when a frame gains a kind. The marks made
        # before the last copy() lie in frozen layers shared with the copies (a replay
        # keeps 64 copies of a long stream's engine: the marks are held once).
        self._frames: dict[int, Sequence[str]] = {}
        self._layers: tuple[dict[int, Sequence[str]], ...] = ()
        self._layers_top = -1  # the highest frame in a frozen layer
        # Per layer, its highest frame; while each layer's frames all come after the layer
        # before it (`_ordered`: frames are fed in order), a frame is looked up in the one
        # layer bisection finds, not in each of hundreds.
        self._tops: tuple[int, ...] = ()
        self._ordered = True

    def add(
        self,
        kind: str,
        frame: int,
        message: str | Callable[[], str],
        choice: int | None = None,
        index: object = None,
    ) -> None:
        """File a sighting. A rule that may fire on many frames passes its message as a
        function: the text is built at the first sighting only, later ones are counted."""
        key = (kind, choice, _hashable(index))
        found = self._by_key.get(key)
        if found is None:
            text = message if isinstance(message, str) else message()
            self._by_key[key] = Anomaly(frame, kind, choice, index, self.kinds[kind][0], text)
            self._mine.add(key)
        else:
            if key not in self._mine:
                found = self._owned(key)
            found.count += 1
            # one entry per kind, choice and index, but different schema problems each named
            if kind == "chunk-schema-violation" and message != found.message:
                assert isinstance(message, str)
                found.also = found.also or []
                if message not in found.also and len(found.also) < 3:
                    found.also.append(message)
        if self.marking:
            self._mark(frame, kind)

    def again(
        self, kind: str, frames: list[int], choice: int | None = None, index: object = None
    ) -> bool:
        """Count sightings of an entry already filed, at `frames`, without building its
        message (a recurring rule asks this first); False when there is no entry yet."""
        key = (kind, choice, _hashable(index))
        found = self._by_key.get(key)
        if found is None:
            return False
        if key not in self._mine:
            found = self._owned(key)
        found.count += len(frames)
        if self.marking:
            for frame in frames:
                self._mark(frame, kind)
        return True

    def _mark(self, frame: int, kind: str) -> None:
        kinds = self.at(frame) or None
        if kinds is None:
            # one shared tuple per kind: a frame marked once costs a dict entry, no list
            self._frames[frame] = _ALONE.get(kind) or _ALONE.setdefault(kind, (kind,))
        elif kind not in kinds:
            self._frames[frame] = [*kinds, kind]

    def discard(self, kind: str, choice: int | None, index: object) -> None:
        """Take back an entry a later, better reading shows was wrong (a kind in
        TAKEN_BACK: every other entry, once filed, stays)."""
        assert kind in TAKEN_BACK, kind
        key = (kind, choice, _hashable(index))
        found = self._by_key.pop(key, None)
        self._mine.discard(key)
        if found is not None:
            kinds = self.at(found.frame)
            if kind in kinds:  # written in this log's own layer: the frozen ones are shared
                self._frames[found.frame] = [k for k in kinds if k != kind]

    def filed(self) -> int:
        """How many entries the log holds."""
        return len(self._by_key)

    def since(self, start: int) -> Iterator[Anomaly]:
        """The entries filed after the first `start`, in filing order."""
        return islice(self._by_key.values(), start, None)

    def entries(self) -> list[Anomaly]:
        """In order of first sighting, stream-level kinds last among equals."""
        return sorted(self._by_key.values(), key=lambda a: (a.frame, SEVERITY_ORDER[a.severity]))

    def at(self, frame: int) -> Sequence[str]:
        return self._find(frame) or ()

    def _find(self, frame: int) -> Sequence[str] | None:
        """The kinds marked at `frame` (None: never marked)."""
        kinds = self._frames.get(frame)
        if kinds is not None or frame > self._layers_top:  # frames are fed in order
            return kinds
        layers = self._layers
        if self._ordered:
            i = bisect_left(self._tops, frame)  # the first layer reaching that far
            return layers[i].get(frame) if i < len(layers) else None
        for layer in reversed(layers):
            kinds = layer.get(frame)
            if kinds is not None:
                return kinds
        return None

    def marks(self) -> Mapping[int, Sequence[str]]:
        """The marks as a live read-only view (no copy: the replay asks while it reads)."""
        if not self._layers:
            return self._frames
        return _Marks(self)

    def frames(self) -> dict[int, Sequence[str]]:
        """The marks as one dict (merged once, at the end of a stream)."""
        if not self._layers:
            return self._frames
        merged: dict[int, Sequence[str]] = {}
        for layer in self._layers:
            merged.update(layer)
        merged.update(self._frames)
        return merged

    def _owned(self, key: tuple[Any, ...]) -> Anomaly:
        """The entry at `key`, this log's own from now on (cloned if it was shared)."""
        a = self._by_key[key]
        if key not in self._mine:
            also = list(a.also) if a.also else None
            a = self._by_key[key] = Anomaly(
                a.frame, a.kind, a.choice, a.index, a.severity, a.message, a.count, also,
                a.cut_by_client,
            )  # fmt: skip
            self._mine.add(key)
        return a

    def copy(self) -> AnomalyLog:
        new = AnomalyLog(self.marking, self.kinds)
        new._by_key = self._by_key.copy()  # every entry shared: neither log owns one now
        self._mine = set()
        if self._frames:  # freeze the marks so far: both logs share them from here on
            frames = self._frames
            self._ordered = self._ordered and min(frames) > self._layers_top
            self._layers += (frames,)
            self._tops += (max(frames),)
            self._layers_top = max(self._layers_top, self._tops[-1])
            self._frames = {}
        new._layers, new._layers_top = self._layers, self._layers_top
        new._tops, new._ordered = self._tops, self._ordered
        return new


class _Marks(Mapping[int, Sequence[str]]):
    """A log's marks across its frozen layers, read without merging them."""

    __slots__ = ("log",)

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log

    def __getitem__(self, frame: int) -> Sequence[str]:
        kinds = self.log._find(frame)
        if kinds is None:
            raise KeyError(frame)
        return kinds

    def __iter__(self) -> Iterator[int]:
        return iter(self.log.frames())

    def __len__(self) -> int:
        return len(self.log.frames())


# What a client that closes a stream early causes, among the shared kinds: the end the
# stream never reached, and the call it was in the middle of (its unfinished arguments).
# A dialect's engine adds its own kinds of each (Engine.cut_stream_kinds, cut_call_kinds).
CUT_STREAM_KINDS = frozenset(
    {"stream-truncated", "done-missing", "finish-reason-missing", "stop-reason-mismatch"}
)
CUT_CALL_KINDS = frozenset({"args-invalid-json", "args-empty"})


def cut_by_client(
    log: AnomalyLog,
    open_calls: Iterable[tuple[object, object]],
    stream_kinds: frozenset[str] = CUT_STREAM_KINDS,
    call_kinds: frozenset[str] = CUT_CALL_KINDS,
) -> None:
    """The stream ended because the client closed it: the anomalies that follow from the
    cut (`stream_kinds`: the stream's missing end; `call_kinds` of `open_calls`, by
    (choice, index): their unfinished arguments) say so and are warnings, not the
    provider's errors."""
    open_calls = {(c, _hashable(i)) for c, i in open_calls}
    for key, a in list(log._by_key.items()):
        if a.kind in stream_kinds or (
            a.kind in call_kinds and (a.choice, _hashable(a.index)) in open_calls
        ):
            a = log._owned(key)  # (a copy of the log taken before keeps its own)
            a.cut_by_client = True
            if a.severity == ERROR:
                a.severity = WARNING
            if a.kind != "stream-truncated":  # that one says it already
                a.message += "; cut by the client, which closed the stream before its end"


def _hashable(value: object) -> object:
    """An index as a key of its own: `true` is not index 1 (though True == 1 in Python)."""
    return value if type(value) in _PLAIN else quote(value)


_PLAIN = (int, str, type(None))
