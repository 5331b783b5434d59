"""`export --format vcr`: a vcrpy / pytest-recording cassette that reads back through
streamscope's cassette input with the same calls and findings, holds no credential, and
(with --minimal) replays the quirk to the real openai SDK under pytest-recording."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from streamscope.cli import main

from .test_export import only
from .test_export_secrets import BODY_KEY, har
from .test_har import SECRET

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDINGS = os.path.join(os.path.dirname(HERE), "recordings")
CASSETTES = os.path.join(HERE, "fixtures", "cassettes")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def export(tmp_path, *args: str, name: str = "out.yaml") -> str:
    out = str(tmp_path / name)
    done = run("export", *args, "--format", "vcr", "-o", out)
    assert done.exit_code == 0, done.output
    return out


def load(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def reading(path: str) -> list:
    """What inspect finds in each stream: its calls, its anomalies, its clients' calls."""
    done = run("inspect", path, "--json")
    assert done.exit_code in (0, 1), done.output
    doc = json.loads(done.stdout)
    return [
        (
            [(c["id"], c["name"], c["arguments"]) for c in s["tool_calls"]],
            sorted((a["kind"], a["frame"]) for a in s["anomalies"]),
            {k: v["differs"] for k, v in s["strategies"].items()},
        )
        for s in doc["streams"]
    ] + [sorted(x["kind"] for x in doc["contract"])]


def test_the_whole_conversation_reads_back_as_the_recording(tmp_path):
    source = os.path.join(RECORDINGS, "openai.jsonl")
    out = export(tmp_path, source)
    doc = load(out)
    assert doc["version"] == 1 and len(doc["interactions"]) == 2
    first = doc["interactions"][0]
    assert first["request"]["uri"] == "https://api.openai.com/v1/chat/completions"
    assert "authorization" not in {k.lower() for k in first["request"]["headers"]}
    assert first["response"]["status"] == {"code": 200, "message": "OK"}
    assert reading(out) == reading(source)
    assert "string: |" in Path(out).read_text(encoding="utf-8")  # (an SSE body reads line by line)


def test_minimal_is_the_one_exchange_with_the_same_quirk(tmp_path):
    source = os.path.join(RECORDINGS, "args-resent.jsonl")
    out = export(tmp_path, source, "--minimal")
    doc = load(out)
    assert len(doc["interactions"]) == 1
    minimal = run("export", source, "--minimal", "--format", "recording", "-o", str(tmp_path / "m"))
    assert minimal.exit_code == 0
    assert reading(out)[0] == reading(str(tmp_path / "m"))[0]
    # FILE#N: the same exchange, unshrunk
    assert reading(export(tmp_path, f"{source}#1", name="one.yaml"))[0] == reading(source)[0]


def test_no_credential_is_in_the_cassette(tmp_path):
    out = export(tmp_path, har(tmp_path))
    text = Path(out).read_text(encoding="utf-8")
    for secret in (SECRET, BODY_KEY, base64.b64encode(SECRET.encode()).decode()):
        assert secret not in text
    request = yaml.safe_load(text)["interactions"][0]["request"]
    assert "authorization" not in {k.lower() for k in request["headers"]}


def test_a_compressed_body_stays_its_bytes(tmp_path):
    """A gzip body is no UTF-8: `!!binary`, as vcrpy stores it, its coding kept."""
    source = os.path.join(CASSETTES, "vcrpy-gzip.yaml")
    out = export(tmp_path, source)
    doc = load(out)
    theirs = load(source)
    for mine, given in zip(doc["interactions"], theirs["interactions"], strict=True):
        assert mine["response"]["body"]["string"] == given["response"]["body"]["string"]
        assert isinstance(mine["response"]["body"]["string"], bytes)
    assert reading(out) == reading(source)


@pytest.mark.parametrize(
    "args, said",
    [
        (["codex-websocket.jsonl"], "vcrpy records no WebSockets"),
        (["gemini-no-index.sse"], "a saved body holds no request"),
        (["openai.jsonl", "--turn", "1"], "vcrpy records no WebSockets"),
    ],
)
def test_what_no_cassette_holds_is_one_line(args, said):
    done = run("export", os.path.join(RECORDINGS, args[0]), *args[1:], "--format", "vcr")
    assert done.exit_code == 2 and said in done.output
    assert len(done.output.strip().splitlines()) == 1 and "Traceback" not in done.output


def test_without_pyyaml_one_line_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)
    done = run("export", os.path.join(RECORDINGS, "openai.jsonl"), "--format", "vcr")
    assert done.exit_code == 2 and "streamscope[cassettes]" in done.output


TEST_MODULE = """
import sys

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState


@pytest.mark.vcr
def test_replay():
    client = openai.OpenAI(api_key="sk-test", base_url={base!r}, max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4o", messages=[{{"role": "user", "content": "hi"}}], stream=True
    )
    state = ChatCompletionStreamState()
    for chunk in stream:
        state.handle_chunk(chunk)
    calls = state.get_final_completion().choices[0].message.tool_calls
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == {expected!r}
    assert "streamscope" not in sys.modules
"""


@pytest.mark.slow
def test_a_minimal_cassette_replays_the_quirk_under_pytest_recording(tmp_path):
    """The openai SDK, replayed the minimal cassette by pytest-recording in a Python where
    only they and pytest import (streamscope cannot), assembles the calls streamscope predicts for it: the id and
    name the provider sent twice, doubled."""
    source = os.path.join(RECORDINGS, "args-resent.jsonl")
    folder = tmp_path / "cassettes" / "test_quirk"
    folder.mkdir(parents=True)
    export(tmp_path, source, "--minimal", name="cassettes/test_quirk/test_replay.yaml")
    done = run("inspect", source, "--json")
    stream = json.loads(done.stdout)["streams"][0]
    sdk = stream["strategies"]["openai-sdk"]
    assert sdk["differs"]  # (the quirk: what the SDK builds is not robust's)
    expected = [(c["id"], c["name"], c["arguments"]) for c in sdk["tool_calls"]]
    doc = yaml.safe_load((folder / "test_replay.yaml").read_text(encoding="utf-8"))
    base = doc["interactions"][0]["request"]["uri"].removesuffix("/chat/completions")
    (tmp_path / "test_quirk.py").write_text(TEST_MODULE.format(base=base, expected=expected))
    # a Python where only openai, pytest and pytest-recording (with what they need) import
    command, env = only("openai", "pytest-recording")
    env = {k: v for k, v in env.items() if not k.startswith(("PYTHON", "OPENAI_"))}
    args = ["--record-mode=none", "-p", "recording", "-p", "no:cacheprovider", "-q"]
    ran = subprocess.run(
        [*command, *args, "test_quirk.py"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout
