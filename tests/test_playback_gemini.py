"""`streamscope serve`, `playback_transport` and the pytest plugin answering the real
google-genai client: `:streamGenerateContent` gets a recorded stream and
`:generateContent` a recorded response (matched by the path's model and the body, else
the next in order), and what nothing answers reads as a Google error."""

from __future__ import annotations

import asyncio
import contextlib
import os

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from streamscope.playback import playback_transport
from streamscope.playback.serve import ServeServer
from streamscope.providers import GOOGLE
from streamscope.record.transport import recording_transport
from streamscope.recording import RecordingIndex, iter_records
from streamscope.recording.format import End, Request

from . import gemini_agent
from .gemini_stream import MODEL, QUESTION, events_for
from .helpers import serve_command
from .test_pytest_plugin import run_pytest
from .upstream import Upstream as StandIn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENAI = os.path.join(ROOT, "recordings", "openai.jsonl")
MODES = ["server", "transport"]


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """The Gemini API agent, recorded in-process by recording_transport around its own
    httpx2 client: (the recording, what the agent said)."""
    path = tmp_path_factory.mktemp("gemini") / "gemini.jsonl"
    with StandIn() as up:
        transport = recording_transport(path)
        http = types.HttpOptions(
            base_url=up.url.removesuffix("/v1"), httpx_client=httpx2.Client(transport=transport)
        )
        said = gemini_agent.run(
            genai.Client(api_key="AIzaSy-playback-key", http_options=http), False
        )
        transport.close()
    return str(path), said


@contextlib.contextmanager
def provider(mode: str, paths, **options):
    """(a google-genai client, the selections) answered from `paths`."""
    paths = [paths] if isinstance(paths, str) else paths
    if mode == "server":
        with ServeServer(paths, **options) as server:
            http = types.HttpOptions(base_url=server.base_url_for(GOOGLE))
            yield genai.Client(api_key="k", http_options=http), server.app.selections
    else:
        transport = playback_transport(paths, **options)
        http = types.HttpOptions(
            base_url="http://provider.test",
            httpx_client=httpx2.Client(transport=transport),
            httpx_async_client=httpx2.AsyncClient(transport=transport),
        )
        try:
            yield genai.Client(api_key="k", http_options=http), transport.selections
        finally:
            transport.close()


@pytest.mark.slow
def test_the_recording_holds_the_in_process_recorders_exchanges(recording):
    path, _ = recording
    records = [r for _, r in iter_records(path)]
    requests = [r for r in records if isinstance(r, Request)]
    assert [r.url.rsplit(":", 1)[1] for r in requests] == [
        "streamGenerateContent?alt=sse",
        "streamGenerateContent?alt=sse",
        "generateContent",
    ]
    with open(path) as f:
        assert "AIzaSy-playback-key" not in f.read()
    assert [r.reason for r in records if isinstance(r, End)] == ["complete"] * 3
    with RecordingIndex.open(path) as index:
        first = b"".join(c.data_bytes for c in index.chunks(1))
    assert first == b"".join(events_for({}))


@pytest.mark.parametrize("mode", MODES)
def test_google_genai_gets_the_recorded_calls_and_answer(mode, recording):
    path, said = recording
    with provider(mode, path, strict=True) as (client, selections):
        assert gemini_agent.run(client, False) == said
        assert [(s.entry.exchange, s.how) for s in selections] == [
            (1, "body"),
            (2, "body"),
            (3, "body"),
        ]


@pytest.mark.parametrize("mode", MODES)
def test_the_async_client_is_answered_too(mode, recording):
    path, said = recording

    async def calls(client: genai.Client) -> list[dict]:
        stream = await client.aio.models.generate_content_stream(
            model=MODEL, contents=QUESTION, config=gemini_agent.config(False)
        )
        parts = [part async for chunk in stream for part in chunk.candidates[0].content.parts]
        return gemini_agent.assemble(parts)

    with provider(mode, path) as (client, _):
        assert asyncio.run(calls(client)) == said["calls"]


@pytest.mark.parametrize("mode", MODES)
def test_a_request_nothing_recorded_answers_is_a_google_error(mode, recording):
    path, _ = recording
    with provider(mode, path, strict=True) as (client, _):
        with pytest.raises(errors.ClientError) as other_question:
            client.models.generate_content_stream(
                model=MODEL, contents="And in Rome?", config=gemini_agent.config(False)
            ).__next__()
        with pytest.raises(errors.ClientError) as other_model:
            client.models.generate_content(
                model="gemini-2.5-pro", contents=QUESTION, config=gemini_agent.config(False)
            )
        with pytest.raises(errors.ClientError) as not_served:
            client.models.count_tokens(model=MODEL, contents=QUESTION)
    who = "serve" if mode == "server" else "playback"
    error = other_question.value
    assert error.code == 400 and error.status == "INVALID_ARGUMENT"
    assert error.message.startswith(f"streamscope {who}: no recorded exchange matches this request")
    assert (
        "contents differ from gemini.jsonl exchange 1 at content 1 (role user), parts[0].text"
        in (error.message)
    )
    assert 'model differs from gemini.jsonl exchange 3: the request has "gemini-2.5-pro"' in (
        other_model.value.message
    )
    assert not_served.value.code == 404 and not_served.value.status == "NOT_FOUND"
    assert "only POST ...:streamGenerateContent and POST ...:generateContent are served" in (
        not_served.value.message
    )


def test_a_stream_request_is_not_answered_by_a_whole_response(tmp_path, recording):
    path, _ = recording
    with provider("transport", path, exchange=3) as (client, _):
        with pytest.raises(errors.ClientError) as e:
            next(iter(client.models.generate_content_stream(model=MODEL, contents=QUESTION)))
        assert client.models.generate_content(model=MODEL, contents=QUESTION).function_calls
    assert "the request calls :streamGenerateContent and the files hold only :generateContent" in (
        e.value.message
    )


def test_a_gemini_request_is_answered_only_by_gemini_exchanges(recording):
    path, _ = recording
    with provider("transport", [OPENAI, path]) as (client, selections):
        assert client.models.generate_content(model=MODEL, contents=QUESTION).function_calls
    assert os.path.basename(selections[0].entry.path) == "gemini.jsonl"
    with (
        provider("transport", OPENAI) as (client, _),
        pytest.raises(errors.ClientError, match="the files hold no Gemini exchange"),
    ):
        client.models.generate_content(model=MODEL, contents=QUESTION)


@pytest.mark.slow
def test_serve_names_the_base_url_a_google_client_gets(recording):
    path, _ = recording
    with serve_command(path) as (base, said):
        client = genai.Client(
            api_key="k", http_options=types.HttpOptions(base_url=base.removesuffix("/v1"))
        )
        assert client.models.generate_content(model=MODEL, contents=QUESTION).function_calls
    err = "\n".join(said)
    assert f"a Gemini or Vertex AI client's base URL: {base.removesuffix('/v1')}" in err
    assert f"POST /v1/models/{MODEL}:generateContent -> gemini.jsonl exchange 3" in err


# -- the pytest plugin --------------------------------------------------------------------

PLUGIN_TESTS = f"""
import asyncio
import os

RECORDING = os.environ["GEMINI_RECORDING"]
QUESTION = {QUESTION!r}


def test_gemini_fixture(streamscope_gemini_playback):
    client = streamscope_gemini_playback(RECORDING)
    calls = [
        (p.function_call.name, p.function_call.args)
        for chunk in client.models.generate_content_stream(model={MODEL!r}, contents=QUESTION)
        for p in chunk.candidates[0].content.parts
        if p.function_call
    ]
    assert [args["city"] for _, args in calls] == ["Paris", "London"]


def test_gemini_fixture_async_and_vertex(streamscope_gemini_playback):
    client = streamscope_gemini_playback(RECORDING, vertexai=True)

    async def whole():
        return await client.aio.models.generate_content(model={MODEL!r}, contents=QUESTION)

    assert len(asyncio.run(whole()).function_calls) == 2
"""

RECORDED_TESTS = f"""
import os

from google import genai
from google.genai import types

URL = os.environ["STANDIN_URL"]


def test_google_genai():
    client = genai.Client(api_key="AIzaSy-plugin-secret-3", http_options=types.HttpOptions(base_url=URL))
    assert list(client.models.generate_content_stream(model={MODEL!r}, contents="weather?"))
"""


@pytest.mark.slow
def test_the_gemini_fixture_needs_only_streamscope_installed(tmp_path, recording):
    path, _ = recording
    (tmp_path / "test_gemini.py").write_text(PLUGIN_TESTS)
    done = run_pytest(tmp_path, env={"GEMINI_RECORDING": path})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


@pytest.mark.slow
def test_record_option_records_gemini_traffic_too(tmp_path):
    from streamscope.pytest_plugin import cassette_name

    (tmp_path / "test_gemini.py").write_text(RECORDED_TESTS)
    cassettes = tmp_path / "cassettes"
    with StandIn() as up:
        env = {"STANDIN_URL": up.url.removesuffix("/v1")}
        done = run_pytest(tmp_path, f"--streamscope-record={cassettes}", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (name,) = os.listdir(cassettes)
    assert name == cassette_name("test_gemini.py::test_google_genai")
    path = cassettes / name
    assert "AIzaSy-plugin-secret-3" not in path.read_text()
    assert [r.reason for _, r in iter_records(path) if isinstance(r, End)] == ["complete"]
    with RecordingIndex.open(path) as index:
        assert b"".join(c.data_bytes for c in index.chunks(1)) == b"".join(events_for({}))
