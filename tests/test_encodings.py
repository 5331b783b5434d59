"""Compressed bodies (Content-Encoding gzip, deflate, br, zstd) read as the client read
them, on every face: the encoded versions of bundled recordings inspect, replay and export
exactly like the plain ones; what cannot be decoded is one finding naming the encoding."""

from __future__ import annotations

import base64
import gzip
import os
from pathlib import Path

import httpx
import httpx2
import openai
import orjson
import pytest
from click.testing import CliRunner

from streamscope import recording_transport
from streamscope.cli import main
from streamscope.inputs import open_input
from streamscope.inputs.encoding import Inflow, content_codings
from streamscope.playback import playback_transport
from streamscope.playback.serve import ServeServer
from streamscope.record.proxy import ProxyServer
from streamscope.record.proxy import Upstream as ProxyUpstream
from streamscope.recording import RecordingIndex, RecordingWriter
from streamscope.recording.format import Chunk
from streamscope.tui.model import StreamModel

from .encoded import CODINGS, Encoder, encode_recording
from .helpers import unsourced
from .upstream import Upstream

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = ["openai.jsonl", "anthropic-tool-use.jsonl", "gemini-streamed-args.jsonl"]


def run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def inspect_json(path) -> dict:
    result = run("inspect", str(path), "--json")
    assert result.exit_code in (0, 1), result.output
    return unsourced(orjson.loads(result.stdout_bytes))


def sample(name: str) -> str:
    return os.path.join(ROOT, "recordings", name)


@pytest.fixture(params=[(s, c) for s in SAMPLES for c in (*CODINGS, "raw-deflate")], ids=str)
def encoded(request, tmp_path):
    name, coding = request.param
    return sample(name), encode_recording(sample(name), tmp_path / f"{coding}-{name}", coding)


def test_inspect_reads_an_encoded_recording_as_the_plain_one(encoded):
    plain, enc = encoded
    assert inspect_json(enc) == inspect_json(plain)


@pytest.mark.parametrize("fmt", ["sse", "chunks"])
def test_export_writes_what_the_client_read(encoded, fmt):
    plain, enc = encoded
    ours, theirs = run("export", str(enc), "--format", fmt), run("export", plain, "--format", fmt)
    assert ours.exit_code == theirs.exit_code
    assert ours.stdout_bytes == theirs.stdout_bytes


def chunk_lines(data: bytes) -> list[dict]:
    return [d for d in map(orjson.loads, data.splitlines()) if d["type"] in ("response", "chunk")]


def test_export_recording_keeps_the_bytes_and_headers_as_they_arrived(encoded, tmp_path):
    plain, enc = encoded
    out = tmp_path / "out.jsonl"
    assert run("export", str(enc), "--format", "recording", "-o", str(out)).exit_code == 0
    with RecordingIndex.open(enc) as index:
        ex = index.exchanges()[0]
        response = index.line(index.exchange(ex).response)
        sent = [c.data_bytes for c in index.chunks(ex)]
    lines = chunk_lines(out.read_bytes())
    assert lines[0]["headers"] == [list(h) for h in response.headers]
    assert [Chunk.from_json(d).data_bytes for d in lines[1:]] == sent
    plain_out = tmp_path / "plain.jsonl"
    assert run("export", plain, "--format", "recording", "-o", str(plain_out)).exit_code == 0
    assert inspect_json(out) == inspect_json(plain_out)


def test_a_part_of_an_encoded_stream_exports_decoded_without_its_encoding(tmp_path):
    enc = encode_recording(sample("openai.jsonl"), tmp_path / "gz.jsonl", "gzip")
    ours = run("export", str(enc), "--format", "recording", "--frames", "2-5").stdout_bytes
    theirs = run("export", sample("openai.jsonl"), "--format", "recording", "--frames", "2-5")
    assert ours == theirs.stdout_bytes  # (the plain one has no Content-Encoding either)
    assert b"content-encoding" not in ours


def model_of(path):
    with open_input(path) as source:
        n = source.numbers()[0]
        ex = source.exchange(n)
        info = ex.info
        model = StreamModel(
            ex.reads, n, info.tools, info.response_format, told=ex.dialect(), every=2, thin=False
        )
        model.build()
        frames = []
        for k in range(1, model.total + 1):
            frame = model.at(k).frame
            frames.append((frame.data, frame.time_ns, frame.first_read, frame.last_read))
            frames.append(b"".join(model.raw(frame)))
        middle = model.at(model.total // 2).frame  # a jump back: resumed from a snapshot
        result = model.result
        return (
            frames,
            middle and middle.data,
            [(a.kind, a.frame, a.message) for a in result.anomalies],
            result.ended,
            list(model.times),
        )


def test_the_replay_model_reads_an_encoded_stream_as_the_plain_one(encoded):
    plain, enc = encoded
    assert model_of(enc) == model_of(plain)


def recut(path, dst, size: int):
    """The same recording with every body's encoded bytes cut again every `size` bytes."""
    lines = [orjson.loads(x) for x in Path(path).read_bytes().splitlines()]
    out, bodies = [], {}
    for d in lines:
        if d["type"] == "chunk":
            bodies.setdefault(d["exchange"], []).append(d)
            continue
        if d["type"] == "end" and d["exchange"] in bodies:
            got = bodies.pop(d["exchange"])
            body = b"".join(Chunk.from_json(c).data_bytes for c in got)
            for k in range(0, len(body), size):
                t = got[min(k * len(got) // len(body), len(got) - 1)]["t_ns"]
                out.append(Chunk.of(d["exchange"], t, body[k : k + size]).to_json())
        out.append(d)
    Path(dst).write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in out))
    return dst


@pytest.mark.parametrize("coding", CODINGS)
def test_reads_cut_anywhere_assemble_the_same_calls(coding, tmp_path):
    plain = sample("anthropic-tool-use.jsonl")
    enc = encode_recording(plain, tmp_path / "enc.jsonl", coding)
    cut = recut(enc, tmp_path / "cut.jsonl", 7)
    ours, theirs = inspect_json(cut), inspect_json(plain)
    for a, b in zip(ours["streams"], theirs["streams"], strict=True):
        assert a["tool_calls"] == b["tool_calls"]
        assert [x["kind"] for x in a["anomalies"]] == [x["kind"] for x in b["anomalies"]]
    assert model_of(cut)[0][::2] != []  # the replay reads it too


def one_stream(path) -> dict:
    d = inspect_json(path)
    return d["streams"][0]


def findings(stream: dict) -> list[str]:
    return [a["message"] for a in stream["anomalies"] if a["kind"] == "stream-truncated"]


def with_header(tmp_path, coding: str):
    """openai.jsonl with its bodies plain but its responses saying `coding`."""
    return encode_recording(sample("openai.jsonl"), tmp_path / "liar.jsonl", "identity", coding)


def test_a_body_that_is_not_what_its_encoding_says_is_one_finding(tmp_path):
    path = with_header(tmp_path, "gzip")
    stream = one_stream(path)
    [message] = findings(stream)
    assert "Content-Encoding gzip cannot be decoded from the read at byte 0" in message
    assert "not valid gzip data (incorrect header check)" in message
    assert [m for k, _, m in model_of(path)[2] if k == "stream-truncated"] == [message]


def test_an_unknown_encoding_is_one_finding_naming_it(tmp_path):
    [message] = findings(one_stream(with_header(tmp_path, "compress")))
    assert "Content-Encoding 'compress' cannot be decoded" in message
    assert "not one streamscope decodes (gzip, deflate, br, zstd)" in message


@pytest.mark.parametrize("coding", CODINGS)
def test_a_body_cut_inside_its_compressed_stream_says_so(coding, tmp_path):
    enc = encode_recording(sample("openai.jsonl"), tmp_path / "enc.jsonl", coding)
    lines = enc.read_bytes().splitlines()
    last = max(i for i, x in enumerate(lines) if b'"chunk","exchange":1,' in x)
    d = orjson.loads(lines[last])
    data = Chunk.from_json(d).data_bytes
    lines[last] = orjson.dumps(Chunk.of(1, d["t_ns"], data[: len(data) // 2]).to_json())
    enc.write_bytes(b"\n".join(lines) + b"\n")
    stream = one_stream(enc)
    [message] = findings(stream)
    assert (
        f"the body ends inside its {coding} stream" in message or f"not valid {coding}" in message
    )


@pytest.mark.slow
@pytest.mark.parametrize("coding", CODINGS)
def test_a_decompression_bomb_is_stopped_and_named(coding):
    inflow = Inflow([coding])
    bomb = Encoder(coding).piece(b"\0" * (64 << 20), True)  # 64 MiB in 64 KiB at most
    got = 0
    for k in range(0, len(bomb), 4096):
        read = inflow.feed(bomb[k : k + 4096])
        assert len(read) <= 1000 * 4096 + (1 << 20)  # bounded per read
        got += len(read)
    assert got <= 1000 * len(bomb) + (1 << 20)
    assert "decompression bomb" in inflow.failure.reason


def test_the_encoder_round_trips():  # (the test helper itself)
    for coding in CODINGS:
        enc, inflow = Encoder(coding), Inflow([coding])
        pieces = [b"data: 1\n\n", b"data: 2\n\n", b""]
        out = [inflow.feed(enc.piece(p, k == 2)) for k, p in enumerate(pieces)]
        assert out == pieces and inflow.finish() is None


def har_with_encoding(tmp_path, coding: str, compressed: bool) -> str:
    """openai.jsonl as a HAR whose responses say Content-Encoding `coding`: their bodies
    kept decoded as HAR 1.2 says (`compressed` False), or as they came (True, base64)."""
    from .test_har import har_of_recording, write

    doc = har_of_recording(sample("openai.jsonl"), compressed)
    for e in doc["log"]["entries"]:
        e["response"]["headers"].append({"name": "Content-Encoding", "value": coding})
        if compressed:
            content = e["response"]["content"]
            body = base64.b64decode(content["text"])
            content["text"] = base64.b64encode(Encoder(coding).piece(body, True)).decode()
    return write(tmp_path, "capture.har", doc)


@pytest.mark.parametrize("compressed", [False, True], ids=["kept-decoded", "kept-compressed"])
@pytest.mark.parametrize("coding", CODINGS)
def test_a_har_reads_alike_whether_its_bodies_were_kept_decoded_or_not(
    tmp_path, coding, compressed
):
    from .test_har import har_of_recording, write

    plain = write(tmp_path, "plain.har", har_of_recording(sample("openai.jsonl"), False))
    path = har_with_encoding(tmp_path, coding, compressed)
    ours, theirs = inspect_json(path), inspect_json(plain)
    said = [n for n in ours.pop("notes") if "Content-Encoding" in n]
    theirs.pop("notes")
    assert [s["tool_calls"] for s in ours["streams"]] == [
        s["tool_calls"] for s in theirs["streams"]
    ]
    assert [s["anomalies"] for s in ours["streams"]] == [s["anomalies"] for s in theirs["streams"]]
    if compressed:
        assert said == []
    else:
        assert said == [
            f"entries[{i}]: its body is kept decoded, so its Content-Encoding ({coding}) is left out"
            for i in (0, 1)
        ]
    out = tmp_path / "out.jsonl"  # a recording of the whole HAR says what its bodies are
    assert run("export", path, "--format", "recording", "-o", str(out)).exit_code == 0
    assert [s["tool_calls"] for s in inspect_json(out)["streams"]] == [
        s["tool_calls"] for s in theirs["streams"]
    ]


# -- recorded compressed, by the proxy (`record`) and in-process (`recording_transport`),
# -- and served back as it came


def reading(path) -> list:
    """What inspect says of each stream, but for times (and the results later requests
    sent: a recording cut after its first exchange has none)."""
    return [
        (
            s["frames"],
            s["ended"],
            [{k: v for k, v in c.items() if k != "result"} for c in s["tool_calls"]],
            [(a["kind"], a["frame"]) for a in s["anomalies"]],
        )
        for s in inspect_json(path)["streams"]
    ]


@pytest.fixture(scope="module", params=CODINGS)
def compressing(request):
    with Upstream(coding=request.param) as up:
        yield up


def raw_post(base_url: str, body: dict, **client) -> tuple[bytes, str | None]:
    """The body as it came (not decoded) and its Content-Encoding."""
    with (
        httpx.Client(timeout=10, **client) as http,
        http.stream("POST", base_url + "/chat/completions", json=body) as r,
    ):
        return b"".join(r.iter_raw()), r.headers.get("content-encoding")


TURN_1 = {"model": "openai", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.slow
def test_the_proxy_records_a_compressed_stream_as_it_came_and_reads_it_decoded(
    compressing, tmp_path
):
    path = tmp_path / "proxy.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(ProxyUpstream.parse(compressing.url), writer)
        server.start()
        try:
            got, encoding = raw_post(server.base_url, TURN_1)
        finally:
            server.stop()
    assert encoding == compressing.coding  # the client got the bytes and header as sent
    assert got == compressing.last_served()
    assert b"".join(reads(path)) == got  # the recording keeps them as they came
    assert reading(path) == reading(sample("openai.jsonl"))[:1]


@pytest.mark.slow
def test_record_of_an_sdk_agent_against_a_gzip_upstream(tmp_path):
    from .test_recorder import OPENAI_IDS, record_agent

    out = tmp_path / "run.jsonl"
    with Upstream(coding="gzip") as up:
        done = record_agent(up, out, "create")
    assert done.returncode == 0, done.stderr
    assert [c["id"] for c in orjson.loads(done.stdout)["calls"]] == OPENAI_IDS
    assert reading(out) == reading(sample("openai.jsonl"))


@pytest.mark.slow
@pytest.mark.parametrize("package", [httpx2, httpx])
def test_recording_transport_records_a_gzip_stream_and_reads_it_decoded(package, tmp_path):
    path = tmp_path / "in-process.jsonl"
    with Upstream(coding="gzip") as up:
        client = openai.OpenAI(
            api_key="sk-test",
            base_url=up.url,
            max_retries=0,
            http_client=package.Client(transport=recording_transport(path)),
        )
        with client:
            turn = {k: v for k, v in TURN_1.items() if k != "stream"}
            seen = list(client.chat.completions.create(**turn, stream=True))
        served = up.last_served()
    assert seen
    # all the SDK read: it leaves after [DONE], maybe before the gzip trailer came
    assert served.startswith(b"".join(reads(path)))
    assert reading(path) == reading(sample("openai.jsonl"))[:1]


def reads(path) -> list[bytes]:
    with RecordingIndex.open(path) as index:
        return [c.data_bytes for c in index.chunks(index.exchanges()[0])]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["serve", "playback_transport"])
@pytest.mark.parametrize("coding", CODINGS)
def test_serve_gives_the_client_the_bytes_and_headers_it_first_got(coding, mode, tmp_path):
    enc = encode_recording(sample("openai.jsonl"), tmp_path / "enc.jsonl", coding)
    with RecordingIndex.open(enc) as index:
        request = index.line(index.exchange(1).request).json_body()
    if mode == "playback_transport":
        transport = playback_transport([str(enc)])
        got, encoding = raw_post("http://provider.test/v1", request, transport=transport)
    else:
        server = ServeServer([str(enc)])
        server.start()
        try:
            got, encoding = raw_post(server.base_url, request)
        finally:
            server.stop()
    assert encoding == coding
    assert got == b"".join(reads(enc))


def test_an_sdk_client_served_a_gzip_recording_assembles_its_calls(tmp_path):
    enc = encode_recording(sample("openai.jsonl"), tmp_path / "enc.jsonl", "gzip")
    with RecordingIndex.open(enc) as index:
        request = index.line(index.exchange(1).request).json_body()
    server = ServeServer([str(enc)])
    server.start()
    try:
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
        request.pop("stream", None)
        with client, client.chat.completions.stream(**request) as stream:
            final = stream.get_final_completion()
    finally:
        server.stop()
    ids = [c.id for c in final.choices[0].message.tool_calls]
    assert ids == [
        c["id"] for c in inspect_json(sample("openai.jsonl"))["streams"][0]["tool_calls"]
    ]


def test_a_compressed_error_body_is_read_as_the_client_read_it(tmp_path):
    """A failed non-stream answer, gzip'd: its reason is in the decoded words."""
    lines = [orjson.loads(x) for x in Path(sample("openai.jsonl")).read_bytes().splitlines()]
    body = gzip.compress(b'{"error": {"message": "the model is overloaded"}}')
    out = []
    for d in lines:
        if d.get("exchange") == 2 and d["type"] == "response":
            d["status"] = 503
            d["headers"] = [["content-type", "application/json"], ["content-encoding", "gzip"]]
        if d.get("exchange") == 2 and d["type"] == "chunk":
            if any(x.get("exchange") == 2 and x["type"] == "chunk" for x in out):
                continue
            d = Chunk.of(2, d["t_ns"], body).to_json()
        out.append(d)
    path = tmp_path / "failed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in out))
    result = run("inspect", str(path))
    assert 'HTTP 503: {"error": {"message": "the model is overloaded"}}' in result.output


def test_codings_applied_one_after_another_are_undone_in_reverse():
    inner, outer = Encoder("gzip"), Encoder("br")
    body = [b"data: 1\n\n", b"data: 2\n\n", b""]
    wire = [outer.piece(inner.piece(p, k == 2), k == 2) for k, p in enumerate(body)]
    inflow = Inflow(content_codings([("Content-Encoding", "x-gzip, identity, BR")]))
    assert inflow.codings == ["gzip", "br"]
    assert [inflow.feed(w) for w in wire] == body and inflow.finish() is None


def test_a_compressed_body_is_decoded_once_for_the_replay(tmp_path):
    """A jump back, or a frame's bytes, reads what the body decoded to, not the body again."""
    enc = encode_recording(sample("anthropic-tool-use.jsonl"), tmp_path / "enc.jsonl", "zstd")
    with open_input(enc) as source:
        ex = source.exchange(1)
        model = StreamModel(ex.reads, 1, ex.info.tools, None, told=ex.dialect(), every=1)
        model.build()
        fed = ex.reads._inflow.fed
        assert fed == sum(map(len, reads(enc)))
        for n in (model.total, 1, model.total // 2, 2):
            model.raw(model.at(n).frame)
        assert ex.reads._inflow.fed == fed
