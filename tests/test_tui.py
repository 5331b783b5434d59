"""The replay TUI, used as a person would: Pilot for keys and mouse, SVG snapshots for looks."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from textual.events import Key
from textual.widgets import Label

from benchmarks.gen import gemini_candidates_chunk
from streamscope.cli import main
from streamscope.tui.app import ReplayApp
from streamscope.tui.screens import ExchangesScreen, StreamScreen, TextScreen
from streamscope.tui.widgets import CallTable, FrameDetail, FrameList, Timeline
from streamscope.tui.widgets.ask_line import AskLine
from streamscope.tui.widgets.info_line import InfoLine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZE = (100, 30)
# anyio's pytest plugin (installed with httpx) runs the async tests; slow: the fast run
# (-m 'not slow') leaves the TUI's Pilot and snapshot tests out
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sample(name: str) -> str:
    return os.path.join(ROOT, "recordings", name)


async def settle(pilot, screen_type=StreamScreen, timeout: float = 10.0) -> None:
    """Wait for the loading workers: until the app shows `screen_type`."""
    waited = 0.0
    while not isinstance(pilot.app.screen, screen_type) and waited < timeout:
        await pilot.pause(0.05)
        waited += 0.05
    assert isinstance(pilot.app.screen, screen_type), type(pilot.app.screen).__name__
    await pilot.pause()


async def exchanges_filled(pilot) -> None:
    await settle(pilot, ExchangesScreen)
    screen = pilot.app.screen
    # the analysis in (a child process: slow on a loaded machine), and the rows fitted to
    # the final width
    for _ in range(600):
        if screen.summaries is not None and screen._width == screen.size.width:
            break
        await pilot.pause(0.05)
    assert screen.summaries is not None, "the analysis did not come in 30 s"
    await pilot.pause(0.1)


def worst_cell(app, row: int) -> str:
    table = app.screen.query_one("#exchanges")
    return str(table.get_cell(table.coordinate_to_cell_key((row, 0)).row_key, "worst"))


def text(widget) -> str:
    """What a Static-based widget shows, as plain text."""
    console = Console(width=160, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.file.getvalue()


async def test_exchanges_screen_then_enter_opens_the_stream():
    app = ReplayApp(sample("alibaba-empty-id.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        assert table.row_count == 2
        assert worst_cell(app, 0) == "! id-empty-overwrite +1"  # the anomalies, by name
        assert worst_cell(app, 1) == "clean"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.model.exchange == 1 and app.screen.frame == 0
        await pilot.press("q")  # back to the exchanges
        await pilot.pause()
        assert isinstance(app.screen, ExchangesScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (0, None)


async def test_stepping_keys_and_anomaly_jumps():
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("right", "n")
        assert screen.frame == 2
        await pilot.press("left")
        assert screen.frame == 1
        await pilot.press("p")
        assert screen.frame == 0
        await pilot.press("right_square_bracket")
        assert screen.frame == 2  # the first id "" overwrite
        robust = screen.query_one("#robust", CallTable)
        assert "⚠" in text(robust)
        assert 'id "" kept "call_eee11723464a4b9eb8cee71d"' in text(screen.query_one("#traps"))
        await pilot.press("left_square_bracket")
        assert screen.frame == 2  # no anomaly before it
        await pilot.press("end")
        assert screen.frame == screen.model.total
        await pilot.press("home")
        assert screen.frame == 0


async def test_goto_filter_strategy_speed_help_and_arguments():
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("g")
        ask = screen.query_one(AskLine)
        assert app.screen is screen and ask.asking  # asked in the keys' line, frames in sight
        assert "Go to frame (0-8)" in text(ask.query_one(Label))
        await pilot.press("5", "enter")
        assert screen.frame == 5 and not ask.asking
        await pilot.press("s")
        assert screen.strategy == 1  # naive
        assert "naive" in text(screen.query_one("#strategy-label"))
        await pilot.press("end")
        assert "≠" in text(screen.query_one("#other"))  # naive lost the id
        await pilot.press("plus")
        assert screen.speed == 2
        await pilot.press("minus", "minus")
        assert screen.speed == 0.5
        await pilot.press("slash")
        await pilot.press(*"finish", "enter")
        assert screen.query_one(FrameList).rows == [6]
        assert screen.frame == 6  # the cursor left frame 5, which the filter hides
        await pilot.press("question_mark")
        assert isinstance(app.screen, TextScreen)
        await pilot.press("escape")
        await pilot.press("a")
        assert isinstance(app.screen, TextScreen)
        await pilot.press("escape")
        assert app.screen is screen


async def test_the_question_line_takes_every_key_of_the_answer_and_gives_the_keys_back():
    from streamscope.tui.widgets.key_footer import KeyFooter

    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("right", "right")
        footer, ask = screen.query_one(KeyFooter), screen.query_one(AskLine)
        await pilot.press("slash", "n", "space", "p", "home", "left")
        # n, p, space, Home and Left are the screen's keys; asked, they edit the answer
        assert ask.asking and not footer.display and screen.frame == 2
        assert ask.query_one("#answer").value == "n p"
        await pilot.press("escape")  # cancelled: no filter, the frame and keys as before
        await pilot.pause()
        assert not ask.asking and footer.display and screen.filter_text == ""
        assert screen.frame == 2 and screen.query_one(FrameList).has_focus
        await pilot.press("right")
        assert screen.frame == 3
        await pilot.press("g", *"x7", "enter")  # not a number: said, the frame kept
        await pilot.pause()
        assert screen.frame == 3 and "'x7' is not a frame number" in str(
            [n.message for n in app._notifications]
        )
        await pilot.press("g", *"99", "enter")  # past the end: said, the frame kept
        await pilot.pause()
        assert screen.frame == 3 and "frame 99 is past the end: the stream has frames 1-8" in str(
            [n.message for n in app._notifications]
        )
        await pilot.press("g", "²", "enter")  # a digit to str.isdigit, no number to int
        await pilot.pause()
        assert screen.frame == 3 and "'²' is not a frame number" in str(
            [n.message for n in app._notifications]
        )
        await pilot.press("slash", *"[b]x", "enter", "slash")  # the filter, shown as typed
        assert '; now "[b]x"' in text(ask.query_one(Label))


def typed_at_once(app, *keys: str) -> None:
    """Keys as a fast typist sends them: all in the app's queue before the first is
    handled (Pilot's press waits for the app to be idle after each key)."""
    from textual.app import _character_to_key

    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        app.post_message(Key(name, key if len(key) == 1 else None))


@pytest.mark.parametrize(
    ("sample_name", "keys", "question"),
    [
        ("alibaba-empty-id.jsonl", "/finish", "Filter frames"),
        ("alibaba-empty-id.jsonl", "g5", "Go to frame"),
        ("parallel-index-0.jsonl", "/nap", "Filter frames"),  # n, a and p are the screen's keys
    ],
)
async def test_keys_typed_fast_after_a_question_key_are_all_the_answers(
    sample_name, keys, question
):
    app = ReplayApp(sample(sample_name), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        typed_at_once(app, *keys)
        await pilot.pause()
        ask = screen.query_one(AskLine)
        assert ask.asking and question in text(ask.query_one(Label))
        assert ask.query_one("#answer").value == keys[1:]  # every key, in its order
        assert app.screen is screen and screen.frame == 0  # none stepped or opened anything
        typed_at_once(app, "enter", "n")  # the question closed: the next key is the screen's
        await pilot.pause()
        assert not ask.asking and screen.query_one(FrameList).has_focus


async def test_at_60x20_the_filters_question_leaves_room_to_see_the_answer():
    # the question took the whole line, cut bare ("...an anomaly kind; empt"), and what
    # was typed was out of sight
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"usage")
        await pilot.pause()
        ask = app.screen.query_one(AskLine)
        line = app.screen._compositor.render_strips()[ask.region.y].text.rstrip()
        assert line.startswith(" Filter frames (") and "… usage" in line, line
        assert ask.query_one("#answer").region.width >= 12
        await pilot.press("escape")
        await pilot.press("g")  # a short question is whole
        await pilot.pause()
        line = app.screen._compositor.render_strips()[ask.region.y].text.rstrip()
        assert line == " Go to frame (0-8)", line


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_the_top_line_keeps_the_filters_count_whole_and_cuts_the_title(size):
    # at 80 columns it ended 'filter "usage": 1' (of "1 frame"), at 60 the filter was gone
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"usage", "enter")
        await pilot.pause()
        info = app.screen.query_one(InfoLine)
        line = app.screen._compositor.render_strips()[info.region.y].text.rstrip()
        assert line.endswith(' · frame 7/8 · 706ms · filter "usage": 1 frame'), line
        assert line.startswith(" alibaba-") and len(line) <= size[0], line


async def test_at_60x20_the_top_line_cuts_the_files_name_before_the_response():
    # it was cut from the end: "codex-websocket.jsonl · exchange 1 · re… · frame 0/9 · —"
    app = ReplayApp(sample("codex-websocket.jsonl"), exchange=1, response=2)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        info = app.screen.query_one(InfoLine)
        line = app.screen._compositor.render_strips()[info.region.y].text.rstrip()
        assert line == " codex-we… · exchange 1 · response 2 of 3 · frame 0/9 · —", line


async def test_a_wide_file_name_is_cut_by_the_columns_it_takes(tmp_path):
    # cut by characters, a name of wide characters took twice its room and pushed the
    # frame number off the line
    path = tmp_path / ("記録" * 20 + ".jsonl")
    shutil.copy(sample("alibaba-empty-id.jsonl"), path)
    app = ReplayApp(str(path), exchange=1)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        info = app.screen.query_one(InfoLine)
        line = app.screen._compositor.render_strips()[info.region.y].text.rstrip()
        assert line.endswith("… · exchange 1 · frame 0/8 · —"), line
        assert cell_len(line) <= 60, line


@pytest.mark.parametrize(
    ("keys", "answered"),
    [
        # 12, Backspace: frame 1 (the Backspace in its turn); ] the next anomaly, frame 2
        (("g", "1", "2", "backspace", "enter", "]"), "1"),
        # cancelled: ] from frame 0 is frame 2 too, and no filter
        (("slash", "x", "escape", "]"), "x"),
    ],
)
async def test_keys_typed_fast_after_enter_or_escape_are_the_screens(keys, answered):
    """`g 1 Enter ]` typed fast: the ] went into the hidden answer (or was lost); it steps."""
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        ask = screen.query_one(AskLine)
        typed_at_once(app, *keys)
        await pilot.pause()
        assert screen.frame == 2 and screen.filter_text == ""
        assert not ask.asking and screen.query_one(FrameList).has_focus
        assert ask.query_one("#answer").value == answered  # nothing typed into the hidden line
        assert not [n.message for n in app._notifications]  # ("'12]' is not a frame number")
        await pilot.press("g", "5", "enter", "right")  # (Pilot's keys, back to back)
        assert screen.frame == 6 and not ask.asking


async def test_a_missing_index_reads_null_in_the_arguments_and_repair_panels(tmp_path):
    """The table and inspect say null; the panels said Python's None."""
    path = tmp_path / "no-index-cut.sse"
    with open(sample("gemini-no-index.sse"), encoding="utf-8") as f:
        # the first call's arguments cut short: the repair panel names the call too
        path.write_text(f.read().replace('\\"celsius\\"}', '\\"cel'), encoding="utf-8")
    app = ReplayApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("end")
        repair = text(app.screen.query_one(FrameDetail))
        assert (
            'call "get_weather" (id "function-call-13712447254226412846") at index null' in repair
        )
        await pilot.press("a")
        assert isinstance(app.screen, TextScreen)
        shown = app.screen.body.plain
        assert '"get_local_time" (id "function-call-5183419573382718213", index null)' in shown
        assert "None" not in shown + repair


async def test_a_recording_cut_off_in_its_last_line_says_so(tmp_path):
    """The writer killed mid-line: the lines before it open, and the replay says where
    the recording stops, as inspect does (it used to list "0 exchanges" and say nothing)."""
    path = tmp_path / "cut.jsonl"
    with open(sample("openai.jsonl"), "rb") as f:
        header = f.readline()
    path.write_bytes(header + b'{"type":"request","exchange":1,"t_ns":2390232,"method":"PO')
    app = ReplayApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, ExchangesScreen)
        said = [(n.title, n.message) for n in app._notifications]
        assert (
            "cut off",
            f"recording ends with a cut-off line 2 at byte {len(header)} "
            "(the writer was interrupted)",
        ) in said


async def test_play_advances_at_the_recorded_timing_and_pauses():
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("plus", "plus", "plus", "plus")  # x16: the 0.7 s stream in ~45 ms
        await pilot.press("space")
        # the stream plays through and stops (on a loaded machine its timer may lag)
        await wait_for(pilot, lambda: screen.frame == screen.model.total and screen.timer is None)
        await pilot.press("home", "space")
        await pilot.press("space")  # pause at once
        stopped = screen.frame
        await pilot.pause(0.2)
        assert screen.frame == stopped and screen.timer is None


async def test_clicking_a_frame_selects_it():
    app = ReplayApp(sample("openai.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        frames = app.screen.query_one(FrameList)
        await pilot.click(FrameList, offset=(5, 3))
        await pilot.pause()
        assert app.screen.frame == frames.rows[3]


async def test_command_palette_offers_every_action():
    app = ReplayApp(sample("openai.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert commands["Filter"].startswith("show only frames whose summary")
        titles = set(commands)
        assert {
            "Next",
            "Prev",
            "Anomaly",
            "Previous anomaly",
            "Go to",
            "Play",
            "Client",
            "Request",
            "Filter",
            "Back",
        } <= titles


async def test_a_clients_multi_line_error_reads_on_one_line_as_inspect_says_it(tmp_path):
    # an Anthropic `event: error` whose message has a line break: the label showed it as
    # \x0a; it reads ↵ as inspect's raises line does, other control characters escaped
    from .helpers import anthropic_error_sse

    path = anthropic_error_sse(tmp_path)
    app = ReplayApp(str(path))
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await pilot.pause()
        label = text(app.screen.query_one("#strategy-label"))
        assert "anthropic-sdk: raised APIStatusError: Overloaded↵retry\\x09later\\x1b[31m" in label
        assert "\\x0a" not in label and "\x1b" not in label


async def test_sse_and_chunk_logs_open_directly_and_the_sdk_error_shows():
    app = ReplayApp(sample("gemini-no-index.sse"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s", "s")  # openai-sdk
        await pilot.press("end")
        label = text(app.screen.query_one("#strategy-label"))
        assert "raised TypeError" in label
    app = ReplayApp(sample("deepseek-cumulative.chunks.jsonl"), frame=3)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.frame == 3
        await wait_for(pilot, lambda: app.screen.model.result is not None)
        # a chunk log holds no [DONE]: its last line is its end, as inspect reads it (the
        # replay found done-missing and finish-without-done)
        result = app.screen.model.result
        assert result.ended == "done"
        assert {a.kind for a in result.anomalies} == {"args-cumulative"}


def test_replay_bad_input_is_one_line():
    result = CliRunner().invoke(main, ["replay", "/nonexistent/file.jsonl"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "no such file" in result.output


# -- looks ---------------------------------------------------------------------------------


SIZES = [(80, 24), (200, 50)]


def snap(snap_compare, app, *press: str, ready=StreamScreen, size=SIZE) -> bool:
    async def before(pilot) -> None:
        if ready is ExchangesScreen:
            await exchanges_filled(pilot)
        else:
            await settle(pilot, ready)
            for _ in range(600):  # the contract, for the request view
                if app.summaries is not None:
                    break
                await pilot.pause(0.05)
            assert app.summaries is not None, "the analysis did not come in 30 s"
        for key in press:
            await pilot.press(key)
        await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=before)


# name -> (sample, exchange, keys, the screen to wait for); the failed one is written
SHOTS = {
    "exchanges": ("buggy-agent-uuid.jsonl", None, [], ExchangesScreen),
    # the invented id, highlighted in the request, with the finding's words
    "conversation": ("buggy-agent-uuid.jsonl", 2, [], StreamScreen),
    "stream-at-anomaly": ("alibaba-empty-id.jsonl", 1, ["right_square_bracket"], StreamScreen),
    "strategies": ("parallel-index-0.jsonl", 1, ["end", "s", "s"], StreamScreen),
    "repair": ("dashscope-truncated-args.jsonl", 1, ["end"], StreamScreen),
    "help": ("openai.jsonl", 1, ["question_mark"], StreamScreen),
    "failed-exchange": (None, 1, [], None),
    # Anthropic Messages: blocks by index, the SDK's glued input beside robust's reading
    "anthropic-stream": ("anthropic-spliced-message.jsonl", 1, ["end"], StreamScreen),
    "anthropic-request": ("anthropic-buggy-agent.jsonl", 2, [], StreamScreen),
    # the Responses API: two ids per call, the client that routes to the last item
    "responses-stream": (
        "responses-interleaved.jsonl",
        1,
        ["right_square_bracket", "s", "s"],
        StreamScreen,
    ),
    "responses-request": ("responses-parallel-wrapper.jsonl", 2, [], StreamScreen),
    # Gemini: streamed arguments growing path by path, the signature beside the call
    "gemini-stream": ("gemini-streamed-args.jsonl", 1, ["right"] * 4, StreamScreen),
    # an agent that dropped the thoughtSignature, in the request's contents
    "gemini-request": ("gemini-signature-dropped.jsonl", 2, [], None),
    # Bedrock Converse: the text block with no start after the call, last-start's glue
    "bedrock-stream": (
        "bedrock-text-without-start.jsonl",
        1,
        ["right_square_bracket", "s"],
        StreamScreen,
    ),
}


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
@pytest.mark.parametrize("shot", SHOTS)
def test_snapshot(snap_compare, shot, size, tmp_path):
    from streamscope.tui.screens import RequestScreen

    name, exchange, keys, ready = SHOTS[shot]
    path = sample(name) if name else failed_recording(tmp_path / "failed.jsonl")
    app = ReplayApp(path, exchange=exchange)
    assert snap(snap_compare, app, *keys, ready=ready or RequestScreen, size=size)


@pytest.mark.parametrize("shot", ["exchanges", "conversation"])
def test_snapshot_60x20(snap_compare, shot):
    """Smaller than the 80x24 required: the lists drop columns, nothing spills."""
    name, exchange, keys, ready = SHOTS[shot]
    app = ReplayApp(sample(name), exchange=exchange)
    assert snap(snap_compare, app, *keys, ready=ready, size=(60, 20))


async def test_at_80x24_the_footer_fits_and_ten_frames_show():
    app = ReplayApp(sample("parallel-index-0.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        assert app.screen.query_one(FrameList).size.height >= 10
        footer = app.screen.query_one("Footer")
        keys = [k for k in footer.query("FooterKey") if k.display]
        assert keys and max(k.region.right for k in keys) <= 80
        assert "q" in [k.key_display for k in keys]  # Back is still on screen


def footer_keys(app) -> list[str]:
    """The footer's keys in sight ("? Help"), each checked to end inside the terminal."""
    keys = [k for k in app.screen.query_one("Footer").query("FooterKey") if k.display]
    assert keys and max(k.region.right for k in keys) <= app.size.width
    return [f"{k.key_display} {k.description}" for k in keys]


async def test_at_60x20_the_stream_footer_fits_leaving_play_and_filter_out():
    # ? Help and q Back ran off the right edge; the keys left out are still keys (and ?
    # lists them)
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        every = ["→ Next", "] Anomaly", "spc Play", "s Client", "/ Filter", "a Args"]
        every += ["r Request", "? Help", "q Back"]
        assert footer_keys(app) == [k for k in every if k not in ("spc Play", "/ Filter")]
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        assert footer_keys(app) == every  # wide enough for every key: as it was
        await pilot.resize_terminal(40, 20)
        await pilot.pause(0.2)
        assert footer_keys(app) == ["→ Next", "] Anomaly", "? Help", "q Back"]
        await pilot.press("space")  # left out of the footer, still a key
        assert app.screen.playing


async def test_at_80x24_the_top_table_is_labelled_robust():
    # the client's table below names its client; robust's must say whose it is too
    app = ReplayApp(sample("parallel-index-0.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        label = app.screen.query_one("#robust-label")
        table = app.screen.query_one("#robust", CallTable)
        assert label.region.height == 1 and label.region.bottom == table.region.y
        assert str(label.render()).startswith("robust")


def one_stream(path, tool_calls: list[dict]) -> str:
    """A recording of one stream whose frames each carry one of `tool_calls`."""
    from streamscope.recording import RecordingWriter

    with RecordingWriter(str(path)) as w:
        x = w.new_exchange()
        w.request(x, "POST", "http://h/v1/chat/completions", [], b'{"stream":true}')
        w.response(x, 200, [("content-type", "text/event-stream")])
        for call in tool_calls:
            event = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
            w.chunk(x, b"data: " + orjson.dumps(event) + b"\n\n")
        w.end(x, "complete")
    return str(path)


async def test_end_keeps_the_last_frame_in_view_when_the_tables_grow(tmp_path):
    # from frame 0 ("no calls yet") to the end of three parallel calls: the call tables
    # grow by two rows each and the frame list shrinks after it scrolled to the last frame
    calls = [
        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f"}}
        for i in range(3)
    ]
    calls += [{"index": k % 3, "function": {"arguments": "x"}} for k in range(60)]
    path = one_stream(tmp_path / "parallel.jsonl", calls)
    app = ReplayApp(path, exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        frames = app.screen.query_one(FrameList)
        await pilot.press("end")
        await pilot.pause()
        await pilot.pause()
        row = frames.rows.index(app.screen.frame)
        top = frames.scroll_offset.y
        assert top <= row < top + frames.size.height, (row, top, frames.size.height)


async def test_a_frame_of_thousands_of_candidates_shows_a_bounded_detail(tmp_path):
    """Its changes, its bytes and its JSON are shown in part, each saying what is left
    out: drawn whole, one chunk of 3,000 candidates made 58,000 lines and each key took
    seconds. The detail is as tall for 2,000 candidates as for 400."""
    heights = []
    for n in (400, 2_000):
        path = tmp_path / f"c{n}.sse"
        path.write_bytes(b"".join(gemini_candidates_chunk(n)))
        app = ReplayApp(str(path))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("end")
            await pilot.pause()
            detail = app.screen.query_one(FrameDetail)
            shown = text(detail)
            heights.append(detail.size.height)
        # (each candidate's call makes four changes and two anomalies; 50 of each shown)
        assert f"… {n * 4 - 50:,} more changes not shown here" in shown
        assert f"… {n * 2 - 50:,} more anomalies not shown here (inspect lists" in shown
        assert "bytes more (export --frames 1-1 writes the frame whole)" in shown
        assert "the rest of its JSON (export --frames 1-1" in shown
    assert heights[0] == heights[1] and heights[0] < 1_000, heights


@pytest.mark.parametrize(
    "name", sorted(n for n in os.listdir(os.path.join(ROOT, "recordings")) if n != "README.md")
)
async def test_every_sample_opens_and_steps_to_the_end(name):
    from streamscope.inputs import open_input

    recorded = name.endswith(".jsonl") and "chunks" not in name
    with open_input(sample(name)) as opened:  # a WebSocket session: its first response
        session = recorded and opened.exchange(1).info.framing == "websocket"
    app = ReplayApp(sample(name), exchange=1 if recorded else None, response=1 if session else None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        for _ in range(screen.model.total + 1):
            # the key through the app's bindings, then the frame painted before the next
            # (Pilot.press also sleeps until the process looks idle: 70% of this test's time)
            app.post_message(Key("right", None))
            await asyncio.wait_for(screen.wait_for_refresh(), 10)
        await pilot.pause()
        assert screen.frame == screen.model.total


async def wait_for(pilot, condition, timeout: float = 10.0) -> None:
    """Pause until `condition()` holds (the app looks for growth every second)."""
    for _ in range(int(timeout / 0.05)):
        if condition():
            break
        await pilot.pause(0.05)
    await pilot.pause()
    assert condition()


def live_recording(path):
    """A recording being written: exchange 1 complete, exchange 2's stream begun."""
    import orjson

    from streamscope.dialects.chat.appendix_a import FIXTURES
    from streamscope.recording import RecordingWriter

    from .helpers import sse_body

    writer = RecordingWriter(path)
    events = [e + b"\n\n" for e in sse_body(FIXTURES["Q0"]).split(b"\n\n")[:-1]]
    for n in (1, 2):
        ex = writer.new_exchange()
        request = orjson.dumps({"model": "m", "stream": True})
        writer.request(ex, "POST", "http://127.0.0.1/v1/chat/completions", [], request)
        writer.response(ex, 200, [("content-type", "text/event-stream")])
        for event in events if n == 1 else events[:1]:
            writer.chunk(ex, event)
        if n == 1:
            writer.end(ex, "complete")
    return writer, events


async def test_follow_shows_what_the_recorder_adds_reading_only_new_lines(tmp_path):
    writer, events = live_recording(tmp_path / "live.jsonl")
    app = ReplayApp(str(tmp_path / "live.jsonl"), exchange=2, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        index = app.input.index()
        info = lambda: text(screen.query_one("#info"))  # noqa: E731
        assert screen.model.total == 1 and screen.frame == 1  # it opens at the newest frame
        assert "open (still being written)" in info()
        for event in events[1:-1]:
            writer.chunk(2, event)
        await wait_for(pilot, lambda: screen.frame == len(events) - 1)
        assert "open (still being written)" in info()
        assert not screen.model.result.anomalies  # an open stream is not an unfinished one
        writer.chunk(2, events[-1])
        writer.end(2, "complete")
        await wait_for(pilot, lambda: "open" not in info())
        assert screen.frame == screen.model.total == len(events)
        assert app.screen is screen and app.input.index() is index  # grown, not re-read
        assert index.exchange(2).end is not None
    writer.close()


async def test_follow_keeps_the_exchanges_list_true(tmp_path, monkeypatch):
    from .test_follow import Reads

    path = tmp_path / "live.jsonl"
    writer, events = live_recording(path)
    app = ReplayApp(str(path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        frames = lambda row: table.get_row_at(row)[list(table.columns).index("frames")]  # noqa: E731
        assert worst_cell(app, 0) == "clean" and worst_cell(app, 1) == "open"  # not "1 error"
        assert frames(1) == "1"  # its true count so far
        reads, before = Reads(monkeypatch), os.path.getsize(path)
        for event in events[1:-1]:
            writer.chunk(2, event)
        await wait_for(pilot, lambda: frames(1) == str(len(events) - 1))
        assert worst_cell(app, 1) == "open"  # still no verdict: the stream goes on
        writer.chunk(2, events[-1])
        writer.end(2, "complete")
        ex3 = writer.new_exchange()
        writer.request(ex3, "POST", "http://127.0.0.1/v1/chat/completions", [], b"{}")
        await wait_for(pilot, lambda: table.row_count == 3)
        await wait_for(pilot, lambda: worst_cell(app, 1) == "clean")
        assert frames(1) == str(len(events))
        assert "3 exchanges" in text(app.screen.query_one("#title"))
        assert worst_cell(app, 2) == "open"
        # only the appended bytes were read: here (the index) and by the analysis
        assert reads.ranges and reads.all_at_or_after(before)
        assert app.following.bytes_read == os.path.getsize(path)
    writer.close()
    assert app.following._proc.returncode == 0  # the analysis ended with the app


async def test_a_frame_past_the_end_of_an_exchange_opened_from_the_list_keeps_the_list():
    # `replay FILE --frame 99` of several exchanges: the list, then Enter ended the app
    app = ReplayApp(sample("openai.jsonl"), frame=99)
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.title == "no such frame" for n in app._notifications))
        assert app.return_code is None and isinstance(app.screen, ExchangesScreen)
        (said,) = [n.message for n in app._notifications if n.title == "no such frame"]
        assert "--frame 99: the stream has frames 1-11 (exchange 1)" in said, said
        await pilot.press("enter")  # asked again: opened, at its start
        await settle(pilot)
        assert app.screen.frame == 0 and app.return_code is None


@pytest.mark.parametrize(
    "width, legend",
    [
        (100, " · green: this frame changed it · ⚠ a trap"),
        (72, " · green: changed · ⚠ a trap"),
        (60, " · green: changed · ⚠ a trap"),
        (50, " · green: changed"),
        (40, ""),
    ],
)
async def test_robusts_label_says_less_rather_than_be_cut(width, legend):
    # at 60-72 columns it was cut bare mid-phrase: "· green: this frame changed", "· ⚠ a"
    app = ReplayApp(sample("openai.jsonl"), exchange=1)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        label = app.screen.query_one("#robust-label")
        assert text(label).rstrip("\n") == "robust: streamscope's reading" + legend
        assert label.content.cell_len <= label.content_region.width


async def test_the_loading_screen_names_the_file_as_it_is_named():
    # a file called "[b]x.jsonl" read as markup: "Reading x.jsonl", in bold
    from textual.app import App

    from streamscope.tui.screens import Loading

    app = App()
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(Loading("Reading [b]x\x1b.jsonl …"))
        await pilot.pause()
        label = app.screen.query_one(Label)
        assert str(label.render()) == "Reading [b]x\\x1b.jsonl …"


@pytest.mark.parametrize("folder", ["plain", "m[/x] [b]"])
async def test_follow_says_a_line_it_skips_once_it_is_appended(tmp_path, folder):
    # the lines skipped at the start were said; one appended later was skipped silently
    # (and a path that reads as markup, `[/x]`, raised in the notice: following stopped)
    (tmp_path / folder).mkdir(parents=True)  # ("m[" holding "x] [b]")
    path = tmp_path / folder / "live.jsonl"
    lines = Path(sample("openai.jsonl")).read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:20]), encoding="utf-8")
    app = ReplayApp(str(path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        errors = app.screen.query_one("#errors")
        assert not errors.display  # nothing skipped yet: no line for it
        with path.open("a", encoding="utf-8") as f:
            f.write("garbage\n")
        await wait_for(pilot, lambda: errors.display)
        assert "skipped 1 unreadable line" in text(errors) and "line 21" in text(errors)
        said = [n for n in app._notifications if n.title == "skipped a line"]
        assert len(said) == 1 and "line 21 (byte" in said[0].message, said
        assert f"{folder}/live.jsonl" in said[0].message and not said[0].markup


async def test_a_custom_call_shows_its_type_name_and_input():
    app = ReplayApp(sample("custom-tool.jsonl"), exchange=1)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("right", "right")  # the opener, then the first input fragment
        from streamscope.tui.widgets import FrameDetail

        table = text(screen.query_one("#robust", CallTable))
        assert '"custom"' in table and '"run_shell"' in table and "grep -rn" in table
        assert 'input += "grep -rn "' in text(screen.query_one(FrameDetail))
        # the input fragment lights up the arguments cell, as a function's arguments do
        columns = screen.query_one("#robust", CallTable).content.renderable.columns
        cell = next(c for c in columns if c.header == "arguments")._cells[0]
        assert any("reverse" in str(span.style) for span in cell.spans)
        await pilot.press("end")
        table = text(screen.query_one("#robust", CallTable))
        assert 'grep -rn "TODO" src/ | head -20' in table and '"read_file"' in table


# -- the conversation ----------------------------------------------------------------------


async def test_an_anthropic_stream_reads_in_its_own_words():
    app = ReplayApp(sample("anthropic-spliced-message.jsonl"), exchange=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        robust, other = screen.query(CallTable)
        await pilot.press("right", "right")
        table = text(robust)
        assert " m " in table and "blk" in table and "toolu_01Gb8NwQ4rT2xV6mK9cZ3pHy" in table
        assert "block 0" in text(screen.query_one(FrameDetail))
        # the anomaly jumps reach the spliced message_start, in the dialect's words
        await pilot.press(*["right_square_bracket"] * 3)  # frames 3, 4, then 5
        assert screen.frame == 5
        detail = text(screen.query_one(FrameDetail))
        assert "message-start-repeated" in detail and "message 1 begins" in detail
        # the clients beside robust are Anthropic's, the SDK's glued input marked
        await pilot.press("end")
        await pilot.pause()
        assert "anthropic-sdk" in text(screen.query_one("StrategyLabel"))
        assert '≠{"city":"Osl{"}' in text(other).replace(" ", "")
        seen = set()
        for _ in range(4):
            seen.add(text(screen.query_one("StrategyLabel")).split(" ")[0].rstrip(":"))
            await pilot.press("s")
        assert seen == {"anthropic-sdk", "start-concat", "last-block", "truthy"}


async def test_an_anthropic_request_shows_its_blocks_and_the_findings_on_them():
    app = ReplayApp(sample("anthropic-buggy-agent.jsonl"), exchange=2)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for _ in range(600):
            if app.summaries is not None:
                break
            await pilot.pause(0.05)
        await pilot.pause()
        screen = app.screen
        assert screen.query_one("#right").current == "conversation-scroll"  # it broke
        lines = conversation_text(app).splitlines()
        call = next(i for i, line in enumerate(lines) if "call id" in line)
        assert '"toolu_01Pz5MwK9rT3xQ7nV2bY6cLh"' in lines[call]
        assert '= call "get_weather" of exchange 1\'s stream' in lines[call + 1]
        assert "tool-result-missing" in lines[call + 2]  # on the assistant message
        answer = next(i for i, line in enumerate(lines) if line.startswith("[2] user answers"))
        assert "(no call before it has this id)" in lines[answer]
        assert "tool-result-id-mismatch" in lines[answer + 2]  # on the message it is about
        assert any(line.startswith("System") for line in lines)


async def test_a_responses_stream_shows_both_ids_and_its_own_clients():
    app = ReplayApp(sample("responses-interleaved.jsonl"), exchange=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        robust, other = screen.query(CallTable)
        await pilot.press("right_square_bracket")  # the first interleaved delta
        assert screen.frame == 9
        table = text(robust)
        assert "item_id" in table and "call_id" in table and " out " in table
        assert '"fc_llama_2"' in table and '"call_llama_2"' in table
        detail = text(screen.query_one(FrameDetail))
        assert "items-interleaved" in detail and 'output 0: arguments += "\\"Paris\\"}"' in detail
        seen = {}
        for _ in range(4):
            name = text(screen.query_one("StrategyLabel")).split(" ")[0]
            seen[name] = text(other)
            await pilot.press("s")
        assert set(seen) == {"openai-sdk", "deltas-only", "current-item", "strict-done"}
        assert "≠" in seen["current-item"] and "≠" not in seen["openai-sdk"]


async def test_a_gemini_stream_grows_its_arguments_path_by_path_and_shows_the_signature():
    app = ReplayApp(sample("gemini-streamed-args.jsonl"), exchange=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        robust, other = screen.query(CallTable)
        await pilot.press("right")
        table = text(robust)
        assert " sig " in table and '"list_rooms"' in table and '"CiQBjz1rX0…' in table
        for _ in range(2):
            await pilot.press("right")
        assert screen.frame == 3
        table = text(robust)
        assert '{"title":"Design review"}' in table
        detail = text(screen.query_one(FrameDetail))
        assert 'call 1: $.title += "Design "' in detail and '$.title += "review"' in detail
        await pilot.press("end")
        table = text(robust)
        assert '"when":{"start":"2026-12-02T10:00","minutes":45}' in table
        seen = {}
        for _ in range(5):
            name = text(screen.query_one("StrategyLabel")).split(" ")[0]
            seen[name] = text(other) if other.display else ""
            await pilot.press("s")
        assert set(seen) == {"parts", "index-0", "chunk-index", "needs-terminal", "drops-signature"}
        assert '"list_rooms"' not in seen["needs-terminal"]
        # the one call that came with a signature has none there: its sig cell differs
        assert "≠—" in seen["drops-signature"].replace(" ", "")


async def test_a_gemini_request_shows_the_dropped_signature_where_it_was_dropped():
    from streamscope.tui.screens import RequestScreen

    app = ReplayApp(sample("gemini-signature-dropped.jsonl"), exchange=2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, RequestScreen)  # Gemini refused it: no stream, the request
        assert "Function call is missing a thought_signature" in text(
            app.screen.query_one("#response")
        )
        for _ in range(100):  # the contract is checked in the background
            shown = conversation_text(app)
            if "thought-signature-dropped" in shown:
                break
            await pilot.pause(0.05)
        lines = shown.splitlines()
        model = lines.index("[1] model")
        assert lines[model + 1].startswith('    call id "" "get_weather"')
        assert '= call "get_weather" of exchange 1\'s stream' in lines[model + 2]
        assert "thought-signature-dropped" in shown
        assert 'answers "get_time" (called in content 1)' in shown


async def test_two_long_ids_fold_and_leave_room_for_the_arguments_at_80x24():
    fixture = (
        Path(__file__).parent / "fixtures" / "responses" / "pydantic-ai-gpt-4o-function-call.sse"
    )
    app = ReplayApp(str(fixture))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await pilot.pause()
        lines = text(app.screen.query_one("#robust", CallTable)).splitlines()
        assert "arguments" in lines[0] and "frags" in lines[0]
        assert '{"country"' in lines[1] and lines[1].rstrip().endswith("5")
        at = lines[1].index('"fc_')  # the item_id column, folded over the rows below
        folded = [line[at:].split(" ")[0] for line in lines[1:5]]
        assert "".join(folded) == '"fc_0e9d73f2a1a362c000697ccca32a988194b336865ac70890e1"'


async def test_a_responses_request_shows_its_input_items_and_the_findings_on_them():
    app = ReplayApp(sample("responses-parallel-wrapper.jsonl"), exchange=2)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        for _ in range(600):
            if app.summaries is not None:
                break
            await pilot.pause(0.05)
        await pilot.pause()
        lines = conversation_text(app).splitlines()
        assert any(line.startswith("Instructions") for line in lines)
        batch = next(i for i, line in enumerate(lines) if line.startswith("[1-2] function_call"))
        assert '"call_Zr4nB8wQ2mX6tK9v_0"' in lines[batch + 1]
        assert "tool-call-id-substituted" in lines[batch + 2]
        outputs = next(
            i
            for i, line in enumerate(lines)
            if line.startswith("[") and "function_call_output" in line
        )
        assert lines[outputs].startswith("[3-4]")
        assert "(called in input item 1)" in lines[outputs + 1]


async def analysed(pilot) -> None:
    """Wait for the analysis of every exchange (a child process: slow under load)."""
    for _ in range(600):
        if pilot.app.summaries is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()


def conversation_text(app) -> str:
    from streamscope.tui.widgets import ConversationView

    return text(app.screen.query_one(ConversationView))


async def test_an_invented_id_is_named_in_the_list_and_shown_in_the_request():
    app = ReplayApp(sample("buggy-agent-uuid.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await exchanges_filled(pilot)
        assert worst_cell(app, 0) == "clean"
        assert worst_cell(app, 1) == "✗ tool-call-id-substituted"
        await pilot.press("down", "enter")
        await settle(pilot)
        screen = app.screen
        # it opens on the request, where the contract broke
        assert screen.query_one("#right").current == "conversation-scroll"
        said = conversation_text(app)
        assert '"6f1c9a2e-8b3d-4e7a-9c15-0d6b2f8e4a71"' in said
        assert "tool-call-id-substituted" in said
        assert "[1] user" in said and "get_weather" in said  # messages and tools
        await pilot.press("r")  # back to the frame detail, and again
        assert screen.query_one("#right").current == "detail-scroll"
        await pilot.press("r")
        assert screen.query_one("#right").current == "conversation-scroll"


def piped(path: str) -> str:
    """`path`'s bytes through a pipe, as a shell's <(cat path) passes it: /dev/fd/N."""
    import threading

    read, write = os.pipe()

    def feed() -> None:
        with open(write, "wb") as f, open(path, "rb") as src:
            f.write(src.read())

    threading.Thread(target=feed, daemon=True).start()
    return f"/dev/fd/{read}"


async def test_a_piped_recording_is_analysed_as_the_file_is():
    # <(cmd) is read once: the analysis (a child process) reads the replay's copy of it,
    # not the pipe again (which it said was no such file, every exchange not analysed)
    app = ReplayApp(piped(sample("buggy-agent-uuid.jsonl")))
    async with app.run_test(size=(80, 24)) as pilot:
        await exchanges_filled(pilot)
        assert app.session.analysis_error is None
        assert [worst_cell(app, 0), worst_cell(app, 1)] == ["clean", "✗ tool-call-id-substituted"]


async def test_a_piped_recording_is_named_by_its_path_as_inspect_names_it():
    # <(cmd)'s /dev/fd/63 was titled by its own name: "63 · 2 exchanges"
    path = piped(sample("alibaba-empty-id.jsonl"))
    app = ReplayApp(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await exchanges_filled(pilot)
        assert text(app.screen.query_one("#title")).startswith(f"{path} · 2 exchanges ·")
        await pilot.press("enter")
        await settle(pilot)
        assert text(app.screen.query_one("#info")).startswith(f"{path} · exchange 1 · frame 0/8")
    app = ReplayApp(sample("alibaba-empty-id.jsonl"))  # a file: its own name, as before
    async with app.run_test(size=(80, 24)) as pilot:
        await exchanges_filled(pilot)
        assert text(app.screen.query_one("#title")).startswith("alibaba-empty-id.jsonl · 2 ")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_screen_names_a_named_pipe_by_its_path_and_a_file_by_its_name(tmp_path):
    from streamscope.recording.copies import name_of

    fifo = tmp_path / "feed"
    os.mkfifo(fifo)  # (looked at, not opened: no writer is waited for)
    assert name_of(str(fifo)) == str(fifo)
    assert name_of(sample("openai.jsonl")) == "openai.jsonl"
    assert name_of(str(tmp_path / "gone.jsonl")) == "gone.jsonl"  # (opening it says why)


def test_a_piped_recordings_analysis_is_the_files():
    from streamscope.analysis.driver import summarize_in_child

    name = sample("codex-websocket.jsonl")  # (a session: its turns too)
    said = [r.to_json() for r in summarize_in_child(piped(name))]
    assert said == [r.to_json() for r in summarize_in_child(name)]


async def test_a_clean_request_opens_on_the_frames_and_matches_echoed_ids():
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(200):
            if app.summaries is not None:
                break
            await pilot.pause(0.05)
        await pilot.pause()
        assert app.screen.query_one("#right").current == "detail-scroll"
        said = conversation_text(app)
        assert '= call "get_weather" of exchange 1\'s stream' in said
        assert 'answers "call_eee11723464a4b9eb8cee71d"' in said


def test_a_tool_result_finding_sits_on_its_message():
    from streamscope.analysis.driver import RequestFinding
    from streamscope.core.contract import check
    from streamscope.dialects.chat.history import history
    from streamscope.tui.conversation import conversation

    from .helpers import chat_conversation as read

    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f"}}]},
            {"role": "tool", "tool_call_id": "b", "content": "\x1b[2Jok"},
        ],
    }
    found = check([], [read(2, body)]).findings
    assert {f.kind for f in found} == {"tool-result-id-mismatch", "tool-result-missing"}
    findings = [RequestFinding.of(f) for f in found]
    lines = conversation(history(body), findings, {}).plain.splitlines()
    at = lines.index('[2] tool answers "b" (no call before it has this id)')
    assert "tool-result-id-mismatch" in lines[at + 2]  # under the message and its content
    assert "\\x1b[2Jok" in lines[at + 1]  # content shown, control characters made visible
    assert any("tool-result-missing" in line for line in lines[:at])  # on the assistant


def failed_recording(path) -> str:
    """Exchange 1: a non-stream 500 with a JSON error; exchange 2: a plain JSON answer."""
    import orjson

    from streamscope.recording import RecordingWriter

    writer = RecordingWriter(path)
    for status, body in ((500, b'{"error":{"message":"upstream overloaded"}}'), (200, b"{}")):
        ex = writer.new_exchange()
        request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        writer.request(ex, "POST", "http://h/v1/chat/completions", [], orjson.dumps(request))
        writer.response(ex, status, [("content-type", "application/json")])
        writer.chunk(ex, body)
        writer.end(ex, "complete")
    writer.close()
    return str(path)


async def test_failed_and_non_stream_exchanges_are_marked_and_open_on_their_response(tmp_path):
    from streamscope.tui.screens import RequestScreen

    app = ReplayApp(failed_recording(tmp_path / "failed.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await exchanges_filled(pilot)
        assert worst_cell(app, 0) == "✗ HTTP 500"
        assert worst_cell(app, 1) == "not a stream"
        await pilot.press("enter")
        await settle(pilot, RequestScreen)
        shown = text(app.screen.query_one("#response"))
        assert "✗ HTTP 500" in shown and '"message": "upstream overloaded"' in shown
        assert "[0] user" in conversation_text(app)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ExchangesScreen)


# -- filter and play -----------------------------------------------------------------------


async def test_filter_steps_and_plays_through_the_frames_it_shows_and_clears_when_empty():
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("slash", *"usage", "enter")  # frame 7 only ...
        await pilot.press("slash", *"tc0", "enter")  # ... then the call's frames
        rows = screen.query_one(FrameList).rows
        assert rows == [1, 2, 3, 4, 5] and screen.frame == 5  # nearest to frame 7
        await pilot.press("home", "right", "right")
        assert screen.frame == 2
        seen = []
        screen.watch(screen.query_one(FrameDetail), "state", lambda s: seen.append(s.number))
        await pilot.press("plus", "plus", "plus", "plus", "plus", "plus", "space")
        for _ in range(40):
            await pilot.pause(0.05)
            if screen.timer is None:
                break
        assert screen.timer is None and screen.frame == 5  # stops at the last one shown
        assert set(seen) <= set(rows) and {3, 4, 5} <= set(seen)
        await pilot.press("slash")
        assert app.screen.query_one("#answer").value == ""  # not pre-filled
        await pilot.press("enter")  # an empty filter: every frame again
        assert screen.query_one(FrameList).rows == list(range(1, 9))
        await pilot.press(*["minus"] * 6, "end", "space")  # at the end, play starts over
        assert screen.timer is not None and screen.frame <= 1


async def test_the_repair_panel_of_a_text_answer_says_there_are_no_calls():
    from streamscope.tui.widgets import FrameDetail

    app = ReplayApp(sample("buggy-agent-uuid.jsonl"), exchange=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("end", "r")  # the frame detail, not the request
        await pilot.pause()
        shown = text(app.screen.query_one(FrameDetail))
        assert "the stream made no tool calls" in shown and "nothing to repair" not in shown


async def test_a_small_stream_opens_at_once_a_big_one_behind_its_loading_screen(tmp_path):
    from streamscope.inputs import open_input

    app = ReplayApp(sample("alibaba-empty-id.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, ExchangesScreen)
        await pilot.press("enter")  # 7 reads: read as it opens, no loading screen between
        assert isinstance(app.screen, StreamScreen) and app.screen.model.result is not None
        calls = [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}]
        many = one_stream(tmp_path / "many.jsonl", calls * 2001)  # read in the background
        big = one_stream(tmp_path / "big.jsonl", [{"index": 0, "id": "x" * 200_000}])
        for path in (many, big):
            assert not app._at_once(open_input(path).exchange(1).reads)


async def test_a_stream_is_shown_before_it_is_all_read_and_then_completes(monkeypatch):
    from streamscope.tui import app as tui_app

    monkeypatch.setattr(tui_app, "AT_ONCE", 0)  # (read in slices, small as it is)
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)  # 8 frames in 7 reads
    app.read_slices = (0, 0)  # show after the first read, update after every slice
    updates = []
    told = app._stream_read
    app._stream_read = lambda model: updates.append(model.total) or told(model)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await wait_for(pilot, lambda: screen.model.result is not None)
        assert updates and updates[0] < screen.model.total  # shown while still reading
        assert screen.query_one(FrameList).rows == list(range(1, screen.model.total + 1))
        assert "reading" not in text(screen.query_one("#info"))
        await pilot.press("end")
        assert screen.frame == screen.model.total == 8
        assert screen.model.anomaly_frames == [2, 3, 4, 5]  # as read in one go


async def test_a_stream_read_in_the_background_holds_the_collector_still_while_shown(
    monkeypatch,
):
    # once read, a long stream's objects are left out of full collections (100 ms pauses
    # on key presses over 300k frames), and given back when its screen goes
    import gc

    from streamscope.tui import app as tui_app

    monkeypatch.setattr(tui_app, "AT_ONCE", 0)  # (read in slices, small as it is)
    app = ReplayApp(sample("alibaba-empty-id.jsonl"))
    app.read_slices = (0, 0)  # read in slices: the screen hears the read complete
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, ExchangesScreen)
        assert gc.get_freeze_count() == 0
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, StreamScreen) and app.screen.model.result is not None,
        )
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0)
        await pilot.press("q")
        await wait_for(pilot, lambda: not isinstance(app.screen, StreamScreen))
        assert gc.get_freeze_count() == 0


async def test_a_stream_read_before_its_screen_opens_holds_the_collector_still_too():
    # a short stream is read whole before its screen opens (no read message comes): its
    # screen holds the collector still as well (a full pass over a big recording's
    # exchanges came during jumps), and gives it back when it goes
    import gc

    app = ReplayApp(sample("alibaba-empty-id.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, ExchangesScreen)
        assert gc.get_freeze_count() == 0
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.model.result is not None
        assert gc.get_freeze_count() > 0
        await pilot.press("q")
        await wait_for(pilot, lambda: not isinstance(app.screen, StreamScreen))
        assert gc.get_freeze_count() == 0


async def test_the_analysis_starts_once_the_stream_is_read(monkeypatch):
    # a long stream is read first: the analysis (a child process) would share its core
    import streamscope.analysis.driver as driver

    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)  # 8 frames in 7 reads
    app.read_slices = (0, 0)  # one read per slice: the read is still going when shown
    started = []
    analyse = driver.summarize_in_child

    def child(path: str):
        screen = app.screen
        started.append(isinstance(screen, StreamScreen) and screen.model.result is not None)
        return analyse(path)

    monkeypatch.setattr(driver, "summarize_in_child", child)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.session.summaries is not None)
        assert started == [True]
        assert app.session.summaries and not app.session.analysis_error


@pytest.mark.parametrize("name", ["alibaba-empty-id.jsonl", "parallel-index-0.jsonl", "vllm.jsonl"])
def test_stepping_on_from_the_last_state_agrees_with_resuming_from_a_snapshot(name):
    from streamscope.inputs import open_input
    from streamscope.tui.model import StreamModel

    def model() -> StreamModel:
        ex = open_input(sample(name)).exchange(1)
        m = StreamModel(ex.reads, 1, ex.info.tools, ex.info.response_format, every=2, thin=False)
        m.build()
        return m

    stepped, fresh = model(), model()
    total = stepped.total
    path = [*range(total + 1), 3, 2, 2, total, 1, 3, total]
    for n in path:
        fresh._cursor = None  # every state from a snapshot
        a, b = stepped.at(n), fresh.at(n)
        assert a.number == b.number == n
        assert a.engine.strategy_calls() == b.engine.strategy_calls(), n
        assert [e.describe() for e in a.events] == [e.describe() for e in b.events], n


def test_the_copies_kept_for_steps_back_give_the_states_feeding_from_the_start_gives(
    tmp_path, monkeypatch
):
    # after End and after far jumps, copies are kept a few frames apart for the steps back
    # (model.TRAIL); a state resumed from one is the state fed from the first frame
    from streamscope.inputs import open_input
    from streamscope.tui import model as tui_model

    calls = []
    for i in range(5):  # five calls, interleaved, an anomaly or two on the way
        calls.append({"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f"}})
    for k in range(60):
        calls.append(
            {"index": k % 5, "id": "" if k % 7 == 0 else None, "function": {"arguments": f"{k}"}}
        )
    path = one_stream(tmp_path / "long.jsonl", calls)

    def model() -> tui_model.StreamModel:
        ex = open_input(path).exchange(1)
        m = tui_model.StreamModel(ex.reads, 1, every=1000, thin=False)
        m.build()
        return m

    monkeypatch.setattr(tui_model, "TRAIL", 1 << 30)
    fresh = model()  # one snapshot (frame 0): every state fed from the start
    monkeypatch.setattr(tui_model, "TRAIL", 3)
    monkeypatch.setattr(tui_model, "TRAILS", 12)
    trail = model()
    total = trail.total
    assert len(trail.snapshots) > 12  # End's trail kept (the oldest dropped past TRAILS)
    path_ = [*range(total, total - 20, -1), 30, 29, 28, 2, 50, 12, 49, 48, total, 0, 1]
    for n in path_:
        fresh._cursor = None
        a, b = trail.at(n), fresh.at(n)
        assert a.number == b.number == n
        assert a.engine.strategy_calls() == b.engine.strategy_calls(), n
        assert [e.describe() for e in a.events] == [e.describe() for e in b.events], n
        assert [x.to_json() for x in a.engine.log.entries()] == [
            x.to_json() for x in b.engine.log.entries()
        ], n
    frames = [s.frames for s in trail.snapshots]
    assert frames == sorted(set(frames)) and len(trail._trail) == 12


@pytest.mark.parametrize("name", ["alibaba-empty-id.jsonl", "parallel-index-0.jsonl", "vllm.jsonl"])
def test_a_model_read_in_slices_keeps_what_one_pass_keeps(name):
    # the worker reads a long stream in slices: the summaries, times and the timeline's
    # gaps come out as from one pass, and as summarize and the times say
    from streamscope.dialects.chat.summary import summarize
    from streamscope.inputs import open_input
    from streamscope.tui.model import StreamModel

    def model(slices: bool) -> StreamModel:
        ex = open_input(sample(name)).exchange(1)
        m = StreamModel(ex.reads, 1, ex.info.tools, ex.info.response_format, every=2)
        m.start()
        while not m.read(None, 0 if slices else None):  # 0 s: one read per slice
            pass
        m.conclude()
        return m

    whole, sliced = model(False), model(True)
    frames = list(open_input(sample(name)).exchange(1).reads.frames())
    assert list(sliced.summaries) == list(whole.summaries) == [summarize(f) for f in frames]
    assert sliced.times == whole.times
    times = [-1 if f.time_ns is None else f.time_ns for f in frames]
    before = [0, *times[:-1]]
    expected = [t - b if t >= 0 and b >= 0 else 0 for t, b in zip(times, before, strict=True)]
    assert list(sliced.gaps) == list(whole.gaps) == expected


async def test_a_response_body_that_cannot_be_read_is_said_not_raised(tmp_path):
    from streamscope.tui.screens import RequestScreen

    path = failed_recording(tmp_path / "bad.jsonl")
    with open(path, "ab") as f:  # a chunk line whose data is not text
        f.write(b'{"type":"chunk","exchange":1,"t_ns":5,"data":5}\n')
    app = ReplayApp(path, follow=True)  # (not followed, it is refused as inspect refuses it)
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)  # the analysis reads around the bad line
        assert worst_cell(app, 0) == "✗ HTTP 500"
        await pilot.press("enter")
        await settle(pilot, RequestScreen)
        shown = text(app.screen.query_one("#response"))
        assert "the body cannot be read" in shown and "'data' is not a string" in shown
        assert "[0] user" in conversation_text(app)  # the request is still shown


async def test_a_narrow_list_drops_the_path_before_cutting_worst():
    app = ReplayApp(sample("buggy-agent-uuid.jsonl"))
    async with app.run_test(size=(70, 20)) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        keys = [c.value for c in table.columns]
        assert "path" not in keys and "method" not in keys and "model" in keys
        assert worst_cell(app, 1) == "✗ tool-call-id-substituted"
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= 70


def within(app, width: int, height: int) -> None:
    """Every list inside the terminal and as wide as its rows: none scrolls sideways, its
    right columns out of sight, or spills past the terminal's edge."""
    from textual.widgets import DataTable

    for widget in app.screen.query("DataTable, FrameList").results():
        assert isinstance(widget, DataTable | FrameList)
        if widget.display and widget.region.area:
            assert widget.region.right <= width and widget.region.bottom <= height, widget
            assert widget.virtual_size.width <= widget.size.width, widget


async def test_at_60x20_the_list_drops_model_and_took_and_keeps_worst_whole():
    app = ReplayApp(sample("buggy-agent-uuid.jsonl"))
    async with app.run_test(size=(60, 20)) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        assert [c.value for c in table.columns] == ["#", "status", "frames", "calls", "worst"]
        assert table.virtual_size.width <= 60 and not table.show_horizontal_scrollbar
        assert worst_cell(app, 1) == "✗ tool-call-id-substituted"  # was cut at the edge
        within(app, 60, 20)
    app = ReplayApp(sample("buggy-agent-uuid.jsonl"))
    async with app.run_test(size=(40, 20)) as pilot:  # narrower still: worst is cut
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        assert table.virtual_size.width <= 40 and worst_cell(app, 1) == "✗ tool-call-id-sub…"


@pytest.mark.parametrize("width", [100, 80, 70])
async def test_a_wide_model_and_path_are_cut_by_the_columns_they_take(tmp_path, width):
    """A model and a path in CJK characters (two columns each) are fitted by the columns
    they take, not their characters: the list stays inside the terminal, each cut with
    its ellipsis (before, the cells were twice as wide as the columns counted)."""
    whole = Path(sample("buggy-agent-uuid.jsonl")).read_text(encoding="utf-8")
    path = tmp_path / "wide.jsonl"
    path.write_text(
        whole.replace("gpt-4o-mini", "模型" * 12).replace("/v1/chat/", "/v1/" + "路径" * 12 + "/"),
        encoding="utf-8",
    )
    app = ReplayApp(str(path))
    async with app.run_test(size=(width, 24)) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        within(app, width, 24)
        assert not table.show_horizontal_scrollbar
        row = table.coordinate_to_cell_key((0, 0)).row_key
        model = str(table.get_cell(row, "model"))  # its start, cut
        assert model.endswith("…") and ("模型" * 12).startswith(model[:-1]), model
        if "path" in [c.value for c in table.columns]:
            end = str(table.get_cell(row, "path"))  # its end, cut
            assert end.startswith("…") and ("路径" * 12 + "/completions").endswith(end[1:]), end
        assert worst_cell(app, 1) == "✗ tool-call-id-substituted"  # kept whole


async def test_at_60x20_the_frame_list_keeps_each_frames_number_and_kind():
    """Beside the request the list had the number, time and gap, no summary left."""
    app = ReplayApp(sample("buggy-agent-uuid.jsonl"), exchange=2)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        for _ in range(600):  # the contract's break opens the request beside the list
            if app.screen.has_class("-request"):
                break
            await pilot.pause(0.05)
        await pilot.pause()
        frames = app.screen.query_one(FrameList)
        lines = [frames.render_line(y) for y in range(frames.size.height)]
        assert all(line.cell_length == frames.size.width for line in lines)
        shown = [line.text for line in lines[:9]]
        assert shown[0].split() == ["1", "472ms", "role"]  # the time kept, the gap gone
        assert shown[7].split()[:3] == ["8", "635ms", "finish"]
        assert shown[8].split() == ["9", "673ms", "[DONE]"]
        within(app, 60, 20)
        await pilot.press("end")
        within(app, 60, 20)
    app = ReplayApp(sample("buggy-agent-uuid.jsonl"), exchange=1)  # no request: its gap
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        frames = app.screen.query_one(FrameList)
        assert frames.render_line(6).text.split()[:4] == ["7", "727ms", "+0ms", "finish…"]
        within(app, 60, 20)


async def test_a_frames_summary_cut_at_the_lists_edge_ends_in_an_ellipsis():
    # cut bare at the column's edge, `tc0 id="" name="` read as the whole frame
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        frames = app.screen.query_one(FrameList)
        summaries = app.screen.model.summaries
        lines = [frames.render_line(y).text.rstrip() for y in range(8)]
        shown = [line.split(maxsplit=3)[3] for line in lines]  # after number, time, gap
        cut = [(s, whole) for s, whole in zip(shown, summaries, strict=True) if s != whole]
        assert len(cut) == 6, shown  # each cut one ends in the ellipsis, after what fitted
        assert all(s.endswith("…") and whole.startswith(s[:-1]) for s, whole in cut), shown
        assert shown[5] == "finish tool_cal…"  # one column short
        assert shown[6:] == ["usage", "[DONE]"]  # whole: no ellipsis


async def test_at_60x19_a_cut_summary_ends_in_an_ellipsis_beside_the_scrollbar():
    # eight frames in seven rows: the list's scrollbar covered the column its … was in,
    # and the kind kept ("finish") lost its last letter to the … once it was seen (at
    # 60x20 the list now has eight rows: the call tables no longer fold the id)
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=(60, 19)) as pilot:
        await settle(pilot)
        await pilot.press("]")
        await pilot.pause()
        frames = app.screen.query_one(FrameList)
        region = frames.scrollable_content_region
        assert region.width < frames.size.width  # the scrollbar is there
        screen = app.screen._compositor.render_strips()
        shown = [
            screen[y].crop(region.x, region.right).text.rstrip()
            for y in range(region.y, region.bottom)
        ]
        assert shown[0].endswith("…") and shown[5] == " 6   676ms finish tool_c…", shown
        assert shown[6] == " 7   706ms usage", shown  # whole: no ellipsis


def test_a_summary_is_cut_to_its_columns_wide_characters_too():
    from rich.cells import cell_len

    from streamscope.tui.widgets.frame_list import summary

    assert summary("ab你好", 6) == "ab你好" and summary("ab你好", 3) == "ab…"
    assert cell_len(summary("ab你好", 4)) == 4 and summary("ab你好", 4).endswith("…")
    assert summary("x" * 1_000_000, 5) == "xxxx…" and summary("abc", 0) == ""


@pytest.mark.parametrize(
    "name", ["anthropic-tool-use.jsonl", "responses-done-only.jsonl", "openai.jsonl"]
)
async def test_at_80x24_the_list_fits_without_a_side_scrollbar(name):
    # a took of "1,009ms" is two columns wider than the "553ms" the widths assumed
    app = ReplayApp(sample(name))
    async with app.run_test(size=(80, 24)) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        assert table.virtual_size.width < 80 and not table.show_horizontal_scrollbar
        assert worst_cell(app, 1) in ("clean", "✗ tool-call-arguments-invalid")  # whole


async def test_at_200x50_the_list_and_the_tables_show_whole_values():
    app = ReplayApp(sample("anthropic-tool-use.jsonl"))
    async with app.run_test(size=(200, 50)) as pilot:
        await exchanges_filled(pilot)
        table = app.screen.query_one("#exchanges")
        model = table.get_cell(table.coordinate_to_cell_key((0, 0)).row_key, "model")
        assert str(model) == "claude-sonnet-4-5-20250929"  # was cut to 16 characters
    app = ReplayApp(sample("responses-interleaved.jsonl"), exchange=1, frame=8)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        shown = text(app.screen.query_one("#robust", CallTable))
        assert '"function_call"' in shown and "…" not in shown


async def test_at_80x24_the_timeline_keeps_its_anomaly_row_and_times_and_call_id_one_line():
    app = ReplayApp(sample("responses-done-only.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        assert timeline.size.height == 3
        _, ticks, stats = [s.text for s in timeline.render_lines(timeline.region.reset_offset)]
        assert "▲" in ticks
        said = stats.strip()
        assert said.startswith("first 262ms · last 404ms · 6 frames") and said.endswith(
            "▲ anomalies"
        )
        # the frame 0 tables have no call: "call_id" stays on the header's one line
        header = text(app.screen.query_one("#robust", CallTable)).splitlines()[0].split()
        assert header[:4] == ["out", "item_id", "call_id", "type"]


@pytest.mark.parametrize("name", ["deepseek-cumulative.chunks.jsonl", "gemini-no-index.sse"])
async def test_a_stream_that_keeps_no_times_says_so_not_largest_gap_0ms(name):
    # a chunk log or a raw SSE body holds no times: its timeline said
    # "first — · last — · 7 frames · no timing · largest gap 0ms"
    app = ReplayApp(sample(name))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        stats = timeline.render_lines(timeline.region.reset_offset)[-1].text.strip()
        assert stats.startswith("no times recorded · ") and "ms" not in stats, stats


async def test_a_recording_cut_before_its_first_frame_says_0_frames_and_no_gap(tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_bytes(Path(sample("openai.jsonl")).read_bytes()[:2000])  # inside line 4
    app = ReplayApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        stats = timeline.render_lines(timeline.region.reset_offset)[-1].text.strip()
        assert stats == "0 frames", stats  # not "... no timing · largest gap 0ms"


async def test_a_stream_without_anomalies_has_no_anomaly_legend_and_says_its_last_frame():
    app = ReplayApp(sample("gateway-direct.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        stats = timeline.render_lines(timeline.region.reset_offset)[-1].text.strip()
        # nothing on the bar is ▲, so nothing explains one; `last`, not `total`: the list's
        # `took` runs to the exchange's end, after the last frame
        assert " · last " in stats and "total" not in stats
        assert "▲" not in stats


async def test_follow_back_from_a_stream_the_list_shows_how_it_ended(tmp_path):
    writer, events = live_recording(tmp_path / "live.jsonl")
    app = ReplayApp(str(tmp_path / "live.jsonl"), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        assert worst_cell(app, 1) == "open"
        await pilot.press("down", "enter")
        await settle(pilot)
        stream = app.screen
        for event in events[1:]:
            writer.chunk(2, event)
        writer.end(2, "complete")
        await wait_for(pilot, lambda: stream.model.total == len(events))
        await wait_for(pilot, lambda: stream.model.end["end_reason"] == "complete")
        await pilot.press("q")
        await wait_for(pilot, lambda: worst_cell(app, 1) == "clean")
        took = app.screen.query_one("#exchanges").get_row_at(1)[5]
        assert took != "open" and took.endswith("ms")
    writer.close()


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 400),
    st.integers(1, 120),
    st.dictionaries(
        st.integers(1, 400),
        st.lists(st.sampled_from(["interleaved", "id-changed", "args-resent"]), min_size=1),
    ),
)
def test_the_timeline_ticks_each_anomaly_column_with_its_worst(total, cols, marks):
    # the ticks come from the model's frames per severity by bisection: as a pass over
    # every marked frame would place them
    from types import SimpleNamespace

    from streamscope.dialects import worst
    from streamscope.tui.model import _by_worst

    marks = {f: kinds for f, kinds in marks.items() if f <= total}
    frames = sorted(marks)
    model = SimpleNamespace(
        total=total,
        gaps=[0] * total,
        anomaly_frames=frames,
        marks=marks,
        tick_frames=_by_worst(frames, marks),
        result=object(),
    )
    ticked: dict[int, list[str]] = {}
    for f in frames:
        ticked.setdefault((f - 1) * cols // total, []).extend(marks[f])
    expected = {col: worst(kinds) for col, kinds in ticked.items()}
    assert Timeline(model)._columns(cols)[1] == expected


async def test_the_call_table_never_cuts_a_number():
    # a long stream's fragment count (100,001) or a fan-out's index (12,345) cut to
    # "1000…" would say something else than the bytes
    from textual.app import App

    from streamscope.core.calls import Call

    class One(App):
        def compose(self):
            yield CallTable()

    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(CallTable)
        args = '{"text": "' + "lorem " * 200 + '"}'
        table.show([Call(0, 12345, "call_x", "function", "write_file", args, 100001)])
        await pilot.pause()
        console = Console(width=80, file=io.StringIO(), color_system=None)
        console.print(table.content)
        shown = console.file.getvalue()
        assert "100001" in shown and "12345" in shown, shown
        # an index sent as a string is as wide as it is shown: in its quotes
        table.show([Call(0, "12345", "call_x", "function", "write_file", args, 1)])
        await pilot.pause()
        console = Console(width=80, file=io.StringIO(), color_system=None)
        console.print(table.content)
        shown = console.file.getvalue()
    assert '"12345"' in shown, shown


@pytest.mark.parametrize(
    "name, size",
    [("parallel-index-0.jsonl", (80, 24)), ("ids-repeated.jsonl", (100, 30))],
)
async def test_the_call_tables_fit_their_rows_at_every_step(name, size):
    # a table asks for a layout pass only when its height changes; at every
    # frame each table is exactly as high as its rows (never clipped, never padded)
    app = ReplayApp(sample(name), exchange=1)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        for _ in range(screen.model.total + 1):
            for table in screen.query(CallTable):
                if not table.display:
                    continue
                width = table.content_region.width
                console = Console(width=width, file=io.StringIO(), color_system=None)
                console.print(table.content)
                lines = console.file.getvalue().rstrip("\n").count("\n") + 1
                assert table.content_region.height == lines, (screen.frame, table.id)
            await pilot.press("right")
            await pilot.pause()


@pytest.mark.parametrize(
    "name, keys",
    [("alibaba-empty-id.jsonl", ["]"]), ("responses-interleaved.jsonl", ["end"])],
)
async def test_at_60x20_the_call_tables_keep_ids_and_names_whole_on_one_line(name, keys):
    """Too narrow for every column: the fragment count and the type leave, and each call
    keeps one line, its id and name whole beside the start of its arguments (Rich had cut
    every header, "ty…" and "fra…", and folded the id's last characters onto a line of
    their own)."""
    app = ReplayApp(sample(name), exchange=1)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        await pilot.press(*keys)
        await pilot.pause()
        calls = app.screen.state.strategy_calls()["robust"]
        for table in app.screen.query(CallTable):
            console = Console(
                width=table.content_region.width, file=io.StringIO(), color_system=None
            )
            console.print(table.content)
            head, *rows = console.file.getvalue().splitlines()
            assert "frags" not in head and "type" not in head, head
            assert head.split()[-1].startswith("ar") and "…" not in head.split()[-2], head
            assert len(rows) == len(calls), rows  # one line a call
            for row, call in zip(rows, calls, strict=True):
                assert f'"{call.id}"' in row and f'"{call.name}"' in row, row
        within(app, 60, 20)


@pytest.mark.parametrize("width", [30, 57, 80])
def test_content_rendered_once_shows_as_rendering_it_would_at_any_width(width):
    # what a widget rendered at its width must print as Rich prints the original, at that
    # width (the copy) and at any other (after a resize: Rich lays it out again)
    from rich.table import Table
    from rich.text import Text

    from streamscope.tui.widgets.rendered import Rendered

    table = Table("id", "arguments", expand=True)
    table.add_row("call_" + "e" * 50, '{"text": "' + "lorem ipsum " * 20)
    table.add_row("call_2", Text("short", style="bold green reverse"))

    def printed(renderable, at: int) -> str:
        console = Console(width=at, file=io.StringIO(), color_system="truecolor")
        console.print(renderable)
        return console.file.getvalue()

    made = Console(width=width, file=io.StringIO())
    rendered = Rendered(table, made, made.options.update_width(width))
    assert len(rendered.lines) == printed(table, width).count("\n")
    for at in (width, 44, 100):
        assert printed(rendered, at) == printed(table, at), at


async def test_a_step_that_changes_no_table_height_costs_no_layout_pass(tmp_path):
    # a long call: its arguments are cut to the screen, so stepping on measures the same
    opener = {"index": 0, "id": "call_1", "type": "function"}
    opener["function"] = {"name": "f", "arguments": '{"a": "' + "x" * 300}
    calls = [opener] + [{"index": 0, "function": {"arguments": "y"}}] * 10
    path = one_stream(tmp_path / "long.jsonl", calls)
    app = ReplayApp(path, exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("right", "right")
        await pilot.pause()
        table = app.screen.query_one("#robust", CallTable)
        asked = []
        refresh = table.refresh
        table.refresh = lambda *a, **k: asked.append(k.get("layout", False)) or refresh(*a, **k)
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert asked and not any(asked)  # repainted, never re-laid out


async def test_at_80x24_the_id_and_the_name_are_whole_in_the_table_and_the_trap_line():
    """What the stream screen exists to show fits a small terminal: the arguments and the
    type give way first."""
    from streamscope.tui.widgets import TrapLine

    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("right_square_bracket")  # the frame that empties the id and name
        await pilot.pause()
        screen = app.screen
        row = text(screen.query_one("#robust", CallTable)).splitlines()[1]
        assert '"call_eee11723464a4b9eb8cee71d"' in row and '"get_weather"' in row
        trap = text(screen.query_one(TrapLine))
        assert trap.split() == (
            [
                "⚠",
                "id",
                '""',
                "kept",
                '"call_eee11723464a4b9eb8cee71d"',
                "·",
                "name",
                '""',
                "kept",
                '"get_weather"',
            ]
        )


async def test_at_80x24_the_arguments_have_room_and_a_that_shows_them_whole_is_in_the_footer():
    """The new user's walk: the arguments were cut to `{"l…` and `a` was in no footer."""
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await analysed(pilot)
        await pilot.press("end")
        await pilot.pause()
        row = text(app.screen.query_one("#robust", CallTable)).splitlines()[1]
        assert '"call_eee11723464a4b9eb8cee71d"' in row and '"get_weather"' in row
        assert '{"location' in row  # ten characters of arguments, not three
        keys = [k for k in app.screen.query_one("Footer").query("FooterKey") if k.display]
        assert {"a", "q"} <= {k.key_display for k in keys}
        assert max(k.region.right for k in keys) <= 80
        await pilot.press("a")
        assert isinstance(app.screen, TextScreen)
        shown = text(app.screen.query_one("VerticalScroll Static"))
        assert '{"location": "Hangzhou, Zhejiang", "unit": "celsius"}' in shown
        assert "Tool results sent by exchange 2" in shown and '"temp_c": 9' in shown


async def test_the_last_frame_shows_each_calls_tool_result_and_the_tools_run_time():
    app = ReplayApp(sample("anthropic-tool-use.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await analysed(pilot)
        await pilot.press("end")
        await pilot.pause()
        detail = " ".join(text(app.screen.query_one(FrameDetail)).split())
        assert "Tool results sent by exchange 2 tool run time 628 ms" in detail
        assert '1 "get_weather" is_error false message 2 {"temp_c": 14' in detail
        assert '2 "list_reminders" is_error false message 2 ["call the plumber at 5 pm"]' in detail
        await pilot.press("home")  # before the end, the frame is the news
        await pilot.pause()
        assert "Tool results" not in text(app.screen.query_one(FrameDetail))


async def test_a_saved_body_says_its_tool_results_are_unknown():
    app = ReplayApp(sample("gemini-no-index.sse"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await pilot.pause()
        detail = " ".join(text(app.screen.query_one(FrameDetail)).split())
        assert "Tool results: none (the input holds the stream only" in detail
        assert "tool run time unknown" in detail


async def test_at_80x24_a_long_client_name_and_robusts_extra_calls_keep_to_their_lines():
    """The new user's walk: needs-terminal's label ran off its line, and "≠ robust has 1
    more call" wrapped in the id column a few letters a line."""
    app = ReplayApp(sample("gemini-streamed-args.jsonl"), exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("end", "s", "s", "s")
        await pilot.pause()
        label = app.screen.query_one("#strategy-label")
        assert text(label).startswith("needs-terminal at frame 9") and "s: next" in text(label)
        assert label.content.cell_len <= label.size.width
        lines = [line.strip() for line in text(app.screen.query_one("#other")).splitlines()]
        assert "≠ robust has 1 more call" in lines and "robus" not in lines


async def test_thousands_of_calls_show_a_few_rows_around_the_frame_and_keys_stay_quick(tmp_path):
    """A table of every call took seconds a frame (20 s for End on 5,000 calls): the
    tables show the calls around the one the frame touched, and count the rest."""
    import time

    calls = [
        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f"}}
        for i in range(1000)
    ]
    path = one_stream(tmp_path / "many.jsonl", calls)
    app = ReplayApp(path, exchange=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        while app.screen.model.result is None:
            await pilot.pause(0.05)
        start = time.perf_counter()
        await pilot.press("end")
        await pilot.pause()
        took = time.perf_counter() - start
        lines = text(app.screen.query_one("#robust", CallTable)).splitlines()
        assert '"call_999"' in lines[-2] and lines[-1].split() == [
            "calls",
            "997-1000",
            "of",
            "1,000",
        ]
        assert len(lines) == 6 and took < 2, took  # 20 s for 5,000 calls before
        await pilot.press("home", *["right"] * 11)  # frame 11: the 11th call opens
        await pilot.pause()
        lines = text(app.screen.query_one("#robust", CallTable)).splitlines()
        assert "calls 8-11 of 11" in lines[-1] and '"call_10"' in lines[-2]


async def test_a_frame_of_megabytes_is_shown_in_part_and_end_is_quick(tmp_path):
    """A 10 MB chunk laid out whole in the frame detail took a minute after End."""
    import time

    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    chunk["choices"] = [{"index": 0, "delta": {"content": "x" * 2**21}, "finish_reason": None}]
    path = tmp_path / "one-line.jsonl"
    path.write_bytes(orjson.dumps(chunk) + b"\n")
    app = ReplayApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        start = time.perf_counter()
        await pilot.press("end")
        await pilot.pause()
        assert time.perf_counter() - start < 3
        detail = text(app.screen.query_one(FrameDetail))
        assert "bytes more (export --frames 1-1 writes the frame whole)" in " ".join(detail.split())


async def test_a_costly_frame_is_worked_out_in_a_thread_while_the_keys_answer(monkeypatch):
    """On a stream of thousands of calls a jump copies an engine that holds every call
    (seconds): the keys must go on answering meanwhile, and the newest frame asked for
    is the one shown."""
    import threading

    from streamscope.tui.model import StreamModel
    from streamscope.tui.screens import stream as stream_screen

    monkeypatch.setattr(stream_screen, "QUICK", -1.0)  # every frame costs too much
    gate, asked = threading.Event(), []
    at = StreamModel.at

    def slow(self, n, *stop):
        if threading.current_thread() is not threading.main_thread():
            asked.append(n)
            assert gate.wait(10)
        return at(self, n, *stop)

    monkeypatch.setattr(StreamModel, "at", slow)
    app = ReplayApp(sample("alibaba-empty-id.jsonl"), exchange=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        robust = text(screen.query_one("#robust", CallTable))
        await pilot.press("right")  # frame 1: its thread waits at the gate
        await pilot.press("right", "right")  # frames 2 and 3 asked for meanwhile
        assert screen.frame == 3  # the keys answered
        assert "frame 3/" in text(screen.query_one("#info"))
        assert "working out frame 3…" in text(screen.query_one("#info"))
        assert screen.state.number == 0 and text(screen.query_one("#robust")) == robust
        await pilot.press("a")  # the arguments of a frame not worked out yet: said so
        assert not isinstance(app.screen, TextScreen)
        gate.set()
        for _ in range(200):
            if screen.state.number == 3:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        assert screen.state.number == 3
        assert asked == [1, 3]  # frame 2 was never worked out: the newest asked wins
        assert "working out" not in text(screen.query_one("#info"))
        expected = StreamModel.at(screen.model, 3).engine.calls_now()
        assert [c.id for c in screen.state.strategy_calls()["robust"]] == [c.id for c in expected]
        await pilot.press("left")  # and so on, frame after frame
        assert screen.frame == 2


def interleaved_recording(path) -> None:
    """Two conversations whose calls have no id (matched by name), interleaved: exchanges
    1 and 3 are A's, 2 and 4 B's; B's second request sends its call back under an id of
    its own making."""
    import orjson

    from streamscope.recording import RecordingWriter

    from .helpers import sse_body

    def call(cid: str, city: str) -> dict:
        args = orjson.dumps({"city": city}).decode()
        return {
            "id": cid,
            "type": "function",
            "function": {"name": "get_weather", "arguments": args},
        }

    def chunk(delta: dict, finish: str) -> bytes:
        choice = {"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": finish}
        head = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        return sse_body([{**head, "choices": [choice]}])

    def made(city: str) -> bytes:
        return chunk({"tool_calls": [{"index": 0, **call("", city)}]}, "tool_calls")

    text = chunk({"content": "sunny"}, "stop")
    a, b = (
        {"role": "user", "content": "weather in A?"},
        {"role": "user", "content": "weather in B?"},
    )
    sent = [
        ([a], made("A")),
        ([b], made("B")),
        (
            [
                a,
                {"role": "assistant", "tool_calls": [call("", "A")]},
                {"role": "tool", "tool_call_id": "", "content": "1"},
            ],
            text,
        ),
        (
            [
                b,
                {"role": "assistant", "tool_calls": [call("x_1", "B")]},
                {"role": "tool", "tool_call_id": "x_1", "content": "2"},
            ],
            text,
        ),
    ]
    with RecordingWriter(str(path)) as w:
        for messages, body in sent:
            x = w.new_exchange()
            ask = orjson.dumps({"model": "m", "stream": True, "messages": messages})
            w.request(x, "POST", "https://api.openai.com/v1/chat/completions", [], ask)
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, body)
            w.end(x, "complete")


async def test_the_list_and_the_request_follow_each_conversation(tmp_path):
    path = tmp_path / "two.jsonl"
    interleaved_recording(path)
    app = ReplayApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        # the break is B's (exchange 4), not A's next request in time (exchange 3)
        cells = [worst_cell(app, row) for row in range(4)]
        assert [c.startswith("✗") for c in cells] == [False, False, False, True]
        assert cells[3] == "✗ tool-call-id-substituted"
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        await analysed(pilot)
        said = conversation_text(app)
        # A's own stream made the call it sends back, not B's (exchange 2) of the same name
        assert '= call "get_weather" of exchange 1\'s stream' in said
        assert "Conversation begun at exchange 1 (exchanges: 1, 3)" in said
        assert "tool-call-id-substituted" not in said


async def test_a_stream_the_client_closed_is_a_warning_in_the_list(tmp_path):
    import orjson

    from streamscope.recording import RecordingWriter

    from .helpers import sse_body

    path = tmp_path / "cut.jsonl"
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": "f", "arguments": '{"city": "Pa'}
    head = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    delta = {"role": "assistant", "tool_calls": [call]}
    chunk = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    with RecordingWriter(str(path)) as w:
        for end in ("client-closed", "upstream-error"):
            x = w.new_exchange()
            ask = orjson.dumps({"model": "m", "stream": True, "messages": []})
            w.request(x, "POST", "https://api.openai.com/v1/chat/completions", [], ask)
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, sse_body([chunk], done=False))
            w.end(x, end)
    app = ReplayApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        assert worst_cell(app, 0).startswith("! ")  # the client's cut: a warning
        assert worst_cell(app, 1).startswith("✗ ")  # the connection's: an error


async def test_a_stream_pairing_could_not_check_opens_on_its_frames(tmp_path):
    # B's second request rewrote its first message: B's first stream is not continued
    import orjson

    path = tmp_path / "two.jsonl"
    interleaved_recording(path)
    lines = path.read_bytes().splitlines()
    edited = []
    for line in lines:
        d = orjson.loads(line)
        if d.get("type") == "request" and d["exchange"] == 4:
            body = orjson.loads(d["body"])
            body["messages"][0]["content"] = "weather in B, briefly?"
            d["body"] = orjson.dumps(body).decode()
        edited.append(orjson.dumps(d))
    path.write_bytes(b"\n".join(edited) + b"\n")
    app = ReplayApp(str(path), exchange=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await analysed(pilot)
        assert "continuation-missing" in conversation_text(app)
        assert app.screen.query_one("#right").current == "detail-scroll"
