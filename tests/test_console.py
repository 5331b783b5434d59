"""The text report's console (streamscope/console.py): markup styles a terminal's lines and
leaves a pipe's plain, recorded text stays text whatever brackets it holds, and a table
wider than the console folds its cells within the width."""

from __future__ import annotations

import io
import re

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from streamscope.cli import main
from streamscope.console import Console, cell_len, escape, fold, render, widths_within

SGR = re.compile("\x1b\\[[0-9;]*m")
# text with what markup is made of, often
MARKUPISH = st.text(st.sampled_from("[]\\/ab ldoyrec日\u0301"), max_size=30) | st.text(max_size=30)


@given(MARKUPISH)
def test_escaped_text_reads_back_as_it_is_in_a_pipe_and_on_a_terminal(text):
    assert render(escape(text), color=False) == text
    assert render(escape(text), color=True) == text  # (no style of its own)


@given(MARKUPISH, MARKUPISH)
def test_recorded_text_inside_a_style_never_ends_it_or_styles_itself(a, b):
    line = render(f"[bold]{escape(a)}[/] {escape(b)}", color=True)
    assert line == f"\x1b[0m\x1b[1m{a}\x1b[0m {b}"


def test_styles_nest_and_a_line_left_open_is_closed():
    assert (
        render("[bold red]x[/] [dim]y", color=True)
        == "\x1b[0m\x1b[1;31mx\x1b[0m \x1b[0m\x1b[2my\x1b[0m"
    )
    assert render("[bold]a [cyan]b[/] c[/]", color=False) == "a b c"
    # a tag that is no style is text; a close with nothing open too
    assert render("[not a style] [/] \\[bold]", color=True) == "[not a style] [/] [bold]"


@given(st.text(max_size=60), st.integers(1, 20))
def test_a_folded_cell_fits_its_width_and_loses_only_spaces_at_its_breaks(text, width):
    lines = fold(text, width)
    assert all(cell_len(line) <= width or len(line) == 1 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


@given(st.lists(st.integers(1, 200), min_size=1, max_size=8), st.integers(1, 300))
def test_narrowed_widths_fit_the_room_and_narrow_the_widest_first(natural, room):
    widths = widths_within(natural, room)
    assert all(1 <= w <= n for w, n in zip(widths, natural, strict=True))
    assert sum(widths) <= max(room, len(natural))
    # a column kept whole is never wider than one narrowed (but by the one column of
    # spare room a narrowed column may get)
    narrowed = [w for w, n in zip(widths, natural, strict=True) if w < n]
    whole = [w for w, n in zip(widths, natural, strict=True) if w == n]
    assert not narrowed or not whole or max(whole) <= min(narrowed) + 1


def test_a_table_wider_than_the_console_folds_every_line_within_it():
    out = io.StringIO()
    cells = ("1", "call_" + "x" * 50, '{"city": "Paris", "unit": "celsius"}')
    Console(file=out, width=40).table(("#", "id", "arguments"), [cells], fold_rows=10)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["#", "id", "arguments"]
    assert len(lines) > 2 and all(cell_len(line) <= 40 for line in lines)
    start, end = lines[0].index("id"), lines[0].index("arguments")
    assert "".join(line[start:end].strip() for line in lines[1:]) == cells[1]


def test_colour_follows_the_terminal_and_the_variables_people_set(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert Console(file=Tty()).color and not Console(file=io.StringIO()).color
    monkeypatch.setenv("TERM", "dumb")
    assert not Console(file=Tty()).color
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Console(file=Tty()).color
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert Console(file=io.StringIO()).color
    monkeypatch.setenv("COLUMNS", "77")
    assert Console(file=Tty()).width == 77


def test_inspect_styles_its_report_when_colour_is_forced_and_recorded_brackets_stay_text(
    tmp_path, monkeypatch
):
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"[bold]x[/] \\\\[red]"}}]}\n\n'
        b"data: [DONE]\n\n"
    )
    path = tmp_path / "brackets.sse"
    path.write_bytes(body)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = CliRunner().invoke(main, ["inspect", str(path)]).output
    assert out.startswith("\x1b[0m\x1b[1mstreamscope\x1b[0m · ")
    assert 'content: "[bold]x[/] \\\\[red]"' in SGR.sub("", out)
    monkeypatch.delenv("FORCE_COLOR")
    plain = CliRunner().invoke(main, ["inspect", str(path)]).output
    assert "\x1b" not in plain and plain == SGR.sub("", out)
