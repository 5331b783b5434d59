"""streamscope's own reading of an Ollama `/api/chat` stream (`robust`), and the anomaly
rules beside it.

Each line is a whole `ChatResponse`: `message` (`role`, `content` and `thinking`
pieces, `tool_calls`), `done`, and on the `done: true` line `done_reason` and the
counters. A call comes whole in one `message.tool_calls[]` entry: current servers send
it in a `done: false` line before the final one, older ones in the `done: true` line,
several in one line alike. Calls are keyed by their order across the stream (a call's
`index` is that order): two calls of the same name stay two, with or without ids.

What robust holds a call to:
- `id` is the entry's `id` as sent, `""` when none came (older servers send none);
  never one of its own. `function.index`, where sent, is the server's count, not a key.
- `arguments` is the `function.arguments` object as compact JSON text as sent: keys in
  their order, numbers as written (exact.py: a 30-digit integer keeps its digits, a
  26-digit string stays a string). Arguments sent as a JSON string (a proxy that
  re-encodes) are that string, and said (`args-string`).
"""

from __future__ import annotations

import copy
from typing import Any

from ...core import events as ev
from ...core.anomalies import AnomalyLog
from ...core.calls import Call, Slot
from ...core.events import FieldEvent
from ...core.frames import INVALID, Frame
from ...core.record import record
from ...text import cut, json_type, quote
from ..typed import compact, event_object
from . import exact

WORDS = ("call", "message")  # a call's key and its container, in FieldEvent's words
# A ChatResponse's metadata: its model, its time and its counters (shape.py: never what
# a call is built from).
METADATA = frozenset(
    (
        "model",
        "created_at",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_cached_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    )
)
# The top-level fields of a ChatResponse besides `message` and `done`.
_KNOWN = METADATA | {"done_reason", "logprobs", "remote_model", "remote_host"}
COUNTERS = ("prompt_eval_count", "eval_count", "total_duration", "eval_duration")
_MISSING: Any = object()


def calls_of(payload: object) -> list[Any] | None:
    """A line's `message.tool_calls` list; None when it has none (any other shape)."""
    if type(payload) is not dict:
        return None
    message = payload.get("message")
    if type(message) is not dict:
        return None
    calls = message.get("tool_calls")
    return calls if type(calls) is list and calls else None


def exact_calls(frame: Frame) -> list[Any] | None:
    """The line's `message.tool_calls` read again exactly (exact.py), aligned with the
    payload's; None when the line does not read so (robust falls back on the payload)."""
    value = exact.read(frame.data)
    message = value.get("message") if isinstance(value, exact.Pairs) else None
    calls = message.get("tool_calls") if isinstance(message, exact.Pairs) else None
    return calls if isinstance(calls, list) else None


def arguments_text(args: object) -> str | None:
    """Exact arguments (an object of exact.py) as compact text; None for another value."""
    return exact.write(args) if isinstance(args, exact.Pairs) else None


class Robust:
    """The robust reading plus every per-line anomaly rule, in one pass."""

    name = "robust"

    def __init__(self, log: AnomalyLog) -> None:
        self.log = log
        self.calls: list[Slot] = []
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.events: list[FieldEvent] | None = None  # set to a list to collect events
        self.done_frame = 0  # the first `done: true` line
        self.done_reason: object = None
        self.error_payload: str | None = None
        self.role: object = _MISSING  # the first line's message.role
        self.role_noted = False  # role-repeated filed (once: it is Ollama's format)
        self.lines = 0  # lines read as ChatResponse objects

    def copy(self, log: AnomalyLog) -> Robust:
        new = Robust.__new__(Robust)
        new.__dict__.update(self.__dict__)
        new.log = log
        new.events = None
        memo: dict[Any, Any] = {}
        new.calls = [copy.deepcopy(c, memo) for c in self.calls]
        new.content, new.reasoning = list(self.content), list(self.reasoning)
        return new

    def results(self) -> list[Call]:
        return [c.to_call() for c in self.calls]

    # -- lines ---------------------------------------------------------------------------

    def text(self, n: int, role: object, content: str, thinking: str) -> bool:
        """A `done: false` line that only adds text (engine.piece_of), where no rule has
        anything new to say: taken in a few steps. False when the line needs `feed`."""
        if self.done_frame or not self.role_noted:
            return False
        self.lines += 1
        if content:
            self.content.append(content)
        if thinking:
            self.reasoning.append(thinking)
        return True

    def feed(self, frame: Frame, entries: list[Entry] | None = None) -> None:
        """Read one line (`entries`: its line_calls, when the caller has them)."""
        n = frame.number
        p = frame.payload
        if p is INVALID:
            # orjson refuses a number past a double's range (valid JSON): read it exactly
            p = exact.plain(exact.read(frame.data)) if "e" in frame.data.lower() else None
            if type(p) is not dict:
                p = event_object(frame, self.log)
        else:
            p = event_object(frame, self.log)
        if p is None:
            return
        self.lines += 1
        if self.done_frame:
            self.log.add(
                "line-after-done",
                n,
                f"a line arrives after the done: true line (frame {self.done_frame}): "
                "clients stop reading at done and never see it",
            )
        error = p.get("error")
        if error is not None:
            self._error(n, error)
        message = p.get("message", _MISSING)
        done = p.get("done", _MISSING)
        if message is _MISSING and done is _MISSING and error is None and not _KNOWN & p.keys():
            self._schema(n, "a line with no message, done or error: nothing of a ChatResponse")
            return
        if done is not _MISSING and type(done) is not bool:
            self._schema(n, f"done is a JSON {json_type(done)}, not a boolean: read as not done")
        if message is not _MISSING:
            if type(message) is dict:
                self._message(frame, message, done is True, entries)
            else:
                self._schema(n, f"message is a JSON {json_type(message)}, not an object")
        if done is True and not self.done_frame:
            self.done_frame = n
            self.done_reason = p.get("done_reason")
            if self.events is not None:
                self.events.append(
                    FieldEvent(
                        n, ev.FINISH, 0, None, "done_reason", None, self.done_reason, -1, WORDS
                    )
                )
            if self.done_reason is not None and not isinstance(self.done_reason, str):
                self._schema(n, f"done_reason is a JSON {json_type(self.done_reason)}")

    def _error(self, n: int, error: object) -> None:
        words = cut(quote(error), 80)
        self.error_payload = self.error_payload or words
        self.log.add("provider-error", n, f"the stream carries an error line: {words}")

    def _schema(self, n: int, message: str, index: object = None) -> None:
        self.log.add("event-schema-violation", n, message, None, index)

    def _message(
        self, frame: Frame, message: dict[Any, Any], done: bool, entries: list[Entry] | None
    ) -> None:
        n = frame.number
        role = message.get("role", _MISSING)
        if role is not _MISSING:
            if self.role is _MISSING:
                self.role = role
            elif not self.role_noted:
                self.role_noted = True
                self.log.add(
                    "role-repeated",
                    n,
                    f"message.role {cut(quote(role), 20)} is sent on every line, as Ollama does: "
                    "clients that merge lines as deltas, concatenating every string, build "
                    '"assistantassistant…" (ollama/ollama#7626)',
                )
        for key, into, op in (
            ("content", self.content, ev.CONTENT),
            ("thinking", self.reasoning, ev.REASONING),
        ):
            value = message.get(key)
            if isinstance(value, str):
                if value:
                    into.append(value)
                    if self.events is not None:
                        self.events.append(FieldEvent(n, op, 0, None, key, None, value, -1, WORDS))
            elif value is not None:
                self._schema(n, f"message.{key} is a JSON {json_type(value)}: ignored")
        calls = message.get("tool_calls")
        if calls is None:
            return
        if type(calls) is not list:
            self._schema(n, f"message.tool_calls is a JSON {json_type(calls)}, not an array")
            return
        if not calls:
            return
        made = 0
        for entry in entries if entries is not None else line_calls(frame, calls):
            for kind, words in entry.problems:
                if kind == "args-string":
                    self.log.add("args-string", n, words, 0, len(self.calls))
                else:
                    self._schema(n, words, len(self.calls) if entry.slot else None)
            slot = entry.slot
            if slot is None:
                continue
            k = slot.index = len(self.calls)
            self.calls.append(slot)
            made += 1
            if self.events is not None:
                self.events.append(FieldEvent(n, ev.NEW_CALL, 0, k, "", None, None, k, WORDS))
                for field, value in (("id", slot.id), ("name", slot.name)):
                    if value:
                        self.events.append(
                            FieldEvent(n, ev.SET, 0, k, field, None, value, k, WORDS)
                        )
                args = slot.arguments()
                self.events.append(FieldEvent(n, ev.SET, 0, k, "arguments", None, args, k, WORDS))
        if made and not done:
            self.log.add(
                "call-before-done",
                n,
                "the calls come in a done: false line before the final one, as current Ollama "
                "sends them: a client that reads calls only from the done: true line loses them",
            )


@record(slots=True)
class Entry:
    """One `tool_calls` entry of a line: the call it makes (None: no call), and what
    robust says of it, as (kind, words)."""

    slot: Slot | None
    problems: list[tuple[str, str]]


def line_calls(frame: Frame, calls: list[Any]) -> list[Entry]:
    """What each entry of a line's `message.tool_calls` (`calls`, from its payload) makes,
    its arguments read exactly from the line's text. Every strategy reads calls so."""
    sent = exact_calls(frame)
    if sent is not None and len(sent) != len(calls):
        sent = None  # (a reading that does not align is no reading)
    n = frame.number
    return [
        _entry(n, entry, sent[j] if sent is not None else _MISSING) for j, entry in enumerate(calls)
    ]


def _entry(n: int, entry: object, sent: object) -> Entry:
    problems: list[tuple[str, str]] = []
    if type(entry) is not dict:
        return Entry(
            None, [("", f"a tool_calls entry is a JSON {json_type(entry)}, not an object: skipped")]
        )
    fn = entry.get("function")
    if type(fn) is not dict:
        what = "no function" if fn is None else f"a function that is a JSON {json_type(fn)}"
        return Entry(None, [("", f"a tool_calls entry has {what}: skipped")])
    name, fid = fn.get("name"), entry.get("id")
    for field, value, ok in (
        ("function.name", name, isinstance(name, str)),
        ("id", fid, isinstance(fid, str)),
    ):
        if value is not None and not ok:
            problems.append(("", f"a call's {field} is a JSON {json_type(value)}: ignored"))
    slot = Slot(0, 0, n, fid if isinstance(fid, str) else "", name if isinstance(name, str) else "")
    slot.type = "function"
    slot.fragments = 1
    args = fn.get("arguments", _MISSING)
    if isinstance(args, str):
        slot.parts.append(args)
        problems.append(
            (
                "args-string",
                f"the call {cut(quote(name), 30)} carries its arguments as a JSON string "
                f"({cut(quote(args), 40)}), not an object: a proxy re-encoded them; robust keeps "
                "the string, the ollama client refuses the line",
            )
        )
    elif type(args) is dict:
        fn_sent = sent.get("function") if isinstance(sent, exact.Pairs) else None
        text = (
            arguments_text(fn_sent.get("arguments")) if isinstance(fn_sent, exact.Pairs) else None
        )
        if text is None:
            text = compact(args)
        if text is None:
            slot.value = args
            problems.append(("", "a call's arguments nest deeper than can be written back"))
        else:
            slot.parts.append(text)
    elif args is not _MISSING and args is not None:
        slot.parts.append(compact(args) or "")
        problems.append(
            ("", f"a call's arguments are a JSON {json_type(args)}, not an object: kept as sent")
        )
    return Entry(slot, problems)
