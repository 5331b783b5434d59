"""The OTLP export read back from a real Arize Phoenix (scripts/phoenix_check.py), where
Phoenix is installed: in this Python, or at $STREAMSCOPE_PHOENIX_PYTHON (a Python that has
it; about 20 seconds, so never found by itself in .tools/phoenix, where
`scripts/phoenix_check.py --install` puts it: that run is a step of its own). Also,
without Phoenix: the script's comparison fails what it should (a conversation split over
two traces, a finding left out)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamscope.analysis import analyze

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "phoenix_check.py"


def _script():
    spec = importlib.util.spec_from_file_location("phoenix_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("phoenix_check", module)  # its dataclasses look themselves up
    spec.loader.exec_module(module)
    return module


def _phoenix() -> str | None:
    given = os.environ.get("STREAMSCOPE_PHOENIX_PYTHON")
    if given:
        return given
    return sys.executable if importlib.util.find_spec("phoenix") else None


def _has_otlp_export() -> bool:
    from streamscope.cli import export

    return any("otlp" in getattr(p.type, "choices", ()) for p in export.params if p.name == "fmt")


@pytest.mark.slow
@pytest.mark.skipif(_phoenix() is None, reason="Arize Phoenix is not installed")
@pytest.mark.skipif(not _has_otlp_export(), reason="this streamscope has no OTLP export")
def test_phoenix_shows_a_trace_per_conversation_and_a_span_per_exchange():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--phoenix", str(_phoenix())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 traces for 2 conversations" in done.stdout
    assert ", 0 failed" in done.stdout


def test_the_comparison_fails_a_split_conversation_and_a_lost_finding(tmp_path):
    script = _script()
    a = analyze(script.default_recording(tmp_path))
    want = script.expected(a)
    # what Phoenix gives back for the script's own export, read as its API returns spans
    spans = []
    for resource in script.stand_in(a)["resourceSpans"]:
        for s in resource["scopeSpans"][0]["spans"]:
            attributes = {kv["key"]: next(iter(kv["value"].values())) for kv in s["attributes"]}
            if "streamscope.exchange" in attributes:
                attributes["streamscope.exchange"] = int(attributes["streamscope.exchange"])
            events = [
                {
                    "name": ev["name"],
                    "attributes": {
                        kv["key"]: kv["value"]["stringValue"] for kv in ev["attributes"]
                    },
                }
                for ev in s.get("events", [])
            ]
            spans.append(
                {
                    "name": s["name"],
                    "context": {"trace_id": s["traceId"], "span_id": s["spanId"]},
                    "start_time": s["startTimeUnixNano"],
                    "attributes": attributes,
                    "events": events,
                }
            )
    whole = script.compare(want, spans)
    # the tool calls as Phoenix reads them are Phoenix's own work: not here
    assert [f for f in whole.failed if "Phoenix reads" not in f] == []

    split = [dict(s) for s in spans]
    second = next(s for s in split if s["attributes"].get("streamscope.exchange") == 2)
    second["context"] = {"trace_id": "0" * 32, "span_id": "1" * 16}
    lost = [
        dict(s, events=[]) if s["attributes"].get("streamscope.exchange") == 3 else s for s in spans
    ]
    assert "conversation 1 (exchanges 1, 2) is one trace" in script.compare(want, split).failed
    assert (
        "exchange 3: anomaly block-stop-missing an event of its span"
        in script.compare(want, lost).failed
    )
