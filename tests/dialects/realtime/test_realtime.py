"""The OpenAI Realtime API read end to end: the reading, every anomaly kind of the dialect,
each client's trap, bad input, any JSON type in any field."""

from __future__ import annotations

import functools
import json

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.core.calls import StrategyError
from streamscope.dialects import DIALECTS, claimant, of_frames, request_facts
from streamscope.dialects.realtime.engine import RealtimeEngine

from ..anthropic.test_anthropic import CHAT_ONLY
from .events import (
    ARGS,
    TWO_CALLS,
    WEATHER,
    WEATHER_TOOL,
    added,
    args_done,
    body,
    call,
    calls,
    created,
    delta,
    done,
    frames,
    item,
    item_done,
    kinds,
    lines,
    message_item,
    numbered,
    response,
    run,
)

PARIS = '{"city": "Paris"}'
SENT = item(arguments=PARIS, status="completed")
ERROR = {
    "type": "error",
    "error": {"type": "server_error", "code": "server_error", "message": "boom"},
}

# kind -> (events that trigger it, events like them that must not, run() arguments)
CASES: dict[str, tuple[list | None, list | None, dict]] = {
    "event-unknown": (response(call(), [{"type": "session.magic"}]), WEATHER, {}),
    "event-schema-violation": (response(call(), [delta(0, 42)]), WEATHER, {}),
    "responses-in-one-stream": (
        [*WEATHER, *response(call(0, "item_2", "call_2"), rid="resp_2")],
        WEATHER,
        {},
    ),
    "id-reused": (response(call(), call(1, "item_2", "call_1")), TWO_CALLS, {}),
    "delta-unknown-item": (response(call(), [delta(5, "x", "item_9")]), WEATHER, {}),
    "id-changed": (
        response([*call()[:-1], item_done(0, {**SENT, "call_id": "call_2"})]),
        WEATHER,
        {},
    ),
    "name-changed": (
        response([*call()[:-1], item_done(0, {**SENT, "name": "get_time"})]),
        WEATHER,
        {},
    ),
    "id-empty-overwrite": (
        response([*call()[:-1], item_done(0, {**SENT, "call_id": ""})]),
        WEATHER,
        {},
    ),
    "name-empty-overwrite": (
        response([*call()[:-1], item_done(0, {**SENT, "name": None})]),
        WEATHER,
        {},
    ),
    "args-done-mismatch": (response(call(done='{"city": "Rome"}')), WEATHER, {}),
    "provider-error": ([*WEATHER[:4], *numbered([ERROR])], WEATHER, {}),
    "stop-reason-mismatch": (response(call(), status="incomplete"), WEATHER, {}),
    "final-output-mismatch": (numbered([created(), *call(), done([])]), WEATHER, {}),
    "call-never-done": (numbered([created(), *call()[:-2], done([SENT])]), WEATHER, {}),
    "response-done-missing": (response(call(), end=False), WEATHER, {}),
    "tool-call-in-content": (
        response(message_item(0, '<tool_call>{"name": "get_weather"}</tool_call>')),
        response(message_item(0, "It is sunny.")),
        {},
    ),
    "id-missing": (response(call(call_id="")), WEATHER, {}),
    "name-missing": (response(call(name="")), WEATHER, {}),
    "args-empty": (response(call(parts=(), done="")), WEATHER, {}),
    "args-invalid-json": (response(call(parts=('{"city": ', '"Par'))), WEATHER, {}),
    "args-double-encoded": (response(call(parts=('"{\\"a\\": 1}"',))), WEATHER, {}),
    "call-boundary-ambiguous": (response(call(parts=('{"a": 1}', '{"a": 2}'))), WEATHER, {}),
    "name-undeclared": (response(call(name="get_time")), WEATHER, {"tools": [WEATHER_TOOL]}),
    "chunk-invalid-json": (response(call(), ["{not json"]), WEATHER, {}),
    "stream-truncated": (WEATHER, WEATHER, {"end_reason": "upstream-error"}),
}
QUIET_EXTRA = {"stream-truncated": {}}
# Kinds of other dialects' words: never on a Realtime stream.
NOT_HERE = (
    CHAT_ONLY - {"id-changed", "name-changed", "id-empty-overwrite", "name-empty-overwrite"}
) | {
    "interleaved",
    "block-start-input-nonempty",
    "partial-json-empty",
    "block-delta-without-start",
    "block-stop-missing",
    "block-index-reused",
    "message-start-repeated",
    "message-stop-missing",
    "event-name-missing",
    "args-done-only",
    "items-interleaved",
    "sequence-disorder",
    "delta-empty",
    "response-end-missing",
    "parallel-wrapper",
    "partial-args-unterminated",
    "partial-args-without-open",
    "thought-signature",
    "malformed-function-call",
    "parallel-in-one-chunk",
    "call-before-done",
    "args-string",
    "done-line-missing",
    "done-reason-stop-with-calls",
    "line-after-done",
}

# -- random streams, for the laws ------------------------------------------------------------

_ids = st.sampled_from(["item_1", "item_2", "item_9"])
_any = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.just(1.5),
    st.just([]),
    st.just({"a": 1}),
    st.just(["x"]),
)
_text = st.one_of(st.sampled_from(["", "{", '{"a": 1}', '"x"', "}"]), _any)
_event = st.one_of(
    st.builds(
        lambda i, iid, cid, name, kind: added(i, item(iid, cid, name, kind=kind)),
        st.integers(0, 3),
        _ids,
        st.one_of(st.sampled_from(["call_1", "call_2", ""]), _any),
        st.one_of(st.sampled_from(["get_weather", ""]), _any),
        st.sampled_from(["function_call", "function_call", "message"]),
    ),
    st.builds(
        delta,
        st.one_of(st.integers(0, 3), _any),
        st.one_of(st.sampled_from(['{"a', '": 1}', "", "x"]), _any),
        _ids,
        st.one_of(st.sampled_from(["call_1", "call_2"]), _any),
    ),
    st.builds(args_done, st.integers(0, 3), _text, _ids, st.sampled_from(["call_1", "call_2", ""])),
    st.builds(
        lambda i, iid, text, cid, status: item_done(
            i, item(iid, cid, arguments=text, status=status)
        ),
        st.one_of(st.integers(0, 3), _any),
        _ids,
        _text,
        st.sampled_from(["call_1", "call_2", ""]),
        st.sampled_from(["completed", "incomplete"]),
    ),
    st.builds(
        lambda text: {
            "type": "response.output_text.delta",
            "output_index": 0,
            "item_id": "item_m",
            "delta": text,
        },
        st.sampled_from(["", "hi", '"name": "f", "arguments"']),
    ),
    st.builds(
        lambda status, out: done(out, status),
        st.sampled_from(["completed", "incomplete", "failed", "cancelled"]),
        st.one_of(
            st.just([]),
            st.none(),
            st.builds(lambda text: [item(arguments=text, status="completed")], _text),
            _any,
        ),
    ),
    st.builds(lambda rid: created(rid), st.sampled_from(["resp_1", "resp_2"])),
    st.just(ERROR),
    st.just({"type": "rate_limits.updated", "rate_limits": []}),
    st.just({"type": "response.output_item.done", "item": None}),
    st.just("{not json"),
    st.just([1, 2]),
    st.just({"type": "new_event"}),
)
streams = st.builds(numbered, st.lists(_event, max_size=30))


def test_a_well_formed_stream_says_nothing_and_the_sdk_pattern_agrees():
    result = run(WEATHER, [WEATHER_TOOL])
    assert result.anomalies == [] and result.ended == "done"
    assert result.finish_reason == "completed" and result.content == "Let me look."
    assert not result.differs("openai-sdk") and not result.differs("response-done-only")


def test_a_call_has_two_ids_and_both_are_reported(tmp_path):
    (got,) = run(WEATHER).tool_calls
    assert (got.index, got.id, got.item_id, got.name, got.type) == (
        1,
        "call_1",
        "item_1",
        "get_weather",
        "function_call",
    )
    path = tmp_path / "events.jsonl"  # a client's log of a session's server events
    path.write_bytes(body(WEATHER))
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(path)]).output)
    (stream,) = doc["streams"]
    assert stream["dialect"] == "openai-realtime"
    (wire,) = stream["tool_calls"]
    assert (wire["id"], wire["item_id"]) == ("call_1", "item_1")


def test_the_beta_apis_names_read_as_the_ga_names():
    beta = response(message_item(0, "Let me look.", beta=True), call(1, beta=True))
    assert calls(run(beta)) == calls(run(WEATHER)) and run(beta).content == "Let me look."
    assert run(beta).anomalies == []
    # an audio answer's text is its transcript, in either API's words
    for kind in ("response.output_audio_transcript.delta", "response.audio_transcript.delta"):
        spoken = numbered(
            [
                created(),
                {"type": kind, "item_id": "item_m", "output_index": 0, "delta": "Hi."},
                done([]),
            ]
        )
        assert run(spoken).content == "Hi."


# -- each client's trap, reproduced ---------------------------------------------------------


def test_every_done_runs_each_call_once_per_done_event_that_carries_it():
    result = run(TWO_CALLS)
    runs = result.strategies["every-done"]
    assert isinstance(runs, list)
    # .done and output_item.done of each, then both again from response.done's output
    assert [c.id for c in runs] == ["call_1", "call_1", "call_2", "call_2", "call_1", "call_2"]
    assert {c.arguments for c in runs if c.id == "call_1"} == {PARIS}
    assert result.differs("every-done")


def test_item_id_only_sends_back_the_item_id_and_drops_a_delta_with_none():
    result = run(response(call(parts=('{"city": ', '"Paris"}'))))
    (got,) = result.strategies["item-id-only"]
    assert got.id == "item_1" and got.arguments == PARIS  # the call_id is never read
    no_item = response(
        [
            added(0, item()),
            {**delta(0, "{}"), "item_id": None},
            item_done(0, {**SENT, "arguments": ""}),
        ]
    )
    assert result.differs("item-id-only")
    assert run(no_item).tool_calls[0].arguments == "{}"
    assert run(no_item).strategies["item-id-only"][0].arguments == ""


def test_response_done_only_runs_nothing_when_the_output_is_empty_or_the_response_never_ends():
    for events in (
        numbered([created(), *call(), done([])]),
        numbered([created(), *call(), done(None)]),
    ):
        result = run(events)
        assert calls(result) == calls(run(response(call())))
        assert result.strategies["response-done-only"] == []
        assert "final-output-mismatch" in kinds(result)
    cut = run(response(call(), end=False))
    assert cut.strategies["response-done-only"] == [] and "response-done-missing" in kinds(cut)


def test_the_sdk_pattern_runs_no_call_whose_item_is_not_completed():
    cancelled = response(
        [*call()[:-1], item_done(0, {**SENT, "status": "incomplete"})], status="cancelled"
    )
    result = run(cancelled)
    assert [c.id for c in result.tool_calls] == ["call_1"]
    assert result.strategies["openai-sdk"] == []
    assert "stop-reason-mismatch" in kinds(result)


def test_the_sdk_pattern_stops_where_the_users_loop_raises():
    result = run([*WEATHER[:3], "[1, 2]", *WEATHER[3:]])
    sdk = result.strategies["openai-sdk"]
    assert isinstance(sdk, StrategyError) and sdk.frame == 4
    assert sdk.error == "AttributeError: 'list' object has no attribute 'type'"
    bad = run([*WEATHER[:3], "{not json", *WEATHER[3:]]).strategies["openai-sdk"]
    assert isinstance(bad, StrategyError) and bad.error.startswith("JSONDecodeError: ")
    none = run(response(call(), [{"type": "response.output_item.done", "output_index": 0}]))
    assert (
        none.strategies["openai-sdk"].error
        == "AttributeError: 'NoneType' object has no attribute 'type'"
    )


# -- the reading's rules --------------------------------------------------------------------


def test_an_empty_done_keeps_the_deltas_and_a_done_that_disagrees_wins():
    empty = run(response(call(done="")))
    assert empty.tool_calls[0].arguments == PARIS
    assert (
        "keeps the deltas"
        in next(a for a in empty.anomalies if a.kind == "args-done-mismatch").message
    )
    rome = run(response(call(done='{"city": "Rome"}')))
    assert rome.tool_calls[0].arguments == '{"city": "Rome"}'


def test_a_call_id_changed_at_a_delta_keeps_the_first_and_output_item_done_has_the_last_word():
    swapped = response([added(0, item()), delta(0, PARIS, call_id="call_X"), *call()[2:]])
    result = run(swapped)
    assert result.tool_calls[0].id == "call_1" and "id-changed" in kinds(result)
    renamed = run(response([*call()[:-1], item_done(0, {**SENT, "call_id": "call_2"})]))
    assert renamed.tool_calls[0].id == "call_2"
    # a call_id only the deltas carry fills the one the added item left empty, quietly
    filled = run(response([added(0, item(call_id=None)), *call()[1:]]))
    assert filled.tool_calls[0].id == "call_1" and "id-changed" not in kinds(filled)


def test_a_delta_for_an_unknown_item_id_follows_its_output_index_and_says_so():
    result = run(response([added(0, item()), delta(0, PARIS, item_id="item_X"), *call()[2:]]))
    assert result.tool_calls[0].arguments == PARIS
    (said,) = [a for a in result.anomalies if a.kind == "delta-unknown-item"]
    assert "follows its output_index to output 0" in said.message


def test_a_call_only_response_done_states_is_taken_and_never_done_said():
    result = run(numbered([created(), done([SENT])]))
    assert calls(result) == [(0, 0, "call_1", "get_weather", "function_call", PARIS)]
    assert "call-never-done" in kinds(result)
    assert result.strategies["openai-sdk"] == [] and result.strategies["response-done-only"] != []


def test_several_responses_in_one_stream_keep_each_call_under_its_response():
    second = response(call(0, "item_2", "call_2"), rid="resp_2")
    result = run([*WEATHER, *second])
    assert [(c.choice, c.index, c.id) for c in result.tool_calls] == [
        (0, 1, "call_1"),
        (1, 0, "call_2"),
    ]
    assert kinds(result) == {"responses-in-one-stream"} and result.ended == "done"
    # it names the column a user sees (inspect's `response`; the replay has no r column)
    (said,) = [a.message for a in result.anomalies]
    assert "the response column of inspect's call table" in said and "r column" not in said


def test_the_call_table_numbers_each_calls_response_as_its_findings_do(tmp_path):
    # the response column said 0 for both: the container's index, counted from 0, where
    # the finding says "response 2 begins"
    path = tmp_path / "two.jsonl"
    path.write_bytes(body([*WEATHER, *response(call(0, "item_2", "call_2"), rid="resp_2")]))
    out = CliRunner().invoke(main, ["inspect", str(path)]).output
    table = out.split("Tool calls", 1)[1].splitlines()[1:4]
    assert table[0].split()[:3] == ["#", "response", "output"]
    assert [row.split()[:4] for row in table[1:]] == [
        ["1", "1", "1", '"call_1"'],
        ["2", "2", "0", '"call_2"'],
    ]
    assert "response 2 (" in out  # the finding's words
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(path)]).output)
    assert [c["choice"] for c in doc["streams"][0]["tool_calls"]] == [0, 1]  # as it was


def test_an_error_between_responses_is_the_providers_and_leaves_the_calls():
    result = run([*numbered([ERROR]), *WEATHER])
    (said,) = [a for a in result.anomalies if a.kind == "provider-error"]
    assert "between responses" in said.message and "boom" in said.message
    assert calls(result) == calls(run(WEATHER)) and result.ended == "error"


def test_the_dialect_is_told_by_the_handshake_and_by_the_events():
    assert (
        claimant("https://api.openai.com/v1/realtime?model=gpt-realtime", None).name
        == "openai-realtime"
    )
    assert (
        claimant("https://x.openai.azure.com/openai/realtime?deployment=d", None).name
        == "openai-realtime"
    )
    assert claimant("https://api.openai.com/v1/realtime/calls", None) is None
    told = DIALECTS["openai-realtime"]
    facts = request_facts(told, "wss://api.openai.com/v1/realtime?model=gpt-realtime", None)
    assert facts.model == "gpt-realtime" and not facts.stream
    assert request_facts(told, "/openai/realtime?api-version=x&deployment=dep", None).model == "dep"
    update = {"type": "session.update", "session": {"model": "m2", "tools": [WEATHER_TOOL]}}
    assert request_facts(told, "/v1/realtime", update).tools == [WEATHER_TOOL]
    assert request_facts(told, "/v1/realtime", update).model == "m2"
    create = {"type": "response.create", "response": {"tools": "not a list", "model": "x"}}
    assert request_facts(told, "/v1/realtime", create) == request_facts(told, "/v1/realtime", None)
    assert of_frames(lines(WEATHER)) == "openai-realtime"
    # Responses events (sequence_number, no event_id) stay the Responses API's
    from ..responses.events import WEATHER as RESPONSES_WEATHER

    assert of_frames(lines(RESPONSES_WEATHER)) == "openai-responses"


# -- any JSON type in any field --------------------------------------------------------------

_value = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_FIELDS = (
    "type",
    "output_index",
    "item_id",
    "call_id",
    "delta",
    "arguments",
    "name",
    "item",
    "response",
    "response_id",
    "error",
    "status",
    "output",
    "id",
)


def _poison(event: object, path: list, value: object) -> object:
    """`event` with the field at `path` (keys chosen from it, nested) set to `value`."""
    if not isinstance(event, dict):
        return event
    out = dict(event)
    key = path[0] if path[0] in out or len(path) == 1 else next(iter(out))
    out[key] = value if len(path) == 1 else _poison(out.get(key), path[1:], value)
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, len(WEATHER) - 1),
    st.lists(st.sampled_from(_FIELDS), min_size=1, max_size=3),
    _value,
)
def test_any_json_type_in_any_field_never_raises(at, path, value):
    events = list(TWO_CALLS if at % 2 else WEATHER)
    events[at % len(events)] = _poison(events[at % len(events)], path, value)
    engine = RealtimeEngine(1, [WEATHER_TOOL], collect_events=True)
    for frame in frames(events):
        engine.feed(frame)
        engine.strategy_calls()
        engine.copy()
    result = engine.finish()
    for name in result.strategies:
        result.differs(name)
    json.dumps([a.to_json() for a in result.anomalies])


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, len(TWO_CALLS) - 1),
    st.lists(st.sampled_from(_FIELDS), min_size=1, max_size=3),
    _value,
)
def test_any_json_type_in_any_field_is_reported_by_inspect(tmp_path_factory, at, path, value):
    events = list(TWO_CALLS)
    events[at] = _poison(events[at], path, value)
    saved = tmp_path_factory.mktemp("poisoned") / "events.jsonl"
    saved.write_bytes(body(events))
    for args in ([], ["--json"]):
        done = CliRunner().invoke(main, ["inspect", *args, str(saved)])
        # read, or (a first line that tells no stream event) one line saying so: no traceback
        assert done.exit_code in (0, 2), done.output
        assert done.exit_code == 0 or len(done.output.strip().splitlines()) == 1, done.output
        assert not isinstance(done.exception, Exception) or isinstance(done.exception, SystemExit)


def test_invalid_utf8_is_named_where_it_is_and_the_sdk_strategy_declines():
    engine = RealtimeEngine()
    for frame in frames(WEATHER):
        if frame.number == 3:
            frame.bad_utf8 = True
        engine.feed(frame)
    result = engine.finish()
    assert "invalid-utf8" in kinds(result) and calls(result) == calls(run(WEATHER))
    assert not isinstance(result.strategies["openai-sdk"], list)


@pytest.mark.parametrize("raw", ["", "null", "[]", '"x"', "1e999", '{"type": []}', '{"type": {}}'])
def test_a_message_that_is_no_event_object_is_said_and_reading_goes_on(raw):
    result = run([*WEATHER[:2], raw, *WEATHER[2:]])
    assert calls(result) == calls(run(WEATHER))
    assert kinds(result) & {"chunk-invalid-json", "event-schema-violation", "event-unknown"}


def test_the_reading_is_the_same_through_a_saved_file(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(body(TWO_CALLS))
    (stream,) = analyze(path).streams
    assert [(c.id, c.arguments) for c in stream.tool_calls] == [
        ("call_1", PARIS),
        ("call_2", '{"tz": "UTC"}'),
    ]
    assert stream.dialect == "openai-realtime"


@functools.cache
def _exported_accumulate():
    """The exported accumulator, compiled once (each example's exec was a sixth of it)."""
    from streamscope.dialects.realtime import reference

    scope: dict = {}
    exec(reference.source(), scope)
    return scope["accumulate"]


@pytest.mark.slow
# (2000: at 200 and 500, mutants of the accumulator went unseen that 2000 finds)
@settings(max_examples=2000, deadline=None)
@given(streams)
def test_the_exported_accumulator_reads_as_robust_does(events):
    from streamscope.dialects.realtime.fixture import FIXTURE

    found = [f for f in frames(events) if f.is_json]
    pairs = [(f.event, f.data) for f in found]
    engine = RealtimeEngine()
    for frame in frames([orjson.loads(data) for _, data in pairs]):
        engine.feed(frame)
    expected = [FIXTURE.expected(c) for c in engine.finish().tool_calls]
    assert _exported_accumulate()(FIXTURE.events(pairs)) == expected


def test_args_sent_as_one_piece_read_the_same():
    whole = response(call(parts=("".join(ARGS),)))
    assert calls(run(whole)) == calls(run(response(call())))
