"""The CLI's help, as a newcomer reads it: what replay reads and its main keys, how serve
picks the exchange a request gets, completion of demo's sample names, -V."""

from __future__ import annotations

import re
import sys

import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner

from streamscope import __version__
from streamscope.cli import main, sample_names


def help_of(*command: str) -> str:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


def test_replay_help_names_every_input_it_reads():
    text = " ".join(help_of("replay").split())
    for kind in ("streamscope recording", "raw SSE body", "chat.completion.chunk", "HAR 1.2"):
        assert kind in text


def test_inspect_help_names_every_input_its_docs_list():
    """`inspect --help` named recordings, SSE, chunk JSON Lines and HAR only: a reader with
    a JSON array, an AWS event stream, a cassette or a pipe could not tell it reads them."""
    from pathlib import Path

    docs = Path(__file__).parents[1] / "docs" / "commands" / "inspect.md"
    inputs = " ".join(docs.read_text().split("## Inputs", 1)[1].split("\n## ", 1)[0].split())
    text = " ".join(help_of("inspect").split())
    for kind in (
        "streamscope recording",
        "raw SSE body",
        "chunk log",
        "JSON Lines (NDJSON)",
        "chat.completion.chunk",
        "JSON array of stream events",
        "AWS event stream",
        "HAR 1.2",
        "cassette",
        "vcr",
        "gzip-compressed",
        "/dev/stdin",
        "<(cmd)",
    ):
        assert kind in text, kind
        assert kind in inputs, kind


def _bound_keys() -> set[str]:
    """Every key the replay's screens bind, by name and as displayed."""
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.keys import TYPED
    from streamscope.tui.screens.exchanges import ExchangesScreen
    from streamscope.tui.screens.stream import StreamScreen
    from streamscope.tui.screens.websocket import SessionScreen

    keys = set()
    screens = [ExchangesScreen, StreamScreen, SessionScreen]
    for binding in [*ReplayApp.BINDINGS, *(b for s in screens for b in s.BINDINGS)]:
        keys.update(binding.key.split(","))
        keys.update(TYPED.get(k, k) for k in binding.key.split(","))
        if binding.key_display:
            keys.add(binding.key_display)
    return keys


def test_replay_help_lists_the_keys_and_each_is_really_bound():
    text = help_of("replay")
    block, side = text.split("Keys (", 1)[1].split("Options:", 1)[0].split("Side by side (")
    named = _named(block)
    assert {"enter", "n", "]", "s", "space", "r", "+", "?", "q"} <= set(named)
    assert set(named) - {"ctrl+p"} <= _bound_keys(), set(named) - _bound_keys()
    assert "? lists them on every screen" in text
    # `replay A B`'s keys, each bound by its app
    from streamscope.tui.sidebyside import SideBySideApp

    bound = {k for b in SideBySideApp.BINDINGS for k in b.key.split(",")}  # type: ignore[union-attr]
    assert {"right", "left", "right_square_bracket", "question_mark", "q"} <= bound
    assert {"right", "left", "]", "?", "q"} <= set(_named(side))


def _named(block: str) -> list[str]:
    rows = [line.strip() for line in block.splitlines()[1:] if line.strip()]
    # "right, n   the next frame (within the filter)": keys, then words
    named = []
    for row in rows:
        keys = re.match(r"((?:[^\s,]+)(?:, [^\s,]+)*)\s{3,}", row)
        assert keys, row
        named += keys.group(1).split(", ")
    return named


def test_serve_help_says_how_a_request_picks_its_exchange():
    from streamscope.playback.library import MATCH_KEYS

    text = " ".join(help_of("serve").split())
    for key in MATCH_KEYS:  # every key the matching compares is named
        assert re.search(rf"\b{key}\b", text), key
    assert "next exchange in order" in text
    assert "--strict" in text and "400 error" in text
    assert '"stream": true' in text


def completions(*words: str) -> list[str]:
    complete = BashComplete(main, {}, "streamscope", "_STREAMSCOPE_COMPLETE")
    return [c.value for c in complete.get_completions(list(words[:-1]), words[-1])]


def test_completion_completes_demo_sample_names():
    assert "alibaba-empty-id" in sample_names()
    assert completions("demo", "alib") == ["alibaba-empty-id"]
    assert completions("demo", "") == ["list", *sample_names()]
    assert completions("demo", "anthropic-") == [
        n for n in sample_names() if n.startswith("anthropic-")
    ]


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_dash_v_is_version(flag):
    result = CliRunner().invoke(main, [flag])
    assert result.exit_code == 0
    assert result.output == f"streamscope, version {__version__}\n"


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_the_console_script_answers_version_as_click_does(flag, monkeypatch, capsys):
    """The console script answers --version before importing click (__main__.py): in the
    same words as click's version option."""
    from streamscope.__main__ import main as console_script

    monkeypatch.setattr(sys, "argv", ["streamscope", flag])
    console_script()
    assert capsys.readouterr().out == CliRunner().invoke(main, [flag]).output
