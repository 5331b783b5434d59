"""`replay A B`: two streams side by side, stepped together, as a person uses it (the
bundled direct / LiteLLM pair: the gateway rewrites the call's id on every fragment)."""

from __future__ import annotations

import os

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.tui.aligned import BY_FRAMES, RULE
from streamscope.tui.sidebyside import SideBySideApp, found_line, open_pair
from streamscope.tui.widgets import CallTable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRECT = os.path.join(ROOT, "recordings", "gateway-direct.jsonl")
LITELLM = os.path.join(ROOT, "recordings", "gateway-litellm.jsonl")
SIZES = [(80, 24), (200, 50)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def opened() -> SideBySideApp:
    return open_pair((DIRECT, None), (LITELLM, None))


def test_steps_align_both_sides_by_the_arguments_assembled_and_find_the_rewritten_id():
    app = opened()
    al = app.aligned
    assert app.pair.a == (1, None) and app.pair.b == (1, None)  # the pair diff found different
    # the same arguments in the same fragments: both sides at the same frame each step, the
    # frame that opens the call (its id and name, no argument yet) among them
    assert [(s.a, s.b) for s in al.steps] == [
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
        (4, 4),
        (5, 5),
        (7, 7),
    ]
    assert al.steps[0].share == 0.0 and al.steps[-1].share == 1.0
    assert al.differences(0) == []  # before the first frame: nothing to differ
    # robust keeps the first id on both sides; the first client diff found broken does not
    assert al.strategies == ("guarded",)
    assert [(name, c.position, c.fields) for name, c in al.differences(3)] == [
        ("guarded", 1, ["id"])
    ]
    assert al.differences(1) == []  # the call opened, the same id on both sides
    # `]` stops wherever a differing cell changes: B's guarded id changes at every fragment
    visited, at = [], al.next_difference(0)
    while at is not None:
        visited.append(at)
        at = al.next_difference(at)
    assert visited == [2, 3, 4, 5]


def _sse(tmp_path, name: str, fragments: list[str], call_id: str = "call_1") -> str:
    """A Chat Completions SSE body: one call opened, its arguments in `fragments`."""

    def event(delta: dict, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + orjson.dumps({"object": "chat.completion.chunk", "choices": [choice]})

    opener = {"index": 0, "id": call_id, "type": "function", "function": {"name": "f"}}
    events = [event({"role": "assistant", "tool_calls": [opener]})]
    events += [
        event({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}) for f in fragments
    ]
    events += [event({}, "tool_calls"), b"data: [DONE]"]
    path = tmp_path / name
    path.write_bytes(b"\n\n".join(events) + b"\n\n")
    return str(path)


def test_a_step_is_the_first_frame_each_side_reaches_the_share(tmp_path):
    # the same 18 characters in 2 fragments and in 4: shares 1/2 | 4/18, 9/18, 13/18
    a = _sse(tmp_path, "a.sse", ['{"city": ', '"Berlin"}'])
    b = _sse(tmp_path, "b.sse", ['{"ci', 'ty": ', '"Ber', 'lin"}'], call_id="call_2")
    al = open_pair((a, None), (b, None)).aligned
    # frame 1 opens the call (a step); A's fragments are frames 2-3, B's 2-5; then finish
    # and [DONE]
    steps = [(s.a, s.b) for s in al.steps]
    assert steps == [(0, 0), (1, 1), (2, 2), (2, 3), (3, 4), (3, 5), (5, 7)]
    assert [round(s.share, 3) for s in al.steps] == [0, 0, 0.222, 0.5, 0.722, 1, 1]
    assert [(n, c.fields) for n, c in al.differences(1) if n == "robust"] == [("robust", ["id"])]
    robust = [(name, c.fields) for name, c in al.differences(2) if name == "robust"]
    assert robust == [("robust", ["id", "arguments"])]  # A is half-way, B at 4 characters
    # at half the arguments both sides hold the same text: only the id differs
    assert [(n, c.fields) for n, c in al.differences(3) if n == "robust"] == [("robust", ["id"])]
    assert al.measure() == f"of the arguments · {RULE}"


def test_two_streams_without_arguments_are_said_to_be_aligned_by_frame(tmp_path):
    a = _sse(tmp_path, "a.sse", [])
    b = _sse(tmp_path, "b.sse", [], call_id="call_2")
    al = open_pair((a, None), (b, None)).aligned
    assert al.by_frames == (True, True)
    assert al.measure() == f"of the frames · {BY_FRAMES}"  # what the step line says
    assert "arguments ·" not in al.measure()
    c = _sse(tmp_path, "c.sse", ['{"x": 1}'])
    one = open_pair((a, None), (c, None)).aligned
    assert one.measure().startswith("(B's arguments, A's frames: A has no arguments)")


def test_the_diff_line_says_fields_in_the_words_diff_uses():
    app = open_pair((DIRECT, 2), (LITELLM, 1))
    said = str(found_line(app.found, app.pair))
    assert 'finish reason "stop" -> "tool_calls"' in said
    assert "timing: fragments per call" in said
    assert "_reason" not in said and "_ns" not in said and "reasoning_content" not in said


@pytest.mark.parametrize(
    "name",
    ["parallel-index-0.jsonl", "anthropic-start-input.jsonl", "responses-done-mismatch.jsonl"],
)
def test_the_one_pass_progress_is_the_frame_by_frame_count(name):
    from streamscope.tui.aligned import _counted, _exact
    from streamscope.tui.sidebyside import _model

    model = _model(os.path.join(ROOT, "recordings", name), 1)
    assert _counted(model) == _exact(model)


@pytest.mark.parametrize(
    "b, said",
    [
        ("/nonexistent/b.jsonl", "/nonexistent/b.jsonl: no such file"),
        (f"{LITELLM}#9", "there is no exchange 9"),
        (
            os.path.join(ROOT, "recordings", "realtime-two-calls.jsonl"),
            "a WebSocket session's responses are not shown side by side",
        ),
        (f"{LITELLM}#1@99", f"{LITELLM}#1@99: replay A B steps two whole streams"),  # was: unsaid
    ],
)
def test_a_bad_b_is_one_line_and_exit_2_with_no_screen(b, said):
    got = CliRunner().invoke(main, ["replay", DIRECT, b])
    assert got.exit_code == 2
    lines = got.output.splitlines()
    assert len(lines) == 1 and said in lines[0], got.output
    assert "\x1b" not in got.output  # no screen was started


def test_one_file_options_with_two_files_are_one_line():
    got = CliRunner().invoke(main, ["replay", DIRECT, LITELLM, "--frame", "2"])
    assert got.exit_code == 2 and len(got.output.splitlines()) == 1


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_view_fits_and_its_keys_step_both_sides(size):
    app = opened()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for name in ("#step", "#title-a", "#robust-a", "#robust-b", "#client-b", "#found"):
            region = app.query_one(name).region
            assert region.height > 0 and region.bottom <= size[1] - 1, (name, region)
        assert RULE in str(app.query_one("#step").render())
        assert "id-changed" in str(app.query_one("#found").render())
        assert "now breaks in B: guarded" in str(app.query_one("#found").render())
        await pilot.press("right")
        assert app.step == 1
        await pilot.press("left", "left")
        assert app.step == 0
        await pilot.press("right_square_bracket")  # to where the ids first differ
        assert app.step == 2
        table = app.query_one("#client-b", CallTable)
        shown = table.content  # (rendered once at its width: tui/widgets/rendered.py)
        assert "≠" in "".join(seg.text for line in shown.lines for seg in line)
        await pilot.press("question_mark")
        assert app.screen is not app.screen_stack[0]
        await pilot.press("q")  # closes the help
        assert app.screen is app.screen_stack[0]
        await pilot.press("q")
    assert app.return_code == 0


def _at_the_difference(size):
    async def before(pilot) -> None:
        await pilot.pause()
        await pilot.press("right_square_bracket", "right")

    return before


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot(snap_compare, size):
    assert snap_compare(opened(), terminal_size=size, run_before=_at_the_difference(size))
