"""What the agent sent: a request's history (messages, tools, parameters), with the
contract's findings shown on the message (and the call) they are about.

Each dialect reads its request into a `History` (streamscope.core.history); this module
shows any of them the same way. Each echoed tool-call id is matched to the earlier stream
that assembled it, each tool result to the call it answers. Everything from the recording
goes through `visible` or `quote`: a request is untrusted input.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import field

from rich.text import Text

from ..analysis.driver import RequestFinding
from ..core.history import History, SentCall, Turn
from ..core.record import record
from ..marks import MARK, STYLE
from ..text import cut, param, plural, quote, visible


@record(slots=True)
class Placed:
    """The findings of one request, each placed on the message (and call id) it is about."""

    on_message: dict[int, list[RequestFinding]] = field(default_factory=dict)
    on_call: dict[tuple[int, str], list[RequestFinding]] = field(default_factory=dict)
    unplaced: list[RequestFinding] = field(default_factory=list)


def call_key(cid: object, name: object) -> str:
    """How a call sent back is matched to the stream that assembled it: by its id, as
    quoted text; by its name when it has none (a Gemini call, or one whose id was "")."""
    return quote(cid) if cid not in ("", None) else f"name {quote(name)}"


def _about(call: object) -> str:
    """A finding's call (contract.about: an id, or ("name", name) for one sent back with
    none) as call_key gives it."""
    if isinstance(call, (list, tuple)) and len(call) == 2 and call[0] == "name":
        return call_key("", call[1])
    return call_key(call, None)


def place(findings: list[RequestFinding]) -> Placed:
    """Put each finding where it points: a call sent back with other values on that call
    (by the id it went back with), anything else on its message."""
    placed = Placed()
    for f in findings:
        if f.at_message is None:
            placed.unplaced.append(f)
        elif f.kind.startswith(("tool-call-", "thought-")) and f.kind != "tool-call-dropped":
            placed.on_call.setdefault((f.at_message, _about(f.call)), []).append(f)
        else:  # a dropped call is missing from its message; a result's finding is on it
            placed.on_message.setdefault(f.at_message, []).append(f)
    return placed


def _finding(text: Text, f: RequestFinding, indent: str) -> None:
    text.append(f"{indent}{MARK[f.severity]} {f.kind}: ", style=STYLE[f.severity])
    text.append(f"{visible(f.message)}\n", style=STYLE[f.severity])


def _content(value: object) -> str:
    """A message's content: text as sent, parts (a list) as their text or JSON."""
    if isinstance(value, str):
        return visible(value, lines=True)
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(visible(part["text"], lines=True))
            else:
                parts.append(quote(part))
        return "\n".join(parts)
    return quote(value)


def _indented(text: Text, value: object, indent: str) -> None:
    shown = _content(value)
    text.append(f"{indent}{shown.replace(chr(10), chr(10) + indent)}\n")


def _answer(text: Text, answered: dict[str, object], cid: str) -> None:
    """The id (a Gemini result without one: the name) a result answers: green with the
    message (or continued response) that called it, or red."""
    if cid in answered:
        text.append(cid, style="green")
        text.append(f" (called in {answered[cid]})", style="dim")
    else:
        text.append(cid, style="bold red")
        text.append(" (no call before it has this id)", style="red")


def conversation(
    history: History | None,
    findings: list[RequestFinding],
    earlier: dict[str, tuple[str, object, object]],
) -> Text:
    """The request's `history` as a person reads it. `findings`: this request's contract
    findings; `earlier`: every id an earlier stream assembled, as quoted text, -> (that
    stream in words, "exchange 3's stream", the call's name, its response's id)."""
    text = Text()
    if history is None:
        text.append("The request body is not a JSON object.\n", style="yellow")
        return text
    placed = place(findings)
    if findings:
        text.append("Contract\n", style="bold")
        for f in findings:
            _finding(text, f, "  ")
        text.append("\n")
    params = history.params
    text.append("Parameters  ", style="bold")
    text.append(" · ".join(param(k, v, 60) for k, v in params.items()) or "none")
    text.append("\n")
    if history.system is not None:
        text.append(f"{history.words.system}\n", style="bold")
        _indented(text, history.system, "    ")
    if history.tools:
        _tools(text, history)
    answered: dict[str, object] = {}  # quoted id -> where it was called, in words
    if history.previous is not None:
        text.append("Continues ", style="bold")
        text.append(f"response {quote(history.previous)}")
        made = [cid for cid, (_, _, rid) in earlier.items() if rid == history.previous]
        if made:
            text.append(f" (its calls: {', '.join(made)})\n", style="green dim")
        else:
            text.append(" (not in this recording: its calls cannot be checked)\n", style="yellow")
        for cid in made:
            answered[cid] = f"response {quote(history.previous)}"
    text.append(f"{history.words.turns} ({len(history.turns)})\n", style="bold")
    for i, turn in enumerate(history.turns):
        _turn(text, i, turn, answered, earlier, placed, history.words.turn)
    for f in placed.unplaced:
        _finding(text, f, "")
    return text


def _tools(text: Text, history: History) -> None:
    """The tools the request declares, a namespace's own indented under it, each said
    where it is declared when that is an input item and not the tools list."""
    tools = history.tools
    spaces = sum(t.namespace for t in tools)
    count = f"{len(tools) - spaces}" + (f", in {plural(spaces, 'namespace')}" if spaces else "")
    text.append(f"Tools ({count})\n", style="bold")
    for tool in tools:
        text.append("  " * (len(tool.within) + 1))
        text.append(quote(tool.name), style="bold magenta" if tool.namespace else "bold cyan")
        if tool.namespace:
            text.append(" namespace", style="magenta")
        if tool.item is not None and not tool.within:
            text.append(f" (in {history.words.turn} {tool.item})", style="dim")
        if isinstance(tool.description, str):
            text.append(f"  {cut(visible(tool.description), 100)}", style="dim")
        text.append("\n")


def _turn(
    text: Text,
    i: int,
    turn: Turn,
    answered: dict[str, object],
    earlier: dict[str, tuple[str, object, object]],
    placed: Placed,
    word: str,
) -> None:
    # where the turn stands in the request: its index, or the entries it gathers
    first, last = turn.items or (i, i)
    label = f"[{first}]" if first == last else f"[{first}-{last}]"
    i = first  # findings point at it by its first entry
    if turn.role == "?":
        text.append(f"{label} {quote(turn.raw, 200)}\n", style="yellow")
        return
    if turn.raw is not None:  # an item that is no message, call or result (reasoning...)
        text.append(f"{label} {visible(turn.role)} ", style="bold magenta")
        text.append(f"{quote(turn.raw, 160)}\n", style="dim")
        return
    text.append(f"{label} {visible(turn.role)}", style="bold magenta")
    results = turn.results
    if len(results) == 1 and turn.content is None:  # a message that is one result
        text.append(" answers ")
        _answer(text, answered, quote(results[0].answers))
        text.append("\n")
        if results[0].content is not None:
            _indented(text, results[0].content, "    ")
    else:
        text.append("\n")
        if turn.content is not None:
            _indented(text, turn.content, "    ")
        for result in results:
            text.append("    answers ")
            _answer(text, answered, quote(result.answers))
            text.append("\n")
            if result.content is not None:
                _indented(text, result.content, "      ")
    for call in turn.calls or ():
        _call(text, call, i, earlier, placed)
        for answer in call.answered_by():
            answered[quote(answer)] = f"{word} {i}"
    for f in placed.on_message.get(i, []):
        _finding(text, f, "    ")


def _call(
    text: Text,
    call: SentCall,
    i: int,
    earlier: dict[str, tuple[str, object, object]],
    placed: Placed,
) -> None:
    cid, key = quote(call.id), call_key(call.id, call.name)
    found = placed.on_call.get((i, key), [])
    text.append("    call id ")
    if found:
        text.append(cid, style="bold white on red")
    elif key in earlier:
        text.append(cid, style="green")
    else:
        text.append(cid, style="yellow")
    text.append(f" {quote(call.name)}", style="bold cyan")
    args = call.arguments
    text.append(f" {visible(args) if isinstance(args, str) else quote(args)}\n")
    if call.signature is not None:  # a Gemini thoughtSignature, sent back with the call
        text.append(f"      thoughtSignature {quote(call.signature, 48)}\n", style="dim")
    if key in earlier:
        where, name, _ = earlier[key]
        text.append(f"      = call {quote(name)} of {where}\n", style="green dim")
    elif not found:
        what = "this id" if call.id not in ("", None) else "a call of this name"
        text.append(f"      no earlier stream in this recording assembled {what}\n", style="yellow")
    for f in found:
        _finding(text, f, "      ")


def response(status: int | None, headers: list, body: bytes, error: str | None) -> Text:
    """A non-stream exchange's response: why it failed, its head, its body (JSON indented)."""
    text = Text()
    if error:
        text.append(f"{MARK['error']} {visible(error)}\n\n", style=STYLE["error"])
    text.append(f"Response  HTTP {status if status is not None else '(none)'}\n", style="bold")
    for name, value in headers:
        text.append(f"  {visible(str(name))}: ", style="dim")
        text.append(f"{visible(str(value))}\n")
    if body:
        shown = body.decode("utf-8", "replace")
        with contextlib.suppress(ValueError, RecursionError):
            shown = json.dumps(json.loads(shown), indent=2, ensure_ascii=False)
        text.append("\n")
        text.append(visible(shown, lines=True))
        text.append("\n")
    else:
        text.append("  (no body)\n", style="dim")
    return text
