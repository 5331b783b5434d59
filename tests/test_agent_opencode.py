"""opencode (npm `opencode-ai`) under `streamscope record`, with no other step.

- The recipe (streamscope/agents.py): opencode's providers are the AI SDK's. Its OpenAI one
  reads OPENAI_BASE_URL as every command gets it; its Anthropic one appends `/messages` to
  ANTHROPIC_BASE_URL, so `record` gives it the Anthropic side's URL with `/v1`.
- The real opencode (`$STREAMSCOPE_OPENCODE`, else `opencode` on PATH), when installed:
  `opencode run "run echo hello"` against the local fakes, on Anthropic (its default with
  only an Anthropic key) and on OpenAI (`--model openai/...`, both keys set); inspect
  reads the whole tool loop and finds nothing wrong.
"""

from __future__ import annotations

import pytest

from streamscope import agents

from . import coding_agents
from .coding_agents import PROMPT

SIDES = {"openai": "http://127.0.0.1:4242/v1", "anthropic": "http://127.0.0.1:4242/anthropic"}


# -- the recipe --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["opencode", "run", "hi"],
        ["/home/me/.opencode/bin/opencode", "-m", "anthropic/claude-sonnet-4-5"],
        ["npx", "-y", "opencode-ai@1.18.33", "run", "hi"],
        ["bunx", "opencode-ai", "run", "hi"],
    ],
)
def test_opencode_gets_the_anthropic_side_with_v1_and_its_command_unchanged(command):
    applied = agents.apply(command, SIDES)
    assert applied is not None and applied.recipe.name == "opencode"
    assert applied.command == command and applied.inserted == []
    # the AI SDK's Anthropic base ends in /v1: opencode then POSTs {base}/messages, which
    # the proxy's side sends on as /v1/messages
    assert applied.env == {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4242/anthropic/v1"}


@pytest.mark.parametrize(
    "command", [["opencoder", "run"], ["npx", "opencode", "run"], ["python", "opencode"]]
)
def test_other_programs_are_not_taken_for_opencode(command):
    applied = agents.apply(command, SIDES)
    assert applied is None or applied.recipe.name != "opencode"


# -- the real opencode ---------------------------------------------------------------------

OPENCODE = coding_agents.program("STREAMSCOPE_OPENCODE", "opencode")
# For the test only, so that nothing leaves the machine: no models.dev fetch (its bundled
# model list instead), no update check, and its background `npm install` of
# @opencode-ai/plugin into its config folder sent to a closed local port.
QUIET = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "npm_config_registry": "http://127.0.0.1:9/",
}
# (the command after `opencode`, the keys it has) per side: Anthropic as opencode picks
# it by default with only its key, OpenAI by the user's own --model with both keys
RUNS = {
    "anthropic": (["run", PROMPT], ("ANTHROPIC_API_KEY",)),
    "openai": (
        ["run", "--model", "openai/gpt-5.1", PROMPT],
        ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
    ),
}


@pytest.fixture(scope="module", params=sorted(RUNS))
def opencode_run(request, tmp_path_factory):
    if OPENCODE is None:
        pytest.skip("opencode is not installed (npm install opencode-ai; see docs)")
    side = request.param
    args, keys = RUNS[side]
    base = tmp_path_factory.mktemp(f"opencode-{side}")
    run = coding_agents.record(OPENCODE, ["opencode", *args], side, base, QUIET, keys)
    return side, run


@pytest.mark.slow
@pytest.mark.agent
def test_opencode_runs_its_tool_loop_through_the_proxy(opencode_run):
    side, run = opencode_run
    done = run.done
    assert done.returncode == 0, done.stderr[-3000:]
    assert "streamscope: opencode is given ANTHROPIC_BASE_URL=http://127.0.0.1:" in done.stderr
    # every request reached the fake of the side it was meant for, through the proxy
    assert run.received[side] and all(isinstance(b, dict) for b in run.received[side])
    if side == "openai":
        assert all(b["model"] == "gpt-5.1" for b in run.received["openai"] if b.get("tools"))
    # nothing of the proxy's was written into opencode's own config
    assert coding_agents.files_naming(run.home / ".config", "127.0.0.1") == []


@pytest.mark.slow
@pytest.mark.agent
def test_inspect_reads_opencodes_loop_and_finds_nothing_wrong(opencode_run):
    side, run = opencode_run
    assert run.done.returncode == 0, run.done.stderr[-3000:]
    coding_agents.check_tool_loop(run, side)
