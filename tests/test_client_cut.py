"""A stream the client closed: what follows from the cut is the client's, not the provider's."""

from __future__ import annotations

from .helpers import run


def _delta(index: int, args: str, cid: str | None = None) -> dict:
    call: dict = {"index": index, "function": {"arguments": args}}
    if cid is not None:
        call |= {"id": cid, "type": "function", "function": {"name": "f", "arguments": args}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


# call 0 ends with arguments that do not parse (the provider's), call 1 is cut mid-way
CHUNKS = [
    _delta(0, "", "call_0"),
    _delta(0, '{"a": 1,,}'),
    _delta(1, "", "call_1"),
    _delta(1, '{"b": '),
]


def _by_index(result) -> dict:
    return {(a.kind, a.index): a for a in result.anomalies}


def test_the_cut_is_a_warning_said_as_the_clients_and_the_providers_own_errors_stay():
    found = _by_index(run(CHUNKS, done=False, end_reason="client-closed"))
    cut = found[("args-invalid-json", 1)]
    assert (cut.severity, cut.cut_by_client) == ("warning", True)
    assert "cut by the client" in cut.message
    whole = found[("args-invalid-json", 0)]  # it ended before the cut: still an error
    assert (whole.severity, whole.cut_by_client) == ("error", False)
    truncated = found[("stream-truncated", None)]
    assert (truncated.severity, truncated.cut_by_client) == ("warning", True)
    assert found[("finish-reason-missing", None)].cut_by_client


def test_a_stream_the_connection_cut_is_still_an_error():
    found = _by_index(run(CHUNKS, done=False, end_reason="upstream-error"))
    assert found[("stream-truncated", None)].severity == "error"
    assert found[("args-invalid-json", 1)].severity == "error"
    assert not any(a.cut_by_client for a in found.values())


def test_a_client_that_left_after_the_end_cut_nothing():
    ended = [*CHUNKS[:2], {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    result = run(ended, done=True, end_reason="client-closed")
    assert not any(a.cut_by_client for a in result.anomalies)
    assert result.ended == "done"
