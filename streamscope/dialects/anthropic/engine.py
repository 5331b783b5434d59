"""The Anthropic Messages engine: one pass over a stream's events, every strategy side by side.

Most frames of a long stream add one `input_json_delta` fragment to the tool block under
way; robust takes such a frame in a few steps when no rule needs to look at it
(`Robust.fragment`), and the clients append it. Any other frame goes through every rule.
"""

from __future__ import annotations

from typing import Any, cast

from ...core.calls import Call
from ...core.engine import ChoiceSummary
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame, named_by_type
from ...text import cut, plural, quote
from ..typed import EventEngine, is_index
from . import STRATEGY_NAMES
from .kinds import CUT_CALL, CUT_STREAM, KINDS
from .robust import Robust
from .sdk_model import AnthropicSdkEmulation
from .strategies import LastBlock, StartConcat, Truthy
from .wire import bedrock_error, sdk_exchange


def plain_fragment(p: object) -> tuple[int, str] | None:
    """(block index, fragment) for an `input_json_delta` event; None for any other."""
    if type(p) is not dict or p.get("type") != "content_block_delta":
        return None
    delta = p.get("delta")
    if type(delta) is not dict or delta.get("type") != "input_json_delta":
        return None
    index, text = p.get("index"), delta.get("partial_json")
    return (index, text) if type(index) is int and index >= 0 and type(text) is str else None


class AnthropicEngine(EventEngine):
    """Feed frames in arrival order; `finish` once."""

    dialect = "anthropic-messages"
    own_kinds, own_cut_stream, own_cut_call = KINDS, CUT_STREAM, CUT_CALL
    strategy_names = STRATEGY_NAMES
    sdk_name = "anthropic-sdk"
    by_value = True  # the SDK keeps a tool's input parsed: compared by value
    numbers = ("index",)

    reader = Robust
    robust: Robust
    folds = (StartConcat, LastBlock, Truthy)

    def emulation(self, tools: list[Any] | None) -> AnthropicSdkEmulation:
        # the exchange as the SDK's client saw it (wire.url_facts, wire.answer_facts)
        return AnthropicSdkEmulation(sdk_exchange(self.response_format))

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust)."""
        if frame.headers:  # (a binary framing's: Bedrock's exceptions are error events)
            frame = bedrock_error(frame)
        self.frames = n = frame.number
        if plain is NOT_READ:
            plain = plain_fragment(frame.payload)
        robust = self.robust
        name = frame.event
        # (a chunk log's events have no names: its fragments are as quick to take)
        quick = (name == "content_block_delta" or (name is None and self.chunk_log)) and (
            not self.collect_events
        )
        if quick and not frame.bad_utf8:
            # one fragment of a block under way, where no rule has anything to say: robust
            # takes it in a few steps (else the whole frame goes through every rule)
            if plain is not None:
                index, text = cast("tuple[int, str]", plain)
                if not self._reads or robust.fragment(n, index, text):
                    for s in self.others:
                        s.fragment(n, index, text)
                    self._taken(frame)
                    return None
            elif self._text(frame.payload):  # the clients read no text
                self._taken(frame)
                return None
        frame = self.exact(frame)
        robust.events = [] if self.collect_events else None
        if self._reads:
            robust.feed(frame)
        if self.others:
            self._feed_clients(frame)
        self._sdk_feed(frame)
        return robust.events

    def _taken(self, frame: Frame) -> None:
        """The end of a frame robust took in a few steps: a chunk log's (no name) counted
        as every rule counts it, and the SDK fed."""
        if frame.event is None and self._reads:
            self.robust.unnamed_at(frame.number)
        self._sdk_feed(frame)

    def _text(self, p: object) -> bool:
        """A text_delta robust takes in a few steps (or, without robust, may skip)."""
        if type(p) is not dict:
            return False
        delta = p.get("delta")
        if type(delta) is not dict or delta.get("type") != "text_delta":
            return False
        index, text = p.get("index"), delta.get("text")
        if type(index) is not int or type(text) is not str:
            return False
        return not self._reads or self.robust.text(index, text)

    def _feed_clients(self, frame: Frame) -> None:
        """The frame as the client strategies read it (the data's type decides)."""
        p = frame.payload
        if type(p) is not dict:
            return
        kind, n = p.get("type"), frame.number
        if kind == "message_start":
            for s in self.others:
                s.message_start(n)
            return
        index = p.get("index")
        if not is_index(index):
            return
        if kind == "content_block_start":
            block = p.get("content_block")
            block = block if isinstance(block, dict) else {}
            for s in self.others:
                s.start(n, index, block)
        elif kind == "content_block_delta":
            delta = p.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
                text = delta.get("partial_json")
                if isinstance(text, str):
                    for s in self.others:
                        s.fragment(n, index, text)
        elif kind == "content_block_stop":
            for s in self.others:
                s.stop(n, index)

    def _sdk_feed(self, frame: Frame) -> None:
        # a chunk log's events come without SSE names: the SDK is shown what it would
        # build had each come with its own name (Dialect.chunk_names)
        super()._sdk_feed(named_by_type(frame) if self.chunk_log else frame)

    # -- the state at this frame, for the faces ------------------------------------------

    def content_now(self) -> str:
        return "".join(t for m in self.robust.messages for t in m.content)

    # -- the end of the stream ------------------------------------------------------------

    def _settled(self) -> list[tuple[Call, bool]]:
        return [(call, False) for call in self.robust.results()]

    def who(self, call: Call) -> str:
        several = len(self.robust.messages) > 1
        return f"tool block {call.index}" + (f" of message {call.choice}" if several else "")

    def declared_for(self, call: Call) -> frozenset[str] | None:
        # server and MCP tools are declared by type or by their server, not by name
        return self.declared if call.type == "tool_use" else None

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        messages = self.robust.messages
        choices = [
            # (a stop_reason the stream sent as another JSON value than a string is shown as
            # it came, though ChoiceSummary declares a string)
            ChoiceSummary(m.number, m.stop_reason, "".join(m.content), "".join(m.reasoning), "")  # type: ignore[arg-type]
            for m in messages
        ]
        if not choices:
            return None, "", "", []
        content = "".join(c.content for c in choices)
        reasoning = "".join(c.reasoning_content for c in choices)
        return choices[-1].finish_reason, content, reasoning, choices

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        robust, log = self.robust, self.log
        for m in robust.messages:
            where = f" in message {m.number}" if len(robust.messages) > 1 else ""
            for block in m.calls:
                if block.open:
                    log.add(
                        "block-stop-missing",
                        last,
                        f"the stream ended with tool block {block.index}{where} "
                        f"({cut(quote(block.name), 30)}) open"
                        + (f", stop_reason {quote(m.stop_reason)}" if m.stop_reason else "")
                        + ": its input may be cut short; clients that salvage partial JSON run "
                        "what arrived",
                        m.number,
                        block.index,
                    )
            client = [b for b in m.calls if b.type == "tool_use"]
            if client and m.stop_reason != "tool_use":
                log.add(
                    "stop-reason-mismatch",
                    m.stop_frame or last,
                    f"{plural(len(client), 'tool_use call')} assembled{where} but stop_reason is "
                    + (quote(m.stop_reason) if m.stop_reason is not None else "missing")
                    + '; agent loops that wait for "tool_use" end the turn',
                    m.number,
                )
            if not m.calls:
                self._text_like_a_call(
                    last,
                    m.content,
                    f"message {m.number}: the text looks like a tool call ({{text}}) but no tool "
                    "block was streamed",
                    m.number,
                )
        if not expect_done:
            return
        if robust.unnamed:
            log.add(
                "event-name-missing",
                robust.first_unnamed,
                f"{plural(robust.unnamed, 'event')} carry no event: name: the official anthropic "
                "SDK skips every such event; clients that read the data's type see them",
            )
        if not robust.done_frame:
            log.add(
                "message-stop-missing",
                last,
                "the stream ended without message_stop"
                + (": no message began" if not robust.messages else "")
                + "; clients that wait for it hang or drop the message",
            )
