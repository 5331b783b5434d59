"""The Chat Completions engine: one pass over a stream's frames, every strategy side by side.

`StreamEngine.feed` takes frames as they are decoded (nothing is kept per frame
unless field events are asked for), `finish` applies the end-of-stream rules and
returns a `StreamResult`. `copy` is cheap enough to keep one every K frames, which is
how the replay (tui/model.py) reaches any frame without replaying from the start.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.engine import ALL, ChoiceSummary, Engine, Strategies, StreamResult
from ...core.events import FieldEvent
from ...core.frames import NOT_READ, Frame, Truncation, exactly, rounded
from ...text import plural, quote
from . import STRATEGY_NAMES
from .robust import Robust
from .run import Run
from .sdk_model import SdkEmulation, check_logprobs
from .strategies import ById, Guarded, Naive, OpenAIDocs, Strategy

if TYPE_CHECKING:
    from typing_extensions import Unpack


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


class StreamEngine(Engine):
    """Feed frames in arrival order; `finish` once."""

    dialect = "chat-completions"
    wrappers = True  # models invent multi_tool_use.parallel here too
    strategy_names = STRATEGY_NAMES

    def __init__(
        self,
        exchange: int = 1,
        tools: list[Any] | None = None,
        response_format: object | None = None,
        collect_events: bool = False,
        part: str = ALL,
        marks: bool = True,
        chunk_log: bool = False,  # (a chunk log reads as an SSE body does: chunks have no names)
    ) -> None:
        # part: ALL; ROBUST, robust and the anomaly rules alone (every anomaly is theirs):
        # read with end(); OTHERS, CLIENTS or SDK, client strategies alone: read with
        # others_at_end(). The minimiser looks at a candidate's anomalies first, at the
        # clients only if they match (the cheap four before the SDK emulation). A part is
        # fed and read once, never finished nor copied.
        super().__init__(exchange, part, marks, collect_events)
        self.declared = declared_tools(tools)
        self._robust = Robust(self.log, self.declared)
        self.others: list[Strategy] = (
            [Guarded(), Naive(), OpenAIDocs(), ById()] if self._clients else []
        )
        self.fast: list[Any] = [self._robust] if self._reads else []
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

    def feed(
        self, frame: Frame, plain: object = NOT_READ, problem: object = NOT_READ
    ) -> list[FieldEvent] | None:
        """Apply one frame to every strategy; with collect_events, what it did (robust).

        `plain` is `plain_fragment(frame.payload)` and `problem` is
        `violation(frame.payload, frame.data)` when the caller already has them (the minimiser
        feeds the same payloads many times)."""
        self.frames = n = frame.number
        if self.collect_events or frame.bad_utf8:
            plain = None
        elif plain is NOT_READ:
            plain = _plain(frame.payload)
        if plain is not None:
            index, text = cast("tuple[int, str]", plain)
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
        frame = exact_frame(frame)
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
            index, text = cast("tuple[int, str]", plain)
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
        new._robust = self._robust.copy(new.log)  # (copies share the calls: copy on write)
        new.others = [s.copy() for s in self.others]
        new.fast = [new._robust, *new.others, _SdkFast(new)]
        new.sdk = self.sdk if isinstance(self.sdk, Unmodeled) else self.sdk.copy()
        return new

    def seal(self) -> None:
        self._flush()
        self._robust.seal()
        for s in self.others:
            s.seal()
        if not isinstance(self.sdk, Unmodeled):
            self.sdk.seal()

    # -- the state at this frame, for the faces ------------------------------------------

    def calls_now(self) -> list[Call]:
        return self.robust.calls()

    def content_now(self) -> str:
        texts = [c for c in self.robust.choices.values() if c.content]
        return "".join(texts[0].content) if texts else ""

    def strategy_calls(self) -> dict[str, list[Call] | StrategyError | Unmodeled]:
        self._flush()
        out: dict[str, list[Call] | StrategyError | Unmodeled] = {"robust": self._robust.calls()}
        for s in self.others:
            out[s.name] = s.result()
        sdk = self.sdk
        out["openai-sdk"] = sdk if isinstance(sdk, Unmodeled) else (sdk.error or sdk.calls())
        return {name: out[name] for name in STRATEGY_NAMES}

    # -- the end of the stream ------------------------------------------------------------

    @property
    def done_seen(self) -> bool:
        return bool(self._robust.done_frame)

    @property
    def errored(self) -> bool:
        return bool(self._robust.error_payload)

    def _settled(self) -> list[tuple[Call, bool]]:
        self._flush()
        robust = self._robust
        out = []
        for slot in robust.slots():
            slot = robust.settle(slot)
            out.append((slot.to_call(), slot.freeform))
        return out

    def _summary(self) -> tuple[str | None, str, str, list[ChoiceSummary]]:
        robust = self._robust
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
        if first is None:
            return None, "", "", summaries
        return first.finish, "".join(first.content), "".join(first.reasoning), summaries

    def others_at_end(self) -> Strategies:
        """What each client strategy built (or raised) at the end of the stream, once."""
        self._flush()
        out: Strategies = {s.name: s.result() for s in self.others}
        if self._emulated:  # (else the emulation is not part of it)
            out["openai-sdk"] = self.sdk_at_end()
        return out

    def _stream_rules(self, last: int, expect_done: bool) -> None:
        robust, log = self._robust, self.log
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
            if not st.calls:
                self._text_like_a_call(
                    last,
                    st.content,
                    f"choice {c}: content looks like a tool call ({{text}}) but no tool call was streamed",
                    c,
                )
        if not robust.done_frame and expect_done:
            log.add("done-missing", last, "the stream ended without data: [DONE]")


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


def exact_frame(frame: Frame) -> Frame:
    """`frame`, its payload read again exactly (frames.exactly) where orjson rounded an
    integer the rules judge (`created`, a choice's or a tool call's `index`) to a float:
    as sent it is an integer, which every client reads as one (the SDK: an index it
    cannot hold), not an index that is no integer."""
    p = frame.payload
    if type(p) is not dict:
        return frame
    choices = p.get("choices")
    seen = rounded(p.get("created"))
    for c in choices if type(choices) is list and not seen else ():
        if type(c) is dict:
            delta = c.get("delta")
            calls = delta.get("tool_calls") if type(delta) is dict else None
            seen = rounded(c.get("index")) or (
                type(calls) is list
                and any(type(e) is dict and rounded(e.get("index")) for e in calls)
            )
            if seen:
                break
    return exactly(frame) if seen else frame


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
    if c.get("finish_reason") is not None or not _ENVELOPE_OK.issuperset(c):
        return None
    logprobs = c.get("logprobs")
    if logprobs is not None:
        try:
            check_logprobs(logprobs)  # no rule looks at logprobs, the SDK only at their shape
        except Unmodeled:
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


class _End(TypedDict, total=False):
    """Engine.finish's keywords on how the exchange ended."""

    end_reason: str | None
    end_error: str | None
    status: int | None
    expect_done: bool


def analyze_frames(
    frames: Iterable[Frame],
    exchange: int = 1,
    tools: list[Any] | None = None,
    truncation: Truncation | None = None,
    **end: Unpack[_End],
) -> StreamResult:
    """Convenience for tests and small inputs."""
    engine = StreamEngine(exchange, tools)
    for frame in frames:
        engine.feed(frame)
    return engine.finish(truncation, **end)
