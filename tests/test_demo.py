"""`streamscope demo` picks its agent from the Provider records and names no dialect: every
bundled sample has one, an agent speaks its provider's dialects, a missing SDK is one line.
(The demo's runs against served samples are in test_export.py.)"""

from __future__ import annotations

import importlib.util
import os

import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main, sample_names, samples_dir
from streamscope.providers import PROVIDERS, DemoAgent, provider_of


@pytest.mark.parametrize("sample", sample_names())
def test_every_bundled_sample_has_a_demo_agent_in_its_providers_record(sample):
    told = analyze(os.path.join(samples_dir(), f"{sample}.jsonl")).exchanges[0].dialect
    provider = provider_of(told)
    assert provider is not None, told
    agent = provider.demo_agent(told)
    assert agent is not None and agent.dialect == told
    assert importlib.util.find_spec(agent.argv[0]) is not None, agent.argv


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
