"""The Gemini engine: one pass over a stream's chunks, every strategy side by side."""

from __future__ import annotations

import dataclasses
from typing import Any

from ...core.calls import Call, Unmodeled
from ...core.engine import ChoiceSummary
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame, rounded
from ...text import cut, plural, quote
from ..typed import EventEngine
from . import DROPS_SIGNATURE, STRATEGY_NAMES
from .kinds import CUT_CALL, CUT_STREAM, KINDS
from .robust import Robust
from .sdk_model import PartsEmulation
from .strategies import ChunkIndex, IndexZero, NeedsTerminal, first_calls


def dropped(calls: list[Call]) -> list[Call]:
    """`calls` as a client that keeps no thoughtSignature builds them."""
    return [c if c.signature is None else dataclasses.replace(c, signature=None) for c in calls]


# Finish reasons under which the calls made are whole (MALFORMED_FUNCTION_CALL has its kind).
_WHOLE = ("STOP", "MALFORMED_FUNCTION_CALL")


def plain_fragment(p: object) -> tuple[int, str] | None:
    """No (call index, fragment) pair says what a Gemini piece does (its JSON path does):
    the faces summarize every chunk whole; the engine finds its own pieces (`piece_of`)."""
    return None


# What a chunk may hold beside its one candidate, and that candidate beside its content,
# for the chunk to be only a string piece.
_TOP = frozenset(("candidates", "usageMetadata", "modelVersion", "responseId", "createTime"))
_CAND = frozenset(("content", "index", "safetyRatings"))


def piece_of(p: object) -> tuple[str, str, bool] | None:
    """(JSON path, text, willContinue) for the usual chunk of streamed arguments: one
    candidate (0) whose one part adds one string piece and says more follows; None for
    any other chunk."""
    # (JSON gives dicts string keys only: a list or a string met where a dict is expected
    # raises KeyError or TypeError, which is the answer None)
    if type(p) is not dict:
        return None
    try:
        cands = p["candidates"]
        if len(cands) != 1 or not _TOP.issuperset(p):
            return None
        cand = cands[0]
        parts = cand["content"]["parts"]
        index = cand.get("index", 0)
        if len(parts) != 1 or type(index) is not int or index or not _CAND.issuperset(cand):
            return None
        part = parts[0]
        fc = part["functionCall"]
        if len(part) != 1 or len(fc) != 2 or fc["willContinue"] is not True:
            return None
        args = fc["partialArgs"]
        if len(args) != 1:
            return None
        arg = args[0]
        path, text = arg["jsonPath"], arg["stringValue"]
        more = arg.get("willContinue", False)
    except (KeyError, TypeError, AttributeError):
        return None
    if type(path) is not str or type(text) is not str or type(more) is not bool:
        return None
    if type(cands) is not list or len(arg) != 2 + ("willContinue" in arg):
        return None
    return path, text, more


def declared(tools: object) -> frozenset[str] | None:
    """Names of the functions a request declared (`tools[].functionDeclarations[].name`);
    None when it declared none (built-in tools such as googleSearch have no name)."""
    if not isinstance(tools, list):
        return None
    names = set()
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        decls = tool.get("functionDeclarations", tool.get("function_declarations"))
        if isinstance(decls, list):
            names |= {
                d["name"] for d in decls if isinstance(d, dict) and isinstance(d.get("name"), str)
            }
    return frozenset(names) or None


class GeminiEngine(EventEngine):
    """Feed frames in arrival order; `finish` once."""

    dialect = "gemini"
    own_kinds, own_cut_stream, own_cut_call = KINDS, CUT_STREAM, CUT_CALL
    strategy_names = STRATEGY_NAMES
    sdk_name = "parts"

    reader = Robust
    robust: Robust
    folds = (IndexZero, ChunkIndex, NeedsTerminal)
    declares = staticmethod(declared)
    # functionCall.id is optional and the client's to fill (the API's docs): a client that
    # gives the call and its functionResponse the same id of its own keeps the link (the
    # Gemini CLI does: tool-call-id-filled)
    no_id = (
        "send the functionCall back without one and answer it by name in a functionResponse, "
        "or give the call and its functionResponse the same id of the client's own"
    )

    sdk: PartsEmulation | Unmodeled  # (fed a string piece directly, `piece`)

    def emulation(self, tools: list[Any] | None) -> PartsEmulation:
        return PartsEmulation()

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust)."""
        n = self.frames = frame.number
        robust = self.robust
        if not self.collect_events and not frame.bad_utf8 and frame.event is None:
            got = piece_of(frame.payload)
            # one string piece of the open call, where no rule has anything to say: robust
            # takes it in a few steps (else the whole chunk goes through every rule)
            if got is not None and (not self._reads or robust.piece(n, *got)):
                for s in self.others:
                    s.piece(n, *got)
                sdk = self.sdk
                if not isinstance(sdk, Unmodeled):
                    sdk.piece(n)
                return None
        frame = self.exact(frame)
        robust.events = [] if self.collect_events else None
        if self._reads:
            robust.feed(frame)
        if self.others:
            fcs = first_calls(frame.payload)
            if fcs:
                for s in self.others:
                    s.chunk(frame.number, fcs)
        self._sdk_feed(frame)
        return robust.events

    def rounded_in(self, payload: dict[Any, Any]) -> bool:
        # each candidate's index (a chunk's other numbers are counts no rule reads)
        cands = payload.get("candidates")
        return type(cands) is list and any(
            type(c) is dict and rounded(c.get("index")) for c in cands
        )

    def derived(self, robust: list[Call]) -> dict[str, Any]:
        return {DROPS_SIGNATURE: dropped(robust)}

    # -- the state at this frame, for the faces ------------------------------------------

    def content_now(self) -> str:
        cands = self.robust.sorted()
        return "".join(cands[0].content) if cands else ""

    # -- the end of the stream ------------------------------------------------------------

    def _settled(self) -> list[tuple[Call, bool]]:
        self.robust.end(self.frames)
        return [(call, False) for call in self.robust.results()]

    def who(self, call: Call) -> str:
        where = f" of candidate {call.choice}" if call.choice else ""
        return f"call {call.index}{where}"

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        out = []
        for cand in self.robust.sorted():
            finish = cand.finish if isinstance(cand.finish, str) else None
            out.append(
                ChoiceSummary(
                    cand.number, finish, "".join(cand.content), "".join(cand.reasoning), ""
                )
            )
        if not out:
            return None, "", "", []
        first = out[0]
        return first.finish_reason, first.content, first.reasoning_content, out

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        log, robust = self.log, self.robust
        if not robust.candidates and last and expect_done and not robust.error_payload:
            log.add(
                "candidate-finish-missing",
                last,
                "the stream ended without a candidate: no answer and no finishReason came",
            )
        for cand in robust.sorted():
            calls, c = cand.calls, cand.number
            finish = cand.finish
            if calls and finish == "STOP":
                log.add(
                    "finish-stop-with-calls",
                    cand.finish_frame,
                    f"candidate {c} made {plural(len(calls), 'call')} and ends with finishReason STOP: "
                    "Gemini has no finish reason for tool calls; clients that map STOP to a plain "
                    "stop and run calls only on a tool-call finish run none",
                    c,
                )
            elif calls and finish is not None and finish not in _WHOLE:
                log.add(
                    "stop-reason-mismatch",
                    cand.finish_frame,
                    f"candidate {c} made {plural(len(calls), 'call')} but ends with finishReason "
                    f"{cut(quote(finish), 30)}: their arguments may be cut short",
                    c,
                )
            if finish is None and expect_done and not robust.error_payload:
                log.add(
                    "candidate-finish-missing",
                    last,
                    f"the stream ended with no finishReason for candidate {c}: it may have been "
                    "cut, and clients that wait for a finish reason never act on its calls",
                    c,
                )
            if not calls:
                self._text_like_a_call(
                    last,
                    cand.content,
                    "the text looks like a tool call ({text}) but no functionCall part was streamed",
                    c,
                )
