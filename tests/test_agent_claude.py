"""Claude Code under `streamscope record`, as docs/recording-agents.md gives the command:
`streamscope record -- claude -p "run echo hello" --allowedTools Bash`. Claude Code reads
ANTHROPIC_BASE_URL, which every recorded command gets, so it needs no recipe. Its
upstream is a fake Messages API (tests/fakes/anthropic.py) that calls its Bash tool, then
answers once the tool's result comes back.

It runs where Claude Code is installed (`claude` on PATH, or $STREAMSCOPE_CLAUDE;
scripts/agent-matrix installs it) and is skipped elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .fakes import anthropic as fake

CLAUDE = os.environ.get("STREAMSCOPE_CLAUDE") or shutil.which("claude")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.agent,
    pytest.mark.skipif(CLAUDE is None, reason="Claude Code is not installed ($STREAMSCOPE_CLAUDE)"),
]
KEY = "sk-ant-api03-FAKEclaudeCodeTestKey0000000000000000000000000000000000"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, Any]:
    """Claude Code's tool loop run once under `record`, and inspect's report of it."""
    base = tmp_path_factory.mktemp("claude")
    out, home, work = base / "claude.jsonl", base / "home", base / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    # its settings and sessions in a home of its own, never the user's; no calls home
    env |= {"HOME": str(home), "ANTHROPIC_API_KEY": KEY, "DISABLE_AUTOUPDATER": "1"}
    env |= {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
    with fake.FakeAnthropic() as upstream:
        done = subprocess.run(
            [sys.executable, "-m", "streamscope", "record", "--anthropic-upstream", upstream.url]
            + ["-o", str(out), "--", str(CLAUDE), "-p", "run echo hello", "--allowedTools", "Bash"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=150,
            stdin=subprocess.DEVNULL,
        )
        received = list(upstream.received)
    inspected = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return {"done": done, "received": received, "out": out, "inspected": inspected, "said": said}


def test_claude_code_runs_its_tool_loop_through_the_proxy(run):
    done = run["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert fake.ANSWER in done.stdout  # its last message: the loop reached the answer
    sent = [r.json() for r in run["received"] if r.method == "POST"]
    results = [b for body in sent for b in fake._results(body)]
    assert results and "hello" in json.dumps(results[-1])  # it ran the command, sent it back
    text = Path(run["out"]).read_text()
    assert KEY not in text and KEY[:20] not in text  # its key masked


def test_inspect_reads_every_call_its_result_and_the_contract_with_no_false_finding(run):
    assert run["inspected"].returncode == 0, run["inspected"].stderr
    report = json.loads(run["inspected"].stdout)
    streams = report["streams"]
    assert {s["dialect"] for s in streams} == {"anthropic-messages"}
    calls = [c for s in streams for c in s["tool_calls"]]
    assert [(c["id"], c["name"]) for c in calls] == [(fake.TOOL_ID, "Bash")]
    assert json.loads(calls[0]["arguments"])["command"] == fake.COMMAND
    # every stream was read whole: nothing the fake sent is a finding worth a warning
    findings = [
        (s["exchange"], a["kind"], a["severity"])
        for s in streams
        for a in s["anomalies"]
        if a["severity"] != "info"
    ]
    findings += [
        ("contract", a["kind"], a["severity"])
        for a in report.get("contract") or []
        if a["severity"] != "info"
    ]
    assert findings == []
    # the turn that sent the result back was checked against the stream it answers
    assert "every assembled call came back unchanged, every result matched" in run["said"].stdout
