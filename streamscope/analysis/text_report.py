"""`inspect` for people: the same facts as --json, in plain words (styled on a terminal,
plain in pipes: streamscope/console.py)."""

from __future__ import annotations

from collections import Counter

from ..console import Console, cell_len, escape, pad
from ..core.anomalies import ERROR, INFO, WARNING
from ..core.calls import Call, StrategyError, signature_bytes
from ..core.engine import StreamResult, value_key
from ..core.events import response_number
from ..core.history import Tool
from ..core.links import link, pasteable, stream_link
from ..core.results import flag, no_flag, ran
from ..dialects import dialect
from ..framing import SSE, framing
from ..inputs import RECORDED, ExchangeInfo
from ..marks import MARK, STYLE, counted, label
from ..text import as_text, cut, one_line, plural, quote, times, visible
from .driver import Analysis

# a severity in a column of its own width: "✗ error  ", "! warning"
_MARK = {s: f"[{STYLE[s]}]{label(s):<9}[/]" for s in (ERROR, WARNING, INFO)}
_LABEL = {s: f"{label(s):<9}" for s in (ERROR, WARNING, INFO)}
# A table of more rows than this that does not fit the width is written a row a line, its
# lines wrapped by the terminal: a reader of thousands of calls wants each on one line.
FOLDED_ROWS = 500


def _safe(text: str) -> str:
    """Recorded text for the console: control characters shown, markup escaped."""
    return escape(visible(text))


def _args(call: Call) -> str:
    a = call.arguments
    return a if isinstance(a, str) else quote(a)


def _chars(value: object) -> int:
    """How long a value is, as its reader counts it: a string's own characters (not its
    quoted, escaped display), any other JSON value's text."""
    return len(value) if isinstance(value, str) else len(quote(value))


def _span(first: int, last: int) -> str:
    """The frames a call came in: "4" for one, "4-9" for more."""
    return str(first) if first == last else f"{first}-{last}"


def _differing(value: object, robust: object) -> str:
    """`value` shown where it departs from `robust` (long strings: around the first difference)."""
    a, b = quote(value), quote(robust)
    if len(a) <= 40 and len(b) <= 40:
        return f"{a} (robust {b})"
    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    lo = max(0, k - 12)
    cut = lambda t: ("…" if lo else "") + t[lo : k + 24] + ("…" if len(t) > k + 24 else "")  # noqa: E731
    return f"{cut(a)} (robust {cut(b)}; {_chars(value)} vs {_chars(robust)} chars)"


def describe_difference(robust: list[Call], other: list[Call], by_value: bool = False) -> str:
    """What a strategy builds differently from robust, in one line (`by_value`: arguments
    that parse are compared as the JSON they hold)."""
    if len(other) != len(robust):
        names = ", ".join(f"{c.name or '?'}({cut(_args(c), 24)})" for c in other[:3])
        said = f"builds {plural(len(other), 'call')} where robust has {len(robust)}"
        return f"{said}: {names}" if names else said
    parts = []
    for i, (r, o) in enumerate(zip(robust, other, strict=True), 1):
        for field, rv, ov in (
            ("id", r.id, o.id),
            ("name", r.name, o.name),
            ("type", r.type, o.type),
            ("arguments", r.arguments, o.arguments),
        ):
            if field == "arguments" and by_value and value_key(r)[3] == value_key(o)[3]:
                continue
            if rv != ov:
                parts.append(f"call {i} {field} {_differing(ov, rv)}")
        if signature_bytes(r.signature) != signature_bytes(o.signature):
            # (a call's signature, which must go back with it: none is no value sent)
            ours = "none" if o.signature is None else quote(o.signature, 24)
            theirs = "none" if r.signature is None else quote(r.signature, 24)
            parts.append(f"call {i} signature {ours} (robust {theirs})")
    return "; ".join(parts[:3]) + (" …" if len(parts) > 3 else "")


def _where(info: ExchangeInfo | None) -> list[str]:
    """The request line, model and status of an exchange, as header bits."""
    bits = []
    if info is not None and info.url:
        path = info.url.split("://", 1)[-1]
        path = "/" + path.split("/", 1)[1] if "/" in path else path
        bits.append(_safe(f"{info.method} {path}"))
    if info is not None and info.model:
        bits.append(_safe(info.model))
    if info is not None and info.status is not None:
        bits.append(f"HTTP {info.status}")
    return bits


def _header(info: ExchangeInfo | None, s: StreamResult) -> str:
    told = dialect(s.dialect).title
    if s.framing != SSE:  # (SSE is what every stream was, and most are)
        told += f" in {framing(s.framing).title}"
    name = f"Exchange {s.exchange}" + ("" if s.turn is None else f", response {s.turn}")
    # a session's response: its session's line above gave the handshake
    bits = [f"[bold]{name}[/]", told, *(_where(info) if s.turn is None else [])]
    bits.append(plural(s.frames, "frame"))
    bits.append(f"ended {s.ended}")
    if s.finish_reason is not None:
        bits.append(f"{dialect(s.dialect).terms.finish} {_safe(str(s.finish_reason))}")
    return " · ".join(bits)


def _session_line(info: ExchangeInfo, responses: int) -> str:
    """A WebSocket session as a whole: its handshake, its responses, its messages."""
    assert info.session is not None
    bits = [f"[bold]Exchange {info.exchange}[/]", "WebSocket session", *_where(info)]
    bits.append(plural(responses, "response") if responses else "no response")
    bits.append(_safe(info.session.describe()))
    if info.end_reason is not None:
        bits.append(f"ended {_safe(info.end_reason)}")
    return " · ".join(bits)


def masked_note(n: int, redacted: int = 0) -> str:
    """What the recorder changed, said: the bytes are exact everywhere else."""
    said = []
    if n:
        said.append(
            f"{plural(n, 'value')} masked (secrets: credentials the requests carried, "
            "wherever they appear, key-shaped words, secret options)"
        )
    if redacted:
        said.append(f"{plural(redacted, 'request body value')} redacted by path (--redact-json)")
    return "; ".join([*said, "every other byte is as it came"])


def render(
    analysis: Analysis, console: Console, sdk_note: str | None = None, full: bool = False
) -> None:
    """`full`: arguments and tool results whole, not cut to a line."""
    infos = {i.exchange: i for i in analysis.exchanges}
    shown = plural(len(analysis.streams), "stream")
    if analysis.format in RECORDED:
        shown = plural(len(analysis.exchanges), "exchange") + ", " + shown
    console.print(f"[bold]streamscope[/] · {_safe(analysis.source)} ({analysis.format}, {shown})")
    for note in [*analysis.notes, *([sdk_note] if sdk_note else [])]:
        console.print(f"[cyan]i {_safe(note)}[/]")
    if analysis.masked or analysis.redacted:
        console.print(f"[cyan]i {masked_note(analysis.masked, analysis.redacted)}[/]")
    if analysis.stopped:
        stopped = _safe(analysis.stopped["message"])
        console.print(f"[{STYLE[WARNING]}]{MARK[WARNING]} {stopped}[/]")
    totals: Counter[str] = Counter()
    streams: dict[int, list[StreamResult]] = {}
    for s in analysis.streams:  # (a WebSocket session has one per response)
        streams.setdefault(s.exchange, []).append(s)
    # every exchange in order: a stream with its analysis, any other with what it answered
    for ex in sorted(streams.keys() | infos.keys()):
        info = infos.get(ex)
        if info is not None and info.session is not None:
            console.print()
            console.print(_session_line(info, len(streams.get(ex, []))))
        if ex not in streams:
            if info is not None and info.session is not None:
                continue  # a session that opened no response: its line says it all
            console.print()
            _plain_exchange(infos[ex], console)
            continue
        for s in streams[ex]:
            console.print()
            console.print(_header(infos.get(ex), s))
            tools = analysis.tools_of(s)
            if tools:
                console.print(f"  [dim]request tools ({_count(tools)}):[/] {_tools(tools)}")
            _stream(s, console, totals, full, analysis, analysis.source)
    if analysis.failures:
        console.print()
        console.print("[bold]Exchanges that failed[/] (not streams)")
        for f in analysis.failures:
            totals["error"] += 1
            info = infos.get(f.exchange)
            where = (
                f" {_safe(info.method)} {_safe(info.url.split('://', 1)[-1])}"
                if info and info.url
                else ""
            )
            console.print(
                f"  {_MARK['error']} exchange {f.exchange}{where}  {_safe(f.message)}"
                f"  {_safe(pasteable(link(analysis.source, f.exchange)))}"
            )
    if analysis.contract:
        console.print()
        console.print(
            "[bold]Conversation contract[/] (the request that continues a stream's conversation "
            "must carry its calls back unchanged)"
        )
        for finding in analysis.contract:
            totals[finding.severity] += 1
            console.print(
                f"  {_MARK[finding.severity]} exchange {finding.exchange}  [bold]{finding.kind}[/]  {_safe(finding.message)}"
                f"  {_safe(pasteable(link(analysis.source, finding.exchange, response=finding.turn)))}"
            )
    elif analysis.format in RECORDED and any(s.tool_calls for s in analysis.streams):
        console.print()
        if analysis.compared:
            console.print(
                "[bold]Conversation contract[/]: every assembled call came back unchanged, every result matched."
            )
        else:  # nothing came back: nothing to say it holds
            console.print(
                "[bold]Conversation contract[/]: not checked, no request in the recording "
                "continues a stream that made calls."
            )
    console.print()
    summary = (
        ", ".join(counted(totals[k], k) for k in (ERROR, WARNING, INFO) if totals[k])
        or "no anomalies"
    )
    differ = sorted(
        {n for s in analysis.streams for n in s.strategies if n != "robust" and s.differs(n)}
    )
    raise_ = sorted(
        {
            n
            for s in analysis.streams
            for n, got in s.strategies.items()
            if isinstance(got, StrategyError)
        }
    )
    if differ:
        summary += f"; clients that build other calls: {', '.join(differ)}"
    if raise_:
        summary += f"; clients that raise: {', '.join(raise_)}"
    if not differ and not raise_:
        summary += "; every client builds the same calls"
    console.print(f"[bold]Summary:[/] {summary}")


def _plain_exchange(info: ExchangeInfo, console: Console) -> None:
    """An exchange that is not a stream: its status and the start of its body."""
    bits = [f"[bold]Exchange {info.exchange}[/]", "not a stream", *_where(info)]
    if info.status is None:
        bits.append("no response")
    if info.end_reason is not None:
        bits.append(f"ended {_safe(info.end_reason)}")
    console.print(" · ".join(bits))
    body = bytes(info.body or b"").decode("utf-8", "replace")
    shown = " ".join(body.split())
    if shown:
        console.print(f"  body: {_safe(cut(shown, 160))}")
    elif info.status is not None:
        console.print("  no body")


def _stream(
    s: StreamResult,
    console: Console,
    totals: Counter[str],
    full: bool = False,
    analysis: Analysis | None = None,
    source: str | None = None,
) -> None:
    """`source`: the file the links beside each anomaly name (None: no links)."""
    terms = dialect(s.dialect).terms
    several = len(s.choices) > 1
    for choice in s.choices:
        label = f"{terms.container} {choice.index} " if several else ""
        if several:
            finish = (
                f"{terms.finish} {_safe(str(choice.finish_reason))}"
                if choice.finish_reason is not None
                else f"no {terms.finish}"
            )
            console.print(f"  {terms.container} {choice.index}: {finish}")
        for name, text in (
            ("content", choice.content),
            ("reasoning", choice.reasoning_content),
            ("refusal", choice.refusal),
        ):
            if text:
                console.print(f"  {label}{name}: {_safe(cut(quote(text), 100))}")
    if s.tool_calls:
        # a custom call's type says its "arguments" are free-text input, never JSON
        columns = ("#", terms.container, terms.key, "id", "type", "name", "arguments", "frames")
        rows = [
            (
                str(i),
                # the Responses and Realtime APIs': the response the call is in
                str(response_number(s.turn, c.choice)) if terms.item_ids else str(c.choice),
                visible(quote(c.index)),
                visible(quote(c.id)),
                visible(quote(c.type)),
                visible(quote(c.name)),
                visible(_args(c) if full else cut(_args(c), 70)),
                f"{_span(c.first_frame, c.last_frame)} ({plural(c.fragments, 'fragment')})",
            )
            for i, c in enumerate(s.tool_calls, 1)
        ]
        console.print("  [bold]Tool calls[/] (streamscope's robust reading)")
        console.table(columns, rows, FOLDED_ROWS)
    else:
        console.print("  no tool calls")
    for i, fix in enumerate(s.repairs, 1):
        if fix is not None:
            guess = "changed meaning" if fix.best.changed_meaning else "kept meaning"
            console.print(
                f"  [bold]Repair[/] call {i}: crow ({fix.crow.action}) → {_safe(cut(fix.crow.result, 50))}; "
                f"best ({fix.best.action}, {guess}) → {_safe(cut(fix.best.result, 50))}"
            )
    if s.tool_calls and analysis is not None:
        _results(s, analysis, console, full)
    if s.anomalies:
        console.print("  [bold]Anomalies[/]")
        out = []  # (one write: a print costs more than a line)
        for a in s.anomalies:
            totals[a.severity] += 1
            line = f"    {console.style(_LABEL[a.severity], STYLE[a.severity])} frame {a.frame:<4} "
            line += f"{console.style(times(a.kind, a.count), 'bold')}  {visible(a.text())}"
            if source is not None:
                link = stream_link(source, s.exchange, s.turn, a.frame, s.frames)
                line += f"  {visible(pasteable(link))}"
            out.append(line)
        console.file.write("\n".join(out) + "\n")
    console.print("  [bold]What each client builds[/]")
    width = max((len(n) for n in s.strategies if n != "robust"), default=0)
    for name, got in s.strategies.items():
        if name == "robust":
            continue
        if isinstance(got, StrategyError):
            # an SDK's message as a tool result's text is shown: on one line, a line
            # break as ↵, every other control character escaped
            line = f"[red]raises {_safe(one_line(got.error))} at frame {got.frame}[/]"
            if got.why is not None:
                line += f"\n    {'':<{max(width, 13)}} [dim]why:[/] {_safe(got.why)}"
        elif not isinstance(got, list):
            line = f"[red]not available: {_safe(str(got))}[/]"
        elif s.differs(name):
            line = (
                f"[yellow]differs:[/] {_safe(describe_difference(s.tool_calls, got, s.by_value))}"
            )
        else:
            line = "same as robust"
        console.print(f"    {name:<{max(width, 13)}} {line}")


def _count(tools: list[Tool]) -> str:
    spaces = sum(t.namespace for t in tools)
    return f"{len(tools) - spaces}" + (f", in {plural(spaces, 'namespace')}" if spaces else "")


def _tools(tools: list[Tool]) -> str:
    """The request's tools on one line, a namespace's own in brackets after its name:
    `"functions" namespace ["exec", "exec_command"]`, with the input item that declares
    a tool outside the tools list."""
    out: list[str] = []  # the text of the level being written, innermost last
    stack: list[list[str]] = [out]
    for t in tools:
        while len(stack) > len(t.within) + 1:  # a namespace's tools ended
            inner = stack.pop()
            stack[-1][-1] += f" \\[{', '.join(inner)}]"
        shown = _safe(quote(t.name))
        if t.namespace:
            shown += " namespace"
        if t.item is not None and not t.within:
            shown += f" (input item {t.item})"
        stack[-1].append(shown)
        if t.namespace:
            stack.append([])
    while len(stack) > 1:
        inner = stack.pop()
        stack[-1][-1] += f" \\[{', '.join(inner)}]"
    return ", ".join(out)


def _results(s: StreamResult, analysis: Analysis, console: Console, full: bool) -> None:
    """What the request that continues the stream sent for each call, and when."""
    answer = analysis.answer_of(s)
    if answer is None:
        if s.turn is not None:
            why = "no later client message of the session answers these calls"
        elif analysis.format in RECORDED:
            why = "no later request in the recording answers these calls"
        else:
            why = "the input holds the stream only, no request after it"
        console.print(f"  [bold]Tool results[/]: none ({why}); tool run time unknown")
        return
    ran_for = ran(answer.gap_ns, answer.timing)
    console.print(f"  [bold]Tool results[/] sent by {answer.by()} · {ran_for}")
    width = len(str(len(answer.results)))
    pairs = list(zip(s.tool_calls, answer.results, strict=True))
    # the columns line up as the call table's do: each as wide as its widest printed
    # (made visible, not yet markup-escaped) cell, in terminal columns
    names = [quote(call.name) for call, _ in pairs]
    flags = [
        None if got is None else flag(got.error, got.error_field, got.error_said)
        for _, got in pairs
    ]
    wide = {
        "name": max(map(cell_len, names)),
        "flag": max((cell_len(f) for f in flags if f is not None), default=0),
        "at": max((cell_len(got.words()) for _, got in pairs if got is not None), default=0),
    }
    for i, ((_, got), name, said) in enumerate(zip(pairs, names, flags, strict=True), 1):
        head = f"    {i:>{width}} {escape(pad(name, wide['name']))}"
        if got is None or said is None:
            console.print(f"{head}  [{STYLE[WARNING]}]no result answers it[/]")
            continue
        style = STYLE[ERROR] if got.error is True else "dim"
        said = f"[{style}]{escape(pad(said, wide['flag']))}[/]"
        if full:  # whole, its lines indented under the call
            text = as_text(got.content)  # what the one-line view shows, whole
            shown = text if text is not None else quote(got.content)
            console.print(f"{head}  {said}  [dim]{got.words()}[/]")
            indent = " " * (width + 6)
            for line in visible(shown, lines=True).split("\n"):
                console.print(f"{indent}{escape(line)}")
        else:
            text = _safe(one_line(got.content, 100))
            console.print(f"{head}  {said}  [dim]{pad(got.words(), wide['at'])}[/]  {text}")
    note = no_flag(answer.results)
    if note is not None:
        console.print(f"    [dim]({note})[/]")
