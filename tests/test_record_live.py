"""`record --live`: each finding on stderr while the agent runs, before its stream ends.

A real `streamscope record --live` runs a small agent (two Chat Completions turns)
against a fake provider on 127.0.0.1 that streams an `id-empty-overwrite` quirk at frame
2 and then holds the stream open until the test has read the finding's line on the
recorder's stderr; the agent's second turn sends back an id of its own (a contract
error, said as soon as that request is recorded).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading

import httpx
import pytest

from streamscope.analysis.live import LiveFindings, LiveLine
from streamscope.recording import RecordingWriter

KEY = "sk-live-test-0123456789abcdefghijklmnop"
CALL = {"index": 0, "type": "function"}


def _frame(delta: dict, finish: str | None = None) -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


FIRST = [  # frame 2: id "" and name "" after the real ones (a naive client loses both)
    _frame(
        {
            "role": "assistant",
            "tool_calls": [{**CALL, "id": "call_1", "function": {"name": "f", "arguments": ""}}],
        }
    ),
    _frame({"tool_calls": [{**CALL, "id": "", "function": {"name": "", "arguments": '{"a"'}}]}),
]
REST = [
    _frame({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}),
    _frame({}, "tool_calls"),
]
ANSWER = [_frame({"role": "assistant", "content": "done"}), _frame({}, "stop")]

AGENT = f"""
import os, httpx
url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
auth = {{"authorization": "Bearer {KEY}"}}
tools = [{{"type": "function", "function": {{"name": "f", "parameters": {{"type": "object"}}}}}}]
ask = [{{"role": "user", "content": "go"}}]
with httpx.stream("POST", url, json={{"model": "m", "stream": True, "messages": ask, "tools": tools}}, headers=auth, timeout=30) as r:
    r.read()
call = {{"id": "call_mine", "type": "function", "function": {{"name": "f", "arguments": '{{"a": 1}}'}}}}
history = ask + [{{"role": "assistant", "tool_calls": [call]}}, {{"role": "tool", "tool_call_id": "call_mine", "content": "1"}}]
with httpx.stream("POST", url, json={{"model": "m", "stream": True, "messages": history, "tools": tools}}, headers=auth, timeout=30) as r:
    r.read()
"""


class HeldProvider:
    """Streams FIRST, waits for `release` (at most 20 s), then REST; a second request
    gets ANSWER. `held_until_released`: the stream was still open when released."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.release = threading.Event()
        self.held_until_released = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        for turn in (1, 2):
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                top, _, body = head.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in top.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )

                def send(data: bytes, conn: socket.socket = conn) -> None:
                    conn.sendall(b"%x\r\n%s\r\n" % (len(data), data))

                if turn == 1:
                    for data in FIRST:
                        send(data)
                    self.held_until_released = self.release.wait(20)
                    reads = REST
                else:
                    reads = ANSWER
                for data in [*reads, b"data: [DONE]\n\n"]:
                    send(data)
                conn.sendall(b"0\r\n\r\n")

    def __enter__(self) -> HeldProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        with contextlib.suppress(OSError):  # wakes an accept() still waiting
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One `record --live` run: (stderr lines, provider, the line index the finding was
    read at while the stream was held)."""
    path = tmp_path_factory.mktemp("live") / "live.jsonl"
    with HeldProvider() as provider:
        command = [sys.executable, "-m", "streamscope", "record", "--live"]
        proc = subprocess.Popen(
            [
                *command,
                "--upstream",
                provider.url,
                "-o",
                str(path),
                "--",
                sys.executable,
                "-c",
                AGENT,
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        lines: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if "id-empty-overwrite" in line and not provider.release.is_set():
                provider.release.set()
        status = proc.wait(30)
    assert status == 0, "\n".join(lines)
    return lines, provider, path


@pytest.mark.slow
def test_a_finding_is_on_stderr_while_its_stream_is_still_open(recorded):
    lines, provider, _ = recorded
    assert provider.held_until_released  # released by the line, not by the 20 s timeout
    said = [line for line in lines if line.startswith("streamscope: exchange 1 ")]
    assert said[0].startswith("streamscope: exchange 1 frame 2 warning id-empty-overwrite: ")
    # each once, though seen again on later frames, and only the stream's own
    assert [line.split(":")[1] for line in said] == [
        " exchange 1 frame 2 warning id-empty-overwrite",
        " exchange 1 frame 2 warning name-empty-overwrite",
    ]


@pytest.mark.slow
def test_a_contract_error_is_said_when_the_request_is_recorded_then_the_summary(recorded):
    lines, _, path = recorded
    contract = [i for i, line in enumerate(lines) if "tool-call-id-substituted" in line]
    assert lines[contract[0]].startswith(
        "streamscope: exchange 2 request error tool-call-id-substituted: "
    )
    summary = next(i for i, line in enumerate(lines) if "recorded in" in line)
    assert contract[0] < summary  # every live line before the summary
    assert lines[-1].startswith(f"streamscope: replay it: streamscope replay {path}")
    assert not any(KEY in line for line in lines)
    assert "Traceback" not in "\n".join(lines)


@pytest.mark.slow
def test_proxy_live_says_a_finding_while_the_stream_is_held(tmp_path):
    path = tmp_path / "proxy.jsonl"
    with HeldProvider() as provider:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamscope", "proxy", "--live", "--upstream", provider.url]
            + ["-o", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None and proc.stderr is not None
            base = proc.stdout.readline().strip()
            body = {"model": "m", "stream": True, "messages": []}
            client = threading.Thread(
                target=lambda: httpx.post(base + "/chat/completions", json=body, timeout=30)
            )
            client.start()
            lines = []
            for line in proc.stderr:
                lines.append(line)
                if "id-empty-overwrite" in line:
                    provider.release.set()
                    break
            client.join(30)
            proc.send_signal(signal.SIGINT)
            rest = proc.communicate(timeout=30)[1]
        finally:
            proc.kill()
    assert provider.held_until_released, "".join(lines) + rest
    assert lines[-1].startswith("streamscope: exchange 1 frame 2 warning id-empty-overwrite")
    assert "Traceback" not in rest and "replay it: streamscope replay" in rest


def test_the_last_line_names_the_replay_command_as_a_shell_takes_it(tmp_path, capsys):
    from streamscope.record.runner import summarize

    path = tmp_path / "my recording.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", "https://api.openai.com/v1/chat/completions", [], b"{}")
        w.response(ex, 200, [("content-type", "application/json")])
        w.chunk(ex, b"{}")
        w.end(ex, "complete", None)
    summarize(w)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == (
        f"streamscope: replay it: streamscope replay '{path}'   (or: streamscope inspect '{path}')"
    )


def test_live_lines_make_recorded_text_safe_and_say_each_finding_once(tmp_path):
    """In-process: a frame whose tool name holds an ESC, read line by line as written."""
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", "https://api.openai.com/v1/chat/completions", [], b'{"stream":true}')
        w.response(ex, 200, [("content-type", "text/event-stream")])
        live = LiveFindings(str(path))
        w.chunk(ex, FIRST[0])
        assert live.update() == []
        evil = {**CALL, "id": "call_2", "function": {"name": "\x1b]0;x\x07", "arguments": ""}}
        w.chunk(ex, FIRST[1] + _frame({"tool_calls": [evil]}))
        said = live.update()
        assert [(s.exchange, s.frame, s.kind) for s in said] == [
            (1, 2, "id-empty-overwrite"),
            (1, 2, "name-empty-overwrite"),
            (1, 3, "index-reused"),
        ]
        w.chunk(ex, FIRST[1])
        assert live.update() == []  # the same findings again: said once
        w.end(ex, "complete", None)
    text = "\n".join(s.text() for s in said + live.update(final=True))
    assert "\x1b" not in text and "\x07" not in text
    line = LiveLine(3, "error", "k", "a\x1b[2Jb", None, 2)
    assert line.text() == "exchange 3 response 2 request error k: a\\x1b[2Jb"


def test_the_summary_counts_findings_as_inspect_does(capsys):
    """record's end summary and inspect say a kind seen 4 times the same way (×4)."""
    from pathlib import Path
    from types import SimpleNamespace

    from streamscope.record.runner import summarize

    sample = Path(__file__).parents[1] / "recordings"

    def writer(name: str) -> SimpleNamespace:
        path = str(sample / name)
        return SimpleNamespace(path=path, removed=False, failure=None, shown=str)

    summarize(writer("alibaba-empty-id.jsonl"))
    said = capsys.readouterr().err
    assert "2 warnings: id-empty-overwrite ×4, name-empty-overwrite ×4" in said
    summarize(writer("anthropic-max-tokens.jsonl"))
    assert "1 info finding: partial-json-empty\n" in capsys.readouterr().err  # once: no count
