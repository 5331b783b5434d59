"""codex-cli under `streamscope record`, against a local fake of the Responses API that
speaks WebSocket as codex's own transport does (tests/fakes/responses_ws.py).

- The recipe (streamscope/agents.py): codex reads no OPENAI_BASE_URL, so `record` puts
  `-c openai_base_url="<proxy>/v1"` right after the program's name, for that run only.
- A Python client that sends what codex sends (tests/fakes/codex_client.py) stays on its
  WebSocket through `record`, and the upstream receives the very messages it receives
  without streamscope in between; an upstream without the WebSocket transport sends it to
  HTTP, and that conversation is recorded and read whole.
- The real codex binary (`codex` on PATH, or $STREAMSCOPE_CODEX), when installed: its tool
  loop runs under `record` (scripts/record-codex does the same by hand).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamscope import agents

from .fakes.codex_client import SESSION
from .fakes.responses_ws import ANSWER, FakeResponses

pytest.importorskip("websockets")

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "streamscope"]
CLIENT = [sys.executable, "-m", "tests.fakes.codex_client"]
PROXY_V1 = "http://127.0.0.1:4242/v1"
# The proxy relays WebSocket upgrades where streamscope/http/websocket.py is (the relay);
# a proxy without it refuses every upgrade, and codex falls back to HTTP: there the tests
# that need the relay are expected to fail (strict: passing there means a wrong mark).
RELAYS = importlib.util.find_spec("streamscope.http.websocket") is not None
NEEDS_RELAY = pytest.mark.xfail(
    not RELAYS, strict=True, reason="this proxy does not relay WebSocket upgrades"
)


# -- the recipe --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["codex", "exec", "hi"], ["codex", "-c", f'openai_base_url="{PROXY_V1}"', "exec", "hi"]),
        (
            ["/opt/node/bin/codex", "-m", "o3"],
            ["/opt/node/bin/codex", "-c", f'openai_base_url="{PROXY_V1}"', "-m", "o3"],
        ),
        (
            ["npx", "-y", "@openai/codex@0.171.0", "exec", "hi"],
            ["npx", "-y", "@openai/codex@0.171.0", "-c", f'openai_base_url="{PROXY_V1}"']
            + ["exec", "hi"],
        ),
    ],
)
def test_the_codex_recipe_goes_right_after_the_program(command, expected):
    applied = agents.apply(command, {"openai": PROXY_V1})
    assert applied is not None and applied.recipe.name == "codex"
    assert applied.command == expected
    assert applied.inserted == ["-c", f'openai_base_url="{PROXY_V1}"']


@pytest.mark.parametrize(
    "command",
    [
        ["python", "agent.py", "codex"],
        ["codexx", "exec"],
        ["npx", "cowsay", "codex"],
        ["npx", "@openai/codex-sdk"],
        [],
    ],
)
def test_other_commands_run_as_given(command):
    assert agents.apply(command, {"openai": PROXY_V1}) is None


def _fake_codex(folder: Path) -> Path:
    """A `codex` program that makes no request: it writes down what it was given."""
    folder.mkdir()
    program = folder / "codex"
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)},"
        " open(os.environ['SAID'], 'w'))\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


@pytest.mark.slow
def test_record_gives_codex_its_base_url_and_says_when_it_made_no_request(tmp_path):
    bin_dir, home, said = tmp_path / "bin", tmp_path / "home", tmp_path / "said.json"
    _fake_codex(bin_dir)
    home.mkdir()
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}
    env |= {"SAID": str(said)}
    env.pop("CODEX_HOME", None)
    done = subprocess.run(
        [*CLI, "record", "-o", str(out), "--", "codex", "exec", "run echo hello"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    given = json.loads(said.read_text())
    base = given["env"]["OPENAI_BASE_URL"]
    assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
    # its config key, right after the program's name, and the user's words after it
    assert given["argv"] == ["-c", f'openai_base_url="{base}"', "exec", "run echo hello"]
    assert list(home.iterdir()) == []  # nothing written to the user's own ~/.codex
    lines = done.stderr.splitlines()
    assert f"streamscope: codex is given -c 'openai_base_url=\"{base}\"'" in "\n".join(lines)
    # no request came: one line says so, with what the command was given
    (last,) = [line for line in lines if "made no request" in line]
    assert last.startswith(
        "streamscope: the command made no request through the proxy, so no recording was kept"
    )
    assert f"OPENAI_BASE_URL={base}" in last
    assert f"and -c 'openai_base_url=\"{base}\"'" in last
    assert last.endswith('; see "Recording coding agents" in streamscope\'s docs')
    assert not out.exists()


@pytest.mark.slow
def test_a_command_that_is_no_agent_is_told_only_the_variables(tmp_path):
    done = subprocess.run(
        [*CLI, "record", "-o", str(tmp_path / "r.jsonl"), "--", sys.executable, "-c", "pass"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "made no request" in line]
    assert "OPENAI_BASE_URL=http://127.0.0.1:" in line and "ANTHROPIC_BASE_URL=" in line
    assert "openai_base_url" not in line and " and -c" not in line


# -- a Python client that talks as codex does ---------------------------------------------


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _client(url: str | None, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        CLIENT + ([url] if url else []),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _record_client(fake: FakeResponses, out: Path) -> tuple[dict[str, Any], str]:
    """The client run by `streamscope record --upstream FAKE`: what it said, record's
    stderr."""
    done = subprocess.run(
        [*CLI, "record", "--upstream", fake.base_url, "-o", str(out), "--", *CLIENT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def _sent(fake: FakeResponses) -> list[str | bytes]:
    """What the client sent the upstream: its messages and request bodies, in order."""
    return [r.data if r.kind == "message" else r.body for r in fake.log if r.kind != "handshake"]


@pytest.mark.slow
@NEEDS_RELAY
def test_a_codex_like_client_stays_on_its_websocket_through_record(tmp_path):
    with FakeResponses() as direct:
        alone = _client(direct.base_url)
    assert alone["transport"] == "websocket" and alone["answer"] == ANSWER
    out = tmp_path / "codex-like.jsonl"
    with FakeResponses() as fake:
        said, _ = _record_client(fake, out)
    assert said == alone  # no fallback: the same turns, the same answers
    assert [r.kind for r in fake.log].count("request") == 0  # no HTTP: no 404, no POST
    assert _sent(fake) == _sent(direct)  # the upstream received the very same messages
    (shake,) = fake.received("handshake")
    assert shake.headers["openai-beta"] == "responses_websockets=2026-02-06"
    assert "permessage-deflate" in shake.headers["sec-websocket-extensions"]
    records = _records(out)
    assert [r["status"] for r in records if r["type"] == "response"] == [101]
    from_client = [r for r in records if r["type"] == "message" and r["from"] == "client"]
    texts = [json.loads(r["data"]) for r in from_client if r["opcode"] == "text"]
    assert [t["type"] for t in texts] == ["response.create"] * 3
    assert texts[0]["generate"] is False
    # codex's session id, in its handshake and every request, kept: the recording matches
    # codex's own session log; its key is masked
    (handshake,) = [r for r in records if r["type"] == "request"]
    headers = {k.lower(): v for k, v in handshake["headers"]}
    assert headers["session-id"] == SESSION and headers["authorization"] == "Bearer [REDACTED]"
    assert [t["prompt_cache_key"] for t in texts] == [SESSION] * 3


@pytest.mark.slow
def test_a_refused_upgrade_sends_it_to_http_and_the_conversation_is_read_whole(tmp_path):
    with FakeResponses(websocket=False) as direct:
        alone = _client(direct.base_url)
    assert alone["transport"] == "http" and alone["handshake"] == 404
    out = tmp_path / "codex-like-http.jsonl"
    with FakeResponses(websocket=False) as fake:
        said, stderr = _record_client(fake, out)
    assert said["transport"] == "http" and said["answer"] == ANSWER
    assert said["output"] == "hello\n"  # the tool ran
    posts = [r.body for r in fake.received("request") if r.method == "POST"]
    assert posts == [r.body for r in direct.received("request") if r.method == "POST"]
    assert "conversation contract broken" not in stderr
    done = subprocess.run(
        [*CLI, "inspect", "--json", str(out)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    streams = [s for s in report["streams"] if s.get("dialect") == "openai-responses"]
    assert len(streams) == 2
    (call,) = streams[0]["tool_calls"]
    assert call["name"] == "exec_command"
    assert json.loads(call["arguments"]) == {"cmd": "echo hello"}
    assert streams[1]["tool_calls"] == []
    assert [f for f in report["contract"] if f["severity"] != "info"] == []


# -- the real codex ---------------------------------------------------------------------


def _codex() -> str | None:
    given = os.environ.get("STREAMSCOPE_CODEX")
    return given if given and os.access(given, os.X_OK) else shutil.which("codex")


CODEX = _codex()
needs_codex = pytest.mark.skipif(
    CODEX is None, reason="codex-cli is not installed (npm install @openai/codex; see docs)"
)
PROMPT = "run echo hello"


def _codex_env(home: Path) -> dict[str, str]:
    """codex's environment: its own CODEX_HOME, an API key its `exec` reads, no key of
    the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    assert CODEX is not None
    env["PATH"] = f"{Path(CODEX).parent}{os.pathsep}{env.get('PATH', '')}"
    return env | {"CODEX_HOME": str(home), "CODEX_API_KEY": "sk-fake-codex-test-0000"}


def _codex_args(workdir: Path) -> list[str]:
    return ["codex", "exec", "--skip-git-repo-check", "--ephemeral", "-C", str(workdir), PROMPT]


def _shape(message: Any) -> dict[str, Any]:
    """What a codex message asks, without the ids and clocks that differ run to run: its
    type, prewarm flag, model, the response it continues (the fake's ids count alike in
    each run), its input items' types and roles, the call ids it answers, the user's text."""
    items = message.get("input") or []
    return {
        "type": message.get("type"),
        "generate": message.get("generate"),
        "model": message.get("model"),
        "previous_response_id": message.get("previous_response_id"),
        "items": [(i.get("type"), i.get("role")) for i in items],
        "answers": [i.get("call_id") for i in items if str(i.get("type")).endswith("_output")],
        "said": [
            part.get("text")
            for i in items
            if i.get("role") == "user"
            for part in i.get("content") or []
            if part.get("text") == PROMPT
        ],
    }


@pytest.fixture(scope="module")
def codex_runs(tmp_path_factory) -> dict[str, Any]:
    """codex run once straight at the fake and once under `record`."""
    base = tmp_path_factory.mktemp("codex")
    runs: dict[str, Any] = {}
    for name in ("direct", "recorded"):
        home, workdir = base / f"{name}-home", base / f"{name}-work"
        home.mkdir()
        workdir.mkdir()
        out = base / f"{name}.jsonl"
        with FakeResponses() as fake:
            if name == "direct":
                command = [_codex_args(workdir)[0], "-c", f'openai_base_url="{fake.base_url}"']
                command += _codex_args(workdir)[1:]
            else:
                command = [*CLI, "record", "--upstream", fake.base_url, "-o", str(out), "--"]
                command += _codex_args(workdir)
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=150,
                env=_codex_env(home),
                stdin=subprocess.DEVNULL,  # codex exec reads a piped stdin as more prompt
                cwd=ROOT,
            )
        runs[name] = {"done": done, "log": list(fake.log), "out": out}
    return runs


@pytest.mark.slow
@pytest.mark.agent
@needs_codex
def test_codex_runs_its_tool_loop_under_record(codex_runs):
    run = codex_runs["recorded"]
    done = run["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert ANSWER in done.stdout
    assert "codex is given -c 'openai_base_url=" in done.stderr
    # codex ran the command the fake asked for and sent its output back
    sent = [r.json() for r in run["log"] if r.kind in ("message", "request") and r.json()]
    outputs = [
        json.dumps(i)
        for m in sent
        for i in m.get("input") or []
        if str(i.get("type")).endswith("_call_output")
    ]
    assert outputs and "hello" in outputs[-1]
    assert run["out"].exists()


@pytest.mark.slow
@pytest.mark.agent
@needs_codex
@NEEDS_RELAY
def test_codex_stays_on_its_websocket_and_the_upstream_sees_what_it_sees_alone(codex_runs):
    direct, recorded = codex_runs["direct"], codex_runs["recorded"]
    assert direct["done"].returncode == 0, direct["done"].stderr[-3000:]
    assert "Falling back" not in recorded["done"].stderr
    assert [r.kind for r in recorded["log"]].count("request") == 0  # no 404, no POST

    def shapes(log: list) -> list[dict[str, Any]]:
        return [_shape(r.json()) for r in log if r.kind == "message"]

    assert shapes(recorded["log"]) == shapes(direct["log"])
    assert shapes(direct["log"])[0]["generate"] is False  # the prewarm
    (shake,) = [r for r in recorded["log"] if r.kind == "handshake"]
    (alone,) = [r for r in direct["log"] if r.kind == "handshake"]
    assert set(shake.headers) - {"host"} == set(alone.headers) - {"host"}
    assert shake.headers["openai-beta"] == "responses_websockets=2026-02-06"


@pytest.mark.slow
@pytest.mark.agent
@needs_codex
def test_the_script_the_docs_name_records_codex_and_inspects_it(tmp_path):
    out = tmp_path / "codex-session.jsonl"
    assert CODEX is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    env["PATH"] = f"{Path(CODEX).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHON"] = sys.executable
    done = subprocess.run(
        [str(ROOT / "scripts" / "record-codex"), str(out)],
        capture_output=True,
        text=True,
        timeout=170,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert ANSWER in done.stdout  # codex's own last message
    assert "record-codex: the upstream received" in done.stderr
    # inspect's account: the tool call codex's model made, then the answer
    assert "echo hello" in done.stdout and "The command printed: hello" in done.stdout
    assert out.exists() and stat.S_IMODE(out.stat().st_mode) == 0o600


@pytest.mark.slow
@pytest.mark.agent
@needs_codex
@NEEDS_RELAY
def test_inspect_reads_codex_s_call_its_result_and_the_contract_with_no_false_finding(codex_runs):
    out = codex_runs["recorded"]["out"]
    inspected = subprocess.run(
        [*CLI, "inspect", "--json", str(out)], capture_output=True, text=True, timeout=60
    )
    assert inspected.returncode == 0, inspected.stderr
    report = json.loads(inspected.stdout)
    calls = [c for s in report["streams"] for c in s["tool_calls"]]
    assert len(calls) == 1 and "echo hello" in calls[0]["arguments"]
    assert "hello" in json.dumps((calls[0].get("result") or {}).get("content"))  # sent back
    findings = [a["kind"] for s in report["streams"] for a in s["anomalies"]]
    findings += [a["kind"] for a in report.get("contract") or []]
    assert findings == []  # the fake streams as the API does: nothing to report
    said = subprocess.run([*CLI, "inspect", str(out)], capture_output=True, text=True, timeout=60)
    assert "every assembled call came back unchanged, every result matched" in said.stdout
