"""Every contract kind: one conversation that breaks it, one that must not."""

from __future__ import annotations

import pytest

from streamscope.core.calls import Call
from streamscope.core.contract import KINDS, Conversation, check
from streamscope.dialects import dialect

from .helpers import chat_conversation

ARGS = '{"city": "Paris"}'
STREAM = [(1, [Call(0, 0, "call_a", "function", "get_weather", ARGS, 3, 2, 4)])]


def assistant(*calls: tuple) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ],
    }


def tool(call_id: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "15C"}


USER = {"role": "user", "content": "weather?"}
GOOD = [USER, assistant(("call_a", "get_weather", ARGS)), tool("call_a")]

CASES = {
    "tool-call-arguments-changed": [
        USER,
        assistant(("call_a", "get_weather", '{"city": "London"}')),
        tool("call_a"),
    ],
    "tool-call-arguments-repaired": [
        USER,
        assistant(("call_a", "get_weather", '{"city": "Par"}')),
        tool("call_a"),
    ],
    "tool-call-id-substituted": [
        USER,
        assistant(("5f0c8a51-uuid", "get_weather", ARGS)),
        tool("5f0c8a51-uuid"),
    ],
    "tool-call-name-changed": [USER, assistant(("call_a", "weather", ARGS)), tool("call_a")],
    "tool-call-arguments-invalid": [
        USER,
        assistant(("call_a", "get_weather", '{"city": ')),
        tool("call_a"),
    ],
    "tool-call-dropped": GOOD,  # with a stream of two calls, see STREAMS
    "tool-result-id-mismatch": [USER, assistant(("call_a", "get_weather", ARGS)), tool("call_b")],
    "tool-result-missing": [USER, assistant(("call_a", "get_weather", ARGS)), USER],
    "tool-result-before-assistant": [
        USER,
        tool("call_a"),
        assistant(("call_a", "get_weather", ARGS)),
        tool("call_a"),
    ],
    # a custom call (STREAMS) sent back with other input, or as a function call
    "tool-call-input-changed": [
        USER,
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_c", "type": "custom", "custom": {"name": "run_sql", "input": "DROP"}}
            ],
        },
        tool("call_c"),
    ],
    "tool-call-type-changed": [
        USER,
        assistant(("call_c", "run_sql", "SELECT 1;")),
        tool("call_c"),
    ],
}


TWO = [(1, [*STREAM[0][1], Call(0, 1, "call_b", "function", "get_time", "{}", 2, 5, 6)])]
CUT = [(1, [Call(0, 0, "call_a", "function", "get_weather", '{"city": "Par', 3, 2, 4)])]
CUSTOM = [(1, [Call(0, 0, "call_c", "custom", "run_sql", "SELECT 1;", 3, 2, 4)])]
STREAMS = {
    "tool-call-dropped": TWO,
    "tool-call-arguments-repaired": CUT,
    "tool-call-input-changed": CUSTOM,
    "tool-call-type-changed": CUSTOM,
}


# the request of exchange 1, whose stream the request of exchange 2 continues
ASKED = chat_conversation(1, {"messages": [USER]})


def findings(messages: list, streams=STREAM) -> list[str]:
    conv = chat_conversation(2, {"messages": messages})
    return [f.kind for f in check(streams, [ASKED, conv]).findings]


def test_every_contract_kind_has_a_case():
    # a dialect's own kinds are checked in its own words (test_gemini.py; a Realtime
    # session's in tests/dialects/realtime/test_session.py), pairing's in test_pairing.py,
    # a request that cannot be read in test_request_encodings.py (and below)
    pairing = {"continuation-missing", "continuation-ambiguous"}
    own = {"thought-signature-dropped", "tool-result-repeated", "tool-call-id-filled"}
    unread = {"request-undecodable"}
    assert set(CASES) | own | pairing | unread == set(KINDS)


def test_a_request_that_cannot_be_read_is_said_once_and_checks_nothing():
    why = "the request body's Content-Encoding zstd cannot be decoded"
    got = check(STREAM, [ASKED], unread={2: why}).findings
    assert [(f.exchange, f.kind, f.severity, f.message, f.stream) for f in got] == [
        (2, "request-undecodable", "warning", why, None)
    ]


def test_arguments_changed_or_repaired_on_the_way_back():
    changed = [USER, assistant(("call_a", "get_weather", '{"city": "London"}')), tool("call_a")]
    assert findings(changed) == ["tool-call-arguments-changed"]
    same_value = [USER, assistant(("call_a", "get_weather", '{"city":"Paris"}')), tool("call_a")]
    assert findings(same_value) == []
    streamed_cut = [
        (1, [Call(0, 0, "call_a", "function", "get_weather", '{"city": "Par', 3, 2, 4)])
    ]
    repaired = [USER, assistant(("call_a", "get_weather", '{"city": "Par"}')), tool("call_a")]
    assert findings(repaired, streamed_cut) == ["tool-call-arguments-repaired"]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_kind_triggers(kind):
    assert kind in findings(CASES[kind], STREAMS.get(kind, STREAM))


@pytest.mark.parametrize("kind", sorted(CASES))
def test_kind_stays_quiet_on_a_correct_round_trip(kind):
    assert kind not in findings(GOOD)


def test_empty_id_sent_back_empty_is_the_contract_kept():
    streams = [(1, [Call(0, 0, "", "function", "get_weather", ARGS, 3, 2, 4)])]
    messages = [USER, assistant(("", "get_weather", ARGS)), tool("")]
    assert findings(messages, streams) == []
    messages = [USER, assistant(("call_0", "get_weather", ARGS)), tool("call_0")]
    assert findings(messages, streams) == ["tool-call-id-substituted"]


def test_reordered_calls_are_matched_by_id():
    streams = [
        (
            1,
            [
                Call(0, 0, "call_a", "function", "f", "{}", 1, 1, 1),
                Call(0, 1, "call_b", "function", "g", "{}", 1, 2, 2),
            ],
        )
    ]
    messages = [
        USER,
        assistant(("call_b", "g", "{}"), ("call_a", "f", "{}")),
        tool("call_b"),
        tool("call_a"),
    ]
    assert findings(messages, streams) == []


def test_history_repeated_in_later_requests_is_reported_once():
    bad = CASES["tool-result-id-mismatch"]
    convs = [
        chat_conversation(2, {"messages": bad}),
        chat_conversation(3, {"messages": [*bad, USER]}),
    ]
    kinds = [(f.exchange, f.kind) for f in check([], convs).findings]
    assert kinds == [(2, "tool-result-id-mismatch"), (2, "tool-result-missing")]


def test_a_fan_out_sent_back_reordered_pairs_each_call_by_id():
    # 3,000 calls sent back in reverse order, call_7 left out and call_2999 sent under
    # call_5's id: every other call is paired by id (a reordered message is no
    # substitution); call_7 takes the one sent call left over, call_2999 finds none
    n = 3000
    calls = [Call(0, i, f"call_{i}", "function", "f", "{}", 1, i + 1, i + 1) for i in range(n)]
    sent = [(f"call_{i}", "f", "{}") for i in reversed(range(n)) if i != 7]
    sent[0] = ("call_5", "f", "{}")
    messages = [USER, assistant(*sent), *[tool(i) for i, _, _ in sent]]
    got = check([(1, calls)], [ASKED, chat_conversation(2, {"messages": messages})]).findings
    where = "exchange 2 sends back the calls of exchange 1"
    assert [f.message for f in got] == [
        f'{where}: the stream assembled id "call_7", the assistant message carries "call_5"; '
        "the model cannot match results to calls",
        f'{where}: call "f" (id "call_2999") is missing from the assistant message',
    ]


# Gemini 2.5 sends no functionCall.id; a Go client numbers the calls "1", "2" in its
# history and in the functionResponse parts that answer them
GEMINI_ASKED = {"role": "user", "parts": [{"text": "weather in Paris and London?"}]}
NO_IDS = [
    (
        1,
        [
            Call(0, 0, "", "functionCall", "get_weather", '{"city":"Paris"}', 1, 1, 1),
            Call(0, 1, "", "functionCall", "get_weather", '{"city":"London"}', 1, 1, 1),
        ],
    )
]


def _gemini(ex: int, contents: list) -> Conversation:
    return Conversation.of(ex, dialect("gemini").history({"contents": contents}))


def _gemini_round_trip(call_ids: tuple, result_ids: tuple, streams=NO_IDS) -> list:
    calls = [
        {"functionCall": {"id": i, "name": "get_weather", "args": {"city": c}}}
        for i, c in zip(call_ids, ("Paris", "London"), strict=True)
    ]
    results = [
        {"functionResponse": {"id": i, "name": "get_weather", "response": {"c": 15}}}
        for i in result_ids
    ]
    then = [GEMINI_ASKED, {"role": "model", "parts": calls}, {"role": "user", "parts": results}]
    return check(streams, [_gemini(1, [GEMINI_ASKED]), _gemini(2, then)]).findings


def test_an_id_the_gemini_client_fills_in_on_both_sides_keeps_the_link():
    found = _gemini_round_trip(("1", "2"), ("1", "2"))
    assert [(f.kind, f.severity, f.call) for f in found] == [
        ("tool-call-id-filled", "info", "1"),
        ("tool-call-id-filled", "info", "2"),
    ]
    assert "the model sent no id" in found[0].message and '"1"' in found[0].message


def test_a_filled_id_its_result_does_not_name_is_still_the_error():
    found = _gemini_round_trip(("1", "2"), ("1", "7"))
    kinds = sorted(f.kind for f in found)
    assert kinds == [
        "tool-call-id-filled",
        "tool-call-id-substituted",
        "tool-result-id-mismatch",
        "tool-result-missing",
    ]
    wrong = next(f for f in found if f.kind == "tool-call-id-substituted")
    assert wrong.severity == "error" and wrong.call == "2"
    assert "no functionResponse part after it names" in wrong.message


def test_one_id_filled_in_on_two_gemini_calls_links_neither():
    found = _gemini_round_trip(("1", "1"), ("1", "1"))
    assert {f.kind for f in found} == {"tool-call-id-substituted"}
    assert "gave another call too" in found[0].message


def test_an_id_the_gemini_model_sent_and_the_client_replaced_is_still_the_error():
    sent = [
        (
            1,
            [
                Call(0, 0, "fc_a", "functionCall", "get_weather", '{"city":"Paris"}', 1, 1, 1),
                Call(0, 1, "fc_b", "functionCall", "get_weather", '{"city":"London"}', 1, 1, 1),
            ],
        )
    ]
    found = _gemini_round_trip(("1", "2"), ("1", "2"), sent)
    assert [(f.kind, f.severity) for f in found] == [("tool-call-id-substituted", "error")] * 2
    # its results name the client's ids, so the message says what holds and what does not
    assert "not by the id the model made" in found[0].message
    assert "cannot match" not in found[0].message


def test_a_replaced_id_its_result_does_not_name_cannot_be_matched():
    sent = [
        (
            1,
            [
                Call(0, 0, "fc_a", "functionCall", "get_weather", '{"city":"Paris"}', 1, 1, 1),
                Call(0, 1, "fc_b", "functionCall", "get_weather", '{"city":"London"}', 1, 1, 1),
            ],
        )
    ]
    found = _gemini_round_trip(("1", "2"), ("fc_a", "fc_b"), sent)
    substituted = [f for f in found if f.kind == "tool-call-id-substituted"]
    assert substituted and "the model cannot match results to calls" in substituted[0].message


def test_an_id_a_chat_client_invents_is_still_substituted():
    # Chat Completions: a call streamed with no id goes back with "" (the seed's rule)
    streams = [(1, [Call(0, 0, "", "function", "get_weather", ARGS, 3, 2, 4)])]
    messages = [USER, assistant(("call_0", "get_weather", ARGS)), tool("call_0")]
    found = check(streams, [ASKED, chat_conversation(2, {"messages": messages})]).findings
    assert [(f.kind, f.severity) for f in found] == [("tool-call-id-substituted", "error")]


def test_a_filled_id_whose_result_is_not_sent_yet_is_not_an_error():
    then = [
        GEMINI_ASKED,
        {
            "role": "model",
            "parts": [
                {"functionCall": {"id": i, "name": "get_weather", "args": {"city": c}}}
                for i, c in (("1", "Paris"), ("2", "London"))
            ],
        },
    ]
    found = check(NO_IDS, [_gemini(1, [GEMINI_ASKED]), _gemini(2, then)]).findings
    assert [(f.kind, f.severity) for f in found] == [("tool-call-id-filled", "info")] * 2
    assert "no functionResponse part is sent yet" in found[0].message
