"""`--strict`: `inspect` and `scan` give the same verdict on the same files, the one rule
of core/verdict.py, and both commands' help says what fails it."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import STRICT_HELP, main
from streamscope.core.verdict import exchange_failure, fails
from streamscope.dialects.chat.appendix_a import chunk
from streamscope.recording import RecordingWriter

from .helpers import sse_body

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
CHAT = "http://127.0.0.1/v1/chat/completions"


def _one_stream(path: Path, chunks: list[dict], reason: str) -> None:
    with RecordingWriter(str(path)) as w:
        x = w.new_exchange()
        w.request(x, "POST", CHAT, [], orjson.dumps({"model": "m", "stream": True}))
        w.response(x, 200, [("content-type", "text/event-stream")])
        w.chunk(x, sse_body(chunks, done=False))
        w.end(x, reason)


OPENER = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
ARGS = {"index": 0, "function": {"arguments": '{"a'}}


def cut_by_the_client(path: Path) -> None:
    """Cut mid-arguments by the client: stream-truncated and args-invalid-json, lowered
    to warnings marked cut_by_client."""
    _one_stream(
        path,
        [chunk({"tool_calls": [OPENER]}), chunk({"tool_calls": [ARGS]})],
        "client-closed",
    )


def cut_by_the_connection(path: Path) -> None:
    """The same bytes, cut by the connection: the provider's errors."""
    _one_stream(
        path,
        [chunk({"tool_calls": [OPENER]}), chunk({"tool_calls": [ARGS]})],
        "upstream-error",
    )


def failed_exchange(path: Path) -> None:
    """A non-stream exchange answered 502."""
    with RecordingWriter(str(path)) as w:
        x = w.new_exchange()
        w.request(x, "POST", CHAT, [], b'{"model": "m"}')
        w.response(x, 502, [("content-type", "application/json")])
        w.chunk(x, b'{"error": {"message": "upstream unreachable"}}')
        w.end(x, "upstream-error", "upstream unreachable")


def sample(name: str):
    def make(path: Path) -> None:
        shutil.copy(RECORDINGS / name, path)

    return make


CASES = {  # name -> (how the file is made, exit status of both commands)
    "clean": (sample("openai.jsonl"), 0),
    "info findings only": (sample("gemini-parallel-signature.jsonl"), 0),
    "warnings only": (sample("alibaba-empty-id.jsonl"), 1),
    "an error anomaly": (sample("dashscope-truncated-args.jsonl"), 1),
    "a contract break": (sample("buggy-agent-uuid.jsonl"), 1),
    "cut by the client": (cut_by_the_client, 0),
    "cut by the connection": (cut_by_the_connection, 1),
    "a failed exchange": (failed_exchange, 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inspect_and_scan_agree(tmp_path, case):
    make, status = CASES[case]
    path = tmp_path / "case.jsonl"
    make(path)
    runner = CliRunner()
    inspected = runner.invoke(main, ["inspect", "--strict", str(path)])
    scanned = runner.invoke(main, ["scan", "-j", "1", "--strict", str(path)])
    assert (inspected.exit_code, scanned.exit_code) == (status, status), (
        inspected.output,
        scanned.output,
    )
    # without --strict neither fails
    assert runner.invoke(main, ["inspect", str(path)]).exit_code == 0
    assert runner.invoke(main, ["scan", "-j", "1", str(path)]).exit_code == 0


def test_scan_lists_what_fails_it(tmp_path):
    cut_by_the_client(tmp_path / "cut.jsonl")
    failed_exchange(tmp_path / "failed.jsonl")
    done = CliRunner().invoke(main, ["scan", "-j", "1", "--strict", str(tmp_path)])
    assert done.exit_code == 1
    assert "--strict: 1 finding:" in done.stderr
    assert f"{tmp_path / 'failed.jsonl'}#1: failed: HTTP 502" in done.stderr
    assert "cut.jsonl" not in done.stderr


def test_the_rule():
    assert fails("error") and fails("warning") and not fails("info")
    assert not fails("warning", cut_by_client=True)
    assert exchange_failure(True, 500, "upstream-error") is None  # a stream says it itself
    assert exchange_failure(False, 200, "complete") is None
    assert exchange_failure(False, None, None) is None  # never answered: nothing to judge
    assert exchange_failure(False, 404, "complete") == "HTTP 404"
    assert exchange_failure(False, 200, "client-closed") == "ended client-closed"
    assert exchange_failure(False, 200, None) == "the recording stops before this exchange ended"


@pytest.mark.parametrize("command", ["inspect", "scan"])
def test_both_helps_say_what_fails(command):
    text = " ".join(CliRunner().invoke(main, [command, "--help"]).output.split())
    assert " ".join(STRICT_HELP.split()) in text
