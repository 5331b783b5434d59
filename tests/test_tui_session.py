"""A recorded WebSocket session in the replay: one row in the exchanges list (with a row
per response), its screen of every message in order, Enter into a response's stream at
that message, the keys between responses, a cut session, hostile message text."""

from __future__ import annotations

import re

import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis.driver import ExchangeSummary, summarize_exchanges
from streamscope.cli import main
from streamscope.framing.session import WsMessage
from streamscope.inputs import open_input
from streamscope.recording import RecordingWriter
from streamscope.tui.app import ReplayApp
from streamscope.tui.screens import ExchangesScreen, SessionScreen, StreamScreen
from streamscope.tui.session_rows import owners, rows
from streamscope.tui.widgets import CallTable
from streamscope.tui.widgets.message_list import MessageList

from . import responses_stream as rs
from .session_samples import codex_after_http
from .test_tui import SIZES, exchanges_filled, settle, text
from .ws_session import codex_turns, create, write_session

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never reach the terminal
SIZE = (100, 30)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def broken(tmp_path) -> str:
    """Exchange 1 an HTTP stream, exchange 2 too, exchange 3 Codex's session whose second
    response continues the first without answering its call."""
    return str(codex_after_http(tmp_path, answer_call=False))


def lines(widget: MessageList) -> list[str]:
    """What the message list shows, line by line (the lines in view)."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def cells(app, column: str) -> dict[str, str]:
    table = app.screen.query_one("#exchanges")
    return {
        str(key.value): str(table.get_cell(key, column))
        for key in (table.coordinate_to_cell_key((r, 0)).row_key for r in range(table.row_count))
    }


async def analysed(pilot) -> None:
    for _ in range(600):
        if pilot.app.summaries is not None:
            break
        await pilot.pause(0.05)
    assert pilot.app.summaries is not None, "the analysis did not come in 30 s"
    await pilot.pause()


# -- the summaries the list is made of (no TUI) ----------------------------------------


def test_a_sessions_summary_is_its_responses_together_and_each_its_own(broken):
    rows_ = {r.exchange: r for r in summarize_exchanges(broken)}
    s = rows_[3]
    assert s.session and s.stream and [t.turn for t in s.turns] == [1, 2]
    assert (s.frames, len(s.calls)) == (23, 1)
    assert [(t.frames, len(t.calls)) for t in s.turns] == [(11, 1), (12, 0)]
    assert s.model == rs.MODEL  # named by the first response.create, not the handshake
    # the finding is about response 2's request: the session's, and that response's
    assert [(f.kind, f.turn) for f in s.findings] == [("tool-result-missing", 2)]
    assert s.turns[0].findings == [] and [f.kind for f in s.turns[1].findings] == [
        "tool-result-missing"
    ]
    assert s.response(2) is s.turns[1] and s.response(None) is s and s.response(3) is None
    assert s.turns[0].response_id == rs.RESPONSE_IDS[0]
    # an HTTP exchange is as it was: one stream, no turns
    assert not rows_[1].session and rows_[1].turns == [] and rows_[1].streams() == [rows_[1]]
    # it crosses the process boundary whole
    again = ExchangeSummary.from_json(orjson.loads(orjson.dumps(s.to_json())))
    assert again == s


# -- which response each message is in (no TUI) -----------------------------------------


def test_every_message_is_placed_in_its_response_in_order(tmp_path):
    path = write_session(tmp_path / "s.jsonl", codex_turns())
    ws = open_input(path).exchange(1).session()
    owned = owners(ws.messages, ws.turns)
    assert len(owned) == len(ws.messages) == 27
    first, second = 0, 12  # the two response.create messages
    assert owned[first] == (0, 0) and owned[second] == (1, 0)
    assert [o for o in owned[1:12]] == [(0, n) for n in range(1, 12)]
    assert [o for o in owned[13:25]] == [(1, n) for n in range(1, 13)]
    assert owned[25:] == [None, None]  # the close frames: in no response
    listed = rows(owned, len(ws.turns))
    headings = [(r.turn, r.again) for r in listed if r.message is None]
    assert headings == [(0, False), (1, False), (None, False)]
    assert [r.message for r in listed if r.message is not None] == list(range(27))


def test_a_fragmented_message_and_a_repeated_text_are_placed_once_each(tmp_path):
    msgs = codex_turns()
    whole = msgs[1][1]
    msgs[1:2] = [("server", whole[:10], 1, False), ("server", whole[10:], 0, True)]
    msgs.insert(3, ("client", b'{"type":"ping.me"}'))  # a client message inside turn 1
    ws = open_input(write_session(tmp_path / "s.jsonl", msgs)).exchange(1).session()
    owned = owners(ws.messages, ws.turns)
    servers = [o for m, o in zip(ws.messages, owned, strict=True) if m.sender == "server"]
    frames = [o for o in servers if o is not None]
    assert frames == sorted(set(frames))  # no frame twice, in order
    assert len(frames) == sum(len(t.frames) for t in ws.turns)
    client = [o for m, o in zip(ws.messages, owned, strict=True) if m.sender == "client"]
    assert client[:3] == [(0, 0), (0, 0), (1, 0)]  # the one sent inside turn 1 is turn 1's


def test_messages_a_dialect_left_out_of_every_turn_are_between_the_responses():
    def m(sender: str, data: bytes, t: int) -> WsMessage:
        return WsMessage(sender, "text", data, t)

    from streamscope.core.frames import parse_payload
    from streamscope.dialects.base import Turn
    from streamscope.framing.session import frame_of

    messages = [m("server", b'{"type":"session.created"}', 1), m("server", b'{"type":"a"}', 2)]
    frame = frame_of(messages[1], 1, 0, 0)
    assert frame.payload == parse_payload('{"type":"a"}')
    turn = Turn(1, None, [frame], [], True, 2)
    owned = owners(messages, [turn])
    assert owned == [None, (0, 1)]
    assert [(r.message, r.turn) for r in rows(owned, 1)] == [(0, None), (None, 0), (1, 0)]


# -- the replay ---------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_list_shows_a_session_as_one_exchange_then_its_responses(broken):
    app = ReplayApp(broken)
    async with app.run_test(size=SIZE) as pilot:
        await exchanges_filled(pilot)
        assert "3 exchanges (1 WebSocket session)" in str(app.screen.query_one("#title").render())
        assert list(cells(app, "#")) == ["1", "2", "3", "3.1", "3.2"]
        worst = cells(app, "worst")
        assert worst["3"] == "✗ tool-result-missing"  # the session's worst: a contract break
        assert (worst["3.1"], worst["3.2"]) == ("clean", "✗ tool-result-missing")
        assert (cells(app, "frames")["3"], cells(app, "calls")["3"]) == ("23", "1")
        assert (cells(app, "frames")["3.1"], cells(app, "calls")["3.1"]) == ("11", "1")
        assert cells(app, "status")["3"] == "101" and cells(app, "model")["3"].startswith("gpt-4.1")
        assert cells(app, "path")["3.2"] == "response 2"
        handshake = cells(app, "path")["3"]  # a session's, marked (cut to the column)
        assert handshake.startswith("ws ") and handshake.endswith("/responses")
        await pilot.press("down", "down", "down", "enter")  # the row of response 1
        await settle(pilot, StreamScreen)
        assert app.screen.turn.turn == 1 and app.screen.model.exchange == 3
        await pilot.press("q")
        await settle(pilot, ExchangesScreen)
        await pilot.press("up", "enter")  # the session's own row
        await settle(pilot, SessionScreen)
        assert app.screen.exchange.number == 3


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_session_screen_lists_every_message_under_its_response(broken):
    app = ReplayApp(broken, exchange=3)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, SessionScreen)
        await analysed(pilot)
        screen = app.screen
        shown = lines(screen.query_one(MessageList))
        assert shown[0].startswith("── response 1 · 11 frames · 1 call · clean")
        first = shown[1].split()
        assert first[:5] == ["1", "1ms", "client", "text", "response.create"]
        assert 'model="gpt-4.1-2025-04-14"' in shown[1] and "tools: 1 item" in shown[1]
        assert shown[2].split()[2:5] == ["server", "text", "response.created"]
        assert shown[13].startswith("── response 2 · 12 frames · 0 calls · ✗ tool-result-missing")
        assert "previous_response_id=" in shown[14]
        assert shown[27].startswith("── in no response")
        assert shown[28].split()[:4] == ["26", "25ms", "client", "close"]
        assert "code 1000" in shown[28] and shown[29].split()[2] == "server"
        numbers = [int(line.split()[0]) for line in shown[:30] if not line.startswith("──")]
        assert numbers == list(range(1, 28))  # every message, in order
        contract = text(screen.query_one("#contract"))
        assert "✗ tool-result-missing (response 2): response 2 continues response 1" in contract
        facts = text(screen.query_one("#session-facts"))
        assert "27 messages (3 from the client), closed by the client (1000)" in facts
        assert "ended complete" in facts
        detail = text(screen.query_one("#message"))
        assert "message 1 of 27 · client · text" in detail and "response 1, its request" in detail
        assert '"type": "response.create"' in detail  # the JSON, indented


@pytest.mark.slow
@pytest.mark.anyio
async def test_go_to_message_takes_a_number_in_ascii_digits_and_says_anything_else(broken):
    app = ReplayApp(broken, exchange=3)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, SessionScreen)
        screen = app.screen
        for typed in ("²", "x", "99"):  # ("²" is a digit to str.isdigit, no number to int)
            await pilot.press("g", *typed, "enter")
            await pilot.pause()
            assert f"{typed!r} is not a message number (1-27)" in str(
                [n.message for n in app._notifications]
            )
        await pilot.press("g", "2", "enter")
        await pilot.pause()
        assert "message 2 of 27" in text(screen.query_one("#message"))


@pytest.mark.anyio
@pytest.mark.slow
async def test_enter_opens_the_response_at_that_message_and_the_keys_go_between_them(broken):
    app = ReplayApp(broken, exchange=3)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, SessionScreen)
        session = app.screen
        await pilot.press("down", "down", "down", "down")  # message 5: response 1's frame 4
        assert "response 1, frame 4" in text(session.query_one("#message"))
        await pilot.press("enter")
        await settle(pilot, StreamScreen)
        stream = app.screen
        assert (stream.turn.turn, stream.frame, stream.model.total) == (1, 4, 11)
        assert "response 1 of 2" in stream.title_text
        await pilot.press("end")
        robust = text(stream.query_one("#robust", CallTable))
        assert rs.CALL_ID in robust and "get_weather" in robust  # the same call table
        await pilot.press("right_curly_bracket")  # the next response, in its place
        await settle(pilot, StreamScreen)
        await pilot.pause(0.2)
        assert app.screen is not stream and app.screen.turn.turn == 2
        assert app.screen.frame == 0 and app.screen.model.total == 12
        await pilot.press("right_curly_bracket")
        assert app.screen.turn.turn == 2  # no further response: said, nothing opened
        await pilot.press("left_curly_bracket")
        await pilot.pause(0.3)
        await settle(pilot, StreamScreen)
        assert app.screen.turn.turn == 1
        await pilot.press("q")  # back to the session, where it was
        await settle(pilot, SessionScreen)
        assert app.screen is session
        listing = session.query_one(MessageList)
        await pilot.press("right_curly_bracket")  # the cursor to response 2's first message
        row = session.rows[listing.cursor]
        assert (row.message, row.turn) == (12, 1)
        await pilot.press("right_curly_bracket")
        assert session.rows[listing.cursor].message == 12  # no further response
        await pilot.press("left_curly_bracket")
        assert session.rows[listing.cursor].message == 0
        await pilot.press("end")
        assert session.rows[listing.cursor].message == 26
        await pilot.press("enter")  # a close frame: in no response, nothing opens
        await pilot.pause()
        assert app.screen is session
        await pilot.press("left_curly_bracket")  # from outside: the last response
        assert session.rows[listing.cursor].message == 12
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (0, None)


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_client_message_inside_a_response_opens_it_after_the_frame_before(tmp_path):
    msgs = codex_turns()
    msgs.insert(4, ("client", b'{"type":"response.cancel"}'))  # after response 1's frame 3
    app = ReplayApp(str(write_session(tmp_path / "s.jsonl", msgs)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, SessionScreen)
        await pilot.press("down", "down", "down", "down")
        assert "message 5 of 28 · client" in text(app.screen.query_one("#message"))
        await pilot.press("enter")
        await settle(pilot, StreamScreen)
        assert (app.screen.turn.turn, app.screen.frame) == (1, 3)


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_response_keys_are_a_sessions_only(broken):
    app = ReplayApp(broken, exchange=1)  # an HTTP stream: no responses to go between
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, StreamScreen)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Next response" not in titles and "Next" in titles
        await pilot.press("right_curly_bracket")
        assert app.screen.turn is None and app.screen.frame == 0
    app = ReplayApp(broken, exchange=3, response=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, StreamScreen)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Next response", "Previous response"} <= titles


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_responses_request_is_its_response_create_with_the_contract(broken):
    app = ReplayApp(broken, exchange=3, response=2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, StreamScreen)
        await analysed(pilot)
        await pilot.pause(0.2)
        screen = app.screen
        assert screen.turn.turn == 2
        view = text(screen.query_one("#conversation"))
        assert "tool-result-missing" in view  # the finding about this response's request
        assert rs.RESPONSE_IDS[0] in view
        assert screen.has_class("-request")  # a break opens the request


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_session_cut_mid_response_says_so_and_its_stream_ends_as_the_session(tmp_path):
    msgs = codex_turns()[:5]  # response.create, then four events of the first response
    path = write_session(tmp_path / "cut.jsonl", msgs, reason="client-closed", close=False)
    app = ReplayApp(str(path))  # its one exchange: the session opens at once
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, SessionScreen)
        screen = app.screen
        shown = lines(screen.query_one(MessageList))
        assert shown[0].startswith("── response 1 · 4 frames")
        assert "its final event never came" in shown[0]
        facts = text(screen.query_one("#session-facts"))
        assert "5 messages (1 from the client), no close" in facts
        assert "ended client-closed" in facts
        await pilot.press("end", "enter")
        await settle(pilot, StreamScreen)
        stream = app.screen
        assert stream.frame == 4
        stream.model.result is not None or await pilot.pause(0.5)
        assert stream.model.result.ended == "client-closed"


@pytest.mark.anyio
@pytest.mark.slow
async def test_hostile_message_text_is_shown_inert(tmp_path):
    esc = "\x1b]0;pwned\x07\x1b[2J"
    msgs = [
        ("client", create(model=rs.MODEL, input=f"hi{esc}")),
        ("server", orjson.dumps({"type": f"response.created{esc}", "response": {"id": esc}})),
        ("server", f"not json {esc}\x9b31m".encode()),  # raw control bytes in a text frame
        ("server", b"\xff\xfe\x1b[2J", 2, True),  # binary
        ("server", b"\x1b[2J", 9, True),  # a ping carrying an escape
        ("client", orjson.dumps({f"key{esc}": f"value{esc}", "type": f"x{esc}"})),
    ]
    path = write_session(tmp_path / "hostile.jsonl", msgs)
    app = ReplayApp(str(path))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, SessionScreen)
        screen = app.screen
        listing = screen.query_one(MessageList)
        for row in range(len(screen.rows)):
            listing.cursor = row
            screen._show_message()
            await pilot.pause()
            shown = "\n".join(lines(listing)) + text(screen.query_one("#message"))
            assert not RAW.search(shown), RAW.findall(shown)
            svg = app.export_screenshot()  # the whole screen, as drawn
            assert not RAW.search(svg.replace("\n", "").replace("\t", ""))
        everything = "\n".join(lines(listing))
        assert 'input="hi\\u001b]0;pwned\\u0007' in everything  # as JSON escapes it
        assert "response.created\\x1b" in everything  # the type column too
        listing.cursor = 3  # the text frame that is no JSON: whole in the detail
        screen._show_message()
        assert "not json \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m" in text(screen.query_one("#message"))
        await pilot.press("home", "enter")  # the response, its request view
        await settle(pilot, StreamScreen)
        svg = app.export_screenshot()
        assert not RAW.search(svg.replace("\n", "").replace("\t", ""))


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_recorded_model_name_is_shown_as_text_not_markup(tmp_path):
    path = tmp_path / "markup.jsonl"
    with RecordingWriter(str(path)) as w:
        for model in ("gpt[/x]", "[bold]m"):
            x = w.new_exchange()
            body = orjson.dumps({"model": model, "stream": True, "messages": []})
            w.request(x, "POST", "http://h/v1/chat/completions", [], body)
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, b"data: [DONE]\n\n")
            w.end(x, "complete")
    app = ReplayApp(str(path))
    async with app.run_test(size=(120, 30)) as pilot:
        await exchanges_filled(pilot)  # "[/x]" read as markup raised MarkupError here
        assert list(cells(app, "model").values()) == ["gpt[/x]", "[bold]m"]


# -- links ------------------------------------------------------------------------------


def test_a_link_names_one_response_of_a_session(broken, monkeypatch):
    opened = {}

    def run(self):
        opened.update(exchange=self.exchange, response=self.response, frame=self.start_frame)

    monkeypatch.setattr(ReplayApp, "run", run)
    runner = CliRunner()
    done = runner.invoke(main, ["replay", f"{broken}#3.2", "--frame", "5"])
    assert done.exit_code == 0, done.output
    assert opened == {"exchange": 3, "response": 2, "frame": 5}
    done = runner.invoke(main, ["replay", f"{broken}#3", "--response", "1"])
    assert done.exit_code == 0 and opened["response"] == 1
    done = runner.invoke(main, ["replay", f"{broken}#3.2", "--response", "1"])
    assert done.exit_code == 2 and "names response 2, and --response says 1" in done.output
    done = runner.invoke(main, ["replay", broken, "--response", "1"])
    assert done.exit_code == 2 and "--response names a response" in done.output
    assert done.output.strip().count("\n") == 0


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize(
    "exchange, response, frame, said",
    [
        (3, 5, 0, "exchange 3 is a WebSocket session with responses 1-2, not response 5"),
        (1, 1, 0, "exchange 1 is no WebSocket session, it has no responses"),
        (3, None, 4, "exchange 3 is a WebSocket session: --frame is a frame of one of its"),
        (3, 2, 40, "--frame 40: the stream has frames 1-12"),
    ],
)
async def test_a_response_the_session_lacks_is_one_line(broken, exchange, response, frame, said):
    app = ReplayApp(broken, exchange=exchange, frame=frame, response=response)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            if app.return_code is not None:
                break
            await pilot.pause(0.05)
    assert app.return_code == 2
    assert said in app.failure and "\n" not in app.failure


# -- looks --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
def test_snapshot_session(snap_compare, size, tmp_path):
    path = codex_after_http(tmp_path, answer_call=False)
    app = ReplayApp(str(path), exchange=3)

    async def before(pilot) -> None:
        await settle(pilot, SessionScreen)
        await analysed(pilot)
        await pilot.press("down", "down", "down", "down")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=before)


def test_a_client_messages_fields_read_as_the_request_views():
    """JSON's words (`stream=true`, `"store":null`), never Python's True or None, and a
    string quoted, as the request view's Parameters line shows them."""
    from streamscope.core.history import History
    from streamscope.tui.conversation import conversation
    from streamscope.tui.session_rows import _client_summary

    fields = {"model": "gpt-4o", "stream": True, "store": None, "temperature": 0.5}
    said = _client_summary({"type": "response.create", **fields}, b"")
    assert said == 'model="gpt-4o" stream=true store=null temperature=0.5'
    history = History([], params=fields)
    params = conversation(history, [], {}).plain.split("Parameters  ", 1)[1].split("\n")[0]
    assert params.split(" · ") == said.split(" ")


@pytest.mark.anyio
@pytest.mark.parametrize("session", [False, True])
async def test_what_a_response_done_did_names_its_response_as_inspect_does(tmp_path, session):
    # response 2's response.done said "response 1" in a stream of two (its index from 0),
    # "response 0" as a session's response 2: numbered now as inspect's response column
    from streamscope.tui.widgets import FrameDetail

    from .dialects.realtime.events import body, call, message_item, response
    from .dialects.realtime.sessions import tool_loop, write

    if session:
        path = write(tmp_path / "session.jsonl", tool_loop())
        opened = {"exchange": 1, "response": 2}
    else:
        second = response(message_item(0, "It is 18.", "item_m2", "resp_2"), rid="resp_2")
        path = tmp_path / "two.jsonl"
        path.write_bytes(body(response(call(0), rid="resp_1") + second))
        opened = {}
    app = ReplayApp(str(path), **opened)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await pilot.pause()
        said = text(app.screen.query_one(FrameDetail))
        assert '  response 2: status "completed"' in said, said
        assert "response 1:" not in said and "response 0" not in said


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("width, height", [(60, 20), (80, 24), (100, 30)])
@pytest.mark.parametrize(
    "exchange, screen", [(None, ExchangesScreen), (3, SessionScreen), (1, StreamScreen)]
)
async def test_every_screen_leaves_the_palette_hint_out_below_90_columns(
    broken, exchange, screen, width, height
):
    # the exchanges list and a session showed `^p palette` at 60 and 80 columns, as the
    # stream screen did not
    app = ReplayApp(broken, exchange=exchange)
    async with app.run_test(size=(width, height)) as pilot:
        await settle(pilot, screen)
        await pilot.pause(0.1)
        footer = app.screen.query_one("Footer")

        def hint() -> bool:
            return any(k.display for k in footer.query("FooterKey.-command-palette"))

        assert hint() == (width >= 90), width
        await pilot.resize_terminal(180 - width, height)  # across 90: the hint follows
        await pilot.pause(0.1)
        assert hint() == (width < 90), width
