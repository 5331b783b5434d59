"""What every dialect's engine shares: the result of a stream, how it ended, and the
end-of-stream rules whose words fit every dialect.

A dialect's engine (`streamscope.dialects.<name>.engine`) reads its own events and keeps
its own strategies; it subclasses `Engine`, which settles the calls, files the per-call
and truncation anomalies and builds the `StreamResult` the faces show, the same way for
every dialect.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import field
from typing import Any, Protocol

from ..text import cut, quote
from . import repair as repairs
from .anomalies import (
    CUT_CALL_KINDS,
    CUT_STREAM_KINDS,
    KINDS,
    Anomaly,
    AnomalyLog,
    Kinds,
    cut_by_client,
)
from .calls import Call, StrategyError, Unmodeled, signature_bytes
from .frames import NOT_READ, Frame, Sentinel, Truncation
from .record import record

# How an exchange ended, as the recorder wrote it in its `end` line.
CONNECTION_FAILED = {"upstream-error", "timeout"}
# streamscope itself stopped (a signal, a failed write) while the exchange was open.
RECORDER_STOPPED = "recorder-stopped"
# Not a recorder reason: the recording stops before the exchange's `end` line.
UNFINISHED = "unfinished"

# What an engine runs (its `part`): everything; robust and the anomaly rules; the client
# strategies (OTHERS: the plain clients and the SDK emulation; CLIENTS: the plain clients;
# SDK: the emulation). The minimiser reads a candidate's anomalies first, its clients only
# if they match.
ALL, ROBUST, OTHERS, CLIENTS, SDK = "all", "robust", "others", "clients", "sdk"
# part -> (robust and the anomaly rules, the plain client strategies, the SDK emulation)
PARTS = {
    ALL: (True, True, True),
    ROBUST: (True, False, False),
    OTHERS: (False, True, True),
    CLIENTS: (False, True, False),
    SDK: (False, False, True),
}

# Text that looks like a tool call written as content (`tool-call-in-content`).
TOOL_CALL_TEXT = re.compile(
    r"<tool_call>|\"name\"\s*:\s*\"[^\"]*\"\s*,\s*\"(arguments|parameters)\""
)

Strategies = dict[str, list[Call] | StrategyError | Unmodeled]

# The names of the call a model invents to wrap parallel calls in `tool_uses[]`.
WRAPPERS = ("multi_tool_use.parallel", "parallel")


@record(slots=True)
class ChoiceSummary:
    """What one choice (a message, in dialects without choices) said besides its calls."""

    index: int
    finish_reason: str | None
    content: str
    reasoning_content: str
    refusal: str

    def to_json(self) -> dict[Any, Any]:
        return {
            "choice": self.index,
            "finish_reason": self.finish_reason,
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "refusal": self.refusal,
        }


@record(slots=True)
class StreamResult:
    """Everything the faces show about one stream."""

    exchange: int
    frames: int
    ended: str
    finish_reason: str | None
    content: str
    reasoning_content: str
    tool_calls: list[Call]
    repairs: list[repairs.Repair | None]
    strategies: Strategies
    anomalies: list[Anomaly]
    anomaly_frames: dict[int, Sequence[str]] = field(default_factory=dict)
    truncation: Truncation | None = None
    choices: list[ChoiceSummary] = field(default_factory=list)  # every choice, 0 first
    dialect: str = "chat-completions"
    # compare arguments that parse by their JSON value (a dialect whose SDK keeps the
    # parsed object, not the text: Anthropic's)
    by_value: bool = False
    # the id the provider gave the response, where a later request may name it to
    # continue it (the Responses API's previous_response_id); not in the JSON
    response_id: str | None = None
    # the framing its frames came in (streamscope.framing), as the stream was opened
    framing: str = "sse"
    # which response of a WebSocket session it is, 1 first (None: the exchange's own body)
    turn: int | None = None

    def differs(self, name: str) -> bool | None:
        """Does strategy `name` build other calls than robust? None when it raised."""
        got = self.strategies[name]
        if not isinstance(got, list):
            return None
        key = value_key if self.by_value else Call.key
        return [key(c) for c in got] != [key(c) for c in self.tool_calls]


def value_key(call: Call) -> tuple[Any, ...]:
    """`Call.key` with arguments that parse compared as the JSON value they hold: a client
    that keeps the parsed object (and writes it back without the stream's spaces) is not
    told apart for that alone."""
    text, args = call.arguments, call.arguments
    if isinstance(text, str) and text[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):
            try:
                args = _json_value(text) if len(text) <= _KEPT else _value(text)
            except _NotKept:  # a NaN, never equal to itself: each parse its own, as sent
                args = _value(text)
    return (call.id, call.name, call.type, args, signature_bytes(call.signature))


_KEPT = 4096  # arguments this long at most keep their value (a search compares them often)


class _NotKept(Exception):
    """Arguments holding NaN or Infinity, whose value is not kept."""


def _value(args: str) -> object:
    return ("json", _canonical(json.loads(args)))


@functools.lru_cache(maxsize=4096)
def _json_value(args: str) -> object:
    """_value, kept: `--minimal` compares the same calls' arguments for every candidate."""

    def constant(name: str) -> object:
        raise _NotKept

    return ("json", _canonical(json.loads(args, parse_constant=constant)))


def _canonical(value: object) -> object:
    # a JSON value as a comparable form (json.loads keeps the last of duplicate keys)
    if isinstance(value, dict):
        return ("{}", tuple((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("[]", tuple(_canonical(v) for v in value))
    if isinstance(value, bool):
        return ("bool", value)
    return value


def at_index(index: object) -> str:
    """Where a call sits, in words: "at index 2", or "with no index" when none was sent."""
    if index is None or isinstance(index, Sentinel):
        return "with no index"
    return f"at index {index if isinstance(index, int) else quote(index)}"


class Emulation(Protocol):
    """An SDK emulation, as the engine asks it for its answer at the end of a stream."""

    def finish(self, last_frame: int, /) -> list[Call] | StrategyError:
        """What the SDK builds (as calls) or raises at `last_frame`; Unmodeled where the
        real class must answer."""
        ...


class Engine:
    """The shared part of every dialect's engine: `finish` settles the calls, files the
    end-of-stream anomalies and builds the StreamResult.

    A dialect's engine sets `dialect` and `strategy_names`, and gives
    `_settled` (robust's calls, each with whether it is free text), `_stream_rules`
    (its own end rules), `_summary`, `others_at_end`, `done_seen` and `errored`."""

    dialect = ""
    strategy_names: tuple[str, ...] = ()
    # A dialect's engine names its own anomaly kinds and, of those, the ones a client's cut
    # causes (its kinds.py); each class is given them joined to the shared ones:
    own_kinds: Kinds = {}
    own_cut_stream: frozenset[str] = frozenset()
    own_cut_call: frozenset[str] = frozenset()
    kinds: Kinds = KINDS  # what its log may file: the shared kinds and the dialect's own
    # the kinds that follow from a client's cut (see cut_by_client): shared and its own
    cut_stream_kinds = CUT_STREAM_KINDS
    cut_call_kinds = CUT_CALL_KINDS

    def __init_subclass__(cls, **options: Any) -> None:
        super().__init_subclass__(**options)
        cls.kinds = {**KINDS, **cls.own_kinds}
        cls.cut_stream_kinds = CUT_STREAM_KINDS | cls.own_cut_stream
        cls.cut_call_kinds = CUT_CALL_KINDS | cls.own_cut_call

    by_value = False  # see StreamResult.by_value
    wrappers = False  # the dialect's models invent the parallel wrapper (`parallel-wrapper`)
    # what to do with a call that has no id (`id-missing`), in the dialect's words
    no_id = 'use "" in the assistant message and the tool result alike, never an invented one'
    sdk: Emulation | Unmodeled  # the SDK emulation, set by the dialect's engine

    def __init__(self, exchange: int, part: str, marks: bool, collect_events: bool) -> None:
        if part not in PARTS:
            raise ValueError(f"part is one of {', '.join(PARTS)}; got {part!r}")
        self.exchange = exchange
        self.part = part
        self._reads, self._clients, self._emulated = PARTS[part]
        self.log = AnomalyLog(marks, self.kinds)  # marks False: no anomaly marks per frame
        self.collect_events = collect_events
        self.frames = 0
        self.declared: frozenset[str] | None = None  # tool names the request declared

    # -- what a dialect gives ---------------------------------------------------------

    @property
    def done_seen(self) -> bool:
        """The dialect's end marker arrived ([DONE], message_stop)."""
        raise NotImplementedError

    @property
    def errored(self) -> bool:
        """The provider sent an error in the stream."""
        raise NotImplementedError

    def _settled(self) -> list[tuple[Call, bool]]:
        """robust's calls, settled, each with whether its arguments are free text."""
        raise NotImplementedError

    def feed(self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ) -> Any:
        """Apply one frame to every strategy (`plain` and `problem`: what the caller
        already read of its payload); with collect_events, what robust did."""
        raise NotImplementedError

    def copy(self) -> Engine:
        """An independent engine in the same state (the replay's checkpoints)."""
        raise NotImplementedError

    def seal(self) -> None:
        """The calls as they stand were shown: where the dialect shares calls between
        copies (copy on write), the next change copies a call first, so the Calls made of
        the unchanged ones are made once. Nothing, elsewhere."""

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        """The dialect's own end-of-stream anomalies."""
        raise NotImplementedError

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        """(finish reason, content, reasoning, every choice) of the stream."""
        raise NotImplementedError

    def others_at_end(self) -> Strategies:
        """What each client strategy built (or raised) at the end of the stream, once."""
        raise NotImplementedError

    def sdk_at_end(self) -> list[Call] | StrategyError | Unmodeled:
        """What the SDK emulation (`self.sdk`) builds at the end of the stream, or raises;
        Unmodeled where the real class must answer."""
        sdk = self.sdk
        if isinstance(sdk, Unmodeled):
            return sdk
        try:
            return sdk.finish(self.frames)
        except Unmodeled as why:
            return why

    def calls_now(self) -> list[Call]:
        """robust's calls as they stand after the frames fed so far."""
        raise NotImplementedError

    def strategy_calls(self) -> Strategies:
        """Every strategy's calls (or error) as they stand, robust first."""
        raise NotImplementedError

    def content_now(self) -> str:
        """The text answer so far (the first choice's, in dialects with choices)."""
        raise NotImplementedError

    def declared_for(self, call: Call) -> frozenset[str] | None:
        """The tool names `call`'s name must be one of (None: not checked)."""
        return self.declared

    def response_id(self) -> str | None:
        """The response's own id, where later requests may name it (StreamResult)."""
        return None

    # -- the end of the stream, the same for every dialect ------------------------------

    def finish(
        self,
        truncation: Truncation | None = None,
        end_reason: str | None = None,
        end_error: str | None = None,
        status: int | None = None,
        expect_done: bool = True,
    ) -> StreamResult:
        """End of stream. `expect_done` is False for a chunk log, which holds no end marker."""
        if self.part != ALL:
            raise ValueError(
                f"an engine of part {self.part} cannot finish: call end() or others_at_end()"
            )
        if getattr(truncation, "cut", False) and end_reason not in (None, "complete"):
            # a compressed body cut short: the end line says why (a client that left after
            # the end marker, before the compressed stream's own end, lost nothing)
            truncation = None
        results, fixes = self.end(truncation, end_reason, end_error, expect_done)
        done = self.done_seen
        # With the end marker seen, the stream ended whoever closed first (recordings made
        # before `complete` covered a client that left after [DONE] say client-closed).
        ended: str | None = None
        if end_reason in ("client-closed", RECORDER_STOPPED) and not done:
            ended = end_reason
        elif truncation is not None or end_reason == UNFINISHED:
            ended = "truncated"
        elif end_reason in CONNECTION_FAILED or (status or 0) >= 400 or self.errored:
            ended = "error"
        finish_reason, content, reasoning, choices = self._summary()
        if ended is None:
            ended = _ended_cleanly(done or not expect_done, finish_reason)
        strategies = {"robust": results, **self.others_at_end()}
        return StreamResult(
            exchange=self.exchange,
            frames=self.frames,
            ended=ended,
            finish_reason=finish_reason,
            content=content,
            reasoning_content=reasoning,
            tool_calls=results,
            repairs=fixes,
            strategies={name: strategies[name] for name in self.strategy_names},
            anomalies=self.log.entries(),
            anomaly_frames=self.log.frames(),
            truncation=truncation,
            choices=choices,
            dialect=self.dialect,
            by_value=self.by_value,
            response_id=self.response_id(),
        )

    def end(
        self,
        truncation: Truncation | None = None,
        end_reason: str | None = None,
        end_error: str | None = None,
        expect_done: bool = True,
    ) -> tuple[list[Call], list[repairs.Repair | None]]:
        """The end-of-stream rules, once: robust's calls settled and their repairs, every
        end anomaly filed in `log`. `finish` calls it; a caller that needs only the
        anomalies (a robust-only engine) calls it instead."""
        results: list[Call] = []
        fixes: list[repairs.Repair | None] = []
        for call, freeform in self._settled():
            results.append(call)
            fixes.append(self._end_of_call(call, freeform))
        last = self.frames
        self._stream_rules(last, expect_done)
        truncated(self.log, last, truncation, end_reason, end_error, self.done_seen)
        if end_reason == "client-closed" and not self.done_seen:
            # the call each choice was in the middle of when the client left
            last_call: dict[object, Call] = {}
            for call in results:
                if (
                    call.choice not in last_call
                    or call.first_frame >= last_call[call.choice].first_frame
                ):
                    last_call[call.choice] = call
            cut_by_client(
                self.log,
                [(c.choice, c.index) for c in last_call.values()],
                self.cut_stream_kinds,
                self.cut_call_kinds,
            )
        return results, fixes

    def _text_like_a_call(
        self, last: int, parts: list[str], said: str, choice: int | None = None
    ) -> None:
        """`tool-call-in-content` when the text (`parts`) looks like a tool call written as
        text; `said` is the message, `{text}` where the text goes (quoted, cut)."""
        text = "".join(parts)
        if TOOL_CALL_TEXT.search(text):
            message = said.replace("{text}", cut(quote(text), 52))
            self.log.add("tool-call-in-content", last, message, choice)

    def who(self, call: Call) -> str:
        """A call in words, for the end-of-call anomalies: "the call at index 2"."""
        return f"the call {at_index(call.index)}"

    def _end_of_call(self, call: Call, freeform: bool) -> repairs.Repair | None:
        log, n, c, i = self.log, call.last_frame, call.choice, call.index

        def who() -> str:  # (made only for a finding: most calls have none)
            return self.who(call) + (f" ({call.name})" if call.name else "")

        if not call.id:
            log.add(
                "id-missing",
                n,
                f"{who()} ended with no id: {self.no_id}",
                c,
                i,
            )
        declared = self.declared_for(call)
        if not call.name:
            log.add(
                "name-missing", n, f"{who()} ended with no name: no client can dispatch it", c, i
            )
        elif declared is not None and call.name not in declared:
            log.add(
                "name-undeclared",
                n,
                f"{who()}: {quote(call.name)} is not one of the declared tools "
                f"({', '.join(sorted(declared))})",
                c,
                i,
            )
        args = call.arguments
        if self.wrappers and call.name in WRAPPERS and isinstance(args, str):
            self._wrapper(call, who(), args)
        if not isinstance(args, str) or freeform:
            return None  # a custom call's input is free text: never JSON-checked or repaired
        if args == "":
            log.add(
                "args-empty",
                n,
                f'{who()} ended with arguments ""; clients differ on "" vs "{{}}"',
                c,
                i,
            )
            return None
        fix = repairs.repair(args)
        if fix is None:
            if repairs.double_encoded(args):
                log.add(
                    "args-double-encoded",
                    n,
                    f"{who()}: arguments are a JSON string that holds JSON ({cut(quote(args), 42)}); "
                    "decoding once gives text, not an object",
                    c,
                    i,
                )
            return None
        log.add(
            "args-invalid-json",
            n,
            f"{who()} ended with arguments that do not parse ({tail(quote(args), 42)}); crow repair gives "
            f"{cut(quote(fix.crow.result), 42)}, best repair {cut(quote(fix.best.result), 42)}",
            c,
            i,
        )
        values = json_values(args)
        if values > 1:
            log.add(
                "call-boundary-ambiguous",
                n,
                f"{who()}: the arguments are {values} complete JSON values back to back: one call "
                "re-sent, or several calls on one index; robust kept one call with the text as sent",
                c,
                i,
            )
        return fix

    def _wrapper(self, call: Call, who: str, args: str) -> None:
        """`parallel-wrapper`: one call that holds the real ones in `tool_uses[]`. It stays
        one call as sent; the message names the calls it wraps."""
        try:
            value = json.loads(args)
        except (ValueError, RecursionError):
            value = None
        uses = value.get("tool_uses") if isinstance(value, dict) else None
        if not isinstance(uses, list):
            return
        names = [u.get("recipient_name") if isinstance(u, dict) else None for u in uses]
        listed = ", ".join(cut(quote(x), 40) for x in names[:6]) + (", …" if len(names) > 6 else "")
        self.log.add(
            "parallel-wrapper",
            call.last_frame,
            f"{who} wraps {len(uses)} call{'s' if len(uses) != 1 else ''} in tool_uses[]"
            + (f" ({listed})" if names else "")
            + ": the model invented it; robust keeps it one call as sent, clients that unwrap "
            "it make ids the stream never carried",
            call.choice,
            call.index,
        )


def truncated(
    log: AnomalyLog,
    last: int,
    truncation: Truncation | None,
    end_reason: str | None,
    end_error: str | None,
    done: bool,
) -> None:
    """`stream-truncated` for a body cut inside an event, a recording without the end line,
    a client or streamscope that left first, or a failed connection."""
    if truncation is not None:
        log.add("stream-truncated", last, f"after frame {last}: {truncation.describe()}")
    elif end_reason == UNFINISHED:
        log.add(
            "stream-truncated",
            last,
            f"after frame {last}: the recording stops before this exchange ended (no end line)",
        )
    elif end_reason == "client-closed" and not done:
        log.add(
            "stream-truncated",
            last,
            f"after frame {last}: the client closed the connection before the stream ended; "
            "what is missing was cut by the client, not by the provider",
        )
    elif end_reason == RECORDER_STOPPED and not done:
        why = f" ({end_error})" if end_error else ""
        log.add(
            "stream-truncated",
            last,
            f"after frame {last}: streamscope stopped before the stream ended{why}; "
            "what is missing was cut by the recorder, not by the provider",
        )
    elif end_reason in CONNECTION_FAILED:
        detail = f": {end_error}" if end_error else ""
        log.add(
            "stream-truncated",
            last,
            f"after frame {last}: the connection failed ({end_reason}){detail}",
        )


def _ended_cleanly(done: bool, finish_reason: str | None) -> str:
    """How a stream ended that no cut, failure or error ended: at its end marker (or a
    chunk log's last line: it holds none); with a finish but no end marker; or with
    neither, cut short between two events (its end never came), which no finish was."""
    if done:
        return "done"
    return "finish-without-done" if finish_reason is not None else "truncated"


def tail(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def json_values(text: str) -> int:
    """How many complete JSON values stand back to back in `text` (0 if it is not that)."""
    decoder = json.JSONDecoder()
    count, pos, end = 0, 0, len(text)
    try:
        while pos < end:
            while pos < end and text[pos].isspace():
                pos += 1
            if pos == end:
                break
            _, pos = decoder.raw_decode(text, pos)
            count += 1
    except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
        return 0
    return count
