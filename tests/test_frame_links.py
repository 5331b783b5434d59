"""Links to a frame (FILE#N@F, FILE#N.R@F): inspect and scan print one beside each
finding, and every face that takes a FILE opens what it names."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.links import Link, LinkError, parse
from streamscope.tui.app import ReplayApp
from streamscope.tui.screens.stream import StreamScreen

ROOT = Path(__file__).resolve().parent.parent
ALIBABA = "recordings/alibaba-empty-id.jsonl"
SESSION = "recordings/codex-websocket.jsonl"  # exchange 1: a session of 3 responses
LINK = re.compile(r"(\S+#[0-9]+(?:\.[0-9]+)?(?:@[0-9]+)?)$")


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the reports name the files as given


@pytest.fixture
def opened(monkeypatch) -> list[ReplayApp]:
    """The replay apps the command built, their screens never started."""
    apps: list[ReplayApp] = []
    monkeypatch.setattr(ReplayApp, "run", lambda self: apps.append(self))
    return apps


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_a_link_reads_as_its_file_exchange_response_and_frame(tmp_path):
    assert parse(f"{ALIBABA}#1@2") == Link(ALIBABA, 1, None, 2)
    assert parse(f"{SESSION}#1.2@3") == Link(SESSION, 1, 2, 3)
    assert parse(f"{SESSION}#1.2") == Link(SESSION, 1, 2, None)
    assert parse(ALIBABA) is None and parse("nowhere.jsonl#1@2") is None
    hashed = tmp_path / "x.jsonl#1@2"  # a real file whose name holds `#` wins
    hashed.write_text("")
    (tmp_path / "x.jsonl").write_text("")
    assert parse(str(hashed)) is None
    for tail, said in [
        ("1@0", "frames are numbered from 1"),
        ("0@2", "exchanges are numbered from 1"),
        ("1.0", "responses are numbered from 1"),
        ("1@x", "#1@x is no link"),
        ("", "# is no link"),
    ]:
        with pytest.raises(LinkError, match=re.escape(said)):
            parse(f"{ALIBABA}#{tail}")


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_link_inspect_strict_prints_opens_the_replay_at_that_frame(opened):
    """The issue's done-when: a CI log line names FILE#N@F, and replay opens it there."""
    done = run("inspect", "--strict", ALIBABA)
    assert done.exit_code == 1  # the warnings fail --strict
    found = [m.group(1) for line in done.stdout.splitlines() if (m := LINK.search(line))]
    assert found == [f"{ALIBABA}#1@2", f"{ALIBABA}#1@2"]
    done = run("replay", found[0])
    assert done.exit_code == 0, done.output
    app = opened[0]
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(200):
            if isinstance(app.screen, StreamScreen):
                break
            await pilot.pause(0.05)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StreamScreen)
        assert "exchange 1" in screen.title_text and screen.frame == 2
        assert "frame 2/8" in str(screen.query_one("#info").render())


def test_replay_takes_a_session_responses_frame(opened):
    assert run("replay", f"{SESSION}#1.2@3").exit_code == 0
    app = opened[0]
    assert (app.exchange, app.response, app.start_frame) == (1, 2, 3)
    # a single stream's findings link to exchange 1, as it opens
    sse = "recordings/gemini-no-index.sse"
    line = next(x for x in run("inspect", sse).stdout.splitlines() if "index-missing" in x)
    assert line.endswith(f"  {sse}#1@1")
    assert run("replay", f"{sse}#1@3").exit_code == 0
    assert (opened[1].exchange, opened[1].start_frame) == (1, 3)
    done = run("replay", f"{ALIBABA}#1@2", "--frame", "3")
    assert done.exit_code == 2 and "names frame 2, and --frame says 3" in done.output


@pytest.mark.parametrize(
    "args, said",
    [
        (["replay", f"{ALIBABA}#1@0"], f"{ALIBABA}#1@0: frames are numbered from 1"),
        (
            ["replay", f"{ALIBABA}#1@99"],
            f"{ALIBABA}#1@99: frame 99 is past the end: the stream has frames 1-8",
        ),
        (["replay", f"{ALIBABA}#7@1"], "there is no exchange 7"),
        (["replay", f"{ALIBABA}#1@two"], f"{ALIBABA}#1@two: #1@two is no link"),
        (["replay", f"{SESSION}#1@3"], "is a WebSocket session: a frame is a frame of one"),
        (["replay", f"{SESSION}#1.9@1"], f"{SESSION}#1.9@1: the WebSocket session has no resp"),
        (["replay", f"{SESSION}#1.7"], f"{SESSION}#1.7: the WebSocket session has no response 7"),
        (["replay", f"{SESSION}#1.2@99"], "the stream has frames 1-"),
        (["replay", f"{ALIBABA}#1.1@2"], "exchange 1 is no WebSocket session"),
        (
            ["inspect", f"{ALIBABA}#1@99"],
            f"{ALIBABA}#1@99: frame 99 is past the end: the stream has frames 1-8",
        ),
        (["inspect", f"{ALIBABA}#1.1"], "exchange 1 is no WebSocket session"),
        (["inspect", f"{SESSION}#1@3"], "is a WebSocket session: a frame is a frame of one"),
        (["inspect", f"{SESSION}#1.9"], "the WebSocket session has no response 9"),
        (["export", f"{ALIBABA}#1@0"], "frames are numbered from 1"),
        (
            ["export", f"{ALIBABA}#1@99"],
            f"{ALIBABA}#1@99: frame 99 is past the end: the stream has frames 1-8",
        ),
        (
            ["export", f"{ALIBABA}#1@9", "--format", "md"],
            f"{ALIBABA}#1@9: frame 9 is past the end: the stream",
        ),
        (["export", f"{ALIBABA}#1@2", "--frames", "1-3"], "names frame 2, and --frames says"),
        (["scan", f"{ALIBABA}#1@x"], "#1@x is no link"),
        (["serve", f"{ALIBABA}#1@2"], f"serve plays whole files, not one exchange: give {ALIBABA}"),
    ],
)
def test_a_bad_link_is_one_line_and_no_screen(opened, args, said):
    done = run(*args)
    assert done.exit_code == 2, done.output
    assert said in done.output and done.output.strip().count("\n") == 0, done.output
    assert not opened


def test_inspect_reads_the_linked_exchange_and_export_writes_it_up_to_the_frame():
    whole = run("inspect", "--json", ALIBABA, "--exchange", "1")
    linked = run("inspect", "--json", f"{ALIBABA}#1@2")
    assert linked.exit_code == 0 and linked.stdout == whole.stdout
    assert run("inspect", f"{SESSION}#1.2@3").exit_code == 0
    exported = run("export", f"{ALIBABA}#1@3")
    assert exported.exit_code == 0, exported.output
    assert (
        exported.stdout_bytes
        == run("export", ALIBABA, "--exchange", "1", "--frames", "1-3").stdout_bytes
    )
    assert exported.stdout_bytes.count(b"data: ") == 3


def test_inspect_json_and_text_link_each_finding():
    doc = orjson.loads(run("inspect", "--json", ALIBABA).stdout)
    assert [a["link"] for s in doc["streams"] for a in s["anomalies"]] == [f"{ALIBABA}#1@2"] * 2
    buggy = "recordings/buggy-agent-uuid.jsonl"
    doc = orjson.loads(run("inspect", "--json", buggy).stdout)
    assert [f["link"] for f in doc["contract"]] == [f"{buggy}#2"]
    line = next(x for x in run("inspect", buggy).stdout.splitlines() if "substituted" in x)
    assert line.endswith(f"  {buggy}#2")


def test_scan_kind_lists_every_finding_of_the_kind(tmp_path):
    done = run("scan", "-j", "1", "--kind", "id-empty-overwrite", "recordings")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [
        f'{ALIBABA}#1@2  id-empty-overwrite ×4  id "" after "call_eee11723464a4b9eb8cee71d": '
        "a client that overwrites on every present field loses the id"
    ]  # how often, as inspect says it; recordings/README.md is counted, not an error line
    assert "README" not in done.stderr
    assert "id-empty-overwrite: 1 finding in 1 file of" in done.stderr
    assert "(1 unreadable, skipped)" in done.stderr
    contract = run("scan", "-j", "1", "--kind", "tool-call-id-substituted", "recordings")
    links = [line.split("  ", 1)[0] for line in contract.stdout.splitlines()]
    assert "recordings/buggy-agent-uuid.jsonl#2" in links
    done = run("scan", "--kind", "id-empty", "recordings")
    assert (
        done.exit_code == 2
        and "did you mean: " in done.output
        and "id-empty-overwrite" in done.output
    )
    assert done.output.strip().count("\n") == 0
    # a link names its file: scanned whole
    done = run("scan", "-j", "1", "--kind", "id-empty-overwrite", f"{ALIBABA}#2")
    assert done.stdout.startswith(f"{ALIBABA}#1@2  ")


def test_links_are_printed_shell_quoted_to_paste_and_never_raw(tmp_path):
    from streamscope.core.links import pasteable

    assert pasteable(f"{ALIBABA}#1@2") == f"{ALIBABA}#1@2"  # a plain one as it is
    assert pasteable("a b's.jsonl#1") == "'a b'\"'\"'s.jsonl#1'"
    assert pasteable("x\n\x1b[2J.jsonl#1") == "$'x\\x0a\\x1b[2J.jsonl#1'"
    assert pasteable(os.fsdecode(b"x\xff.jsonl#1")) == "$'x\\xff.jsonl#1'"  # bash: the byte
    data = (ROOT / ALIBABA).read_bytes()
    (tmp_path / "my $run.jsonl").write_bytes(data)
    (tmp_path / "new\nline\x1b[2J.jsonl").write_bytes(data)
    done = run("scan", "-j", "1", "--kind", "id-empty-overwrite", str(tmp_path))
    lines = done.stdout.splitlines()
    assert [x.split("  ", 1)[0] for x in lines] == [
        f"'{tmp_path}/my $run.jsonl#1@2'",
        f"$'{tmp_path}/new\\x0aline\\x1b[2J.jsonl#1@2'",
    ]
    assert "\x1b" not in done.output
    summary = run("scan", "-j", "1", str(tmp_path)).stdout
    assert f"'{tmp_path}/my $run.jsonl#1@2'" in summary and "\x1b" not in summary
    text = run("inspect", str(tmp_path / "my $run.jsonl")).stdout
    assert text.count(f"  '{tmp_path}/my $run.jsonl#1@2'") == 2
    # what it names opens: the shell takes the quotes off, the link is the file's
    doc = orjson.loads(run("inspect", "--json", f"{tmp_path}/my $run.jsonl#1").stdout)
    assert doc["streams"][0]["anomalies"][0]["link"] == f"{tmp_path}/my $run.jsonl#1@2"


@pytest.mark.parametrize(
    "chunks, said",
    [
        ([], "frame 2 is past the end: the stream has no frames"),
        ([b'data: {"choices":[]}\n\n'], "frame 2 is past the end: the stream has frame 1 only"),
    ],
)
def test_a_frame_past_the_end_of_a_stream_of_no_frames_or_one_is_said_so(tmp_path, chunks, said):
    """Not "frames 1-0" or "frames 1-1"."""
    from streamscope.recording.writer import RecordingWriter

    path = tmp_path / "short.jsonl"
    with RecordingWriter(str(path), redact=False) as w:
        x = w.new_exchange()
        body = b'{"model":"m","stream":true,"messages":[]}'
        url = "https://api.test/v1/chat/completions"
        w.request(x, "POST", url, [("content-type", "application/json")], body)
        w.response(x, 200, [("content-type", "text/event-stream")])
        for chunk in chunks:
            w.chunk(x, chunk)
        w.end(x, "complete", None)
    done = run("inspect", f"{path}#1@2")
    assert done.exit_code == 2 and said in done.output, done.output
