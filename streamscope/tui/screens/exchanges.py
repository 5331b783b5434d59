"""The exchanges of a recording, one row each, with the worst finding by name."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Static,
)

from ...core.anomalies import worst_severity
from ...inputs import ExchangeInfo
from ...marks import MARK, STYLE
from ...text import cut, plural, visible
from ..messages import OpenExchange, RecordingGrew
from ..session import Session
from ..widgets import ms
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
        yield Footer(compact=True)

    def _title(self) -> Text:
        return Text(
            f"{visible(self.session.name)} · {plural(len(self.infos), 'exchange')} · Enter opens one",
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
        the width leaves beside `worst`, which is kept whole (the path goes last)."""
        self._width = self.size.width
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        wide = self._width >= 100
        worst_cells = [self._worst(info) for info in self.infos]
        worst_w = max([len(c.plain) for c in worst_cells] + [5])
        # the other columns and every cell's padding of 2, the scrollbar
        budget = self._width - worst_w - (46 if wide else 38)
        path_w = min(22, budget // 2) if budget >= 14 else 0  # too narrow: no path
        model_w = max(6, min(16, budget - path_w - 2 if path_w else budget))
        for col in self.COLUMNS:
            if (wide or col != "method") and (path_w or col != "path"):
                table.add_column(col, key=col)
        for info, worst_cell in zip(self.infos, worst_cells, strict=True):
            path = visible(info.url.split("://", 1)[-1].split("?", 1)[0])  # (no query)
            path = "/" + path.split("/", 1)[1] if "/" in path else path
            path = path if len(path) <= path_w else "…" + path[-(path_w - 1) :]
            took = ms(info.end_ns - info.start_ns) if info.end_ns is not None else "open"
            s = self.summaries.get(info.exchange) if self.summaries is not None else None
            if s is None:  # analysing, or the analysis failed (a notification said why)
                frames = calls = "…" if self.summaries is None else "?"
            else:
                frames, calls = (str(s.frames), str(len(s.calls))) if s.stream else ("—", "")
            table.add_row(
                str(info.exchange),
                *([visible(info.method)] if wide else []),
                *([path] if path_w else []),
                cut(visible(info.model or ""), model_w),
                str(info.status or ""),
                took,
                frames,
                calls,
                worst_cell,
                key=str(info.exchange),
            )
        if self.infos:
            table.move_cursor(row=min(max(cursor, 0), len(self.infos) - 1))

    def _worst(self, info: ExchangeInfo) -> Text:
        """The worst of the stream's anomalies and the request's contract findings, by kind
        (a contract break named first), or why a non-stream exchange failed."""
        s = self.summaries.get(info.exchange) if self.summaries is not None else None
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
        level = worst_severity(x.severity for x in s.seen)
        if level is None:
            return Text("clean", style="green")
        contract = [f.kind for f in s.findings]
        at_level = sorted(
            {x.kind for x in s.seen if x.severity == level}, key=lambda k: (k not in contract, k)
        )
        more = f" +{len(at_level) - 1}" if len(at_level) > 1 else ""
        return Text(f"{MARK[level]} {at_level[0]}{more}", style=STYLE[level])

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
        table = self.query_one(DataTable)
        if table.row_count:
            exchange = int(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)  # type: ignore[arg-type]
            self.post_message(OpenExchange(exchange))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.post_message(OpenExchange(int(event.row_key.value)))  # type: ignore[arg-type]
