"""What the agent sent: a request's messages, tools and parameters, with the contract's
findings shown on the message (and the call) they are about.

Each echoed tool-call id is matched to the earlier stream that assembled it, each tool
result to the call it answers. Everything from the recording goes through `visible` or
`quote`: a request is untrusted input.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field

from rich.text import Text

from ..core.contract import KINDS as CONTRACT_KINDS
from ..text import cut, quote, visible

_AT_MESSAGE = re.compile(r"\bmessage (\d+)\b")
MARK = {"error": "✗", "warning": "!", "info": "i"}
STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


@dataclass(slots=True)
class Placed:
    """The findings of one request, each placed on the message (and call id) it is about."""

    on_message: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    on_call: dict[tuple[int, str], list[tuple[str, str]]] = field(default_factory=dict)
    unplaced: list[tuple[str, str]] = field(default_factory=list)


def place(messages: list, findings: list[tuple[str, str]]) -> Placed:
    """Put each (kind, message) finding where it is: a tool result's findings name their
    message; a sent-back call's findings are about the last assistant turn with calls (the
    one the contract compares) and name the id it carries."""
    placed = Placed()
    turns = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, dict) and m.get("role") == "assistant" and _calls(m)
    ]
    for kind, words in findings:
        if kind.startswith("tool-result-"):
            at = _AT_MESSAGE.search(words)
            if at is not None and int(at.group(1)) < len(messages):
                placed.on_message.setdefault(int(at.group(1)), []).append((kind, words))
                continue
        elif kind.startswith("tool-call-") and turns:
            last = turns[-1]
            ids = [_call_id(tc) for tc in _calls(messages[last])]
            hit = next((i for i in ids if f"carries {i}" in words), None)
            if hit is None:  # name, arguments: the message names the id it went back with
                hit = next((i for i in ids if i in words), None)
            if hit is not None:
                placed.on_call.setdefault((last, hit), []).append((kind, words))
            else:  # a dropped call: it is missing from that message
                placed.on_message.setdefault(last, []).append((kind, words))
            continue
        placed.unplaced.append((kind, words))
    return placed


def _calls(message: dict) -> list:
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _call_id(tc: object) -> str:
    """A sent call's id as the contract's messages quote it."""
    return quote(tc.get("id") if isinstance(tc, dict) else None)


def _finding(text: Text, kind: str, words: str, indent: str) -> None:
    severity = CONTRACT_KINDS.get(kind, ("error", ""))[0]
    text.append(f"{indent}{MARK.get(severity, '✗')} {kind}: ", style=STYLE.get(severity, ""))
    text.append(f"{visible(words)}\n", style=STYLE.get(severity, ""))


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


def conversation(
    body: object, findings: list[tuple[str, str]], earlier: dict[str, tuple[int, object]]
) -> Text:
    """The request `body` as a person reads it. `findings`: this request's contract
    findings (kind, words); `earlier`: every id an earlier stream assembled, as quoted
    text, -> (that exchange, the call's name)."""
    text = Text()
    if not isinstance(body, dict):
        text.append("The request body is not a JSON object.\n", style="yellow")
        return text
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    placed = place(messages, findings)
    if findings:
        text.append("Contract\n", style="bold")
        for kind, words in findings:
            _finding(text, kind, words, "  ")
        text.append("\n")
    params = {k: v for k, v in body.items() if k not in ("messages", "tools")}
    text.append("Parameters  ", style="bold")
    text.append(
        " · ".join(f"{visible(str(k))}={quote(v, 60)}" for k, v in params.items()) or "none"
    )
    text.append("\n")
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        text.append(f"Tools ({len(tools)})\n", style="bold")
        for tool in tools:
            fn = tool.get("function") if isinstance(tool, dict) else None
            fn = fn if isinstance(fn, dict) else (tool if isinstance(tool, dict) else {})
            text.append(f"  {quote(fn.get('name'))}", style="bold cyan")
            if isinstance(fn.get("description"), str):
                text.append(f"  {cut(visible(fn['description']), 100)}", style="dim")
            text.append("\n")
    text.append(f"Messages ({len(messages)})\n", style="bold")
    answered: dict[str, int] = {}  # quoted id -> the message that called it
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            text.append(f"[{i}] {quote(m, 200)}\n", style="yellow")
            continue
        role = m.get("role")
        text.append(f"[{i}] {visible(str(role))}", style="bold magenta")
        if role == "tool":
            cid = quote(m.get("tool_call_id"))
            text.append(" answers ")
            if cid in answered:
                text.append(cid, style="green")
                text.append(f" (called in message {answered[cid]})", style="dim")
            else:
                text.append(cid, style="bold red")
                text.append(" (no call before it has this id)", style="red")
        text.append("\n")
        if m.get("content") is not None:
            body_text = _content(m.get("content"))
            text.append(f"    {body_text.replace(chr(10), chr(10) + '    ')}\n")
        for tc in _calls(m) if role == "assistant" else []:
            _call(text, tc, i, earlier, placed)
            answered[_call_id(tc)] = i
        for kind, words in placed.on_message.get(i, []):
            _finding(text, kind, words, "    ")
    for kind, words in placed.unplaced:
        _finding(text, kind, words, "")
    return text


def _call(
    text: Text, tc: object, i: int, earlier: dict[str, tuple[int, object]], placed: Placed
) -> None:
    tc = tc if isinstance(tc, dict) else {}
    fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc.get("custom")
    fn = fn if isinstance(fn, dict) else {}
    cid = _call_id(tc)
    found = placed.on_call.get((i, cid), [])
    text.append("    call id ")
    if found:
        text.append(cid, style="bold white on red")
    elif cid in earlier:
        text.append(cid, style="green")
    else:
        text.append(cid, style="yellow")
    text.append(f" {quote(fn.get('name'))}", style="bold cyan")
    args = fn.get("arguments", fn.get("input"))
    text.append(f" {visible(args) if isinstance(args, str) else quote(args)}\n")
    if cid in earlier:
        ex, name = earlier[cid]
        text.append(f"      = call {quote(name)} of exchange {ex}'s stream\n", style="green dim")
    elif not found:
        text.append("      no earlier stream in this recording assembled this id\n", style="yellow")
    for kind, words in found:
        _finding(text, kind, words, "      ")


def response(status: int | None, headers: list, body: bytes, error: str | None) -> Text:
    """A non-stream exchange's response: why it failed, its head, its body (JSON indented)."""
    text = Text()
    if error:
        text.append(f"✗ {visible(error)}\n\n", style="bold red")
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
