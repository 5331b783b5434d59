"""streamscope's own reading of a Gemini `streamGenerateContent` stream (`robust`), and the
anomaly rules beside it.

Each event is a whole `GenerateContentResponse`: `candidates[]`, each with
`content.parts[]` and, at its end, a `finishReason`. A call is a `functionCall` part;
calls are keyed by their order in their candidate across the stream (a call's `index`
is that order). A part carries the whole call (`name`, `args`), or, with streamed
arguments (Vertex's `streamFunctionCallArguments`), opens one (`name`,
`willContinue: true`); the parts after it fill it (`partialArgs`: a JSON path and a
typed value, strings in pieces) and an empty `functionCall {}` closes it.

What robust holds a call to:
- `id` is `functionCall.id` as sent, `""` when none ever came (AI Studio sends none);
  never one of its own.
- `arguments` is the `args` object as compact JSON text, keys in the order sent; a
  streamed call's is the object its partialArgs build (args.py). A part with no `args`
  is a call with no arguments: the wire's protobuf JSON leaves an empty object out, so
  robust reads `{}` and says so (`args-absent`).
- A `thoughtSignature` on a call's part belongs to that call; it must go back with it.
"""

from __future__ import annotations

import copy
from typing import Any

from ...core import events as ev
from ...core.anomalies import AnomalyLog
from ...core.calls import Call, Slot
from ...core.events import FieldEvent
from ...core.frames import Frame
from ...text import cut, json_type, plural, quote
from ..typed import compact, event_object
from .args import ArgTree, steps, value_of

WORDS = ("call", "candidate")
# The top-level fields of a GenerateContentResponse besides its candidates.
_KNOWN = frozenset(
    ("usageMetadata", "promptFeedback", "error", "modelVersion", "responseId", "createTime")
)  # a call's key and its container, in FieldEvent's words
_MISSING = object()


class GeminiCall(Slot):
    """One call of a candidate: whole, or streamed (its ArgTree)."""

    __slots__ = ("tree", "whole", "signature")
    index: int  # its place in its candidate's calls

    def __init__(self, choice: int, index: int, frame: int, id: object, name: object) -> None:
        super().__init__(choice, index, frame, id, name)
        self.type = "functionCall"  # the part it came in (the wire has no type field)
        self.tree: ArgTree | None = None  # streamed arguments
        self.whole: object = _MISSING  # the args text of a whole call (or a non-string value)
        self.signature: object = None  # thoughtSignature, as sent

    def arguments(self) -> object:
        if self.tree is not None:
            return self.tree.text()
        return "{}" if self.whole is _MISSING else self.whole

    def to_call(self) -> Call:
        call = super().to_call()
        call.signature = self.signature
        return call

    def __deepcopy__(self, memo: dict[Any, Any]) -> GeminiCall:
        new = super().__deepcopy__(memo)
        if self.tree is not None:
            new.tree = self.tree.copy()  # (the tree is changed in place)
        return new


class Candidate:
    """What one candidate has said so far."""

    __slots__ = ("number", "calls", "open", "finish", "finish_frame", "content", "reasoning")

    def __init__(self, number: int) -> None:
        self.number = number
        self.calls: list[GeminiCall] = []
        self.open: GeminiCall | None = None  # the streamed call under way
        self.finish: object = None
        self.finish_frame = 0
        self.content: list[str] = []
        self.reasoning: list[str] = []

    def copy(self) -> Candidate:
        new = Candidate(self.number)
        memo: dict[Any, Any] = {}
        new.calls = [copy.deepcopy(c, memo) for c in self.calls]
        new.open = memo.get(id(self.open)) if self.open is not None else None
        new.finish, new.finish_frame = self.finish, self.finish_frame
        new.content, new.reasoning = list(self.content), list(self.reasoning)
        return new


class Robust:
    """The robust reading plus every per-frame anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log
        self.candidates: dict[int, Candidate] = {}
        self.events: list[FieldEvent] | None = None  # set to a list to collect events
        self.done_frame = 0  # the frame where every candidate seen had finished
        self.error_payload: str | None = None
        self.blocked: object = None  # promptFeedback.blockReason

    def copy(self, log: AnomalyLog) -> Robust:
        new = Robust.__new__(Robust)
        new.__dict__.update(self.__dict__)
        new.log = log
        new.events = None
        new.candidates = {k: c.copy() for k, c in self.candidates.items()}
        return new

    @property
    def calls(self) -> list[GeminiCall]:
        return [c for cand in self.sorted() for c in cand.calls]

    def sorted(self) -> list[Candidate]:
        return [self.candidates[k] for k in sorted(self.candidates)]

    def results(self) -> list[Call]:
        return [c.to_call() for c in self.calls]

    # -- frames -------------------------------------------------------------------------

    def piece(self, n: int, path: str, text: str, more: bool) -> bool:
        """The next piece of the string the open call of the only candidate set last (the
        usual frame of streamed arguments, `engine.piece_of`), where no rule has anything
        to say: taken in a few steps. False when the frame needs `feed`."""
        cands = self.candidates
        cand = cands.get(0)
        if cand is None or len(cands) != 1 or cand.open is None:
            return False
        call = cand.open
        tree = call.tree
        if tree is None or not tree.extend(path, text, more):
            return False
        call.fragments += 1
        call.last = n
        return True

    def feed(self, frame: Frame) -> None:
        n = frame.number
        p = event_object(frame, self.log)
        if p is None:
            return
        error = p.get("error")
        if error is not None:
            self._error(n, error)
        feedback = p.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") is not None:
            self.blocked = feedback["blockReason"]
            self.error_payload = self.error_payload or f"prompt blocked: {self.blocked}"
            self.log.add(
                "provider-error",
                n,
                f"the prompt was blocked (promptFeedback.blockReason {cut(quote(self.blocked), 40)}): "
                "no candidate follows",
            )
        cands = p.get("candidates", _MISSING)
        if cands is _MISSING:
            if not _KNOWN.intersection(p):
                self._schema(
                    n,
                    "a chunk with no candidates, usageMetadata, promptFeedback or error: "
                    "nothing of a GenerateContentResponse",
                )
            return
        if type(cands) is not list:
            self._schema(n, f"candidates is a JSON {json_type(cands)}, not an array")
            return
        for k, cand in enumerate(cands):
            if type(cand) is not dict:
                self._schema(n, f"candidate {k} is a JSON {json_type(cand)}, not an object")
                continue
            number = cand.get("index", k)
            if type(number) is not int or number < 0:
                self._schema(n, f"candidate {k} has index {cut(quote(number), 20)}: read as {k}")
                number = k
            self._candidate(n, number, cand)
        if self.candidates and all(c.finish is not None for c in self.candidates.values()):
            self.done_frame = self.done_frame or n

    def _error(self, n: int, error: object) -> None:
        if isinstance(error, dict):
            bits = [
                f"{key} {cut(quote(error[key]), 80)}"
                for key in ("code", "status", "message")
                if error.get(key) is not None
            ]
            words = ", ".join(bits) or cut(quote(error), 80)
        else:
            words = cut(quote(error), 80)
        self.error_payload = words
        self.log.add("provider-error", n, f"the stream carries an error: {words}")

    def _schema(
        self, n: int, message: str, choice: int | None = None, index: object = None
    ) -> None:
        self.log.add("event-schema-violation", n, message, choice, index)

    def _candidate(self, n: int, number: int, data: dict[Any, Any]) -> None:
        cand = self.candidates.get(number)
        if cand is None:
            cand = self.candidates[number] = Candidate(number)
        content = data.get("content")
        started = 0
        if content is not None:
            parts = content.get("parts") if isinstance(content, dict) else None
            if not isinstance(content, dict):
                self._schema(
                    n, f"candidate {number}'s content is a JSON {json_type(content)}", number
                )
            elif parts is not None and not isinstance(parts, list):
                self._schema(n, f"candidate {number}'s parts is a JSON {json_type(parts)}", number)
            elif parts:
                for k, part in enumerate(parts):
                    started += self._part(n, cand, k, part)
        if started > 1:
            self.log.add(
                "parallel-in-one-chunk",
                n,
                f"one chunk holds {started} functionCall parts of candidate {number}: clients that "
                "give every call of a chunk index 0 merge them into one",
                number,
            )
        finish = data.get("finishReason")
        if finish is not None:
            self._finish(n, cand, finish, data.get("finishMessage"))

    def _finish(self, n: int, cand: Candidate, finish: object, message: object) -> None:
        if cand.finish is None:
            cand.finish, cand.finish_frame = finish, n
        if self.events is not None:
            self.events.append(
                FieldEvent(n, ev.FINISH, cand.number, None, "finishReason", None, finish, -1, WORDS)
            )
        if finish == "MALFORMED_FUNCTION_CALL":
            said = f": {cut(quote(message), 80)}" if message is not None else ""
            self.log.add(
                "malformed-function-call",
                n,
                f"candidate {cand.number} ends with finishReason MALFORMED_FUNCTION_CALL{said}: the "
                "model tried a call the API could not parse, and no call was delivered",
                cand.number,
            )
        elif not isinstance(finish, str):
            self._schema(n, f"finishReason is a JSON {json_type(finish)}", cand.number)

    # -- parts --------------------------------------------------------------------------

    def _part(self, n: int, cand: Candidate, k: int, part: object) -> int:
        """Read one part; 1 when it starts a call."""
        if type(part) is not dict:
            self._schema(
                n, f"part {k} of candidate {cand.number} is a JSON {json_type(part)}", cand.number
            )
            return 0
        fc = part.get("functionCall", _MISSING)
        if fc is _MISSING:
            text = part.get("text")
            if isinstance(text, str):
                thought = part.get("thought") is True
                (cand.reasoning if thought else cand.content).append(text)
                if self.events is not None and text:
                    op = ev.REASONING if thought else ev.CONTENT
                    self.events.append(
                        FieldEvent(n, op, cand.number, None, "text", None, text, -1, WORDS)
                    )
            elif text is not None:
                self._schema(n, f"a part's text is a JSON {json_type(text)}", cand.number)
            return 0
        if type(fc) is not dict:
            self._schema(n, f"a functionCall is a JSON {json_type(fc)}, not an object", cand.number)
            return 0
        name, fid = fc.get("name"), fc.get("id")
        partial, more = fc.get("partialArgs"), fc.get("willContinue")
        args = fc.get("args", _MISSING)
        for field, value, ok in (
            ("name", name, isinstance(name, str)),
            ("id", fid, isinstance(fid, str)),
            ("partialArgs", partial, isinstance(partial, list)),
            ("willContinue", more, type(more) is bool),
        ):
            if value is not None and not ok:
                self._schema(
                    n,
                    f"a functionCall's {field} is a JSON {json_type(value)}: ignored",
                    cand.number,
                )
        name = name if isinstance(name, str) else None
        fid = fid if isinstance(fid, str) else None
        partial = partial if isinstance(partial, list) else None
        more = more is True
        signature = part.get("thoughtSignature")
        open_ = cand.open
        if open_ is not None:
            if name is None and args is _MISSING:  # a continuation or the closing part
                self._continue(n, cand, open_, fid, partial, more, signature)
                return 0
            if name is not None and name == open_.name and partial is not None and args is _MISSING:
                self._continue(n, cand, open_, fid, partial, more, signature)
                return 0
            self._unterminated(open_, n, "a new call began before its closing part")
            cand.open = None
        if name is None and args is _MISSING and partial is None and fid is None:
            what = "a continuation (willContinue)" if more else "an empty functionCall"
            self._schema(
                n,
                f"{what} with no streamed call open: nothing to continue or close"
                + (" (its thoughtSignature belongs to no call)" if signature is not None else ""),
                cand.number,
            )
            return 0
        call = GeminiCall(cand.number, len(cand.calls), n, fid or "", name or "")
        cand.calls.append(call)
        if self.events is not None:
            self._event(n, ev.NEW_CALL, call)
            for field, value in (("id", fid), ("name", name)):
                if value is not None:
                    self._event(n, ev.SET, call, field, value)
        if signature is not None:
            self._sign(n, call, signature)
        if partial is not None or more:
            call.tree = ArgTree()
            if name is None:
                self.log.add(
                    "partial-args-without-open",
                    n,
                    f"partialArgs arrive with no open named call (candidate {cand.number}): robust "
                    f"keeps them as call {call.index} with no name; clients add them to the last call",
                    cand.number,
                    call.index,
                )
            if args is not _MISSING:
                said = "partialArgs" if partial is not None else "willContinue"
                self._schema(
                    n,
                    f"a functionCall carries both args and {said}: args ignored",
                    cand.number,
                    call.index,
                )
            if partial:
                self._partial(n, call, partial)
            if more:
                cand.open = call
            return 1
        if args is _MISSING:
            self.log.add(
                "args-absent",
                n,
                f"call {call.index} ({cut(quote(name), 30)}) carries no args: a call with no "
                "arguments (the wire leaves an empty object out), read as {}; clients that wait "
                "for args or a closing part drop it",
                cand.number,
                call.index,
            )
        elif type(args) is dict:
            text = compact(args)
            if text is None:
                call.whole = args
                self._schema(
                    n,
                    f"call {call.index}'s args nest deeper than can be written back",
                    cand.number,
                    call.index,
                )
            else:
                call.whole = text
        else:
            call.whole = compact(args) or ""
            self._schema(
                n,
                f"call {call.index}'s args is a JSON {json_type(args)}, not an object: kept as sent",
                cand.number,
                call.index,
            )
        if args is not _MISSING:
            call.fragments += 1  # its arguments came whole: one piece (a Chat delta's count)
            if self.events is not None:
                self._event(n, ev.SET, call, "args", call.whole)
        return 1

    def _continue(
        self,
        n: int,
        cand: Candidate,
        call: GeminiCall,
        fid: str | None,
        partial: list[Any] | None,
        more: bool,
        signature: object,
    ) -> None:
        call.last = n
        if fid:
            if not call.id:
                call.id = fid
            elif fid != call.id:
                self.log.add(
                    "id-changed",
                    n,
                    f"a later part of call {call.index} carries id {quote(fid)}, the call has "
                    f"{quote(call.id)}: robust keeps the first",
                    cand.number,
                    call.index,
                )
        if signature is not None:
            self._sign(n, call, signature)
        if partial:
            self._partial(n, call, partial)
        if not more:
            cand.open = None
            if partial:  # the last piece says no more, and no closing part comes
                self._unterminated(call, n, "its last partialArgs part ends it instead")
            elif self.events is not None:
                self._event(n, ev.CLOSE, call)

    def _sign(self, n: int, call: GeminiCall, signature: object) -> None:
        if not isinstance(signature, str):
            self._schema(
                n, f"a thoughtSignature is a JSON {json_type(signature)}", call.choice, call.index
            )
        if call.signature is not None and signature != call.signature:
            self._schema(
                n,
                f"a later part of call {call.index} carries another thoughtSignature "
                f"({cut(quote(signature), 24)}): the first is kept, the one the call opened with",
                call.choice,
                call.index,
            )
        if call.signature is None:
            call.signature = signature
            self.log.add(
                "thought-signature",
                n,
                f"call {call.index} ({cut(quote(call.name), 30)}) carries a thoughtSignature "
                f"({plural(len(signature) if isinstance(signature, str) else 0, 'character')}): "
                "send it back verbatim with the functionCall part, or Gemini answers 400",
                call.choice,
                call.index,
            )
            if self.events is not None:
                self._event(n, ev.SET, call, "thoughtSignature", signature)

    def _partial(self, n: int, call: GeminiCall, partial: list[Any]) -> None:
        tree = call.tree
        assert tree is not None
        for arg in partial:
            if type(arg) is not dict:
                self._schema(
                    n, f"a partialArg is a JSON {json_type(arg)}: skipped", call.choice, call.index
                )
                continue
            path = arg.get("jsonPath")
            where = steps(path)
            if isinstance(where, str):
                self._schema(
                    n,
                    f"partialArg jsonPath {cut(quote(path), 40)}: {where}; skipped",
                    call.choice,
                    call.index,
                )
                continue
            got = value_of(arg)
            if isinstance(got, str):
                self._schema(
                    n, f"partialArg {cut(quote(path), 40)}: {got}; skipped", call.choice, call.index
                )
                continue
            value, text = got
            why = tree.put(where, value, text, arg.get("willContinue") is True)
            if why is not None:
                self._schema(
                    n, f"partialArg {cut(quote(path), 40)}: {why}", call.choice, call.index
                )
            if self.events is not None:
                op = ev.APPEND if text else ev.SET
                assert isinstance(path, str)  # (steps parsed it)
                self._event(n, op, call, path, value)
            call.fragments += 1

    def _event(
        self, n: int, op: str, call: GeminiCall, field: str = "", value: object = None
    ) -> None:
        """A field event of `call` (its `call`: its place in its candidate's calls)."""
        assert self.events is not None
        self.events.append(
            FieldEvent(n, op, call.choice, call.index, field, None, value, call.index, WORDS)
        )

    def _unterminated(self, call: GeminiCall, n: int, why: str) -> None:
        self.log.add(
            "partial-args-unterminated",
            n,
            f"streamed call {call.index} ({cut(quote(call.name), 30)}) never gets its closing part "
            f"({why}): robust keeps the arguments built so far; clients that emit a call only at "
            "its closing part never run it",
            call.choice,
            call.index,
        )

    def end(self, last: int) -> None:
        """The stream is over: a streamed call still open never got its closing part."""
        for cand in self.sorted():
            if cand.open is not None:
                self._unterminated(cand.open, cand.open.last, "the stream ended first")
                cand.open = None
