"""The Ollama engine: one pass over a stream's lines, every strategy side by side."""

from __future__ import annotations

from typing import Any

from ...core.calls import Call, Unmodeled
from ...core.engine import ChoiceSummary
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame
from ...text import cut, plural, quote
from ..typed import EventEngine
from . import STRATEGY_NAMES
from .kinds import CUT_CALL, CUT_STREAM, KINDS
from .robust import Robust, calls_of, line_calls
from .sdk_model import BREAKS, OllamaPythonEmulation
from .strategies import ByName, ContentOnly, StopAtDone

_TOP = frozenset(("model", "created_at", "message", "done"))
_MESSAGE = frozenset(("role", "content", "thinking"))


def plain_fragment(p: object) -> tuple[int, str] | None:
    """A line that only adds text: (-1, its content), as Chat's content fragments."""
    got = piece_of(p)
    return (-1, got[1]) if got is not None and not got[2] else None


def piece_of(p: object) -> tuple[object, str, str] | None:
    """(role, content, thinking) of the usual line: `done: false` and a message that
    only adds text; None for any other line."""
    # (JSON gives dicts string keys only: a missing key or a value of another type is
    # the answer None)
    if type(p) is not dict or p.get("done") is not False or not _TOP.issuperset(p):
        return None
    message = p.get("message")
    if type(message) is not dict or not _MESSAGE.issuperset(message):
        return None
    role = message.get("role")
    content = message.get("content", "")
    thinking = message.get("thinking", "")
    if type(role) is not str or type(content) is not str or type(thinking) is not str:
        return None
    if type(p.get("model", "")) is not str or type(p.get("created_at", "")) is not str:
        return None
    return role, content, thinking


def whole_lines(data: str) -> bool:
    """The line holds no character the client's line reader (str.splitlines) ends a line
    at. A parsed line holds no raw control character but JSON's whitespace."""
    if data.isascii():
        return "\n" not in data and "\r" not in data
    return BREAKS.isdisjoint(data)


def declared(tools: object) -> frozenset[str] | None:
    """Names of the functions a request declared (`tools[].function.name`); None: none."""
    if not isinstance(tools, list):
        return None
    names = set()
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.add(fn["name"])
    return frozenset(names) or None


class OllamaEngine(EventEngine):
    """Feed frames in arrival order; `finish` once."""

    own_kinds, own_cut_stream, own_cut_call = KINDS, CUT_STREAM, CUT_CALL

    dialect = "ollama-chat"
    strategy_names = STRATEGY_NAMES
    sdk_name = "ollama-python"
    by_value = True  # the client holds the arguments as a dict, written back without spaces

    reader = Robust
    robust: Robust
    folds = (StopAtDone, ContentOnly, ByName)
    declares = staticmethod(declared)
    no_id = (
        "send the assistant's tool_calls back as they came and answer it with a tool message "
        "naming it by tool_name, never with an invented id"
    )

    sdk: OllamaPythonEmulation | Unmodeled

    def emulation(self, tools: list[Any] | None) -> OllamaPythonEmulation:
        return OllamaPythonEmulation()

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust)."""
        self.frames = frame.number
        robust = self.robust
        if not self.collect_events and not frame.bad_utf8 and frame.event is None:
            got = piece_of(frame.payload)
            # a line that only adds text, where no rule has anything new to say: no
            # client keeps a call from it, and the emulation reads it as valid (unless
            # the client's line reader would cut it)
            if (
                got is not None
                and (isinstance(self.sdk, Unmodeled) or whole_lines(frame.data))
                and (not self._reads or robust.text(frame.number, *got))
            ):
                return None
        robust.events = [] if self.collect_events else None
        calls = calls_of(frame.payload)
        entries = line_calls(frame, calls) if calls else None  # (read once for all)
        if self._reads:
            robust.feed(frame, entries)
        if self.others:
            made = [e.slot for e in entries if e.slot] if entries else []
            done = isinstance(frame.payload, dict) and frame.payload.get("done") is True
            for s in self.others:
                s.line(frame.number, made, done)
        self._sdk_feed(frame)
        return robust.events

    # -- the state at this frame, for the faces ------------------------------------------

    def content_now(self) -> str:
        return "".join(self.robust.content)

    # -- the end of the stream ------------------------------------------------------------

    def _settled(self) -> list[tuple[Call, bool]]:
        return [(call, False) for call in self.robust.results()]

    def who(self, call: Call) -> str:
        return f"call {call.index}"

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        robust = self.robust
        if not robust.lines:
            return None, "", "", []
        reason = robust.done_reason if isinstance(robust.done_reason, str) else None
        content, reasoning = "".join(robust.content), "".join(robust.reasoning)
        return reason, content, reasoning, [ChoiceSummary(0, reason, content, reasoning, "")]

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        log, robust = self.log, self.robust
        calls, reason = robust.calls, robust.done_reason
        # (the done: true line is part of the body, not a transport's end marker: a chunk
        # log of an Ollama stream holds it too)
        if not robust.done_frame and last and not robust.error_payload:
            log.add(
                "done-line-missing",
                last,
                "the body ended with no done: true line: it was cut, and clients that wait "
                "for done (and its done_reason and counters) never finish the turn",
            )
        if calls and reason == "stop":
            log.add(
                "done-reason-stop-with-calls",
                robust.done_frame,
                f"{plural(len(calls), 'call')} made and done_reason is stop: Ollama has no "
                "done reason for tool calls; clients that run calls only on a tool-call "
                "finish (LiteLLM before its PR #35753) run none",
            )
        elif calls and reason is not None:
            log.add(
                "stop-reason-mismatch",
                robust.done_frame,
                f"{plural(len(calls), 'call')} made but done_reason is {cut(quote(reason), 30)}: "
                "the model was stopped; calls it had not finished writing are missing",
            )
        if not calls:
            self._text_like_a_call(
                last,
                robust.content,
                "the text looks like a tool call ({text}) but no message.tool_calls came",
            )
