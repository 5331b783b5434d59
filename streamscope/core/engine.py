"""The accumulation engine: one pass over a stream's frames, every strategy side by side.

`StreamEngine.feed` takes frames as they are decoded (nothing is kept per frame
unless field events are asked for), `finish` applies the end-of-stream rules and
returns a `StreamResult`. `copy` is cheap enough to keep one every K frames, which is
how the replay (tui/model.py) reaches any frame without replaying from the start.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice

from ..text import cut, plural, quote
from . import repair as repairs
from .anomalies import Anomaly, AnomalyLog
from .calls import Call, StrategyError
from .events import FieldEvent
from .frames import NOT_READ, Frame
from .robust import TOOL_CALL_TEXT, Robust, at_index
from .run import Run
from .sdk_model import SdkEmulation, Unmodeled
from .sse import Truncation
from .strategies import ById, Guarded, Naive, OpenAIDocs, Strategy

# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "guarded", "naive", "openai-sdk", "openai-docs", "by-id")

# What an engine runs (StreamEngine's `part`): everything; robust and the anomaly rules;
# the client strategies (OTHERS: the four below and the openai SDK emulation; CLIENTS:
# the four; SDK: the emulation).
ALL, ROBUST, OTHERS, CLIENTS, SDK = "all", "robust", "others", "clients", "sdk"
# part -> (robust and the anomaly rules, the four client strategies, the SDK emulation)
_PARTS = {
    ALL: (True, True, True),
    ROBUST: (True, False, False),
    OTHERS: (False, True, True),
    CLIENTS: (False, True, False),
    SDK: (False, False, True),
}

# How an exchange ended, as the recorder wrote it in its `end` line.
CONNECTION_FAILED = {"upstream-error", "timeout"}
# streamscope itself stopped (a signal, a failed write) while the exchange was open.
RECORDER_STOPPED = "recorder-stopped"
# Not a recorder reason: the recording stops before the exchange's `end` line.
UNFINISHED = "unfinished"


@dataclass(slots=True)
class ChoiceSummary:
    """What one choice said besides its tool calls."""

    index: int
    finish_reason: str | None
    content: str
    reasoning_content: str
    refusal: str

    def to_json(self) -> dict:
        return {
            "choice": self.index,
            "finish_reason": self.finish_reason,
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "refusal": self.refusal,
        }


@dataclass(slots=True)
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
    strategies: dict[str, list[Call] | StrategyError | Unmodeled]
    anomalies: list[Anomaly]
    anomaly_frames: dict[int, Sequence[str]] = field(default_factory=dict)
    truncation: Truncation | None = None
    choices: list[ChoiceSummary] = field(default_factory=list)  # every choice, 0 first

    def differs(self, name: str) -> bool | None:
        """Does strategy `name` build other calls than robust? None when it raised."""
        got = self.strategies[name]
        if not isinstance(got, list):
            return None
        return [c.key() for c in got] != [c.key() for c in self.tool_calls]


def declared_tools(tools: object) -> frozenset[str] | None:
    """Names of the function and custom tools a request declared; None when it declared none."""
    if not isinstance(tools, list) or not tools:
        return None
    names = set()
    for tool in tools:
        if isinstance(tool, dict):
            for key in ("function", "custom"):  # a custom tool is declared as {"custom": {name}}
                fn = tool.get(key)
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    names.add(fn["name"])
    return frozenset(names) or None


class StreamEngine:
    """Feed frames in arrival order; `finish` once."""

    def __init__(
        self,
        exchange: int = 1,
        tools: list | None = None,
        response_format: object | None = None,
        collect_events: bool = False,
        part: str = ALL,
        marks: bool = True,
    ) -> None:
        self.exchange = exchange
        # marks False: no anomaly marks per frame (anomaly_frames stays empty)
        self.log = AnomalyLog(marks)
        self._robust = Robust(self.log, declared_tools(tools))
        # part: ALL; ROBUST, robust and the anomaly rules alone (every anomaly is theirs):
        # read with end(); OTHERS, CLIENTS or SDK, client strategies alone: read with
        # others_at_end(). The minimiser looks at a candidate's anomalies first, at the
        # clients only if they match (the cheap four before the SDK emulation). A part is
        # fed and read once, never finished nor copied.
        if part not in _PARTS:
            raise ValueError(f"part is one of {', '.join(_PARTS)}; got {part!r}")
        self.part = part
        self._reads, clients, self._emulated = _PARTS[part]
        self.others: list[Strategy] = [Guarded(), Naive(), OpenAIDocs(), ById()] if clients else []
        self.fast: list = [self._robust] if self._reads else []
        self.fast += self.others
        if self._emulated:
            self.fast.append(_SdkFast(self))
        self._run = Run()  # plain fragments taken, not yet applied (see feed)
        # Call indexes (-1: the content) whose plain fragments every strategy takes in
        # bulk since the last other frame; None: none yet.
        self._ok: set[int] | None = None
        self._cur = -1  # the call index of the latest plain fragment taken
        self.sdk: SdkEmulation | Unmodeled = (
            SdkEmulation(tools, response_format) if self._emulated else Unmodeled("not emulated")
        )
        self.collect_events = collect_events
        self.frames = 0

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust).

        `plain` is `plain_fragment(frame.payload)` and `problem` is
        `chunk_violation(frame.payload)` when the caller already has them (the minimiser
        feeds the same payloads many times)."""
        self.frames = n = frame.number
        if self.collect_events or frame.bad_utf8:
            plain = None
        elif plain is NOT_READ:
            plain = _plain(frame.payload)
        if plain is not None:
            index, text = plain
            ok = self._ok
            if ok is not None and index in ok and (index < 0 or text[:1] not in "{["):
                self._take(n, index, text)
                return None
            self._flush()
            # The first plain fragment of a call since anything else happened: each
            # strategy takes it in a few steps, or asks for the whole frame.
            accepted = True
            for s in self.fast:
                if not (s.fast_content(n, text) if index < 0 else s.fast_args(n, index, text)):
                    accepted = False
                    s.feed(frame)
            if not accepted:
                self._ok = None
            elif ok is None:
                self._ok = {index}
            else:
                ok.add(index)
            if accepted and index >= 0:
                self._cur = index
            return None
        self._flush()
        self._ok = None
        robust = self._robust
        robust.events = [] if self.collect_events else None
        if self._reads:
            robust.feed(frame, problem)
        for strategy in self.others:
            strategy.feed(frame)
        self._sdk_feed(frame)
        return robust.events

    def bulk(self, first: int, plains: Sequence[object], start: int = 0) -> int:
        """`feed`'s bulk step for frames first, first + 1, ... whose plain fragments are
        plains[start], plains[start + 1], ... (None: not plain): how many it took, as feed
        would, up to the first frame that needs more than the bulk step (feed that one).
        For a caller that has the plain fragments already (the minimiser): no Frame, no
        call per frame. The same bookkeeping as _take, in one loop."""
        ok = self._ok
        if self.collect_events or ok is None:
            return 0
        run = self._run
        cur = self._cur
        args, lasts, order, switches = run.args, run.lasts, run.order, run.switches
        content, left = run.content, run.left
        # the latest argument frame: while there is one, it is the current call's, and
        # lasts[cur] is written when the call changes and at the end, not every frame
        last_args = run.args_last
        texts = args.get(cur) if last_args else None  # the current call's fragments
        n = first
        for plain in islice(plains, start, None):
            if plain is None:
                break
            index, text = plain
            if index not in ok:
                break
            if index < 0:
                content.append(text)
            elif text[:1] in "{[":
                break
            else:
                if index != cur:
                    if not switches:
                        run.first_switch = index
                    switches.append(n)
                    left.add(cur)
                    if last_args:
                        lasts[cur] = last_args
                    cur = index
                    texts = None
                if texts is None:
                    texts = args.get(index)
                    if texts is None:
                        texts = args[index] = []
                texts.append(text)
                order.append(text)
                last_args = n
            n += 1
        taken = n - first
        if taken:
            if last_args:
                lasts[cur] = run.args_last = last_args
            run.last = n - 1
            self._cur = cur
            self.frames = n - 1
        return taken

    def _take(self, n: int, index: int, text: str) -> None:
        # One more fragment of a call (or the content) every strategy already took a
        # plain fragment of: applied in bulk when anything else happens (or the state is
        # read), whichever call it belongs to. (bulk does the same for many frames.)
        run = self._run
        if index < 0:
            run.content.append(text)
        else:
            if index != self._cur:
                if not run.switches:
                    run.first_switch = index
                run.switches.append(n)
                run.left.add(self._cur)
                self._cur = index
            texts = run.args.get(index)
            if texts is None:
                run.args[index] = [text]
            else:
                texts.append(text)
            run.lasts[index] = run.args_last = n
            run.order.append(text)
        run.last = n

    @property
    def robust(self) -> Robust:
        """streamscope's own reading, every fragment taken so far applied."""
        self._flush()
        return self._robust

    def _sdk_feed(self, frame: Frame) -> None:
        sdk = self.sdk
        if not isinstance(sdk, Unmodeled):
            try:
                sdk.feed(frame)
            except Unmodeled as why:
                self.sdk = why

    def _flush(self) -> None:
        """Apply the pending run of plain fragments to every strategy. The calls they
        were accepted for stay accepted: plain fragments change nothing `fast_args`
        looks at."""
        run = self._run
        if run.last == 0:
            return
        self._run = Run()
        run.cur = self._cur
        for s in self.fast:
            s.extend(run)

    def copy(self) -> StreamEngine:
        self._flush()
        new = copy.copy(self)
        new._run = Run()
        new._ok = None  # the copy's strategies accept calls anew
        new.log = self.log.copy()
        new._robust = copy.deepcopy(self._robust, {id(self.log): new.log})  # the log copied once
        new.others = [s.copy() for s in self.others]
        new.fast = [new._robust, *new.others, _SdkFast(new)]
        new.sdk = self.sdk if isinstance(self.sdk, Unmodeled) else self.sdk.copy()
        return new

    # -- the state at this frame, for the faces ------------------------------------------

    def strategy_calls(self) -> dict[str, list[Call] | StrategyError | Unmodeled]:
        self._flush()
        out: dict[str, list[Call] | StrategyError | Unmodeled] = {"robust": self._robust.calls()}
        for s in self.others:
            out[s.name] = s.result()
        sdk = self.sdk
        out["openai-sdk"] = sdk if isinstance(sdk, Unmodeled) else (sdk.error or sdk.calls())
        return {name: out[name] for name in STRATEGY_NAMES}

    # -- the end of the stream ------------------------------------------------------------

    def finish(
        self,
        truncation: Truncation | None = None,
        end_reason: str | None = None,
        end_error: str | None = None,
        status: int | None = None,
        expect_done: bool = True,
    ) -> StreamResult:
        """End of stream. `expect_done` is False for a chunk log, which never holds [DONE]."""
        if self.part != ALL:
            raise ValueError(
                f"an engine of part {self.part} cannot finish: call end() or others_at_end()"
            )
        results, fixes = self.end(truncation, end_reason, end_error, expect_done)
        robust, log, last = self._robust, self.log, self.frames
        # With data: [DONE] seen, the stream ended whoever closed first (recordings made
        # before `complete` covered a client that left after [DONE] say client-closed).
        if end_reason in ("client-closed", RECORDER_STOPPED) and not robust.done_frame:
            ended = end_reason
        elif truncation is not None or end_reason == UNFINISHED:
            ended = "truncated"
        elif end_reason in CONNECTION_FAILED or (status or 0) >= 400 or robust.error_payload:
            ended = "error"
        else:
            ended = "done" if robust.done_frame or not expect_done else "finish-without-done"

        strategies = {"robust": results, **self.others_at_end()}
        summaries = [
            ChoiceSummary(
                c,
                st.finish,
                "".join(st.content),
                "".join(st.reasoning),
                "".join(st.refusal),
            )
            for c, st in sorted(robust.choices.items())
            if st.active
        ]
        first = robust.choices.get(min(robust.choices)) if robust.choices else None
        return StreamResult(
            exchange=self.exchange,
            frames=last,
            ended=ended,
            finish_reason=first.finish if first else None,
            content="".join(first.content) if first else "",
            reasoning_content="".join(first.reasoning) if first else "",
            tool_calls=results,
            repairs=fixes,
            strategies={name: strategies[name] for name in STRATEGY_NAMES},
            anomalies=log.entries(),
            anomaly_frames=log.frames(),
            truncation=truncation,
            choices=summaries,
        )

    def others_at_end(self) -> dict[str, list[Call] | StrategyError | Unmodeled]:
        """What each client strategy built (or raised) at the end of the stream, once."""
        self._flush()
        out: dict[str, list[Call] | StrategyError | Unmodeled] = {
            s.name: s.result() for s in self.others
        }
        if not self._emulated:  # the emulation is not part of it
            return out
        sdk = self.sdk
        if not isinstance(sdk, Unmodeled):
            try:
                out["openai-sdk"] = sdk.finish(self.frames)
            except Unmodeled as why:
                out["openai-sdk"] = why
        else:
            out["openai-sdk"] = sdk
        return out

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
        self._flush()
        robust, log = self._robust, self.log
        last = self.frames
        results: list[Call] = []
        fixes: list[repairs.Repair | None] = []
        for slot in robust.slots():
            robust.settle(slot)
            call = slot.to_call()
            results.append(call)
            fixes.append(self._end_of_call(call, slot.freeform))

        if not any(st.active for st in robust.choices.values()):
            log.add(
                "finish-reason-missing", last, "the stream carried no choices, so no finish_reason"
            )
        for c in sorted(robust.choices):
            st = robust.choices[c]
            if not st.active:
                continue
            if st.finish is None:
                log.add("finish-reason-missing", last, f"choice {c} ended with no finish_reason", c)
            elif st.calls and st.finish != "tool_calls":
                log.add(
                    "finish-reason-mismatch",
                    st.finish_frame,
                    f"{plural(len(st.calls), 'call')} assembled but finish_reason is "
                    f'{quote(st.finish)}; agent loops that wait for "tool_calls" end the turn',
                    c,
                )
            if not st.calls and st.content:
                text = "".join(st.content)
                if TOOL_CALL_TEXT.search(text):
                    log.add(
                        "tool-call-in-content",
                        last,
                        f"choice {c}: content looks like a tool call ({cut(quote(text), 52)}) but no tool call "
                        "was streamed",
                        c,
                    )

        if truncation is not None:
            log.add("stream-truncated", last, f"after frame {last}: {truncation.describe()}")
        elif end_reason == UNFINISHED:
            log.add(
                "stream-truncated",
                last,
                f"after frame {last}: the recording stops before this exchange ended (no end line)",
            )
        elif end_reason == "client-closed" and not robust.done_frame:
            log.add(
                "stream-truncated",
                last,
                f"after frame {last}: the client closed the connection before the stream ended; "
                "what is missing was cut by the client, not by the provider",
            )
        elif end_reason == RECORDER_STOPPED and not robust.done_frame:
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
        if not robust.done_frame and expect_done:
            log.add("done-missing", last, "the stream ended without data: [DONE]")
        return results, fixes

    def _end_of_call(self, call: Call, freeform: bool) -> repairs.Repair | None:
        log, n, c, i = self.log, call.last_frame, call.choice, call.index
        who = f"the call {at_index(i)}" + (f" ({call.name})" if call.name else "")
        if not call.id:
            log.add(
                "id-missing",
                n,
                f'{who} ended with no id: use "" in the assistant message and the tool result alike, '
                "never an invented one",
                c,
                i,
            )
        if not call.name:
            log.add("name-missing", n, f"{who} ended with no name: no client can dispatch it", c, i)
        elif self._robust.declared is not None and call.name not in self._robust.declared:
            log.add(
                "name-undeclared",
                n,
                f"{who}: {quote(call.name)} is not one of the declared tools "
                f"({', '.join(sorted(self._robust.declared))})",
                c,
                i,
            )
        args = call.arguments
        if not isinstance(args, str) or freeform:
            return None  # a custom call's input is free text: never JSON-checked or repaired
        if args == "":
            log.add(
                "args-empty",
                n,
                f'{who} ended with arguments ""; clients differ on "" vs "{{}}"',
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
                    f"{who}: arguments are a JSON string that holds JSON ({cut(quote(args), 42)}); "
                    "decoding once gives text, not an object",
                    c,
                    i,
                )
            return None
        log.add(
            "args-invalid-json",
            n,
            f"{who} ended with arguments that do not parse ({_tail(quote(args), 42)}); crow repair gives "
            f"{cut(quote(fix.crow.result), 42)}, best repair {cut(quote(fix.best.result), 42)}",
            c,
            i,
        )
        values = _json_values(args)
        if values > 1:
            log.add(
                "call-boundary-ambiguous",
                n,
                f"{who}: the arguments are {values} complete JSON values back to back: one call "
                "re-sent, or several calls on one index; robust kept one call with the text as sent",
                c,
                i,
            )
        return fix


class _SdkFast:
    """The openai-sdk emulation in the fast path, or the whole frame when it has no shortcut.

    It holds its engine weakly: the engine holds it, and a cycle would leave every
    engine to the cyclic garbage collector (the minimiser drops hundreds; each
    collection then also walks the whole stream it keeps)."""

    __slots__ = ("_engine",)

    def __init__(self, engine: StreamEngine) -> None:
        self._engine = weakref.ref(engine)

    @property
    def engine(self) -> StreamEngine:
        engine = self._engine()
        assert engine is not None  # only its engine calls it
        return engine

    def fast_args(self, frame: int, index: int, text: str) -> bool:
        sdk = self.engine.sdk
        return isinstance(sdk, Unmodeled) or sdk.fast_args(frame, index, text)

    def fast_content(self, frame: int, text: str) -> bool:
        sdk = self.engine.sdk
        return isinstance(sdk, Unmodeled) or sdk.fast_content(frame, text)

    def feed(self, frame: Frame) -> None:
        self.engine._sdk_feed(frame)

    def extend(self, run: Run) -> None:
        sdk = self.engine.sdk
        if not isinstance(sdk, Unmodeled):
            sdk.extend(run)


_ENVELOPE_OK = {"index", "delta", "finish_reason", "logprobs"}


def _plain(p: object) -> tuple[int, str] | None:
    """(index, fragment) for a valid chunk whose only news is one argument fragment at
    choice 0, (-1, text) for one content fragment; None for anything else.

    Everything the robust rules and the schema check would look at is checked here, so
    taking the fast path never hides an anomaly.
    """
    if type(p) is not dict:
        return None
    choices = p.get("choices")
    if type(choices) is not list or len(choices) != 1 or p.get("object") != "chat.completion.chunk":
        return None
    if (
        type(p.get("id")) is not str
        or type(p.get("created")) is not int
        or type(p.get("model")) is not str
    ):
        return None
    if p.get("usage") is not None or p.get("moderation") is not None or "_fields_set" in p:
        return None  # the SDK keeps usage, and looks at moderation and model parameters
    if p.get("error"):
        return None  # a provider error beside a fragment: robust and the SDK both act on it
    c = choices[0]
    if type(c) is not dict or c.get("index") != 0 or type(c["index"]) is not int:
        return None
    if (
        c.get("finish_reason") is not None
        or c.get("logprobs") is not None
        or not _ENVELOPE_OK.issuperset(c)
    ):
        return None
    delta = c.get("delta")
    if type(delta) is not dict or len(delta) != 1:
        return None
    calls = delta.get("tool_calls")
    if calls is None:
        text = delta.get("content")
        return (-1, text) if type(text) is str else None
    if type(calls) is not list or len(calls) != 1:
        return None
    entry = calls[0]
    if type(entry) is not dict or len(entry) != 2:
        return None
    index, fn = entry.get("index"), entry.get("function")
    if type(index) is not int or index < 0 or type(fn) is not dict or len(fn) != 1:
        return None
    text = fn.get("arguments")
    return (index, text) if type(text) is str else None


# What `feed` reads a payload as: (call index, argument fragment), (-1, content fragment),
# or None for a frame that goes through every rule. (The function itself, not a wrapper:
# the replay calls it once per frame.)
plain_fragment = _plain


def _tail(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _json_values(text: str) -> int:
    """How many complete JSON values stand back to back in `text` (0 if it is not that)."""
    import json

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


def analyze_frames(
    frames: Iterable[Frame],
    exchange: int = 1,
    tools: list | None = None,
    truncation: Truncation | None = None,
    **end: object,
) -> StreamResult:
    """Convenience for tests and small inputs."""
    engine = StreamEngine(exchange, tools)
    for frame in frames:
        engine.feed(frame)
    return engine.finish(truncation, **end)  # type: ignore[arg-type]
