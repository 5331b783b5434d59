"""The replay's keys are written once (tui/keys.py): every key a screen binds is in the
help screen and in `replay --help`, with the words its footer and palette give it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from rich.console import Console

from streamscope.cli import main
from streamscope.tui.keys import TYPED
from streamscope.tui.screens.exchanges import ExchangesScreen
from streamscope.tui.screens.help import help_text
from streamscope.tui.screens.request import RequestScreen
from streamscope.tui.screens.stream import StreamScreen
from streamscope.tui.screens.websocket import SessionScreen

SCREENS = [StreamScreen, ExchangesScreen, RequestScreen, SessionScreen]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help_screen() -> str:
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(help_text(("guarded", "naive")))
    return _flat(console.export_text())


def _cli_help() -> str:
    return _flat(CliRunner().invoke(main, ["replay", "--help"], terminal_width=200).output)


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("where", ["help screen", "replay --help"])
def test_every_binding_is_listed_with_its_words(screen, where):
    text = _help_screen() if where == "help screen" else _cli_help()
    for binding in screen.BINDINGS:
        keys = ", ".join(TYPED.get(k, k) for k in binding.key.split(","))
        assert f"{keys} {_flat(binding.tooltip)}" in text, (binding.key, where)


def test_the_help_screen_names_the_streams_clients():
    assert "guarded, naive" in _help_screen()
