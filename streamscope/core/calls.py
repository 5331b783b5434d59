"""What a strategy assembles: calls (and the slots they are built in), or the exception
that stopped it."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from . import jsonio
from .frames import Sentinel
from .record import record
from .shared import ChunkedList


def signature_bytes(value: object) -> object:
    """A thoughtSignature as the API reads it: the bytes its base64 (or base64url, padded
    or not) spells, so two spellings of the same bytes are the same signature; any value
    that spells none, as itself."""
    if not isinstance(value, str):
        return value
    text = value.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except ValueError:
        return value


def arguments_text(arguments: object) -> str:
    """A call's arguments as the contract gives them, always a string: a value a provider
    sent that is no string (an object, from llama.cpp or MiniMax: `args-not-string`) as
    its compact JSON text, keys in the order sent, as a Gemini `args` object is given."""
    return arguments if isinstance(arguments, str) else jsonio.dumps(arguments).decode()


@record(slots=True)
class Call:
    """One assembled tool call, as one strategy holds it at some frame.

    Values are kept exactly as the strategy would hold them: `id` is None when the
    strategy never set it, "" when it set the empty string; `arguments` is normally
    a str but stays whatever JSON value the provider sent when that was not a string.
    """

    choice: int
    index: object
    id: object = None
    type: object = None
    name: object = None
    arguments: object = ""
    fragments: int = 0
    # the frames that built it, numbered as anomalies number them (see Slot.built)
    first_frame: int = 0
    last_frame: int = 0
    # the output item's own id where a dialect has two (Responses: `fc_...`, while `id`
    # is the `call_id` a tool output echoes); None where it has one
    item_id: object = None
    # the thoughtSignature a Gemini call came with, which must go back with it (None: none)
    signature: object = None

    def key(self) -> tuple[Any, ...]:
        """What `differs` compares between strategies: the call as it goes back to the
        API, a Gemini call's thoughtSignature with it (a client that drops it builds a
        call the API refuses; None in every other dialect)."""
        return (self.id, self.name, self.type, self.arguments, signature_bytes(self.signature))


@record(slots=True)
class StrategyError:
    """A strategy raised at `frame`; the contract prints it as {"error", "frame"}."""

    error: str
    frame: int
    # why the client raises there, in one line, where its own rules explain it (the
    # openai-sdk strategy on a strict tool: dialects/chat/strict.py); None: the error says
    why: str | None = None

    @classmethod
    def from_exception(
        cls, exc: BaseException, frame: int, why: str | None = None
    ) -> StrategyError:
        text = str(exc)
        return cls(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, frame, why)


class Unmodeled(Exception):
    """An SDK emulation met a shape it does not reproduce: the real class must answer
    (the analysis driver runs it), or the strategy says it was not modelled."""


NOTHING = Sentinel("nothing")


def freeze(parts: list[str], frozen: int) -> int:
    """Before a copy: join the fragments after the first `frozen` entries of `parts` into
    one chunk, in place, and return how many entries are now frozen. Frozen chunks are
    never changed again, so copies share them: an engine copied every K frames holds each
    piece of text once, not once per copy (the joined text is the same either way)."""
    if len(parts) - frozen > 1:
        parts[frozen:] = ["".join(parts[frozen:])]
    return len(parts)


S = TypeVar("S", bound="Slot")
_FIELDS: dict[type, tuple[str, ...]] = {}  # per Slot class, every slot it has


class Slot:
    """One call being assembled: scalar fields plus argument fragments."""

    __slots__ = (
        "choice",
        "index",
        "id",
        "type",
        "name",
        "parts",
        "value",
        "fragments",
        "first",
        "last",
        "frozen",
        "owner",
        "call",
    )

    def __init__(
        self, choice: int, index: object, frame: int, id: object = None, name: object = None
    ):
        self.choice = choice
        self.index = index
        self.id = id
        self.type: object = None
        self.name = name
        self.parts: list[str] = []
        self.value: object = NOTHING  # a non-string `arguments` value, kept as sent
        self.fragments = 0
        self.first = frame
        self.last = frame
        self.frozen = 0  # leading chunks of `parts` shared with copies (see freeze)
        # copy on write (the chat strategies, see `clone`): the generation of the strategy
        # that may change this slot in place; any other holder copies it first
        self.owner: object = None
        self.call: Call | None = None  # to_call's answer, kept once the slot cannot change

    def built(self, frame: int) -> None:
        """`frame` built this call. A call's frames run from the one that began it to the
        last that built it: a fragment, or an event that states or closes the call while it
        is open (a block's stop, an item's done), so an anomaly a stop raises lies inside
        them. `fragments` counts the fragments only; a frame that merely mentions a closed
        call (a final output compared with it) does not build it."""
        self.last = frame

    def text(self) -> str:
        parts = self.parts
        if len(parts) > 1:  # join once, keep the joined form
            self.parts = parts = ["".join(parts)]
            self.frozen = 0
        return parts[0] if parts else ""

    def arguments(self) -> object:
        return self.text() if self.value is NOTHING else self.value

    def add_arguments(self, args: object) -> None:
        """Concatenate string fragments; a non-string value is kept as sent."""
        if isinstance(args, str):
            if self.value is NOTHING:
                self.parts.append(args)
        elif args is not None and self.value is NOTHING and not self.parts:
            self.value = args

    def __deepcopy__(self: S, memo: dict[Any, Any]) -> S:
        # Engine snapshots copy slots: the fragments since the last copy are joined into one
        # chunk first, so a copy holds a few shared immutable chunks, not a list as long as
        # the stream, nor the whole text again.
        self.frozen = freeze(self.parts, self.frozen)
        cls = self.__class__
        new = cls.__new__(cls)
        memo[id(self)] = new
        names = _FIELDS.get(cls)
        if names is None:  # (the class's slots, looked up once: a replay copies thousands)
            names = _FIELDS[cls] = tuple(
                n for c in cls.__mro__ for n in c.__dict__.get("__slots__", ())
            )
        for name in names:
            value = getattr(self, name)
            if isinstance(value, list):  # the slot's own lists of fragments
                value = ["".join(value)] if name == "concat" and value else value[:]
            # else a value as parsed from a frame, never changed in place: shared (a deep
            # copy of JSON nested 1,000 levels would exceed Python's recursion limit)
            setattr(new, name, value)
        return new

    def clone(self: S, owner: object) -> S:
        """Copy on write: a copy of this shared slot for the strategy of generation
        `owner`, which changes the copy, not this (the holders it shares it with keep it)."""
        new = self.__deepcopy__({})
        new.owner = owner
        new.call = None
        # the copy grows, this never again: the copy takes the list with room for more
        # fragments, this the compact one (a replay keeps hundreds of such slots)
        self.parts, new.parts = new.parts, self.parts
        return new

    def shown(self, owner: object) -> Call:
        """`to_call`, made once for a slot its holder of generation `owner` no longer
        changes in place (it would clone it first): such a slot never changes again, so
        every frame shown after it reuses the same Call."""
        if self.owner is owner:
            return self.to_call()
        call = self.call
        if call is None:
            parts, frozen = self.parts, self.frozen
            call = self.call = self.to_call()
            # its fragments stay the chunks the copies of the slot share (to_call joined
            # them into a list of its own: the joined text is the Call's)
            self.parts, self.frozen = parts, frozen
        return call

    def to_call(self) -> Call:
        return Call(
            self.choice,
            self.index,
            self.id,
            self.type,
            self.name,
            self.arguments(),
            self.fragments,
            self.first,
            self.last,
        )


def show_dirty(
    slots: Sequence[Slot],
    shown: ChunkedList[Call | None],
    dirty: set[int],
    owner: object,
    changing: bool = True,
) -> set[int]:
    """Bring `shown` (per position, the Call last shown of `slots[position]`) up to date at
    the `dirty` positions (new, copied to change, or of generation `owner`); returns the
    positions still dirty: those of `owner`, which it changes in place. A frame's calls
    are then `shown` copied, not a Call looked up per slot (20,000 of them a step).
    `changing` False leaves the slots of `owner` alone: before a copy, their text is
    frozen in chunks the copies share, which making their Call would join."""
    live = set()
    # most of them (the end of a read): made on plain lists, taken back whole
    plain = shown.tolist() if len(dirty) > len(shown) >> 2 else None
    put: Callable[[int, Call | None], None] = shown.__setitem__
    if plain is not None:
        put = plain.__setitem__
        slots = list(slots)
    for at in dirty:
        slot = slots[at]
        if slot.owner is owner:
            live.add(at)
            if changing:
                put(at, slot.to_call())
        else:
            put(at, slot.shown(owner))
    if plain is not None:
        shown.assign(plain)
    return live
