"""The OpenAI Realtime engine: one pass over a turn's server events, every strategy side by
side.

Most frames of a call add one argument delta to the item under way; robust takes such a
frame in a few steps when no rule needs to look at it (`Robust.fragment`), and the
clients append it. Any other frame goes through every rule.
"""

from __future__ import annotations

from typing import Any, cast

from ...core.calls import Call
from ...core.engine import ChoiceSummary
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame
from ...text import cut, quote
from ..typed import EventEngine
from . import STRATEGY_NAMES
from .kinds import CUT_CALL, CUT_STREAM, KINDS
from .robust import ARGS_DONE, DELTA, ITEM_DONE, Robust
from .sdk_model import RealtimeSdkEmulation
from .strategies import EveryDone, ItemIdOnly, ResponseDoneOnly


def plain_fragment(p: object) -> tuple[int, str] | None:
    """(output index, fragment) for a function call's argument delta; None for any other."""
    if type(p) is not dict or p.get("type") != DELTA:
        return None
    index, text = p.get("output_index"), p.get("delta")
    return (index, text) if type(index) is int and index >= 0 and type(text) is str else None


class RealtimeEngine(EventEngine):
    """Feed frames in arrival order; `finish` once."""

    dialect = "openai-realtime"
    own_kinds, own_cut_stream, own_cut_call = KINDS, CUT_STREAM, CUT_CALL
    strategy_names = STRATEGY_NAMES
    sdk_name = "openai-sdk"
    numbers = ("output_index", "content_index")

    reader = Robust
    robust: Robust
    folds = (EveryDone, ItemIdOnly, ResponseDoneOnly)
    no_id = (
        "the function_call_output must echo a call_id: this call has none, so no output "
        "can answer it"
    )

    def emulation(self, tools: list[Any] | None) -> RealtimeSdkEmulation:
        return RealtimeSdkEmulation()

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
            and frame.invalid is None
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
        p = frame.payload
        robust.events = [] if self.collect_events else None
        if self._reads:
            robust.feed(frame)
        if self.others and type(p) is dict and frame.invalid is None:
            kind = p.get("type")
            for s in self.others:
                s.event(n, kind, p)
        self._sdk_feed(frame)
        return robust.events

    @property
    def done_seen(self) -> bool:
        """Its response ended: a response.done came and no response is left under way."""
        return bool(self.robust.done_frame) and not self.robust.unfinished

    # -- the state at this frame, for the faces ------------------------------------------

    def content_now(self) -> str:
        return "".join(self.robust.content)

    # -- the end of the stream ------------------------------------------------------------

    def _settled(self) -> list[tuple[Call, bool]]:
        return [(call, False) for call in self.robust.results()]

    def response_id(self) -> str | None:
        rid = self.robust.response_id
        return rid if isinstance(rid, str) and rid else None

    def who(self, call: Call) -> str:
        of = f" of response {call.choice + 1}" if self.robust.responses > 1 else ""
        return f"the call at output {call.index}{of}"

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        robust = self.robust
        status = robust.status if isinstance(robust.status, str) else None
        content = "".join(robust.content)
        if not (robust.done_frame or content or robust.calls):
            return None, "", "", []
        return status, content, "", [ChoiceSummary(0, status, content, "", "")]

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        robust, log = self.robust, self.log
        for item in robust.calls:
            if item.dones:
                continue
            said = "only response.done's output states it" if item.stated is not None else ""
            log.add(
                "call-never-done",
                last,
                f"{self.who(item.to_call())} ({cut(quote(item.name), 30)}) got no {ARGS_DONE} "
                f"and no {ITEM_DONE}{': ' + said if said else ''}: clients that run a call "
                "at its done event never run it",
                item.choice,
                item.index,
            )
        for response, first in robust.unfinished.items():
            which = f"response {response + 1}" if robust.responses > 1 else "the response"
            log.add(
                "response-done-missing",
                last,
                f"{which} (begun at frame {first}) never got its response.done: clients that "
                "wait for it (to run calls, or to send the next response.create) wait forever",
                response,
            )
        if not robust.calls:
            self._text_like_a_call(
                last,
                robust.content,
                "the text looks like a tool call ({text}) but no function_call item was streamed",
            )
