"""Real cassettes from public test suites (tests/fixtures/cassettes/README.md: go-vcr v2
from charmbracelet/fantasy, vcrpy from pydantic-ai), each a multi-turn conversation
with the real provider: read with the same exchanges, calls and contract as the
recording `export --format recording` makes of them, every call carried back checked,
and no finding but the ones the bytes hold (the README says what each is)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from streamscope.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "fixtures", "cassettes", "real")
NAMES = sorted(n for n in os.listdir(REAL) if n.endswith(".yaml"))

# The warnings and errors the providers' and clients' bytes hold (README: why each is
# true), per cassette; every other finding of every other cassette is info.
KNOWN = {
    "fantasy-azure-chat-tool.yaml": {"chunk-schema-violation"},
    "fantasy-openrouter-tool.yaml": {"finish-repeated"},
    "pydantic-ai-bedrock-mantle-reused-ids.yaml": {"tool-call-id-substituted"},
}
DIALECTS = {
    "anthropic": "anthropic-messages",
    "azure": "chat-completions",
    "bedrock-anthropic": "anthropic-messages",
    "bedrock-converse": "bedrock-converse",
    "bedrock-mantle": "openai-responses",
    "deepseek-responses": "openai-responses",
    "gemini": "gemini",
    "groq": "chat-completions",
    "openai-chat": "chat-completions",
    "openai-responses": "openai-responses",
    "openrouter": "chat-completions",
    "temporal": "chat-completions",
}


def inspect_json(path: str) -> dict:
    done = CliRunner().invoke(main, ["inspect", path, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def serious(doc: dict) -> set[str]:
    found = [a for s in doc["streams"] for a in s["anomalies"]] + doc["contract"]
    return {f["kind"] for f in found if f["severity"] != "info"}


def dialect_of(name: str) -> str:
    stem = name.removeprefix("fantasy-").removeprefix("pydantic-ai-")
    return next(d for key, d in DIALECTS.items() if stem.startswith(key))


def test_the_set_covers_every_dialect_a_real_suite_streams():
    assert len(NAMES) >= 14
    assert {dialect_of(n) for n in NAMES} == {
        "anthropic-messages",
        "bedrock-converse",
        "chat-completions",
        "gemini",
        "openai-responses",
    }


@pytest.mark.parametrize("name", NAMES)
def test_a_real_conversation_reads_whole_with_no_false_finding(name):
    doc = inspect_json(os.path.join(REAL, name))
    streams = doc["streams"]
    assert len(streams) >= 2 and {s["dialect"] for s in streams} == {dialect_of(name)}
    # every stream ended as the provider ended it, read whole
    assert all(s["ended"] == "done" for s in streams), [s["ended"] for s in streams]
    # the conversation: each stream with calls but the last is continued by the next
    # request, which carried its calls back and was checked
    for s in streams[:-1]:
        if s["tool_calls"]:
            assert s["continued_by"] is not None, s["exchange"]
            assert s["continued_by"]["exchange"] > s["exchange"]
    assert any(s["tool_calls"] for s in streams)
    assert serious(doc) == KNOWN.get(name, set())
    # each SDK streamscope checks against (`sdk_verified`) builds the calls robust reads
    sdks = [name for name in doc["sdk_verified"] if name in streams[0]["strategies"]]
    assert len(sdks) == 1
    for s in streams:
        assert s["strategies"][sdks[0]]["differs"] is False, s["exchange"]


@pytest.mark.parametrize("name", NAMES)
def test_a_cassette_reads_as_the_recording_it_exports_to(tmp_path, name):
    """The same exchanges, calls and contract from the cassette as from streamscope's
    own recording of it (less what only a cassette says: its notes, its name)."""
    source = os.path.join(REAL, name)
    out = tmp_path / "as-recording.jsonl"
    done = CliRunner().invoke(main, ["export", source, "--format", "recording", "-o", str(out)])
    assert done.exit_code == 0, done.output
    cassette, recording = inspect_json(source), inspect_json(str(out))

    def shape(doc: dict) -> tuple:
        streams = [
            (
                s["exchange"],
                s["dialect"],
                s["frames"],
                s["finish_reason"],
                [(c["id"], c["name"], c["arguments"]) for c in s["tool_calls"]],
                sorted((a["kind"], a.get("frame")) for a in s["anomalies"]),
            )
            for s in doc["streams"]
        ]
        contract = [(f["exchange"], f["kind"], f["severity"]) for f in doc["contract"]]
        return streams, contract

    assert shape(cassette) == shape(recording)


def test_a_folder_of_real_cassettes_scans_with_info_findings_as_findings():
    done = CliRunner().invoke(main, ["scan", REAL])
    assert done.exit_code == 0, done.output
    first = done.output.splitlines()[0]
    assert f"{len(NAMES)} read, 0 unreadable" in first
    # Gemini 2.5's ids, filled in by fantasy on both sides, hold the link: no break
    filled = [line for line in done.output.splitlines() if "tool-call-id-filled" in line]
    assert filled and all("finding" in line and "break" not in line for line in filled)
    mantle = [line for line in done.output.splitlines() if "tool-call-id-substituted" in line]
    assert len(mantle) == 1 and "2 breaks (contract)" in mantle[0]
