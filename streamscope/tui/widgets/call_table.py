"""One strategy's calls at the current frame, as a table fitted to the width."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.reactive import reactive

from ...core import events as ev
from ...core.calls import Call, signature_bytes
from ...core.engine import value_key
from ...core.events import FieldEvent
from ...dialects import dialect
from ...text import cut, plural, quote, visible
from ..model import FrameState
from .common import clients
from .rendered import RenderedStatic

# a field event's field -> the column that shows it; a column -> the Call attribute
_FIELD_COLUMNS = {
    "input": "arguments",
    "args": "arguments",
    "call_id": "id",
    "item_id": "item",
    "thoughtSignature": "sig",
}
_ATTR = {"item": "item_id", "sig": "signature"}


ROOMY = 16  # characters of arguments below which the columns draw closer
LEAST_ARGS = 6  # characters of arguments a narrow screen keeps, columns dropped for them
NARROW_DROPS = ("frags", "type", "sig")  # in this order
WIDE_ARGS = 40  # characters of arguments beside which every other value is whole


def _cell(value: object, width: int = 0) -> str:
    return quote(value, width) if value is not None else "null"


def _window(total: int, touched: int | None, rows: int) -> tuple[int, int]:
    """Which `rows` of `total` calls to show: around the one this frame touched (the
    last ones when it touched none). A table of every call cost seconds a frame on a
    stream of thousands of calls; the screen has room for a few."""
    if total <= rows:
        return 0, total
    at = total - 1 if touched is None else min(max(touched, 0), total - 1)
    first = min(max(at - rows // 2, 0), total - rows)
    return first, first + rows


class CallTable(RenderedStatic):
    """One strategy's calls at the current frame, fitted to the width (long values cut):
    robust's with what this frame changed, or (`other`) the client strategy's, marked
    where it differs from robust and hidden when it has no calls to show."""

    DEFAULT_CSS = "CallTable { height: auto; }"
    COLUMNS = ("c", "idx", "id", "type", "name", "arguments", "frags")
    # a dialect whose calls carry two ids: its key, then both ids
    TWO_IDS = ("idx", "item", "id", "type", "name", "arguments", "frags")
    # a dialect whose calls carry a signature: it, where the one type would be
    SIGNED = ("c", "idx", "id", "sig", "name", "arguments", "frags")

    state: reactive[FrameState | None] = reactive(None, init=False)
    strategy: reactive[int] = reactive(0, init=False)  # which client, in the dialect's order

    def __init__(self, other: bool = False, **kw) -> None:
        super().__init__(**kw)
        self.other = other
        self.heads: tuple[str, str] = ("c", "idx")
        self.columns = self.COLUMNS
        self.by_value = False  # arguments compared by the JSON value they hold

    def _watch_any(self) -> None:
        state = self.state
        if state is None:
            return
        self.fit(state)
        robust = state.strategy_calls()["robust"]
        touched = next((e.call for e in state.events if e.call >= 0), None)
        rows = max(3, self.app.size.height // 6)
        if not self.other:
            self.show(robust, state.events, window=_window(len(robust), touched, rows))  # type: ignore[arg-type]
            return
        others = clients(state)
        theirs = state.strategy_calls()[others[self.strategy % len(others)]]
        self.display = isinstance(theirs, list)
        if isinstance(theirs, list):
            # the calls around the same one, of the longer of the two lists
            window = _window(max(len(robust), len(theirs)), touched, rows)  # type: ignore[arg-type]
            self.show(theirs, compare=robust, window=window)  # type: ignore[arg-type]

    watch_state = watch_strategy = _watch_any

    def fit(self, state: FrameState) -> None:
        """The columns in the words of `state`'s dialect: c/idx, m/blk; two ids; a signature."""
        terms = dialect(state.engine.dialect).terms
        self.heads = terms.columns
        self.columns = (
            self.TWO_IDS if terms.item_ids else self.SIGNED if terms.signatures else self.COLUMNS
        )
        self.by_value = state.engine.by_value

    @staticmethod
    def _widths(
        columns: tuple[str, ...],
        calls: tuple[Call, ...],
        width: int,
        digits: dict[str, int],
        longest: int,
        items: int,
        pad: int | None = None,
        least_args: int = LEAST_ARGS,
    ) -> dict[str, int]:
        """Every column's width but the arguments', which take what is left. Each value
        column keeps a character for the mark before it (⚠ overwritten, ≠ differs). Every
        value is whole where the arguments keep WIDE_ARGS characters beside them; short of
        that the type is cut to 10 and ids fold past 40 columns. The id and the name are
        shown whole; when the screen is too narrow for them and a few characters of
        arguments, the type gives way first (to 5), then the name (to 16), then, where a
        call has two ids, both (folded, to 16)."""
        names = max([len(_cell(c.name)) for c in calls] + [4]) + 1
        types = max([len(_cell(c.type)) for c in calls] + [4]) + 1
        out = {
            "c": digits["c"] if "c" in columns else 0,
            "idx": max(3, digits["idx"]),
            "id": longest + 1,
            "item": items + 1 if "item" in columns else 0,
            "type": types if "type" in columns else 0,
            "sig": 12 if "sig" in columns else 0,
            "name": names,
            "frags": digits["frags"],
        }
        # a column is padded by a space on either side (`pad`: the padding of all of them,
        # where it is collapsed to one space between columns)
        pad = 2 * len(columns) if pad is None else pad
        room = width - pad - sum(out[c] for c in columns if c != "arguments")
        for col, most in (("type", 11), ("id", 41), ("item", 41)):  # a wide screen: all whole
            if col in columns:
                give = max(0, min(WIDE_ARGS - room, out[col] - most))
                out[col] -= give
                room += give
        for col, least in (("type", 5), ("name", 16)):
            if col in columns:
                give = max(0, min(least_args - room, out[col] - least))  # of arguments
                out[col] -= give
                room += give
        if "item" in columns:  # two long ids fold rather than leave the arguments unread
            for col in ("item", "id", "item", "id"):  # what the arguments lack, in halves
                give = max(0, min((11 - room) // 2, out[col] - 16))
                out[col] -= give
                room += give
        return {c: out[c] for c in columns if c != "arguments"}

    def show(
        self,
        calls: list[Call],
        events: list[FieldEvent] = (),  # type: ignore[assignment]
        compare: list[Call] | None = None,
        window: tuple[int, int] | None = None,
        against: str = "robust",
    ) -> None:
        """Rows for `calls`; cells `events` touched are highlighted; cells unlike `compare`
        (`against`'s calls) marked. `window`: the calls shown (first, last), the others
        counted in a line."""
        total = len(calls)
        more = 0 if compare is None else len(compare) - total  # calls robust has beyond
        first, last = window or (0, total)
        # the window is robust's: the other table may hold fewer calls, or more
        everyone = max(total, len(compare or ()))
        windowed = first > 0 or last < everyone
        if windowed:
            calls = calls[first:last]
            compare = None if compare is None else compare[first:last]
        # ids and names are what a person compares: shown whole (an id folded past 40
        # columns where the arguments need the room); the arguments, then the type, give
        # up their width first
        both = (*calls, *(compare or []))
        titles = dict(zip(("c", "idx"), self.heads, strict=True))
        columns: tuple[str, ...] = self.columns
        if "item" in columns:  # the Responses API's words: item_id, and the call_id
            titles |= {"item": "item_id", "id": "call_id"}
        # an id column folds its cells, and would its header: never narrower than it
        longest = max([len(_cell(c.id)) for c in both] + [len(titles.get("id", "id")), 4])
        items = max([len(_cell(c.item_id)) for c in both] + [7])
        # numbers are never cut: "1000…" would read as a thousand fragments, not 100,001
        digits = {
            "c": max([len(str(c.choice)) for c in both] + [1]),
            # (as wide as its header: idx, blk, out, call)
            "idx": max([len(_cell(c.index)) for c in both] + [len(self.heads[1])]),
            "frags": max([len(str(c.fragments)) for c in both] + [5]),
        }
        ids = ("id", "item")
        width = self.size.width or self.app.size.width
        widths = self._widths(columns, both, width, digits, longest, items)
        # a small terminal: one space between columns, not two, so the arguments keep
        # more than a few characters (the id and the name stay whole)
        tight = width - 2 * len(columns) - sum(widths.values()) < ROOMY
        if tight:  # (a space after each column, none before)
            pad = len(columns)
            widths = self._widths(columns, both, width, digits, longest, items, pad, ROOMY)
            # narrower still (60 columns): the fragment count, then the type or the
            # signature, leave, so the id and the name stay whole and the arguments keep
            # a column (else Rich cut every column itself, and folded the id)
            for col in NARROW_DROPS:
                if width - len(columns) - sum(widths.values()) >= LEAST_ARGS:
                    break
                if col in columns:
                    columns = tuple(c for c in columns if c != col)
                    pad = len(columns)
                    widths = self._widths(columns, both, width, digits, longest, items, pad, ROOMY)
        table = Table(
            box=None,
            padding=(0, 1, 0, 0) if tight else (0, 1),
            expand=True,
            show_edge=False,
            header_style="bold dim",
        )
        for col in columns:
            table.add_column(
                titles.get(col, col),
                no_wrap=col not in ids,
                overflow="fold" if col in ids else "ellipsis",
                ratio=1 if col == "arguments" else None,
                width=widths.get(col),
            )
        touched: dict[tuple[int, str], FieldEvent] = {}
        for e in events:
            if first <= e.call < first + len(calls):
                # a custom call's input is its arguments; the Responses API's two ids
                field = _FIELD_COLUMNS.get(e.field, e.field)
                if field.startswith("$"):  # a streamed argument's JSON path (Gemini)
                    field = "arguments"
                touched[(e.call - first, field or ("call" if e.op == ev.NEW_CALL else ""))] = e
        for i, call in enumerate(calls):
            other = compare[i] if compare is not None and i < len(compare) else None
            values = {
                "c": call.choice,
                "idx": call.index,
                "id": call.id,
                "item": call.item_id,
                "type": call.type,
                "sig": call.signature,
                "name": call.name,
                "arguments": call.arguments,
                "frags": call.fragments,
            }
            cells = []
            for col in columns:
                value = values[col]
                if col in ("c", "frags"):
                    shown = str(value)
                elif col == "arguments" and isinstance(value, str):
                    # no column is wider than the screen: a long stream's arguments (a
                    # megabyte) are cut to its width before Rich measures them (Rich
                    # measures a long cell character by character); `a` shows them whole
                    shown = visible(cut(value, max(self.app.size.width, 80)))
                elif col == "sig":  # no signature is no value, not a null sent
                    shown = "—" if value is None else quote(value, 12)
                else:
                    shown = _cell(value)
                text = Text(shown)
                event = touched.get((i, col))
                if event is not None:  # the frame detail says what happened in words
                    if event.op == ev.OVERWRITE:
                        text = Text("⚠", style="bold yellow") + Text(
                            shown, style="bold black on yellow"
                        )
                    elif event.op == ev.IGNORED:
                        text.stylize("cyan")
                    else:
                        text.stylize("bold green reverse")
                elif (i, "call") in touched:
                    text.stylize("green")
                if compare is not None and col in (
                    "id",
                    "item",
                    "type",
                    "sig",
                    "name",
                    "arguments",
                ):
                    theirs = None if other is None else getattr(other, _ATTR.get(col, col))
                    if col == "arguments" and self.by_value and other is not None:
                        # compared as the JSON they hold, as `differs` does
                        value, theirs = value_key(call)[3], value_key(other)[3]
                    elif col == "sig" and other is not None:  # as the bytes it spells
                        value, theirs = signature_bytes(value), signature_bytes(theirs)
                    if other is None or theirs != value:
                        text = Text("≠", style="bold red") + text
                        text.stylize("red")
                cells.append(text)
            table.add_row(*cells)
        caption = Text()
        if more > 0:  # under the table, the width of it (a cell is a column's width)
            caption.append(f"≠ {against} has {plural(more, 'more call')}", style="bold red")
        if windowed and calls:
            shown = f"calls {first + 1}-{first + len(calls)} of {everyone:,}"
            caption.append(f"{' · ' if caption else ''}{shown}", style="dim")
        if caption:
            table.caption, table.caption_justify = caption, "left"
        if not calls and (compare is None or not compare):  # (a cell would wrap in the id's width)
            table.caption, table.caption_justify = Text(" no calls yet", style="dim"), "left"
        self.show_rendered(table)
