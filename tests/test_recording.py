"""Recording format v1: writer, readers, redaction, migration."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from unittest.mock import ANY

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope import __version__
from streamscope.recording import (
    REDACTED,
    SCHEMA_VERSION,
    Chunk,
    End,
    Header,
    RecordingError,
    RecordingIndex,
    RecordingWriter,
    Request,
    Response,
    iter_raw,
    iter_records,
    redact_headers,
    redact_json_paths,
)
from streamscope.recording.reader import RecordingReader

URL = "http://upstream/v1/chat/completions"
SECRETS = {
    "Authorization": "Bearer sk-secret-authorization",
    "api-key": "secret-api-key",
    "X-API-KEY": "secret-x-api-key",
    "Cookie": "session=secret-cookie",
    "openai-organization": "org-secret-organization",
    "Proxy-Authorization": "Basic c2VjcmV0LXByb3h5",
}


def records(path) -> list:
    return [rec for _, rec in iter_records(path)]


def write_sample(path, chunks=(b"data: 1\n\n", b"data: [DONE]\n\n")) -> None:
    with RecordingWriter(path, argv=["streamscope", "record"]) as w:
        x = w.new_exchange()
        w.request(x, "POST", URL, [("content-type", "application/json")], b'{"a":1}', t_ns=1)
        w.response(x, 200, [("content-type", "text/event-stream")], t_ns=2)
        for i, c in enumerate(chunks):
            w.chunk(x, c, t_ns=3 + i)
        w.end(x, "complete", t_ns=100)


# -- round trip


def test_round_trip_every_record_type(tmp_path):
    path = tmp_path / "rec.jsonl"
    euro = "€".encode()  # 3 bytes: a read may split it
    reads = [b'data: {"x": "', euro[:1], euro[1:], b'"}\n\n', b"\xff\xfe junk", b""]
    with RecordingWriter(path, argv=["a", "b"]) as w:
        x = w.new_exchange()
        w.request(x, "POST", URL, [("A", "1"), ("a", "2"), ("A", "3")], b'{"m":"h\xc3\xa9"}')
        w.response(x, 200, [("content-type", "text/event-stream")])
        for r in reads:
            w.chunk(x, r)
        w.end(x, "upstream-error", "boom")
        y = w.new_exchange()
        w.request(y, "GET", URL, [], b"\x80binary")
        w.request(w.new_exchange(), "GET", URL, [], None)

    recs = records(path)
    header = recs[0]
    assert isinstance(header, Header)
    assert (header.schema_version, header.tool, header.argv) == (
        SCHEMA_VERSION,
        "streamscope",
        ["a", "b"],
    )
    assert header.tool_version == __version__ and header.created.endswith("Z")

    req = recs[1]
    assert isinstance(req, Request) and (req.exchange, req.method, req.url) == (1, "POST", URL)
    assert req.headers == [("A", "1"), ("a", "2"), ("A", "3")]  # order and duplicates kept
    assert req.body_bytes == b'{"m":"h\xc3\xa9"}' and req.json_body() == {"m": "hé"}
    assert isinstance(recs[2], Response) and recs[2].status == 200

    chunks = [r for r in recs if isinstance(r, Chunk)]
    assert [c.data_bytes for c in chunks] == reads
    assert chunks[1].data is None and chunks[1].data_b64 is not None  # split char -> base64
    assert chunks[0].data is not None and chunks[-1].data == ""
    assert all(a.t_ns <= b.t_ns for a, b in zip(chunks, chunks[1:], strict=False))

    end = recs[3 + len(reads)]
    assert isinstance(end, End) and (end.reason, end.error) == ("upstream-error", "boom")
    binary, empty = recs[-2], recs[-1]
    assert binary.body is None and binary.body_bytes == b"\x80binary" and binary.json_body() is None
    assert (empty.exchange, empty.body, empty.body_bytes) == (3, "", b"")

    # to_json / from_json are inverse, and lines start with "type" then "exchange".
    lines = path.read_bytes().splitlines()
    for rec, line in zip(recs, lines, strict=True):
        assert type(rec).from_json(orjson.loads(line)) == rec
        assert orjson.dumps(rec.to_json()) == line
    assert all(line.startswith(b'{"type":"') for line in lines)
    assert lines[2].startswith(b'{"type":"response","exchange":1,')


def test_iter_raw_yields_dicts(tmp_path):
    write_sample(tmp_path / "r.jsonl")
    raw = list(iter_raw(tmp_path / "r.jsonl"))
    assert [n for n, _ in raw] == [1, 2, 3, 4, 5, 6]
    assert [d["type"] for _, d in raw] == ["header", "request", "response", "chunk", "chunk", "end"]
    assert raw[3][1] == {"type": "chunk", "exchange": 1, "t_ns": 3, "data": "data: 1\n\n"}


def test_writer_refuses_to_overwrite(tmp_path):
    path = tmp_path / "r.jsonl"
    write_sample(path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        RecordingWriter(path)
    assert path.read_bytes() == before
    RecordingWriter(path, overwrite=True).close()
    assert len(path.read_bytes().splitlines()) == 1
    (tmp_path / "empty.jsonl").touch()
    RecordingWriter(tmp_path / "empty.jsonl").close()  # an empty file is fine


def test_writer_checks_reason_and_closed(tmp_path):
    w = RecordingWriter(tmp_path / "r.jsonl")
    with pytest.raises(ValueError):
        w.end(1, "finished")
    w.close()
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.chunk(1, b"x")


# -- redaction


@pytest.mark.parametrize("name", list(SECRETS))
def test_each_secret_header_is_redacted_case_insensitively(tmp_path, name):
    for spelling in (name, name.lower(), name.upper()):
        [(n, v)] = redact_headers([(spelling, SECRETS[name])])
        assert n == spelling
        if name.lower() == "authorization":
            assert v == "Bearer [REDACTED]"
        elif name.lower() == "proxy-authorization":
            assert v == "Basic [REDACTED]"
        else:
            assert v == REDACTED


def test_authorization_without_scheme_is_fully_redacted():
    assert redact_headers([("authorization", "sk-abc")]) == [("authorization", REDACTED)]
    assert redact_headers([("x-other", "kept")]) == [("x-other", "kept")]


def test_anthropic_headers_mask_the_account_and_keep_the_api_readable():
    sent = [
        ("x-api-key", "sk-ant-api03-secret"),
        ("anthropic-workspace-id", "wrkspc_secret"),
        ("anthropic-organization-id", "org-secret"),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "task-budgets-2026-03-13,prompt-caching-2024-07-31"),
        ("anthropic-ratelimit-input-tokens-remaining", "39000"),
        ("anthropic-priority-output-tokens-limit", "8000"),
        ("user-agent", "flask-restful/0.3 Anthropic/Python 2.15.0"),
    ]
    kept = dict(redact_headers(sent))
    assert [kept[k] for k, _ in sent[:3]] == [REDACTED] * 3
    assert [(k, kept[k]) for k, _ in sent[3:]] == sent[3:]  # not credentials: as sent


def test_secrets_never_reach_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    body = orjson.dumps({"messages": [{"role": "user", "content": "secret-prompt"}], "n": 1})
    with RecordingWriter(path, redact_json=["messages.*.content"]) as w:
        x = w.new_exchange()
        w.request(x, "POST", URL, list(SECRETS.items()), body)
        w.response(x, 200, [("Set-Cookie", "id=secret-set-cookie"), (b"x-raw", b"ok")])
    data = path.read_bytes()
    for secret in [*SECRETS.values(), "secret-set-cookie", "secret-prompt", "c2VjcmV0"]:
        assert secret.encode() not in data
    req, resp = records(path)[1:]
    assert req.json_body() == {"messages": [{"role": "user", "content": REDACTED}], "n": 1}
    assert dict(req.headers)["Authorization"] == "Bearer [REDACTED]"
    assert resp.headers == [("Set-Cookie", REDACTED), ("x-raw", "ok")]


def test_redact_false_keeps_headers(tmp_path):
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, redact=False) as w:
        w.request(w.new_exchange(), "POST", URL, list(SECRETS.items()), b"")
    assert records(path)[1].headers == list(SECRETS.items())


def test_redact_json_paths():
    body = (
        b'{"messages":[{"content":"a","role":"user"},{"content":[{"text":"b"}]}],'
        b'"tools":[{"function":{"name":"f","description":"d"}}],"big":1000000000000000000000000}'
    )  # the big int is beyond orjson: the redactor must still parse it
    paths = ["messages.*.content", "tools.0.function.description", "missing.path", "big.x"]
    out_bytes = redact_json_paths(body, paths)
    assert out_bytes.endswith(b'"big":1000000000000000000000000}')
    out = orjson.loads(out_bytes.replace(b"1000000000000000000000000", b"1"))
    assert [m["content"] for m in out["messages"]] == [REDACTED, REDACTED]
    assert out["messages"][0]["role"] == "user"
    assert out["tools"][0]["function"] == {"name": "f", "description": REDACTED}
    assert redact_json_paths(b"not json", ["a"]) == b"not json"
    assert redact_json_paths(b'{"a":1}', ["b"]) == b'{"a":1}'  # untouched when nothing matched
    assert redact_json_paths(b"\xff{", ["a"]) == b"\xff{"
    assert orjson.loads(redact_json_paths(b'{"a":{"b":1}}', ["*"])) == {"a": REDACTED}


# -- concurrency


def test_concurrent_writers_from_20_threads(tmp_path):
    path = tmp_path / "r.jsonl"
    per_thread = 300
    with RecordingWriter(path) as w:

        def run():
            x = w.new_exchange()
            w.request(x, "POST", URL, [("authorization", "Bearer k")], b"{}")
            w.response(x, 200, [])
            for i in range(per_thread):
                w.chunk(x, f"data: {x}-{i}\n\n".encode() + b"\xe2" * (i % 2))
            w.end(x, "complete")

        threads = [threading.Thread(target=run) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    data = path.read_bytes()
    assert data.endswith(b"\n")
    for line in data.split(b"\n")[:-1]:
        orjson.loads(line)  # only whole lines
    per_exchange: dict[int, list[bytes]] = {}
    for _, rec in iter_records(path):
        if isinstance(rec, Chunk):
            per_exchange.setdefault(rec.exchange, []).append(rec.data_bytes)
    assert sorted(per_exchange) == list(range(1, 21))
    for x, got in per_exchange.items():
        want = [f"data: {x}-{i}\n\n".encode() + b"\xe2" * (i % 2) for i in range(per_thread)]
        assert got == want
    idx = RecordingIndex.open(path)
    assert idx.exchanges() == list(range(1, 21))
    assert all(idx.exchange(x).end is not None for x in idx.exchanges())


# -- damaged files


def test_cut_off_last_line_is_tolerated(tmp_path):
    path = tmp_path / "r.jsonl"
    write_sample(path)
    whole = path.read_bytes()
    last_start = whole.rstrip(b"\n").rfind(b"\n") + 1
    for cut in range(last_start + 1, len(whole) - 1):  # every cut inside the last line
        path.write_bytes(whole[:cut])
        reader = iter_records(path)
        got = list(reader)
        assert [n for n, _ in got] == [1, 2, 3, 4, 5]
        assert (reader.stopped_at.line, reader.stopped_at.offset) == (6, last_start)
        assert str(reader.stopped_at) == (
            f"recording ends with a cut-off line 6 at byte {last_start} "
            "(the writer was interrupted)"
        )
        with RecordingIndex.open(path) as idx:
            assert len(idx) == 5 and idx.stopped_at == reader.stopped_at
            assert idx.exchange(1).end is None
            assert [idx.line(n) for n in range(1, 6)] == [r for _, r in got]
    # Cut exactly before the final newline: the line is still whole JSON, so it counts.
    path.write_bytes(whole[:-1])
    reader = iter_records(path)
    assert len(list(reader)) == 6 and reader.stopped_at is None


def test_cut_off_chunk_line_in_index(tmp_path):
    path = tmp_path / "r.jsonl"
    write_sample(path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]) + lines[4][:30])  # cut inside the 2nd chunk
    with RecordingIndex.open(path) as idx:
        assert idx.stopped_at.line == 5 and list(idx.exchange(1).chunks) == [4]


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (b'{"type":"chunk","exchange":1,"t_ns":5,"data":"x"', "not valid JSON"),
        (b"\x00\x01\x02\xff", "not valid JSON"),
        (b"", "not valid JSON"),
        # JSON, but deeper than a line is read: said so, not "not valid JSON"
        (
            b'{"type":"chunk","exchange":1,"t_ns":5,"data":"x","n":'
            + b"[" * 1100
            + b"]" * 1100
            + b"}",
            "JSON nested more than 1,024 levels deep",
        ),
        (b'{"type":"frame","exchange":1}', "unknown record type 'frame'"),
        (b'{"type":"end","exchange":1,"t_ns":5}', "field 'reason' is missing from the end line"),
        (b"{}", "field 'type' is missing"),  # (it said "is not a string (NoneType)")
        (b'{"type":null}', "field 'type' is not a string (a JSON null)"),
        (b'{"type":[1]}', "field 'type' is not a string (a JSON array)"),
        (b'{"type":{}}', "field 'type' is not a string (a JSON object)"),
        (
            b'{"type":"chunk","exchange":1,"t_ns":true,"data":""}',
            "field 't_ns' is not an integer (a JSON boolean)",
        ),
        (b'{"type":"chunk","exchange":1,"t_ns":5}', "exactly one of 'data' or 'data_b64'"),
        (
            b'{"type":"chunk","exchange":"1","t_ns":5,"data":""}',
            "field 'exchange' is not an integer (a JSON string)",
        ),
        (b'{"type":"chunk","exchange":1,"t_ns":5,"data_b64":"!!"}', "not valid base64"),
        (b'{"type":"header","schema_version":1}', "a second header line"),
        (b"[1, 2]", "not a JSON object"),
        # a line no request or response line opened its exchange for: it was dropped
        (
            b'{"type":"chunk","exchange":5,"t_ns":5,"data":"x"}',
            "a chunk line of exchange 5, which has no request or response line before it",
        ),
        (
            b'{"type":"end","exchange":7,"t_ns":5,"reason":"complete","error":null}',
            "an end line of exchange 7",
        ),
        (b"null", "not a JSON object"),  # (the index said it holds a lone surrogate)
        (b"true", "not a JSON object"),
        (b'"x"', "not a JSON object"),
    ],
)
def test_bad_line_in_the_middle(tmp_path, bad, what):
    path = tmp_path / "rec.jsonl"
    write_sample(path)
    lines = path.read_bytes().splitlines(keepends=True)
    offset = len(b"".join(lines[:3]))
    path.write_bytes(b"".join(lines[:3]) + bad + b"\n" + b"".join(lines[3:]))
    with pytest.raises(RecordingError) as err:
        list(iter_records(path))
    msg = str(err.value)
    assert msg.startswith(f"{path}: line 4 (byte {offset}): ") and what in msg
    assert "\n" not in msg and (err.value.line, err.value.offset) == (4, offset)
    if "integer" not in what and "base64" not in what:  # iter_raw checks keys, not values
        with pytest.raises(RecordingError, match="line 4"):
            list(iter_raw(path))
    # The index finds it during the scan, or (chunk lines are not parsed) when reading it.
    with (
        pytest.raises(RecordingError, match=r"line 4 \(byte") as err,
        RecordingIndex.open(path) as idx,
    ):
        idx.line(4)
    assert what in str(err.value)


@pytest.mark.parametrize("kind, copied", [("request", 1), ("response", 2)])
def test_a_second_request_or_response_line_of_an_exchange_is_a_bad_line(tmp_path, kind, copied):
    # two recordings spliced: inspect read on and dropped frames without a word; only the
    # index (replay, serve) said it
    path = tmp_path / "rec.jsonl"
    write_sample(path)
    lines = path.read_bytes().splitlines(keepends=True)
    assert orjson.loads(lines[copied])["type"] == kind
    path.write_bytes(b"".join(lines[:3]) + lines[copied] + b"".join(lines[3:]))
    said = f"line 4 (byte {len(b''.join(lines[:3]))}): a second {kind} line for exchange 1"
    said += f" (first on line {copied + 1})"
    for read in (lambda: list(iter_records(path)), lambda: list(iter_raw(path))):
        with pytest.raises(RecordingError) as err:
            read()
        assert str(err.value) == f"{path}: {said}"
    with pytest.raises(RecordingError) as err, RecordingIndex.open(path):
        pass
    assert str(err.value) == f"{path}: {said}"
    tolerant = RecordingReader(path, tolerant=True)  # (--follow's: the line skipped, said)
    assert len(list(tolerant)) == len(lines) and [str(e) for e in tolerant.errors] == [
        f"{path}: {said}"
    ]


def test_missing_file(tmp_path):
    for open_ in (iter_records, iter_raw, RecordingIndex.open):
        with pytest.raises(RecordingError, match="nope.jsonl: cannot open"):
            open_(tmp_path / "nope.jsonl")


def test_not_a_recording(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 50)
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"type":"chunk","exchange":1,"t_ns":0,"data":""}\n')
    cut_header = tmp_path / "cut.jsonl"
    cut_header.write_bytes(b'{"type":"header","schema_ver')
    unversioned = tmp_path / "unversioned.jsonl"
    unversioned.write_bytes(b'{"type":"header","tool":"streamscope"}\n')
    cases = [(junk, r"line 1 \(byte 0\): not valid JSON"), (empty, "empty file")]
    cases += [(other, "not a streamscope recording"), (cut_header, "not valid JSON")]
    cases += [(unversioned, r"line 1 \(byte 0\): the header line has no schema_version")]
    for path, what in cases:
        for open_ in (iter_records, RecordingIndex.open):
            with pytest.raises(RecordingError, match=what) as err:
                list(open_(path)) if open_ is iter_records else open_(path)
            assert "\n" not in str(err.value) and str(err.value).startswith(str(path))


@pytest.mark.parametrize(
    "spelt", [rb'"typ\u0065":"end"', rb'"\u0065xchang\u0065":2', rb'"\u0065xchange" : 2']
)
def test_a_key_spelt_with_an_escape_in_a_run_of_chunk_lines_is_given_twice(tmp_path, spelt):
    """The index takes a run of one exchange's chunk lines without parsing them, counting
    "type" and "exchange" as bytes: a key spelt with an escape, the same key to JSON,
    slipped through, and the line was read as the prefix's exchange by one face, the
    parser's by another."""
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as w:
        w.request(1, "POST", URL, [], b"{}")
        w.response(1, 200, [])
        for i in range(600):  # (runs of chunk lines: the scan's common case)
            w.chunk(1, [b"data: 1\n\n", b'data: {"n": "\\u00e9"}\n\n', b"data: one"][i % 3])
    lines = path.read_bytes().split(b"\n")
    lines[400] = lines[400].replace(b'"t_ns"', spelt + b',"t_ns"', 1)
    path.write_bytes(b"\n".join(lines))
    key = "type" if b"typ" in spelt else "exchange"
    offset = sum(len(x) + 1 for x in lines[:400])
    want = f"{path}: line 401 (byte {offset}): the key '{key}' is given twice"
    for check in (False, True):
        with RecordingIndex.open(path, tolerant=True, check=check) as index:
            assert [str(e).split(" (JSON")[0] for e in index.errors] == [want]
            assert list(index.exchange(1).chunks) == [n for n in range(4, 604) if n != 401]
        with pytest.raises(RecordingError, match=want.replace("(", r"\(").replace(")", r"\)")):
            RecordingIndex.open(path, check=check)
    with pytest.raises(RecordingError, match="line 401 .*given twice"):
        list(iter_raw(path))


def test_duplicate_request_line_in_index(tmp_path):
    path = tmp_path / "r.jsonl"
    write_sample(path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines) + lines[1])
    with pytest.raises(RecordingError, match="line 7 .*second request line for exchange 1"):
        RecordingIndex.open(path)


# -- schema versions

V0 = b"""\
{"kind":"header","version":0,"tool":"streamscope","tool_version":"0.0.1","created":"2025-01-01T00:00:00Z"}
{"kind":"request","exchange":1,"t_us":5,"method":"POST","url":"http://u/v1","headers":{"a":"1"},"body":"{}"}
{"kind":"response","exchange":1,"t_us":9,"status":200,"headers":{"content-type":"text/event-stream"}}
{"kind":"chunk","exchange":1,"t_us":12,"text":"data: 1\\n\\n"}
{"kind":"end","exchange":1,"t_us":40,"reason":"complete"}
"""


def test_v0_recording_is_migrated(tmp_path):
    path = tmp_path / "v0.jsonl"
    path.write_bytes(V0)
    want = [
        Header(created="2025-01-01T00:00:00Z", argv=None, tool_version="0.0.1"),
        Request(1, 5000, "POST", "http://u/v1", [("a", "1")], "{}"),
        Response(1, 9000, 200, [("content-type", "text/event-stream")]),
        Chunk(1, 12000, "data: 1\n\n"),
        End(1, 40000, "complete", None),
    ]
    assert records(path) == want
    assert [d["type"] for _, d in iter_raw(path)] == [
        "header",
        "request",
        "response",
        "chunk",
        "end",
    ]
    with RecordingIndex.open(path) as idx:
        assert idx.version == 0 and idx.header.schema_version == SCHEMA_VERSION
        assert [idx.line(n) for n in range(1, 6)] == want
        assert list(idx.chunks(1)) == [want[3]]


def test_v0_line_that_cannot_be_migrated(tmp_path):
    path = tmp_path / "v0.jsonl"
    path.write_bytes(V0 + b'{"kind":"chunk","exchange":1}\n')
    with pytest.raises(RecordingError, match="line 6 .*cannot migrate") as err:
        list(iter_records(path))
    # in JSON's words, not Python's (it said "(KeyError: 't_us')")
    assert str(err.value).endswith("line: field 't_us' is missing")


V0_HEADER = orjson.loads(V0.splitlines()[0])


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"version": "0"}, """the header's version "0" is not an integer"""),
        ({"version": False}, "the header's version false is not an integer"),
        ({"version": 0.0}, "the header's version 0.0 is not an integer"),
        ({"version": 1}, 'the header\'s version 1 is not 0, the one version with "kind"'),
        ({"version": None}, "the header's version null is not an integer"),
        ({"created": 5}, "field 'created' is not a string (a JSON number)"),
        ({"created": None}, "field 'created' is not a string (a JSON null)"),
        ({"tool": []}, "field 'tool' is not a string (a JSON array)"),
        ({"tool_version": {}}, "field 'tool_version' is not a string (a JSON object)"),
    ],
    ids=lambda v: None if isinstance(v, str) else repr(v),
)
def test_a_v0_header_field_of_the_wrong_type_is_said_not_no_header(tmp_path, change, said):
    """A version 0 header whose version was not the integer 0 was "no header line" (or,
    false, read as version 0); each field of it is said as a current header's is."""
    path = tmp_path / "v0.jsonl"
    path.write_bytes(orjson.dumps(V0_HEADER | change) + b"\n" + V0.split(b"\n", 1)[1])
    for open_ in (iter_records, RecordingIndex.open):
        with pytest.raises(RecordingError) as err:
            open_(path)
        assert str(err.value) == f"{path}: line 1 (byte 0): {said}"


def test_inspect_reads_a_v0_recording_and_names_a_v0_header_fault(tmp_path):
    """Readers upgrade an older file as they read it (docs/recording-format.md), but
    inspect told a v0 file by its first line's "schema_version" and refused it: "not a
    streamscope recording"."""
    from click.testing import CliRunner

    from streamscope.cli import main

    path = tmp_path / "v0.jsonl"
    path.write_bytes(V0)
    done = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    assert done.exit_code == 0, done.output
    doc = orjson.loads(done.stdout)
    assert doc["format"] == "recording" and [s["frames"] for s in doc["streams"]] == [1]
    path.write_bytes(orjson.dumps(V0_HEADER | {"version": "0"}) + b"\n" + V0.split(b"\n", 1)[1])
    done = CliRunner().invoke(main, ["inspect", str(path)])
    assert done.exit_code == 2
    assert (
        done.output
        == f"""streamscope: {path}: line 1 (byte 0): the header's version "0" is not an integer\n"""
    )


@pytest.mark.parametrize("key", ["version", "created"])
def test_a_v0_header_without_a_field_says_which(tmp_path, key):
    path = tmp_path / "v0.jsonl"
    header = {k: v for k, v in V0_HEADER.items() if k != key}
    path.write_bytes(orjson.dumps(header) + b"\n" + V0.split(b"\n", 1)[1])
    said = {
        "version": "the header line has no version",
        "created": "field 'created' is missing from the header line",
    }[key]
    for open_ in (iter_records, RecordingIndex.open):
        with pytest.raises(RecordingError) as err:
            open_(path)
        assert str(err.value) == f"{path}: line 1 (byte 0): {said}"


def test_a_current_header_declaring_version_0_is_said_so(tmp_path):
    """Version 0's header has "kind": a "type" header declaring 0 said a header field was
    missing ("field 'exchange' is missing from the header line")."""
    from click.testing import CliRunner

    from streamscope.cli import main

    path = tmp_path / "r.jsonl"
    write_sample(path)
    path.write_bytes(path.read_bytes().replace(b'"schema_version":2', b'"schema_version":0', 1))
    said = (
        f'{path}: line 1 (byte 0): schema_version 0 is unknown for a header with "type" '
        """(version 0's header has "kind" and "version")"""
    )
    for args in (["inspect"], ["inspect", "--json"]):
        result = CliRunner().invoke(main, [*args, str(path)])
        assert (result.exit_code, result.output) == (2, f"streamscope: {said}\n")


def test_newer_schema_version_is_refused(tmp_path):
    path = tmp_path / "future.jsonl"
    write_sample(path)
    data = path.read_bytes().replace(b'"schema_version":2', b'"schema_version":7', 1)
    path.write_bytes(data)
    for open_ in (iter_records, RecordingIndex.open):
        with pytest.raises(RecordingError, match="schema_version 7 is newer .*upgrade streamscope"):
            open_(path)


# -- random access


def test_index_random_access_equals_sequential_read(tmp_path):
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as w:
        xs = [w.new_exchange() for _ in range(4)]
        for x in xs:
            w.request(x, "POST", URL, [], b"{}")
        for i in range(50):  # interleaved exchanges, some base64 chunks
            x = xs[i % 4]
            if i == 7:
                w.response(x, 200, [])
            w.chunk(x, f"data: {i}\n\n".encode() + (b"\xc3" if i % 5 == 0 else b""))
        for x in xs[:3]:
            w.end(x, "complete")
    seq = list(iter_records(path))
    progress = []
    with RecordingIndex.open(
        path, progress=lambda done, total: progress.append((done, total))
    ) as idx:
        assert len(idx) == len(seq)
        assert [idx.line(n) for n, _ in seq] == [rec for _, rec in seq]
        assert [idx.line(n) for n, _ in reversed(seq)] == [rec for _, rec in reversed(seq)]
        assert idx.header == seq[0][1] and idx.exchanges() == xs
        for x in xs:
            assert list(idx.chunks(x)) == [
                r for _, r in seq if isinstance(r, Chunk) and r.exchange == x
            ]
            e = idx.exchange(x)
            assert isinstance(idx.line(e.request), Request)
        last = idx.exchange(xs[3])
        assert last.end is None and idx.line(last.response) == Response(xs[3], ANY, 200, [])
        with pytest.raises(IndexError):
            idx.line(len(seq) + 1)
    size = path.stat().st_size
    assert progress and progress[-1] == (size, size)


# -- property


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=64) | st.text(max_size=20).map(str.encode), max_size=30))
def test_any_chunks_read_back_byte_identical(reads):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.jsonl"
        with RecordingWriter(path) as w:
            w.response(1, 200, [])  # (a chunk line comes after the line opening its exchange)
            for r in reads:
                w.chunk(1, r)
        assert [r.data_bytes for _, r in iter_records(path) if isinstance(r, Chunk)] == reads
        with RecordingIndex.open(path) as idx:
            got = [c.data_bytes for c in idx.chunks(1)] if reads else []
            assert got == reads
        assert os.path.getsize(path) == len(path.read_bytes())


def test_index_refresh_reads_only_the_appended_bytes(tmp_path, monkeypatch):
    """--follow: a growing recording is indexed from where the last scan stopped, a line
    cut off mid-write is read again once whole, and the new chunks join their exchange."""
    import streamscope.recording.reader as reader

    path = tmp_path / "live.jsonl"
    w = RecordingWriter(path)
    ex = w.new_exchange()
    w.request(ex, "POST", URL, [], b"{}")
    w.response(ex, 200, [("content-type", "text/event-stream")])
    w.chunk(ex, b"data: 1\n\n")
    index = RecordingIndex.open(path)
    assert list(index.exchange(ex).chunks) == [4] and index.exchange(ex).end is None
    size = os.path.getsize(path)

    reads: list[int] = []  # where each scan of the file starts reading
    opened = reader._open

    def spy(p: str):
        f = opened(p)
        real_seek = f.seek
        f.seek = lambda at, *a: (reads.append(at), real_seek(at, *a))[1]  # type: ignore[method-assign]
        return f

    monkeypatch.setattr(reader, "_open", spy)
    w.chunk(ex, b"data: 2\n\n")
    line = orjson.dumps(
        {"type": "end", "exchange": ex, "t_ns": 9, "reason": "complete", "error": None}
    )
    with open(path, "ab") as f:  # the end line, cut off mid-write
        f.write(line[:10])
    assert index.refresh() == 1 and reads == [size]
    assert index.stopped_at is not None and index.exchange(ex).end is None
    with open(path, "ab") as f:
        f.write(line[10:] + b"\n")
    assert index.refresh() == 1
    assert index.stopped_at is None and index.exchange(ex).end == 6
    assert list(index.exchange(ex).chunks) == [4, 5]
    assert index.line(5).data_bytes == b"data: 2\n\n" and index.line(6).reason == "complete"
    assert index.refresh() == 0
    w.close()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(2, 41), max_size=40),
    st.integers(0, 5),
    st.sampled_from([64, 300, 1 << 22]),
)
def test_raw_lines_reads_in_blocks_what_raw_line_reads(numbers, start, block):
    # the replay reads a stream's chunk lines in blocks: the same dicts as one by one,
    # whatever the order of the lines and wherever a block ends
    import streamscope.recording.reader as reader

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        write_sample(path, chunks=[f"data: {i}\n\n".encode() for i in range(37)])
        numbers = sorted(numbers) if start % 2 else numbers  # runs of neighbours, or not
        saved, reader.BLOCK = reader.BLOCK, block
        try:
            with RecordingIndex.open(path) as idx:
                got = list(idx.raw_lines(numbers, start, len(numbers)))
                assert got == [idx.raw_line(n) for n in numbers[start:]]
        finally:
            reader.BLOCK = saved


def test_raw_lines_says_where_a_line_is_bad_as_raw_line_does(tmp_path):
    path = tmp_path / "r.jsonl"
    write_sample(path, chunks=[b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"])
    lines = path.read_bytes().splitlines(keepends=True)
    lines[4] = b'{"type":"chunk","exchange":1,"t_ns":5,"data":"x"}}\n'  # the 2nd chunk, line 5
    path.write_bytes(b"".join(lines))
    with RecordingIndex.open(path, tolerant=True) as idx:
        chunks = list(idx.exchange(1).chunks)
        with pytest.raises(RecordingError) as one:
            idx.raw_line(chunks[1])
        got = idx.raw_lines(chunks, 0, len(chunks))
        assert next(got)["data"] == "data: 1\n\n"
        with pytest.raises(RecordingError) as block:
            next(got)
        assert str(block.value) == str(one.value) and "line 5" in str(block.value)


def _index_state(index) -> tuple:
    exchanges = {
        n: (e.request, e.response, e.end, list(e.chunks))
        for n in index.exchanges()
        for e in [index.exchange(n)]
    }
    errors = [str(e) for e in index.errors]
    return list(index._offsets), exchanges, errors, index.stopped_at


_LINE = st.one_of(
    st.tuples(st.just("chunk"), st.integers(1, 3)),
    st.tuples(
        st.sampled_from(["request", "response", "end", "junk", "badchunk"]), st.integers(1, 3)
    ),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.tuples(st.just("chunk"), st.integers(1, 3)), _LINE), max_size=60),
    st.sampled_from([b"", b'{"type":"chunk","exc', b'{"type":"end"}']),
    st.integers(0, 100),
)
def test_the_index_reads_runs_of_chunks_at_once_as_line_by_line(kinds, tail, cut):
    """Runs of one exchange's chunk lines are indexed in bulk: the same offsets, line
    numbers, errors and cut-off line as the line-by-line scan, read at once or grown;
    with `check` (every line parsed, as the replay and export scan), the same errors."""
    from streamscope.recording import reader

    lines = [
        (Path(__file__).parent.parent / "recordings/buggy-agent-uuid.jsonl")
        .read_bytes()
        .split(b"\n", 1)[0]
    ]
    for kind, x in kinds:
        if kind == "chunk":
            lines.append(b'{"type":"chunk","exchange":%d,"t_ns":1,"data":"a"}' % x)
        elif kind == "badchunk":  # (its prefix a chunk line's: the check parses it)
            lines.append(b'{"type":"chunk","exchange":%d,"t_ns":1,"data":5}' % x)
        elif kind == "request":
            lines.append(
                orjson.dumps(
                    {"type": "request", "exchange": x, "t_ns": 0, "method": "POST", "url": "u"}
                    | {"headers": [], "body": ""}
                )
            )
        elif kind == "response":
            lines.append(
                orjson.dumps(
                    {"type": "response", "exchange": x, "t_ns": 0, "status": 200, "headers": []}
                )
            )
        elif kind == "end":
            lines.append(
                orjson.dumps({"type": "end", "exchange": x, "t_ns": 2, "reason": "complete"})
            )
        else:
            lines.append(b"not json")
    raw = b"\n".join(lines) + b"\n" + tail
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.jsonl")
        Path(path).write_bytes(raw)
        for check in (False, True):
            states = []
            for bulk in (True, False):
                with pytest.MonkeyPatch.context() as m:
                    m.setattr(reader, "_RUN", 3)
                    if not bulk:
                        m.setattr(reader, "_one_exchange_chunks", lambda *a: False)
                    whole = reader.RecordingIndex.open(path, tolerant=True, check=check)
                    Path(path).write_bytes(raw[: len(lines[0]) + 1 + cut])
                    grown = reader.RecordingIndex.open(path, tolerant=True, check=check)
                    Path(path).write_bytes(raw)
                    grown.refresh()
                    states.append((_index_state(whole), _index_state(grown)))
                    whole.close()
                    grown.close()
            assert states[0] == states[1]
            assert states[0][0][:3] == states[0][1][:3]  # grown or whole: the same index


def test_redact_json_counts_what_it_replaced_and_keeps_what_holds_nothing(tmp_path):
    """A null content (a tool-call message) stays null: "[REDACTED]" would say the request
    sent text. The count and inspect's note say the fields redacted, apart from secrets."""
    from click.testing import CliRunner

    from streamscope.cli import main

    body = orjson.dumps(
        {
            "messages": [
                {"role": "user", "content": "my secret plan"},
                {"role": "assistant", "content": None, "tool_calls": []},
                {"role": "tool", "content": ""},
                {"role": "user", "content": [{"type": "text", "text": "b"}]},
                {"role": "user", "content": []},
                {"role": "user", "content": False},
            ],
            "api_key": "sk-abcdefghijklmnop",
        }
    )
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, redact_json=["messages.*.content"]) as w:
        w.request(w.new_exchange(), "POST", URL, [("content-type", "application/json")], body)
    header, request = records(path)[:2]
    sent = orjson.loads(request.body)
    assert [m["content"] for m in sent["messages"]] == [REDACTED, None, "", REDACTED, [], REDACTED]
    assert request.redacted == 3 and request.masked == 1
    assert "messages.*.content" in header.notes[0]
    done = CliRunner().invoke(main, ["inspect", str(path)])
    said = " ".join(done.output.split())
    assert "1 value masked (secrets" in said
    assert "3 request body values redacted by path (--redact-json)" in said
    done = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    report = orjson.loads(done.output)
    assert (report["masked"], report["redacted"]) == (1, 3)


def test_a_line_of_an_exchange_nothing_opened_is_skipped_and_said_when_tolerant(tmp_path):
    """replay opens what it can: the line is skipped and said, the rest of the exchange
    read (a chunk line edited to exchange 5 of a file with exchanges 1 and 2)."""
    path = tmp_path / "rec.jsonl"
    write_sample(path)
    lines = path.read_bytes().splitlines(keepends=True)
    chunk = next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"chunk"'))
    lines[chunk] = lines[chunk].replace(b'"exchange":1,', b'"exchange":5,', 1)
    path.write_bytes(b"".join(lines))
    with RecordingIndex.open(path, tolerant=True) as idx:
        assert idx.exchanges() == [1]
        assert [e.line for e in idx.errors] == [chunk + 1]
        assert "exchange 5, which has no request or response line" in str(idx.errors[0])
        assert chunk + 1 not in idx.exchange(1).chunks
    reader = iter_raw(path, tolerant=True)
    assert chunk + 1 not in [n for n, _ in reader] and len(reader.errors) == 1
