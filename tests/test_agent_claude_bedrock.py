"""Claude Code on Amazon Bedrock under `streamscope record`, as docs/recording-agents.md
gives the recipe: `CLAUDE_CODE_USE_BEDROCK=1`, the region, and the environment's AWS
credentials; Claude Code reads ANTHROPIC_BEDROCK_BASE_URL, which `record` points at the
proxy, and signs each request for it; the proxy signs each again for the upstream, a
fake Bedrock runtime that checks every signature for its own host (tests/fakes/bedrock.py).

It runs where Claude Code is installed (`claude` on PATH, or $STREAMSCOPE_CLAUDE); CI has
no Claude Code, and skips it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .fakes import bedrock as fake

pytestmark = pytest.mark.slow  # a real agent, a subprocess, a server

CLAUDE = os.environ.get("STREAMSCOPE_CLAUDE") or shutil.which("claude")


@pytest.mark.agent
@pytest.mark.skipif(CLAUDE is None, reason="Claude Code is not installed ($STREAMSCOPE_CLAUDE)")
def test_claude_code_on_bedrock_is_recorded_signed_again_and_read(tmp_path):
    out = tmp_path / "claude.jsonl"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ANTHROPIC_", "CLAUDE"))
    }
    env.update(fake.CREDENTIALS, AWS_REGION=fake.REGION, CLAUDE_CODE_USE_BEDROCK="1")
    env["HOME"] = str(home)  # (its settings and sessions: never the user's)
    with fake.FakeBedrock() as upstream:
        done = subprocess.run(
            [sys.executable, "-m", "streamscope", "record", "--bedrock-upstream", upstream.url]
            + ["-o", str(out), "--", str(CLAUDE), "-p", "run echo hello", "--allowedTools", "Bash"],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            stdin=subprocess.DEVNULL,
        )
        received = list(upstream.received)
    assert done.returncode == 0, done.stderr
    assert fake.ANSWER in done.stdout  # it ran its loop through the proxy to the answer
    streamed = [r for r in received if r.path.endswith("/invoke-with-response-stream")]
    assert streamed and all(r.verified for r in received), [r.why for r in received]
    text = out.read_text()
    assert fake.SECRET_KEY not in text and fake.ACCESS_KEY not in text
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "streamscope", "inspect", "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    streams = report["streams"]
    assert len(streams) == len(streamed)
    assert {(s["dialect"], s["framing"]) for s in streams} == {
        ("anthropic-messages", "aws-eventstream")
    }
    calls = [c for s in streams for c in s["tool_calls"]]
    assert calls and {c["id"] for c in calls} == {fake.TOOL_ID}
