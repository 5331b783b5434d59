"""Claude Code under `streamscope record`, as docs/recording-agents.md gives the command:
`streamscope record -- claude -p "run echo hello" --allowedTools Bash`. Claude Code reads
ANTHROPIC_BASE_URL, which every recorded command gets, so it needs no recipe. Its
upstream is the fake Messages API of the agent tests (tests/fakes/anthropic_messages.py),
which calls its `Bash` tool, then answers once the tool's result comes back; inspect
reads the whole loop and finds nothing wrong (tests/coding_agents.py).

It runs where Claude Code is installed (`claude` on PATH, or $STREAMSCOPE_CLAUDE;
scripts/agent-matrix installs it) and is skipped elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from . import coding_agents
from .coding_agents import PROMPT

CLAUDE = coding_agents.program("STREAMSCOPE_CLAUDE", "claude")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.agent,
    pytest.mark.skipif(CLAUDE is None, reason="Claude Code is not installed ($STREAMSCOPE_CLAUDE)"),
]
# no update checks, no telemetry, no calls but the model's
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> coding_agents.Run:
    assert CLAUDE is not None
    base = tmp_path_factory.mktemp("claude")
    command = ["claude", "-p", PROMPT, "--allowedTools", "Bash"]
    return coding_agents.record(CLAUDE, command, "anthropic", base, QUIET, ("ANTHROPIC_API_KEY",))


def test_claude_code_runs_its_tool_loop_through_the_proxy(run):
    assert run.done.returncode == 0, run.done.stderr[-3000:]
    bodies = [b for b in run.received["anthropic"] if isinstance(b, dict)]  # (not its HEAD)
    assert "Bash" in {t.get("name") for b in bodies for t in b.get("tools") or []}
    assert run.received["openai"] == []  # it talked to its own provider only
    assert "sk-fake-agent-test-0000" not in run.out.read_text()  # its key masked


def test_inspect_reads_every_call_its_result_and_the_contract_with_no_false_finding(run):
    coding_agents.check_tool_loop(run, "anthropic")
    said = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", str(run.out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "every assembled call came back unchanged, every result matched" in said.stdout


def test_conformance_grades_claude_code_on_every_anthropic_case(tmp_path):
    """`streamscope conformance -- claude -p ...`, as docs/commands/conformance.md gives
    it: every Anthropic case passes (the calls go back unchanged; a call whose input
    was cut short is dropped from the history, never sent back repaired)."""
    assert CLAUDE is not None
    home = tmp_path / "home"
    home.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(coding_agents.USERS)}
    environ |= {"HOME": str(home), "ANTHROPIC_API_KEY": "sk-fake-agent-test-0000", **QUIET}
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "conformance", "--json", "--speed", "0"]
        + ["--dialect", "anthropic-messages", "-o", str(tmp_path / "out"), "--"]
        + [CLAUDE, "-p", "What is the weather in Paris?"],
        capture_output=True,
        text=True,
        timeout=150,
        env=environ,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (card,) = json.loads(done.stdout)["dialects"]
    assert card["passed"] == card["cases"] == 5
    by = {g["sample"]: g for g in card["grades"]}
    assert by["anthropic-tool-use.jsonl"]["got"].startswith('"toolu_01A9xKfQ2bZ7mNc4WvR8tLpY"')
    dropped = by["anthropic-max-tokens.jsonl"]
    assert [f["kind"] for f in dropped["findings"]] == ["tool-call-dropped"]
    assert "sk-fake-agent-test-0000" not in done.stdout + done.stderr
