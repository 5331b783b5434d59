"""A real coding agent from npm run under `streamscope record` against the local fakes, as
the agent tests (test_agent_claude.py, test_agent_opencode.py, test_agent_pi.py) do it, and what they check of
the recording: the tool loop (the call, its result in a later request, the answer), every
call read whole, the contract, no error or warning.

The agent is the program `$STREAMSCOPE_<NAME>` names, else the one on PATH; it runs with a
HOME of its own (its config, sessions and logins: the user's are never read or written),
a fake key of the provider side it talks to, and no key of the user's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamscope.analysis import analyze

from .fakes.anthropic_messages import FakeMessages
from .fakes.responses_ws import ANSWER, COMMAND, FakeResponses

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "streamscope"]
PROMPT = "run echo hello"
# the dialect each side's fake speaks
DIALECTS = {"anthropic": "anthropic-messages", "openai": "openai-responses"}
# the user's own variables an agent could take a key, a base URL or a config from
USERS = (
    "OPENAI_",
    "ANTHROPIC_",
    "OPENCODE_",
    "PI_",
    "XDG_",
    "AZURE_",
    "GEMINI_",
    "GOOGLE_",
    "CLAUDE",
)


def program(variable: str, name: str) -> str | None:
    """The agent's program: $variable's path when it is one, else `name` on PATH."""
    given = os.environ.get(variable)
    return given if given and os.access(given, os.X_OK) else shutil.which(name)


def bin_dir(found: str, name: str, scratch: Path) -> Path:
    """A folder holding the program as `name` (its own folder, or a link in `scratch`
    where its file is named otherwise, as npm's `opencode-ai/bin/opencode.exe`)."""
    path = Path(found)
    if path.name == name:
        return path.parent
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / name).symlink_to(path.resolve())
    return scratch


@dataclass
class Run:
    """One agent run under `record`: its process, the recording, what the fakes got."""

    done: subprocess.CompletedProcess[str]
    out: Path
    home: Path
    received: dict[str, list[Any]]  # the request bodies each side's fake got, parsed


def record(
    found: str,
    command: list[str],
    side: str,
    base: Path,
    env: dict[str, str],
    keys: tuple[str, ...],
) -> Run:
    """`streamscope record --upstream FAKE --anthropic-upstream FAKE -o OUT --force --
    COMMAND`, run in a folder of its own with HOME `base/home`, a fake key in each of
    `keys` and `env` added."""
    home, work = base / "home", base / "work"
    home.mkdir()
    work.mkdir()
    out = base / "recording.jsonl"
    binaries = bin_dir(found, command[0], base / "bin")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(USERS)}
    environ |= {"HOME": str(home), "PATH": f"{binaries}{os.pathsep}{environ.get('PATH', '')}"}
    environ |= {key: "sk-fake-agent-test-0000" for key in keys} | env
    environ["PYTHONPATH"] = str(ROOT)
    with FakeMessages() as messages, FakeResponses(websocket=False) as responses:
        done = subprocess.run(
            [*CLI, "record", "--upstream", responses.base_url]
            + ["--anthropic-upstream", messages.base_url, "-o", str(out), "--force", "--"]
            + command,
            capture_output=True,
            text=True,
            timeout=120,
            env=environ,
            cwd=work,
            stdin=subprocess.DEVNULL,
        )
    received = {
        "anthropic": [r.json() for r in messages.received()],
        "openai": [r.json() for r in responses.received("request")],
    }
    return Run(done, out, home, received)


def _result_of(body: Any, call_id: str) -> str | None:
    """The text a request body sends back for the call `call_id` (None: it sends none)."""
    if not isinstance(body, dict):
        return None
    for item in body.get("input") or []:  # Responses: a function_call_output item
        if isinstance(item, dict) and (item.get("type"), item.get("call_id")) == (
            "function_call_output",
            call_id,
        ):
            return json.dumps(item.get("output"))
    for message in body.get("messages") or []:  # Messages: a tool_result block
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and (block.get("type"), block.get("tool_use_id")) == (
                "tool_result",
                call_id,
            ):
                return json.dumps(block.get("content"))
    return None


def inspect_json(out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*CLI, "inspect", "--json", str(out)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def check_tool_loop(run: Run, side: str) -> dict[str, Any]:
    """What inspect reads of the run: the loop whole, every call whole, the contract
    holding, no error or warning (the fakes stream as the APIs do: nothing to warn of).
    Returns inspect's report."""
    report = inspect_json(run.out)
    streams = report["streams"]
    assert streams and {s["dialect"] for s in streams} <= set(DIALECTS.values())
    mine = [s for s in streams if s["dialect"] == DIALECTS[side]]
    calls = [(s, c) for s in mine for c in s["tool_calls"]]
    # the one call the fake made: the agent's shell tool running `echo hello`, read whole
    ((stream, call),) = calls
    assert call["name"].lower() == "bash"  # (Claude Code's is `Bash`)
    assert json.loads(call["arguments"])["command"] == COMMAND
    # inspect shows the result the agent sent back for it: the command's output
    assert "hello" in json.dumps((call.get("result") or {}).get("content"))
    for s in streams:
        for c in s["tool_calls"]:
            assert c["name"] and isinstance(json.loads(c["arguments"]), dict)
    # its result came back in a later request, and the model's answer to it was read
    later = [s for s in mine if s["exchange"] > stream["exchange"]]
    bodies = _bodies(run.out)
    answered = [s for s in later if _result_of(bodies.get(s["exchange"]), call["id"])]
    assert answered, "no later request sent the call's result back"
    assert "hello" in (_result_of(bodies[answered[0]["exchange"]], call["id"]) or "")
    assert answered[0]["content"] == ANSWER and answered[0]["tool_calls"] == []
    assert ANSWER in run.done.stdout  # what the agent itself printed
    # nothing wrong found: no error or warning on any stream, the contract checked, held
    loud = [
        (s["exchange"], a["kind"], a["message"])
        for s in streams
        for a in s["anomalies"]
        if a["severity"] in ("error", "warning")
    ]
    assert loud == []
    assert [f for f in report["contract"] if f["severity"] != "info"] == []
    assert analyze(str(run.out)).compared
    assert "conversation contract broken" not in run.done.stderr
    return report


def _bodies(out: Path) -> dict[int, Any]:
    """Each exchange's request body in the recording, parsed."""
    found: dict[int, Any] = {}
    for line in out.read_bytes().splitlines():
        record = json.loads(line)
        if record.get("type") == "request":
            body = record.get("body")
            try:
                found[record["exchange"]] = json.loads(body) if isinstance(body, str) else body
            except ValueError:
                found[record["exchange"]] = None
    return found


def files_naming(folder: Path, text: str) -> list[Path]:
    """The files under `folder` whose bytes hold `text`."""
    if not folder.is_dir():
        return []
    return [p for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]
