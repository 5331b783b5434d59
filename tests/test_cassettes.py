"""Cassettes (vcrpy / pytest-recording YAML and JSON, go-vcr v2) as inputs: the same
calls and conversation contract as the recording they were made from
(tests/fixtures/cassettes/make_cassettes.py), secrets masked, hostile YAML refused in one
line."""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.inputs import CASSETTE, CASSETTE_JSON
from streamscope.inputs.cassette import TIMING_NOTE
from streamscope.playback import playback_transport
from streamscope.recording import RecordingIndex

HERE = os.path.dirname(os.path.abspath(__file__))
CASSETTES = os.path.join(HERE, "fixtures", "cassettes")
RECORDING = os.path.join(os.path.dirname(HERE), "recordings", "openai.jsonl")
SECRET = "sk-cassette-secret-0042"


def at(name: str) -> str:
    return os.path.join(CASSETTES, name)


def inspect(*args: str):
    return CliRunner().invoke(main, ["inspect", *args])


def calls(doc: dict) -> list:
    return [[(c["id"], c["name"], c["arguments"]) for c in s["tool_calls"]] for s in doc["streams"]]


@pytest.fixture(scope="module")
def recording() -> dict:
    return json.loads(inspect(RECORDING, "--json").stdout)


@pytest.mark.parametrize(
    "name, kind",
    [
        ("vcrpy-tool-call.yaml", CASSETTE),
        ("vcrpy-tool-call.json", CASSETTE_JSON),
        ("go-vcr-v1.yaml", CASSETTE),
        ("go-vcr-v2.yaml", CASSETTE),
        ("vcrpy-gzip.yaml", CASSETTE),
    ],
)
def test_a_cassette_reads_as_the_recording_it_holds(recording, name, kind):
    result = inspect(at(name), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["format"] == kind and len(doc["streams"]) == 2
    assert calls(doc) == calls(recording) and calls(doc)[0]  # the tool call, then the answer
    assert [s["ended"] for s in doc["streams"]] == [s["ended"] for s in recording["streams"]]
    # the contract across the turns: the calls came back in the follow-up's history
    assert doc["contract"] == recording["contract"]
    assert doc["streams"][0]["tool_calls"][0]["result"]["exchange"] == 2
    # a cassette holds no times: the tools' run time is unknown, not 0
    assert doc["streams"][0]["continued_by"] == {
        "exchange": 2,
        "tool_time_ms": None,
        "timing": "unknown",
    }
    assert TIMING_NOTE in result.stdout
    assert SECRET not in result.stdout  # the authorization header's key, masked


def test_each_body_is_one_read_and_times_are_approximate():
    analysis = analyze(at("vcrpy-tool-call.yaml"))
    assert TIMING_NOTE in analysis.notes
    text = inspect(at("vcrpy-tool-call.yaml"))
    assert "(cassette, 2 exchanges, 2 streams)" in text.output and SECRET not in text.output


@pytest.mark.parametrize("name", ["vcrpy-tool-call.yaml", "vcrpy-tool-call.json"])
def test_a_gzip_compressed_cassette_reads_as_the_one_it_holds(
    tmp_path, recording, name, monkeypatch
):
    """langchain keeps its partners' cassettes as .yaml.gz."""
    path = tmp_path / f"{name}.gz"
    path.write_bytes(gzip.compress(Path(at(name)).read_bytes()))
    result = inspect(str(path), "--json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert calls(got) == calls(recording) and got["contract"] == recording["contract"]
    assert any("gzip-compressed: read decompressed" in n for n in got["notes"])
    path.write_bytes(gzip.compress(Path(at(name)).read_bytes())[:-40])  # cut short
    cut = inspect(str(path))
    assert cut.exit_code == 2 and "cut short" in cut.output, cut.output
    assert len(cut.output.strip().splitlines()) == 1
    half = len(doc := Path(at(name)).read_bytes()) // 2  # two members, as gzip -dc reads them
    path.write_bytes(gzip.compress(doc[:half]) + gzip.compress(doc[half:]))
    assert calls(json.loads(inspect(str(path), "--json").stdout)) == calls(recording)
    # a bomb is refused before it is built: past RATIO times its size, or past the cap
    from streamscope.core import codings
    from streamscope.inputs import cassette

    path.write_bytes(gzip.compress(doc + b"\n" * (1 << 20)))
    monkeypatch.setattr(codings, "SLACK", 0)
    monkeypatch.setattr(codings, "RATIO", 100)  # (deflate gives 1,000 times at most)
    bomb = inspect(str(path))
    assert bomb.exit_code == 2 and "times its size (a decompression bomb?)" in bomb.output
    monkeypatch.undo()
    monkeypatch.setattr(cassette, "MAX_GUNZIPPED", 1 << 16)
    bomb = inspect(str(path))
    assert bomb.exit_code == 2 and "decodes to more than 65536 bytes" in bomb.output, bomb.output


def test_a_billion_laughs_is_refused_in_one_line_quickly():
    start = time.monotonic()
    result = inspect(at("billion-laughs.yaml"))
    assert time.monotonic() - start < 5
    assert result.exit_code == 2
    line = result.output.strip()
    assert "\n" not in line and "billion-laughs.yaml: line " in line and "alias bomb" in line


def test_one_long_string_referenced_many_times_is_refused_as_a_bomb(tmp_path):
    """Few nodes, much text: a megabyte anchored once and aliased a thousand times in the
    headers (each alias a gigabyte's worth of work for the masking that reads them)."""
    refs = "\n".join("      - *B" for _ in range(1000))
    path = tmp_path / "amplified.yaml"
    path.write_text(
        "interactions:\n- request:\n    method: POST\n    uri: https://api.openai.com/v1/x\n"
        f'    headers:\n      x-long:\n      - &B "{"x" * 2**20}"\n{refs}\n'
        "  response: {status: {code: 200}, body: {string: ''}}\nversion: 1\n"
    )
    result = inspect(str(path))
    assert result.exit_code == 2
    line = result.output.strip()
    assert "\n" not in line and "amplified.yaml: line " in line and "alias bomb" in line


def test_aliases_a_yaml_dumper_writes_for_a_shared_object_read(tmp_path):
    """PyYAML's dumper writes an object met twice once, as an anchor and an alias."""
    import yaml

    with open(at("vcrpy-tool-call.yaml"), encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    shared = doc["interactions"][0]["response"]["headers"]
    doc["interactions"][1]["response"]["headers"] = shared
    path = tmp_path / "shared.yaml"
    path.write_text(yaml.dump(doc))
    assert "&id001" in path.read_text()
    result = inspect(str(path), "--json")
    assert result.exit_code == 0, result.output


def test_a_field_of_the_wrong_type_is_named():
    result = inspect(at("vcrpy-wrong-type.yaml"), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["streams"]) == 1
    notes = inspect(at("vcrpy-wrong-type.yaml")).output
    assert 'interactions[0].response.status.code "two hundred" is not a status code' in notes
    assert 'interactions[1].request.headers "x-list": a value that is not text' in notes


@pytest.mark.parametrize(
    "text, said",
    [
        ("interactions:\n- request: !!python/object/apply:os.system [echo hi]\n", "line 2"),
        ("interactions: {a: [1, 2\n", "not a YAML cassette"),
        ("interactions: 3\n", 'a mapping with an "interactions" list'),
        (
            "interactions:\n- 3\n- {request: {}, response: {}}\n",
            "holds no event stream or chat completion to read (interactions[0] skipped: it is "
            "3, not a mapping with a request and a response; 2 interactions skipped)",
        ),
        ("version: 1\ninteractions:\n- " + "[" * 300 + "\n", "nested more than 256"),
    ],
)
def test_hostile_yaml_is_one_line(tmp_path, text, said):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = inspect(str(path))
    assert result.exit_code == 2
    assert said in result.output and result.output.count("\n") == 1, result.output


def test_without_pyyaml_a_yaml_cassette_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml fails
    result = inspect(at("vcrpy-tool-call.yaml"))
    assert result.exit_code == 2
    assert "pip install 'streamscope[cassettes]'" in result.output
    assert inspect(at("vcrpy-tool-call.json")).exit_code == 0  # JSON needs nothing


def test_playback_serves_a_cassette():
    with RecordingIndex.open(RECORDING) as index:
        second = index.line(index.exchange(2).request).json_body()
        expected = b"".join(c.data_bytes for c in index.chunks(2))
    transport = playback_transport(at("vcrpy-gzip.yaml"))
    with httpx2.Client(transport=transport, base_url="http://p/v1") as client:
        assert client.post("/chat/completions", json=second).read() == expected


def test_the_authorization_key_is_masked_in_the_bodies_too(tmp_path):
    """The key the requests carried is masked wherever it appears (here the model echoes
    it), as a recording's is."""
    with open(at("vcrpy-tool-call.json"), encoding="utf-8") as f:
        doc = json.load(f)
    body = doc["interactions"][1]["response"]["body"]
    body["string"] = body["string"].replace('"content":"It\'s"', f'"content":"It\'s {SECRET}"')
    assert SECRET in body["string"]
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(doc))
    result = inspect(str(path), "--json")
    assert result.exit_code == 0, result.output
    streams = json.loads(result.stdout)["streams"]
    assert streams[1]["content"].startswith("It's [REDACTED")
    assert SECRET not in result.stdout


def test_a_parsed_body_as_pydantic_ai_keeps_it_reads_as_its_json(tmp_path, recording):
    """pydantic-ai's cassettes keep a JSON request body parsed (`parsed_body`)."""
    with open(at("vcrpy-tool-call.json"), encoding="utf-8") as f:
        doc = json.load(f)
    for x in doc["interactions"]:
        x["request"]["parsed_body"] = json.loads(x["request"].pop("body"))
    path = tmp_path / "parsed.json"
    path.write_text(json.dumps(doc))
    result = inspect(str(path), "--json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert calls(got) == calls(recording) and got["contract"] == recording["contract"]
    assert got["streams"][0]["tool_calls"][0]["result"]["exchange"] == 2
    assert any("parsed_body" in n for n in got["notes"])


@pytest.mark.parametrize("parsed", [False, True])
def test_an_mcp_servers_json_rpc_interactions_are_left_out_as_in_a_har(tmp_path, parsed):
    """A cassette keeps every request's body as it came (base64 inside): the JSON-RPC
    ones (an MCP server's, pydantic-ai's test_mcptoolset cassettes) are no model's."""
    with open(at("vcrpy-tool-call.json"), encoding="utf-8") as f:
        doc = json.load(f)
    rpc = {"id": 0, "jsonrpc": "2.0", "method": "initialize", "params": {}}
    mcp = {
        "request": {"method": "POST", "uri": "https://mcp.example/mcp", "headers": {}},
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["text/event-stream"]},
            "body": {"string": 'event: message\ndata: {"jsonrpc":"2.0","id":0,"result":{}}\n\n'},
        },
    }
    mcp["request"]["parsed_body" if parsed else "body"] = rpc if parsed else json.dumps(rpc)
    doc["interactions"].insert(0, mcp)
    path = tmp_path / "with-mcp.json"
    path.write_text(json.dumps(doc))
    result = inspect(str(path), "--json", "--strict")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert [s["dialect"] for s in got["streams"]] == ["chat-completions"] * 2
    assert any("1 JSON-RPC interaction" in n for n in got["notes"])
    assert not any(n.startswith("every stream in this cassette") for n in got["notes"])


def test_a_cassette_whose_streams_are_all_empty_or_done_only_is_named(tmp_path) -> None:
    cassette = json.loads((Path(CASSETTES) / "vcrpy-tool-call.json").read_text())
    for interaction in cassette["interactions"]:  # (as vcrpy keeps a body it never read)
        interaction["response"]["body"]["string"] = "data: [DONE]\n\n"
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "empty.json").write_text(json.dumps(cassette))
    (folder / "whole.json").write_text((Path(CASSETTES) / "vcrpy-tool-call.json").read_text())
    for interaction in cassette["interactions"]:  # events that built nothing: not empty
        interaction["response"]["body"]["string"] = 'data: {"error": {"message": "quota"}}\n\n'
    (folder / "errors.json").write_text(json.dumps(cassette))
    said = "every stream in this cassette is empty or holds only [DONE]"
    assert any(n.startswith(said) for n in analyze(folder / "empty.json").notes)
    assert not any(n.startswith(said) for n in analyze(folder / "errors.json").notes)
    assert not any(n.startswith(said) for n in analyze(folder / "whole.json").notes)
    scanned = CliRunner().invoke(main, ["scan", str(folder)])
    assert scanned.exit_code == 0
    named = [line for line in scanned.output.splitlines() if said in line]
    assert len(named) == 1 and "empty.json" in named[0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_replay_says_a_cassette_keeps_no_times():
    """No `0ms` where nothing was timed: the info line says so, and each frame's time
    and gap (its row, the timeline) are unknown."""
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import StreamScreen
    from streamscope.tui.widgets.info_line import InfoLine

    app = ReplayApp(os.path.join(CASSETTES, "real", "fantasy-openai-chat-multi-tool.yaml"), 1)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(200):
            if isinstance(app.screen, StreamScreen) and app.screen.model.total:
                break
            await pilot.pause(0.05)
        await pilot.press("right", "right")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StreamScreen)
        info = str(screen.query_one(InfoLine).render())
        assert "no times recorded" in info and "ms" not in info
        assert screen.model.time(2) is None and screen.model.gap(2) is None


def test_a_header_value_of_bytes_is_read_as_utf8(tmp_path):
    """vcrpy keeps botocore's header values as bytes (`!!binary`): UTF-8 ones are kept,
    only bytes that are no UTF-8 are left out, with the note."""
    import yaml

    from streamscope.inputs import open_input

    doc = yaml.safe_load(Path(at("vcrpy-tool-call.yaml")).read_text(encoding="utf-8"))
    headers = doc["interactions"][0]["request"]["headers"]
    headers["content-type"] = [b"application/json"]
    headers["x-odd"] = [b"\xff\xfe"]
    headers["authorization"] = [f"Bearer {SECRET}".encode()]  # (masked as text is)
    path = tmp_path / "bytes.yaml"
    path.write_text(yaml.safe_dump(doc))
    notes = analyze(str(path)).notes
    with open_input(str(path)) as source:
        kept = dict(source.exchange(1).request.headers)
    assert kept["content-type"] == "application/json" and "x-odd" not in kept
    assert SECRET not in kept["authorization"] and SECRET not in str(notes)
    said = [n for n in notes if "not text" in n]
    assert said == ['interactions[0].request.headers "x-odd": a value that is not text, left out']
