"""JSON that Python's json (and so the openai SDK) reads but orjson refuses, end to end: a
lone surrogate escape (a model's emoji cut in two) and a very long integer are read as
the JSON they are, never a `chunk-invalid-json`; every face that writes JSON writes what
was read; what JSON forbids (NaN) is still refused."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.dialects.chat.appendix_a import chunk, tc
from streamscope.recording import RecordingWriter

LONG = "1" * 400  # past a double: orjson refuses it, Python's json reads it


def _sse(*chunks: str) -> bytes:
    """An SSE body of chunks given as their JSON text (the escapes exactly as sent)."""
    return b"".join(b"data: " + c.encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _text(value: dict) -> str:
    # the stdlib writes a lone surrogate as its escape, as a provider sends it
    return json.dumps(value)


def _stream(args: str, extra: str = "", content: str = "cut: \ud83d") -> bytes:
    opener = tc(0, "call_1", "get_weather", "", "function")
    return _sse(
        _text(chunk({"role": "assistant", "content": content})),
        _text(chunk({"tool_calls": [opener]})),
        _text(chunk({"tool_calls": [tc(0, args=args)]})),
        _text(chunk({}, "tool_calls"))[:-1] + extra + "}",
    )


def _inspect(path) -> dict:
    result = CliRunner().invoke(main, ["inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout_bytes)


def _kinds(stream: dict) -> set[str]:
    return {a["kind"] for a in stream["anomalies"]}


def test_a_lone_surrogate_is_json(tmp_path):
    path = tmp_path / "cut.sse"
    path.write_bytes(_stream(args='{"city": "Paris \\ud800"}'))
    (stream,) = _inspect(path)["streams"]
    assert _kinds(stream) == set()  # no chunk-invalid-json, no args-invalid-json
    assert stream["content"] == "cut: \ud83d"
    (call,) = stream["tool_calls"]
    assert json.loads(call["arguments"]) == {"city": "Paris \ud800"}


@pytest.mark.parametrize("number", [str(2**70), LONG, "-" + LONG], ids=["2**70", "long", "-long"])
def test_a_long_integer_is_json(tmp_path, number):
    path = tmp_path / "long.sse"
    path.write_bytes(_stream('{"n": ' + number + "}", ', "usage_id": ' + number, "hi"))
    (stream,) = _inspect(path)["streams"]
    assert _kinds(stream) == set()
    (call,) = stream["tool_calls"]
    assert json.loads(call["arguments"]) == {"n": int(number)}


def test_what_json_forbids_is_still_refused(tmp_path):
    path = tmp_path / "nan.sse"
    path.write_bytes(_stream("{}", ', "x": NaN', "hi"))
    (stream,) = _inspect(path)["streams"]
    assert "chunk-invalid-json" in _kinds(stream)


def test_resent_arguments_that_hold_a_surrogate_are_seen_resent(tmp_path):
    # a complete copy sent again is told from a fragment by parsing both: as the SDK
    # parses them, a lone surrogate escape and all
    args = '{"city": "Paris \\ud800"}'
    opener = tc(0, "call_1", "get_weather", "", "function")
    path = tmp_path / "resent.sse"
    path.write_bytes(
        _sse(
            *(
                _text(chunk({"tool_calls": [d]}))
                for d in (opener, tc(0, args=args), tc(0, args=args))
            ),
            _text(chunk({}, "tool_calls")),
        )
    )
    (stream,) = _inspect(path)["streams"]
    assert "args-resent" in _kinds(stream)
    assert "args-invalid-json" not in _kinds(stream)


def _recorded(path, body: bytes, model: str = "m") -> None:
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        request = {"model": model, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        w.request(
            ex, "POST", "http://127.0.0.1/v1/chat/completions", [], json.dumps(request).encode()
        )
        w.response(ex, 200, [("content-type", "text/event-stream")])
        w.chunk(ex, body)
        w.end(ex, "complete")


def test_a_recording_that_holds_them_reads_the_same(tmp_path):
    path = tmp_path / "cut.jsonl"
    _recorded(path, _stream('{"city": "Paris \\ud800", "n": ' + LONG + "}"))
    (stream,) = _inspect(path)["streams"]
    assert _kinds(stream) == set()
    assert stream["content"] == "cut: \ud83d"
    (call,) = stream["tool_calls"]
    assert json.loads(call["arguments"]) == {"city": "Paris \ud800", "n": int(LONG)}


# -- every face that writes JSON writes what was read -----------------------------------


def _held(path, model: str = "m") -> None:
    """A recording whose stream holds a cut emoji, a lone surrogate and a 400-digit
    integer in its call's arguments, and the integer in a chunk of its own."""
    args = '{"city": "Paris \\ud800", "n": ' + LONG + "}"
    body = _stream(args, ', "seed": ' + LONG).replace(b'"model": "m"', b'"model": ' + _q(model))
    _recorded(path, body, model)


def _q(text: str) -> bytes:
    return json.dumps(text).encode()  # ASCII: a lone surrogate as its escape


def _run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


_WHOLE = [(f, False) for f in ("recording", "chunks", "sse", "pytest", "otlp", "md", "html")]


@pytest.mark.parametrize(
    ("fmt", "minimal"), _WHOLE + [(f, True) for f in ("recording", "chunks", "sse", "pytest")]
)
def test_export_writes_them(tmp_path, fmt, minimal):
    source, out = tmp_path / "held.jsonl", tmp_path / f"out.{fmt}"
    _held(source)
    extra = ["--include-content"] if fmt == "otlp" else []
    _run("export", str(source), "--format", fmt, "-o", str(out), *extra, *["--minimal"] * minimal)
    data = out.read_bytes()
    data.decode("utf-8")  # no lone surrogate is ever written raw
    if fmt == "sse" and not minimal:  # the body as received, byte for byte
        assert data == _stream('{"city": "Paris \\ud800", "n": ' + LONG + "}", ', "seed": ' + LONG)
    if fmt in ("recording", "chunks"):
        for line in data.splitlines():
            json.loads(line)
    if fmt == "otlp":
        json.loads(data)
    if fmt == "recording" and not minimal:  # read back, the same call (--minimal keeps
        # none: a stream without quirks shrinks to one frame)
        (stream,) = _inspect(out)["streams"]
        (call,) = stream["tool_calls"]
        assert json.loads(call["arguments"]) == {"city": "Paris \ud800", "n": int(LONG)}


def test_scan_writes_them(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    _held(folder / "held.jsonl", model="m\ud800")
    (row,) = [
        json.loads(line) for line in _run("scan", str(folder), "--jsonl").stdout_bytes.splitlines()
    ]
    assert row["model"] == "m\ud800" and row["anomaly_kinds"] == []


def test_scan_stores_them(tmp_path):
    pytest.importorskip("duckdb")
    import duckdb

    folder, db = tmp_path / "f", tmp_path / "scan.duckdb"
    folder.mkdir()
    _held(folder / "held.jsonl", model="m\ud800")
    _run("scan", str(folder), "--db", str(db), "--parquet", str(tmp_path / "pq"))
    # a UTF-8 column holds no lone surrogate: it is stored as the escape's text
    (model,) = duckdb.connect(str(db)).execute("SELECT model FROM exchanges").fetchone()
    assert model == "m\\ud800"


def test_diff_writes_them(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _held(a)
    _held(b, model="m\ud800")
    result = CliRunner().invoke(main, ["diff", str(a), str(b), "--json"])
    assert result.exit_code in (0, 1), result.output
    json.loads(result.stdout_bytes)
