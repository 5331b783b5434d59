"""`streamscope demo` picks its agent from the Provider records and names no dialect: every
bundled sample has one, of its transport, and runs; an agent speaks its provider's
dialects, a missing SDK is one line. (What the demo's runs record of some samples is in
test_export.py.)"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main, sample_names, samples_dir
from streamscope.inputs.source import WEBSOCKET
from streamscope.providers import PROVIDERS, DemoAgent, provider_of

from .helpers import run_demo


@pytest.mark.parametrize("sample", sample_names())
def test_every_bundled_sample_has_a_demo_agent_of_its_transport_in_its_providers_record(sample):
    first = analyze(os.path.join(samples_dir(), f"{sample}.jsonl")).exchanges[0]
    provider = provider_of(first.dialect)
    assert provider is not None, first.dialect
    session = first.framing == WEBSOCKET
    agent = provider.demo_agent(first.dialect, session)
    assert agent is not None and agent.dialect == first.dialect
    assert agent.session == session  # a WebSocket sample's agent talks over one
    assert importlib.util.find_spec(agent.argv[0]) is not None, agent.argv


@pytest.mark.slow
@pytest.mark.parametrize("sample", sample_names())
def test_every_listed_sample_runs_its_demo_to_the_end(tmp_path, sample):
    # as a new user runs it: no provider's key or AWS credentials of their own
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("AWS_")
    }
    assert sample in CliRunner().invoke(main, ["demo", "list"]).output.split()
    # the README's sample at its recorded timing, the others without waiting (1-2 s each)
    timed = sample == "alibaba-empty-id"
    done = run_demo(tmp_path, sample, env, *(() if timed else ("--speed", "0")))
    assert done.returncode == 0, done.stderr
    assert ("(recorded timing)" if timed else "(no waiting)") in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    (made,) = (tmp_path / "recordings").glob("streamscope-*.jsonl")
    assert "replay it: streamscope replay" in done.stderr and str(made) in done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])  # the agent's line of what it did
    assert "calls" in said, said
    if sample == "codex-websocket":  # a WebSocket session again under the demo
        # the warm-up, the turn that calls `shell`, the one its output continues
        assert [c["name"] for c in said["calls"]] == ["shell"]
        assert said["answer"] == "The folder holds README.md, pyproject.toml and src/."
        doc = json.loads(CliRunner().invoke(main, ["inspect", "--json", str(made)]).output)
        assert [s["dialect"] for s in doc["streams"]] == ["openai-responses"] * 3


def test_each_agent_speaks_one_of_its_providers_dialects_and_names_its_sdk():
    for provider in PROVIDERS:
        for agent in provider.demo_agents:
            assert agent.dialect in provider.dialects, agent
            assert agent.argv[0].startswith("streamscope.demo."), agent
            assert agent.sdk and agent.imports, agent


def test_an_sdk_is_installed_only_when_its_module_is_found():
    assert DemoAgent("chat-completions", ("m",)).installed()  # openai: a dependency
    assert not DemoAgent("x", ("m",), "nope", "streamscope_nope").installed()
    # a dotted module whose parent package is missing is not installed either (no raise)
    assert not DemoAgent("x", ("m",), "nope", "streamscope_nope.genai").installed()


def test_a_missing_sdk_is_said_in_one_line(monkeypatch):
    monkeypatch.setattr(DemoAgent, "installed", lambda self: False)
    result = CliRunner().invoke(main, ["demo", "anthropic-tool-use", "--no-replay"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "runs an agent on the anthropic SDK: pip install anthropic" in line
    result = CliRunner().invoke(main, ["demo", "gemini-streamed-args", "--no-replay"])
    assert "pip install google-genai" in result.output and result.exit_code == 2
    # the openai SDK's WebSocket clients need websockets, which only openai's extra brings
    result = CliRunner().invoke(main, ["demo", "codex-websocket", "--no-replay"])
    assert "pip install 'openai[realtime]'" in result.output and result.exit_code == 2


@pytest.mark.slow
def test_the_demos_replay_with_no_terminal_on_standard_input_says_so(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "demo", "alibaba-empty-id"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "\x1b" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "streamscope: standard input is not a terminal: replay reads its keys there "
        "(a piped stream: pass it as <(cmd), or save it to a file first)"
    )
    assert list((tmp_path / "recordings").glob("streamscope-*.jsonl"))  # (recorded first)
