"""The contract pairs each stream with the request that continues its conversation, in any
interleaving: one conversation's calls are never compared with another's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.calls import Call
from streamscope.core.contract import Conversation, check
from streamscope.dialects import dialect

from .helpers import chat_conversation

SYSTEM = {"role": "system", "content": "You are a weather agent."}


def _call(cid: str, city: str) -> dict:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": "get_weather", "arguments": f'{{"city": "{city}"}}'},
    }


def conversation(k: int, turns: int, question: str | None = None, swap: str | None = None):
    """Conversation `k`: `turns` streams that each make one call, then one that answers in
    text; per step (the request's messages, the calls its stream assembled). `swap`: the
    id the client sends back instead of the second call's."""
    messages: list[dict] = [SYSTEM, {"role": "user", "content": question or f"question {k}"}]
    steps = []
    for j in range(turns):
        cid, city = f"call_{k}_{j}", f"city {k}.{j}"
        steps.append(
            (
                list(messages),
                [
                    Call(
                        0,
                        0,
                        cid,
                        "function",
                        "get_weather",
                        _call(cid, city)["function"]["arguments"],
                        3,
                        2,
                        4,
                    )
                ],
            )
        )
        back = swap if (swap and j == 1) else cid
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [_call(back, city)]},
            {"role": "tool", "tool_call_id": back, "content": "15C"},
        ]
    steps.append((list(messages), []))
    return steps


def run(order: list[int], convs: list[list]) -> tuple[list, dict[int, tuple[int, int]]]:
    """The exchanges when conversation `order[i]` takes the i-th turn: the findings, and
    which (conversation, step) each exchange is."""
    at = [0] * len(convs)
    streams, requests, which = [], [], {}
    for ex, k in enumerate(order, start=1):
        messages, calls = convs[k][at[k]]
        which[ex] = (k, at[k])
        at[k] += 1
        requests.append(chat_conversation(ex, {"messages": messages}))
        streams.append((ex, calls))
    return check(streams, requests).findings, which


def interleavings(sizes: list[int]):
    """An order in which every conversation takes all its steps, in any interleaving."""
    return st.permutations([k for k, n in enumerate(sizes) for _ in range(n)])


FOUR = [conversation(k, 3) for k in range(4)]


def test_four_interleaved_conversations_later_ones_answering_first_keep_the_contract():
    order = [0, 1, 2, 3, 3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0]
    findings, _ = run(order, FOUR)
    assert [f.message for f in findings] == []


def test_one_substituted_id_is_one_break_in_its_own_conversation():
    convs = [*FOUR[:2], conversation(2, 3, swap="call_uuid"), FOUR[3]]
    order = [0, 1, 2, 3, 3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0]
    findings, which = run(order, convs)
    assert [f.kind for f in findings] == ["tool-call-id-substituted"]
    (f,) = findings
    assert which[f.stream] == (2, 1) and which[f.exchange] == (2, 2)
    assert f"the conversation begun at exchange {order.index(2) + 1}" in f.message
    said = f.to_json()  # --json names them too
    assert (said["stream"], said["conversation"]) == (f.stream, order.index(2) + 1)


@settings(max_examples=60, deadline=None)
@given(order=interleavings([4, 4, 4]), same=st.booleans())
def test_pairing_does_not_depend_on_how_conversations_interleave(order, same):
    # the same question in every conversation: only the calls tell them apart
    question = "what is the weather?" if same else None
    convs = [
        conversation(0, 3, question),
        conversation(1, 3, question, swap="call_uuid"),
        conversation(2, 3, question),
    ]
    findings, which = run(order, convs)
    assert [(f.kind, which[f.stream]) for f in findings] == [("tool-call-id-substituted", (1, 1))]


def test_a_history_the_client_edited_is_said_and_not_a_break():
    (first, calls), (second, _), _ = conversation(0, 2)
    edited = [{**second[0], "content": "You are a helpful agent."}, *second[1:]]
    findings = check(
        [(1, calls), (2, [])],
        [chat_conversation(1, {"messages": first}), chat_conversation(2, {"messages": edited})],
    ).findings
    assert [(f.kind, f.severity, f.exchange) for f in findings] == [
        ("continuation-missing", "info", 1)
    ]
    assert 'exchange 2 sends call id "call_0_0" back, but its history' in findings[0].message


def test_two_streams_of_one_history_whose_answers_the_calls_cannot_tell_apart():
    # two streams of the same request made calls with no id; two later requests send other
    # calls back: neither is compared with either, and both say so
    asked = [SYSTEM, {"role": "user", "content": "go"}]
    made = [Call(0, 0, "", "function", "f", "{}", 1, 1, 1)]
    backs = [
        [
            *asked,
            {"role": "assistant", "tool_calls": [_call("x", "a")]},
            {"role": "tool", "tool_call_id": "x"},
        ],
        [
            *asked,
            {"role": "assistant", "tool_calls": [_call("y", "b")]},
            {"role": "tool", "tool_call_id": "y"},
        ],
    ]
    requests = [chat_conversation(ex, {"messages": asked}) for ex in (1, 2)]
    requests += [chat_conversation(ex, {"messages": m}) for ex, m in ((3, backs[0]), (4, backs[1]))]
    findings = check([(1, made), (2, made), (3, []), (4, [])], requests).findings
    assert [(f.kind, f.exchange) for f in findings] == [
        ("continuation-ambiguous", 1),
        ("continuation-ambiguous", 2),
    ]


def test_a_retried_request_is_paired_by_the_calls_it_got_back():
    # exchange 1 was cut, the client asked again (2) and continued with 2's calls: 1's
    # partial calls are not compared with 2's answer
    (asked, calls), (after, _), _ = conversation(0, 2)
    cut = [Call(0, 0, "call_cut", "function", "get_weather", '{"ci', 3, 2, 4)]
    requests = [
        chat_conversation(ex, {"messages": m}) for ex, m in ((1, asked), (2, asked), (3, after))
    ]
    findings = check([(1, cut), (2, calls), (3, [])], requests).findings
    assert [(f.kind, f.exchange) for f in findings] == [("continuation-missing", 1)]
    assert "exchange 2 sent the same request again" in findings[0].message


def _responses(ex: int, body: dict) -> Conversation:
    return Conversation.of(ex, dialect("openai-responses").history(body))


def test_a_stored_response_is_paired_by_its_id():
    # previous_response_id: no history is sent back; the outputs answer the stored calls
    made = [Call(0, 0, "call_1", "function_call", "f", "{}", 1, 1, 1)]
    requests = [
        _responses(1, {"input": "go"}),
        _responses(2, {"input": [{"role": "user", "content": "other"}]}),
        _responses(
            3,
            {
                "previous_response_id": "resp_1",
                "input": [{"type": "function_call_output", "call_id": "call_x", "output": "1"}],
            },
        ),
    ]
    result = check([(1, made), (2, [])], requests, {"resp_1": 1})
    kinds = {(f.kind, f.call) for f in result.findings}
    assert kinds == {("tool-result-id-mismatch", "call_x"), ("tool-result-missing", "call_1")}
    assert result.conversation[3] == 1 and result.compared == 1


def _anthropic(ex: int, body: dict) -> Conversation:
    return Conversation.of(ex, dialect("anthropic-messages").history(body))


def test_an_anthropic_cache_breakpoint_moved_to_the_newest_message_is_the_same_history():
    # agents mark the last message for prompt caching, a new one on every request
    def text(words: str, cached: bool) -> dict:
        block = {"type": "text", "text": words}
        return block | ({"cache_control": {"type": "ephemeral"}} if cached else {})

    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    made = [Call(0, 0, "toolu_1", "tool_use", "f", "{}", 1, 1, 1)]
    first = [{"role": "user", "content": [text("go", True)]}]
    then = [
        {"role": "user", "content": [text("go", False)]},
        {"role": "assistant", "content": [use]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x"}, text("ok", True)],
        },
    ]
    system = [{"type": "text", "text": "You help.", "cache_control": {"type": "ephemeral"}}]
    requests = [
        _anthropic(1, {"system": system, "messages": first}),
        _anthropic(2, {"system": system, "messages": then}),
    ]
    result = check([(1, made), (2, [])], requests)
    # paired: the wrong result id is found in its conversation, no "not continued"
    assert {f.kind for f in result.findings} == {"tool-result-id-mismatch", "tool-result-missing"}
    assert result.compared == 1


# Each dialect's words for a question, a call sent back and its result: (the call's type
# as streamed, user(text), call(id, city), result(id), body(items))
DIALECTS = {
    "chat-completions": (
        "function",
        lambda t: {"role": "user", "content": t},
        lambda i, c: {"role": "assistant", "tool_calls": [_call(i, c)]},
        lambda i: {"role": "tool", "tool_call_id": i, "content": "15C"},
        lambda items: {"messages": [SYSTEM, *items]},
    ),
    "anthropic-messages": (
        "tool_use",
        lambda t: {"role": "user", "content": t},
        lambda i, c: {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": i, "name": "get_weather", "input": {"city": c}}],
        },
        lambda i: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i}]},
        lambda items: {"system": "You are a weather agent.", "messages": items},
    ),
    "openai-responses": (
        "function_call",
        lambda t: {"role": "user", "content": t},
        lambda i, c: {
            "type": "function_call",
            "call_id": i,
            "name": "get_weather",
            "arguments": f'{{"city": "{c}"}}',
        },
        lambda i: {"type": "function_call_output", "call_id": i, "output": "15C"},
        lambda items: {"instructions": "You are a weather agent.", "input": items},
    ),
    "gemini": (
        "functionCall",
        lambda t: {"role": "user", "parts": [{"text": t}]},
        lambda i, c: {
            "role": "model",
            "parts": [{"functionCall": {"id": i, "name": "get_weather", "args": {"city": c}}}],
        },
        lambda i: {
            "role": "user",
            "parts": [{"functionResponse": {"id": i, "name": "get_weather", "response": {}}}],
        },
        lambda items: {"contents": items},
    ),
}


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_the_same_rule_pairs_every_dialect(name):
    # A and B ask the same question; B answers first, then A; B sends its second call
    # back under another id: one break, B's, in each dialect's own shapes
    kind, user, call, result, body = DIALECTS[name]
    told = dialect(name)
    histories = {k: [user("weather?")] for k in "AB"}
    streams, requests = [], []
    for ex, (k, turn) in enumerate([("A", 0), ("B", 0), ("B", 1), ("A", 1), ("A", 2), ("B", 2)], 1):
        requests.append(Conversation.of(ex, told.history(body(histories[k]))))
        cid, city = f"id_{k}{turn}", f"{k}{turn}"
        made = [Call(0, 0, cid, kind, "get_weather", f'{{"city": "{city}"}}', 3, 2, 4)]
        streams.append((ex, made if turn < 2 else []))
        back = "id_other" if (k, turn) == ("B", 1) else cid
        histories[k] += [call(back, city), result(back)]
    findings = check(streams, requests).findings
    assert [(f.kind, f.stream, f.exchange) for f in findings] == [
        ("tool-call-id-substituted", 3, 6)
    ], [f.message for f in findings]


def test_an_item_codex_adds_after_the_user_message_is_the_users_turn():
    # Codex's default model path sends a role-less configuration_update after the user's
    # message; the next request's history is that request byte for byte, then the answer
    config = {"type": "configuration_update", "reasoning": {"effort": "medium"}}
    asked = [
        {"type": "message", "role": "developer", "content": "You run shell commands."},
        {"type": "message", "role": "user", "content": "run echo hello"},
        config,
    ]
    call = {
        "type": "function_call",
        "call_id": "call_1",
        "name": "shell",
        "arguments": '{"command":["echo","hello"]}',
    }
    output = {"type": "function_call_output", "call_id": "call_1", "output": "hello\n"}
    made = [Call(0, 0, "call_1", "function_call", "shell", call["arguments"], 3, 2, 4)]
    requests = [_responses(1, {"input": asked}), _responses(2, {"input": [*asked, call, output]})]
    result = check([(1, made), (2, [])], requests)
    assert result.findings == [] and result.compared == 1
    assert result.conversation[2] == 1
    # the same answer sent back changed is found in that conversation, as for any request
    other = {**call, "call_id": "call_x"}
    broken = [*asked, other, {**output, "call_id": "call_x"}]
    requests[1] = _responses(2, {"input": broken})
    kinds = [f.kind for f in check([(1, made), (2, [])], requests).findings]
    assert kinds == ["tool-call-id-substituted"]


def test_answers_with_ids_the_client_filled_in_are_told_apart_by_their_calls():
    # two conversations ask Gemini the same question; it sends no ids, and each client
    # numbers its call "1": which answer is whose is told by the calls' names and arguments
    read = dialect("gemini").history
    asked = [{"role": "user", "parts": [{"text": "weather?"}]}]

    def then(city: str) -> list:
        call = {"functionCall": {"id": "1", "name": "get_weather", "args": {"city": city}}}
        answer = {"functionResponse": {"id": "1", "name": "get_weather", "response": {}}}
        return [*asked, {"role": "model", "parts": [call]}, {"role": "user", "parts": [answer]}]

    def made(city: str) -> list[Call]:
        return [Call(0, 0, "", "functionCall", "get_weather", f'{{"city":"{city}"}}', 1, 1, 1)]

    bodies = [asked, asked, then("Rome"), then("Oslo")]
    requests = [Conversation.of(ex, read({"contents": c})) for ex, c in enumerate(bodies, 1)]
    result = check([(1, made("Oslo")), (2, made("Rome")), (3, []), (4, [])], requests)
    assert [(f.kind, f.stream, f.exchange) for f in result.findings] == [
        ("tool-call-id-filled", 2, 3),
        ("tool-call-id-filled", 1, 4),
    ]
    assert result.conversation[3] == 2 and result.conversation[4] == 1
