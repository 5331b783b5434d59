"""`streamscope replay A B`: two streams side by side, stepped together (aligned.py).

`diff` pairs the streams and says what differs (analysis/diff.py); the first pair that
differs opens (else the first pair), each side's robust table as it stands at its frame,
with the first client `diff` found changed under it, cells unlike the other side's marked.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ..analysis.diff import NOW_BREAKS, NOW_RIGHT, Diff, PairDiff, diff
from ..analysis.diff_text import label, value
from ..analysis.sides import load
from ..core.calls import StrategyError
from ..inputs import RECORDING, open_input
from ..recording.copies import name_of
from ..text import cut, visible
from . import keys
from .aligned import RULE, Aligned
from .keyboard import KeyboardApp
from .model import StreamModel
from .screens import TextScreen
from .screens.bindings import bindings
from .widgets import CallTable
from .widgets.call_table import _window
from .widgets.key_footer import KeyFooter


class SideError(Exception):
    """A side that cannot be read, or nothing to show side by side: one line, said before
    any screen."""


def _model(path: str, exchange: int) -> StreamModel:
    source = open_input(path)
    ex = source.exchange(exchange)
    info = ex.info
    end = {"end_reason": info.end_reason, "status": info.status}
    if source.kind == RECORDING and info.end_ns is None:
        end["end_reason"] = "unfinished"
    model = StreamModel(
        ex.reads,
        exchange,
        info.tools,
        info.response_format,
        end,
        told=ex.dialect(),
        chunk_log=source.chunk_log(info),
        timed=not source.untimed,
        check=info.dialect_check(),
    )
    model.build()
    return model


def open_pair(a: tuple[str, int | None], b: tuple[str, int | None]) -> SideBySideApp:
    """Both sides read, paired and aligned. Raises RecordingError (a side that cannot be
    read, as `diff` says it) and SideError."""
    sides = []
    for path, exchange in (a, b):
        try:
            sides.append(load(path, exchange))
        except OSError as e:
            raise SideError(f"{path}: {e.strerror or e}") from e
    found = diff(sides[0], sides[1])
    pairs = [p for p in found.pairs if p.a and p.b and p.a[1] is None and p.b[1] is None]
    if not pairs:
        raise SideError(
            f"{b[0]}: no stream pairs with one of {a[0]} (diff pairs them "
            f"by {found.paired_by}; a WebSocket session's responses are not shown side by side)"
        )
    pair = next((p for p in pairs if not p.same), pairs[0])
    assert pair.a is not None and pair.b is not None
    ma, mb = _model(a[0], pair.a[0]), _model(b[0], pair.b[0])
    clients = tuple(c.strategy for c in pair.clients)
    aligned = Aligned.of(ma, mb, clients[:1])  # the first client diff found changed
    names = [f"{name_of(path)}#{k[0]}" for (path, _), k in ((a, pair.a), (b, pair.b))]
    return SideBySideApp(aligned, found, pair, names)


def found_line(d: Diff, p: PairDiff) -> Text:
    """What `diff` found for the pair shown, in a line (recorded values through text.py)."""
    # (the fields in the words `diff`'s text uses: analysis/diff_text.py)
    parts = [f"{label(c.field)} {value(c.field, c.a)} -> {value(c.field, c.b)}" for c in p.stream]
    parts += [f"anomaly appears in B: {visible(k.kind)} (frame {k.frame})" for k in p.added]
    parts += [f"anomaly gone in B: {visible(k.kind)} (frame {k.frame})" for k in p.gone]
    for change, words in ((NOW_BREAKS, "now breaks in B"), (NOW_RIGHT, "now right in B")):
        names = [c.strategy for c in p.clients if c.change == change]
        if names:
            parts.append(f"{words}: {', '.join(names)}")
    changed = [c.strategy for c in p.clients if c.change not in (NOW_BREAKS, NOW_RIGHT)]
    if changed:
        parts.append(f"builds other calls in B: {', '.join(changed)}")
    if p.calls:
        fields = [f"call {c.position} {'/'.join(c.fields) or 'missing'}" for c in p.calls]
        parts.append(f"robust's calls differ at the end: {', '.join(fields)}")
    if p.timing:
        parts.append("timing: " + ", ".join(label(c.field) for c in p.timing))
    out = Text("diff: ", style="bold")
    out.append(" · ".join(parts) if parts else "the two streams are the same", style="yellow")
    out.append(f" (paired by {d.paired_by})", style="dim")
    return out


HELP = (
    "Two streams, stepped together: A above (or left), B below (or right). "
    f"Steps are {RULE} (robust's calls, of all the stream's arguments): a step moves both "
    "sides to the first frame where that share is assembled, and a frame that begins a "
    "call is a step of its own; a stream with no arguments steps by its share of frames "
    "(neither side with arguments: aligned by frame); the last step is both sides' last frame. Each side shows "
    "robust's table as it stands at its frame (green: what that frame changed, ⚠ yellow: a "
    "value a naive client would have overwritten) and, under it, the first client diff "
    "found changed. ≠ red marks a cell unlike the other side's at the aligned step. The "
    "diff line says what `streamscope diff A B` found for this pair of streams."
)


class SideBySideApp(KeyboardApp):
    CSS = """
    #panels { height: auto; }
    .side { height: auto; padding: 0 1; margin-bottom: 1; }
    .title { text-style: bold; }
    #step, #found { padding: 0 1; }
    #found { height: auto; }
    .-wide #panels { layout: horizontal; }
    .-wide .side { width: 1fr; }
    """
    TITLE = "streamscope replay: side by side"
    BINDINGS = bindings(keys.SIDE_BY_SIDE)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (160, "-wide")]

    def __init__(self, aligned: Aligned, found: Diff, pair: PairDiff, names: list[str]) -> None:
        super().__init__()
        self.aligned, self.found, self.pair, self.names = aligned, found, pair, names
        self.step = 0

    def compose(self) -> ComposeResult:
        yield Static(id="step")
        with Vertical(id="panels"):
            for side in ("a", "b"):
                with Vertical(classes="side", id=f"side-{side}"):
                    yield Static(classes="title", id=f"title-{side}")
                    yield CallTable(id=f"robust-{side}")
                    yield Static(id=f"client-title-{side}")
                    yield CallTable(id=f"client-{side}")
        yield Static(found_line(self.found, self.pair), id="found")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.call_after_refresh(self.show_step)

    def on_resize(self) -> None:
        self.call_after_refresh(self.show_step)

    def show_step(self) -> None:
        al, i = self.aligned, self.step
        step = al.steps[i]
        share = f"{step.share:.0%}"
        here = al.differences(i)
        where = ", ".join(
            f"{name} call {c.position} {'/'.join(c.fields) or 'missing'}" for name, c in here
        )
        line = Text.assemble(
            (f"step {i}/{len(al.steps) - 1}", "bold"),
            f" · {share} {al.measure()}",
        )
        line.append(f" · differs: {cut(where, 120)}" if here else " · no difference here")
        self.query_one("#step", Static).update(line)
        rows = max(2, self.size.height // 8)
        models = {"a": al.a, "b": al.b}
        frames = {"a": step.a, "b": step.b}
        other = {"a": "b", "b": "a"}
        for side in ("a", "b"):
            model, n = models[side], frames[side]
            state = model.view(model.at(n))
            kinds = sorted({a.kind for a in model.result.anomalies if 0 < a.frame <= n})  # type: ignore[union-attr]
            title = Text(f"{side.upper()} {visible(self.names[side == 'b'])}", style="bold")
            title.append(f" · frame {n}/{model.total}", style="")
            title.append(
                f" · anomalies: {', '.join(visible(k) for k in kinds)}" if kinds else "",
                style="yellow",
            )
            self.query_one(f"#title-{side}", Static).update(title)
            mine, theirs = al.calls(i)[side == "b"], al.calls(i)[side == "a"]
            table = self.query_one(f"#robust-{side}", CallTable)
            table.fit(state)
            assert isinstance(mine, list) and isinstance(theirs, list)
            touched = next((e.call for e in state.events if e.call >= 0), None)
            span = _window(max(len(mine), len(theirs)), touched, rows)
            table.show(mine, state.events, compare=theirs, window=span, against=other[side].upper())
            self._client(side, i, state, span)

    def _client(self, side: str, i: int, state, span: tuple[int, int]) -> None:
        title = self.query_one(f"#client-title-{side}", Static)
        table = self.query_one(f"#client-{side}", CallTable)
        names = self.aligned.strategies
        if not names:
            title.display = table.display = False
            return
        name = names[0]
        built = self.aligned.calls(i, name)
        mine, theirs = built[side == "b"], built[side == "a"]
        title.display = True
        title.update(Text(f"{name} builds", style="dim"))
        if isinstance(mine, StrategyError):
            title.update(Text(f"{name} raises: {visible(cut(mine.error, 200))}", style="red"))
        if not isinstance(mine, list):
            table.display = False
            return
        table.display = True
        table.fit(state)
        against = "B" if side == "a" else "A"
        table.show(
            mine, compare=theirs if isinstance(theirs, list) else [], window=span, against=against
        )

    def action_step(self, by: int) -> None:
        self.step = max(0, min(self.step + by, len(self.aligned.steps) - 1))
        self.show_step()

    def action_difference(self) -> None:
        found = self.aligned.next_difference(self.step)
        if found is None:
            self.notify("no difference after this step", timeout=3)
            return
        self.step = found
        self.show_step()

    def action_help(self) -> None:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column(ratio=1)
        for key in keys.SIDE_BY_SIDE:
            table.add_row(key.typed, key.what)
        body = Group(Text("Keys", style="bold"), table, Text(""), Text(HELP))
        self.push_screen(TextScreen("streamscope replay A B: help", body))

    def action_back(self) -> None:  # type: ignore[override]
        self.exit()
