"""`export --format pytest` of a stream one of whose events carries a key holding a lone
surrogate (`"\\ud800x"`, sent as its JSON escape, which Python's json reads): pydantic's
`to_dict()` cannot write such an event (it raises UnicodeEncodeError), and google-genai's
JSON-mode `model_dump` writes the key mangled (U+FFFD for each of its bytes), so every
module that reads an SDK's models reads that one off the model instead
(dialects/sdk_dict.py). Each dialect's module, run in this process, is green on it. (A
session's module, which the SDK's WebSocket client reads, runs in test_export_session.py's
batch; Chat Completions' in test_export_pytest_module.py. Ollama's module needs no such
reading, its python-mode dump keeping the key, and Converse Stream's reads botocore's
dicts, no model.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from streamscope.cli import main

from . import anthropic_stream as anthropic
from . import gemini_stream as gemini
from . import responses_stream as responses
from .bedrock_invoke import chunk, events_json, write_recording
from .dialects.ollama import events as ollama
from .dialects.realtime.events import TWO_CALLS, data

# the key as a provider sends it: the escape, in JSON text
KEY = b'"\\ud800x":1'


def keyed(event: bytes, after: bytes) -> bytes:
    """`event` (its JSON, or an SSE event of it) with KEY set right after the first
    `after` it holds (a member: `"type":"content_block_start"`)."""
    assert after in event, (after, event)
    return event.replace(after, after + b"," + KEY, 1)


def module(source: Path) -> tuple[str, dict]:
    """The module `source` exports as, and its names once run."""
    out = source.parent / "test_exported.py"
    result = CliRunner().invoke(main, ["export", str(source), "--format", "pytest", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "\\\\ud800x" in text  # the escape as sent, in the module's literal
    scope: dict = {"__name__": "exported"}
    exec(compile(text, str(out), "exec"), scope)
    return text, scope


@pytest.mark.parametrize(
    "events, after, client",
    [
        # in the event itself
        (
            responses.function_call_events,
            b'"type":"response.output_item.added"',
            "responses.create(",
        ),
        # in the tool_use block the event starts: a model inside the event's model
        (anthropic.tool_use_events, b'"type":"tool_use"', "anthropic.Anthropic("),
    ],
    ids=["responses", "anthropic"],
)
def test_an_sse_event_holding_the_key_is_read(tmp_path, events, after, client):
    source = tmp_path / "stream.sse"
    source.write_bytes(b"".join(keyed(e, after) if after in e else e for e in events()))
    text, scope = module(source)
    assert client in text
    scope["test_the_calls_streamscope_assembled"]()  # green: no UnicodeEncodeError


def test_an_anthropic_event_on_bedrock_holding_the_key_is_read(tmp_path):
    start = b'"type":"content_block_start"'
    events = [keyed(e, start) if start in e else e for e in events_json()]
    source = tmp_path / "bedrock.jsonl"
    write_recording(str(source), b"".join(map(chunk, events)), reads=5)
    text, scope = module(source)
    assert "anthropic.AnthropicBedrock(" in text
    # (the module's `aws` fixture masks the machine's AWS settings: its client is handed
    # dummy credentials and a region of its own, so the test needs none of them here)
    scope["test_the_calls_streamscope_assembled"](None)


def test_a_realtime_item_holding_the_key_is_read(tmp_path):
    pytest.importorskip("websockets")
    call = b'"type":"function_call"'  # in the item each call's events carry
    lines = [keyed(line, call) if call in line else line for line in map(data, TWO_CALLS)]
    source = tmp_path / "realtime.jsonl"
    source.write_bytes(b"".join(line + b"\n" for line in lines))
    text, scope = module(source)
    assert "RealtimeConnection(" in text
    scope["test_the_calls_streamscope_assembled"]()


@pytest.mark.parametrize(
    "key",
    [
        KEY,
        # two keys pydantic's JSON mode writes alike ("\ufffd\ufffd\ufffdx"), one in a
        # list inside the arguments
        b'"\\ud800x":1,"nested":[{"\\udbffx":2}]',
    ],
    ids=["in-the-args", "two-alike"],
)
def test_a_gemini_call_whose_args_hold_the_key_is_read(tmp_path, key):
    # (the SDK keeps no key it does not model but in a call's free-form args)
    pytest.importorskip("google.genai")
    city = b'"city":"Paris"'
    chunks = [gemini._event(doc, crlf=False) for doc in gemini.whole_calls()]
    source = tmp_path / "gemini.sse"
    source.write_bytes(b"".join(c.replace(city, city + b"," + key, 1) for c in chunks))
    text, scope = module(source)
    assert "generate_content_stream(" in text
    assert "\ud800x" in scope["EXPECTED"][0]["args"]  # streamscope's reading: as sent
    scope["test_the_calls_streamscope_assembled"]()  # green: the keys as sent


def test_an_ollama_call_whose_arguments_hold_the_key_is_read(tmp_path):
    pytest.importorskip("ollama")
    args = {"city": "Paris", "\ud800x": 1}  # json.dumps sends it as the escape
    source = tmp_path / "ollama.ndjson"
    source.write_bytes(ollama.body([ollama.line("", ollama.call(args=args)), ollama.final()]))
    text, scope = module(source)
    assert "ollama.Client(" in text
    assert scope["EXPECTED"][0]["arguments"] == args
    scope["test_the_calls_streamscope_assembled"]()
