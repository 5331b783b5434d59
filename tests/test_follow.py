"""--follow's incremental reading: a recording being written is read on from where the last
read stopped, and only the exchanges that changed are analysed again."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.analysis.driver import (
    FollowedSummaries,
    FollowingChild,
    summarize_exchanges,
)
from streamscope.inputs import open_input
from streamscope.recording import reader as reader_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = sorted(
    os.path.join(ROOT, "recordings", n)
    for n in os.listdir(os.path.join(ROOT, "recordings"))
    if n.endswith(".jsonl") and ".chunks." not in n
)


class Reads:
    """Every byte range read through the recording reader's files: (start, end)."""

    def __init__(self, monkeypatch) -> None:
        self.ranges: list[tuple[int, int]] = []
        opened = reader_module._open

        def counting(path: str):
            return _Counted(opened(path), self.ranges)

        monkeypatch.setattr(reader_module, "_open", counting)

    def all_at_or_after(self, offset: int) -> bool:
        return all(start >= offset for start, _ in self.ranges)


class _Counted:
    def __init__(self, f, ranges: list) -> None:
        self._f, self._ranges = f, ranges

    def read(self, n: int = -1) -> bytes:
        at = self._f.tell()
        data = self._f.read(n)
        if data:
            self._ranges.append((at, at + len(data)))
        return data

    def readline(self, limit: int = -1) -> bytes:
        at = self._f.tell()
        data = self._f.readline(limit)
        self._ranges.append((at, at + len(data)))
        return data

    def __getattr__(self, name: str):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._f.close()


def lines_of(path: str) -> list[bytes]:
    with open(path, "rb") as f:
        return f.read().splitlines(keepends=True)


def as_rows(rows) -> dict:
    return {r.exchange: r for r in rows}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sample=st.sampled_from(SAMPLES), data=st.data())
def test_followed_in_pieces_the_summaries_are_those_of_the_whole_file(tmp_path, sample, data):
    """However the file grows (whole lines, or a line cut mid-way), once it is all there the
    incremental summaries are the one-pass analysis's, and every byte was read once."""
    whole = b"".join(lines_of(sample))
    cuts = sorted(
        data.draw(st.lists(st.integers(1, len(whole) - 1), max_size=6, unique=True), "cuts")
    )
    path = tmp_path / f"live-{len(cuts)}-{hash(tuple(cuts))}.jsonl"
    header = whole.index(b"\n") + 1  # the header is there before a follower opens the file
    cuts = [c for c in cuts if c > header]
    path.write_bytes(whole[:header])
    followed = FollowedSummaries(str(path))
    rows = as_rows(followed.update())
    done = header
    for c in [*cuts, len(whole)]:
        with open(path, "ab") as f:
            f.write(whole[done:c])
        done = c
        rows.update(as_rows(followed.update()))
    expected = as_rows(summarize_exchanges(str(path)))
    assert rows == expected
    # a line cut mid-way is read again once whole; nothing else is read twice
    assert followed.reader.bytes_read >= len(whole)
    if not cuts:
        assert followed.reader.bytes_read == len(whole)


def write_lines(path, lines: list[bytes]) -> None:
    with open(path, "ab") as f:
        f.write(b"".join(lines))


def test_an_open_stream_shows_its_frames_so_far_and_no_verdict_until_it_ends(tmp_path):
    """buggy-agent-uuid: exchange 1 streams a call, exchange 2 sends it back with an invented
    id. While exchange 1 is open it has no end-of-stream verdict; once it ends, exchange 2's
    contract break appears, though no line of exchange 2 came with it."""
    lines = lines_of(os.path.join(ROOT, "recordings", "buggy-agent-uuid.jsonl"))
    end1 = next(i for i, line in enumerate(lines) if b'"type":"end","exchange":1' in line)
    chunks1 = [i for i, line in enumerate(lines) if b'"type":"chunk","exchange":1' in line]
    path = tmp_path / "live.jsonl"
    # everything but exchange 1's end and last chunk (its [DONE])
    held = {end1, chunks1[-1]}
    write_lines(path, [line for i, line in enumerate(lines) if i not in held])
    followed = FollowedSummaries(str(path))
    rows = as_rows(followed.update())
    final = as_rows(summarize_exchanges(os.path.join(ROOT, "recordings", "buggy-agent-uuid.jsonl")))
    one = rows[1]
    assert one.open and one.stream
    assert one.frames == final[1].frames - 1  # every frame in so far, the [DONE] not yet
    assert one.kinds == final[1].kinds == []  # no done-missing, no stream-truncated yet
    assert one.calls == final[1].calls  # the call is assembled already
    assert rows[2].findings == []  # exchange 1's calls are not final: no contract yet
    write_lines(path, [lines[chunks1[-1]], lines[end1]])
    changed = as_rows(followed.update())
    assert set(changed) == {1, 2}  # 1 got lines; 2's findings changed with it
    assert changed == final
    assert followed.update() == []  # nothing new: nothing read, nothing analysed


def test_the_reader_reads_only_what_was_appended(tmp_path, monkeypatch):
    lines = lines_of(os.path.join(ROOT, "recordings", "buggy-agent-uuid.jsonl"))
    path = tmp_path / "live.jsonl"
    write_lines(path, lines[:5])
    followed = FollowedSummaries(str(path))
    followed.update()
    before = os.path.getsize(path)
    reads = Reads(monkeypatch)
    write_lines(path, lines[5:])
    followed.update()
    assert reads.ranges and reads.all_at_or_after(before)
    assert sum(b - a for a, b in reads.ranges) == os.path.getsize(path) - before


def test_the_index_and_opened_exchanges_read_only_what_was_appended(tmp_path, monkeypatch):
    """Source.refresh: the index scans the new bytes; an exchange opened before reads its
    new head lines (its end) and no old one again (its request is not parsed twice)."""
    lines = lines_of(os.path.join(ROOT, "recordings", "buggy-agent-uuid.jsonl"))
    end1 = next(i for i, line in enumerate(lines) if b'"type":"end","exchange":1' in line)
    path = tmp_path / "live.jsonl"
    write_lines(path, lines[:end1])
    source = open_input(str(path), tolerant=True)
    opened = source.exchange(1)
    assert opened.info.end_ns is None
    before = os.path.getsize(path)
    reads = Reads(monkeypatch)
    write_lines(path, lines[end1:])
    assert source.refresh()
    assert source.exchange(1) is opened and opened.info.end_reason == "complete"
    assert source.exchange(2).info.model  # a new exchange is there too
    assert reads.ranges and reads.all_at_or_after(before)
    source.close()


def test_the_following_child_reads_each_byte_once_and_ends_with_its_input(tmp_path):
    lines = lines_of(os.path.join(ROOT, "recordings", "buggy-agent-uuid.jsonl"))
    path = tmp_path / "live.jsonl"
    write_lines(path, lines[:4])
    child = FollowingChild(str(path))
    try:
        first = as_rows(child.update())
        assert first and all(r.open for r in first.values())
        write_lines(path, lines[4:])
        later = as_rows(child.update())
        assert later == as_rows(summarize_exchanges(str(path)))
        assert child.bytes_read == os.path.getsize(path)
    finally:
        child.close()
    assert child._proc.returncode == 0


def test_a_following_child_whose_file_is_not_a_recording_says_so(tmp_path):
    path = tmp_path / "junk.jsonl"
    path.write_text("not a recording\n")
    child = FollowingChild(str(path))
    with pytest.raises(Exception, match="not valid JSON|not a streamscope recording"):
        child.update()
    child.close()


# -- the replay's --follow from the first line: a recording with no exchange yet ----------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def request_line(writer) -> float:
    """Write exchange 1's first line (its request), as the recorder does; when, monotonic."""
    import time

    ex = writer.new_exchange()
    writer.request(ex, "POST", "http://127.0.0.1/v1/chat/completions", [], b'{"model":"m"}')
    return time.monotonic()


async def first_exchange_within_a_second(pilot, write) -> None:
    """`write()` writes exchange 1's first line: the list shows it within a second."""
    import time

    from streamscope.tui.screens import ExchangesScreen

    from .test_tui import settle, text

    await settle(pilot, ExchangesScreen)
    screen = pilot.app.screen
    table = screen.query_one("#exchanges")
    assert table.row_count == 0 and "0 exchanges" in text(screen.query_one("#title"))
    await pilot.pause(1.5)  # the app has looked at the file again meanwhile: still nothing
    assert table.row_count == 0
    written = write()
    while table.row_count == 0 and time.monotonic() - written < 5:
        await pilot.pause(0.02)
    took = time.monotonic() - written
    assert table.row_count == 1 and took < 1.0, f"the first exchange took {took:.2f} s"
    assert "1 exchange " in text(screen.query_one("#title"))


@pytest.mark.slow
@pytest.mark.anyio
async def test_follow_from_a_header_only_recording_shows_the_first_exchange(tmp_path):
    """The state `record` and `proxy` leave a recording in before the first request."""
    from streamscope.recording import RecordingWriter
    from streamscope.tui.app import ReplayApp

    path = tmp_path / "live.jsonl"
    writer = RecordingWriter(path)
    app = ReplayApp(str(path), follow=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await first_exchange_within_a_second(pilot, lambda: request_line(writer))
    writer.close()


@pytest.mark.slow
@pytest.mark.anyio
async def test_follow_from_an_empty_recording_waits_for_its_first_line(tmp_path):
    """Created, nothing written yet: the replay waits for the header, then follows."""
    from streamscope.recording import RecordingWriter
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import Loading

    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    app = ReplayApp(str(path), follow=True)
    writers = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.5)
        assert isinstance(app.screen, Loading)  # waiting, not failed
        writers.append(RecordingWriter(path))
        await first_exchange_within_a_second(pilot, lambda: request_line(writers[0]))
    writers[0].close()


@pytest.mark.slow
@pytest.mark.anyio
async def test_follow_with_an_exchange_not_written_yet_opens_it_when_it_comes(tmp_path):
    """`--follow --exchange 1` on a header-only recording: the list until exchange 1 is
    answered, then its stream."""
    from streamscope.recording import RecordingWriter
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import ExchangesScreen, StreamScreen

    from .test_tui import settle

    path = tmp_path / "live.jsonl"
    writer = RecordingWriter(path)
    app = ReplayApp(str(path), exchange=1, follow=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, ExchangesScreen)
        request_line(writer)
        await pilot.pause(0.6)  # the request is there, not yet its answer: the list still
        assert isinstance(app.screen, ExchangesScreen)
        writer.response(1, 200, [("content-type", "text/event-stream")])
        writer.chunk(1, b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n')
        await settle(pilot, StreamScreen, timeout=5)
        assert app.screen.model.exchange == 1
    writer.close()


@pytest.mark.slow
@pytest.mark.anyio
async def test_follow_before_the_recording_exists_waits_for_it(tmp_path):
    """`replay --follow` started before `record` creates the file: it waits, saying so,
    then follows; q quits while it waits."""
    from streamscope.recording import RecordingWriter
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import Loading

    from .test_tui import text

    path = tmp_path / "live.jsonl"
    app = ReplayApp(str(path), follow=True)
    writers = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.5)
        assert isinstance(app.screen, Loading)  # waiting, not failed
        assert "Waiting for live.jsonl to be created" in text(app.screen.query_one("Label"))
        writers.append(RecordingWriter(path))
        await first_exchange_within_a_second(pilot, lambda: request_line(writers[0]))
    writers[0].close()
    quits = ReplayApp(str(tmp_path / "never.jsonl"), follow=True)
    async with quits.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        assert quits.return_code is None  # still waiting
        await pilot.press("q")
        await pilot.pause(0.3)
        assert quits.return_code == 0 and quits.failure is None
