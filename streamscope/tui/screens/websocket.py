"""A WebSocket session: every message in order, client and server, under the response
each belongs to, and the contract's findings across its responses."""

from __future__ import annotations

import contextlib
import json

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ...analysis.driver import ExchangeSummary
from ...core.frames import Frame
from ...dialects import dialect
from ...framing.session import WsMessage
from ...inputs import Exchange
from ...inputs.session import Session as WsSession
from ...marks import MARK, STYLE
from ...text import plural, visible
from ..messages import OpenTurn
from ..session import Session
from ..session_rows import Layout, Row, Shown, close_words, layout, shown
from ..widgets import worst_of
from ..widgets.ask_line import AskLine, number_answered
from ..widgets.key_footer import KeyFooter
from ..widgets.message_list import MessageList
from .bindings import SESSION

FINDINGS_SHOWN = 3  # above the messages; each response's own are on its request (r)
DETAIL_BYTES = 4096  # of the selected message, shown below the list


class SessionScreen(Screen):
    """One WebSocket session; Enter on a response's message opens that response's stream
    at that message."""

    BINDINGS = SESSION

    def __init__(
        self, session: Session, exchange: Exchange, ws: WsSession, laid: Layout | None = None
    ) -> None:
        """`laid`: the session's lines, made in a worker (made here when not given)."""
        super().__init__()
        self.session = session
        self.exchange = exchange
        self.ws = ws
        laid = laid if laid is not None else layout(ws.messages, ws.turns)
        self.owned, self.rows = laid.owned, laid.rows
        self._frames: dict[int, Frame] = {}  # message -> its frame in its turn
        for i, o in enumerate(self.owned):
            if o is not None and o[1]:
                self._frames[i] = ws.turns[o[0]].frames[o[1] - 1]
        self._shown: dict[int, Shown] = {}
        self._summarize = dialect(ws.dialect).summarize

    # -- what the rows show ----------------------------------------------------------------

    def shown(self, i: int) -> Shown:
        got = self._shown.get(i)
        if got is None:
            got = self._shown[i] = shown(
                self.ws.messages[i],
                self._frames.get(i),
                self._summarize,
                self.exchange.info.start_ns,
            )
        return got

    def heading(self, row: Row) -> Text:
        if row.turn is None:
            return Text("in no response", style="dim")
        t = self.ws.turns[row.turn]
        text = Text(f"response {t.turn}", style="bold")
        if row.again:
            text.append(" (continued)", style="bold")
            return text
        text.append(f" · {plural(len(t.frames), 'frame')}")
        summary = self._summary(t.turn)
        if summary is not None:
            text.append(f" · {plural(len(summary.calls), 'call')} · ")
            text.append_text(worst_of(summary))
        if not t.ended:
            text.append(" · its final event never came", style="yellow")
        return text

    def _summary(self, turn: int) -> ExchangeSummary | None:
        summaries = self.session.summaries
        row = summaries.get(self.exchange.number) if summaries else None
        return row.response(turn) if row is not None else None

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title")
        yield Static(self._facts(), id="session-facts")
        yield Static(
            Text("checking the contract across the recording …", style="dim"), id="contract"
        )
        yield Static(id="columns")
        yield MessageList(
            self.rows,
            self.ws.messages,
            self.shown,
            self.heading,
            self.exchange.info.start_ns,
            id="messages",
        )
        with VerticalScroll(id="message-scroll"):
            yield Static(id="message")
        yield AskLine()
        yield KeyFooter(compact=True)

    def _title(self) -> Text:
        turns = len(self.ws.turns)
        return Text(
            f"{visible(self.session.name)} · exchange {self.exchange.number} · WebSocket session"
            f" · {plural(turns, 'response')}",
            style="bold",
        )

    def _facts(self) -> Text:
        info = self.exchange.info
        path = visible(info.url.split("://", 1)[-1].split("?", 1)[0])
        path = "/" + path.split("/", 1)[1] if "/" in path else path
        told = dialect(self.ws.dialect).title if self.ws.dialect else "no dialect told"
        bits = [f"{visible(info.method)} {path}", told]
        if info.session is not None:
            bits.append(visible(info.session.describe()))
        bits.append(f"ended {visible(info.end_reason)}" if info.end_reason else "not ended yet")
        text = Text(" · ".join(bits), style="dim")
        if info.end_error:
            text.append(f": {visible(info.end_error)}", style="yellow")
        return text

    def on_resize(self) -> None:
        self.call_after_refresh(self._columns)

    def _columns(self) -> None:
        if self.is_attached:
            self.query_one("#columns", Static).update(self.query_one(MessageList).columns())

    def on_mount(self) -> None:
        messages = self.query_one(MessageList)
        messages.focus()
        first = self._first_message(0)
        messages.cursor = first if first is not None else 0
        self._show_message()
        self.session.when_analysed(self._analysed)

    def _analysed(self, summaries: dict) -> None:
        if not self.is_attached:
            return
        self.query_one(MessageList).refresh()
        self.query_one("#contract", Static).update(self._contract(summaries))

    def _contract(self, summaries: dict) -> Text:
        if self.session.analysis_error is not None:
            return Text(f"the contract was not checked: {self.session.analysis_error}", "yellow")
        mine = summaries.get(self.exchange.number)
        if mine is not None and mine.open:
            return Text("Contract: checked once the session has ended", style="dim")
        findings = mine.findings if mine is not None else []
        if not findings:
            return Text("Contract: no findings across the session's responses", style="green")
        text = Text("Contract: ", style="bold")
        for n, f in enumerate(findings[:FINDINGS_SHOWN]):
            where = f" (response {f.turn})" if f.turn is not None else ""
            text.append("\n" if n else "")
            text.append(f"{MARK[f.severity]} {f.kind}{where}: ", style=STYLE[f.severity])
            text.append(visible(f.message), style=STYLE[f.severity])
        if len(findings) > FINDINGS_SHOWN:
            more = plural(len(findings) - FINDINGS_SHOWN, "more finding")
            text.append(f"\nand {more}: each response's request (r on its stream) shows its own")
        return text

    # -- the selected message --------------------------------------------------------------

    def _show_message(self) -> None:
        cursor = self.query_one(MessageList).cursor
        row = self.rows[cursor] if 0 <= cursor < len(self.rows) else None
        target = self.query_one("#message", Static)
        if row is None or row.message is None:
            target.update(Text("no messages", style="dim"))
            return
        m, s = self.ws.messages[row.message], self.shown(row.message)
        head = Text(f"message {row.message + 1} of {len(self.ws.messages)}", style="bold")
        head.append(f" · {s.sender} · {s.opcode} · {plural(len(m.data), 'byte')}")
        if m.frames > 1:
            head.append(f" in {m.frames} frames")
        if m.compressed:
            head.append(" · compressed on the wire")
        if row.turn is not None:
            where = f"frame {row.frame}" if row.frame else "its request"
            head.append(f" · response {self.ws.turns[row.turn].turn}, {where}", style="cyan")
        if s.bad:
            head.append(f"\n{MARK['error']} {s.bad}", style=STYLE["error"])
        head.append("\n")
        self.query_one("#message", Static).update(head + Text(_payload(m)))

    # -- keys -----------------------------------------------------------------------------

    def _message_rows(self) -> list[int]:
        return [i for i, r in enumerate(self.rows) if r.message is not None]

    def _first_message(self, at: int) -> int | None:
        """The first message's line at or after line `at`."""
        return next(
            (i for i in range(at, len(self.rows)) if self.rows[i].message is not None), None
        )

    def _heading_of(self, turn: int) -> int | None:
        return next(
            (i for i, r in enumerate(self.rows) if r.message is None and r.turn == turn), None
        )

    def _select(self, row: int) -> None:
        messages = self.query_one(MessageList)
        messages.cursor = row
        self._show_message()

    def action_move(self, delta: int) -> None:
        cursor = self.query_one(MessageList).cursor
        step = 1 if delta > 0 else -1
        i = cursor + step
        while 0 <= i < len(self.rows) and self.rows[i].message is None:
            i += step
        if 0 <= i < len(self.rows):
            self._select(i)

    def action_page(self, direction: int) -> None:
        messages = self.query_one(MessageList)
        height = max(messages.size.height - 1, 1)
        target = max(0, min(messages.cursor + direction * height, len(self.rows) - 1))
        lines = self._message_rows()
        if not lines:
            return
        near = min(lines, key=lambda i: (abs(i - target), i))
        self._select(near)

    def action_jump(self, where: int) -> None:
        lines = self._message_rows()
        if lines:
            self._select(lines[-1] if where < 0 else lines[0])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a question is asked, the keys are the answer's."""
        return not self.query_one(AskLine).asking

    def action_goto(self) -> None:
        total = len(self.ws.messages)

        def done(value: str | None) -> None:
            number = number_answered(value)
            if number is not None and 1 <= number <= total:
                n = number - 1
                self._select(next(i for i, r in enumerate(self.rows) if r.message == n))
            elif value:
                self.notify(f"{value!r} is not a message number (1-{total})", severity="warning")

        self.query_one(AskLine).ask(f"Go to message (1-{total})", done)

    def action_turn(self, direction: int) -> None:
        """The cursor to the next (1) or previous (-1) response's first message."""
        cursor = self.query_one(MessageList).cursor
        current = self.rows[cursor].turn if 0 <= cursor < len(self.rows) else None
        headings = [
            i
            for i, r in enumerate(self.rows)
            if r.message is None and r.turn is not None and not r.again
        ]
        if direction > 0:
            later = [h for h in headings if h > cursor]
            target = later[0] if later else None
        else:
            # the previous response's heading: before the current one's, or before the cursor
            mine = self._heading_of(current) if current is not None else None
            before = [h for h in headings if h < (mine if mine is not None else cursor)]
            target = before[-1] if before else None
        first = self._first_message(target) if target is not None else None
        if first is None:
            self.notify(
                "no further response" if direction > 0 else "no earlier response", timeout=2
            )
            return
        self._select(first)

    def action_open(self) -> None:
        cursor = self.query_one(MessageList).cursor
        row = self.rows[cursor] if 0 <= cursor < len(self.rows) else None
        if row is None or row.message is None:
            return
        if row.turn is None:
            self.notify(f"message {row.message + 1} belongs to no response", timeout=3)
            return
        self.post_message(OpenTurn(self.exchange.number, row.turn, self._frame_at(row)))

    def _frame_at(self, row: Row) -> int:
        """Where a message is in its response's stream: a server message's frame; a client
        message sent while it ran, after the frame before it (its request: before the
        first)."""
        if row.frame:
            return row.frame
        before = (o[1] for o in self.owned[: row.message] if o is not None and o[0] == row.turn)
        return max(before, default=0)

    @on(MessageList.Picked)
    def _picked(self, event: MessageList.Picked) -> None:
        row = self.rows[event.row]
        if row.message is not None:
            self._select(event.row)
        elif row.turn is not None:  # a heading: its first message
            first = self._first_message(event.row)
            if first is not None:
                self._select(first)


def _payload(m: WsMessage) -> str:
    """A message's payload to read: JSON indented, text as is, a close's code and reason,
    binary as its size; made safe to print, its first DETAIL_BYTES only."""
    data = m.data
    if m.opcode == "close":
        return close_words(m) or "(no code)"
    if m.opcode not in ("text", "ping", "pong"):
        return f"({plural(len(data), 'byte')} of binary data)"
    text = data[:DETAIL_BYTES].decode("utf-8", "replace")
    if len(data) <= DETAIL_BYTES:
        with contextlib.suppress(ValueError, RecursionError):
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    more = (
        f"\n… and {plural(len(data) - DETAIL_BYTES, 'byte')} more"
        if len(data) > DETAIL_BYTES
        else ""
    )
    return visible(text, lines=True) + more
