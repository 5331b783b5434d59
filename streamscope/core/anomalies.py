"""The anomaly vocabulary of the analysis contract, and the collector that dedups it."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..text import quote

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def worst_severity(severities: Iterable[str]) -> str | None:
    """The most severe of `severities` (None when there are none)."""
    return min(severities, key=SEVERITY_ORDER.__getitem__, default=None)


# kind -> (severity, what it means in plain words): the kinds every dialect shares (or
# several do), in the contract's order. A kind only one dialect has is in its package
# (dialects/<name>/kinds.py, on its Dialect record); the whole registry is
# dialects.ANOMALY_KINDS, and each engine hands its log the kinds it may file.
KINDS: dict[str, tuple[str, str]] = {
    "id-empty-overwrite": (WARNING, 'a later delta has id "" or null for a call whose id is set'),
    "name-empty-overwrite": (WARNING, 'a later delta has name "" or null for a named call'),
    "type-empty-or-null": (WARNING, 'a delta has type "" or null (the SDK stream helper asserts)'),
    "id-repeated": (WARNING, "a later delta repeats the call's id"),
    "name-repeated": (WARNING, "a later delta repeats the call's full name"),
    "id-changed": (ERROR, "a later delta of the same call carries a different id"),
    "name-fragmented": (WARNING, "the name arrives in pieces that must be concatenated"),
    "name-changed": (ERROR, "a later delta carries a different name that is not a continuation"),
    "id-missing": (INFO, 'a call ended with no id: "" goes on both sides, never an invented one'),
    "name-missing": (ERROR, "a call ended with no name"),
    "type-missing": (INFO, "a call's first delta has no type"),
    "function-missing": (WARNING, "a tool call delta has no function object"),
    "index-missing": (ERROR, "a tool call delta has no index"),
    "index-invalid": (ERROR, "index is not a non-negative integer"),
    "index-gap": (WARNING, "a call's first index skips over unused indexes"),
    "index-reused": (WARNING, "a new call starts at an index an earlier call used"),
    "index-moved": (WARNING, "deltas of one call arrive under different indexes"),
    "id-reused": (WARNING, "two different calls carry the same id"),
    "same-index-twice-in-chunk": (INFO, "one chunk holds two entries for the same index"),
    "interleaved": (INFO, "fragments of different calls alternate"),
    "args-opener-nonempty": (INFO, "a call's first delta already carries argument text"),
    "args-not-string": (ERROR, "function.arguments is not a string"),
    "args-resent": (WARNING, "a delta re-sends the complete arguments after they already parsed"),
    "args-cumulative": (WARNING, "argument deltas are growing snapshots rather than fragments"),
    "args-empty": (WARNING, 'a call ended with arguments "" or never sent'),
    "args-invalid-json": (ERROR, "a call ended with arguments that do not parse"),
    # Not in the contract's table (new kinds may be added): a value the user should see.
    "args-double-encoded": (WARNING, "arguments are a JSON string that itself holds JSON"),
    "call-boundary-ambiguous": (
        WARNING,
        "the bytes allow two readings of where calls begin or end",
    ),
    "name-undeclared": (ERROR, "the request declared tools and the call's name is not one of them"),
    "tool-call-in-content": (
        WARNING,
        "content holds what looks like a tool call, none was streamed",
    ),
    "role-repeated": (INFO, "role is sent on more than the first delta"),
    "delta-after-finish": (WARNING, "deltas arrive after that choice's finish_reason"),
    "finish-repeated": (WARNING, "more than one frame carries a finish_reason for the same choice"),
    "finish-reason-mismatch": (WARNING, "calls were assembled but finish_reason is not tool_calls"),
    "finish-reason-missing": (WARNING, "the stream ended with no finish_reason"),
    "done-missing": (INFO, "the stream ended without data: [DONE]"),
    "stream-truncated": (ERROR, "the body ended inside an event, or the connection failed"),
    "chunk-invalid-json": (ERROR, "a data payload is not JSON"),
    "chunk-schema-violation": (WARNING, "a payload is not a valid chat.completion.chunk"),
    # Beyond the contract's table (new kinds may be added):
    "provider-error": (ERROR, "the provider sent an error object in the stream"),
    "invalid-utf8": (WARNING, "an event's bytes are not valid UTF-8"),
    # The framing's (every dialect's): the contract's "Framings" section.
    "frame-invalid": (
        ERROR,
        "the framing cannot read a frame: a bad CRC, an impossible length, an element that is not JSON",
    ),
    # Dialects (the contract's second table): any dialect, then several.
    "dialect-unknown": (INFO, "no dialect fits the stream; it is read as Chat Completions"),
    "stop-reason-mismatch": (
        WARNING,
        "tool calls were assembled but the stop reason does not say so",
    ),
    # Anthropic Messages and Bedrock's Converse stream (blocks keyed by their index in one
    # message, each closed by its own stop event, the message by its own):
    "block-stop-missing": (ERROR, "the stream ended with a tool block open"),
    "block-index-reused": (
        ERROR,
        "a block starts at an index an earlier block of the same message used",
    ),
    "message-stop-missing": (
        WARNING,
        "the stream ended without its message stop event (message_stop, messageStop)",
    ),
    # The OpenAI Responses API and Chat Completions:
    "parallel-wrapper": (
        WARNING,
        "one call named parallel / multi_tool_use.parallel wraps tool_uses[]",
    ),
    # The OpenAI Responses API and the Realtime API (their calls are output items, keyed by
    # item_id, with deltas and whole values stated again at .done and the response's end):
    "args-done-mismatch": (ERROR, ".done or output_item.done differs from the accumulated deltas"),
    "delta-unknown-item": (ERROR, "a delta names an item_id / output_index no added item has"),
    "final-output-mismatch": (
        WARNING,
        "the final response's output leaves out a call the stream carried",
    ),
    # Beyond the contract (the event dialects):
    "event-schema-violation": (
        WARNING,
        "an event does not fit its dialect's types (a wrong type, a missing field)",
    ),
    "event-unknown": (INFO, "an event or delta of a type the dialect does not define"),
}
Kinds = Mapping[str, tuple[str, str]]


@dataclass(slots=True)
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


class AnomalyLog:
    """One entry per (kind, choice, index): the first sighting, with a count of recurrences."""

    __slots__ = (
        "_by_key",
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
        else:
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
        found = self._by_key.get((kind, choice, _hashable(index)))
        if found is None:
            return False
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
        """Take back an entry a later, better reading shows was wrong."""
        found = self._by_key.pop((kind, choice, _hashable(index)), None)
        if found is not None:
            kinds = self.at(found.frame)
            if kind in kinds:  # written in this log's own layer: the frozen ones are shared
                self._frames[found.frame] = [k for k in kinds if k != kind]

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

    def copy(self) -> AnomalyLog:
        new = AnomalyLog(self.marking, self.kinds)
        new._by_key = {
            k: Anomaly(
                a.frame,
                a.kind,
                a.choice,
                a.index,
                a.severity,
                a.message,
                a.count,
                list(a.also) if a.also else None,
                a.cut_by_client,
            )
            for k, a in self._by_key.items()
        }
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
    for a in log.entries():
        if a.kind in stream_kinds or (
            a.kind in call_kinds and (a.choice, _hashable(a.index)) in open_calls
        ):
            a.cut_by_client = True
            if a.severity == ERROR:
                a.severity = WARNING
            if a.kind != "stream-truncated":  # that one says it already
                a.message += "; cut by the client, which closed the stream before its end"


def _hashable(value: object) -> object:
    return value if isinstance(value, (int, str, type(None))) else quote(value)
