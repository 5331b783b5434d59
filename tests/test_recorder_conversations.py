"""Conversations that overlap, recorded for real: the openai SDK in agent processes, the
stand-in upstream on a loopback port. Each stream's calls are checked against the request
of its own conversation, never the next request in time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from streamscope.analysis import analyze

from .test_recorder import ROOT, SECRET, ends, start_proxy_process, streamscope

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

AGENT = [sys.executable, "-m", "tests.conversation_agent"]
ENV = {"OPENAI_API_KEY": SECRET}


def record(upstream, out, *args: str) -> subprocess.CompletedProcess:
    done = streamscope(
        "record", "--upstream", upstream.url, "-o", str(out), "--", *AGENT, *args, env=ENV, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return done


def questions(path) -> dict[int, str]:
    """Each exchange's first user message (which conversation it belongs to)."""
    out = {}
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d["type"] == "request":
                body = json.loads(d["body"])
                out[d["exchange"]] = next(
                    m["content"] for m in body["messages"] if m["role"] == "user"
                )
    return out


def test_four_interleaved_conversations_in_one_process_keep_the_contract(tmp_path, upstream):
    out = tmp_path / "four.jsonl"
    done = record(upstream, out, "interleave", "4")
    asked = questions(out)
    # 4 conversations of 4 streams; the second round asks the last conversation first
    assert len(asked) == 16 and asked[5] == "conversation question 3"
    analysis = analyze(out)
    assert [f.message for f in analysis.contract] == []
    assert sum(len(s.tool_calls) for s in analysis.streams) == 12
    assert "contract broken" not in done.stderr


def test_one_conversation_substituting_an_id_is_the_one_break(tmp_path, upstream):
    out = tmp_path / "swap.jsonl"
    record(upstream, out, "interleave", "4", "--swap", "2")
    asked = questions(out)
    (finding,) = analyze(out).contract
    assert finding.kind == "tool-call-id-substituted"
    # conversation 2's second stream, sent back by its third request
    assert asked[finding.stream] == asked[finding.exchange] == "conversation question 2"
    first = min(ex for ex, q in asked.items() if q == "conversation question 2")
    assert f"the conversation begun at exchange {first}" in finding.message
    assert '"call_client_2"' in finding.message
    report = streamscope("inspect", str(out))
    assert report.stdout.count("tool-call-id-substituted") == 1


def test_a_conversation_whose_client_rewrote_its_history_is_said_and_not_a_break(
    tmp_path, upstream
):
    out = tmp_path / "edit.jsonl"
    done = record(upstream, out, "interleave", "2", "--edit", "1")
    (finding,) = analyze(out).contract
    assert (finding.kind, finding.severity, finding.exchange) == ("continuation-missing", "info", 2)
    assert "its history does not begin with exchange 2's request" in finding.message
    assert "contract broken" not in done.stderr
    assert "conversation contract not checked for some streams" in done.stderr


def test_twenty_conversations_from_five_processes_through_the_proxy(tmp_path, upstream):
    proxy, base, path = start_proxy_process(tmp_path, upstream)
    try:
        env = {**os.environ, **ENV, "OPENAI_BASE_URL": base}
        clients = [
            subprocess.Popen(
                [*AGENT, "interleave", "4", "--tag", f"p{p}", *(["--swap", "1"] if p == 3 else [])],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for p in range(5)
        ]
        for c in clients:
            _, err = c.communicate(timeout=120)
            assert c.returncode == 0, err
    finally:
        proxy.terminate()
        proxy.wait(30)
    asked = questions(path)
    assert len(asked) == 80
    (finding,) = analyze(path).contract
    assert finding.kind == "tool-call-id-substituted"
    assert asked[finding.stream] == asked[finding.exchange] == "p3 question 1"


def test_a_client_that_stops_reading_early_is_no_error(tmp_path, upstream):
    out = tmp_path / "break.jsonl"
    done = record(upstream, out, "break")
    assert json.loads(done.stdout) == {"read": 5}
    assert ends(out)[1].reason == "client-closed"
    (stream,) = analyze(out).streams
    assert stream.ended == "client-closed"
    kinds = {a.kind: a for a in stream.anomalies}
    cut = kinds["args-invalid-json"]
    assert cut.severity == "warning" and "cut by the client" in cut.message
    assert kinds["stream-truncated"].severity == "warning"
    assert all(a.severity != "error" for a in stream.anomalies)
    strict = streamscope("inspect", "--strict", str(out))
    assert strict.returncode == 0, strict.stdout
    doc = json.loads(streamscope("inspect", "--json", str(out)).stdout)
    assert {a["kind"] for a in doc["streams"][0]["anomalies"] if a.get("cut_by_client")} >= {
        "stream-truncated",
        "args-invalid-json",
    }
