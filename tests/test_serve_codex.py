"""Codex completes against `streamscope serve` of its own recording: recorded under
`streamscope record` against the fake Responses upstream that speaks WebSocket
(tests/fakes/responses_ws.py), then served, and run again with the server's base URL.
A Python client that talks as codex does runs in every CI; the real codex binary where
it is installed (`codex` on PATH, or $STREAMSCOPE_CODEX), as tests/test_agent_codex.py
finds it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("websockets")
pytest.importorskip("tests.fakes.codex_client", reason="the codex fakes (tests/fakes/)")

from streamscope.playback.serve import ServeServer  # noqa: E402

from .fakes.responses_ws import ANSWER, FakeResponses  # noqa: E402
from .test_agent_codex import (  # noqa: E402
    CLI,
    CLIENT,
    CODEX,
    ROOT,
    _codex_args,
    _codex_env,
    _record_client,
    needs_codex,
)


def _client_against(base_url: str) -> dict:
    done = subprocess.run([*CLIENT, base_url], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_codex_like_client_completes_against_serve_of_its_recording(tmp_path):
    out = tmp_path / "codex-like.jsonl"
    with FakeResponses() as fake:
        recorded, _ = _record_client(fake, out)
    said: list[str] = []
    server = ServeServer([str(out)], log=said.append)
    server.start()
    try:
        served = _client_against(server.base_url)
    finally:
        server.stop()
    assert served == recorded  # on its WebSocket, the same answer, output and responses
    assert served["transport"] == "websocket" and served["answer"] == ANSWER
    turns = [line for line in said if "response.create -> turn" in line]
    assert [line.split(" -> ")[1].split(" (")[0] for line in turns] == [
        "turn 1",
        "turn 2",
        "turn 3",
    ]


@pytest.mark.slow
@needs_codex
def test_codex_completes_against_serve_of_its_own_recording(tmp_path):
    out = tmp_path / "codex.jsonl"
    runs = []
    for name in ("recorded", "served"):
        home, workdir = tmp_path / f"{name}-home", tmp_path / f"{name}-work"
        home.mkdir()
        workdir.mkdir()
        if name == "recorded":
            with FakeResponses() as fake:
                command = [*CLI, "record", "--upstream", fake.base_url, "-o", str(out), "--"]
                runs.append(_run(command + _codex_args(workdir), home))
            continue
        said: list[str] = []
        server = ServeServer([str(out)], log=said.append)
        server.start()
        try:
            args = _codex_args(workdir)
            command = [args[0], "-c", f'openai_base_url="{server.base_url}"', *args[1:]]
            runs.append(_run(command, home))
        finally:
            server.stop()
    recorded, served = runs
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert served.returncode == 0, served.stderr[-3000:]
    assert ANSWER in served.stdout
    assert "Falling back" not in served.stderr  # it stayed on the WebSocket
    assert any("(WebSocket) -> codex.jsonl exchange 1" in line for line in said), said
    assert not any("error event" in line for line in said), said
    turns = [line for line in said if "response.create -> turn" in line]
    assert len(turns) >= 2, said  # the call's turn and its continuation (a prewarm first)
    assert CODEX is not None


def _run(command: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=150,
        env=_codex_env(home),
        stdin=subprocess.DEVNULL,  # codex exec reads a piped stdin as more prompt
        cwd=ROOT,
    )
