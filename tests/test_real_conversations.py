"""Real multi-turn conversations, recorded by other projects against the real APIs
(tests/fixtures/real/README.md says where each comes from): a conversation the API
answered worked, so the contract says nothing false of it, and what the API refused is
still found. Each fixture is a HAR made from a test suite's cassette."""

from __future__ import annotations

import json
import os

import pytest

from streamscope.analysis import analyze
from streamscope.core.contract import Conversation, check
from streamscope.dialects import dialect

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "real")

# fixture -> the contract findings (kind, severity) the bytes prove, in order
EXPECTED: dict[str, list[tuple[str, str]]] = {
    # a Responses stream whose output is a message, then a call: the message sends no call
    "responses-message-before-call.har": [],
    # a tool search the client ran (execution: client) and answered: the user's side
    "responses-client-tool-search.har": [],
    # outputs that answer calls the server-side `conversation` holds
    "responses-conversation-continuation.har": [],
    # a function_call_output answering a client tool search's call_id (the API took it)
    "responses-tool-search-answered-by-function-output.har": [],
    # consecutive assistant messages, one user message of results for both
    "anthropic-consecutive-assistant.har": [],
    # an agent handing off: the next request has the new agent's instructions
    "responses-handoff-new-instructions.har": [],
    # a tool message with neither tool_name nor tool_call_id (both optional)
    "ollama-tool-message-without-name.har": [],
    # Google's Interactions API (no dialect streamscope reads), its body has `input`
    "gemini-interactions-stream.har": [],
    # DeepSeek answered 400 "No tool output found for tool call call-a.": true findings
    "responses-interleaved-outputs-rejected.har": [
        ("tool-result-id-mismatch", "error"),
        ("tool-result-missing", "error"),
    ],
    # pydantic-ai prefixes reused ids with the response id, on the call and its output
    "responses-ids-replaced-on-both-sides.har": [
        ("tool-call-id-substituted", "error"),
        ("tool-call-id-substituted", "error"),
    ],
}


def _har(name: str) -> str:
    return os.path.join(REAL, name)


def test_every_kept_fixture_is_listed():
    kept = sorted(n for n in os.listdir(REAL) if n.endswith(".har"))
    assert kept == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_real_conversation_gets_only_true_findings(name):
    analysis = analyze(_har(name))
    assert [(f.kind, f.severity) for f in analysis.contract] == EXPECTED[name]
    # no stream of a conversation the API went on with is left unchecked
    assert not [f for f in analysis.contract if f.kind.startswith("continuation-")]


def test_calls_after_a_message_item_are_compared():
    analysis = analyze(_har("responses-message-before-call.har"))
    assert analysis.compared == 1


def test_a_client_tool_search_ends_the_users_turn_so_its_stream_is_continued():
    analysis = analyze(_har("responses-client-tool-search.har"))
    # the function call of exchange 2 came back in exchange 3, after the search's output
    assert analysis.compared == 1


def test_replaced_ids_linked_on_both_sides_say_so():
    analysis = analyze(_har("responses-ids-replaced-on-both-sides.har"))
    message = analysis.contract[0].message
    assert "names" in message and "not by the id the model made" in message
    assert "cannot match" not in message


def _request(name: str, k: int) -> dict:
    with open(_har(name), encoding="utf-8") as f:
        entry = json.load(f)["log"]["entries"][k]
    return json.loads(entry["request"]["postData"]["text"])


def _findings(dialect_name: str, body: dict) -> list[str]:
    history = dialect(dialect_name).history(body)
    assert history is not None
    return [f.kind for f in check([], [Conversation.of(1, history)]).findings]


def test_a_result_for_no_call_of_the_assistant_run_is_still_a_mismatch():
    body = _request("anthropic-consecutive-assistant.har", 0)
    assert _findings("anthropic-messages", body) == []
    results = body["messages"][3]["content"]
    results[1]["tool_use_id"] = "toolu_nobody"
    assert sorted(_findings("anthropic-messages", body)) == [
        "tool-result-id-mismatch",
        "tool-result-missing",
    ]


def test_a_tool_search_output_for_another_call_id_is_still_a_mismatch():
    body = _request("responses-tool-search-answered-by-function-output.har", 0)
    assert _findings("openai-responses", body) == []
    body["input"][2]["call_id"] = "search_call_2"
    assert sorted(_findings("openai-responses", body)) == [
        "tool-result-id-mismatch",
        "tool-result-missing",
    ]


def test_without_its_conversation_an_output_for_no_call_is_a_mismatch():
    body = _request("responses-conversation-continuation.har", 2)
    assert _findings("openai-responses", body) == []
    del body["conversation"]
    assert _findings("openai-responses", body) == ["tool-result-id-mismatch"]


def test_a_handoff_that_swaps_the_instructions_still_continues_the_stream():
    analysis = analyze(_har("responses-handoff-new-instructions.har"))
    assert analysis.compared == 1


def test_a_nameless_tool_message_answers_the_call_at_its_place_and_no_other():
    body = _request("ollama-tool-message-without-name.har", 0)
    assert _findings("ollama-chat", body) == []
    body["messages"].append(dict(body["messages"][1]))  # a second result, for no call
    assert _findings("ollama-chat", body) == ["tool-result-id-mismatch"]


def test_an_interactions_stream_is_not_taken_for_a_responses_stream():
    (stream,) = analyze(_har("gemini-interactions-stream.har")).streams
    kinds = {a.kind for a in stream.anomalies}
    # no Responses rule speaks of it (response-end-missing was said of it)
    assert stream.dialect != "openai-responses" and "response-end-missing" not in kinds
