"""The contract's `inspect --json` shape, built from engine results (no I/O, no Rich)."""

from __future__ import annotations

from typing import Any

from . import jsonio
from .calls import Call, StrategyError, arguments_text
from .contract import Finding
from .engine import StreamResult
from .history import Tool
from .links import link, stream_link
from .repair import Repair
from .results import Answer

SCHEMA = 1


def call_json(call: Call, repair: Repair | None | bool = False) -> dict[Any, Any]:
    out: dict[str, object] = {
        "choice": call.choice,
        "index": call.index,
        "id": call.id,
        "type": call.type,
        "name": call.name,
        "arguments": arguments_text(call.arguments),
        "fragments": call.fragments,
        "first_frame": call.first_frame,
        "last_frame": call.last_frame,
    }
    if call.item_id is not None:  # a dialect with two ids per call says both
        out["item_id"] = call.item_id
    if call.signature is not None:  # a Gemini call's, to be sent back verbatim
        out["thought_signature"] = call.signature
    if repair is not False:
        out["repair"] = repair.to_json() if isinstance(repair, Repair) else None
    return out


def strategy_json(result: StreamResult, name: str) -> dict[Any, Any]:
    got = result.strategies[name]
    if isinstance(got, StrategyError):
        out: dict[str, object] = {"error": got.error, "frame": got.frame}
        if got.why is not None:  # beyond the contract (fields may be added)
            out["why"] = got.why
        return out
    if not isinstance(got, list):  # not modelled and no fallback ran
        return {"error": f"{type(got).__name__}: {got}", "frame": 0}
    return {"tool_calls": [call_json(c) for c in got], "differs": result.differs(name)}


def tool_json(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "namespace": tool.namespace,
        "within": list(tool.within),
        "input_item": tool.item,
    }


def stream_json(
    result: StreamResult,
    answer: Answer | None = None,
    tools: list[Tool] | None = None,
    requested: bool = False,
) -> dict[Any, Any]:
    """`requested`: the input holds the requests (a recording, a HAR), so the stream has
    `continued_by`, `request_tools` and each call a `result` (null where none); `answer`:
    the request that continues the stream (core/results.py); `tools`: those its request
    declares, a session response's those in force for it (None: it has no request)."""
    results = answer.results if answer is not None else [None] * len(result.tool_calls)
    calls = [call_json(c, r) for c, r in zip(result.tool_calls, result.repairs, strict=True)]
    if requested:  # each call's result, as the request that continues the stream sent it
        for call, got in zip(calls, results, strict=True):
            call["result"] = got.to_json() if got is not None else None
    out: dict[str, object] = {
        "exchange": result.exchange,
        **({} if result.turn is None else {"turn": result.turn}),
        "frames": result.frames,
        "ended": result.ended,
        "dialect": result.dialect,
        "framing": result.framing,
        "finish_reason": result.finish_reason,
        "content": result.content,
        "reasoning_content": result.reasoning_content,
        "tool_calls": calls,
        "strategies": {
            name: strategy_json(result, name) for name in result.strategies if name != "robust"
        },
        "anomalies": [a.to_json() for a in result.anomalies],
    }
    # Beyond the contract (fields may be added): the request that continues the stream
    # and the tools the stream's request declares (inputs that hold requests), a refusal,
    # every choice when n > 1.
    if requested:
        out["continued_by"] = answer.to_json() if answer is not None else None
        out["request_tools"] = [tool_json(t) for t in tools] if tools is not None else None
    first = result.choices[0] if result.choices else None
    if first is not None and first.refusal:
        out["refusal"] = first.refusal
    if len(result.choices) > 1:
        out["choices"] = [c.to_json() for c in result.choices]
    return out


def dumps_json(doc: object, indent: bool = True) -> bytes:
    """`doc` as JSON bytes (inspect --json, diff --json): written by core/jsonio.dumps, so a
    value read from a stream that orjson cannot write (a lone surrogate, an int past 64
    bits, nesting past 255 levels) is written too, and safe to print: a recording's C1
    controls and bidi overrides as `\\u0085`-style escapes, the same strings read back."""
    return jsonio.dumps(doc, indent=indent, shown=True)


def report_json(
    source: str,
    fmt: str,
    streams: list[StreamResult],
    contract: list[Finding],
    stopped: dict[Any, Any] | None = None,
    failed: list[dict[Any, Any]] | None = None,
    notes: list[str] | None = None,
    sdk_versions: dict[str, str | None] | None = None,
    masked: int = 0,
    sdk_verified: dict[str, str] | None = None,
    sdk_note: str | None = None,
    answers: dict[int, Answer] | None = None,
    tools: dict[int, list[Tool]] | None = None,
    requested: bool = False,
    turn_answers: dict[tuple[int, int], Answer] | None = None,
    turn_tools: dict[tuple[int, int], list[Tool] | None] | None = None,
    redacted: int = 0,
) -> dict[Any, Any]:
    """`answers`: by stream exchange, the request that continues it (core/results.py);
    `turn_answers`: by (exchange, turn), what a session's client messages sent for a
    response's calls; `tools`: by exchange, the tools its request declares, `turn_tools`
    by (exchange, turn) those in force for a session's response; `requested`:
    the input holds requests (a recording, a HAR: stream_json)."""
    answers, tools, turn_answers = answers or {}, tools or {}, turn_answers or {}
    turn_tools = turn_tools or {}
    out: dict[str, object] = {
        "schema": SCHEMA,
        "source": source,
        "format": fmt,
        # The SDK releases the SDK strategies stand for (`openai_sdk_version` is the
        # contract's; the others are beyond it, as fields may be added).
        **(sdk_versions or {"openai_sdk_version": None}),
        # ... and the releases their emulations reproduce, by strategy name (additive)
        **({"sdk_verified": sdk_verified} if sdk_verified else {}),
        "streams": [
            stream_json(
                s,
                answers.get(s.exchange)
                if s.turn is None
                else turn_answers.get((s.exchange, s.turn)),
                tools.get(s.exchange) if s.turn is None else turn_tools.get((s.exchange, s.turn)),
                requested,
            )
            for s in streams
        ],
        "contract": [
            {**f.to_json(), "link": link(source, f.exchange, response=f.turn)} for f in contract
        ],
    }
    # each finding's link (core/links.py), as the text beside it prints it (additive)
    for s, doc in zip(streams, out["streams"], strict=True):  # type: ignore[call-overload]
        for a, entry in zip(s.anomalies, doc["anomalies"], strict=True):
            entry["link"] = stream_link(source, s.exchange, s.turn, a.frame, s.frames)
    if stopped is not None:
        out["stopped_at"] = stopped
    if failed:
        out["failed_exchanges"] = failed
    if sdk_note:  # the installed SDK differs from the one an emulation reproduces
        out["sdk_note"] = sdk_note
    if notes:  # facts about the file itself (a byte order mark), info level
        out["notes"] = notes
    if masked:  # values the recorder masked (secrets): said, never silently changed
        out["masked"] = masked
    if redacted:  # request body values --redact-json replaced: said as masked is
        out["redacted"] = redacted
    return out
