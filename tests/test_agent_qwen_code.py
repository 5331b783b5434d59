"""Qwen Code under `streamscope record`, against a local fake of an OpenAI Chat Completions
API (tests/fakes/chat_completions.py).

- No recipe: Qwen Code's `openai` auth type takes its base URL from OPENAI_BASE_URL (above
  the settings' `security.auth.baseUrl`), which every recorded command gets, and picks
  that auth type itself from OPENAI_API_KEY, OPENAI_MODEL and OPENAI_BASE_URL together.
- The real Qwen Code (`qwen` on PATH, or $STREAMSCOPE_QWEN_CODE), when installed: its tool
  loop (the model's `run_shell_command` call, its arguments streamed in fragments, its
  result sent back in a `tool` message, the answer) runs under `record` with no other
  step, and inspect reads every call, its result and the contract with no finding that
  did not happen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamscope import agents

from .fakes.chat_completions import ANSWER, CALL_ID, COMMAND, FakeChatCompletions

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "streamscope"]
TOOL = "run_shell_command"


@pytest.mark.parametrize(
    "command",
    [["qwen", "run echo hello", "--yolo"], ["npx", "@qwen-code/qwen-code", "-p", "hi"]],
)
def test_qwen_code_needs_no_recipe(command):
    """It reads OPENAI_BASE_URL, which every recorded command gets: it runs as given."""
    assert agents.apply(command, {"openai": "http://127.0.0.1:4242/v1"}) is None


# -- the real Qwen Code ------------------------------------------------------------------


def _qwen() -> str | None:
    given = os.environ.get("STREAMSCOPE_QWEN_CODE")
    return given if given and os.access(given, os.X_OK) else shutil.which("qwen")


QWEN = _qwen()
needs_qwen = pytest.mark.skipif(
    QWEN is None, reason="Qwen Code is not installed (npm install @qwen-code/qwen-code; see docs)"
)
PROMPT = "run echo hello"
MODEL = "qwen3-coder-plus"
# Its settings in the test's own HOME: no usage statistics (Qwen Code would send them to
# Alibaba Cloud's RUM service, gb4w8c3ygj-default-sea.rum.aliyuncs.com).
SETTINGS = {"privacy": {"usageStatisticsEnabled": False}}


@pytest.fixture(scope="module")
def qwen_run(tmp_path_factory) -> dict[str, Any]:
    """qwen run once, one-shot, under `record`, against the fake, in a HOME of its own."""
    assert QWEN is not None
    base = tmp_path_factory.mktemp("qwen")
    home, work = base / "home", base / "home" / "project"
    (home / ".qwen").mkdir(parents=True)
    work.mkdir()
    (home / ".qwen" / "settings.json").write_text(json.dumps(SETTINGS))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_"))}
    env |= {"HOME": str(home), "OPENAI_API_KEY": "sk-fake-qwen-test-0000", "OPENAI_MODEL": MODEL}
    env["PATH"] = f"{Path(QWEN).parent}{os.pathsep}{env.get('PATH', '')}"
    out = base / "qwen.jsonl"
    with FakeChatCompletions() as fake:
        command = [*CLI, "record", "--upstream", fake.base_url, "-o", str(out), "--force"]
        command += ["--", "qwen", PROMPT, "--yolo"]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
        )
    inspected = subprocess.run(
        [*CLI, "inspect", "--json", str(out)], capture_output=True, text=True, timeout=60
    )
    return {
        "done": done,
        "received": list(fake.received),
        "report": json.loads(inspected.stdout) if inspected.returncode == 0 else None,
        "inspected": inspected,
    }


@pytest.mark.agent
@pytest.mark.slow
@needs_qwen
def test_qwen_code_runs_its_tool_loop_under_record_with_no_other_step(qwen_run):
    done = qwen_run["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "".join(ANSWER) in done.stdout
    assert " is given " not in done.stderr  # no recipe: the variables alone
    posts = [r for r in qwen_run["received"] if r.path == "/v1/chat/completions"]
    assert len(posts) == 2 and [r.json()["stream"] for r in posts] == [True, True]
    assert posts[0].headers["authorization"] == "Bearer sk-fake-qwen-test-0000"
    # the call went back whole (its fragments joined), then its result, answering its id
    *_, sent, result = posts[1].json()["messages"]
    (call,) = sent["tool_calls"]
    assert call["id"] == CALL_ID and call["function"]["name"] == TOOL
    assert json.loads(call["function"]["arguments"]) == {"command": COMMAND}
    assert result["role"] == "tool" and result["tool_call_id"] == CALL_ID
    assert "hello" in json.dumps(result["content"])


@pytest.mark.agent
@pytest.mark.slow
@needs_qwen
def test_inspect_reads_qwen_code_s_call_its_result_and_the_contract(qwen_run):
    assert qwen_run["report"] is not None, qwen_run["inspected"].stderr
    report = qwen_run["report"]
    streams = [s for s in report["streams"] if s.get("dialect") == "chat-completions"]
    assert len(streams) == 2
    (call,) = streams[0]["tool_calls"]
    assert (call["id"], call["name"]) == (CALL_ID, TOOL)
    assert json.loads(call["arguments"]) == {"command": COMMAND}
    assert call["fragments"] == 4  # the name's delta, then the arguments in three
    assert "hello" in json.dumps((call.get("result") or {}).get("content"))  # what it sent back
    assert streams[1]["tool_calls"] == []
    assert [a for s in report["streams"] for a in s["anomalies"]] == []
    assert report["contract"] == []
    assert "no anomalies, the conversation contract holds" in qwen_run["done"].stderr
