"""`streamscope conformance`: the cases, the grading, the card, the time bound.

Clients here are tiny scripts (a hanging one, one that sends nothing) and the demo's
openai agent; the real SDK and framework clients are in test_conformance_clients_run.py.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.cli import main
from streamscope.conformance.cases import cases, samples_folder, select, served
from streamscope.conformance.grade import FAIL, PASS
from streamscope.conformance.run import Plan, conform
from streamscope.core.engine import value_key

ALL, SKIPPED = cases()
CHAT = [c for c in ALL if c.dialect == "chat-completions"]


def test_every_sample_with_calls_is_a_case_of_its_dialect_and_the_rest_say_why() -> None:
    folder = samples_folder()
    assert folder is not None
    samples = {n for n in os.listdir(folder) if not n.endswith(".md")}
    assert {c.sample for c in ALL} | {s.split(":")[0] for s in SKIPPED} == samples
    assert {c.dialect for c in ALL} >= {
        "chat-completions",
        "anthropic-messages",
        "openai-responses",
        "gemini",
        "ollama-chat",
        "bedrock-converse",
    }
    assert len({(c.dialect, c.id) for c in ALL}) == len(ALL)  # each named once
    by = {c.sample: c for c in ALL}
    assert by["alibaba-empty-id.jsonl"].name == "id-empty-overwrite"
    assert by["dashscope-truncated-args.jsonl"].refuse is not None  # truncated: refuse
    assert by["openai.jsonl"].refuse is None
    assert "crow-rs commit 92d54ad" in by["alibaba-empty-id.jsonl"].reference


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.sample_name)
def test_a_served_case_is_the_samples_stream_then_a_text_answer(case, tmp_path) -> None:
    folder = samples_folder()
    assert folder is not None
    path = tmp_path / "served.jsonl"
    path.write_bytes(served(case, folder))
    first, second = analyze(path).streams
    assert [value_key(c) for c in first.tool_calls] == [value_key(c) for c in case.calls]
    assert first.dialect == second.dialect == case.dialect
    assert not second.tool_calls and second.ended in ("done", "finish-without-done")


def test_select_by_dialect_and_by_kind_or_sample() -> None:
    assert {c.dialect for c in select(ALL, ["gemini"])} == {"gemini"}
    picked = select(ALL, (), ["id-repeated"])
    assert {c.sample_name for c in picked} == {"args-resent", "ids-repeated"}
    assert [c.sample_name for c in select(ALL, (), ["vllm"])] == ["vllm"]


def _script(tmp_path, name: str, body: str) -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


# A client that reads the stream and then never returns: the time bound stops it.
HANGS = """
    import os, time, httpx
    base = os.environ["OPENAI_BASE_URL"]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with httpx.stream("POST", base + "/chat/completions", json=body) as r:
        for _ in r.iter_bytes():
            pass
    time.sleep(600)
"""


@pytest.mark.slow
def test_a_client_that_hangs_is_graded_hung_at_the_bound_and_the_run_goes_on(tmp_path) -> None:
    chosen = select(CHAT, (), ["openai", "vllm"])
    seen = []
    plan = Plan(
        _script(tmp_path, "hangs.py", HANGS),
        samples_folder() or "",
        str(tmp_path / "out"),
        1.5,
        0,
        2,
        seen.append,
    )
    grades, _ = conform(chosen, plan, probe=False)
    assert [g.case.sample_name for g in grades] == ["openai", "vllm"]
    assert len(seen) == 2
    for g in grades:
        assert g.verdict == FAIL and g.ran is not None and g.ran.status is None
        assert g.got.startswith("sent no call back; hung: stopped after 1.5 s")
        assert g.ran.seconds < 10
        assert g.like == []  # a hang is no client's behaviour
        assert g.link is not None and g.link.endswith("#1@4" if "openai" in g.link else "#1@1")
    assert oct(os.stat(tmp_path / "out" / "openai.jsonl").st_mode & 0o777) == "0o600"


@pytest.mark.slow
def test_the_demo_agent_on_the_sdk_helper_builds_what_openai_sdk_builds(tmp_path) -> None:
    chosen = select(CHAT, (), ["alibaba-empty-id", "args-resent", "dashscope-truncated-args"])
    command = [sys.executable, "-m", "streamscope.demo.agent", "helper"]
    plan = Plan(command, samples_folder() or "", str(tmp_path), 30, 0, 2, lambda g: None)
    grades, found = conform(chosen, plan, probe=True)
    assert found == "chat-completions"
    by = {g.case.sample_name: g for g in grades}
    assert by["alibaba-empty-id"].verdict == PASS
    assert by["alibaba-empty-id"].got.startswith('"call_eee11723464a4b9eb8cee71d" "get_weather"')
    # the SDK glues the re-sent id to the first: the contract finds the substitution
    resent = by["args-resent"]
    assert resent.verdict == FAIL
    assert "tool-call-id-substituted" in {f.kind for f in resent.findings}
    assert resent.link == f"{tmp_path}/args-resent.jsonl#1@5"
    # truncated arguments: the SDK raises LengthFinishReasonError, a refusal
    truncated = by["dashscope-truncated-args"]
    assert truncated.verdict == PASS and "LengthFinishReasonError" in truncated.got
    for g in grades:
        assert "openai-sdk" in g.like
        assert g.predicted["openai-sdk"] == g.verdict


@pytest.mark.slow
def test_cli_json_card_and_exit_status(tmp_path) -> None:
    command = [sys.executable, "-m", "streamscope.demo.agent", "helper"]
    got = CliRunner().invoke(
        main,
        [
            "conformance",
            "--json",
            "--speed",
            "0",
            "--only",
            "vllm",
            "-o",
            str(tmp_path),
            "--",
            *command,
        ],
    )
    assert got.exit_code == 0, got.output
    card = json.loads(got.stdout)
    assert card["schema"] == 1 and card["passed"] is True
    (chat,) = card["dialects"]
    assert chat["dialect"] == "chat-completions" and chat["cases"] == chat["passed"] == 1
    (grade,) = chat["grades"]
    assert grade["verdict"] == "pass" and grade["recording"] == str(tmp_path / "vllm.jsonl")
    assert grade["sent"][0]["id"] == grade["calls"][0]["id"]


def test_cli_refuses_bad_usage_in_one_line(tmp_path) -> None:
    runner = CliRunner()
    for args, said in (
        (["conformance"], "needs a command"),
        (["conformance", "--only", "no-such-kind", "--", "true"], "no case has that kind"),
        (["conformance", "--dialect", "nope", "--", "true"], "--dialect 'nope': no cases"),
        (["conformance", "-o", str(tmp_path), "--", str(tmp_path / "missing")], "cannot run"),
    ):
        got = runner.invoke(main, args)
        assert got.exit_code in (2, 127), (args, got.output)
        assert said in got.stderr and "Traceback" not in got.output
        assert len(got.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_cli_a_client_that_sends_nothing_cannot_be_graded(tmp_path) -> None:
    got = CliRunner().invoke(
        main, ["conformance", "--only", "openai", "-o", str(tmp_path), "--", "true"]
    )
    assert got.exit_code == 2
    assert "sent no request" in got.stderr and "OPENAI_BASE_URL" in got.stderr


# The user's first client: the openai SDK as its docs show it, no key of its own.
SDK_CLIENT = """
    import json, openai
    client = openai.OpenAI()
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    messages = [{"role": "user", "content": "Weather?"}]
    with client.chat.completions.stream(model="m", messages=messages, tools=tools) as s:
        message = s.get_final_completion().choices[0].message
    calls = message.tool_calls or []
    messages.append(message.model_dump(exclude_none=True))
    for c in calls:
        messages.append({"role": "tool", "tool_call_id": c.id, "content": "{}"})
    with client.chat.completions.stream(model="m", messages=messages, tools=tools) as s:
        s.get_final_completion()
"""


@pytest.mark.slow
def test_an_sdk_client_with_no_key_of_its_own_is_graded(tmp_path, monkeypatch) -> None:
    # the SDK refuses to start without a key; the mock checks none: it is given one
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    got = CliRunner().invoke(
        main,
        ["conformance", "--speed", "0", "--only", "openai", "-o", str(tmp_path / "r"), "--"]
        + _script(tmp_path, "c.py", SDK_CLIENT),
    )
    assert got.exit_code == 0, got.output
    assert "Missing credentials" not in got.output
    assert "sk-streamscope" not in (tmp_path / "r" / "openai.jsonl").read_text()  # masked


def test_placeholder_keys_are_given_only_where_the_user_has_none() -> None:
    from streamscope.providers import GOOGLE, OPENAI, placeholder_credentials

    pointed = [*OPENAI.sides, *GOOGLE.sides]
    assert placeholder_credentials(pointed, {}) == {
        "OPENAI_API_KEY": "sk-streamscope-placeholder",
        "GEMINI_API_KEY": "streamscope-placeholder",
    }
    # the user's own key stays theirs, under either name its SDK reads
    assert (
        placeholder_credentials(pointed, {"OPENAI_API_KEY": "sk-mine", "GOOGLE_API_KEY": "g"}) == {}
    )


@pytest.mark.slow
def test_a_run_that_records_nothing_names_no_folder_and_leaves_none(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    got = CliRunner().invoke(main, ["conformance", "--only", "openai", "--", "true"])
    assert got.exit_code == 2 and "sent no request" in got.stderr
    assert "recordings" not in got.stderr
    assert os.listdir(tmp_path) == []  # no empty recordings/ left behind
    as_json = CliRunner().invoke(main, ["conformance", "--json", "--only", "openai", "--", "true"])
    assert json.loads(as_json.stdout)["recordings"] is None and os.listdir(tmp_path) == []


def test_list_names_each_case_with_what_it_expects_and_stands_for() -> None:
    got = CliRunner().invoke(main, ["conformance", "--list", "--dialect", "chat-completions"])
    assert got.exit_code == 0
    assert "chat-completions  id-empty-overwrite (alibaba-empty-id)" in got.stdout
    assert 'expected: refuse (the arguments of "get_forecast" do not parse)' in got.stdout
    assert "stands for: the empty-string overwrite trap" in got.stdout


# One conversation, then a hang in the second: `--loop` grades the first, the second as
# hung, and the third as never reached.
HANGS_SECOND = """
    import json, os, time, httpx
    base = os.environ["OPENAI_BASE_URL"]
    question = [{"role": "user", "content": "hi"}]
    for turn in range(int(os.environ["STREAMSCOPE_CONFORMANCE_CASES"])):
        if turn == 1:
            time.sleep(600)
        body = {"model": "m", "messages": question, "stream": True}
        with httpx.stream("POST", base + "/chat/completions", json=body) as r:
            calls = {}
            for line in r.iter_lines():
                if not line.startswith("data: {"):
                    continue
                for d in json.loads(line[6:])["choices"][0]["delta"].get("tool_calls") or []:
                    c = calls.setdefault(d["index"], {"id": "", "name": "", "arguments": ""})
                    c["id"] = d.get("id") or c["id"]
                    c["name"] = (d.get("function") or {}).get("name") or c["name"]
                    c["arguments"] += (d.get("function") or {}).get("arguments") or ""
        sent = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls.values()]
        results = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls.values()]
        history = question + [{"role": "assistant", "content": None, "tool_calls": sent}] + results
        httpx.post(base + "/chat/completions", json={"model": "m", "messages": history, "stream": True}).read()
"""


@pytest.mark.slow
def test_loop_grades_each_conversation_and_a_hang_stops_the_rest(tmp_path) -> None:
    from streamscope.conformance.run import run_loop

    chosen = select(CHAT, (), ["openai", "vllm", "llamacpp"])
    out = tmp_path / "out"
    plan = Plan(
        _script(tmp_path, "loop.py", HANGS_SECOND),
        samples_folder() or "",
        str(out),
        2,
        0,
        1,
        lambda g: None,
    )
    first, second, third = run_loop(chosen, plan)
    assert first.case.sample_name == "llamacpp" and first.verdict == PASS, (
        first.got,
        first.findings,
    )
    assert second.verdict == FAIL and second.got == "sent no request; hung: stopped after 2 s"
    assert third.verdict == FAIL and third.got == "not run: the client hung before this case"
    assert sorted(os.listdir(out)) == ["llamacpp.jsonl"]  # one recording per case begun


@pytest.mark.slow
def test_cli_output_folder_reused_only_with_force_and_never_a_file(tmp_path) -> None:
    command = [sys.executable, "-m", "streamscope.demo.agent", "helper"]
    args = ["conformance", "--speed", "0", "--only", "vllm", "-o", str(tmp_path / "out")]
    runner = CliRunner()
    assert runner.invoke(main, [*args, "--", *command]).exit_code == 0
    again = runner.invoke(main, [*args, "--", *command])
    assert (
        again.exit_code == 2
        and "already holds recordings of these cases (vllm.jsonl)" in again.stderr
    )
    assert "Traceback" not in again.output
    assert runner.invoke(main, [*args, "--force", "--", *command]).exit_code == 0
    (tmp_path / "afile").write_text("")
    got = runner.invoke(
        main, ["conformance", "--only", "vllm", "-o", str(tmp_path / "afile"), "--", "true"]
    )
    assert got.exit_code == 2 and "not a folder" in got.stderr


CRASHES = """
    import sys
    print("boom: sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6", file=sys.stderr)
    sys.exit(3)
"""

NO_STREAM = """
    import os, httpx
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    httpx.post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json=body)
"""


@pytest.mark.slow
def test_cli_a_client_that_cannot_be_graded_says_why_with_its_exit_masked(tmp_path) -> None:
    runner = CliRunner()
    crash = runner.invoke(
        main,
        [
            "conformance",
            "--json",
            "--only",
            "vllm",
            "-o",
            str(tmp_path / "a"),
            "--",
            *_script(tmp_path, "c.py", CRASHES),
        ],
    )
    assert crash.exit_code == 2
    assert "the client sent no request: it exited 3: boom: [REDACTED]" in crash.stderr
    assert json.loads(crash.stdout)["error"].startswith("the client sent no request")
    assert "A1b2C3d4" not in crash.output and not (tmp_path / "a").exists()
    plain = runner.invoke(
        main,
        [
            "conformance",
            "--only",
            "vllm",
            "-o",
            str(tmp_path / "b"),
            "--",
            *_script(tmp_path, "n.py", NO_STREAM),
        ],
    )
    assert plain.exit_code == 2 and "conformance grades clients that stream" in plain.stderr


def test_the_card_fits_its_width_and_the_json_is_whole() -> None:
    from streamscope.conformance.card import text, to_json
    from streamscope.conformance.grade import Grade, Ran

    case = select(CHAT, (), ["vllm"])[0]
    long = "x" * 300
    g = Grade(
        case,
        FAIL,
        long,
        long,
        ["naive"],
        ran=Ran(1, 0.5, "", "/tmp/v.jsonl"),
        link="/tmp/v.jsonl#1@3",
    )
    for width in (60, 80, 120):
        lines = text([g], width).splitlines()
        assert max(len(line) for line in lines) <= width
    assert "x" * 300 in "".join(text([g], 80).split())  # wrapped, not cut
    (graded,) = to_json([g], ["python", "a.py"], "/tmp")["dialects"][0]["grades"]
    assert graded["expected"] == graded["got"] == long
