"""pi (npm `@mariozechner/pi-coding-agent`) under `streamscope record`, with no other step.

- The recipe (streamscope/agents.py): pi hands each model's base URL from its own model
  list to the SDKs, so no variable reaches them; `record` loads streamscope's extension
  (`-e .../agent_files/pi-base-urls.js`), which points pi's built-in openai and anthropic
  providers at OPENAI_BASE_URL and ANTHROPIC_BASE_URL (pi's `registerProvider` override).
  pi's subcommands that ask no model (`pi install`, `pi list`...) run as given.
- The extension itself, run by node against a stand-in for pi's extension API.
- The real pi (`$STREAMSCOPE_PI`, else `pi` on PATH), when installed: `pi -p "run echo
  hello"` against the local fakes, on Anthropic (its default with only an Anthropic key)
  and on OpenAI (`--model openai/...`, both keys set); inspect reads the whole tool loop
  and finds nothing wrong.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from streamscope import agents
from streamscope.providers import ANTHROPIC, OPENAI

from . import coding_agents
from .coding_agents import PROMPT

SIDES = {"openai": "http://127.0.0.1:4242/v1", "anthropic": "http://127.0.0.1:4242/anthropic"}
EXTENSION = agents.FILES / "pi-base-urls.js"


# -- the recipe --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["pi", "-p", "hi"],
        ["/usr/local/bin/pi", "--model", "openai/gpt-5.4", "-p", "hi"],
        ["npx", "@mariozechner/pi-coding-agent@0.73.1", "-p", "hi"],
        ["pi"],  # the interactive TUI
    ],
)
def test_pi_is_given_the_extension_right_after_its_program(command):
    applied = agents.apply(command, SIDES)
    assert applied is not None and applied.recipe.name == "pi"
    at = 2 if command[0] == "npx" else 1
    assert applied.inserted == ["-e", str(EXTENSION)]
    assert applied.command == [*command[:at], "-e", str(EXTENSION), *command[at:]]
    assert applied.env == {}  # it reads the variables every command gets
    assert EXTENSION.is_file()


@pytest.mark.parametrize(
    "subcommand", ["install", "remove", "uninstall", "update", "list", "config"]
)
def test_pis_subcommands_run_as_given(subcommand):
    # `pi -e FILE list` would take `list` as a prompt
    assert agents.apply(["pi", subcommand, "npm:foo"], SIDES) is None


def test_the_extension_names_the_variables_record_sets():
    text = EXTENSION.read_text()
    pairs = set(re.findall(r'\["([a-z]+)", "([A-Z_]+)"\]', text))
    assert pairs == {("openai", OPENAI.sides[0].env[0]), ("anthropic", ANTHROPIC.sides[0].env[0])}


NODE = shutil.which("node")


@pytest.mark.slow
@pytest.mark.skipif(NODE is None, reason="no node to run the extension with")
def test_the_extension_overrides_the_base_url_of_each_side_it_is_given():
    assert NODE is not None
    stand_in = (
        "const seen = [];"
        f"const m = await import({json.dumps(EXTENSION.as_uri())});"
        "m.default({ registerProvider: (name, config) => seen.push([name, config]) });"
        "console.log(JSON.stringify(seen));"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BASE_URL")}

    def registered(extra: dict[str, str]) -> list:
        done = subprocess.run(
            [NODE, "--input-type=module", "-e", stand_in],
            capture_output=True,
            text=True,
            timeout=30,
            env=env | extra,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert registered(
        {"OPENAI_BASE_URL": SIDES["openai"], "ANTHROPIC_BASE_URL": SIDES["anthropic"]}
    ) == [
        ["openai", {"baseUrl": SIDES["openai"]}],
        ["anthropic", {"baseUrl": SIDES["anthropic"]}],
    ]
    # a side it is not given keeps pi's own URL
    assert registered({"ANTHROPIC_BASE_URL": SIDES["anthropic"]}) == [
        ["anthropic", {"baseUrl": SIDES["anthropic"]}]
    ]


# -- the real pi -----------------------------------------------------------------------------

PI = coding_agents.program("STREAMSCOPE_PI", "pi")
# For the test only: no startup network (update and package checks) and no install
# telemetry.
QUIET = {"PI_OFFLINE": "1", "PI_TELEMETRY": "0"}
# (the command after `pi`, the keys it has) per side: Anthropic as pi picks it by default
# with only its key, OpenAI by the user's own --model with both keys
RUNS = {
    "anthropic": (["-p", PROMPT], ("ANTHROPIC_API_KEY",)),
    "openai": (
        ["--model", "openai/gpt-5.4", "-p", PROMPT],
        ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
    ),
}


@pytest.fixture(scope="module", params=sorted(RUNS))
def pi_run(request, tmp_path_factory):
    if PI is None:
        pytest.skip("pi is not installed (npm install @mariozechner/pi-coding-agent; see docs)")
    side = request.param
    args, keys = RUNS[side]
    base = tmp_path_factory.mktemp(f"pi-{side}")
    run = coding_agents.record(PI, ["pi", *args], side, base, QUIET, keys)
    return side, run


@pytest.mark.slow
@pytest.mark.agent
def test_pi_runs_its_tool_loop_through_the_proxy(pi_run):
    side, run = pi_run
    done = run.done
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"streamscope: pi is given -e {EXTENSION}" in done.stderr
    # every request reached the fake of the side it was meant for, through the proxy
    assert run.received[side] and all(isinstance(b, dict) for b in run.received[side])
    other = "anthropic" if side == "openai" else "openai"
    assert run.received[other] == []
    if side == "openai":
        assert {b["model"] for b in run.received["openai"]} == {"gpt-5.4"}
    # nothing of the proxy's was written into pi's own config (~/.pi/agent)
    agent_dir = run.home / ".pi" / "agent"
    assert coding_agents.files_naming(agent_dir, "127.0.0.1") == []
    assert not (agent_dir / "models.json").exists()


@pytest.mark.slow
@pytest.mark.agent
def test_inspect_reads_pis_loop_and_finds_nothing_wrong(pi_run):
    side, run = pi_run
    assert run.done.returncode == 0, run.done.stderr[-3000:]
    coding_agents.check_tool_loop(run, side)
