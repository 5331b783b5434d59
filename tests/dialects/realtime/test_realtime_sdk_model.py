"""`openai-sdk` (sdk_model.RealtimeSdkEmulation) against the real openai package: the same
messages parsed by its `RealtimeConnection.parse_event` and collected as the emulation
says users collect them (a completed function_call item at output_item.added / .done),
call for call and exception for exception."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.core.calls import StrategyError, Unmodeled
from streamscope.dialects.realtime.oracle import realtime_sdk_result, run_real_realtime
from streamscope.dialects.realtime.sdk_model import RealtimeSdkEmulation

from .events import ARGS, SENT_ITEM, call, frames, item, item_done, numbered, response
from .test_realtime import CASES, streams

pytest.importorskip("openai")


def _emulated(found):
    emu = RealtimeSdkEmulation()
    try:
        for frame in found:
            emu.feed(frame)
    except Unmodeled:
        return None
    return emu.finish(found[-1].number if found else 0)


def _key(got):
    if isinstance(got, StrategyError):
        return ("raises", got.error, got.frame)
    return [(c.index, c.id, c.type, c.name, c.arguments, c.item_id, c.first_frame) for c in got]


def _same(found) -> None:
    mine = _emulated(found)
    if mine is None:  # declined: the real parse answers for it
        assert not isinstance(realtime_sdk_result(found), Unmodeled)
        return
    assert _key(mine) == _key(run_real_realtime(found))


@pytest.mark.parametrize("kind", sorted(k for k, case in CASES.items() if case[0] is not None))
def test_every_case_collects_as_the_real_client_does(kind):
    _same(frames(CASES[kind][0]))


ODD = [
    "[1, 2]",
    "null",
    '"text"',
    "3",
    "{not json",
    "",
    "NaN",
    '{"type": "response.output_item.done", "item": NaN}',
    '{"type": "response.output_item.done", "item": {"type": "function_call", "status": "completed", "call_id": 123456789012345678901234567890}}',
    '{"type": "response.output_item.done"}',
    '{"type": "response.output_item.added", "item": "x"}',
    '{"type": "response.output_item.done", "item": {"type": "function_call", "status": "completed"}}',
    '{"type": "response.output_item.done", "item": {"type": "function_call", "status": "completed", "arguments": {"a": 1}, "name": 0, "id": false, "call_id": []}}',
    '{"type": "response.output_item.done", "item": {"type": ["function_call"], "status": "completed"}}',
    '{"type": "response.output_item.done", "item": {"status": "completed"}}',
    '\ufeff{"type": "response.output_item.done", "item": {"type": "function_call", "status": "completed"}}',
    '{"type": "response.output_item.done", "item": {"type": "function_call", "status": "completed", "_fields_set": 1}}',
]


@pytest.mark.parametrize("raw", ODD)
def test_odd_messages_collect_and_raise_as_the_real_client_does(raw):
    _same(frames([*response(call())[:2], raw, *response(call())[2:]]))


def test_a_completed_item_added_runs_too_and_an_incomplete_one_never():
    early = numbered([{"type": "response.output_item.added", "output_index": 0, "item": SENT_ITEM}])
    late = response(
        [*call()[:-1], item_done(0, item(arguments="".join(ARGS), status="incomplete"))]
    )
    for events in (early, late):
        _same(frames(events))
    assert len(_emulated(frames(early))) == 1 and _emulated(frames(late)) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams, st.lists(st.sampled_from(ODD), max_size=3), st.randoms())
def test_random_sessions_collect_as_the_real_client_does(events, odd, rng):
    mixed = list(events)
    for raw in odd:
        mixed.insert(rng.randint(0, len(mixed)), raw)
    _same(frames(mixed))
