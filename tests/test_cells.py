"""A cell the TUI cuts to a width is cut by the screen columns it takes, not its
characters: a CJK model or path takes two columns a character."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from streamscope.tui.widgets import cut_cells, tail_cells

# ASCII, CJK (two columns) and a combining mark (none)
TEXT = st.text(alphabet=st.sampled_from("ab/.-模型路径\u0301"), max_size=40)


@given(TEXT, st.integers(min_value=1, max_value=50))
def test_a_cut_start_fits_its_width_and_keeps_the_text_it_shows(text, width):
    shown = cut_cells(text, width)
    assert cell_len(shown) <= width
    if cell_len(text) <= width:
        assert shown == text
    else:
        assert shown.endswith("…") and text.startswith(shown[:-1])


@given(TEXT, st.integers(min_value=0, max_value=50))
def test_a_cut_end_fits_its_width_keeps_the_end_and_leaves_out_no_more_than_it_must(text, width):
    shown = tail_cells(text, width)
    assert cell_len(shown) <= width
    if cell_len(text) <= width:
        assert shown == text
    elif width < 2:
        assert shown == ""
    else:
        kept = shown[1:]
        assert shown.startswith("…") and text.endswith(kept)
        # the character before what is kept would not have fitted
        before = text[: len(text) - len(kept)][-1]
        assert cell_len(before + kept) > width - 1


def test_a_cjk_path_is_cut_to_its_end_in_columns():
    assert tail_cells("/v1/路径路径/chat", 10) == "…路径/chat"  # 1 + 4 + 5 columns
    assert tail_cells("/v1/路径路径/chat", 9) == "…径/chat"  # (路 would make it 10)
    assert cut_cells("模型模型", 6) == "模型…"  # (a wide character cut in two is dropped)
