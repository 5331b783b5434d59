"""Request bodies a client compressed (Codex's `enable_request_compression` sends zstd):
relayed as they came, read as they decode, masked and redacted by path in what they
decode to, and a body that cannot be decoded is a finding naming its coding."""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from collections.abc import Iterator

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.core.codings import decode_body, request_body
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter, iter_records
from streamscope.recording.format import Request
from streamscope.recording.mask import WITHHELD, Masking, mask_request

from .encoded import Encoder, decode, encode
from .responses_stream import CALL_ID, MODEL, QUESTION, TOOLS, follow_up

CONTENT = "What's the weather in Paris?"  # QUESTION's: never in clear once redacted
KEY = "sk-proj-s3cr3tv4lu3inajsonfield0123"


def _turns() -> list[dict]:
    """A Responses tool loop as an agent sends it: the question, then the call's output."""
    first = {"model": MODEL, "stream": True, "input": QUESTION, "tools": TOOLS}
    return [first, {**first, "input": follow_up()}]


@contextlib.contextmanager
def recorder(upstream, path, **options) -> Iterator[str]:
    """The recording proxy (`record`'s) in front of the stand-in, writing `path`."""
    with RecordingWriter(path, **options) as writer:
        server = ProxyServer(Upstream.parse(upstream.url), writer, timeout=30)
        server.start()
        try:
            yield server.base_url
        finally:
            server.stop()


def _post(base: str, body: bytes, coding: str) -> httpx.Response:
    headers = {"content-type": "application/json", "authorization": "Bearer sk-test-0000"}
    if coding:
        headers["content-encoding"] = coding
    with httpx.Client(timeout=20) as client:
        r = client.post(base + "/responses", content=body, headers=headers)
        r.read()
        return r


def _requests(path) -> list[Request]:
    return [r for _, r in iter_records(path) if isinstance(r, Request)]


def _post_loop(upstream, base: str, coding: str) -> list[bytes]:
    """Both turns, compressed in `coding`; what the client sent (the upstream must get it)."""
    sent = []
    for turn in _turns():
        body = encode(coding, orjson.dumps(turn))
        seen = len(upstream.raw)
        assert _post(base, body, coding).status_code == 200
        assert upstream.raw[seen:] == [body]  # relayed to the byte
        sent.append(body)
    return sent


def _read_whole(analysis) -> None:
    """The loop read as its requests decode: model, tools, and the contract checked."""
    first = analysis.exchanges[0]
    assert first.model == MODEL
    assert [t["name"] for t in first.tools] == ["get_weather"]  # type: ignore[index]
    assert analysis.compared == 1 and analysis.contract == []
    assert [c.id for c in analysis.streams[0].tool_calls] == [CALL_ID]


@pytest.mark.slow
def test_a_zstd_request_is_read_and_redact_json_leaves_no_content_in_clear(tmp_path, upstream):
    path = tmp_path / "codex.jsonl"
    notes: list[str] = []
    with recorder(upstream, path, redact_json=["input.*.content"], on_note=notes.append) as base:
        sent = _post_loop(upstream, base, "zstd")
    _read_whole(analyze(path))
    from streamscope.scan import analyze_file

    assert [r.model for r in analyze_file(path).exchanges] == [MODEL, MODEL]  # scan's too
    raw = path.read_bytes()
    assert CONTENT.encode() not in raw and notes == []
    for request in _requests(path):
        # redaction changed what it decodes to: kept decoded, and said to be
        assert request.decoded == ["zstd"]
        body = request.body_bytes
        assert CONTENT.encode() not in body and b'"content":"[REDACTED]"' in body
        assert dict(request.headers)["content-encoding"] == "zstd"  # as it was sent
    for line in raw.splitlines():  # nothing in the file decodes to the content either
        d = json.loads(line)
        if "body_b64" in d:
            data = base64.b64decode(d["body_b64"])
            assert CONTENT.encode() not in decode_body(["zstd"], data).data
    assert sent and CONTENT.encode() in decode("zstd", sent[0])  # (the client sent it)
    from streamscope.cli import main

    with pytest.raises(SystemExit) as done:
        main(["inspect", str(path)])
    assert done.value.code == 0


@pytest.mark.slow
@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd, gzip"])
def test_a_compressed_request_with_nothing_to_mask_is_kept_as_sent(tmp_path, upstream, coding):
    path = tmp_path / "plain.jsonl"
    with recorder(upstream, path) as base:
        sent = _post_loop(upstream, base, coding)
    requests = _requests(path)
    assert [r.body_bytes for r in requests] == sent  # the client's bytes, not decoded
    assert [r.decoded for r in requests] == [None, None]
    _read_whole(analyze(path))


@pytest.mark.slow
def test_a_key_in_a_compressed_body_is_masked_in_what_it_decodes_to(tmp_path, upstream):
    path = tmp_path / "key.jsonl"
    body = {**_turns()[0], "api_key": KEY}
    with recorder(upstream, path) as base:
        sent = encode("gzip", orjson.dumps(body))
        assert _post(base, sent, "gzip").status_code == 200
        assert upstream.raw[-1] == sent  # the upstream gets the key, as the client sent it
    raw = path.read_bytes()
    (request,) = _requests(path)
    assert request.decoded == ["gzip"] and request.masked >= 1
    assert KEY.encode() not in raw and KEY.encode() not in request.body_bytes
    assert json.loads(request.body_bytes)["input"] == QUESTION  # the rest as sent
    assert analyze(path).exchanges[0].model == MODEL


@pytest.mark.slow
def test_an_undecodable_request_body_is_a_finding_naming_its_coding(tmp_path, upstream):
    path = tmp_path / "cut.jsonl"
    notes: list[str] = []
    cut = encode("zstd", orjson.dumps(_turns()[0]))[:-6]
    with recorder(upstream, path, redact_json=["input.*.content"], on_note=notes.append) as base:
        _post(base, cut, "zstd")
        _post(base, b"\x00\x01 not snappy", "snappy")
        assert upstream.raw[-2] == cut  # relayed as it came all the same
    first, second = _requests(path)
    # --redact-json cannot read it: withheld (it may decode in part), and said
    assert first.body_bytes == WITHHELD and CONTENT.encode() not in path.read_bytes()
    assert len(notes) == 2 and "zstd" in notes[0] and "'snappy'" in notes[1]
    analysis = analyze(path)
    found = [(f.exchange, f.kind, f.severity) for f in analysis.contract]
    from streamscope.scan import analyze_file

    assert [(r.exchange, r.kind) for r in analyze_file(path).contract] == [
        (1, "request-undecodable"),
        (2, "request-undecodable"),
    ]
    assert found == [(1, "request-undecodable", "warning"), (2, "request-undecodable", "warning")]
    assert "Content-Encoding zstd cannot be decoded" in analysis.contract[0].message
    assert "'snappy'" in analysis.contract[1].message


def test_inspect_says_a_cut_request_body_in_text_and_json(tmp_path, capsys):
    path = tmp_path / "cut.jsonl"
    body = encode("gzip", orjson.dumps(_turns()[0]))
    with RecordingWriter(path) as w:  # the recorder's writer, without a network
        w.request(1, "POST", "https://api.openai.com/v1/responses", _gz(), body[:-9])
        w.response(1, 400, [("content-type", "application/json")])
        w.chunk(1, b'{"error":{"message":"bad gzip"}}')
        w.end(1, "complete", None)
    from streamscope.cli import main

    said = []
    for args in (["inspect", str(path)], ["inspect", "--json", str(path)]):
        with pytest.raises(SystemExit):
            main(args)
        said.append(capsys.readouterr().out)
    text, report = said
    assert "request-undecodable" in text and "Content-Encoding gzip" in text
    finding = json.loads(report)["contract"][0]
    assert finding["kind"] == "request-undecodable" and "gzip" in finding["message"]


def _gz() -> list[tuple[str, str]]:
    return [("content-type", "application/json"), ("content-encoding", "gzip")]


def test_a_body_that_decodes_past_the_limit_is_a_failure_not_memory():
    bomb = encode("gzip", b"0" * (4 << 20))  # 4 MiB of zeros in a few KB
    got = decode_body(["gzip"], bomb, limit=1 << 20)
    assert got.failure is not None and got.data == bomb  # read as not decoded
    assert "more than 1048576 bytes" in got.describe() and "gzip" in got.describe()
    ratio = encode("zstd", b"0" * (8 << 20))  # past 1000:1 of what was fed: stopped there
    assert "decompression bomb" in decode_body(["zstd"], ratio).describe()


def test_a_body_kept_decoded_is_not_decoded_again():
    data = orjson.dumps(_turns()[0])
    assert request_body([("content-encoding", "br")], data, stored=["br"]).json()["model"] == MODEL


def _compressed(body: bytes, codings: list[str], cuts: list[int]) -> bytes:
    """`body` in each coding over the last, each flushed at the cuts (as a client that
    streams its upload compresses it)."""
    for coding in codings:
        enc, at, pieces = Encoder(coding), 0, []
        for cut in sorted({min(c, len(body)) for c in cuts}):
            pieces.append(enc.piece(body[at:cut]))
            at = cut
        body = b"".join(pieces) + enc.piece(body[at:], last=True)
    return body


CODING_STACKS = st.lists(st.sampled_from(["gzip", "deflate", "br", "zstd"]), min_size=1, max_size=3)
URL = "https://api.openai.com/v1/responses"


@settings(max_examples=25, deadline=None)
@given(codings=CODING_STACKS, cuts=st.lists(st.integers(0, 400), max_size=6), key=st.booleans())
def test_what_a_compressed_body_is_recorded_as_decodes_to_the_plain_bodys(codings, cuts, key):
    """mask(decode(sent)) is what is recorded: the same as the plain body's record."""
    plain = orjson.dumps({**_turns()[1], **({"api_key": KEY} if key else {})})
    body = _compressed(plain, codings, cuts)
    headers = [("content-type", "application/json"), ("content-encoding", ", ".join(codings))]
    paths = ["input.*.content"]
    got = mask_request(Masking(), 1, URL, headers, body, redact_json=paths)
    want = mask_request(Masking(), 1, URL, headers[:1], plain, redact_json=paths)
    assert got.decoded == codings and got.body == want.body and got.masked == want.masked
    assert KEY.encode() not in got.body and CONTENT.encode() not in got.body
    # not redacted: the bytes as sent, unless a key was masked in what they decode to
    kept = mask_request(Masking(), 1, URL, headers, body)
    masked = mask_request(Masking(), 1, URL, headers[:1], plain).body
    assert (kept.body, kept.decoded) == ((masked, codings) if key else (body, None))


def _recorded_loop(path, coding: str) -> None:
    """The tool loop as the recorder keeps it, each request compressed in `coding`."""
    from .responses_stream import events_for

    with RecordingWriter(path) as w:
        for turn in _turns():
            ex = w.new_exchange()
            headers = [("content-type", "application/json"), ("content-encoding", coding)]
            w.request(ex, "POST", URL, headers, encode(coding, orjson.dumps(turn)))
            w.response(ex, 200, [("content-type", "text/event-stream")])
            for data in events_for(turn):
                w.chunk(ex, data)
            w.end(ex, "complete", None)


def test_playback_matches_a_compressed_request_by_what_it_decodes_to(tmp_path):
    from streamscope.playback import playback_transport

    path = tmp_path / "loop.jsonl"
    _recorded_loop(path, "zstd")
    transport = playback_transport(path)
    headers = {"content-type": "application/json", "content-encoding": "br"}
    with httpx.Client(transport=transport, base_url="http://provider.test/v1") as client:
        second = encode("br", orjson.dumps(_turns()[1]))  # in another coding: its body matters
        got = client.post("/responses", content=second, headers=headers)
        assert got.status_code == 200 and "It's 14" in got.text  # turn 2's answer, not turn 1's
        cut = client.post("/responses", content=second[:-4], headers=headers)
    assert [s.entry.exchange if s else None for s in transport.selections] == [2, None]
    assert cut.status_code == 400 and "Content-Encoding br cannot be decoded" in cut.text


@pytest.mark.parametrize("kept", ["decoded", "compressed"])
def test_a_har_request_body_is_read_as_it_decodes_and_exported_masked(tmp_path, kept):
    """A HAR keeps bodies decoded (HAR 1.2), though some tools keep the bytes as sent."""
    from streamscope.export.fixtures import export

    from .test_har import entry, har_of_recording, write

    path = tmp_path / "loop.jsonl"
    _recorded_loop(path, "identity")  # (its bodies plain: the HAR's are made below)
    doc = har_of_recording(str(path), b64=False)
    for e, turn in zip(doc["log"]["entries"], _turns(), strict=True):
        request = e["request"]
        plain = orjson.dumps({**turn, "api_key": KEY})
        request["headers"].append({"name": "Content-Encoding", "value": "gzip"})
        if kept == "decoded":
            request["postData"] = {"mimeType": "application/json", "text": plain.decode()}
        else:
            text = base64.b64encode(encode("gzip", plain)).decode()
            request["postData"] = {
                "mimeType": "application/json",
                "text": text,
                "encoding": "base64",
            }
    assert entry  # (the entries are test_har's rendering of the format)
    har = write(tmp_path, "loop.har", doc)
    _read_whole(analyze(har))
    out = export(har, "recording").data  # the HAR as a recording: its keys masked, decoded
    assert KEY.encode() not in out and b"api_key" in out
    requests = [r for r in map(orjson.loads, out.splitlines()) if r["type"] == "request"]
    assert [r["body_decoded"] for r in requests] == [["gzip"], ["gzip"]]


def test_export_masks_a_key_in_what_a_no_redact_recordings_body_decodes_to(tmp_path):
    from streamscope.export.fixtures import export

    from .responses_stream import events_for

    path = tmp_path / "clear.jsonl"
    turn = {**_turns()[0], "api_key": KEY}
    with RecordingWriter(path, redact=False) as w:
        w.request(1, "POST", URL, _gz(), encode("gzip", orjson.dumps(turn)))
        w.response(1, 200, [("content-type", "text/event-stream")])
        for data in events_for(turn):
            w.chunk(1, data)
        w.end(1, "complete", None)
    assert KEY.encode() in decode("gzip", _requests(path)[0].body_bytes)  # (kept in clear)
    out = export(str(path), "recording", exchange=1).data
    (line,) = [r for r in map(orjson.loads, out.splitlines()) if r["type"] == "request"]
    assert line["body_decoded"] == ["gzip"] and KEY not in line["body"]
    assert json.loads(line["body"])["model"] == MODEL and line["masked"] >= 1
    again = tmp_path / "again.jsonl"
    again.write_bytes(out)
    assert analyze(again).exchanges[0].model == MODEL  # read as kept: decoded


CLIENT = """
import os, sys, urllib.request
body = open("body.zst", "rb").read()
for sent in (body, body[:-5]):  # a whole body, then one cut short
    headers = {"content-type": "application/json", "content-encoding": "zstd"}
    url = os.environ["OPENAI_BASE_URL"] + "/responses"
    with urllib.request.urlopen(urllib.request.Request(url, sent, headers)) as r:
        r.read()
"""


@pytest.mark.slow
def test_record_says_what_it_could_not_redact_and_why_the_contract_was_not_checked(
    tmp_path, upstream
):
    from .test_recorder import streamscope

    (tmp_path / "client.py").write_text(CLIENT)
    (tmp_path / "body.zst").write_bytes(encode("zstd", orjson.dumps(_turns()[0])))
    out = tmp_path / "run.jsonl"
    args = ["record", "--upstream", upstream.url, "-o", str(out), "--redact-json"]
    done = streamscope(*args, "input.*.content", "--", sys.executable, "client.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("streamscope: ")]
    assert any(
        "exchange 2: the request body's Content-Encoding zstd cannot be decoded" in line
        and "--redact-json cannot apply, so the body is not recorded" in line
        for line in said
    )
    assert "contract holds" not in done.stderr
    assert any("not checked against 1 request" in line for line in said)
    assert CONTENT.encode() not in out.read_bytes()
    assert [r.decoded for r in _requests(out)] == [["zstd"], None]


def test_body_decoded_round_trips_and_a_bad_one_is_refused_by_name():
    line = Request.of(1, 0, "POST", URL, _gz(), b'{"model":"m"}', 1, ["gzip"]).to_json()
    line = orjson.loads(orjson.dumps(line))  # as a reader gets it
    assert line["body_decoded"] == ["gzip"] and Request.from_json(line).decoded == ["gzip"]
    for bad in ("gzip", [], [1]):
        with pytest.raises(ValueError, match="body_decoded"):
            Request.from_json({**line, "body_decoded": bad})


def test_recording_transport_redacts_what_a_compressed_body_decodes_to(tmp_path):
    from streamscope.record.transport import recording_transport

    from .responses_stream import events_for

    got: list[bytes] = []

    def provider(request: httpx.Request) -> httpx.Response:
        got.append(request.content)
        stream = b"".join(events_for(_turns()[0]))
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream)

    path = tmp_path / "inproc.jsonl"
    inner = httpx.MockTransport(provider)
    sent = encode("zstd", orjson.dumps(_turns()[0]))
    transport = recording_transport(path, inner, redact_json=["input.*.content"])
    with httpx.Client(transport=transport) as client:
        headers = {"content-type": "application/json", "content-encoding": "zstd"}
        client.post(URL, content=sent, headers=headers).read()
    assert got == [sent] and CONTENT.encode() not in path.read_bytes()
    (request,) = _requests(path)
    assert request.decoded == ["zstd"] and analyze(path).exchanges[0].model == MODEL
