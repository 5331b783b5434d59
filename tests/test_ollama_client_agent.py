"""An agent on the real `ollama` Python client, recorded as a user would: `streamscope
record -- python -m streamscope.demo.ollama_agent` against a local Ollama stand-in (the
bundled two-turn sample served by `serve` on 127.0.0.1), then inspected and exported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from streamscope.playback.serve import ServeServer
from streamscope.providers import OLLAMA

pytest.importorskip("ollama")
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "ollama-two-calls.jsonl"
CLI = [sys.executable, "-m", "streamscope"]


def _first_request() -> dict:
    for line in SAMPLE.read_bytes().splitlines():
        d = orjson.loads(line)
        if d["type"] == "request":
            return orjson.loads(d["body"]) if isinstance(d["body"], str) else d["body"]
    raise AssertionError("the sample has no request")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ollama") / "agent.jsonl"
    env = {**os.environ, "AGENT_REQUEST": json.dumps(_first_request()), "AGENT_MODEL": "qwen3:8b"}
    with ServeServer([str(SAMPLE)], 0, speed=0) as server:
        done = subprocess.run(
            [*CLI, "record", "--ollama-upstream", server.base_url_for(OLLAMA), "-o", str(out)]
            + ["--", sys.executable, "-m", "streamscope.demo.ollama_agent"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])  # the agent's own account
    assert [c["function"]["arguments"] for c in said["calls"]] == [
        {"city": "Paris"},
        {"city": "Lyon"},
    ]
    assert said["answer"] == "It is 14 °C in Paris and 17 °C in Lyon."
    return out


def test_inspect_shows_the_calls_and_the_contract_holds(recorded):
    done = subprocess.run(
        [*CLI, "inspect", "--json", "--strict", str(recorded)], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    doc = orjson.loads(done.stdout)
    first, second = doc["streams"]
    assert (first["dialect"], first["framing"], first["ended"]) == ("ollama-chat", "ndjson", "done")
    assert [(c["id"], c["name"], c["arguments"]) for c in first["tool_calls"]] == [
        ("", "get_weather", '{"city":"Paris"}'),
        ("", "get_weather", '{"city":"Lyon"}'),
    ]
    assert first["strategies"]["ollama-python"]["differs"] is False
    assert second["tool_calls"] == [] and second["content"].startswith("It is 14")
    assert doc["contract"] == []  # the client sent the calls back and answered each by name
    text = subprocess.run([*CLI, "inspect", str(recorded)], capture_output=True, text=True)
    assert "Conversation contract: every assembled call came back unchanged" in text.stdout


def test_the_exported_module_passes_through_the_real_client(recorded, tmp_path):
    module = tmp_path / "test_exported.py"
    done = subprocess.run(
        [*CLI, "export", str(recorded), "--format", "pytest", "-o", str(module)],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # it needs no plugin
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


def test_playback_transport_answers_the_ollama_client():
    import ollama

    from streamscope.playback import playback_transport

    client = ollama.Client(transport=playback_transport(str(SAMPLE)))
    body = _first_request()
    lines = list(client.chat(model=body["model"], messages=body["messages"], stream=True))
    calls = [c for line in lines for c in line.message.tool_calls or []]
    assert [dict(c.function.arguments) for c in calls] == [{"city": "Paris"}, {"city": "Lyon"}]
    assert lines[-1].done is True and lines[-1].done_reason == "stop"
