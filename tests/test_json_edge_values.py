"""JSON that Python's json (and so the openai SDK) reads but orjson refuses, end to end: a
lone surrogate escape (a model's emoji cut in two) and a very long integer are read as
the JSON they are, never a `chunk-invalid-json`; every face that writes JSON writes what
was read; what JSON forbids (NaN) is still refused."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.core.frames import Frame
from streamscope.dialects.chat.appendix_a import chunk, tc
from streamscope.recording import RecordingWriter

from .anytype import RECORDINGS, _frames, _reframed
from .dialects.anthropic import events as anthropic
from .dialects.responses import events as responses

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
    # in values, the SDK writes it as it is
    sdk = stream["strategies"]["openai-sdk"]
    assert "error" not in sdk and sdk["differs"] is False, sdk


ENCODE = "UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position 0"


@pytest.mark.parametrize(
    "opener, fragment, frame",
    [
        ({"\ud800": 1, "role": "assistant"}, tc(0, args='{"city": "Paris"}'), 2),
        ({"role": "assistant"}, {"index": 0, "function": {"\ud800": 1, "arguments": "{}"}}, 3),
    ],
    ids=["opening-delta", "later-function"],
)
def test_a_key_holding_a_lone_surrogate_raises_in_the_sdk(tmp_path, opener, fragment, frame):
    # pydantic cannot write such a key: the SDK's stream helper raises where it dumps the
    # object holding it (robust reads on)
    path = tmp_path / "key.sse"
    path.write_bytes(
        _sse(
            _text(chunk({"content": "hi"})),
            _text(
                chunk({**opener, "tool_calls": [tc(0, "call_1", "get_weather", "", "function")]})
            ),
            _text(chunk({"tool_calls": [fragment]})),
            _text(chunk({}, "tool_calls")),
        )
    )
    (stream,) = _inspect(path)["streams"]
    sdk = stream["strategies"]["openai-sdk"]
    assert sdk["error"].startswith(ENCODE) and sdk["frame"] == frame, sdk
    (call,) = stream["tool_calls"]
    assert call["name"] == "get_weather"
    text = CliRunner().invoke(main, ["inspect", str(path)]).stdout
    assert "clients that raise: openai-sdk" in text


def _named(events: list[dict]) -> bytes:
    """An SSE body naming each event by its type (the escapes as the stdlib writes them)."""
    return b"".join(f"event: {e['type']}\ndata: {_text(e)}\n\n".encode() for e in events)


def _keyed(events: list[dict], at: int, *path: str) -> list[dict]:
    """`events` with a lone surrogate key in the object at `path` of event `at`."""
    events = json.loads(json.dumps(events))
    where = events[at]
    for key in path:
        where = where[key]
    where["\ud800"] = 1
    return events


RESPONSE = responses.response(responses.call(0))
MESSAGE = anthropic.message(anthropic.tool_call(0))


@pytest.mark.parametrize(
    "events, client, frame",
    [
        (_keyed(RESPONSE, 1, "item"), "openai-sdk", 2),
        (_keyed(RESPONSE, -1, "response"), "openai-sdk", len(RESPONSE)),
        (_keyed(MESSAGE, 0, "message", "usage"), "anthropic-sdk", 1),
        (_keyed(MESSAGE, 1, "content_block"), "anthropic-sdk", 2),
    ],
    ids=["responses-item", "responses-completed", "anthropic-usage", "anthropic-block"],
)
def test_such_a_key_raises_in_the_responses_and_anthropic_sdks(tmp_path, events, client, frame):
    # their stream helpers dump the added item, the final response, the message and each
    # block: the SDK raises there (robust reads on)
    path = tmp_path / "key.sse"
    path.write_bytes(_named(events))
    (stream,) = _inspect(path)["streams"]
    sdk = stream["strategies"][client]
    assert sdk["error"].startswith(ENCODE) and sdk["frame"] == frame, sdk
    (call,) = stream["tool_calls"]
    assert call["name"] == "get_weather"
    text = CliRunner().invoke(main, ["inspect", str(path)]).stdout
    assert f"clients that raise: {client}" in text


@pytest.mark.parametrize(
    "events, client",
    [(_keyed(RESPONSE, 2), "openai-sdk"), (_keyed(MESSAGE, 2), "anthropic-sdk")],
    ids=["responses", "anthropic"],
)
def test_such_a_key_on_an_event_raises_nothing(tmp_path, events, client):
    # an event itself is never dumped
    path = tmp_path / "key.sse"
    path.write_bytes(_named(events))
    (stream,) = _inspect(path)["streams"]
    sdk = stream["strategies"][client]
    assert "error" not in sdk and sdk["differs"] is False, sdk


@pytest.mark.parametrize("number", [str(2**70), LONG, "-" + LONG], ids=["2**70", "long", "-long"])
def test_a_long_integer_is_json(tmp_path, number):
    path = tmp_path / "long.sse"
    path.write_bytes(_stream('{"n": ' + number + "}", ', "usage_id": ' + number, "hi"))
    (stream,) = _inspect(path)["streams"]
    assert _kinds(stream) == set()
    (call,) = stream["tool_calls"]
    assert json.loads(call["arguments"]) == {"n": int(number)}


@pytest.mark.parametrize("index", [2**64, 2**70, 10**30])
def test_an_index_past_64_bits_is_the_integer_sent(tmp_path, index):
    # orjson reads it as a float; the SDK (Python's json) as the integer it is
    opener = chunk({"tool_calls": [tc(index, "call_1", "get_weather", '{"city": "Paris"}')]})
    path = tmp_path / "far.sse"
    path.write_bytes(_sse(_text(opener), _text(chunk({}, "tool_calls"))))
    (stream,) = _inspect(path)["streams"]
    assert "index-invalid" not in _kinds(stream) and "index-gap" in _kinds(stream)
    (call,) = stream["tool_calls"]
    assert call["index"] == index and type(call["index"]) is int
    sdk = stream["strategies"]["openai-sdk"]
    assert "error" in sdk, sdk  # the real SDK cannot hold such a list position either
    text = CliRunner().invoke(main, ["inspect", str(path)]).stdout
    assert str(index) in text and "e+" not in text


BIG = 2**64  # orjson reads it as 1.8446744073709552e+19; the SDKs' json as the integer


def _changed(name: str, change) -> bytes:
    """The bundled recording `name` with `change` made to each event object it streams
    (each HTTP frame, in its own framing, and each WebSocket text message), written by the
    stdlib so an integer past 64 bits is sent as its digits."""
    data = (RECORDINGS / name).read_bytes()
    changed = {}
    for n, (framing, frames) in _frames(data).items():
        if framing is None or not isinstance(frames[0].payload, dict):
            continue
        out = []
        for f in frames:
            p = change(copy.deepcopy(f.payload)) if isinstance(f.payload, dict) else f.payload
            text = json.dumps(p) if isinstance(p, dict) else f.data
            out.append(Frame(f.number, text, p, f.time_ns, f.event, headers=f.headers))
        changed[n] = (framing, out)
    for framing in {framing for framing, _ in changed.values()}:
        data = _reframed(data, framing, {n: f for n, (fr, f) in changed.items() if fr == framing})
    lines = [json.loads(line) for line in data.splitlines()]
    for line in lines:
        if line["type"] == "message" and isinstance(line.get("data"), str):
            line["data"] = json.dumps(change(json.loads(line["data"])))
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _swap(key: str, old: int):
    """A change that puts BIG for `key` where it holds `old`, at any depth."""

    def change(value):
        if isinstance(value, dict):
            return {
                k: BIG if k == key and v == old and type(v) is int else change(v)
                for k, v in value.items()
            }
        return [change(v) for v in value] if isinstance(value, list) else value

    return change


def _streams(doc: dict) -> list[dict]:
    return doc["streams"] + [s for x in doc.get("sessions", []) for s in x["streams"]]


def _far(tmp_path, name: str, change) -> tuple[list[dict], str]:
    """The --json streams and the text report of `name` changed so."""
    path = tmp_path / name
    path.write_bytes(_changed(name, change))
    text = CliRunner().invoke(main, ["inspect", str(path)]).stdout
    return _streams(_inspect(path)), text


@pytest.mark.parametrize(
    "name, key, old, tool",
    [
        ("anthropic-tool-use.jsonl", "index", 1, "get_weather"),
        ("responses-interleaved.jsonl", "output_index", 0, "get_weather"),
        ("bedrock-text-without-start.jsonl", "contentBlockIndex", 1, "get_weather"),
        ("realtime-two-calls.jsonl", "output_index", 0, "get_weather"),
    ],
    ids=["anthropic", "responses", "bedrock", "realtime"],
)
def test_a_block_or_item_past_64_bits_is_the_integer_sent(tmp_path, name, key, old, tool):
    # a tool block / output item at index 2**64 throughout: robust assembles it there,
    # as the SDK's json reads it, not an index that is no integer it skips
    streams, text = _far(tmp_path, name, _swap(key, old))
    stream = streams[0]
    assert "event-schema-violation" not in _kinds(stream), stream["anomalies"]
    (call,) = [c for c in stream["tool_calls"] if c["index"] == BIG]
    assert type(call["index"]) is int and call["name"] == tool
    assert json.loads(call["arguments"])["city"] == "Paris"
    assert str(BIG) in text and "e+19" not in text


def test_anthropic_sdk_cannot_hold_a_block_past_64_bits(tmp_path):
    # the SDK appends each start, then reads content[index] for a delta: IndexError
    (stream, _), _ = _far(tmp_path, "anthropic-tool-use.jsonl", _swap("index", 1))
    sdk = stream["strategies"]["anthropic-sdk"]
    assert sdk["error"].startswith("IndexError"), sdk


def test_a_sequence_number_past_64_bits_is_the_integer_sent(tmp_path):
    def change(p):
        if p.get("sequence_number") == 5:
            p["sequence_number"] = BIG
        return p

    streams, text = _far(tmp_path, "responses-interleaved.jsonl", change)
    (found,) = [a for a in streams[0]["anomalies"] if a["kind"] == "sequence-disorder"]
    assert found["frame"] == 6
    assert found["message"].startswith(f"sequence_number {BIG} after 4: {BIG - 5} skipped")
    assert "e+19" not in text


def test_a_gemini_candidate_past_64_bits_is_the_integer_sent(tmp_path):
    def change(p):
        for cand in p.get("candidates", []):
            cand["index"] = BIG
        return p

    streams, text = _far(tmp_path, "gemini-parallel-signature.jsonl", change)
    stream = streams[0]
    assert "event-schema-violation" not in _kinds(stream), stream["anomalies"]
    assert {c["choice"] for c in stream["tool_calls"]} == {BIG}
    assert [c["name"] for c in stream["tool_calls"]] == ["get_weather", "get_time"]
    assert str(BIG) in text and "e+19" not in text


def test_ollama_reads_no_integer_off_the_wire(tmp_path):
    # function.index is the server's count, not a key; eval_count no rule reads: a
    # 2**64 in either changes nothing (the arguments keep their digits, exact.py)
    def change(p):
        for call in (p.get("message") or {}).get("tool_calls") or []:
            call["function"]["index"] = BIG
            call["function"]["arguments"]["n"] = BIG
        if "eval_count" in p:
            p["eval_count"] = BIG
        return p

    streams, text = _far(tmp_path, "ollama-two-calls.jsonl", change)
    stream = streams[0]
    assert "event-schema-violation" not in _kinds(stream)
    assert [c["index"] for c in stream["tool_calls"]] == [0, 1]
    assert all(json.loads(c["arguments"])["n"] == BIG for c in stream["tool_calls"])
    assert "e+19" not in text


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


# -- JSON printed to a terminal holds no raw C1 control or bidi override -----------------

# DEL, C1 (NEL; CSI, which some terminals act on alone) and the bidi overrides and
# isolates that make a name read as another (what JSON writers leave raw)
HOSTILE = "a\x7fb\x85c\x9bd\u202ee\u202af\u2066g\u2069h"
RAW = [c.encode() for c in "\x7f\x85\x9b\u202e\u202a\u2066\u2069"]


def _hostile_stream() -> bytes:
    """A stream that holds them raw, in its content and its call's arguments (UTF-8)."""
    deltas = [
        {"role": "assistant", "content": "hi " + HOSTILE},
        {"tool_calls": [tc(0, "call_1", "get_weather", "", "function")]},
        {"tool_calls": [tc(0, args=json.dumps({"city": HOSTILE}, ensure_ascii=False))]},
    ]
    chunks = [chunk(d) for d in deltas] + [chunk({}, "tool_calls")]
    return _sse(*(json.dumps(c, ensure_ascii=False) for c in chunks))


def _raw_in(out: bytes) -> list[bytes]:
    return [c for c in RAW if c in out]


def test_inspect_json_escapes_them(tmp_path):
    path = tmp_path / "hostile.sse"
    path.write_bytes(_hostile_stream())
    assert _raw_in(path.read_bytes()) == RAW  # the recording holds them raw
    result = _run("inspect", str(path), "--json")
    assert _raw_in(result.stdout_bytes) == []
    assert b"\\u202e" in result.stdout_bytes and b"\\u0085" in result.stdout_bytes
    (stream,) = json.loads(result.stdout_bytes)["streams"]  # the same values
    assert stream["content"] == "hi " + HOSTILE
    (call,) = stream["tool_calls"]
    assert json.loads(call["arguments"]) == {"city": HOSTILE}


def test_scan_jsonl_escapes_them(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    _recorded(folder / "hostile.jsonl", _hostile_stream(), model=HOSTILE)
    out = _run("scan", str(folder), "--jsonl").stdout_bytes
    assert _raw_in(out) == []
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["model"] == HOSTILE


def test_diff_json_escapes_them(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _recorded(a, _hostile_stream())
    _recorded(b, _hostile_stream().replace(b"get_weather", "get_\u202eweather".encode()))
    result = CliRunner().invoke(main, ["diff", str(a), str(b), "--json"])
    assert result.exit_code == 1, result.output  # they differ: the call's name
    assert _raw_in(result.stdout_bytes) == []
    (pair,) = json.loads(result.stdout_bytes)["pairs"]
    assert [c["b"]["name"] for c in pair["calls"]] == ["get_\u202eweather"]


def test_a_file_keeps_them_as_recorded(tmp_path):
    # an export is a fixture, not a terminal's: the body as received, byte for byte
    source, out = tmp_path / "hostile.jsonl", tmp_path / "out.sse"
    _recorded(source, _hostile_stream())
    _run("export", str(source), "--format", "sse", "-o", str(out))
    assert out.read_bytes() == _hostile_stream()
