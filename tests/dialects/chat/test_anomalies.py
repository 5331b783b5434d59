"""Every anomaly kind of the contract: one minimal stream that triggers it, one that must not."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.anomalies import KINDS as SHARED_KINDS
from streamscope.core.anomalies import AnomalyLog
from streamscope.core.frames import Truncation
from streamscope.dialects import ANOMALY_KINDS as KINDS
from streamscope.dialects import DIALECTS
from streamscope.dialects.chat.appendix_a import A1, A2, ARGS, FINISH, calls, chunk, tc

from ...helpers import kinds, run, tool_def

OPEN = chunk(calls(tc(0, "call_a", "get_weather", "", "function"), role=True))
OPEN_B = chunk(calls(tc(1, "call_b", "get_time", "", "function")))
ARG1, ARG2 = chunk(calls(tc(0, args=A1))), chunk(calls(tc(0, args=A2)))
CLEAN = [OPEN, ARG1, ARG2, FINISH]
WEATHER = [tool_def("get_weather"), tool_def("get_time")]


# What a model sends when it invents a call that wraps its parallel calls.
WRAPPED = (
    '{"tool_uses": [{"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}}]}'
)


def cont(**kw) -> dict:
    return chunk(calls(tc(0, **kw)))


# kind -> (stream that triggers it, stream like it that must not, extra run() arguments)
CASES: dict[str, tuple[list, list, dict]] = {
    "id-empty-overwrite": ([OPEN, cont(id="", args=A1), ARG2, FINISH], CLEAN, {}),
    "name-empty-overwrite": ([OPEN, cont(name="", args=A1), ARG2, FINISH], CLEAN, {}),
    "type-empty-or-null": (
        [OPEN, cont(type=None, args=A1), ARG2, FINISH],
        [OPEN, cont(type="function", args=A1), ARG2, FINISH],
        {},
    ),
    "id-repeated": ([OPEN, cont(id="call_a", args=A1), ARG2, FINISH], CLEAN, {}),
    "name-repeated": ([OPEN, cont(name="get_weather", args=A1), ARG2, FINISH], CLEAN, {}),
    "id-changed": ([OPEN, cont(id="call_z", args=A1), ARG2, FINISH], CLEAN, {}),
    "name-fragmented": (
        [
            chunk(calls(tc(0, "call_a", "get_", "", "function"))),
            cont(name="weather"),
            ARG1,
            ARG2,
            FINISH,
        ],
        CLEAN,
        {},
    ),
    "name-changed": ([OPEN, ARG1, cont(name="get_time", args=A2), FINISH], CLEAN, {}),
    "id-missing": (
        [chunk(calls(tc(0, name="get_weather", args="", type="function"))), ARG1, ARG2, FINISH],
        CLEAN,
        {},
    ),
    "name-missing": (
        [chunk(calls(tc(0, "call_a", args="", type="function"))), ARG1, ARG2, FINISH],
        CLEAN,
        {},
    ),
    "type-missing": (
        [chunk(calls(tc(0, "call_a", "get_weather", ""))), ARG1, ARG2, FINISH],
        CLEAN,
        {},
    ),
    "function-missing": (
        [
            chunk(calls(tc(0, "call_a", type="function", function=False))),
            cont(name="get_weather", args=ARGS),
            FINISH,
        ],
        CLEAN,
        {},
    ),
    "index-missing": (
        [chunk(calls(tc(id="call_a", name="get_weather", args=ARGS, type="function"))), FINISH],
        CLEAN,
        {},
    ),
    "index-invalid": (
        [chunk(calls(tc(-1, "call_a", "get_weather", ARGS, "function"))), FINISH],
        CLEAN,
        {},
    ),
    "index-gap": (
        [chunk(calls(tc(1, "call_a", "get_weather", ARGS, "function"))), FINISH],
        CLEAN,
        {},
    ),
    "index-reused": (
        [
            OPEN,
            ARG1,
            ARG2,
            chunk(calls(tc(0, "call_b", "get_time", '{"tz": "UTC"}', "function"))),
            FINISH,
        ],
        [
            OPEN,
            ARG1,
            ARG2,
            chunk(calls(tc(1, "call_b", "get_time", '{"tz": "UTC"}', "function"))),
            FINISH,
        ],
        {},
    ),
    "index-moved": ([OPEN, ARG1, chunk(calls(tc(1, "call_a", args=A2))), FINISH], CLEAN, {}),
    "id-reused": (
        [OPEN, ARG1, ARG2, chunk(calls(tc(1, "call_a", "get_time", "{}", "function"))), FINISH],
        [OPEN, ARG1, ARG2, chunk(calls(tc(1, "call_b", "get_time", "{}", "function"))), FINISH],
        {},
    ),
    "same-index-twice-in-chunk": (
        [chunk(calls(tc(0, "call_a", "get_weather", "", "function"), tc(0, args=ARGS))), FINISH],
        CLEAN,
        {},
    ),
    "interleaved": (
        [OPEN, OPEN_B, ARG1, chunk(calls(tc(1, args="{}"))), ARG2, FINISH],
        [OPEN, ARG1, ARG2, OPEN_B, chunk(calls(tc(1, args="{}"))), FINISH],
        {},
    ),
    "args-opener-nonempty": (
        [chunk(calls(tc(0, "call_a", "get_weather", A1, "function"))), ARG2, FINISH],
        CLEAN,
        {},
    ),
    "args-not-string": (
        [chunk(calls(tc(0, "call_a", "get_weather", {"city": "Paris"}, "function"))), FINISH],
        CLEAN,
        {},
    ),
    "args-resent": ([*CLEAN[:3], cont(args=ARGS), FINISH], CLEAN, {}),
    "args-cumulative": ([OPEN, ARG1, cont(args=ARGS), FINISH], CLEAN, {}),
    "args-empty": ([OPEN, FINISH], CLEAN, {}),
    "args-invalid-json": ([OPEN, ARG1, FINISH], CLEAN, {}),
    "call-boundary-ambiguous": (
        [OPEN, cont(args='{"city": "Paris"}{"city": "Rome"}'), FINISH],
        [OPEN, cont(args='{"city": "Paris"}'), FINISH],
        {},
    ),
    "parallel-wrapper": (
        [chunk(calls(tc(0, "call_a", "multi_tool_use.parallel", WRAPPED, "function"))), FINISH],
        [chunk(calls(tc(0, "call_a", "parallel", ARGS, "function"))), FINISH],
        {},
    ),
    "name-undeclared": (
        [chunk(calls(tc(0, "call_a", "get_wether", ARGS, "function"))), FINISH],
        [chunk(calls(tc(0, "call_a", "get_weather", ARGS, "function"))), FINISH],
        {"tools": WEATHER},
    ),
    "tool-call-in-content": (
        [
            chunk({"content": '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'}),
            chunk({}, "stop"),
        ],
        [chunk({"content": "It is sunny in Paris."}), chunk({}, "stop")],
        {},
    ),
    "role-repeated": (
        [OPEN, chunk({"role": "assistant", **calls(tc(0, args=A1))}), ARG2, FINISH],
        CLEAN,
        {},
    ),
    "delta-after-finish": ([OPEN, ARG1, FINISH, ARG2], CLEAN, {}),
    "finish-repeated": ([*CLEAN, FINISH], CLEAN, {}),
    "finish-reason-mismatch": ([OPEN, ARG1, ARG2, chunk({}, "stop")], CLEAN, {}),
    "finish-reason-missing": ([OPEN, ARG1, ARG2], CLEAN, {}),
    "done-missing": (CLEAN, CLEAN, {"done": False}),
    "stream-truncated": (CLEAN, CLEAN, {"end_reason": "upstream-error"}),
    "chunk-invalid-json": ([OPEN, '{"choices": [', ARG1, ARG2, FINISH], CLEAN, {}),
    "provider-error": (
        [OPEN, ARG1, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}],
        CLEAN,
        {"done": False},
    ),
    "chunk-schema-violation": (
        [{**OPEN, "object": "chat.completion"}, ARG1, ARG2, FINISH],
        CLEAN,
        {},
    ),
}
# done-missing's negative is the same stream with [DONE]: handled below.
NEGATIVE_EXTRA = {"done-missing": {}, "stream-truncated": {}}


def test_clean_stream_has_no_anomaly():
    assert run(CLEAN).anomalies == []


def test_truncated_body_is_reported():
    result = run(CLEAN[:2], truncation=Truncation(120, 'data: {"choices"'), done=False)
    assert result.ended == "truncated"
    assert "stream-truncated" in kinds(result)


def test_one_entry_per_kind_with_a_count():
    stream = [OPEN, cont(id="", args=A1), cont(id="", args=A2), cont(id=""), FINISH]
    entries = [a for a in run(stream).anomalies if a.kind == "id-empty-overwrite"]
    assert len(entries) == 1
    assert entries[0].count == 3 and entries[0].frame == 2


def test_double_encoded_arguments_are_named():
    stream = [
        chunk(calls(tc(0, "call_a", "get_weather", '"{\\"city\\": \\"Paris\\"}"', "function"))),
        FINISH,
    ]
    assert "args-double-encoded" in kinds(run(stream))


def test_invalid_utf8_is_named():
    from streamscope.dialects.chat.engine import StreamEngine
    from streamscope.framing.sse import decode_body

    for body, bad in (
        (b'data: {"x": "caf\xe9"}\n\n', True),
        (b'data: {"x": "caf\xc3\xa9"}\n\n', False),
    ):
        engine = StreamEngine()
        frames, _ = decode_body(body)
        for frame in frames:
            engine.feed(frame)
        assert ("invalid-utf8" in kinds(engine.finish())) is bad


def _without(stream: list, keys: tuple[str, ...], null: bool) -> list:
    """The stream with `keys` dropped from every tool-call delta (or set to null)."""
    out = []
    for item in stream:
        if isinstance(item, dict) and isinstance(item.get("choices"), list):
            item = copy.deepcopy(item)
            for choice in item["choices"]:
                for d in (choice.get("delta") or {}).get("tool_calls") or []:
                    for key in keys:
                        if key == "name":
                            (d.get("function") or {}).pop("name", None)
                        elif null:
                            d[key] = None
                        else:
                            d.pop(key, None)
        out.append(item)
    return out


STRIPPED = [
    (("index",), False),
    (("index",), True),
    (("id",), False),
    (("type",), False),
    (("function",), False),
    (("name",), False),
    (("index", "id", "type", "name"), False),
]
DOUBLE = [
    chunk(calls(tc(0, "call_a", "get_weather", '"{\\"city\\": \\"Paris\\"}"', "function"))),
    FINISH,
]


def _variants() -> list[tuple[str, list, dict]]:
    out = [("args-double-encoded", DOUBLE, {})]
    for kind, (stream, _, extra) in sorted(CASES.items()):
        out.append((kind, stream, extra))
        for keys, null in STRIPPED:
            out.append(
                (
                    f"{kind} without {'+'.join(keys)}{' (null)' if null else ''}",
                    _without(stream, keys, null),
                    extra,
                )
            )
    return out


@pytest.mark.slow
def test_no_message_or_report_shows_a_python_none(tmp_path):
    """Absent values read as words ("with no index"), never as Python's None."""
    from click.testing import CliRunner

    from streamscope.cli import main

    from ...helpers import sse_body

    seen: set[str] = set()
    for label, stream, extra in _variants():
        result = run(stream, **extra)
        seen |= kinds(result)
        for a in result.anomalies:
            assert "None" not in a.text(), (label, a.to_json())
        if extra:
            continue  # the report below reads a plain SSE body
        path = tmp_path / "stream.sse"
        path.write_bytes(sse_body([s for s in stream if isinstance(s, dict)]))
        report = CliRunner().invoke(main, ["inspect", str(path)])
        assert report.exit_code == 0, report.output
        # a client's own exception is quoted verbatim ("... not NoneType"): that is its text
        ours = [line for line in report.output.splitlines() if " raises " not in line]
        assert not [line for line in ours if "None" in line], (label, report.output)
    # the kinds whose messages name an absent index, id, type or name were all rendered
    assert {
        "index-missing",
        "type-missing",
        "function-missing",
        "id-missing",
        "name-missing",
        "interleaved",
        "call-boundary-ambiguous",
        "args-empty",
        "type-empty-or-null",
    } <= seen
    from ..anthropic.test_anthropic import CASES as ANTHROPIC_CASES
    from ..bedrock.test_bedrock import CASES as BEDROCK_CASES
    from ..gemini.test_gemini import CASES as GEMINI_CASES
    from ..ollama.test_ollama import CASES as OLLAMA_CASES
    from ..realtime.test_realtime import CASES as REALTIME_CASES
    from ..responses.test_responses import CASES as RESPONSES_CASES

    # the other dialects' kinds have their own tests
    others = set(ANTHROPIC_CASES) | set(RESPONSES_CASES) | set(GEMINI_CASES) | set(OLLAMA_CASES)
    others |= set(REALTIME_CASES) | set(BEDROCK_CASES)
    others |= {"dialect-unknown", "dialect-mismatch"}  # (test_dialect_mismatch.py)
    others -= set(CASES) | {"invalid-utf8", "frame-invalid"}
    # named by their own tests
    assert set(KINDS) - seen - others == {"invalid-utf8", "frame-invalid"}


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_what_the_framing_found_is_frame_invalid_at_its_frame_in_every_dialect(name):
    from streamscope.core.frames import INVALID, Frame
    from streamscope.dialects import open_engine

    engine = open_engine(name)
    engine.feed(Frame(1, "x", INVALID, invalid="its message CRC does not match"))
    result = engine.finish(None)
    (found,) = [a for a in result.anomalies if a.kind == "frame-invalid"]
    assert found.frame == 1 and "CRC" in found.text()
    assert "chunk-invalid-json" not in kinds(result)


def test_a_copied_log_shares_its_marks_and_each_side_goes_on_alone():
    from streamscope.core.anomalies import AnomalyLog

    log = AnomalyLog()
    log.add("interleaved", 1, "x", 0)
    log.add("args-cumulative", 2, "y", 0, 0)
    copy = log.copy()
    log.add("interleaved", 3, "x", 0)
    copy.add("args-resent", 3, "z", 0, 0)
    copy.discard("args-cumulative", 0, 0)  # taken back in the copy only
    assert log.frames() == {1: ("interleaved",), 2: ("args-cumulative",), 3: ("interleaved",)}
    assert {f: list(k) for f, k in copy.frames().items()} == {
        1: ["interleaved"],
        2: [],
        3: ["args-resent"],
    }
    assert log.at(2) == ("args-cumulative",) and list(copy.at(2)) == []
    assert copy._layers[0] is log._layers[0]  # the marks before the copy are held once


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.integers(0, 3), st.sampled_from(sorted(SHARED_KINDS)[:4])),
            st.tuples(
                st.just("back"), st.integers(0, 40), st.sampled_from(sorted(SHARED_KINDS)[:4])
            ),
            st.tuples(st.just("copy"), st.booleans(), st.just("")),
            # (the one kind a log takes back: TAKEN_BACK)
            st.tuples(st.just("discard"), st.integers(0, 3), st.just("args-cumulative")),
        ),
        max_size=60,
    )
)
def test_marks_read_across_copies_as_one_merged_dict(ops):
    # the replay copies the log every few hundred frames (frozen layers shared with the
    # copies) and reads marks through a live view while it reads: the view, at() and the
    # end-of-stream merge agree, in order or not, on the log and on each copy
    log, frame, logs = AnomalyLog(), 1, []
    for op, n, kind in ops:
        if op == "add":  # at the frame being fed, or a few on
            frame += n
            log.add(kind, frame, "m", n % 2)
        elif op == "back":  # at an earlier frame (end-of-call rules look back)
            log.add(kind, max(1, frame - n), "m", n % 2)
        elif op == "copy":
            twin = log.copy()
            logs.append(log)
            log = twin if n else log
        else:
            log.discard(kind, n % 2, None)
    for each in [*logs, log]:
        merged, view = each.frames(), each.marks()
        for f in range(frame + 2):
            assert view.get(f) == merged.get(f), f
            assert each.at(f) == (merged.get(f) or ())
        assert sorted(view) == sorted(merged) and len(view) == len(merged)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "again", "copy", "discard", "cut"]),
            st.integers(0, 2),
            st.sampled_from(
                [
                    "stream-truncated",
                    "args-invalid-json",
                    "chunk-schema-violation",
                    "args-cumulative",
                ]
            ),
        ),
        max_size=40,
    )
)
def test_a_log_and_its_copies_each_hold_the_entries_of_their_own_sightings(ops):
    # a copy shares the entries with its original until one of them changes one: the
    # replay keeps dozens of copies, and each must read as if it alone had been fed
    from streamscope.core.anomalies import cut_by_client

    def apply(log: AnomalyLog, op: str, n: int, kind: str, frame: int) -> None:
        if op == "add":
            log.add(kind, frame, f"m{n}", 0, n)
        elif op == "again":
            log.again(kind, [frame] * (n + 1), 0, n)
        elif op == "discard":  # (the one kind a log takes back: TAKEN_BACK)
            log.discard("args-cumulative", 0, n)
        else:
            cut_by_client(log, [(0, n)])

    def seen(log: AnomalyLog) -> list:
        return [(a.frame, a.kind, a.index, a.count, a.text(), a.severity) for a in log.entries()]

    logs = [(AnomalyLog(), [])]  # each log with the sightings it was fed
    for frame, (op, n, kind) in enumerate(ops, 1):
        if op == "copy":
            log, fed = logs[n % len(logs)]
            logs.append((log.copy(), list(fed)))
            continue
        log, fed = logs[n % len(logs)]
        apply(log, op, n, kind, frame)
        fed.append((op, n, kind, frame))
    for log, fed in logs:
        alone = AnomalyLog()
        for step in fed:
            apply(alone, *step)
        assert seen(log) == seen(alone)


@pytest.mark.parametrize(
    "entry",
    [
        {"index": -2},
        {"index": -2, "function": {"arguments": ""}},
        {"index": "x", "id": "", "type": "function"},
        {"index": 1.5, "function": {"name": None, "arguments": None}},
    ],
    ids=["bare", "empty-arguments", "string-index", "null-name"],
)
def test_an_empty_entry_with_an_invalid_index_is_no_call(entry):
    """openai-go rejects the chunk; robust files it and makes no call of it (an entry
    with an invalid index that does carry something is still a call: CASES)."""
    clean = run(CLEAN)
    for stream in ([*CLEAN[:3], chunk(calls(entry)), FINISH], [*CLEAN, chunk(calls(entry))]):
        result = run(stream)
        assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
            (c.id, c.name, c.arguments) for c in clean.tool_calls
        ]
        found = [a for a in result.anomalies if a.kind == "index-invalid"]
        assert len(found) == 1 and "no call is made of it" in found[0].message
        assert not kinds(result) & {"name-missing", "args-empty", "function-missing", "index-gap"}


@pytest.mark.parametrize("index", [-1, "0", True, 1.5])
def test_a_choice_index_is_checked_like_a_tool_index(index):
    stream = copy.deepcopy(CLEAN)
    for item in stream:
        if isinstance(item, dict):
            item["choices"][0]["index"] = index
    result = run(stream)
    found = [a for a in result.anomalies if a.kind == "index-invalid"]
    assert len(found) == 1, [a.to_json() for a in result.anomalies]
    assert found[0].message.startswith(f"choice index {json.dumps(index)} is not")
    assert found[0].count == len(stream) - (0 if isinstance(stream[-1], dict) else 1)


def test_valid_choice_indexes_pass():
    stream = copy.deepcopy(CLEAN)
    for item in stream:
        if isinstance(item, dict):
            item["choices"][0]["index"] = 1
    assert "index-invalid" not in kinds(run(stream))


def test_an_index_of_true_is_no_index_1_in_the_anomalies():
    # True == 1 in Python: the two calls' entries were one (count 2, index 1's missing)
    stream = [
        chunk(calls(tc(True, "call_t", "f", A1, "function"), role=True)),
        chunk(calls(tc(1, "call_1", "g", A2, "function"))),
        FINISH,
    ]
    openers = [a for a in run(stream).anomalies if a.kind == "args-opener-nonempty"]
    assert [(a.index, a.count) for a in openers] == [(True, 1), (1, 1)]
    assert type(openers[0].index) is bool


@pytest.mark.parametrize(
    "created, kind",
    [
        ("123456789012345678901234", set()),  # an integer, past 64 bits
        ("18446744073709551616", set()),  # 2**64, the first orjson reads as a float
        ("1.5", {"chunk-schema-violation"}),
        ("1e20", {"chunk-schema-violation"}),  # a float as sent, though a whole one
    ],
)
def test_created_is_judged_on_the_number_as_sent(created: str, kind: set) -> None:
    """orjson reads an integer past 64 bits as a float: `created` read that way was once
    "1.2345678901234569e+23, not an integer", a finding the bytes deny."""
    texts = [json.dumps(c).replace('"created": 0', f'"created": {created}') for c in CLEAN]
    assert all(created in t for t in texts)
    result = run(texts)
    assert kinds(result) & {"chunk-schema-violation"} == kind
    said = [a.message for a in result.anomalies if a.kind == "chunk-schema-violation"]
    assert all(m.startswith("created is ") and m.endswith("not an integer") for m in said)


def test_a_stream_cut_between_events_ended_truncated_not_finished() -> None:
    """A body that ends between two events with neither a finish_reason nor [DONE] was
    said to end `finish-without-done`: a finish that never came."""
    cut = run([OPEN, ARG1], done=False)
    assert cut.ended == "truncated"
    assert {"finish-reason-missing", "done-missing"} <= kinds(cut)
    assert run(CLEAN, done=False).ended == "finish-without-done"
    assert run(CLEAN).ended == "done"
