"""The OpenAI Responses API engine: one pass over a stream's events, every strategy side
by side.

Most frames of a long stream add one argument delta to the call item under way; robust
takes such a frame in a few steps when no rule needs to look at it (`Robust.fragment`),
and the clients append it. Any other frame goes through every rule.
"""

from __future__ import annotations

from typing import Any, cast

from ...core.calls import Call
from ...core.engine import ChoiceSummary
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame
from ...text import cut, plural, quote
from ..typed import EventEngine, is_index
from . import STRATEGY_NAMES
from .kinds import CUT_CALL, CUT_STREAM, KINDS
from .robust import DELTAS, Robust, done_field
from .sdk_model import ResponsesSdkEmulation
from .strategies import CurrentItem, DeltasOnly, StrictDone

DELTA = "response.function_call_arguments.delta"


def plain_fragment(p: object) -> tuple[int, str] | None:
    """(output index, fragment) for a function call's argument delta; None for any other."""
    if type(p) is not dict or p.get("type") != DELTA:
        return None
    index, text = p.get("output_index"), p.get("delta")
    return (index, text) if type(index) is int and index >= 0 and type(text) is str else None


def declared(tools: object) -> frozenset[str] | None:
    """The tool names a request's `tools` declare, a `namespace` tool's own too (a call to
    one names the tool, with the namespace beside it); None when it declares none."""
    names: set[str] = set()

    def walk(tools: object) -> None:
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict):
                if isinstance(tool.get("name"), str):
                    names.add(tool["name"])
                if tool.get("type") == "namespace":
                    walk(tool.get("tools"))

    walk(tools)
    return frozenset(names) if isinstance(tools, list) and tools and names else None


class ResponsesEngine(EventEngine):
    """Feed frames in arrival order; `finish` once."""

    dialect = "openai-responses"
    own_kinds, own_cut_stream, own_cut_call = KINDS, CUT_STREAM, CUT_CALL
    strategy_names = STRATEGY_NAMES
    sdk_name = "openai-sdk"
    declares = staticmethod(declared)
    wrappers = True  # models invent multi_tool_use.parallel here (see parallel-wrapper)
    numbers = ("output_index", "content_index", "sequence_number")

    reader = Robust
    robust: Robust
    folds = (DeltasOnly, CurrentItem, StrictDone)

    def emulation(self, tools: list[Any] | None) -> ResponsesSdkEmulation:
        return ResponsesSdkEmulation(tools)

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust)."""
        self.frames = n = frame.number
        p = frame.payload
        if plain is NOT_READ:
            plain = plain_fragment(p)
        robust = self.robust
        if (
            plain is not None
            and type(p) is dict  # (as plain_fragment found it)
            and not self.collect_events
            and not frame.bad_utf8
            and frame.event in (DELTA, None)
        ):
            # one fragment of the item under way, where no rule has anything to say: robust
            # takes it in a few steps (else the whole frame goes through every rule)
            index, text = cast("tuple[int, str]", plain)
            if not self._reads or robust.fragment(n, p, index, text):
                item_id = p.get("item_id")
                for s in self.others:
                    s.fragment(n, index, item_id, text)
                self._sdk_feed(frame)
                return None
        frame = self.exact(frame)
        robust.events = [] if self.collect_events else None
        if self._reads:
            robust.feed(frame)
        if self.others:
            self._feed_clients(frame)
        self._sdk_feed(frame)
        return robust.events

    def _feed_clients(self, frame: Frame) -> None:
        """The frame as the client strategies read it (the data's type decides)."""
        p = frame.payload
        if type(p) is not dict:
            return
        kind, n = p.get("type"), frame.number
        index = p.get("output_index")
        if kind == "response.output_item.added":
            item = p.get("item")
            if is_index(index) and isinstance(item, dict):
                for s in self.others:
                    s.added(n, index, item)
        elif kind in DELTAS:
            text = p.get("delta")
            if isinstance(text, str):
                for s in self.others:
                    s.fragment(n, index, p.get("item_id"), text)
        elif (field := done_field(kind)) is not None:
            value = p.get(field)
            for s in self.others:
                s.done(n, index, p.get("item_id"), value)

    # -- the state at this frame, for the faces ------------------------------------------

    def content_now(self) -> str:
        return "".join(self.robust.content)

    # -- the end of the stream ------------------------------------------------------------

    def _settled(self) -> list[tuple[Call, bool]]:
        robust = self.robust
        for item in robust.calls:
            if item.stated and (item.whole or not item.streamed()):
                self.log.add(
                    "args-done-only",
                    item.stated_at,
                    f"the {'input' if item.freeform else 'arguments'} of output {item.index} "
                    f"({cut(quote(item.name), 30)}) arrive only whole, with no delta: clients "
                    'that build calls from the deltas get ""',
                    0,
                    item.index,
                )
        return [(call, call.type == "custom_tool_call") for call in robust.results()]

    def response_id(self) -> str | None:
        rid = self.robust.response_id
        return rid if isinstance(rid, str) and rid else None

    def who(self, call: Call) -> str:
        return f"the call at output {call.index}"

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        robust = self.robust
        status = robust.status if isinstance(robust.status, str) else None
        content, reasoning = "".join(robust.content), "".join(robust.reasoning)
        if not (robust.done_frame or content or reasoning or robust.calls):
            return None, "", "", []
        return status, content, reasoning, [ChoiceSummary(0, status, content, reasoning, "")]

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        robust, log = self.robust, self.log
        calls = robust.calls
        if calls and robust.status is not None and robust.status != "completed":
            reason = f" ({quote(robust.reason)})" if robust.reason is not None else ""
            log.add(
                "stop-reason-mismatch",
                robust.status_frame,
                f"{plural(len(calls), 'call')} assembled but the response's status is "
                f"{cut(quote(robust.status), 30)}{reason}: their arguments may be cut short, and "
                "agent loops that run calls only from a completed response skip them",
            )
        if not calls:
            self._text_like_a_call(
                last,
                robust.content,
                "the text looks like a tool call ({text}) but no call item was streamed",
            )
        for item in calls:
            if item.open and robust.done_frame:
                log.add(
                    "event-schema-violation",
                    robust.done_frame,
                    f"the response ended with output {item.index} never done "
                    "(no response.output_item.done)",
                    0,
                    item.index,
                )
        if expect_done and not robust.done_frame and not robust.error_payload:
            log.add(
                "response-end-missing",
                last,
                "the stream ended without response.completed, .incomplete or .failed: clients "
                "that wait for the final response (responses.stream()'s get_final_response) "
                "get none",
            )
