"""The replay's exchange summaries are typed (driver.ExchangeSummary and its parts) and
cross to the child process and back unchanged, each finding with its own severity."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.analysis.driver import (
    AssembledCall,
    ExchangeSummary,
    RequestFinding,
    Seen,
    summarize_exchanges,
    summarize_in_child,
)

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"


@pytest.mark.parametrize(
    "name",
    ["buggy-agent-uuid.jsonl", "gemini-signature-dropped.jsonl", "dashscope-truncated-args.jsonl"],
)
def test_the_child_gives_what_this_process_does(name):
    here = summarize_exchanges(str(RECORDINGS / name))
    assert summarize_in_child(str(RECORDINGS / name)) == here
    assert [ExchangeSummary.from_json(r.to_json()) for r in here] == here


def test_a_summary_carries_each_kind_with_its_severity():
    rows = {r.exchange: r for r in summarize_exchanges(str(RECORDINGS / "buggy-agent-uuid.jsonl"))}
    (finding,) = [f for f in rows[2].findings if f.kind == "tool-call-id-substituted"]
    assert isinstance(finding, RequestFinding) and finding.severity == "error"
    assert Seen("tool-call-id-substituted", "error") in rows[2].seen
    assert all(isinstance(c, AssembledCall) for r in rows.values() for c in r.calls)
    assert rows[1].calls and rows[1].calls[0].id


def test_a_call_sent_back_with_no_id_keeps_its_name_pair():
    rows = summarize_exchanges(str(RECORDINGS / "gemini-signature-dropped.jsonl"))
    calls = [f.call for r in rows for f in r.findings if f.call is not None]
    assert calls and all(c == ["name", c[1]] or isinstance(c, str) for c in calls)
