"""The sample inputs in recordings/: what recordings/README.md says `inspect` shows on each.

For every sample, `streamscope inspect --json` exits 0, its robust calls carry exactly the
ids the provider sent ("" where it sent none, never an invented one), and the anomaly
kinds, strategy differences and contract findings the README lists are there. The files
are also checked to be what scripts/make_recordings.py writes today.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamscope.cli import main

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
SCRIPT = ROOT / "scripts" / "make_recordings.py"

STRATEGIES = {"guarded", "naive", "openai-sdk", "openai-docs", "by-id"}
ANTHROPIC = {"anthropic-sdk", "start-concat", "last-block", "truthy"}

# file -> what the README says about its first stream (the one with the tool calls):
#   ids       the robust calls' ids, in order, exactly as the provider sent them
#   kinds     anomaly kinds that must be present
#   differs   strategies whose calls differ from robust's
#   errors    strategies that raise (name -> exception type)
#   contract  the contract kinds of the whole recording
SAMPLES: dict[str, dict] = {
    "openai.jsonl": {
        "ids": ["call_Qm3xF8bVt2LcN9pR1sWd7yKe", "call_7HbZkT0uWq4eYs2mNd9LpXa1"],
        "kinds": {"interleaved"},
        "differs": {"by-id"},
        "errors": {},
        "contract": set(),
    },
    "dashscope-truncated-args.jsonl": {
        "ids": ["call_2b6e0c1f9d7a4a58b3e1c6d2"],
        "kinds": {"args-invalid-json", "finish-reason-mismatch"},
        "differs": set(),
        "errors": {"openai-sdk": "LengthFinishReasonError"},
        "contract": {"tool-call-arguments-repaired"},
    },
    "alibaba-empty-id.jsonl": {
        "ids": ["call_eee11723464a4b9eb8cee71d"],
        "kinds": {"id-empty-overwrite", "name-empty-overwrite"},
        "differs": {"naive"},
        # the docs snippet reads chunk.choices[0]: the usage-only chunk has none
        "errors": {"openai-docs": "IndexError"},
        "contract": set(),
    },
    "llamacpp.jsonl": {
        "ids": ["call_R7kTQz2mXhV9bN4pLw8sYc3D"],
        "kinds": {"args-opener-nonempty"},
        "differs": {"openai-docs"},
        "errors": {},
        "contract": set(),
    },
    "ollama-no-ids.jsonl": {
        "ids": [""],
        "kinds": {"id-missing", "finish-reason-mismatch", "role-repeated", "args-opener-nonempty"},
        "differs": {"openai-sdk", "openai-docs"},
        "errors": {},
        "contract": set(),
    },
    "vllm.jsonl": {
        "ids": [
            "chatcmpl-tool-9c2e4a7f1b3d45e8a6c0f2d9b7e1a354",
            "chatcmpl-tool-e1b7d3a95c2f48b0b4d6a8c1f3e5079d",
        ],
        "kinds": set(),
        "differs": set(),
        "errors": {"openai-docs": "TypeError"},
        "contract": set(),
    },
    "ids-repeated.jsonl": {
        "ids": ["call_kF3wZq8nR1tY5vB0mX7cL2pD"],
        "kinds": {"id-repeated", "name-repeated"},
        "differs": {"openai-sdk"},
        "errors": {},
        "contract": set(),
    },
    "gateway-direct.jsonl": {
        "ids": ["call_Vb8Rz2KqT5nX1mLw7cYe4PdS"],
        "kinds": set(),
        "differs": set(),
        "errors": {},
        "contract": set(),
    },
    "gateway-litellm.jsonl": {
        "ids": ["call_Vb8Rz2KqT5nX1mLw7cYe4PdS"],
        "kinds": {"id-changed"},
        "differs": {"guarded", "naive", "openai-sdk", "by-id"},
        "errors": {},
        "contract": set(),
    },
    "parallel-index-0.jsonl": {
        "ids": ["call_y1x2xk9r", "call_n5qk0p2e"],
        "kinds": {"index-reused"},
        "differs": {"guarded", "naive", "openai-sdk", "openai-docs"},
        "errors": {},
        "contract": set(),
    },
    "first-index-1.jsonl": {
        "ids": ["toolu_01A9mQ3xV7bK2pL8nR4tW6yZ"],
        "kinds": {"index-gap"},
        "differs": set(),
        "errors": {"openai-sdk": "IndexError"},
        "contract": set(),
    },
    "name-fragments.jsonl": {
        "ids": ["call_Ht4nW8cQ2zR6mK0vB3xJ7pLs"],
        "kinds": {"name-fragmented"},
        "differs": {"guarded", "naive", "openai-docs", "by-id"},
        "errors": {},
        "contract": set(),
    },
    "args-resent.jsonl": {
        "ids": ["call_Vb5nM1xK9qT3wZ7rY2cF6hJd"],
        "kinds": {"args-resent", "id-repeated", "name-repeated"},
        "differs": STRATEGIES,
        "errors": {},
        "contract": set(),
    },
    "buggy-agent-uuid.jsonl": {
        "ids": ["call_Wd2rLk9ZxQ4mVb7TnY1sHc8E"],
        "kinds": set(),
        "differs": set(),
        "errors": {},
        "contract": {"tool-call-id-substituted"},
    },
    "custom-tool.jsonl": {
        "ids": ["call_Jx4mT8qW2zN6vB0kR3yH7cLd", "call_Ps9dF1gK5nM3xZ7wQ2tV6bYe"],
        "kinds": set(),
        "differs": set(),
        # openai 3.63 keeps the custom call as a function tool call with a `custom` extra,
        # then get_final_completion() reads `.name` on that dict
        "errors": {"openai-sdk": "AttributeError"},
        "contract": set(),
    },
    "gemini-no-index.sse": {
        "ids": ["function-call-13712447254226412846", "function-call-5183419573382718213"],
        "kinds": {"index-missing", "finish-reason-mismatch"},
        "differs": {"guarded", "naive", "openai-docs"},
        "errors": {"openai-sdk": "TypeError"},
        "contract": set(),
    },
    "deepseek-cumulative.chunks.jsonl": {
        "ids": ["call_00_Xg5Rk2pLm9Qz7Wv3Tn8Bc4Hd"],
        "kinds": {"args-cumulative"},
        "differs": STRATEGIES,
        "errors": {},
        "contract": set(),
    },
    "ollama-two-calls.jsonl": {
        "ids": ["", ""],
        "kinds": {"call-before-done", "id-missing", "done-reason-stop-with-calls"},
        "differs": {"stop-at-done", "content-only", "by-name"},
        "errors": {},
        "contract": set(),
    },
    "bedrock-text-without-start.jsonl": {
        "ids": ["tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"],
        "kinds": {"text-after-tool-start"},
        "differs": {"last-start", "start-only"},
        "errors": {},
        "contract": set(),
    },
    # its first stream is codex's warm-up (no call); test_codex_websocket reads the rest
    "codex-websocket.jsonl": {
        "ids": [],
        "kinds": set(),
        "differs": set(),
        "errors": {},
        "contract": set(),
        "answer": False,
    },
    "ollama-native-two-calls.ndjson": {
        "ids": ["", ""],
        "kinds": {"call-before-done", "id-missing", "done-reason-stop-with-calls"},
        "differs": {"stop-at-done", "content-only", "by-name"},
        "errors": {},
        "contract": set(),
    },
    # Anthropic Messages
    "anthropic-tool-use.jsonl": {
        "ids": ["toolu_01A9xKfQ2bZ7mNc4WvR8tLpY", "toolu_01Hs3JdE6kVb0qXn2TyU5wMa"],
        "kinds": {"partial-json-empty"},
        "differs": {"start-concat"},
        "errors": {"truthy": "SyntaxError"},
        "contract": set(),
    },
    "anthropic-max-tokens.jsonl": {
        "ids": ["toolu_01Rk7WcN2mXq5Zb8VtY3hLsD"],
        "kinds": {"block-stop-missing", "args-invalid-json", "stop-reason-mismatch"},
        "differs": {"anthropic-sdk", "start-concat"},
        "errors": {},
        "contract": {"tool-call-arguments-repaired"},
    },
    "anthropic-spliced-message.jsonl": {
        "ids": ["toolu_01Gb8NwQ4rT2xV6mK9cZ3pHy", "toolu_01Xf2MvS7kR4nB9wL3tQ6dJa"],
        "kinds": {"message-start-repeated", "block-stop-missing", "args-invalid-json"},
        "differs": {"anthropic-sdk", "start-concat"},
        "errors": {},
        "contract": {"tool-call-arguments-repaired", "tool-call-arguments-changed"},
    },
    "anthropic-start-input.jsonl": {
        "ids": ["toolu_01Nc4VbR8tX2mQ6wK9zH3pLs"],
        "kinds": {"block-start-input-nonempty"},
        "differs": {"start-concat"},
        "errors": {},
        "contract": set(),
    },
    "anthropic-buggy-agent.jsonl": {
        "ids": ["toolu_01Pz5MwK9rT3xQ7nV2bY6cLh"],
        "kinds": {"partial-json-empty"},
        "differs": {"start-concat"},
        "errors": {},
        "contract": {"tool-result-id-mismatch", "tool-result-missing"},
    },
    # the OpenAI Responses API
    "responses-done-only.jsonl": {
        "ids": ["call_lms_7f3a9c21"],
        "kinds": {"args-done-only"},
        "differs": {"deltas-only", "current-item"},
        "errors": {"strict-done": "ChatProviderError"},
        "contract": {"tool-call-arguments-invalid"},
    },
    "responses-done-mismatch.jsonl": {
        "ids": ["call_Qm8xT2vN5kR7wP3z"],
        "kinds": {"args-done-mismatch"},
        "differs": set(),
        "errors": {"strict-done": "ChatProviderError"},
        "contract": set(),
    },
    "responses-interleaved.jsonl": {
        "ids": ["call_llama_0", "call_llama_1", "call_llama_2"],
        "kinds": {"items-interleaved"},
        "differs": {"current-item"},
        "errors": {},
        "contract": {"tool-call-arguments-invalid"},
    },
    "responses-parallel-wrapper.jsonl": {
        "ids": ["call_Zr4nB8wQ2mX6tK9v"],
        "kinds": {"parallel-wrapper", "name-undeclared"},
        "differs": set(),
        "errors": {},
        "contract": {
            "tool-call-id-substituted",
            "tool-call-name-changed",
            "tool-call-arguments-changed",
        },
    },
    "responses-custom-tool.jsonl": {
        "ids": ["call_Vx7kP3mR9tQ2nW5b"],
        "kinds": set(),
        "differs": set(),
        "errors": {},
        "contract": set(),
    },
    # OpenAI Realtime: a WebSocket session, one stream per response
    "realtime-two-calls.jsonl": {
        "ids": ["call_Wq3xM8pT2kR5vN7z", "call_Bz6nK1rY4hT9sL2c"],
        "kinds": set(),
        "differs": {"every-done", "item-id-only"},
        "errors": {},
        "contract": set(),
    },
    # Gemini (no ids on AI Studio: "" and never an invented one)
    "gemini-parallel-signature.jsonl": {
        "ids": ["", ""],
        "kinds": {"thought-signature", "parallel-in-one-chunk", "finish-stop-with-calls"},
        "differs": {"index-0", "drops-signature"},
        "errors": {},
        "contract": set(),
    },
    "gemini-signature-dropped.jsonl": {
        "ids": ["", ""],
        "kinds": {"thought-signature", "parallel-in-one-chunk"},
        # the client that sent the next request back without the signature builds its calls
        # as drops-signature does: the contract's finding and the strategy line up
        "differs": {"index-0", "drops-signature"},
        "errors": {},
        "contract": {"thought-signature-dropped"},
        "answer": False,  # Gemini refuses the next request: HTTP 400
    },
    "gemini-streamed-args.jsonl": {
        "ids": ["", ""],
        "kinds": {"args-absent", "thought-signature"},
        "differs": {"parts", "index-0", "chunk-index", "needs-terminal", "drops-signature"},
        "errors": {},
        "contract": set(),
    },
    "gemini-unterminated.jsonl": {
        "ids": [""],
        "kinds": {"partial-args-unterminated"},
        "differs": {"parts", "index-0", "chunk-index", "needs-terminal", "drops-signature"},
        "errors": {},
        "contract": set(),
    },
    "gemini-malformed.jsonl": {
        "ids": [],
        "kinds": {"malformed-function-call"},
        "differs": set(),
        "errors": {},
        "contract": set(),
        "answer": False,  # the agent asks again: the second answer is the call
    },
}

FORMATS = {
    "gemini-no-index.sse": "sse",
    "deepseek-cumulative.chunks.jsonl": "chunks",
    "ollama-native-two-calls.ndjson": "chunks",
}
RESPONSES = {"openai-sdk", "deltas-only", "current-item", "strict-done"}
GEMINI = {"parts", "index-0", "chunk-index", "needs-terminal", "drops-signature"}
# per sample name's prefix: its dialect, its client strategies, how its answer finishes
# (the raw inputs, FORMATS, are Chat Completions; RAW names the samples whose name does
# not tell their dialect)
DIALECT = {
    "anthropic-": ("anthropic-messages", ANTHROPIC, "end_turn"),
    "responses-": ("openai-responses", RESPONSES, "completed"),
    "gemini-": ("gemini", GEMINI, "STOP"),
    "bedrock-": (
        "bedrock-converse",
        {"strands", "last-start", "start-only", "stop-on-end-turn"},
        "end_turn",
    ),
    "realtime-": (
        "openai-realtime",
        {"openai-sdk", "every-done", "item-id-only", "response-done-only"},
        "completed",
    ),
}
OLLAMA = ("ollama-chat", {"ollama-python", "stop-at-done", "content-only", "by-name"}, "stop")
RAW = {
    "ollama-native-two-calls.ndjson": OLLAMA,
    "ollama-two-calls.jsonl": OLLAMA,
    "codex-websocket.jsonl": ("openai-responses", RESPONSES, "completed"),
}
# the robust arguments a correct client sends back (repaired where the README says so)
ARGUMENTS = {
    "dashscope-truncated-args.jsonl": ['{"city": "Hangzhou", "days": 1'],
    "alibaba-empty-id.jsonl": ['{"location": "Hangzhou, Zhejiang", "unit": "celsius"}'],
    "parallel-index-0.jsonl": ['{"city":"Tokyo"}', '{"timezone":"Asia/Tokyo"}'],
    "args-resent.jsonl": ['{"amount": 250, "from": "EUR", "to": "JPY"}'],
    "deepseek-cumulative.chunks.jsonl": ['{"city": "Beijing", "unit": "celsius"}'],
    "custom-tool.jsonl": ['grep -rn "TODO" src/ | head -20', '{"path": "README.md"}'],
    "anthropic-spliced-message.jsonl": ['{"city": "Osl', '{"city": "Oslo"}'],
    "anthropic-max-tokens.jsonl": [
        '{"path": "notes/plan.md", "lines": ["# Plan", "1. Book the venue", "2. Send the invit'
    ],
    "responses-done-only.jsonl": ['{"city":"Lyon","unit":"celsius"}'],
    "responses-done-mismatch.jsonl": ['{"query":"rate limits for the batch API"}'],
    "responses-custom-tool.jsonl": [
        "SELECT country, COUNT(*) AS users FROM users GROUP BY country ORDER BY users DESC LIMIT 3;"
    ],
    "gemini-streamed-args.jsonl": [
        "{}",
        '{"title":"Design review","when":{"start":"2026-12-02T10:00","minutes":45},'
        '"attendees":["ana@acme.dev","bo@acme.dev"]}',
    ],
    "gemini-unterminated.jsonl": ['{"city":"Porto"}'],
    "bedrock-text-without-start.jsonl": ['{"city": "Paris"}'],
}
# what the anthropic SDK builds where it differs (the samples' second requests send it back)
SDK_BUILDS = {
    "anthropic-spliced-message.jsonl": ['{"city":"Osl{"}', "{}"],
    "anthropic-max-tokens.jsonl": [
        '{"path":"notes/plan.md","lines":["# Plan","1. Book the venue"]}'
    ],
}


def inspect_json(name: str) -> dict:
    result = CliRunner().invoke(main, ["inspect", str(RECORDINGS / name), "--json"])
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return json.loads(result.stdout)


def test_every_sample_is_listed():
    on_disk = {p.name for p in RECORDINGS.iterdir() if p.name != "README.md"}
    assert on_disk == set(SAMPLES)
    readme = (RECORDINGS / "README.md").read_text()
    for name in SAMPLES:
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample(name: str):
    want = SAMPLES[name]
    doc = inspect_json(name)
    assert doc["format"] == FORMATS.get(name, "recording")
    first = doc["streams"][0]
    assert first["exchange"] == 1

    # the ids the provider sent, never an invented one
    ids = [c["id"] for c in first["tool_calls"]]
    assert ids == want["ids"]
    raw = (RECORDINGS / name).read_text(encoding="utf-8")
    for i in ids:
        assert i == "" or i in raw

    kinds = {a["kind"] for a in first["anomalies"]}
    assert want["kinds"] <= kinds, kinds

    told, clients, finish = RAW.get(name) or next(
        (v for prefix, v in DIALECT.items() if name.startswith(prefix) and name not in FORMATS),
        ("chat-completions", STRATEGIES, "stop"),
    )
    assert first["dialect"] == told
    strategies = first["strategies"]
    assert set(strategies) == clients
    errors = {n: s["error"].split(":")[0] for n, s in strategies.items() if "error" in s}
    assert errors == want["errors"]
    differs = {n for n, s in strategies.items() if "error" not in s and s["differs"]}
    assert differs == want["differs"]

    assert {f["kind"] for f in doc["contract"]} == want["contract"]
    # every tool a sample's request declares has its name (the Ollama sample's request
    # wrapped its declaration twice: inspect said "request tools (1): null")
    for stream in doc["streams"]:
        assert all(isinstance(t["name"], str) for t in stream.get("request_tools") or []), name

    if name in ARGUMENTS:
        assert [c["arguments"] for c in first["tool_calls"]] == ARGUMENTS[name]
    if name in SDK_BUILDS:
        sdk = strategies["anthropic-sdk"]["tool_calls"]
        assert [c["arguments"] for c in sdk] == SDK_BUILDS[name]

    if doc["format"] == "recording" and want.get("answer", True):
        # a whole two-turn exchange: the answer is plain text, finished by "stop"
        assert len(doc["streams"]) == 2
        second = doc["streams"][1]
        assert second["tool_calls"] == []
        assert second["finish_reason"] == finish
        assert second["ended"] == "done"
        assert second["content"]


def test_codex_websocket_is_one_session_of_three_responses():
    doc = inspect_json("codex-websocket.jsonl")
    assert [(s["exchange"], s["turn"], s["framing"]) for s in doc["streams"]] == [
        (1, 1, "websocket"),
        (1, 2, "websocket"),
        (1, 3, "websocket"),
    ]
    warm, call, answer = doc["streams"]
    assert not warm["tool_calls"] and warm["finish_reason"] == "completed"
    [c] = call["tool_calls"]
    assert (c["id"], c["name"], json.loads(c["arguments"])) == (
        "call_Zq7Xv3Kp9LmN2bRt",
        "shell",
        {"command": ["bash", "-lc", "ls"]},
    )
    assert answer["content"].startswith("The folder holds")
    assert doc["contract"] == []  # response 3 answers the call of response 2


def test_custom_tool_is_a_valid_stream_with_its_input_as_text():
    doc = inspect_json("custom-tool.jsonl")
    custom, function = doc["streams"][0]["tool_calls"]
    assert (custom["type"], custom["name"], custom["repair"]) == ("custom", "run_shell", None)
    assert (function["type"], function["name"]) == ("function", "read_file")
    assert doc["streams"][0]["anomalies"] == []


def test_openai_is_clean():
    doc = inspect_json("openai.jsonl")
    for stream in doc["streams"]:
        assert [a for a in stream["anomalies"] if a["severity"] != "info"] == []
    assert doc["contract"] == []


def test_truncated_args_crow_repair():
    call = inspect_json("dashscope-truncated-args.jsonl")["streams"][0]["tool_calls"][0]
    assert call["repair"]["crow"] == {
        "action": "closed-brackets",
        "result": '{"city": "Hangzhou", "days": 1}',
    }
    assert call["repair"]["best"]["changed_meaning"] is True


def test_samples_are_what_the_script_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location("make_recordings", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    paths = module.write_all(tmp_path)
    assert {p.name for p in paths} == set(SAMPLES)
    for p in paths:
        assert p.read_bytes() == (RECORDINGS / p.name).read_bytes(), p.name
