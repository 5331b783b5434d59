"""The Bedrock Converse engine: one pass over a stream's events, every strategy side by side.

Every frame goes through robust's rules (a Converse stream is short: an event a block
delta), then to the client folds as robust read it, and to the strands emulation as the
frame came (it parses the payload as botocore does).
"""

from __future__ import annotations

from typing import Any

from ...core.calls import Call
from ...core.engine import ChoiceSummary
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame
from ...text import cut, plural, quote
from ..typed import EventEngine, declared_tools
from . import STRATEGY_NAMES
from .kinds import CUT_CALL, CUT_STREAM, KINDS
from .robust import Robust, keyed_event, quick_delta, read_event
from .sdk_model import StrandsEmulation
from .strategies import LastStart, StartOnly, StopOnEndTurn


def plain_fragment(p: object) -> tuple[int, str] | None:
    """(block index, fragment) for a toolUse input delta; None for any other payload."""
    if type(p) is not dict:
        return None
    delta = p.get("delta")
    tool = delta.get("toolUse") if type(delta) is dict and len(delta) == 1 else None
    index = p.get("contentBlockIndex")
    text = tool.get("input") if type(tool) is dict else None
    return (index, text) if type(index) is int and index >= 0 and type(text) is str else None


def declared(tools: object) -> frozenset[str] | None:
    """Names of the tools a request declared (`toolConfig.tools[].toolSpec.name`, the
    list handed here as the request's tools); None when it declared none."""
    if not isinstance(tools, list):
        return None
    specs = [t.get("toolSpec") for t in tools if isinstance(t, dict)]
    return declared_tools([s for s in specs if isinstance(s, dict)])


class BedrockEngine(EventEngine):
    """Feed frames in arrival order; `finish` once."""

    dialect = "bedrock-converse"
    own_kinds, own_cut_stream, own_cut_call = KINDS, CUT_STREAM, CUT_CALL
    strategy_names = STRATEGY_NAMES
    sdk_name = "strands"
    by_value = True  # strands keeps the input parsed: compared by value
    numbers = ("contentBlockIndex",)

    reader = Robust
    robust: Robust
    folds = (LastStart, StartOnly, StopOnEndTurn)
    declares = staticmethod(declared)
    no_id = (
        "send the toolUse back with the toolUseId it streamed and answer it with a "
        "toolResult of the same toolUseId, never an invented one"
    )

    def emulation(self, tools: list[Any] | None) -> StrandsEmulation:
        return StrandsEmulation()

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust)."""
        self.frames = n = frame.number
        robust = self.robust
        quick = quick_delta(frame) if not self.collect_events else None
        if quick is not None:
            # a text or input delta of a block under way: robust and the folds take it in a
            # few steps where no rule has anything to say (else every rule reads the frame)
            index, member, text, delta = quick
            if not self._reads or robust.quick(n, index, member, text):
                for s in self.others:
                    if member == "text":
                        s.text(n, index, text)
                    else:
                        s.fragment(n, index, text)
                sdk = self.sdk
                if isinstance(sdk, StrandsEmulation):
                    sdk.plain(n, delta)  # (what botocore yields for it is the delta itself)
                return None
        frame = self.exact(frame)
        robust.events = [] if self.collect_events else None
        event = robust.feed(frame) if self._reads else None
        if self.others and type(frame.payload) is dict and frame.invalid is None:
            if event is None:
                event = read_event(frame, frame.payload)
            for s in self.others:
                s.event(frame.number, event)
        self._sdk_feed(frame)
        return robust.events

    def rounded_in(self, payload: dict[Any, Any]) -> bool:
        # the event's body, or what one key names (`{"contentBlockDelta": {...}}`, as boto3
        # yields it)
        if "contentBlockIndex" not in payload and (keyed := keyed_event(payload)) is not None:
            payload = keyed[1]
        return super().rounded_in(payload)

    # -- the state at this frame, for the faces ------------------------------------------

    def content_now(self) -> str:
        return "".join(self.robust.content)

    # -- the end of the stream ------------------------------------------------------------

    def _settled(self) -> list[tuple[Call, bool]]:
        return [(call, False) for call in self.robust.results()]

    def who(self, call: Call) -> str:
        return f"toolUse block {call.index}"

    def declared_for(self, call: Call) -> frozenset[str] | None:
        # a server tool is Bedrock's own, declared by it, not in toolConfig
        return self.declared if call.type != "server_tool_use" else None

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        robust = self.robust
        if not (robust.started or robust.blocks or robust.done_frame):
            return None, "", "", []
        # (a stopReason the stream sent as another JSON value than a string is shown as it
        # came, though ChoiceSummary declares a string)
        reason: Any = robust.stop_reason
        content, reasoning = "".join(robust.content), "".join(robust.reasoning)
        return reason, content, reasoning, [ChoiceSummary(0, reason, content, reasoning, "")]

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        robust, log = self.robust, self.log
        reason = robust.stop_reason
        for block in robust.calls:
            if block.open:
                log.add(
                    "block-stop-missing",
                    last,
                    f"the stream ended with toolUse block {block.index} "
                    f"({cut(quote(block.name), 30)}) open"
                    + (f", stopReason {quote(reason)}" if reason is not None else "")
                    + ": its input may be cut short; strands never finishes it (it builds a "
                    "toolUse only at contentBlockStop)",
                    0,
                    block.index,
                )
            elif not block.nonempty:
                log.add(
                    "tool-input-empty",
                    block.last,
                    f"toolUse block {block.index} ({cut(quote(block.name), 30)}) stopped with no "
                    "input text: robust reads {} (a tool without arguments), as strands does; "
                    'clients that JSON-parse "" fail',
                    0,
                    block.index,
                )
        client = [b for b in robust.calls if not b.server]
        if client and reason != "tool_use" and (robust.done_frame or reason is not None):
            log.add(
                "stop-reason-mismatch",
                robust.done_frame or last,
                f"{plural(len(client), 'toolUse call')} assembled but stopReason is "
                + (quote(reason) if reason is not None else "missing")
                + '; agent loops that run calls only on "tool_use" end the turn (strands '
                "overrides end_turn)",
                0,
            )
        if not client and reason == "tool_use":
            log.add(
                "tool-use-without-calls",
                robust.done_frame,
                'stopReason is "tool_use" but no toolUse block the client must answer was '
                "streamed: loops that trust it answer nothing and send an empty turn",
                0,
            )
        if not robust.calls:
            self._text_like_a_call(
                last,
                robust.content,
                "the text looks like a tool call ({text}) but no toolUse block was streamed",
            )
        if expect_done and not robust.done_frame and not robust.error_payload:
            log.add(
                "message-stop-missing",
                last,
                "the stream ended without messageStop (no stopReason)"
                + (": no event came" if not last else "")
                + "; clients that wait for it hang or drop the message",
            )
