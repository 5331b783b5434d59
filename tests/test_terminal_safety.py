"""Nothing from a recording reaches a terminal raw: control characters are made visible.

An ESC sequence inside a tool name could retitle the terminal or clear the screen. The
text report, the replay and every log line show it as `\\x1b`; `--json` stays exact.
"""

from __future__ import annotations

import io
import re

import httpx
import orjson
import pytest
from click.testing import CliRunner
from rich.console import Console
from textual.widgets import DataTable, Static

from streamscope.cli import main
from streamscope.playback.serve import ServeServer
from streamscope.recording import RecordingWriter
from streamscope.text import quote, say, visible
from streamscope.tui.app import ReplayApp
from streamscope.tui.screens import StreamScreen

from .test_tui import settle

# what must never be printed (tab, newline may): C0, DEL, C1, and bidi overrides
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
TITLE = "\x1b]0;pwned\x07"  # retitles a terminal
CLEAR = "\x1b[2J"
CSI = "\x9b31m"  # the C1 form of ESC [
RLO = "\u202e"  # shows what follows it right to left: a name that reads as another
NAME = f"get{TITLE}weather{RLO}"
ARGS = f'{{"city": "Paris{CLEAR}"}}'
ID = f"call_{CSI}x\x7f"
FINISH = f"tool_calls{CLEAR}"


def _chunks() -> list[dict]:
    def chunk(delta: dict, finish: str | None = None) -> dict:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"object": "chat.completion.chunk", "choices": [choice]}

    opener = {"index": 0, "id": ID, "type": "function", "function": {"name": NAME}}
    return [
        chunk({"role": "assistant", "content": f"Let me look{TITLE}", "tool_calls": [opener]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ARGS}}]}),
        chunk({}, FINISH),
    ]


@pytest.fixture
def hostile(tmp_path) -> str:
    """A recording whose every recorded string carries control characters."""
    path = tmp_path / f"hostile{CLEAR}.jsonl"
    body = orjson.dumps({"model": f"gpt{TITLE}", "stream": True, "messages": []})
    with RecordingWriter(str(path), argv=["agent"]) as w:
        x = w.new_exchange()
        w.request(x, "POST", f"http://host/v1/chat/completions?{CLEAR}", [("x-a", TITLE)], body)
        w.response(x, 200, [("content-type", "text/event-stream")])
        for c in _chunks():
            w.chunk(x, b"data: " + orjson.dumps(c) + b"\n\n")
        w.chunk(x, b"data: [DONE]\n\n")
        w.end(x, "complete")
    return str(path)


def test_the_helper_shows_every_control_character():
    assert visible(TITLE) == "\\x1b]0;pwned\\x07"
    assert visible(CSI + "\x7f") == "\\x9b31m\\x7f"
    assert visible(f"a{RLO}b\u2066") == "a\\u202eb\\u2066"
    assert visible("a\tb\nc", lines=True) == "a\tb\nc"
    assert not RAW.search(quote(NAME + ID + ARGS))


def test_inspect_text_shows_control_characters_and_json_stays_exact(hostile):
    text = CliRunner().invoke(main, ["inspect", hostile])
    assert text.exit_code == 0, text.output
    assert not RAW.search(text.output)
    assert "\\x1b]0;pwned\\x07" in text.output and "\\x9b31m" in text.output
    as_json = CliRunner().invoke(main, ["inspect", "--json", hostile])
    doc = orjson.loads(as_json.output)
    (call,) = doc["streams"][0]["tool_calls"]
    assert (call["id"], call["name"], call["arguments"]) == (ID, NAME, ARGS)  # exact
    assert doc["streams"][0]["finish_reason"] == FINISH


def _shown(app) -> str:
    """Everything the screen's widgets show, as plain text."""
    console = Console(file=io.StringIO(), width=200, color_system=None)
    for widget in app.screen.query(Static):
        console.print(widget.render())
    for table in app.screen.query(DataTable):
        for row in range(table.row_count):
            console.print(*[str(cell) for cell in table.get_row_at(row)])
    for note in app._notifications:
        console.print(note.message)
    return console.file.getvalue()


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_replay_shows_control_characters(hostile):
    app = ReplayApp(hostile, frame=3)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, StreamScreen)
        for summary in app.screen.model.summaries:  # the frame list's rows
            assert not RAW.search(summary), summary
        for key in ("end", "a"):  # the last frame (repair, finish) and every argument whole
            await pilot.press(key)
            await pilot.pause()
            shown = _shown(app)
            assert not RAW.search(shown), RAW.findall(shown)
            svg = app.export_screenshot()  # the whole screen, as drawn
            assert not RAW.search(svg.replace("\n", "").replace("\t", ""))
        assert "\\x1b[2J" in shown


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_serve_logs_request_paths_with_control_characters_shown(hostile, capfd):
    with ServeServer([hostile], 0, speed=0, log=say) as server:
        httpx.post(server.base_url + "/chat/completions%1b%5b2J", json={}, timeout=10)
        httpx.post(server.base_url + "/chat/completions", json={}, timeout=10)
    err = capfd.readouterr().err
    assert not RAW.search(err.replace("\n", ""))
    assert "\\x1b[2J" in err  # the refused path, as sent
