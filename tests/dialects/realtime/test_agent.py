"""The realtime demo agent on the real openai SDK's realtime client, against a loopback
WebSocket server that plays the bundled sample's session back message for message; and
an exported pytest module run through the real client's connection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

from streamscope.analysis import analyze
from streamscope.export.fixtures import export

from .events import body
from .sessions import write

pytest.importorskip("openai")
websockets = pytest.importorskip("websockets")
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[3] / "recordings" / "realtime-two-calls.jsonl"


def _recorded() -> list[tuple[str, dict]]:
    out = []
    for line in SAMPLE.read_bytes().splitlines():
        d = orjson.loads(line)
        if d["type"] == "message" and d["opcode"] == "text":
            out.append((d["from"], orjson.loads(d["data"])))
    return out


class _Player:
    """A loopback server that sends the sample's server messages in order, waiting for a
    client message wherever the sample has one (keeping what the client sent)."""

    def __init__(self) -> None:
        from websockets.sync.server import serve

        self.script = _recorded()
        self.seen: list[tuple[str, dict]] = []
        self.server = serve(self._handle, "127.0.0.1", 0)
        self.port = self.server.socket.getsockname()[1]
        self.path = ""
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handle(self, ws) -> None:
        self.path = ws.request.path
        for sender, event in self.script:
            if sender == "server":
                ws.send(orjson.dumps(event).decode())
                self.seen.append(("server", event))
            else:
                self.seen.append(("client", json.loads(ws.recv(timeout=10))))
        ws.close()

    def __enter__(self) -> _Player:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join(5)


def test_the_agent_runs_its_tool_loop_against_the_sample_and_reads_as_recorded(tmp_path):
    with _Player() as player:
        env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{player.port}/v1"}
        env.pop("OPENAI_API_KEY", None)
        done = subprocess.run(
            [sys.executable, "-m", "streamscope.demo.realtime_agent"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])  # the agent's own account
    assert [(c["name"], json.loads(c["arguments"])) for c in said["calls"]] == [
        ("get_weather", {"city": "Paris"}),
        ("get_local_time", {"tz": "Europe/Paris"}),
    ]
    assert said["answer"] == "It is 14 °C and overcast in Paris, where it is 10:42."
    assert player.path == "/v1/realtime?model=gpt-realtime"
    sent = [e["type"] for s, e in player.seen if s == "client"]
    assert sent == [e["type"] for s, e in player.script if s == "client"]
    # what went over the socket, read as a recording of it: each call answered once
    a = analyze(write(tmp_path / "agent.jsonl", player.seen))
    assert [len(s.tool_calls) for s in a.streams] == [2, 0]
    assert a.contract == [] and a.compared == 1
    assert not a.streams[0].differs("openai-sdk")


def test_an_exported_module_passes_through_the_real_clients_connection(tmp_path):
    turn = [e for s, e in _recorded() if s == "server"][:21]  # the first response's
    saved = tmp_path / "turn.jsonl"
    saved.write_bytes(body(turn))
    made = export(str(saved), "pytest")
    module = tmp_path / "test_exported.py"
    module.write_text(made.data.decode() if isinstance(made.data, bytes) else made.data)
    assert "RealtimeConnection" in module.read_text()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # it needs no plugin
    )
    assert done.returncode == 0, done.stdout + done.stderr
