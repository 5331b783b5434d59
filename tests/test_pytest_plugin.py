"""The pytest plugin, as a user meets it: a test file with no conftest, in another pytest
run, where only the installed streamscope (its `pytest11` entry point) provides it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from streamscope.analysis import analyze
from streamscope.pytest_plugin import cassette_name
from streamscope.recording import RecordingIndex, iter_records
from streamscope.recording.format import End, Request

from .anthropic_stream import MODEL, QUESTION, tool_use_events
from .test_playback_responses import write_recording
from .upstream import Upstream as StandIn

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENAI = os.path.join(ROOT, "recordings", "openai.jsonl")


def reads(path) -> bytes:
    with RecordingIndex.open(path) as index:
        return b"".join(c.data_bytes for c in index.chunks(1))


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def run_pytest(
    folder, *args: str, env: dict | None = None, autoload: bool = False
) -> subprocess.CompletedProcess:
    """pytest in `folder` with streamscope's plugin loaded by its entry point's name
    (`-p streamscope`) and no other: each installed plugin autoloaded costs this
    interpreter over a second (the Textual snapshot one). `autoload`: every installed
    plugin loaded, as a user's pytest does (test_the_playback_fixtures_need_only_
    streamscope_installed: installing streamscope is enough)."""
    plugins = [] if autoload else ["-p", "streamscope"]
    only = {} if autoload else {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugins, "-q", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **only, **(env or {})},
    )


PLAYBACK_TESTS = f"""
import asyncio

RECORDING = {OPENAI!r}


def test_sync(streamscope_playback):
    client = streamscope_playback(RECORDING)
    stream = client.chat.completions.create(
        model="gpt-4o", messages=[{{"role": "user", "content": "hi"}}], stream=True
    )
    calls = [d.function.name for c in stream for d in (c.choices[0].delta.tool_calls or [])
             if c.choices and d.function and d.function.name]
    assert calls == ["get_weather", "get_local_time"]


def test_async(streamscope_async_playback):
    async def run():
        client = streamscope_async_playback(RECORDING, speed=0)
        stream = await client.chat.completions.create(
            model="gpt-4o", messages=[{{"role": "user", "content": "hi"}}], stream=True
        )
        return [c async for c in stream]

    assert len(asyncio.run(run())) > 3


def test_responses(streamscope_playback):
    client = streamscope_playback(RESPONSES)
    with client.responses.stream(model="gpt-4.1", input="weather?") as stream:
        response = stream.get_final_response()
    assert [item.name for item in response.output] == ["get_weather"]
"""


def test_the_playback_fixtures_need_only_streamscope_installed(tmp_path):
    responses = write_recording(str(tmp_path / "responses.jsonl"))
    tests = PLAYBACK_TESTS + f"RESPONSES = {responses!r}\n"
    (tmp_path / "test_playback.py").write_text(tests)
    done = run_pytest(tmp_path, autoload=True)  # no -p: found as installed
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


RECORDED_TESTS = """
import asyncio
import os

import httpx2
import openai

URL = os.environ["STANDIN_URL"]


def ask(question):
    client = openai.OpenAI(api_key="sk-plugin-secret-1", base_url=URL, max_retries=0)
    with client:
        return list(client.chat.completions.create(
            model="alibaba-empty-id", messages=[{"role": "user", "content": question}],
            stream=True,
        ))


def test_one():
    assert ask("weather?")


def test_two_async():
    async def run():
        async with openai.AsyncOpenAI(api_key="sk-plugin-secret-1", base_url=URL) as client:
            stream = await client.chat.completions.create(
                model="alibaba-empty-id", messages=[{"role": "user", "content": "async?"}],
                stream=True,
            )
            return [chunk async for chunk in stream]

    assert asyncio.run(run())


def test_no_openai_traffic():
    assert httpx2.post(URL + "/chat/completions", json={"model": "json"}).status_code == 200
"""


@pytest.fixture(scope="module")
def upstream():
    with StandIn() as up:
        yield up


def test_record_option_writes_one_cassette_per_test(tmp_path, upstream):
    (tmp_path / "test_agent.py").write_text(RECORDED_TESTS)
    cassettes = tmp_path / "cassettes"
    done = run_pytest(
        tmp_path, f"--streamscope-record={cassettes}", env={"STANDIN_URL": upstream.url}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = sorted(os.listdir(cassettes))
    assert names == [
        cassette_name("test_agent.py::test_one"),
        cassette_name("test_agent.py::test_two_async"),
    ]  # the test with no openai traffic has none
    for name in names:
        path = cassettes / name
        (req,) = [r for _, r in iter_records(path) if isinstance(r, Request)]
        assert req.json_body()["model"] == "alibaba-empty-id"
        assert "sk-plugin-secret-1" not in path.read_text()
        (stream,) = analyze(path).streams
        assert stream.ended == "done" and stream.tool_calls
    # one line per recorded test, saying what was found
    summary = done.stdout.split("streamscope recordings", 1)[1]
    lines = [line for line in summary.splitlines() if line.startswith("test_agent.py::")]
    assert len(lines) == 2
    assert all(
        "1 stream, " in line and "warning id-empty-overwrite ×4" in line for line in lines
    ), lines


def test_no_option_no_recording(tmp_path, upstream):
    (tmp_path / "test_agent.py").write_text(RECORDED_TESTS)
    done = run_pytest(tmp_path, "-k", "one", env={"STANDIN_URL": upstream.url})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "streamscope recordings" not in done.stdout
    assert not [f for _, _, files in os.walk(tmp_path) for f in files if f.endswith(".jsonl")]


ANTHROPIC_TESTS = f"""
import os

import anthropic
import httpx2

URL = os.environ["STANDIN_URL"]  # an Anthropic base URL: clients append /v1/messages
ASK = {{"model": {MODEL!r}, "max_tokens": 64, "messages": {QUESTION!r}}}


def test_the_anthropic_sdk():
    with anthropic.Anthropic(api_key="sk-ant-plugin-secret-2", base_url=URL, max_retries=0) as c:
        with c.messages.stream(**ASK) as stream:
            assert stream.get_final_message().stop_reason == "tool_use"


def test_any_anthropic_client():  # no SDK: anthropic-version, as every client sends it
    headers = {{"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-plugin-secret-2"}}
    r = httpx2.post(URL + "/v1/messages", json={{**ASK, "stream": True}}, headers=headers)
    assert r.status_code == 200


def test_other_traffic():
    assert httpx2.post(URL + "/v1/chat/completions", json={{"model": "json"}}).status_code == 200
"""


def test_record_option_records_anthropic_traffic_too(tmp_path, upstream):
    (tmp_path / "test_claude.py").write_text(ANTHROPIC_TESTS)
    cassettes = tmp_path / "cassettes"
    env = {"STANDIN_URL": upstream.url.removesuffix("/v1")}
    done = run_pytest(tmp_path, f"--streamscope-record={cassettes}", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = [
        "test_claude.py::test_the_anthropic_sdk",
        "test_claude.py::test_any_anthropic_client",
    ]
    assert sorted(os.listdir(cassettes)) == sorted(map(cassette_name, recorded))
    for nodeid in recorded:
        path = cassettes / cassette_name(nodeid)
        (req,) = [r for _, r in iter_records(path) if isinstance(r, Request)]
        assert req.url == upstream.url + "/messages"
        assert "sk-ant-plugin-secret-2" not in path.read_text()
        assert [r.reason for _, r in iter_records(path) if isinstance(r, End)] == ["complete"]
        assert reads(path) == b"".join(tool_use_events())
    # one line per recorded test (what it found is the analysis' business)
    summary = done.stdout.split("streamscope recordings", 1)[1]
    lines = [line for line in summary.splitlines() if line.startswith("test_claude.py::")]
    assert [line.split(": ", 1)[0] for line in lines] == recorded
    assert all(line.endswith(cassette_name(n)) for line, n in zip(lines, recorded, strict=True))


# Ids the old names folded into one file: punctuation that became "_", and two long ids
# that differed only past the 200th character; and a name too long for a file system.
COLLIDING = ["a b", "a?b", "a_b", "a:b", "a/b", "a\\\\b", "a*b", "a|b", "a<b", "a>b", 'a"b']
COLLIDING += ["a;b", "a#b"]
COLLIDING_TESTS = f"""
import os

import openai
import pytest

URL = os.environ["STANDIN_URL"]
LONG = "x" * 250


def ask():
    with openai.OpenAI(api_key="sk-plugin-secret-3", base_url=URL, max_retries=0) as client:
        assert client.chat.completions.create(model="json", messages=[])


@pytest.mark.parametrize("case", {COLLIDING!r}, ids=lambda c: c)
def test_ids(case):
    ask()


@pytest.mark.parametrize("case", [LONG + "1", LONG + "2"], ids=lambda c: c)
def test_long(case):
    ask()


def test_{"é" * 150}():
    ask()
"""


def test_every_test_gets_its_own_short_portable_cassette(tmp_path, upstream):
    (tmp_path / "test_names.py").write_text(COLLIDING_TESTS, encoding="utf-8")
    cassettes = tmp_path / "cassettes" / "deep"
    umask = os.umask(0o022)  # the usual one, which leaves files readable by all
    try:
        done = run_pytest(
            tmp_path, f"--streamscope-record={cassettes}", env={"STANDIN_URL": upstream.url}
        )
    finally:
        os.umask(umask)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout
    names = os.listdir(cassettes)
    assert len(names) == 16  # one per test: none overwrote another
    # private: a cassette holds whole conversations (folders made by the plugin too)
    assert mode(cassettes) == mode(cassettes.parent) == 0o700
    for name in names:
        assert mode(cassettes / name) == 0o600
        assert len(name) <= 80 and name.isascii() and name.endswith(".jsonl")
        assert not set(name) & set(' ?:*|<>"\\/'), name
    # each test's summary line names its own cassette, by the name cassette_name gives
    summary = done.stdout.split("streamscope recordings", 1)[1].splitlines()
    named = {line.rsplit(" -> ", 1)[1].rsplit(os.sep, 1)[-1] for line in summary if " -> " in line}
    assert named == set(names)


def test_the_same_id_gets_the_same_name_on_every_run():
    from streamscope.pytest_plugin import cassette_name as name

    ids = ["t.py::test[a b]", "t.py::test[a?b]", "t.py::test[a_b]"]
    assert [name(i) for i in ids] == [
        "t.py__test[a_b]-d669de6a2740.jsonl",
        "t.py__test[a_b]-fa88c5661dae.jsonl",
        "t.py__test[a_b]-2240992d3e68.jsonl",
    ]  # fixed: a cassette recorded today is found by a later streamscope


def test_a_cassette_is_found_by_its_name_or_its_old_one_or_the_error_says_where(tmp_path):
    from streamscope.pytest_plugin import cassette_path

    nodeid = "tests/test_a.py::test_b[x]"
    with pytest.raises(FileNotFoundError) as failed:
        cassette_path(tmp_path, nodeid)
    said = str(failed.value)
    assert str(tmp_path / cassette_name(nodeid)) in said
    assert str(tmp_path / "tests.test_a.py__test_b[x].jsonl") in said  # the old name too
    (tmp_path / "tests.test_a.py__test_b[x].jsonl").write_text("")
    assert cassette_path(tmp_path, nodeid) == str(tmp_path / "tests.test_a.py__test_b[x].jsonl")
    (tmp_path / cassette_name(nodeid)).write_text("")
    assert cassette_path(tmp_path, nodeid) == str(tmp_path / cassette_name(nodeid))
