"""`streamscope conformance` on real clients (tests/conformance_clients/): each SDK's
verdicts agree with its strategy's column on every case of its dialect, the naive
client fails exactly what `naive` predicts and is said to behave like it, and LiteLLM
and pydantic-ai are graded as they really behave."""

from __future__ import annotations

import os
import sys

import pytest

from streamscope.conformance.card import builds_like
from streamscope.conformance.cases import cases, samples_folder, select
from streamscope.conformance.grade import FAIL, PASS, SKIP
from streamscope.conformance.run import Plan, conform, run_loop

pytestmark = pytest.mark.slow

CLIENTS = os.path.join(os.path.dirname(__file__), "conformance_clients")
ALL, _ = cases()


def _grades(tmp_path, dialect: str, argv: list[str], only: tuple[str, ...] = (), loop=True):
    """The client's grades on its dialect's cases: by default in one process (--loop,
    as test_loop_and_one_process_per_case_grade_alike shows is the same)."""
    command = [sys.executable, os.path.join(CLIENTS, argv[0]), *argv[1:]]
    chosen = select(ALL, [dialect], only)
    plan = Plan(command, samples_folder() or "", str(tmp_path), 60, 0, 2, lambda g: None)
    grades = run_loop(chosen, plan) if loop else conform(chosen, plan, probe=False)[0]
    assert [g.case for g in grades] == chosen
    for g in grades:  # every case was asked: the client reads its SDK's base URL
        assert not g.got.startswith("sent no request"), (g.case.id, g.got)
    return grades


@pytest.mark.parametrize(
    "dialect, argv, strategy",
    [
        ("chat-completions", ["openai_chat.py", "helper"], "openai-sdk"),
        ("openai-responses", ["openai_responses.py"], "openai-sdk"),
        ("anthropic-messages", ["anthropic_messages.py"], "anthropic-sdk"),
        ("gemini", ["google_genai.py"], "parts"),
        ("ollama-chat", ["ollama_chat.py"], "ollama-python"),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0],
)
def test_an_sdk_clients_verdicts_agree_with_its_strategys_column(
    tmp_path, dialect, argv, strategy
) -> None:
    grades = _grades(tmp_path, dialect, argv)
    graded = [g for g in grades if g.verdict != SKIP]
    assert graded
    disagree = [
        (g.case.id, g.verdict, g.predicted[strategy], g.got)
        for g in graded
        if g.verdict != g.predicted[strategy]
    ]
    assert disagree == []
    # where the client sent calls back, they are the ones its strategy built
    for g in graded:
        if g.sent is not None and not g.findings:
            assert strategy in g.like, g.case.id


def test_an_openai_sdk_agent_is_graded_on_every_chat_case_one_process_each(tmp_path) -> None:
    """The done-when's own words: `conformance -- python agent.py` on an openai-SDK
    agent, one process per case, agrees with the openai-sdk strategy's column."""
    grades = _grades(tmp_path, "chat-completions", ["openai_chat.py", "helper"], loop=False)
    assert len(grades) == len([c for c in ALL if c.dialect == "chat-completions"])
    by = {g.case.sample_name: g for g in grades}
    # it declares no custom tool: the custom tool's case is not graded
    assert by["custom-tool"].verdict == SKIP and "declared no custom tool" in by["custom-tool"].got
    graded = [g for g in grades if g.verdict != SKIP]
    assert [g.verdict for g in graded] == [g.predicted["openai-sdk"] for g in graded]
    assert builds_like(grades) == "it behaves most like `openai-sdk` (15 of 16 cases)"
    assert by["openai"].verdict == PASS
    assert by["first-index-1"].verdict == FAIL and "IndexError" in by["first-index-1"].got
    # the SDK glues a re-sent id to the first, then its arguments do not parse: refused
    assert by["args-resent"].verdict == FAIL and "JSONDecodeError" in by["args-resent"].got
    assert by["dashscope-truncated-args"].verdict == PASS  # LengthFinishReasonError: refused
    # it concatenates the role sent on every chunk: the history has no assistant message
    assert "tool-call-dropped" in {f.kind for f in by["ollama-no-ids"].findings}


def test_loop_and_one_process_per_case_grade_alike(tmp_path) -> None:
    picked = ("alibaba-empty-id", "first-index-1", "dashscope-truncated-args", "openai")
    argv = ["openai_chat.py", "naive"]
    each = _grades(tmp_path / "each", "chat-completions", argv, picked, loop=False)
    loop = _grades(tmp_path / "loop", "chat-completions", argv, picked)
    assert [(g.verdict, g.like, g.expected) for g in each] == [
        (g.verdict, g.like, g.expected) for g in loop
    ]
    assert [g.got for g in each] != [g.got for g in loop]  # (loop: "went on to its next")


def test_a_vertex_only_stream_is_not_graded_on_a_gemini_api_client(tmp_path) -> None:
    picked = ("gemini-streamed-args", "gemini-parallel-signature")
    by = {g.case.sample_name: g for g in _grades(tmp_path, "gemini", ["google_genai.py"], picked)}
    assert by["gemini-streamed-args"].verdict == SKIP
    assert "Vertex AI" in by["gemini-streamed-args"].got
    assert by["gemini-parallel-signature"].verdict == PASS


def test_a_naive_client_fails_exactly_what_naive_predicts_and_is_said_to_behave_like_it(
    tmp_path,
) -> None:
    grades = [
        g
        for g in _grades(tmp_path, "chat-completions", ["openai_chat.py", "naive"])
        if g.verdict != SKIP  # (custom-tool: it declares no custom tool)
    ]
    assert [g.verdict for g in grades] == [g.predicted["naive"] for g in grades]
    assert all("naive" in g.like for g in grades)
    assert builds_like(grades) == "your client behaves like `naive` (on every case)"
    lost = next(g for g in grades if g.case.sample_name == "alibaba-empty-id")
    assert lost.verdict == FAIL and lost.sent is not None and lost.sent[0].id == ""
    assert {"tool-call-id-substituted", "tool-call-name-changed"} <= {f.kind for f in lost.findings}
    assert lost.link is not None and lost.link.endswith("alibaba-empty-id.jsonl#1@2")


def test_litellm_is_graded_as_it_behaves(tmp_path) -> None:
    by = {
        g.case.sample_name: g
        for g in _grades(
            tmp_path,
            "chat-completions",
            ["litellm_chat.py"],
            ("alibaba-empty-id", "name-fragments", "ollama-no-ids"),
        )
    }
    assert by["alibaba-empty-id"].verdict == PASS
    # stream_chunk_builder keeps the last name fragment only
    assert "tool-call-name-changed" in {f.kind for f in by["name-fragments"].findings}
    # with finish_reason "stop" the built message has no tool calls: nothing goes back
    assert by["ollama-no-ids"].sent is None and by["ollama-no-ids"].ran.status == 0


def test_pydantic_ai_is_graded_as_it_behaves(tmp_path) -> None:
    by = {
        g.case.sample_name: g
        for g in _grades(
            tmp_path,
            "chat-completions",
            ["pydantic_ai_chat.py"],
            ("openai", "ollama-no-ids", "dashscope-truncated-args"),
        )
    }
    assert by["openai"].verdict == PASS
    # an empty id is replaced by one it makes up
    assert by["ollama-no-ids"].sent[0].id.startswith("pyd_ai_")
    assert "tool-call-id-substituted" in {f.kind for f in by["ollama-no-ids"].findings}
    # truncated arguments go back wrapped, not refused
    assert by["dashscope-truncated-args"].verdict == FAIL
