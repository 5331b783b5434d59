"""HAR 1.2 input: devtools/mitmproxy captures read to the same calls as the recording or the
raw SSE they hold, through inspect, export, playback and the replay's source."""

from __future__ import annotations

import base64
import json
import os

import httpx2
import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.inputs import HAR, open_input
from streamscope.playback import playback_transport
from streamscope.recording import RecordingIndex

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
OPENAI = os.path.join(ROOT, "openai.jsonl")
ALIBABA = os.path.join(ROOT, "alibaba-empty-id.jsonl")
GEMINI = os.path.join(ROOT, "gemini-no-index.sse")
MITMPROXY = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "fixtures", "har", "mitmproxy-three.har"
)
SECRET = "sk-har-secret-0042"


def content(body: bytes, mime: str, b64: bool) -> dict:
    if b64:
        return {
            "size": len(body),
            "mimeType": mime,
            "text": base64.b64encode(body).decode(),
            "encoding": "base64",
        }
    return {"size": len(body), "mimeType": mime, "text": body.decode()}


def entry(url: str, request_body: bytes, body: bytes, b64: bool, second: int) -> dict:
    """One HAR entry as devtools writes it (the test's own rendering of the format)."""
    return {
        "startedDateTime": f"2026-11-30T10:00:0{second}.000Z",
        "time": 120,
        "request": {
            "method": "POST",
            "url": url,
            "httpVersion": "HTTP/1.1",
            "headers": [
                {"name": "Authorization", "value": f"Bearer {SECRET}"},
                {"name": "Content-Type", "value": "application/json"},
            ],
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": len(request_body),
            "postData": {"mimeType": "application/json", "text": request_body.decode()},
        },
        "response": {
            "status": 200,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "text/event-stream; charset=utf-8"}],
            "cookies": [],
            "content": content(body, "text/event-stream", b64),
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 1, "wait": 40, "receive": 79},
    }


def noise() -> list[dict]:
    """What a browser capture also holds: an image, and a chat call whose body was not kept."""
    image = entry("https://example.test/logo.png", b"", b"\x89PNG", True, 0)
    image["request"]["method"] = "GET"
    image["response"]["content"]["mimeType"] = "image/png"
    image["response"]["headers"] = [{"name": "Content-Type", "value": "image/png"}]
    lost = entry("https://api.test/v1/chat/completions", b"{}", b"", False, 0)
    del lost["response"]["content"]["text"]
    preflight = entry("https://api.test/v1/chat/completions", b"", b"", False, 0)
    preflight["request"]["method"] = "OPTIONS"
    preflight["response"]["status"] = 204
    return [image, lost, preflight]


def har_of_recording(path: str, b64: bool) -> dict:
    entries = []
    with RecordingIndex.open(path) as index:
        for n in index.exchanges():
            req = index.line(index.exchange(n).request)
            body = b"".join(c.data_bytes for c in index.chunks(n))
            entries.append(entry(req.url, req.body_bytes, body, b64, n))
    return {
        "log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}
    }


def write(tmp_path, name: str, doc: dict, indent: bool = True) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2) if indent else json.dumps(doc))
    return str(path)


def calls(path: str) -> list:
    return [[(c.id, c.name, c.arguments) for c in s.tool_calls] for s in analyze(path).streams]


@pytest.mark.parametrize("b64", [False, True], ids=["text", "base64"])
@pytest.mark.parametrize("sample", [OPENAI, ALIBABA])
def test_a_har_reads_to_the_same_calls_as_its_recording(tmp_path, sample, b64):
    doc = har_of_recording(sample, b64)
    doc["log"]["entries"][1:1] = noise()
    path = write(tmp_path, "capture.har", doc, indent=not b64)
    har, recording = analyze(path), analyze(sample)
    assert har.format == HAR
    assert calls(path) == calls(sample) and any(calls(sample))
    assert [s.ended for s in har.streams] == [s.ended for s in recording.streams]
    assert [sorted(a.kind for a in s.anomalies) for s in har.streams] == [
        sorted(a.kind for a in s.anomalies) for s in recording.streams
    ]
    # the conversation contract is checked across the entries, as across exchanges
    assert [f.kind for f in har.contract] == [f.kind for f in recording.contract]
    assert har.compared == recording.compared == 1
    assert any("times are approximate" in n for n in har.notes)
    assert (
        "entries[2] skipped: the response body was not saved (no response.content.text)"
        in har.notes
    )
    assert "2 other entries (not an event stream or a chat completion) left out" in har.notes


@pytest.mark.parametrize("b64", [False, True], ids=["text", "base64"])
def test_a_har_reads_to_the_same_calls_as_the_raw_sse(tmp_path, b64):
    with open(GEMINI, "rb") as f:
        body = f.read()
    request = orjson.dumps({"model": "gemini", "messages": [], "stream": True})
    doc = {
        "log": {
            "version": "1.2",
            "entries": [entry("https://g.test/v1/chat/completions", request, body, b64, 1)],
        }
    }
    path = write(tmp_path, "gemini.har", doc)
    assert calls(path) == calls(GEMINI) and calls(GEMINI)[0]
    with open_input(path) as source:  # every byte kept, cut at the events
        reads = source.exchange(1).reads
        got = [reads.read(i) for i in range(len(reads))]
    assert b"".join(d for d, _ in got) == body
    assert len(got) > 3 and [t for _, t in got] == sorted(t for _, t in got)
    assert got[-1][1] == 120_000_000  # the last read at start + send + wait + receive


def inspect(*args: str):
    return CliRunner().invoke(main, ["inspect", *args])


def test_inspect_json_and_secrets(tmp_path):
    path = write(tmp_path, "openai.har", har_of_recording(OPENAI, False))
    result = inspect(path, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["format"] == "har" and len(doc["streams"]) == 2
    assert SECRET not in result.stdout
    text = inspect(path)
    assert "(har, 2 exchanges, 2 streams)" in text.output and SECRET not in text.output


def test_a_cookie_kept_only_in_the_har_cookies_array_is_masked_where_it_is_echoed(tmp_path):
    cookie = "s95-har-cookie-value"
    doc = har_of_recording(OPENAI, False)
    request = doc["log"]["entries"][0]["request"]
    request["cookies"] = [{"name": "sid", "value": cookie}]
    request["postData"]["text"] = request["postData"]["text"].replace(
        "{", f'{{"note": "{cookie}", ', 1
    )
    path = write(tmp_path, "cookie.har", doc)
    out = tmp_path / "from-har.jsonl"
    result = CliRunner().invoke(
        main, ["export", path, "--exchange", "1", "--format", "recording", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert cookie not in out.read_text() and '\\"note\\": \\"[REDACTED' in out.read_text()


def test_export_turns_a_har_into_a_recording(tmp_path):
    path = write(tmp_path, "openai.har", har_of_recording(OPENAI, True))
    out = tmp_path / "from-har.jsonl"
    result = CliRunner().invoke(
        main, ["export", path, "--exchange", "2", "--format", "recording", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert SECRET not in out.read_text() and "Bearer [REDACTED]" in out.read_text()
    assert '"created":"2026-11-30T10:00:01.000000Z"' in out.read_text()  # the capture's time
    assert calls(str(out)) == [calls(OPENAI)[1]]
    # what holds for every exchange of a HAR goes with it: its times are approximate
    assert any("times are approximate" in n for n in analyze(str(out)).notes)
    with RecordingIndex.open(out) as exported, RecordingIndex.open(OPENAI) as original:
        assert b"".join(c.data_bytes for c in exported.chunks(1)) == b"".join(
            c.data_bytes for c in original.chunks(2)
        )


def test_playback_serves_a_har(tmp_path):
    path = write(tmp_path, "openai.har", har_of_recording(OPENAI, False))
    with RecordingIndex.open(OPENAI) as index:
        second = index.line(index.exchange(2).request).json_body()
        expected = b"".join(c.data_bytes for c in index.chunks(2))
    with httpx2.Client(transport=playback_transport(path), base_url="http://p/v1") as client:
        assert client.post("/chat/completions", json=second).content == expected


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"log": {"version": "1.1", "entries": []}}',
            'HAR version "1.1": streamscope reads HAR 1.2',
        ),
        ('{"log": {"version": "1.2"}}', 'the HAR has no "log.entries" list'),
        (
            '{"log": {"version": "1.2", "entries": [}}',
            "line 1 (byte 39): not valid JSON, so not a HAR file",
        ),
        (
            '{"log": {"version": "1.2", "entries": []}}',
            "the HAR holds no event stream or chat completion",
        ),
        ('{\n  "log": []\n}', 'a HAR file is a JSON object with a "log" object'),
    ],
)
def test_bad_har_is_one_line_and_exit_2(tmp_path, text, message):
    path = tmp_path / "bad.har"
    path.write_text(text)
    result = inspect(str(path))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"streamscope: {path}:") and message in lines[0]


def test_entries_that_cannot_be_read_are_skipped_with_a_note(tmp_path):
    doc = har_of_recording(OPENAI, True)
    doc["log"]["entries"][0]["response"]["content"]["text"] = "not base64!"
    doc["log"]["entries"].append(entry("https://x.test/v1/chat/completions", b"{}", b"", False, 3))
    doc["log"]["entries"][-1]["response"]["status"] = 0  # cancelled in the browser
    path = write(tmp_path, "partly.har", doc)
    analysis = analyze(path)
    assert len(analysis.streams) == 1 and calls(path) == [calls(OPENAI)[1]]
    assert "entries[0] skipped: response.content.text is not valid base64" in analysis.notes
    assert any(
        n.startswith("entries[2] skipped: its response has no status") for n in analysis.notes
    )


@pytest.mark.parametrize("bad", [1, 2])
def test_a_har_whose_every_entry_is_skipped_says_why_in_its_one_line(tmp_path, bad):
    doc = har_of_recording(OPENAI, True)
    for e in doc["log"]["entries"][:bad]:
        e["response"]["content"]["text"] = "!!!"
    del doc["log"]["entries"][bad:]
    path = write(tmp_path, "skipped.har", doc)
    result = inspect(path)
    assert result.exit_code == 2
    why = "(entries[0] skipped: response.content.text is not valid base64"
    assert result.output == (
        f"streamscope: {path}: the HAR holds no event stream or chat completion to read "
        f"{why}{'; 2 entries skipped' if bad == 2 else ''})\n"
    )


def test_a_mitmproxy_har_is_read_and_exported_whole(tmp_path):
    """mitmproxy's own HAR layout: three exchanges (two streams, a non-stream turn), a
    request that is not one; the report ends on the contract line, and `export --format
    recording` writes every exchange with the notes."""
    text = inspect(MITMPROXY)
    assert text.exit_code == 0, text.output
    assert "(har, 3 exchanges, 2 streams)" in text.output
    assert (
        "Conversation contract: every assembled call came back unchanged, every result matched."
        in text.output
    )
    assert "sk-proj-" not in text.output
    out = tmp_path / "whole.jsonl"
    result = CliRunner().invoke(
        main, ["export", MITMPROXY, "--format", "recording", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    har, exported = analyze(MITMPROXY), analyze(str(out))
    with RecordingIndex.open(out) as index:
        assert index.exchanges() == [1, 2, 3]
        assert index.header.notes == har.notes
    assert exported.notes == har.notes and len(har.notes) == 3
    assert "1 other entry (not an event stream or a chat completion) left out" in har.notes
    assert [e.url for e in exported.exchanges] == [e.url for e in har.exchanges]
    assert calls(str(out)) == calls(MITMPROXY) == calls(OPENAI)
    assert [f.kind for f in exported.contract] == [f.kind for f in har.contract] == []
    assert exported.compared == har.compared == 1  # the stream whose calls came back
    assert "sk-proj-" not in out.read_text() and "Bearer [REDACTED]" in out.read_text()
    assert '"created":"2026-11-30T09:15:02.318406Z"' in out.read_text()
    # mitmproxy times TLS apart from connect: the body starts after both (ssl 61.77 ms)
    with open_input(MITMPROXY) as source:
        first = source.exchange(1)
        assert first.response.t_ns == round((38.41 + 61.77 + 0.84 + 255.6) * 1e6)
        assert first.reads.read(len(first.reads) - 1)[1] == first.end.t_ns
    report = inspect(str(out)).output
    assert "i a HAR keeps no per-read timing" in report and "Conversation contract:" in report


def test_an_empty_body_is_skipped_with_a_note(tmp_path):
    """mitmproxy writes `"text": ""` for a stream it did not keep; an error's empty body
    still says the request failed."""
    doc = har_of_recording(OPENAI, False)
    doc["log"]["entries"][0]["response"]["content"]["text"] = ""
    failed = entry("https://x.test/v1/chat/completions", b"{}", b"", False, 3)
    failed["response"]["status"] = 503
    failed["response"]["content"]["mimeType"] = "application/json"
    failed["response"]["headers"] = [{"name": "Content-Type", "value": "application/json"}]
    doc["log"]["entries"].append(failed)
    analysis = analyze(write(tmp_path, "empty.har", doc))
    assert (
        'entries[0] skipped: its response body is empty (response.content.text is ""): the body '
        "was not saved, or nothing was received"
    ) in analysis.notes
    assert [s.frames for s in analysis.streams] == [20]  # no 0-frame stream
    assert [i.status for i in analysis.exchanges] == [200, 503]


@pytest.mark.parametrize(
    "text, said",
    [
        ("ZGF0YTogeyJ9Cg==é", '"é" at character 16 is not ASCII'),
        ("ZGF0YTogeyJ9Cg", None),
    ],
)
def test_a_base64_error_is_said_in_our_words(tmp_path, text, said):
    doc = har_of_recording(OPENAI, True)
    doc["log"]["entries"][1]["response"]["content"]["text"] = text
    analysis = analyze(write(tmp_path, "bad64.har", doc))
    note = "entries[1] skipped: response.content.text is not valid base64"
    assert (f"{note} ({said})" if said else note) in analysis.notes
    assert not any("ASCII characters" in n for n in analysis.notes)


def test_times_it_cannot_place_are_said_not_raised(tmp_path):
    """A start with no zone among zoned ones (read as UTC), and timings that are no
    milliseconds: the entries are read, the timings said in a note."""
    doc = har_of_recording(OPENAI, False)
    doc["log"]["entries"][0]["startedDateTime"] = "2026-11-30T10:00:01"
    doc["log"]["entries"][1]["timings"] = {"send": "1", "wait": 1e300, "receive": 79}
    doc["log"]["entries"].append(dict(doc["log"]["entries"][1], timings="x"))
    analysis = analyze(write(tmp_path, "times.har", doc))
    assert calls(write(tmp_path, "times.har", doc)) == [*calls(OPENAI), calls(OPENAI)[1]]
    assert analysis.notes[2:] == [
        'entries[1] timings.send "1" is not a time in milliseconds: read as absent',
        "entries[1] timings.wait 1e+300 is not a time in milliseconds: read as absent",
        'entries[2] timings "x" is not an object of timings: read as none',
    ]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
@pytest.mark.anyio
async def test_replay_opens_a_har_like_a_recording(tmp_path):
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import ExchangesScreen, StreamScreen

    doc = har_of_recording(ALIBABA, True)
    doc["log"]["entries"][1:1] = noise()  # 4 notes: 2 of every HAR, 1 skipped, 1 left out
    path = write(tmp_path, "alibaba.har", doc)
    app = ReplayApp(path)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(200):
            if isinstance(app.screen, ExchangesScreen):
                break
            await pilot.pause(0.05)
        assert app.screen.query_one("#exchanges").row_count == 2
        notes = [str(n.render()) for n in app.screen.query(".note")]
        assert any("times are approximate" in n for n in notes), notes
        assert notes[-1] == "i and 1 more note: streamscope inspect lists them"
        await pilot.press("enter")
        for _ in range(200):
            if isinstance(app.screen, StreamScreen):
                break
            await pilot.pause(0.05)
        assert app.screen.model.exchange == 1 and app.screen.model.total == 8
        assert "frame 0/8 · times approximate" in str(app.screen.query_one("#info").render())
        await pilot.pause()  # (the screen composed before a key is pressed, as a person's)
        await pilot.press("right")
        for _ in range(100):
            info = str(app.screen.query_one("#info").render())
            if "frame 1/8" in info:
                break
            await pilot.pause(0.05)
        assert " (approximate)" in info, info
        await pilot.press("q", "q")


def test_non_stream_entries_are_kept_when_a_dialect_claims_their_request(tmp_path):
    """Not only Chat Completions': every API a dialect reads (its path tells), and no
    other JSON call of the page."""

    def json_entry(url: str, second: int) -> dict:
        made = entry(url, b'{"model": "m", "messages": []}', b'{"ok": true}', False, second)
        made["response"]["content"]["mimeType"] = "application/json"
        made["response"]["headers"] = [{"name": "Content-Type", "value": "application/json"}]
        return made

    urls = [
        "https://api.test/v1/chat/completions",
        "https://api.anthropic.test/v1/messages",
        "https://api.test/v1/responses",
        "https://g.test/v1beta/models/gemini-2.5-flash:generateContent",
        "https://api.test/v1/embeddings",  # no dialect's: left out
        "https://g.test/v1beta/models/gemini-2.5-flash:countTokens",  # ditto
    ]
    doc = {
        "log": {
            "version": "1.2",
            "creator": {"name": "test", "version": "1"},
            "entries": [json_entry(url, n) for n, url in enumerate(urls)],
        }
    }
    with open_input(write(tmp_path, "json.har", doc)) as source:
        kept = [source.exchange(n).request.url for n in source.numbers()]
    assert kept == urls[:4]


def test_every_line_of_a_body_held_in_one_read_is_read(tmp_path):
    # a JSON lines body is one read in a HAR; at a path no dialect claims, its first line
    # tells the dialect, and the lines after it in the same read still reach the engine
    lines = [
        {"model": "m", "message": {"role": "assistant", "content": "Hel"}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": "lo"}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True},
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    e = entry("http://127.0.0.1:9/gateway/generate", b'{"model": "m"}', body, False, 1)
    e["response"]["headers"] = [{"name": "Content-Type", "value": "application/x-ndjson"}]
    e["response"]["content"]["mimeType"] = "application/x-ndjson"
    stream = analyze(write(tmp_path, "lines.har", {"log": {"version": "1.2", "entries": [e]}}))
    (one,) = stream.streams
    assert (one.dialect, one.frames, one.content) == ("ollama-chat", 3, "Hello")
    assert not [a for a in one.anomalies if a.kind == "done-line-missing"]


def test_json_rpc_entries_beside_the_model_are_left_out_with_a_note(tmp_path):
    # an agent's capture holds its MCP (or A2A) server's streams too: JSON-RPC over SSE,
    # no model's stream, so no Chat Completions rule speaks of them
    rpc = entry(
        "https://mcp.example/mcp",
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n\n',
        False,
        1,
    )
    chunk = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    chat = entry(
        "https://api.openai.com/v1/chat/completions",
        b'{"model": "gpt-4o", "stream": true, "messages": []}',
        chunk,
        False,
        2,
    )
    analysis = analyze(
        write(tmp_path, "agent.har", {"log": {"version": "1.2", "entries": [rpc, chat]}})
    )
    assert [s.dialect for s in analysis.streams] == ["chat-completions"]
    assert any("1 JSON-RPC entry" in note for note in analysis.notes)
