"""The clients people ship for Gemini, each a fold over the same frames.

The google-genai SDK assembles nothing across chunks: each chunk's
`function_calls` lists the `functionCall` parts of its first candidate, and its users
collect them (`parts`, sdk_model.py). The adapters that turn Gemini chunks into Chat
Completions deltas differ in the index they give each part (`index-0`, `chunk-index`);
the AI SDK's streamed-arguments support emits a streamed call only at its closing part
(`needs-terminal`). Every one reads the first candidate, as those clients do, and turns
a part's `args` into JSON text as they do (`json.dumps(args or {})`). Each keeps the
`thoughtSignature` its call's part came with, as the stream sent it (the first, where a
call is built of several parts), as those clients carry it back; `drops-signature`
(engine.py: robust's reading without them) stands for the clients that lose it.
"""

from __future__ import annotations

from typing import Any

from ...core.calls import Call, Slot
from .. import typed
from ..typed import compact
from .args import ArgTree, steps, value_of

FunctionPart = tuple[dict[Any, Any], object]  # a part's functionCall, its thoughtSignature


def first_calls(payload: object) -> list[FunctionPart]:
    """The functionCall objects of a chunk's first candidate, in order, each with the
    thoughtSignature its part carries (None: none); any shape that is not the API's
    reads as none."""
    if type(payload) is not dict:
        return []
    cands = payload.get("candidates")
    if type(cands) is not list or not cands or type(cands[0]) is not dict:
        return []
    content = cands[0].get("content")
    parts = content.get("parts") if type(content) is dict else None
    if type(parts) is not list:
        return []
    return [
        (p["functionCall"], p.get("thoughtSignature"))
        for p in parts
        if type(p) is dict and type(p.get("functionCall")) is dict
    ]


def args_text(fc: dict[Any, Any]) -> str:
    """`json.dumps(fc.args or {})`, compact: what an adapter hands on as arguments."""
    args = fc.get("args")
    return compact(args if isinstance(args, dict) and args else {}) or "{}"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


class SignedSlot(Slot):
    """A call's slot with the thoughtSignature of its first signed part."""

    __slots__ = ("signature",)

    def __init__(
        self, choice: int, index: object, frame: int, id: object = None, name: object = None
    ):
        super().__init__(choice, index, frame, id, name)
        self.signature: object = None

    def sign(self, signature: object) -> None:
        if self.signature is None:
            self.signature = signature

    def to_call(self) -> Call:
        call = super().to_call()
        call.signature = self.signature
        return call


class Fold(typed.Fold[SignedSlot]):
    """Base: Chat Completions deltas keyed by an index the adapter gives each part; a
    later part at the same index appends its arguments and, when non-empty, sets the
    id and name (the last one wins)."""

    def __init__(self) -> None:
        super().__init__()
        self.slots: list[SignedSlot] = []
        self.by_index: dict[int, SignedSlot] = {}

    def index(self, k: int) -> int:
        raise NotImplementedError

    def piece(self, n: int, path: str, text: str, more: bool) -> None:
        """`chunk` of a chunk whose one part only adds a string piece (`{}` to its slot)."""
        slot = self.by_index.get(self.index(0))
        if slot is None:
            self.chunk(n, [({}, None)])
            return
        slot.parts.append("{}")
        slot.fragments += 1
        slot.last = n

    def chunk(self, n: int, fcs: list[FunctionPart]) -> None:
        for k, (fc, signature) in enumerate(fcs):
            i = self.index(k)
            slot = self.by_index.get(i)
            if slot is None:
                slot = self.by_index[i] = SignedSlot(0, i, n, "", "")
                slot.type = "functionCall"
                self.slots.append(slot)
            slot.sign(signature)
            fid, name = _text(fc.get("id")), _text(fc.get("name"))
            if fid:
                slot.id = fid
            if name:
                slot.name = name
            slot.parts.append(args_text(fc))
            slot.fragments += 1
            slot.last = n


class IndexZero(Fold):
    """Gives every call of a chunk tool index 0, so calls merge into one: the last name
    wins and the arguments read `{...}{...}`.

    Stands for omnigent-ai/omnigent#28, Mingye-Lu/AgenticCrawler#113,
    smg-project/smg#1407 and NousResearch/hermes-agent#57939."""

    name = "index-0"

    def index(self, k: int) -> int:
        return 0


class ChunkIndex(Fold):
    """Numbers the calls of each chunk from 0, so a call in a later chunk lands on an
    earlier chunk's call: its name overwrites, its arguments are appended.

    Stands for intrafind/ihub-apps#1954 (issue #1722)."""

    name = "chunk-index"

    def index(self, k: int) -> int:
        return k


class TerminalSlot(SignedSlot):
    __slots__ = ("tree",)
    tree: ArgTree | None  # the streamed arguments (None: a whole call's, in `parts`)

    def arguments(self) -> object:
        return self.tree.text() if self.tree is not None else self.text()

    def __deepcopy__(self, memo: dict[Any, Any]) -> TerminalSlot:
        new = super().__deepcopy__(memo)
        if self.tree is not None:
            new.tree = self.tree.copy()
        return new


class NeedsTerminal(typed.Fold[TerminalSlot]):
    """Streamed arguments as the AI SDK read them before its fixes: a call opened with
    `willContinue` is emitted only when its empty closing part comes (a stream that never
    sends it loses the call), and a bare `{name}` part with no args is taken for the start
    of a streamed call, so the next streamed call replaces it. Whole calls are emitted as
    they come.

    Stands for vercel/ai#14358 (no terminal chunk) and the AI SDK's no-args call dropped
    beside streamed ones."""

    name = "needs-terminal"

    def __init__(self) -> None:
        super().__init__()
        self.slots: list[TerminalSlot] = []
        self.open: TerminalSlot | None = None
        self.bare: TerminalSlot | None = None  # a no-args call, until a streamed one opens

    def chunk(self, n: int, fcs: list[FunctionPart]) -> None:
        for fc, signature in fcs:
            name, partial = fc.get("name"), fc.get("partialArgs")
            more = fc.get("willContinue") is True
            if self.open is not None and not name:
                self.open.sign(signature)
                self._fill(self.open, partial)
                self.open.last = n
                if not more and not partial:  # only the empty closing part emits it
                    self.slots.append(self.open)
                    self.open = None
                continue
            if not name:
                continue
            slot = TerminalSlot(0, 0, n, _text(fc.get("id")), name)
            slot.type = "functionCall"
            slot.sign(signature)
            if more:
                slot.tree = ArgTree()
                self._fill(slot, partial)
                self.open, self.bare = slot, None
                continue
            slot.tree = None
            slot.parts.append(args_text(fc))
            slot.fragments += "args" in fc  # a whole call's arguments: one piece, as robust's
            self._settle()
            if "args" in fc or partial:
                self.slots.append(slot)
            else:
                self.bare = slot

    def piece(self, n: int, path: str, text: str, more: bool) -> None:
        """`chunk` of a chunk whose one part only adds a string piece to the open call."""
        slot = self.open
        if slot is None:
            return
        tree = slot.tree
        assert tree is not None
        if not tree.extend(path, text, more):
            self._fill(slot, [{"jsonPath": path, "stringValue": text, "willContinue": more}])
        else:
            slot.fragments += 1
        slot.last = n

    def _settle(self) -> None:
        if self.bare is not None:
            self.slots.append(self.bare)
            self.bare = None

    def _fill(self, slot: TerminalSlot, partial: object) -> None:
        if slot.tree is None or not isinstance(partial, list):
            return
        for arg in partial:
            if type(arg) is not dict:
                continue
            where, got = steps(arg.get("jsonPath")), value_of(arg)
            if isinstance(where, tuple) and not isinstance(got, str):
                slot.tree.put(where, got[0], got[1], arg.get("willContinue") is True)
                slot.fragments += 1

    def calls(self) -> list[Call]:
        out = []
        slots = self.slots if self.bare is None else [*self.slots, self.bare]
        for k, slot in enumerate(slots):
            call = slot.to_call()
            call.index = k
            out.append(call)
        return out
