"""The recorder's Google sides, as a user meets them: `streamscope record -- python -m
tests.gemini_agent` with an agent on the real google-genai client (the Gemini API, and
Vertex AI streaming its function call arguments), then the recording served back to the
same agent by `serve` and `playback_transport`."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from streamscope.analysis import analyze
from streamscope.playback import playback_transport
from streamscope.playback.serve import ServeServer
from streamscope.providers import GOOGLE, vertex_origin
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter, iter_records
from streamscope.recording.format import REDACTED, Request

from . import gemini_agent
from .gemini_stream import CALLS, CUT_AFTER, MODEL, QUESTION, SIGNATURE, VERTEX_CALL, events_for
from .test_recorder import ends, exchange_bytes, streamscope
from .upstream import Upstream as StandIn

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "AIzaSyD-recorder-secret-0123456789abc"  # key-shaped, as Google's keys are
TOKEN = "ya29.a0-recorder-access-token-5f1"
MODES = ["gemini", "vertex"]


def origin(upstream) -> str:
    """The stand-in as a Google base URL: the SDK appends /v1beta/models/... itself."""
    return upstream.url.removesuffix("/v1")


def requests(path) -> list[Request]:
    return [r for _, r in iter_records(path) if isinstance(r, Request)]


def expected_calls(mode: str) -> list[dict]:
    if mode == "vertex":
        return [{**VERTEX_CALL, "signature": SIGNATURE}]
    first, second = CALLS
    return [{**first, "signature": SIGNATURE}, {**second, "signature": ""}]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, upstream):
    """Each agent recorded once: mode -> (the recording, what the agent said, the
    subprocess, the upstream's bodies and what it served, from this run only)."""
    out = {}
    for mode in MODES:
        folder = tmp_path_factory.mktemp(mode)
        path = folder / "run.jsonl"
        seen = len(upstream.served), len(upstream.headers)
        done = streamscope(
            "record",
            "--upstream",
            upstream.url,
            "--gemini-upstream",
            origin(upstream),
            "--vertex-upstream",
            origin(upstream),
            "-o",
            str(path),
            "--",
            sys.executable,
            "-m",
            "tests.gemini_agent",
            mode,
            env={"PYTHONPATH": ROOT, "GEMINI_API_KEY": KEY, "AGENT_ACCESS_TOKEN": TOKEN},
            cwd=folder,
        )
        assert done.returncode == 0, done.stderr
        # (the upstream is shared: a stream an earlier test left open may end meanwhile,
        # and is not this run's)
        served = [x for x in upstream.served[seen[0] :] if x[0].startswith("gemini-")]
        out[mode] = (path, json.loads(done.stdout), done, served, upstream.headers[seen[1] :])
    return out


@pytest.mark.parametrize("mode", MODES)
def test_record_a_gemini_agent_end_to_end(recorded, upstream, mode):
    path, said, done, served, sent = recorded[mode]
    assert said["calls"] == expected_calls(mode) and said["finish"] == "STOP"
    assert said["answer"].startswith("It is 14 °C") and len(said["whole_calls"]) == 2
    variable = "GOOGLE_VERTEX_BASE_URL" if mode == "vertex" else "GOOGLE_GEMINI_BASE_URL"
    assert f"\n  {variable}=http://127.0.0.1:" in done.stderr
    assert "3 exchanges, 2 streams recorded" in done.stderr
    assert "dialect-unknown" not in done.stderr and "contract broken" not in done.stderr

    first, second, whole = requests(path)
    # recorded as sent upstream: the proxy's mount is not part of it
    base = origin(upstream)
    if mode == "vertex":
        base += "/v1beta1/projects/streamscope-test/locations/us-central1/publishers/google"
        model = "gemini-2.5-pro"
    else:
        base += "/v1"
        model = MODEL
    stream_url = f"{base}/models/{model}:streamGenerateContent?alt=sse"
    assert [first.url, second.url, whole.url] == [
        stream_url,
        stream_url,
        f"{base}/models/{model}:generateContent",
    ]
    # what the agent sent back: its calls, the signature on the part that carried it
    # (google-genai sends the bytes back in base64url, where Google sent base64)
    said_back = second.json_body()["contents"][1]["parts"]
    calls = [p for p in said_back if "functionCall" in p]
    signature = base64.urlsafe_b64decode(calls[0]["thoughtSignature"])
    assert signature == base64.b64decode(SIGNATURE)
    assert [c["functionCall"]["args"] for c in calls] == [c["args"] for c in said["calls"]]
    # every byte the upstream sent is the recording's, read by read as it came
    assert [exchange_bytes(path, ex) for ex in (1, 2, 3)] == [body for _, _, body in served]
    assert {e.reason for e in ends(path).values()} == {"complete"}
    # the key (or the access token) never reaches the file, and still reaches the upstream
    text = path.read_text()
    assert KEY not in text and TOKEN not in text
    headers = {k.lower(): v for k, v in first.headers}
    if mode == "vertex":
        assert headers["authorization"] == "Bearer [REDACTED]"
        assert sent[-1]["authorization"] == f"Bearer {TOKEN}"
    else:
        assert headers["x-goog-api-key"] == REDACTED
        assert sent[-1]["x-goog-api-key"] == KEY
    # the client's name is no secret: recorded as sent
    assert headers["x-goog-api-client"].startswith("google-genai-sdk/")

    # what a user does next: inspect it
    doc = json.loads(streamscope("inspect", "--json", str(path)).stdout)
    calls, answer = doc["streams"]  # the third exchange is no stream
    assert {s["dialect"] for s in doc["streams"]} == {"gemini"}
    assert [(c["name"], json.loads(c["arguments"])) for c in calls["tool_calls"]] == [
        (c["name"], c["args"]) for c in said["calls"]
    ]
    assert calls["tool_calls"][0]["thought_signature"] == SIGNATURE
    assert calls["ended"] == answer["ended"] == "done" and calls["finish_reason"] == "STOP"
    assert not answer["tool_calls"] and doc["contract"] == []  # every call came back whole


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio  # anyio's pytest plugin runs the replay's Pilot
@pytest.mark.parametrize("mode", MODES)
async def test_the_recording_replays_and_exports_as_a_user_runs_them(recorded, mode, tmp_path):
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.screens import StreamScreen
    from streamscope.tui.widgets.call_table import CallTable

    from .helpers import passes
    from .test_tui import text

    path, said, *_ = recorded[mode]
    # replay: the stream opens on its calls, by call order, with the signature
    app = ReplayApp(str(path), exchange=1)
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(200):
            if isinstance(app.screen, StreamScreen):
                break
            await pilot.pause(0.05)
        await pilot.press("end")
        await pilot.pause()
        table = text(app.screen.query_one("#robust", CallTable))
        for call in said["calls"]:
            assert json.dumps(call["name"]) in table
        assert " sig " in table
    # export: the stream as SSE, shrunk, and as a pytest module that runs through
    # google-genai and passes
    for fmt, extra in (("sse", []), ("recording", ["--minimal"]), ("pytest", [])):
        out = tmp_path / f"{mode}-{fmt}.out"
        done = streamscope("export", "--format", fmt, *extra, str(path), "-o", str(out))
        assert done.returncode == 0, done.stderr
    module = tmp_path / f"test_{mode}_export.py"
    (tmp_path / f"{mode}-pytest.out").rename(module)
    passes(module)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["serve", "transport"])
def test_the_recording_replays_the_same_calls_to_google_genai(recorded, mode, how):
    path, said, *_ = recorded[mode]
    vertex = mode == "vertex"
    if how == "serve":
        with ServeServer([str(path)], strict=True) as server:
            base = server.base_url_for(GOOGLE)
            client = (  # as the agent made its client
                gemini_agent.vertex_client("replayed", base)
                if vertex
                else gemini_agent.gemini_client("replayed", base)
            )
            replayed = gemini_agent.run(client, vertex)
            selections = server.app.selections
    else:  # no server: the transport in the client's own httpx2 client
        transport = playback_transport(str(path), strict=True)
        http = types.HttpOptions(
            base_url="http://replay.invalid", httpx_client=httpx2.Client(transport=transport)
        )
        # Vertex AI's express mode: its path names no project, the same model answers
        replayed = gemini_agent.run(
            genai.Client(vertexai=vertex, api_key="replayed", http_options=http), vertex
        )
        selections = transport.selections
        transport.close()
    assert replayed == said
    assert [(s.entry.exchange, s.how) for s in selections] == [
        (1, "body"),
        (2, "body"),
        (3, "body"),
    ]


def test_a_cut_gemini_stream_says_so_and_a_whole_one_is_complete(tmp_path, upstream):
    path = tmp_path / "cut.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(upstream.url),
            writer,
            sides={"gemini": Upstream.parse(origin(upstream)), "vertex": None},
        )
        server.start()
        client = gemini_agent.gemini_client(KEY, server.base_url_of("gemini"))
        try:
            with pytest.raises(httpx2.RemoteProtocolError):  # the SDK passes the cut on
                for _ in client.models.generate_content_stream(
                    model=MODEL + "-cut", contents=QUESTION
                ):
                    pass
            assert list(client.models.generate_content_stream(model=MODEL, contents=QUESTION))
        finally:
            server.stop()
    cut, whole = ends(path)[1], ends(path)[2]
    assert cut.reason == "upstream-error" and whole.reason == "complete"
    assert exchange_bytes(path, 1) == b"".join(events_for({})[:CUT_AFTER])
    # and the analysis reads the first as cut, the second as whole
    first, second = analyze(path).streams
    assert first.ended == "error" and "stream-truncated" in {a.kind for a in first.anomalies}
    assert second.ended == "done" and len(second.tool_calls) == 2


@pytest.fixture(scope="module")
def holding_proxy(tmp_path_factory):
    """A proxy in front of a provider that holds each body open for 0.5 s after its last
    event: a client that leaves meanwhile leaves a stream it had whole."""
    path = tmp_path_factory.mktemp("gemini") / "leave.jsonl"
    with StandIn(pace=0.01, tail_pause=0.5) as up, RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(up.url),
            writer,
            timeout=30,
            sides={"gemini": Upstream.parse(origin(up)), "vertex": None},
        )
        server.start()
        server.path = path
        yield server
        server.stop()


@pytest.mark.parametrize("leave_after, reason", [(2, "complete"), (1, "client-closed")])
def test_a_client_leaving_after_the_finish_reason_ended_a_complete_stream(
    holding_proxy, leave_after, reason
):
    from .test_recorder_responses import end_of

    exchange = holding_proxy.app.exchanges + 1
    url = holding_proxy.base_url_of("gemini") + f"/v1beta/models/{MODEL}:streamGenerateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}]}
    events = 0
    with (
        httpx2.Client() as client,
        client.stream(
            "POST", url, params={"alt": "sse"}, json=body, headers={"x-goog-api-key": KEY}
        ) as response,
    ):
        for line in response.iter_lines():
            events += line.startswith("data:")
            if events == leave_after:
                break  # leaving the `with` closes the response
    assert end_of(holding_proxy.path, exchange).reason == reason


@pytest.mark.parametrize(
    "path, origin_",
    [
        (
            "/v1/projects/p/locations/us-central1/publishers/google/models/m:x",
            "https://us-central1-aiplatform.googleapis.com",
        ),
        (
            "/v1beta1/projects/p/locations/europe-west4/endpoints/e:x",
            "https://europe-west4-aiplatform.googleapis.com",
        ),
        (
            "/v1/projects/p/locations/global/publishers/google/models/m:x",
            "https://aiplatform.googleapis.com",
        ),
        (
            "/v1beta1/publishers/google/models/m:streamGenerateContent",
            "https://aiplatform.googleapis.com",
        ),
        (
            "/v1/projects/p/locations/us/publishers/google/models/m:x",
            "https://aiplatform.us.rep.googleapis.com",
        ),
        (
            "/v1/projects/p/locations/eu/publishers/google/models/m:x",
            "https://aiplatform.eu.rep.googleapis.com",
        ),
    ],
)
def test_a_vertex_request_goes_to_the_region_its_path_names(path, origin_):
    assert vertex_origin(path) == origin_


@pytest.mark.parametrize(
    "location", ["evil.example", "x@evil.example", "US-CENTRAL1", "us_central1", "-x", "x-", ""]
)
def test_a_location_that_is_no_region_never_reaches_an_origin(location):
    with pytest.raises(ValueError, match="is no Vertex AI region"):
        vertex_origin(f"/v1/projects/p/locations/{location}/publishers/google/models/m:x")


def test_the_vertex_side_follows_each_requests_region(tmp_path, upstream, monkeypatch):
    """Without --vertex-upstream, the Vertex AI side asks vertex_origin where each request
    goes (here it is answered by the stand-in, and the origin asked for is kept)."""
    asked: list[str] = []

    def local(path: str, headers=None) -> str:
        asked.append(vertex_origin(path))
        return origin(upstream)

    path = tmp_path / "regions.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(upstream.url),
            writer,
            sides={"gemini": Upstream.parse("http://127.0.0.1:9"), "vertex": None},
        )
        route = server.app.route("vertex")
        monkeypatch.setattr(route, "side", dataclasses.replace(route.side, origin_of=local))
        server.start()
        try:
            for location in ("europe-west4", "global"):
                client = gemini_agent.vertex_client(TOKEN, server.base_url_of("vertex"), location)
                assert client.models.generate_content(model=MODEL, contents=QUESTION).function_calls
        finally:
            server.stop()
    assert asked == [
        "https://europe-west4-aiplatform.googleapis.com",
        "https://aiplatform.googleapis.com",
    ]
    assert [r.url.split("/v1beta1/")[1].split("/publishers")[0] for r in requests(path)] == [
        f"projects/{gemini_agent.PROJECT}/locations/europe-west4",
        f"projects/{gemini_agent.PROJECT}/locations/global",
    ]


def test_a_bad_region_and_an_unreachable_upstream_read_as_google_errors(tmp_path):
    with RecordingWriter(tmp_path / "r.jsonl") as writer:
        server = ProxyServer(
            Upstream.parse("http://127.0.0.1:9/v1"),
            writer,
            sides={"gemini": Upstream.parse("http://127.0.0.1:9"), "vertex": None},
        )
        server.start()
        gemini = gemini_agent.gemini_client(KEY, server.base_url_of("gemini"))
        vertex = gemini_agent.vertex_client(TOKEN, server.base_url_of("vertex"), "Not_A_Region")
        try:
            with pytest.raises(errors.ServerError) as unreachable:
                gemini.models.generate_content(model=MODEL, contents=QUESTION)
            with pytest.raises(errors.ClientError) as bad:
                vertex.models.generate_content(model=MODEL, contents=QUESTION)
        finally:
            server.stop()
    assert unreachable.value.code == 502 and unreachable.value.status == "UNAVAILABLE"
    assert unreachable.value.message.startswith("streamscope: upstream unreachable: ")
    assert bad.value.code == 400 and bad.value.status == "INVALID_ARGUMENT"
    assert "'Not_A_Region' in the path is no Vertex AI region" in bad.value.message
    assert {e.reason for e in ends(tmp_path / "r.jsonl").values()} == {"upstream-error"}


def _clean_env(**set_: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOOGLE_")}
    return {**env, **set_}


def test_proxy_prints_the_google_base_urls_and_record_takes_google_env_defaults(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "proxy", "-o", str(tmp_path / "p.jsonl")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_clean_env(),
    )
    try:
        lines = [proc.stdout.readline().strip() for _ in range(4)]
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    port = lines[0].split(":")[2].split("/")[0]
    assert lines[2:] == [f"http://127.0.0.1:{port}/gemini", f"http://127.0.0.1:{port}/vertex"]
    assert (
        f"\n  GOOGLE_GEMINI_BASE_URL={lines[2]} -> https://generativelanguage.googleapis.com\n"
        in err
    )
    assert (
        f"\n  GOOGLE_VERTEX_BASE_URL={lines[3]} -> Vertex AI (the region each request names)\n"
        in err
    )

    code = "import os; print(os.environ['GOOGLE_GEMINI_BASE_URL']); print(os.environ['GOOGLE_VERTEX_BASE_URL'])"
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "record", "-o", str(tmp_path / "r.jsonl")]
        + ["--", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=_clean_env(
            GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:9/team",
            GOOGLE_VERTEX_BASE_URL="http://127.0.0.1:9/vertex-gw",
        ),
    )
    assert done.returncode == 0, done.stderr
    gemini_base, vertex_base = done.stdout.split()
    assert gemini_base.endswith("/gemini/team") and vertex_base.endswith("/vertex/vertex-gw")
    assert f"\n  GOOGLE_GEMINI_BASE_URL={gemini_base} -> http://127.0.0.1:9/team\n" in done.stderr
    assert f"\n  GOOGLE_VERTEX_BASE_URL={vertex_base} -> http://127.0.0.1:9/vertex-gw\n" in (
        done.stderr
    )


@pytest.mark.parametrize("option", ["--gemini-upstream", "--vertex-upstream"])
@pytest.mark.parametrize(
    "url",
    ["ftp://a:s3cr3t-pw@h/", "http://a:s3cr3t-pw@h:port/", "generativelanguage.googleapis.com"],
)
def test_a_bad_google_upstream_is_one_line_and_exit_2(option, url):
    done = streamscope("record", option, url, "--", "true")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    name = option.removeprefix("--").replace("-", " ")
    assert done.stderr.startswith(f"streamscope: {name}")
    assert "s3cr3t-pw" not in done.stderr
