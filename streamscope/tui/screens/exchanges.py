"""The exchanges of a recording, one row each, with the worst finding by name."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Static,
)

from ...analysis.driver import WEBSOCKET, ExchangeSummary
from ...inputs import ExchangeInfo
from ...marks import MARK, STYLE
from ...text import cut, plural, visible
from ..messages import OpenExchange, RecordingGrew
from ..session import Session
from ..widgets import ms, worst_of
from ..widgets.key_footer import KeyFooter
from .bindings import EXCHANGES

NOTES_SHOWN = 3  # above the list; a HAR may have a note for each entry it skipped


class ExchangesScreen(Screen):
    """One row per exchange; Enter opens its stream (or its request and response)."""

    BINDINGS = EXCHANGES
    COLUMNS = ("#", "method", "path", "model", "status", "took", "frames", "calls", "worst")

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.infos = session.infos
        self.errors = session.input.errors  # type: ignore[union-attr]  # lines of the recording that could not be read
        self.summaries: dict | None = None
        self._width = 0

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title")
        # facts about the file (a HAR's approximations), the first few: the list stays
        notes = self.session.input.notes  # type: ignore[union-attr]
        for note in notes[:NOTES_SHOWN]:
            yield Static(Text(f"i {visible(note)}", style="cyan"), classes="note")
        if len(notes) > NOTES_SHOWN:
            more = plural(len(notes) - NOTES_SHOWN, "more note")
            yield Static(
                Text(f"i and {more}: streamscope inspect lists them", style="cyan"), classes="note"
            )
        if self.errors:
            said = "; ".join(visible(str(e)) for e in self.errors[:3])
            more = f" (and {len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
            yield Static(
                Text(
                    f"{MARK['error']} skipped {plural(len(self.errors), 'unreadable line')}: {said}{more}"
                ),
                id="errors",
            )
        yield DataTable(id="exchanges", cursor_type="row", zebra_stripes=True)
        yield KeyFooter(compact=True)

    def _title(self) -> Text:
        sessions = sum(i.framing == WEBSOCKET for i in self.infos)
        among = f" ({plural(sessions, 'WebSocket session')})" if sessions else ""
        return Text(
            f"{visible(self.session.name)} · {plural(len(self.infos), 'exchange')}{among}"
            " · Enter opens one",
            style="bold",
        )

    def on_mount(self) -> None:
        self._rows()
        self.query_one(DataTable).focus()
        self.session.when_analysed(self.fill)

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._rows()

    def _rows(self) -> None:
        """(Re)fill the table: narrow, the method goes and path and model are cut to what
        the width leaves beside `worst`, which is kept whole (the path goes last). A
        WebSocket session's row is followed by a row per response (`N.R`, as
        `replay FILE#N.R` opens it)."""
        self._width = self.size.width
        table = self.query_one(DataTable)
        selected = self._selected_key(table)
        table.clear(columns=True)
        wide = self._width >= 100
        lines = self._lines()
        worst_w = max([len(worst.plain) for _, _, _, worst in lines] + [5])
        numbers_w = max([len(str(i.exchange)) + (t is not None) * 3 for i, t, _, _ in lines] + [1])
        # the other columns and every cell's padding of 2, the scrollbar
        budget = self._width - worst_w - numbers_w + 1 - (46 if wide else 38)
        path_w = min(22, budget // 2) if budget >= 14 else 0  # too narrow: no path
        model_w = max(6, min(16, budget - path_w - 2 if path_w else budget))
        untimed = self.session.input.untimed  # type: ignore[union-attr]  # (a cassette: no times)
        for col in self.COLUMNS:
            if (wide or col != "method") and (path_w or col != "path"):
                table.add_column(col, key=col)
        for info, turn, s, worst_cell in lines:
            if turn is not None:  # a response of the session above
                label = f"response {turn.turn}"
                label = label if len(label) <= path_w else cut(f"resp. {turn.turn}", path_w)
                cells = [f"{info.exchange}.{turn.turn}", "", label, "", "", ""]
            else:
                path = visible(info.url.split("://", 1)[-1].split("?", 1)[0])  # (no query)
                path = "/" + path.split("/", 1)[1] if "/" in path else path
                # a WebSocket session's handshake path is marked, the mark kept when cut
                mark = "ws " if info.framing == WEBSOCKET else ""
                room = path_w - len(mark)
                path = path if len(path) <= room else "…" + path[-(room - 1) :] if room > 1 else ""
                cells = [
                    str(info.exchange),
                    visible(info.method),
                    mark + path,
                    cut(visible(info.model or (s.model if s is not None else None) or ""), model_w),
                    str(info.status or ""),
                    "—"
                    if untimed
                    else ms(info.end_ns - info.start_ns)
                    if info.end_ns is not None
                    else "open",
                ]
            if s is None:  # analysing, or the analysis failed (a notification said why)
                frames = calls = "…" if self.summaries is None else "?"
            else:
                frames, calls = (str(s.frames), str(len(s.calls))) if s.stream else ("—", "")
            # what the recording says (method, path, model) as Text: a str cell is markup
            number, method, path, model, *rest = cells
            table.add_row(
                number,
                *([Text(method)] if wide else []),
                *([Text(path)] if path_w else []),
                Text(model),
                *rest,
                frames,
                calls,
                worst_cell,
                key=number,
            )
        if lines:
            keys = [
                str(info.exchange) if t is None else f"{info.exchange}.{t.turn}"
                for info, t, _, _ in lines
            ]
            table.move_cursor(row=keys.index(selected) if selected in keys else 0)

    def _lines(
        self,
    ) -> list[tuple[ExchangeInfo, ExchangeSummary | None, ExchangeSummary | None, Text]]:
        """The table's rows: (exchange, the response of its session or None, its summary
        (None: not analysed), its worst)."""
        out: list[tuple[ExchangeInfo, ExchangeSummary | None, ExchangeSummary | None, Text]] = []
        for info in self.infos:
            s = self.summaries.get(info.exchange) if self.summaries is not None else None
            out.append((info, None, s, self._worst(info)))
            if s is not None and s.session and not s.open:
                out += [(info, t, t, self._worst(info, t)) for t in s.turns]
        return out

    @staticmethod
    def _selected_key(table: DataTable) -> str | None:
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _worst(self, info: ExchangeInfo, turn: ExchangeSummary | None = None) -> Text:
        """The worst of the stream's anomalies and the request's contract findings, by kind
        (a contract break named first), or why a non-stream exchange failed; `turn`: of
        that response of the session."""
        s = self.summaries.get(info.exchange) if self.summaries is not None else None
        if turn is not None:
            return worst_of(turn)
        # still being written (as the index or the analysis last saw it): no verdict yet
        if self.session.follow and (info.end_ns is None or (s is not None and s.open)):
            return Text("open", style="dim")
        if self.summaries is None:
            return Text("…")
        if s is None:
            return Text("not analysed", style="dim")
        if not s.stream:
            if s.failure:
                why = visible(s.failure.split(": ", 1)[0])
                return Text(f"{MARK['error']} {why}", style=STYLE["error"])
            return Text("not a stream", style="dim")
        if s.session and not s.turns:
            return Text("no responses", style="dim")
        return worst_of(s)

    def fill(self, summaries: dict) -> None:
        if self.is_attached:
            self.summaries = summaries
            self._rows()

    @on(RecordingGrew)
    def _grew(self) -> None:
        """--follow: new exchanges, and the open ones' new state; the analysis again."""
        self.infos = self.session.infos
        self.query_one("#title", Static).update(self._title())  # --follow: more may have come
        self._rows()
        self.session.when_analysed(self.fill)

    def on_screen_resume(self) -> None:
        """Back from a stream: the recording may have grown while it was shown."""
        if self.infos is not self.session.infos:
            self._grew()

    def action_open(self) -> None:
        key = self._selected_key(self.query_one(DataTable))
        if key is not None:
            self._open(key)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self._open(event.row_key.value)  # type: ignore[arg-type]

    def _open(self, key: str) -> None:
        """A row's key: the exchange ("3"), or a response of its session ("3.2")."""
        exchange, _, turn = key.partition(".")
        self.post_message(OpenExchange(int(exchange), int(turn) if turn else None))
