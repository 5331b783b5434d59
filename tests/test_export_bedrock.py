"""`export` and `scan` of Claude on Bedrock's invoke stream (the AWS event stream): the
body byte-exact as recorded, a recording of it, `--minimal` as valid messages (CRCs
right, each event in a chunk again, an exception still one), a chunk log of its events;
scan's rows name its framing and dialect."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.framing.aws_eventstream import EventStreamDecoder

from .bedrock_invoke import chunk, events_json, exception, write_recording

# a call whose input is sent whole at its start and again in fragments, then an exception
BAD_START = orjson.loads(events_json()[6])
BAD_START["content_block"]["input"] = {"city": "Paris"}
EVENTS = [*events_json()[:6], orjson.dumps(BAD_START), *events_json()[7:-2]]
BODY = b"".join(map(chunk, EVENTS)) + exception("modelStreamErrorException", "model failed")


@pytest.fixture
def recording(tmp_path) -> str:
    path = str(tmp_path / "bedrock.jsonl")
    write_recording(path, BODY, reads=5)
    return path


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def inspect(path) -> dict:
    (stream,) = orjson.loads(run("inspect", "--json", str(path)))["streams"]
    return stream


def kinds(stream: dict) -> set[str]:
    return {a["kind"] for a in stream["anomalies"]}


def test_the_body_is_exported_as_recorded(recording, tmp_path):
    out = tmp_path / "body.bin"
    run("export", recording, "-o", str(out))
    assert out.read_bytes() == BODY
    assert inspect(out)["framing"] == "aws-eventstream"


def test_a_recording_of_it_reads_alike(recording, tmp_path):
    out = tmp_path / "again.jsonl"
    run("export", recording, "--format", "recording", "-o", str(out))
    mine, theirs = inspect(out), inspect(recording)
    assert mine["framing"] == "aws-eventstream" and mine["dialect"] == "anthropic-messages"
    assert mine["tool_calls"] == theirs["tool_calls"] and kinds(mine) == kinds(theirs)


@pytest.mark.parametrize("fmt", ["sse", "recording"])
def test_minimal_keeps_valid_messages_and_the_findings(recording, tmp_path, fmt):
    out = tmp_path / f"min.{fmt}"
    said = run("export", recording, "--minimal", "--format", fmt, "-o", str(out))
    assert f"{len(EVENTS) + 1} frames -> " in said
    stream = inspect(out)
    assert stream["framing"] == "aws-eventstream" and stream["dialect"] == "anthropic-messages"
    assert {"provider-error", "block-start-input-nonempty"} <= kinds(stream)
    assert "frame-invalid" not in kinds(stream) and stream["frames"] < len(EVENTS) + 1
    if fmt == "sse":
        body = out.read_bytes()
        frames = EventStreamDecoder().feed(body)
        assert all(f.invalid is None for f in frames)
        assert frames[-1].event == "modelStreamErrorException"  # still an exception message
        eventstream = pytest.importorskip("botocore.eventstream")
        buffer = eventstream.EventStreamBuffer()
        buffer.add_data(body)
        assert len(list(buffer)) == len(frames)  # botocore checks both CRCs


def test_the_chunk_log_is_its_events(recording, tmp_path):
    out = tmp_path / "events.jsonl"
    run("export", recording, "--format", "chunks", "-o", str(out))
    lines = out.read_bytes().splitlines()
    assert [orjson.loads(x) for x in lines[: len(EVENTS)]] == [orjson.loads(e) for e in EVENTS]


def test_scan_rows_name_the_framing_and_the_dialect(recording):
    (row,) = [orjson.loads(x) for x in run("scan", recording, "--jsonl").splitlines() if x]
    assert row["framing"] == "aws-eventstream" and row["dialect"] == "anthropic-messages"
    assert row["model"] == "anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert "provider-error" in row["anomaly_kinds"]


@pytest.mark.slow
def test_a_converse_pytest_module_runs_green_through_boto3_with_only_boto3_and_pytest(tmp_path):
    from .test_export import only_openai_and_pytest

    for minimal in ([], ["--minimal"]):
        module = tmp_path / "test_fixture.py"
        sample = "recordings/bedrock-text-without-start.jsonl"
        run("export", sample, "--format", "pytest", "-o", str(module), "--force", *minimal)
        text = module.read_text()
        assert "converse_stream(" in text and "NOTE" not in text
        done = only_openai_and_pytest(module, "boto3")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 passed" in done.stdout


@pytest.mark.slow
def test_a_converse_module_whose_stream_raises_says_so_and_fails_as_boto3_does(tmp_path):
    from tests.dialects.bedrock.events import body, start, stop, text

    from .test_export import only_openai_and_pytest

    cut = [start(), text(0, "Let me"), ("throttlingException", {"message": "Too many tokens"})]
    saved = tmp_path / "stream.bin"
    saved.write_bytes(body([*cut, stop(0)]))
    module = tmp_path / "test_fixture.py"
    run("export", str(saved), "--format", "pytest", "-o", str(module), "--force")
    assert "NOTE: the SDK raises on these frames" in module.read_text()
    done = only_openai_and_pytest(module, "boto3")
    assert done.returncode == 1 and "throttlingException" in done.stdout, done.stdout
