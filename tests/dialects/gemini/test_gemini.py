"""Gemini read end to end: the reading (whole calls, streamed arguments, signatures), every
anomaly kind of the dialect, the clients, bad input, the contract across exchanges."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.core.calls import StrategyError
from streamscope.dialects import ANOMALY_KINDS as KINDS
from streamscope.dialects.gemini.engine import GeminiEngine

from ..anthropic.test_anthropic import CHAT_ONLY
from ..reading import (
    fast_path_reads_alike,
    named_at_its_frame,
)
from .events import (
    CLOSING,
    STREAMED,
    STREAMED_ARGS,
    WEATHER,
    WEATHER_TOOL,
    arg,
    call,
    calls,
    chunk,
    frames,
    kinds,
    opening,
    partial,
    run,
    sse,
    text,
)

SIG = "CtQBAVSoXO4="
SIGNED = [chunk(call("get_weather", {"city": "Paris"}, sig=SIG)), chunk(finish="STOP")]

# kind -> (chunks that trigger it, chunks like them that must not, run() arguments)
CASES: dict[str, tuple[list | None, list | None, dict]] = {
    "parallel-in-one-chunk": (
        [
            chunk(
                call("get_weather", {"city": "Paris"}),
                call("get_time", {"tz": "UTC"}),
                finish="STOP",
            )
        ],
        [chunk(call("get_weather", {"city": "Paris"})), chunk(call("get_time", {}), finish="STOP")],
        {},
    ),
    "partial-args-unterminated": (STREAMED[:4], STREAMED, {}),
    "partial-args-without-open": ([chunk(partial(arg("$.a", 1))), *STREAMED[4:]], STREAMED, {}),
    "thought-signature": (SIGNED, WEATHER, {}),
    "malformed-function-call": (
        [chunk(finish="MALFORMED_FUNCTION_CALL", finishMessage="Malformed function call: x")],
        WEATHER,
        {},
    ),
    "args-absent": ([chunk(call("get_time"), finish="STOP")], WEATHER, {}),
    "finish-stop-with-calls": (WEATHER, [chunk(text("Sunny."), finish="STOP")], {}),
    "candidate-finish-missing": (WEATHER[:2], WEATHER, {}),
    "stop-reason-mismatch": (
        [chunk(call("get_weather", {"city": "Paris"}), finish="MAX_TOKENS")],
        WEATHER,
        {},
    ),
    "id-changed": (
        [
            chunk(opening("create_event", id="c1")),
            chunk({"functionCall": {"id": "c2", "partialArgs": [arg("$.a", 1)]}}),
            chunk(CLOSING, finish="STOP"),
        ],
        STREAMED,
        {},
    ),
    "id-missing": (WEATHER, [chunk(call("get_weather", {}, id="c1"), finish="STOP")], {}),
    "name-missing": ([chunk(call(args={"a": 1}), finish="STOP")], WEATHER, {}),
    "name-undeclared": (
        [chunk(call("get_news", {}), finish="STOP")],
        WEATHER,
        {"tools": WEATHER_TOOL},
    ),
    "provider-error": (
        [*WEATHER[:2], {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}],
        WEATHER,
        {},
    ),
    "chunk-invalid-json": ([*WEATHER[:2], "{not json", WEATHER[2]], WEATHER, {}),
    "event-schema-violation": (
        [chunk(call("get_weather", "Paris")), chunk(finish="STOP")],
        WEATHER,
        {},
    ),
    "stream-truncated": (WEATHER, WEATHER, {"end_reason": "upstream-error"}),
    "tool-call-in-content": (
        [chunk(text('{"name": "get_weather", "arguments": {}}'), finish="STOP")],
        [chunk(text("Sunny."), finish="STOP")],
        {},
    ),
}
QUIET_EXTRA = {"stream-truncated": {}}
# Kinds of other dialects' words: never on a Gemini stream.
NOT_HERE = (CHAT_ONLY - {"id-changed"}) | {
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
    "args-done-mismatch",
    "delta-unknown-item",
    "items-interleaved",
    "sequence-disorder",
    "delta-empty",
    "response-end-missing",
    "final-output-mismatch",
}


# -- the reading ----------------------------------------------------------------------------


def test_a_whole_call_is_its_args_as_sent_and_no_id_is_invented():
    result = run(WEATHER, WEATHER_TOOL)
    assert calls(result) == [(0, 0, "", "get_weather", "functionCall", '{"city":"Paris"}')]
    assert result.dialect == "gemini" and result.ended == "done"
    assert result.finish_reason == "STOP" and result.content == "Let me look."
    assert kinds(result) == {"id-missing", "finish-stop-with-calls"}
    assert not [name for name in result.strategies if result.differs(name)]


def test_keys_keep_their_order_and_numbers_their_type():
    events = [chunk(call("f", {"z": 1, "a": 2.0, "m": [True, None, "é"]}), finish="STOP")]
    assert run(events).tool_calls[0].arguments == '{"z":1,"a":2.0,"m":[true,null,"é"]}'


def test_streamed_arguments_build_the_object_their_paths_name():
    result = run(STREAMED)
    (got,) = result.tool_calls
    assert (got.name, got.arguments, got.first_frame, got.last_frame) == (
        "create_event",
        STREAMED_ARGS,
        1,
        5,
    )
    assert result.ended == "done" and "partial-args-unterminated" not in kinds(result)


def test_nested_arrays_quoted_names_and_every_typed_value():
    events = [
        chunk(opening("f")),
        chunk(
            partial(
                arg("$.rows[0][0]", 1),
                arg("$.rows[0][1]", 2.5),
                arg("$.rows[1][0]", None),
                arg("$['odd key'].on", False),
                arg('$["q\\"uote"]', "x"),
            )
        ),
        chunk(CLOSING, finish="STOP"),
    ]
    (got,) = run(events).tool_calls
    assert orjson.loads(got.arguments) == {
        "rows": [[1, 2.5], [None]],
        "odd key": {"on": False},
        'q"uote': "x",
    }


def test_a_signature_belongs_to_its_call_and_only_the_first_of_a_batch_has_one():
    events = [
        chunk(call("get_weather", {"city": "Paris"}, sig=SIG), call("get_time", {"tz": "UTC"})),
        chunk(finish="STOP"),
    ]
    result = run(events)
    assert [c.signature for c in result.tool_calls] == [SIG, None]
    [signed] = [a for a in result.anomalies if a.kind == "thought-signature"]
    assert signed.index == 0 and signed.frame == 1


def test_each_candidate_has_its_own_calls():
    events = [
        {
            "candidates": [
                {"index": 0, "content": {"parts": [call("a", {})]}},
                {"index": 1, "content": {"parts": [call("b", {"x": 1})]}},
            ]
        },
        {
            "candidates": [
                {"index": 0, "finishReason": "STOP"},
                {"index": 1, "finishReason": "STOP"},
            ]
        },
    ]
    result = run(events)
    assert [(c.choice, c.index, c.name) for c in result.tool_calls] == [(0, 0, "a"), (1, 0, "b")]
    assert [c.index for c in result.choices] == [0, 1] and result.ended == "done"


def test_a_stream_cut_before_the_closing_part_keeps_what_was_built():
    result = run(STREAMED[:4])
    (got,) = result.tool_calls
    assert got.arguments == '{"title":"Team sync","who":[{"name":"Ana","age":31}],"remote":true}'
    assert result.strategies["needs-terminal"] == []  # it never emits the call
    assert result.ended == "truncated"  # no finishReason came: cut between two chunks


# -- the clients ----------------------------------------------------------------------------


def test_index_0_merges_a_chunks_calls_and_chunk_index_keeps_them_apart():
    events = CASES["parallel-in-one-chunk"][0]
    result = run(events)
    (merged,) = result.strategies["index-0"]
    assert merged.name == "get_time" and merged.arguments == '{"city":"Paris"}{"tz":"UTC"}'
    assert not result.differs("chunk-index") and not result.differs("parts")


def test_chunk_index_overwrites_calls_of_consecutive_chunks():
    events = CASES["parallel-in-one-chunk"][1]
    result = run(events)
    (merged,) = result.strategies["chunk-index"]
    assert merged.name == "get_time" and merged.arguments == '{"city":"Paris"}{}'


def test_parts_collects_every_piece_of_a_streamed_call():
    result = run(STREAMED)
    got = result.strategies["parts"]
    assert isinstance(got, list) and len(got) == 5
    assert [c.name for c in got] == ["create_event", "", "", "", ""]
    assert {c.arguments for c in got} == {"{}"}


def test_needs_terminal_drops_a_no_args_call_beside_streamed_ones():
    events = [chunk(call("list_rooms")), *STREAMED]
    result = run(events)
    assert [c.name for c in result.tool_calls] == ["list_rooms", "create_event"]
    assert [c.name for c in result.strategies["needs-terminal"]] == ["create_event"]
    # alone, or before a whole call, it is kept
    assert not run([chunk(call("list_rooms"), finish="STOP")]).differs("needs-terminal")
    assert "args-absent" in kinds(result)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "bad",
    [
        {"candidates": "x"},
        {"candidates": [1]},
        {"candidates": [{"index": "0", "content": {"parts": [call("g", {})]}}]},
        {"candidates": [{"content": []}]},
        {"candidates": [{"content": {"parts": {}}}]},
        {"candidates": [{"content": {"parts": [7, None, [], "x"]}}]},
        chunk({"functionCall": "get_weather"}),
        chunk({"functionCall": {"name": 7, "args": [1], "id": {}, "willContinue": "yes"}}),
        chunk({"functionCall": {"name": "f", "partialArgs": "x", "willContinue": True}}),
        chunk(opening("f"), partial(arg("$.a.b", 1), arg("$.a.b.c", 2))),
        chunk(opening("f"), partial({"jsonPath": "a.b", "stringValue": "x"})),
        chunk(opening("f"), partial({"jsonPath": "$..x", "stringValue": "x"})),
        chunk(opening("f"), partial({"jsonPath": "$[99999999]", "numberValue": 1})),
        chunk(opening("f"), partial({"jsonPath": "$.a", "numberValue": "1"}, {"jsonPath": 3})),
        chunk(opening("f"), partial(arg("$." + ".a" * 300, 1))),
        chunk(opening("f"), partial(arg("$.a", 1), arg("$.a", 2))),
        chunk(opening("f"), partial(arg("$", 1), arg("$.a[0]", 1), arg("$.a.x", 1))),
        chunk({"functionCall": {}, "thoughtSignature": 5}),
        chunk(text(5)),
        {"candidates": [{"finishReason": 3}]},
        {"promptFeedback": {"blockReason": "SAFETY"}},
        {"error": "x"},
        {},
        [1, 2],
        "null",
        "[DONE]",
    ],
)
def test_bad_input_is_an_anomaly_never_a_traceback(bad, tmp_path):
    events = [WEATHER[1], bad, *WEATHER[2:]]
    result = run(events)
    assert result.tool_calls  # the rest is still read
    assert kinds(result) - {"id-missing", "finish-stop-with-calls"}, "the bad chunk is named"
    _faces_run(events, tmp_path)


def _faces_run(events: list, tmp_path) -> None:
    path = tmp_path / "bad.sse"
    path.write_bytes(sse(events, named=False))
    for args in (["inspect", str(path)], ["inspect", "--json", str(path)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0 and out.exception is None, out.output


def test_a_lone_surrogate_in_a_name_is_json(tmp_path):
    # as Python's json (and so the SDK) reads it: the call is read, named as sent
    lone = '{"candidates": [{"content": {"parts": [{"functionCall": {"name": "\\ud800", "args": {}}}]}}]}'
    events = [WEATHER[1], lone, *WEATHER[2:]]
    result = run(events)
    assert "\ud800" in [c.name for c in result.tool_calls]
    assert "chunk-invalid-json" not in kinds(result)
    _faces_run(events, tmp_path)


@pytest.mark.slow
def test_ten_thousand_parts_in_one_chunk_are_read_and_named():
    parts = [call(f"f{k}", {"k": k}) for k in range(10_000)]
    result = run([chunk(*parts, finish="STOP")])
    assert len(result.tool_calls) == 10_000
    assert "parallel-in-one-chunk" in kinds(result)


def test_deeply_nested_args_are_kept_not_a_crash():
    deep = '{"a":' * 600 + "1" + "}" * 600
    data = '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":%s}}]}}]}'
    result = run([data % deep, chunk(finish="STOP")])
    (got,) = result.tool_calls
    assert got.arguments == deep


# -- random streams: the invariants -------------------------------------------------------

_value = st.one_of(
    st.sampled_from(["", "Pa", "ris", "é", '"']), st.integers(-3, 3), st.booleans(), st.none()
)
_path = st.sampled_from(["$.a", "$.b", "$.a.c", "$.l[0]", "$.l[1]", "$['k']", "$.a[0]", "x"])
_part = st.one_of(
    st.builds(
        lambda name, args, sig: (
            call(name, args, sig=sig) if args is not None else call(name, sig=sig)
        ),
        st.sampled_from(["get_weather", "get_time", ""]),
        st.one_of(st.none(), st.just({}), st.just({"city": "Paris"})),
        st.sampled_from([None, SIG]),
    ),
    st.builds(opening, st.sampled_from(["create_event", "f"])),
    st.builds(
        lambda args, more: partial(*args, more=more),
        st.lists(st.builds(arg, _path, _value, st.booleans()), max_size=3),
        st.booleans(),
    ),
    st.just(CLOSING),
    st.builds(text, st.sampled_from(["", "hi", '"name": "f", "arguments"']), st.booleans()),
)
_chunk = st.one_of(
    st.builds(
        lambda parts, finish: chunk(*parts, finish=finish),
        st.lists(_part, max_size=3),
        st.sampled_from([None, None, "STOP", "MAX_TOKENS", "MALFORMED_FUNCTION_CALL"]),
    ),
    st.just({"error": {"code": 500, "message": "boom"}}),
    st.just("{not json"),
    st.just({"usageMetadata": {"totalTokenCount": 3}}),
)
streams = st.lists(_chunk, max_size=25)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(streams)
def test_the_exported_accumulator_reads_as_robust_does(events):
    from streamscope.dialects.gemini import reference
    from streamscope.dialects.gemini.fixture import FIXTURE

    pairs = [(f.event, f.data) for f in frames(events, named=False)]
    served = FIXTURE.served(pairs)
    engine = GeminiEngine()
    for frame in frames([orjson.loads(data) for _, data in served], named=False):
        engine.feed(frame)
    result = engine.finish(expect_done=False)
    if {"event-schema-violation", "partial-args-without-open"} & kinds(result):
        return  # shapes the few lines of the reference do not claim to read
    expected = [FIXTURE.expected(c) for c in result.tool_calls]
    scope: dict = {}
    exec(reference.source(), scope)
    assert scope["accumulate"](FIXTURE.events(served)) == expected


# -- the dialect, told; the contract across exchanges ------------------------------------


def test_the_dialect_is_told_by_content_never_by_name(tmp_path):
    path = tmp_path / "openai.txt"  # the name lies
    path.write_bytes(sse(WEATHER, named=False))
    assert analyze(path).streams[0].dialect == "gemini"
    log = tmp_path / "stream.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in WEATHER))
    (stream,) = analyze(log).streams
    assert stream.dialect == "gemini" and len(stream.tool_calls) == 1


AI_STUDIO = "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse"
VERTEX = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
    "publishers/google/models/gemini-3-pro:streamGenerateContent?alt=sse"
)


def _recording(path, url: str, bodies: list[dict], streams: list[list]) -> None:
    from streamscope.recording import RecordingWriter

    with RecordingWriter(str(path)) as w:
        for body, events in zip(bodies, streams, strict=True):
            x = w.new_exchange()
            w.request(x, "POST", url, [], orjson.dumps(body))
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, sse(events, named=False))
            w.end(x, "complete")


QUESTION = {"role": "user", "parts": [{"text": "weather in Paris?"}]}
SENT = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SIG}
RESULT = {"functionResponse": {"name": "get_weather", "response": {"sky": "sunny"}}}
ANSWER = [chunk(text("Sunny."), finish="STOP")]


def _turn(*parts: dict, role: str = "model") -> dict:
    return {"role": role, "parts": list(parts)}


@pytest.mark.parametrize(
    "second, found",
    [
        ([QUESTION, _turn(SENT), _turn(RESULT, role="user")], set()),
        (
            [QUESTION, _turn({"functionCall": SENT["functionCall"]}), _turn(RESULT, role="user")],
            {"thought-signature-dropped"},
        ),
        (
            [QUESTION, _turn({**SENT, "thoughtSignature": "b3RoZXI="}), _turn(RESULT, role="user")],
            {"thought-signature-dropped"},
        ),
        (
            [
                QUESTION,
                _turn(SENT),
                _turn({"functionResponse": {"name": "get_time", "response": {}}}, role="user"),
            ],
            {"tool-result-id-mismatch", "tool-result-missing"},
        ),
        (
            [
                QUESTION,
                _turn({**SENT, "functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}),
                _turn(RESULT, role="user"),
            ],
            {"tool-call-arguments-changed"},
        ),
        ([QUESTION, _turn(SENT), _turn({"text": "and?"}, role="user")], {"tool-result-missing"}),
        (
            [QUESTION, _turn({"text": "I will look."}), _turn(RESULT, role="user")],
            # the model content that answers the question lost the streamed call
            {"tool-call-dropped", "tool-result-id-mismatch"},
        ),
    ],
)
@pytest.mark.parametrize("url", [AI_STUDIO, VERTEX])
def test_calls_go_back_unchanged_with_their_signature_and_each_is_answered(
    tmp_path, second, found, url
):
    path = tmp_path / "agent.jsonl"
    first = {"contents": [QUESTION], "tools": WEATHER_TOOL}
    _recording(path, url, [first, {"contents": second, "tools": WEATHER_TOOL}], [SIGNED, ANSWER])
    doc = analyze(path)
    assert {s.dialect for s in doc.streams} == {"gemini"}
    assert {f.kind for f in doc.contract} == found, [f.message for f in doc.contract]
    for f in doc.contract:
        assert "None" not in f.message
        if f.kind == "thought-signature-dropped":
            assert f.at_message == 1 and "400" in f.message


def test_a_call_with_an_id_is_answered_by_that_id(tmp_path):
    path = tmp_path / "agent.jsonl"
    stream = [chunk(call("get_weather", {"city": "Paris"}, id="c1"), finish="STOP")]
    sent = {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}}
    wrong = {"functionResponse": {"id": "c9", "name": "get_weather", "response": {}}}
    bodies = [
        {"contents": [QUESTION]},
        {"contents": [QUESTION, _turn(sent), _turn(wrong, role="user")]},
    ]
    _recording(path, AI_STUDIO, bodies, [stream, ANSWER])
    assert {f.kind for f in analyze(path).contract} == {
        "tool-result-id-mismatch",
        "tool-result-missing",
    }


def test_a_gateway_path_is_told_by_the_body(tmp_path):
    path = tmp_path / "gateway.jsonl"
    second = {
        "contents": [
            QUESTION,
            _turn({"functionCall": SENT["functionCall"]}),
            _turn(RESULT, role="user"),
        ]
    }
    _recording(
        path,
        "https://gateway.example/api/llm",
        [{"contents": [QUESTION]}, second],
        [SIGNED, ANSWER],
    )
    doc = analyze(path)
    assert {s.dialect for s in doc.streams} == {"gemini"}
    assert {f.kind for f in doc.contract} == {"thought-signature-dropped"}


def test_the_json_report_carries_the_signature_and_the_sdk_version(tmp_path):
    path = tmp_path / "signed.sse"
    path.write_bytes(sse(SIGNED, named=False))
    out = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    doc = orjson.loads(out.output)
    (stream,) = doc["streams"]
    assert stream["dialect"] == "gemini"
    assert stream["tool_calls"][0]["thought_signature"] == SIG
    assert stream["tool_calls"][0]["id"] == ""
    assert "google_genai_version" in doc
    assert not isinstance(stream["strategies"]["parts"], StrategyError)


def test_every_kind_has_its_registered_words():
    for kind in CASES:
        assert kind in KINDS


# -- the projects' own recorded streams ---------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gemini"
EXPECTED = orjson.loads((FIXTURES / "expected.json").read_bytes())
# The trap each stream sets, named at its frame (see fixtures/gemini/README.md), and the
# clients that fall in it.
TRAPS = {
    "vercel-ai-tool-call-signature.sse": (
        {"thought-signature": 1, "finish-stop-with-calls": 2},
        set(),
    ),
    "vercel-ai-stream-args-two-calls.sse": ({"thought-signature": 1}, {"parts", "index-0"}),
    "vercel-ai-stream-args-array-no-closing-part.sse": (
        {"partial-args-unterminated": None},
        {"needs-terminal"},
    ),
    "vercel-ai-stream-args-no-args-call-among-streamed.sse": (
        {"args-absent": None},
        {"needs-terminal"},
    ),
    "vercel-ai-stream-args-nested.sse": ({"thought-signature": None}, {"parts"}),
    "vercel-ai-recursive-args-with-id.sse": ({"thought-signature": None}, set()),
    "vercel-ai-text-then-call-with-id.sse": ({"thought-signature": None}, set()),
    "vercel-ai-inline-malformed-function-call.sse": ({"malformed-function-call": None}, set()),
    "vercel-ai-inline-text-then-call-stop.sse": ({"finish-stop-with-calls": None}, set()),
    "pydantic-ai-empty-args-call-signature.sse": ({"thought-signature": None}, set()),
    "pydantic-ai-call-and-stop-one-event.sse": ({"finish-stop-with-calls": 1}, set()),
}


def test_every_recorded_stream_has_its_expectation():
    assert set(EXPECTED) == set(TRAPS) == {p.name for p in FIXTURES.glob("*.sse")}


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_the_projects_recorded_streams(name):
    (stream,) = analyze(FIXTURES / name).streams
    want = EXPECTED[name]
    assert stream.dialect == "gemini" and stream.finish_reason == want["finishReason"]
    got = [
        {"id": c.id, "name": c.name, "args": orjson.loads(c.arguments), "sig": c.signature}
        for c in stream.tool_calls
    ]
    assert got == [
        {"id": c["id"], "name": c["name"], "args": c["args"], "sig": c["thoughtSignature"]}
        for c in want["calls"]
    ]
    traps, falls = TRAPS[name]
    for kind, frame in traps.items():
        named_at_its_frame(stream, kind, "gemini")
        if frame is not None:
            assert next(a for a in stream.anomalies if a.kind == kind).frame == frame
    assert {s for s in stream.strategies if stream.differs(s)} >= falls
    # the .jsonl the project keeps reads alike
    log = FIXTURES / name.replace(".sse", ".jsonl")
    if log.exists():
        (again,) = analyze(log).streams
        assert calls(again) == calls(stream)


@pytest.mark.parametrize(
    "name, found",
    [
        # pydantic-ai sends the signature back in base64url (the same bytes: kept) and an id
        # of its own making where the stream had none, the same on its functionResponse:
        # the id is the client's to fill in, and the link holds
        ("pydantic-ai-empty-args-call-signature", {"tool-call-id-filled"}),
        ("pydantic-ai-call-and-stop-one-event", {"tool-call-id-filled"}),
    ],
)
def test_what_pydantic_ai_sent_back(tmp_path, name, found):
    from streamscope.recording import RecordingWriter

    path = tmp_path / "agent.jsonl"
    second = (FIXTURES / f"{name}.request.json").read_bytes()
    sent = orjson.loads(second)  # the first request: its question, with the same system prompt
    first = {k: v for k, v in sent.items() if k != "contents"} | {"contents": sent["contents"][:1]}
    with RecordingWriter(str(path)) as w:
        for body, stream in ((orjson.dumps(first), FIXTURES / f"{name}.sse"), (second, None)):
            x = w.new_exchange()
            w.request(x, "POST", AI_STUDIO, [], body)
            w.response(x, 200, [("content-type", "text/event-stream")])
            w.chunk(x, stream.read_bytes() if stream else sse(ANSWER, named=False))
            w.end(x, "complete")
    doc = analyze(path)
    assert {f.kind for f in doc.contract} == found, [f.message for f in doc.contract]


def test_a_chat_history_of_one_content_per_chunk_is_one_model_turn(tmp_path):
    # google-genai's chats keep each streamed chunk's content as a content of its own
    path = tmp_path / "agent.jsonl"
    second = [
        QUESTION,
        _turn({"text": "Checking.", "thought": True}),
        _turn(SENT),
        _turn({"text": ""}),
        _turn(RESULT, role="user"),
    ]
    _recording(path, AI_STUDIO, [{"contents": [QUESTION]}, {"contents": second}], [SIGNED, ANSWER])
    assert analyze(path).contract == []
    dropped = [
        QUESTION,
        _turn({"text": "Checking."}),
        _turn({"text": "..."}),
        _turn(RESULT, role="user"),
    ]
    path = tmp_path / "dropped.jsonl"
    _recording(path, AI_STUDIO, [{"contents": [QUESTION]}, {"contents": dropped}], [SIGNED, ANSWER])
    # the model's run of contents lost the call: dropped, and its result answers nothing
    assert {f.kind for f in analyze(path).contract} == {
        "tool-call-dropped",
        "tool-result-id-mismatch",
    }


def test_two_calls_without_ids_each_get_their_own_findings(tmp_path):
    from streamscope.analysis.driver import RequestFinding
    from streamscope.dialects.gemini.history import history
    from streamscope.tui.conversation import conversation

    stream = [chunk(call("a", {"x": 1}, sig=SIG), call("b", {"y": 2}, sig=SIG), finish="STOP")]
    back = _turn(call("a", {"x": 9}), call("b", {"y": 9}))
    results = _turn(gresult("a"), gresult("b"), role="user")
    second = {"contents": [QUESTION, back, results]}
    path = tmp_path / "agent.jsonl"
    _recording(path, AI_STUDIO, [{"contents": [QUESTION]}, second], [stream, ANSWER])
    found = analyze(path).contract
    kinds = sorted((f.kind, f.call) for f in found)
    assert kinds == [
        ("thought-signature-dropped", ("name", "a")),
        ("thought-signature-dropped", ("name", "b")),
        ("tool-call-arguments-changed", ("name", "a")),
        ("tool-call-arguments-changed", ("name", "b")),
    ]
    shown = conversation(history(second), [RequestFinding.of(f) for f in found], {}).plain
    at_a, at_b = shown.index('"a" {"x":9}'), shown.index('"b" {"y":9}')
    under_a, under_b = shown[at_a:at_b], shown[at_b:]
    assert under_a.count("tool-call-arguments-changed") == 1 and 'call "a"' in under_a
    assert 'call "b"' not in under_a and 'call "a"' not in under_b.split("[2]")[0]


def gresult(name: str, fid: str | None = None) -> dict:
    fr: dict = {"name": name, "response": {}}
    if fid is not None:
        fr["id"] = fid
    return {"functionResponse": fr}


@pytest.mark.parametrize(
    "answer, found",
    [
        (gresult("get_weather", "c1"), set()),
        (gresult("get_weather"), set()),  # by name: google-genai's from_function_response
        (gresult("get_weather", "c9"), {"tool-result-id-mismatch", "tool-result-missing"}),
    ],
)
def test_a_call_with_an_id_is_answered_by_its_id_or_its_name(tmp_path, answer, found):
    path = tmp_path / "agent.jsonl"
    stream = [chunk(call("get_weather", {"city": "Paris"}, id="c1"), finish="STOP")]
    sent = call("get_weather", {"city": "Paris"}, id="c1")
    second = {"contents": [QUESTION, _turn(sent), _turn(answer, role="user")]}
    _recording(path, AI_STUDIO, [{"contents": [QUESTION]}, second], [stream, ANSWER])
    assert {f.kind for f in analyze(path).contract} == found


def test_a_streamed_call_sent_back_as_its_parts_is_the_call_it_makes(tmp_path):
    # google-genai's chat history sends a streamed call back as the parts it came in, on
    # Vertex AI in proto field names; a continuation may repeat the call's name
    stream = [
        chunk(opening("search")),
        chunk(
            {
                "functionCall": {
                    "name": "search",
                    "partialArgs": [arg("$.q", "v")],
                    "willContinue": True,
                }
            }
        ),
        chunk(CLOSING, finish="STOP"),
    ]
    back = [
        _turn({"function_call": {"name": "search", "will_continue": True}}),
        _turn(
            {
                "function_call": {
                    "name": "search",
                    "partial_args": [{"json_path": "$.q", "string_value": "v"}],
                    "will_continue": True,
                }
            }
        ),
        _turn({"function_call": {}}),
    ]
    second = {"contents": [QUESTION, *back, _turn(gresult("search"), role="user")]}
    path = tmp_path / "agent.jsonl"
    _recording(path, VERTEX, [{"contents": [QUESTION]}, second], [stream, ANSWER])
    assert analyze(path).contract == []


def test_a_candidate_index_that_is_no_integer_reads_alike_fast_and_slow():
    events = [
        chunk(opening("f")),
        {"candidates": [{"index": False, "content": {"parts": [partial(arg("$.a", "x"))]}}]},
        chunk(CLOSING, finish="STOP"),
    ]
    fast_path_reads_alike(GeminiEngine, frames(events))
    assert "event-schema-violation" in kinds(run(events))


@pytest.mark.slow
def test_an_exported_module_compares_an_unpadded_signature_as_its_bytes(tmp_path):
    from ...helpers import passes

    path = tmp_path / "unpadded.sse"
    path.write_bytes(
        sse([chunk(call("f", {"a": 1}, sig="QUFBQQ")), chunk(finish="STOP")], named=False)
    )
    module = tmp_path / "test_unpadded.py"
    out = CliRunner().invoke(main, ["export", "--format", "pytest", str(path), "-o", str(module)])
    assert out.exit_code == 0, out.output
    assert "NOTE" not in module.read_text()
    passes(module)
