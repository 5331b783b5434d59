"""The exchanges of a recording, one row each, with the worst finding by name."""

from __future__ import annotations

from rich.cells import cell_len
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
from ...text import plural, visible
from ..messages import OpenExchange, RecordingGrew
from ..session import Session
from ..widgets import cut_cells, ms, tail_cells, worst_of
from ..widgets.key_footer import KeyFooter
from .bindings import EXCHANGES

NOTES_SHOWN = 3  # above the list; a HAR may have a note for each entry it skipped


class ExchangesScreen(Screen):
    """One row per exchange; Enter opens its stream (or its request and response)."""

    BINDINGS = EXCHANGES
    COLUMNS = ("#", "method", "path", "model", "status", "took", "frames", "calls", "worst")
    # narrower than the path and the model need (60 columns), the columns that go, in turn
    DROPPED = ("model", "took", "status")

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.infos = session.infos
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
        errors = Static(self._errors(), id="errors")
        errors.display = bool(self.errors)  # (--follow: shown once a line is skipped)
        yield errors
        yield DataTable(id="exchanges", cursor_type="row", zebra_stripes=True)
        yield KeyFooter(compact=True)

    @property
    def errors(self) -> list:
        """The lines of the recording that could not be read (--follow: more as it grows)."""
        return self.session.input.errors  # type: ignore[union-attr]

    def _errors(self) -> Text:
        """The line that says which lines of the recording were skipped (unreadable)."""
        said = "; ".join(visible(str(e)) for e in self.errors[:3])
        more = f" (and {len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
        skipped = plural(len(self.errors), "unreadable line")
        return Text(f"{MARK['error']} skipped {skipped}: {said}{more}")

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
        """(Re)fill the table: each column as wide as its widest cell, path and model cut
        to what the others leave (narrow, the method goes, then the path; narrower still,
        the model, took and status, then `worst` is cut, with an ellipsis), both whole
        where the width allows. A WebSocket session's row is followed by a row per
        response (`N.R`, as `replay FILE#N.R` opens it)."""
        self._width = self.size.width
        table = self.query_one(DataTable)
        selected = self._selected_key(table)
        table.clear(columns=True)
        wide = self._width >= 100
        untimed = self.session.input.untimed  # type: ignore[union-attr]  # (a cassette: no times)
        lines = self._lines()
        rows = [self._cells(info, turn, s, untimed) for info, turn, s, _ in lines]
        shown = [c for c in self.COLUMNS if wide or c != "method"]
        # (screen columns, not characters: a model or path may hold wide characters)
        widths = {c: max([cell_len(r.get(c, "")) for r in rows] + [len(c)]) for c in shown}
        widths["worst"] = max([worst.cell_len for *_, worst in lines] + [len("worst")])
        # what path and model have: the width but the other columns, a cell's padding of 2
        # each, and the vertical scrollbar's column
        others = sum(widths[c] for c in shown if c not in ("path", "model"))
        room = self._width - 1 - others - 2 * len(shown) + 2  # (the path's padding in it)
        widths["path"], widths["model"] = self._fit(room, widths["path"], widths["model"])
        if not widths["path"]:
            shown.remove("path")
        for col in self.DROPPED:
            if self._over(shown, widths) > 0:
                shown.remove(col)
        over = self._over(shown, widths)
        widths["worst"] = max(len("worst"), widths["worst"] - max(over, 0))
        for col in shown:
            table.add_column(col, key=col)
        for cells, (*_, worst_cell) in zip(rows, lines, strict=True):
            table.add_row(
                *(self._cell(c, cells, worst_cell, widths) for c in shown), key=cells["#"]
            )
        if rows:
            keys = [r["#"] for r in rows]
            table.move_cursor(row=keys.index(selected) if selected in keys else 0)

    def _over(self, shown: list[str], widths: dict[str, int]) -> int:
        """By how many columns `shown` overflow the width (a cell's padding of 2 each, the
        vertical scrollbar's column)."""
        return 1 + sum(widths[c] + 2 for c in shown) - self._width

    def _cell(
        self, col: str, cells: dict[str, str], worst: Text, widths: dict[str, int]
    ) -> Text | str:
        """A row's cell in its column's width; what the recording says (method, path,
        model) as Text: a str cell is markup."""
        if col == "worst":
            if worst.cell_len <= widths["worst"]:
                return worst
            worst = worst.copy()
            worst.truncate(widths["worst"], overflow="ellipsis")
            return worst
        if col == "path":
            return Text(self._path(cells, widths["path"]))
        if col in ("method", "model"):
            return Text(cut_cells(cells[col], widths[col]))
        return cells[col]

    @staticmethod
    def _fit(room: int, path: int, model: int) -> tuple[int, int]:
        """The widths of path and model in `room` characters (the path's padding of 2 in
        it): both whole where they fit; else the path up to half, the model at least 6,
        and no path where it would keep fewer than 6."""
        if path + 2 + model <= room:
            return path, model
        path_w = min(path, max(room // 2, room - 2 - model))
        model_w = min(model, room - 2 - path_w)
        if model_w < min(model, 6):
            model_w = min(model, 6)
            path_w = room - 2 - model_w
        if path_w < 6:
            return 0, max(6, min(model, room))
        return path_w, model_w

    @staticmethod
    def _path(cells: dict[str, str], width: int) -> str:
        """The path cell in `width` screen columns: its end, a WebSocket session's mark
        kept; a response's label shorter."""
        path = cells["path"]
        if "short" in cells:  # a response of the session above
            return path if cell_len(path) <= width else cut_cells(cells["short"], width)
        mark = cells["mark"]
        return mark + tail_cells(path[len(mark) :], width - len(mark))

    def _cells(
        self,
        info: ExchangeInfo,
        turn: ExchangeSummary | None,
        s: ExchangeSummary | None,
        untimed: bool,
    ) -> dict[str, str]:
        """A row's cells but `worst`, whole: path and model are cut to the width after
        (`mark`: a session's mark before the path; `short`: a response's shorter label)."""
        if turn is not None:  # a response of the session above
            cells = {"#": f"{info.exchange}.{turn.turn}", "path": f"response {turn.turn}"}
            cells |= {"short": f"resp. {turn.turn}", "method": "", "model": "", "status": ""}
            cells["took"] = ""
        else:
            path = visible(info.url.split("://", 1)[-1].split("?", 1)[0])  # (no query)
            path = "/" + path.split("/", 1)[1] if "/" in path else path
            mark = "ws " if info.framing == WEBSOCKET else ""
            took = "open" if info.end_ns is None else ms(info.end_ns - info.start_ns)
            cells = {
                "#": str(info.exchange),
                "method": visible(info.method),
                "path": mark + path,
                "mark": mark,
                "model": visible(info.model or (s.model if s is not None else None) or ""),
                "status": str(info.status or ""),
                "took": "—" if untimed else took,
            }
        if s is None:  # analysing, or the analysis failed (a notification said why)
            cells["frames"] = cells["calls"] = "…" if self.summaries is None else "?"
        elif s.stream:
            cells["frames"], cells["calls"] = str(s.frames), str(len(s.calls))
        else:
            cells["frames"], cells["calls"] = "—", ""
        return cells

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
        errors = self.query_one("#errors", Static)
        errors.update(self._errors())
        errors.display = bool(self.errors)
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
