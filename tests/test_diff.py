"""`streamscope diff A B`: what a user sees when two streams are compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.analysis.diff import NOW_BREAKS, NOW_RIGHT, compare_calls, diff
from streamscope.analysis.sides import Side, load
from streamscope.cli import main
from streamscope.core.calls import Call

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
DIRECT = str(RECORDINGS / "gateway-direct.jsonl")
GATEWAY = str(RECORDINGS / "gateway-litellm.jsonl")
FIRST_ID, GATEWAY_LAST_ID = "call_Vb8Rz2KqT5nX1mLw7cYe4PdS", "call_e2a4c6b8d0f14a3e"
SAMPLES = sorted(p.name for p in RECORDINGS.iterdir() if p.name != "README.md")


def run(*args: str):
    return CliRunner().invoke(main, ["diff", *args])


def test_a_gateway_that_rewrites_ids_names_the_anomaly_and_the_clients_that_now_break():
    result = run(DIRECT, GATEWAY)
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "paired by exchange number (the same requests)" in out
    assert "anomaly appears: id-changed (error, frame 2)" in out
    for client in ("guarded", "naive", "openai-sdk", "by-id"):
        assert f"client {client}: now breaks (right in A, wrong in B)" in out
    assert "client openai-docs" not in out  # it keeps the first id: still right
    assert f'call 1 id: "{FIRST_ID}" -> "{GATEWAY_LAST_ID}"' in out  # the id change
    assert "A exchange 2 / B exchange 2: same" in out  # the text answers match
    assert out.rstrip().endswith("differ")


def test_the_same_in_json():
    result = run(DIRECT, GATEWAY, "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert (doc["schema"], doc["paired_by"], doc["same"]) == (1, "exchange", False)
    assert (doc["same_requests"], doc["named"]) == (True, False)
    first, second = doc["pairs"]
    assert [k["kind"] for k in first["anomalies"]["added"]] == ["id-changed"]
    assert first["anomalies"]["gone"] == []
    assert first["calls"] == []  # robust reads the same call on both sides
    clients = {c["strategy"]: c for c in first["clients"]}
    assert {n for n, c in clients.items() if c["change"] == "now breaks"} == {
        "guarded",
        "naive",
        "openai-sdk",
        "by-id",
    }
    [changed] = clients["naive"]["calls"]
    assert changed["fields"] == ["id"]
    assert (changed["a"]["id"], changed["b"]["id"]) == (FIRST_ID, GATEWAY_LAST_ID)
    assert len(clients["by-id"]["calls"]) == 5  # the call split in five
    assert first["timing"]["a"]["fragments"] == first["timing"]["b"]["fragments"] == [5]
    assert second["same"] is True
    assert doc["contract"] == {"added": [], "gone": []}


def test_a_file_against_itself_is_the_same():
    result = run(DIRECT, DIRECT)
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip().endswith("same")
    doc = json.loads(run(GATEWAY, GATEWAY, "--json").stdout)
    assert doc["same"] is True and all(p["same"] for p in doc["pairs"])


def test_two_answers_that_differ_in_their_text_differ(tmp_path):
    """The same calls, another answer: a user reads the text, so it is no "same"."""
    changed = tmp_path / "openai-other-answer.jsonl"
    changed.write_bytes((RECORDINGS / "openai.jsonl").read_bytes().replace(b"partly", b"mostly"))
    result = run(str(RECORDINGS / "openai.jsonl"), str(changed))
    assert result.exit_code == 1, result.output
    assert "content: " in result.stdout and "mostly" in result.stdout
    doc = json.loads(run(str(RECORDINGS / "openai.jsonl"), str(changed), "--json").stdout)
    assert [c["field"] for p in doc["pairs"] for c in p["stream"]] == ["content"]


def test_one_exchange_against_a_whole_recording_is_paired_by_request():
    result = run(f"{DIRECT}#2", GATEWAY, "--json")
    doc = json.loads(result.stdout)
    assert doc["paired_by"] == "request"
    assert doc["a"]["exchange"] == 2
    pairs = [(p["a"], p["b"]) for p in doc["pairs"]]
    assert pairs == [({"exchange": 2}, {"exchange": 2}), (None, {"exchange": 1})]
    assert result.exit_code == 1  # B's first stream has no partner
    assert "A none / B exchange 1: only in B" in run(f"{DIRECT}#2", GATEWAY).stdout


def test_a_saved_body_against_a_recording_is_paired_by_position():
    result = run(str(RECORDINGS / "gemini-no-index.sse"), f"{DIRECT}#1")
    assert result.exit_code == 1
    assert "paired by position (A (sse) holds no requests to match)" in result.stdout
    assert 'framing: "sse" -> "sse"' not in result.stdout
    assert "anomaly gone: index-missing" in result.stdout


def test_har_captures_are_compared_with_their_timing_shape():
    real = Path(__file__).parent / "fixtures" / "real"
    a, b = real / "responses-message-before-call.har", real / "responses-client-tool-search.har"
    assert run(str(a), str(a)).exit_code == 0
    result = run(str(a), str(b))
    assert result.exit_code == 1
    # A calls a tool, B does not: the calls say it, no time is set against "none"
    assert "fragments per call: [7] -> []" in result.stdout
    assert "first call fragment:" not in result.stdout
    assert "A: first call fragment at frame 23 (848 ms)" in result.stdout
    assert "B: no call, fragments per call none" in result.stdout
    assert 'call 1: A id "call_LabG58Uhrq9kZvR52BYKjToD" name "get_capital"' in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["missing.jsonl", DIRECT], "missing.jsonl: no such file"),
        ([DIRECT, f"{DIRECT}#9"], "there is no exchange 9"),
        ([DIRECT, "BAD"], "line 1 (byte 0): not a streamscope recording"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, args, said):
    (tmp_path / "BAD").write_text('{"bad\n')
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    [line] = result.stderr.splitlines()
    assert said in line


def test_arguments_are_compared_as_parsed_json():
    a = Call(0, 0, "call_a", "function", "f", '{"city": "Paris", "unit": "c"}')
    b = Call(0, 0, "call_a", "function", "f", '{"unit":"c","city":"Paris"}')
    assert compare_calls([a], [b]) == []
    c = Call(0, 0, "call_a", "function", "f", '{"unit":"c","city":"Lyon"}')
    [change] = compare_calls([a], [c])
    assert change.fields == ["arguments"]
    assert compare_calls([a], [Call(0, 0, "call_a", "function", "f", '{"city": "Par')])


@pytest.fixture(scope="module")
def sides() -> dict[str, Side]:
    return {name: load(RECORDINGS / name) for name in SAMPLES}


def test_every_sample_against_itself_is_the_same(sides):
    for name, side in sides.items():
        again = load(RECORDINGS / name)  # read twice: nothing in a reading differs by chance
        assert diff(side, again).same, name


def test_what_b_adds_to_a_is_what_a_loses_to_b(sides):
    for x in SAMPLES:  # every pair of samples, both ways
        for y in SAMPLES:
            ab, ba = diff(sides[x], sides[y]), diff(sides[y], sides[x])
            assert ab.same == ba.same
            assert (ab.contract_added, ab.contract_gone) == (ba.contract_gone, ba.contract_added)
            assert [p.a for p in ab.pairs] == [p.b for p in ba.pairs]
            for p, q in zip(ab.pairs, ba.pairs, strict=True):
                assert {k.kind for k in p.added} == {k.kind for k in q.gone}, (x, y)
                assert {k.kind for k in p.gone} == {k.kind for k in q.added}, (x, y)
                broke = {c.strategy for c in p.clients if c.change == NOW_BREAKS}
                assert broke == {c.strategy for c in q.clients if c.change == NOW_RIGHT}


def test_recorded_text_reaches_the_terminal_escaped(tmp_path):
    from streamscope.dialects.chat.appendix_a import calls, chunk, tc

    from .helpers import sse_body

    def body(id: str, args: str) -> bytes:
        return sse_body(
            [
                chunk(calls(tc(0, id, "get_weather", "", "function"), role=True)),
                chunk(calls(tc(0, args=args))),
                chunk({}, "tool_calls"),
            ]
        )

    (tmp_path / "a.sse").write_bytes(body("call_a", '{"city": "Paris"}'))
    (tmp_path / "b.sse").write_bytes(body("call_\x1b[2J\x07", '{"city": "\x1b]0;owned\x07"}'))
    result = run(str(tmp_path / "a.sse"), str(tmp_path / "b.sse"))
    assert result.exit_code == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert 'call 1 id: "call_a" -> "call_\\u001b[2J\\u0007"' in result.stdout


def test_a_contract_finding_that_appears_is_named_with_its_exchange():
    result = run(DIRECT, str(RECORDINGS / "buggy-agent-uuid.jsonl"), "--json")
    assert result.exit_code == 1
    [found] = json.loads(result.stdout)["contract"]["added"]
    assert (found["kind"], found["exchange"]) == ("tool-call-id-substituted", 2)
    text = run(DIRECT, str(RECORDINGS / "buggy-agent-uuid.jsonl")).stdout
    assert "contract finding appears: tool-call-id-substituted (error, B exchange 2): " in text
    back = run(str(RECORDINGS / "buggy-agent-uuid.jsonl"), DIRECT).stdout
    assert "contract finding gone: tool-call-id-substituted (error, A exchange 2): " in back


def test_two_dialects_say_whose_clients_are_whose():
    result = run(DIRECT, str(RECORDINGS / "anthropic-tool-use.jsonl"))
    assert result.exit_code == 1
    out = result.stdout
    assert 'dialect: "chat-completions" -> "anthropic-messages"' in out
    assert "clients only in A's dialect: guarded, naive, openai-sdk, openai-docs, by-id" in out
    assert "clients only in B's dialect: anthropic-sdk" in out
    assert "now breaks" not in out  # a client B's dialect lacks did not break


def _stream(ids: list[str | None], pieces: list[str], finish: str) -> bytes:
    from streamscope.dialects.chat.appendix_a import calls, chunk, tc

    from .helpers import sse_body

    chunks = [chunk(calls(tc(0, ids[0], "get_weather", "", "function"), role=True))]
    for i, piece in enumerate(pieces):
        id = ids[(i + 1) % len(ids)]
        chunks.append(chunk(calls(tc(0, args=piece) if id is None else tc(0, id, args=piece))))
    return sse_body([*chunks, chunk({}, finish)])


STREAMS = st.builds(
    _stream,
    st.lists(st.one_of(st.none(), st.sampled_from(["", "call_a", "call_b"])), min_size=1),
    st.lists(st.sampled_from(['{"ci', 'ty": "Paris"}', "{}", '"x"', " "]), max_size=4),
    st.sampled_from(["tool_calls", "stop"]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(STREAMS, STREAMS)
def test_any_two_streams_differ_alike_both_ways(tmp_path, x: bytes, y: bytes):
    (tmp_path / "x.sse").write_bytes(x)
    (tmp_path / "y.sse").write_bytes(y)
    a, b = load(tmp_path / "x.sse"), load(tmp_path / "y.sse")
    assert diff(a, load(tmp_path / "x.sse")).same
    ab, ba = diff(a, b), diff(b, a)
    assert ab.same == ba.same
    if x == y:
        assert ab.same
    [p], [q] = ab.pairs, ba.pairs
    assert {k.kind for k in p.added} == {k.kind for k in q.gone}
    assert [(c.position, c.fields) for c in p.calls] == [(c.position, c.fields) for c in q.calls]
    assert {(c.strategy, c.change) for c in p.clients if c.change == NOW_BREAKS} == {
        (c.strategy, NOW_BREAKS) for c in q.clients if c.change == NOW_RIGHT
    }


def test_a_stream_saved_without_its_times_is_the_same_stream(tmp_path):
    """An SSE body keeps no times: unknown is no difference, and the text says why no time
    was compared."""
    body = tmp_path / "direct-1.sse"
    wrote = CliRunner().invoke(main, ["export", f"{DIRECT}#1", "--format", "sse", "-o", str(body)])
    assert wrote.exit_code == 0, wrote.output
    result = run(f"{DIRECT}#1", str(body))
    assert result.exit_code == 0, result.stdout
    assert "timing not compared: B has no frame times" in result.stdout
    assert "first call fragment" not in result.stdout
    doc = json.loads(run(f"{DIRECT}#1", str(body), "--json").stdout)
    [pair] = doc["pairs"]
    assert (doc["schema"], doc["same"], pair["timing"]["differs"]) == (1, True, [])
    assert pair["timing"]["untimed"] == ["b"]
    assert (pair["timing"]["a"]["timed"], pair["timing"]["b"]["timed"]) == (True, False)


def test_exchange_numbers_that_match_are_not_said_to_be_the_same_streams():
    # the same exchange numbers, other conversations: paired by number, nothing more
    out = run(DIRECT, str(RECORDINGS / "buggy-agent-uuid.jsonl")).stdout
    assert "2 stream pairs, paired by exchange number\n" in out
    assert "same streams" not in out and "the same requests" not in out
    # one exchange of each, named: that is the pairing
    named = run(f"{DIRECT}#2", f"{GATEWAY}#1")
    assert "1 stream pair, the exchanges you named (A exchange 2, B exchange 1)" in named.stdout
    assert "no exchanges or requests to match" not in named.stdout
    assert json.loads(run(f"{DIRECT}#2", f"{GATEWAY}#1", "--json").stdout)["named"] is True


def test_a_call_whole_in_one_frame_has_its_first_frame_and_time():
    # Gemini sends each call whole (its arguments one value: no fragment)
    doc = json.loads(
        run(str(RECORDINGS / "gemini-parallel-signature.jsonl"), DIRECT, "--json").stdout
    )
    timing = doc["pairs"][0]["timing"]["a"]
    assert timing["fragments"] == [1, 1]  # each whole: its arguments one piece
    assert timing["first_call_frame"] == 2 and timing["first_call_ns"] is not None
    out = run(str(RECORDINGS / "gemini-parallel-signature.jsonl"), DIRECT).stdout
    assert "A: first call fragment at frame 2 (" in out and "at -" not in out


CODEX = str(RECORDINGS / "codex-websocket.jsonl")


def test_a_sessions_responses_named_are_the_streams_compared():
    result = run(f"{CODEX}#1.2", f"{CODEX}#1.3")
    assert result.exit_code == 1, result.output
    assert (
        "1 stream pair, the responses you named (A exchange 1.2, B exchange 1.3)" in result.stdout
    )
    assert "A exchange 1.2 / B exchange 1.3:" in result.stdout
    assert run(f"{CODEX}#1.2", f"{CODEX}#1.2").exit_code == 0
    for bad, said in (
        (f"{CODEX}#1.9", "the WebSocket session has no response 9"),
        (f"{RECORDINGS / 'openai.jsonl'}#1@999", "diff compares whole streams, not a frame"),
    ):
        wrong = run(bad, CODEX)
        assert wrong.exit_code == 2 and wrong.stdout == ""
        assert wrong.stderr.strip() == f"streamscope: {bad}: {said}" + (
            " (drop @999)" if "@" in bad else ""
        )


def test_a_response_exported_alone_pairs_with_the_response_whose_request_it_is(tmp_path):
    out = tmp_path / "turn2.jsonl"
    exported = CliRunner().invoke(
        main, ["export", f"{CODEX}#1.2", "--format", "recording", "-o", str(out)]
    )
    assert exported.exit_code == 0, exported.output
    text = run(CODEX, str(out)).stdout
    assert "paired by request (the same requests)" in text
    assert "A exchange 1.2 / B exchange 1.1: same" in text
    assert "A exchange 1.1 / B none: only in A" in text


def test_position_pairing_says_what_is_true_and_a_body_is_a_stream():
    text = run(CODEX, str(RECORDINGS / "realtime-two-calls.jsonl")).stdout  # both exchange 1
    assert "the same exchange numbers, other responses in their sessions" in text
    assert "neither the exchange numbers" not in text
    sse = run(str(RECORDINGS / "gemini-no-index.sse"), DIRECT).stdout
    assert "A's stream / B exchange 1:" in sse and "A exchange" not in sse


def test_a_gemini_call_sent_whole_is_one_fragment_in_every_reading():
    # inspect said "2-2 (0 fragments)" where the chunk-index client's table said 1
    from streamscope.analysis import analyze

    (stream, _) = analyze(str(RECORDINGS / "gemini-parallel-signature.jsonl")).streams
    assert [c.fragments for c in stream.tool_calls] == [1, 1]
    for name in ("parts", "chunk-index", "needs-terminal"):
        assert [c.fragments for c in stream.strategies[name]] == [1, 1], name
    out = CliRunner().invoke(main, ["inspect", str(RECORDINGS / "gemini-parallel-signature.jsonl")])
    assert "2 (1 fragment)" in out.stdout and "0 fragments" not in out.stdout
