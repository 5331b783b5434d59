"""Hostile files, round two: values of the wrong type or out of range, and the encodings
Windows tools write, read as a user would meet them (issue 22's known failures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.dialects.chat.appendix_a import FIXTURES
from streamscope.export.fixtures import export
from streamscope.inputs import CHUNKS, HAR, RECORDING, SSE
from streamscope.inputs.sniff import sniff
from streamscope.recording.format import MAX_T_NS

from .fuzzing import RAW
from .helpers import renumber, sse_body, unsourced
from .test_har import har_of_recording

ROOT = Path(__file__).resolve().parents[1]
OPENAI = ROOT / "recordings" / "openai.jsonl"
NL = b"\n"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def calls(path) -> list:
    return [[(c.id, c.name, c.arguments) for c in s.tool_calls] for s in analyze(path).streams]


def har_bytes() -> bytes:
    return json.dumps(har_of_recording(str(OPENAI), False), indent=1).encode()


# -- encodings ------------------------------------------------------------------------

KINDS = {
    RECORDING: lambda: OPENAI.read_bytes(),
    SSE: lambda: sse_body(FIXTURES["Q4"]),
    CHUNKS: lambda: b"".join(orjson.dumps(c) + b"\n" for c in FIXTURES["Q4"]),
    HAR: har_bytes,
}
MARKS = {
    "utf-8-bom": (b"\xef\xbb\xbf", "utf-8", "byte order mark (skipped)"),
    "utf-16-le": (b"\xff\xfe", "utf-16-le", "UTF-16 LE text"),
    "utf-16-be": (b"\xfe\xff", "utf-16-be", "UTF-16 BE text"),
}


@pytest.mark.parametrize("mark", list(MARKS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_bom_and_utf16_inputs_read_like_utf8_ones_for_every_kind(tmp_path, kind, mark):
    data = KINDS[kind]()
    bom, coding, said = MARKS[mark]
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    plain.write_bytes(data)
    marked.write_bytes(bom + data.decode().encode(coding))
    assert sniff(marked).kind == kind
    got = unsourced(orjson.loads(run("inspect", "--json", str(marked)).output))
    want = unsourced(orjson.loads(run("inspect", "--json", str(plain)).output))
    assert any(said in n for n in got.pop("notes"))
    want.pop("notes", None)
    assert got == want  # the same streams, the same findings
    assert said in run("inspect", str(marked)).output
    # every export reads it too: the same frames as the UTF-8 file's (an exact SSE export
    # of a UTF-8 file keeps every byte, its mark included; a UTF-16 file's is its text)
    for fmt in ("sse", "chunks"):
        kept = bom if fmt == "sse" and coding == "utf-8" and kind in (SSE, CHUNKS) else b""
        assert export(str(marked), fmt).data == kept + export(str(plain), fmt).data


def test_a_utf16_file_with_a_lone_surrogate_reports_it_where_it_is(tmp_path):
    """A code unit that is no character is not dropped: the readers see a byte that is not
    UTF-8 at its place, as they would in a UTF-8 file."""
    events = sse_body(FIXTURES["Q1"]).decode()
    cut = events.index('"arguments":"') + len('"arguments":"')
    path = tmp_path / "lone.sse"
    text = events[:cut] + "\ud800" + events[cut:]
    path.write_bytes(b"\xff\xfe" + text.encode("utf-16-le", "surrogatepass"))
    result = run("inspect", str(path))
    assert result.exit_code == 0, result.output
    assert "invalid-utf8" in result.output or "UTF-8" in result.output
    assert RAW.search(result.output) is None


# -- HAR values out of range ----------------------------------------------------------


@pytest.mark.parametrize(
    "started",
    ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59"],
    ids=["year-1-east", "year-9999-west"],
)
def test_a_har_start_past_the_calendar_in_utc_is_a_note(tmp_path, started):
    doc = har_of_recording(str(OPENAI), False)
    doc["log"]["entries"][1]["startedDateTime"] = started
    path = tmp_path / "dates.har"
    path.write_text(json.dumps(doc))
    analysis = analyze(path)
    assert calls(path) == calls(OPENAI)
    assert (
        f'entries[1].startedDateTime "{started}" is before year 1 or after 9999 in UTC: '
        "read as the earliest entry's start"
    ) in analysis.notes
    exported = run("export", "--format", "recording", str(path))
    assert exported.exit_code == 0, exported.output


def test_a_har_start_centuries_from_the_others_is_a_note_and_exports(tmp_path):
    doc = har_of_recording(str(OPENAI), False)
    doc["log"]["entries"][1]["startedDateTime"] = "9999-12-31T23:59:59Z"
    path = tmp_path / "far.har"
    path.write_text(json.dumps(doc))
    notes = analyze(path).notes
    assert any(
        n.startswith("entries[1].startedDateTime is ") and "too far to place" in n for n in notes
    )
    for exchange in ([], ["--exchange", "2"]):
        exported = run("export", "--format", "recording", *exchange, str(path))
        assert exported.exit_code == 0, exported.output


# -- recording values out of range ----------------------------------------------------


def recording_with(tmp_path, change) -> Path:
    lines = [orjson.loads(x) for x in OPENAI.read_bytes().splitlines() if x.strip()]
    change(lines)
    path = tmp_path / "changed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


@pytest.mark.parametrize("t_ns", [2**64 - 1, -(2**63), MAX_T_NS + 1])
@pytest.mark.parametrize("kind", ["chunk", "response"])
def test_a_time_past_64_bits_is_one_line_naming_the_line_and_field(tmp_path, kind, t_ns):
    def change(lines):
        next(x for x in lines if x["type"] == kind)["t_ns"] = t_ns

    path = recording_with(tmp_path, change)
    for args in (["inspect"], ["inspect", "--json"], ["export", "--format", "recording"]):
        result = run(*args, str(path))
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and f"field 't_ns' is {t_ns}" in lines[0]
        assert "line " in lines[0] and "Traceback" not in result.output


def test_times_at_the_limit_export_as_a_recording(tmp_path):
    def change(lines):
        chunks = [x for x in lines if x["type"] == "chunk" and x["exchange"] == 1]
        chunks[0]["t_ns"], chunks[-1]["t_ns"] = -MAX_T_NS, MAX_T_NS
        next(x for x in lines if x["type"] == "request")["t_ns"] = -MAX_T_NS

    result = run("export", "--format", "recording", str(recording_with(tmp_path, change)))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("status", [5, 99, 600, -1, 2**64 - 1, True, 200.0])
def test_a_status_no_http_response_has_is_one_line_on_every_face(tmp_path, status):
    """HTTP statuses are 100 to 599: a response line holding 5 was read, and shown as
    `HTTP 5`; it is a bad line now, said as every other bad field is."""

    def change(lines):
        next(x for x in lines if x["type"] == "response")["status"] = status

    path = recording_with(tmp_path, change)
    at = path.read_bytes().index(b'{"type":"response"')
    where = f"{path}: line {path.read_bytes().count(NL, 0, at) + 1} (byte {at})"
    why = (
        f"field 'status' is {status}, not an HTTP status from 100 to 599"
        if type(status) is int
        else "field 'status' is not an HTTP status from 100 to 599 "
        f"(a JSON {'boolean' if status is True else 'number'})"
    )
    for args in (
        ["inspect"],
        ["inspect", "--json"],
        ["export", "--format", "chunks", "--exchange", "1"],
        ["serve", "--port", "1"],  # (refused while loading: no port is bound)
    ):
        result = run(*args, str(path))
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output and "HTTP 5" not in result.output
        assert result.output.strip().splitlines()[-1] == f"streamscope: {where}: {why}", args


TWICE = {  # the key given again, as JSON decodes it: an escape spells the same key
    "exchange": ("exchange", rb'"exchange":2,'),
    "type": ("type", rb'"type":"end",'),
    "type-escaped": ("type", rb'"typ\u0065":"end",'),
    "exchange-escaped": ("exchange", rb'"\u0065xch\u0061nge" :2,'),
    "exchange-escaped-last": ("exchange", rb'"exchang\u0065":2,'),
    "exchange-escaped-hex-case": ("exchange", rb'"excha\u006Ege":2,'),
}


@pytest.mark.parametrize("case", list(TWICE))
def test_a_key_the_index_reads_given_twice_is_refused_alike_on_every_face(tmp_path, case):
    """JSON leaves a key given twice to the reader: the index read the first "exchange",
    the parser the last, so inspect and export --exchange showed different frames. The
    rule now: such a line is refused, in the same words, on every face, however the key
    is spelt ("typ\\u0065" was not counted as "type")."""
    key, twice = TWICE[case]
    data = OPENAI.read_bytes().replace(
        b'{"type":"chunk","exchange":1,', b'{"type":"chunk","exchange":1,' + twice, 1
    )
    path = tmp_path / "twice.jsonl"
    path.write_bytes(data)
    said = set()
    for args in (
        ["inspect"],
        ["inspect", "--json"],
        ["export", "--format", "chunks", "--exchange", "1"],
        ["export", "--format", "chunks", "--exchange", "2"],
        ["serve", "--port", "1"],  # (refused while loading: no port is bound)
    ):
        result = run(*args, str(path))
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
        said.add(result.output.strip().splitlines()[-1].split("streamscope: ", 1)[-1])
    at = data.index(b'{"type":"chunk","exchange":1,' + twice)
    where = f"line {data.count(NL, 0, at) + 1} (byte {at})"
    want = (
        f"{path}: {where}: the key '{key}' is given twice (JSON leaves which one counts to "
        "the reader, so streamscope reads neither)"
    )
    assert said == {want}
    from streamscope.recording import RecordingIndex

    for check in (False, True):  # the replay's scan (runs of chunk lines unparsed), serve's
        with RecordingIndex.open(path, tolerant=True, check=check) as index:
            assert [str(e) for e in index.errors] == [want]


def test_an_exchange_numbered_0_exports_as_itself(tmp_path):
    path = recording_with(tmp_path, renumber(1, 0))
    own = export(str(path), "sse").data  # the first stream: exchange 0
    assert own == export(str(OPENAI), "sse", exchange=1).data
    assert own != export(str(OPENAI), "sse", exchange=2).data


def test_a_command_line_argument_that_is_not_utf8_is_recorded_escaped(tmp_path):
    """`streamscope record -- cmd $'\\xff'`: Python reads the byte as a lone surrogate,
    which no UTF-8 JSON holds; the header keeps it as its escape, and every face reads it."""
    from streamscope.recording.writer import RecordingWriter

    path = tmp_path / "argv.jsonl"
    writer = RecordingWriter(str(path), argv=["streamscope", "record", "--", "cat", "a\udcffb"])
    writer.close()
    header = orjson.loads(path.read_bytes().splitlines()[0])
    assert header["argv"][-1] == "a\\udcffb"
    for args in (["inspect"], ["inspect", "--json"]):
        assert run(*args, str(path)).exit_code == 0


@pytest.mark.parametrize("status", [5, 1000])
def test_a_har_or_cassette_status_no_http_response_has_skips_its_entry(tmp_path, status):
    """A recording refuses such a status: a HAR's entry (or a cassette's) holding one is
    skipped and said, as one without a status is (inspect raised a traceback on it)."""
    doc = har_of_recording(str(OPENAI), False)
    doc["log"]["entries"][0]["response"]["status"] = status
    path = tmp_path / "status.har"
    path.write_text(json.dumps(doc))
    for args in (["inspect"], ["inspect", "--json"]):
        result = run(*args, str(path))
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output
        assert (
            f"entries[0] skipped: its response status {status} is not an HTTP status from "
            "100 to 599"
        ) in result.output
    assert calls(path) == calls(OPENAI)[1:]
    cassette = json.loads((ROOT / "tests/fixtures/cassettes/vcrpy-tool-call.json").read_text())
    cassette["interactions"][0]["response"]["status"]["code"] = status
    path = tmp_path / "status.json"
    path.write_text(json.dumps(cassette))
    result = run("inspect", str(path))
    assert "Traceback" not in result.output
    assert f"interactions[0].response.status.code {status} is not a status code" in result.output


def test_har_headers_and_post_data_of_the_wrong_type_are_said_not_dropped(tmp_path):
    doc = har_of_recording(str(OPENAI), False)
    first, second = doc["log"]["entries"]
    first["request"]["headers"].append({"name": "x-n", "value": 5})
    first["response"]["headers"] = "text/event-stream"
    second["request"]["postData"] = {"mimeType": "application/json", "text": ["x"]}
    path = tmp_path / "types.har"
    path.write_text(json.dumps(doc))
    notes = analyze(path).notes
    assert (
        'entries[0] request.headers[2] {"name": "x-n", "value": 5} is not a {name, value} '
        "pair of strings: left out" in notes
    )
    assert (
        'entries[0] response.headers "text/event-stream" is not a list of headers: read as '
        "none" in notes
    )
    assert (
        'entries[1] request.postData.text ["x"] is not text: the request body is read as '
        "empty" in notes
    )
    assert calls(path) == calls(OPENAI)


def test_a_utf16_recording_that_grows_is_indexed_on(tmp_path):
    """--follow on a UTF-16 file: the lines appended are read from its new UTF-8 copy."""
    from streamscope.recording import RecordingIndex

    lines = OPENAI.read_bytes().splitlines(keepends=True)
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"\xff\xfe" + b"".join(lines[:5]).decode().encode("utf-16-le"))
    with RecordingIndex.open(path) as index:
        assert len(index) == 5
        with open(path, "ab") as f:
            f.write(b"".join(lines[5:]).decode().encode("utf-16-le"))
        assert index.refresh() == len(lines) - 5
        assert index.line(len(lines)).type == "end"


def test_a_pipe_is_read_once_and_whole(tmp_path):
    """A FIFO (or `/dev/stdin`, `<(cmd)`) can be read only once; the readers opened it
    three times: the first read its head and dropped the rest ("it begins 'reated\\\\":'"
    from the file's middle), and the next open waited for a writer that had gone."""
    sample = str(ROOT / "recordings" / "alibaba-empty-id.jsonl")
    data = Path(sample).read_bytes()
    fifo = str(tmp_path / "stream.fifo")
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: Path(fifo).write_bytes(data), daemon=True)
    writer.start()
    piped = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", "--json", fifo],
        capture_output=True,
        timeout=60,
    )
    writer.join(5)
    direct = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", "--json", sample], capture_output=True
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.replace(fifo.encode(), b"X") == direct.stdout.replace(sample.encode(), b"X")
    stdin = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", "/dev/stdin"],
        input=data,
        capture_output=True,
        timeout=60,
    )
    assert stdin.returncode == 0 and b"2 exchanges" in stdin.stdout, stdin.stderr
