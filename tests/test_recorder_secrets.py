"""Every kind of secret a client or an upstream URL carries stays out of what is written."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import anthropic
import httpx
import pytest

from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter, iter_records
from streamscope.recording.format import REDACTED, Request

from .anthropic_stream import MODEL, QUESTION

# One distinct value per kind, so a leak names its kind.
HEADERS = {
    "Authorization": "Bearer s01-bearer",
    "Authentication": "Bearer s02-authentication",
    "OpenAI-Project": "s03-project",
    "OpenAI-Organization": "s04-organization",
    "api-key": "s05-api-key",
    "X-Api-Key": "s06-x-api-key",
    "x-goog-api-key": "s07-goog",
    "Ocp-Apim-Subscription-Key": "s08-azure",
    "X-Auth-Token": "s09-auth-token",
    "X-Amz-Security-Token": "s10-amz",
    "X-Client-Secret": "s11-client-secret",
    "Cookie": "session=s12-cookie",
    "Proxy-Authorization": "Basic s13-proxy",
    "Private-Token": "s14-gitlab",
    "X-Session-Token": "s15-session-token",  # a session's token: a credential
    "Session-Key": "s39-session-key",
    "AWS_SESSION_TOKEN": "s40-aws-session-token",
    "X-Password": "s16-password",
    "User-Agent": "agent/1 sk-s17keyshapedinsideanyheader",
    "X-Pwd": "s31-x-pwd",
    "X-Api-Pass": "s32-x-api-pass",
}
QUERY = (
    "api_key=s18-api-key&api%5Fkey=s19-percent-name&%61ccess_token=s20-access"
    "&X-Amz-Signature=s21-sig&X-Amz-Credential=s22-cred&key=s23-key"
    "&q=sk-s24keyshapedvalue&auth=s25-auth&pwd=s33-pwd&pass=s34-pass&code=s35-code"
    "&session_token=s41-session-token&ok=kept"
)
# Identifiers a client names its work by (Codex's, Claude Code's): not credentials, kept
# so a recording can be matched to the agent's own session logs.
SESSION = "0195f3a8-6c2e-7d41-9b0a-3f5e8c1d2a47"
IDS = {
    "session_id": SESSION,
    "thread-id": "0195f3a8-thread-7d41-9b0a",
    "conversation_id": "conv-0195f3a8-7d41",
    "x-claude-code-session-id": "6a1f0c2e-claude-code-session",
    "x-session-affinity": "ses_0195f3a8opencode-affinity",
    "Idempotency-Key": "stainless-python-retry-0195f3a8",
}
USER_ID = f"user_{'ab' * 32}_account_0195f3a8-acct_session_{SESSION}"
KEPT_QUERY = f"session-id={SESSION}&prompt_cache_key={SESSION}"
PASSWORD = "s26-url-password"
SECRETS = [v.split()[-1].split("=")[-1] for v in HEADERS.values()]
SECRETS += [p.split("=")[1] for p in QUERY.split("&")[:-1]] + [PASSWORD, "alice:" + PASSWORD]


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.mark.slow
def test_no_secret_reaches_the_recording_the_logs_or_the_upstream_host(tmp_path, upstream):
    path = tmp_path / "secrets.jsonl"
    url = upstream.url.replace("http://", f"http://alice:{PASSWORD}@")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "proxy", "--upstream", url, "-o", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = proc.stdout.readline().strip()
        body = {
            "model": "json",
            "messages": [],
            "prompt_cache_key": SESSION,
            "metadata": {"user_id": USER_ID},
        }
        target = base + "/chat/completions?" + QUERY + "&" + KEPT_QUERY
        seen = len(upstream.hosts)
        sent = {**HEADERS, **IDS}
        assert httpx.post(target, json=body, headers=sent).status_code == 200
        # no Authorization from the client: the URL's credentials go as Basic
        assert httpx.post(base + "/chat/completions", json=body).status_code == 200
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    recording = path.read_text()
    assert _leaks(recording) == [] and _leaks(out + err) == []
    argv = next(iter(iter_records(path)))[1].argv  # the whole command line, masked
    assert argv[:3] == ["streamscope", "proxy", "--upstream"] and argv[4:] == ["-o", str(path)]
    assert argv[3] == url.replace(f"alice:{PASSWORD}", REDACTED)
    assert "ok=kept" in recording and "Bearer [REDACTED]" in recording
    first = next(r for _, r in iter_records(path) if isinstance(r, Request))
    ids = {k.lower(): v for k, v in IDS.items()}
    assert {k.lower(): v for k, v in first.headers if k.lower() in ids} == ids
    assert first.url.endswith("&" + KEPT_QUERY)
    assert json.loads(first.body)["prompt_cache_key"] == SESSION
    assert json.loads(first.body)["metadata"] == {"user_id": USER_ID}
    assert upstream.hosts[seen:] == [f"127.0.0.1:{upstream.url.split(':')[2].split('/')[0]}"] * 2
    basic = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert upstream.auth[-2:] == ["Bearer s01-bearer", basic]  # the client's own wins
    assert "Basic [REDACTED]" in recording


def test_an_unreachable_upstream_error_names_no_password(tmp_path):
    with RecordingWriter(tmp_path / "r.jsonl") as writer:
        server = ProxyServer(Upstream.parse(f"http://alice:{PASSWORD}@127.0.0.1:9/v1"), writer)
        server.start()
        r = httpx.post(server.base_url + "/chat/completions?" + QUERY, json={}, headers=HEADERS)
        server.stop()
    assert r.status_code == 502 and "127.0.0.1:9" in r.text
    assert _leaks(r.text) == [] and _leaks((tmp_path / "r.jsonl").read_text()) == []


@pytest.mark.slow
@pytest.mark.parametrize("url", [f"ftp://a:{PASSWORD}@h/", f"http://a:{PASSWORD}@h:port/"])
def test_a_bad_upstream_url_is_refused_without_echoing_its_password(url):
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "proxy", "--upstream", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert url.split(":")[0] + "://" in done.stderr and PASSWORD not in done.stderr


# What an Anthropic client sends: its key (the installed SDK as a Bearer token, the API's
# documentation as x-api-key), the workspace it bills, and the API's version and betas.
ANTHROPIC_KEY = "sk-ant-api03-s27-anthropic-key"
ANTHROPIC_HEADERS = {
    "x-api-key": ANTHROPIC_KEY,
    "anthropic-workspace-id": "wrkspc_s28",
    "anthropic-beta": "task-budgets-2026-03-13,prompt-caching-2024-07-31",
}


def anthropic_client(base_url: str, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=ANTHROPIC_KEY,
        base_url=base_url,
        max_retries=0,
        default_headers=ANTHROPIC_HEADERS,
        **options,
    )


def assert_anthropic_secrets_masked(path, sent: dict[str, str]) -> None:
    """Credentials masked in every request, the API's own headers recorded as `sent`
    upstream (the headers of the last request)."""
    text = path.read_text()
    assert ANTHROPIC_KEY not in text and "wrkspc_s28" not in text
    for request in [r for _, r in iter_records(path) if isinstance(r, Request)]:
        recorded = {k.lower(): v for k, v in request.headers}
        assert recorded["x-api-key"] == recorded["anthropic-workspace-id"] == REDACTED
        assert recorded["authorization"] == "Bearer [REDACTED]"
        for name in ("anthropic-version", "anthropic-beta"):
            assert recorded[name] == sent[name], name
    assert sent["x-api-key"] == ANTHROPIC_KEY  # the upstream still got the key


def test_an_anthropic_clients_credentials_are_masked_by_the_proxy(tmp_path, upstream):
    path = tmp_path / "anthropic.jsonl"
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(upstream.url),
            writer,
            sides={"anthropic": Upstream.parse(upstream.url.removesuffix("/v1"))},
        )
        server.start()
        client = anthropic_client(server.base_url_of("anthropic"))
        try:
            with client.messages.stream(model=MODEL, max_tokens=64, messages=QUESTION) as stream:
                assert stream.get_final_message().stop_reason == "tool_use"
        finally:
            client.close()
            server.stop()
    assert_anthropic_secrets_masked(path, upstream.headers[-1])


# What a Google client sends: the Gemini API's key in x-goog-api-key (google-genai, the
# Gemini CLI) or in the `key` query parameter (curl and REST samples), Vertex AI's access
# token as a Bearer; `x-goog-api-client` names the client and stays readable.
GOOGLE_KEY = "AIzaSyS29-google-key-0123456789abcdef"
GOOGLE_TOKEN = "ya29.s30-vertex-access-token"


@pytest.mark.slow
def test_a_google_clients_key_and_token_are_masked_by_the_proxy(tmp_path, upstream):
    from .gemini_agent import gemini_client, vertex_client
    from .gemini_stream import MODEL
    from .gemini_stream import QUESTION as ASK

    path = tmp_path / "google.jsonl"
    origin = upstream.url.removesuffix("/v1")
    with RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse(upstream.url),
            writer,
            sides={"gemini": Upstream.parse(origin), "vertex": Upstream.parse(origin)},
        )
        server.start()
        gemini = gemini_client(GOOGLE_KEY, server.base_url_of("gemini"))
        vertex = vertex_client(GOOGLE_TOKEN, server.base_url_of("vertex"))
        rest = f"{server.base_url_of('gemini')}/v1beta/models/{MODEL}:streamGenerateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": ASK}]}]}
        try:
            assert list(gemini.models.generate_content_stream(model=MODEL, contents=ASK))
            assert list(vertex.models.generate_content_stream(model=MODEL, contents=ASK))
            r = httpx.post(rest, params={"alt": "sse", "key": GOOGLE_KEY}, json=body)
            assert r.status_code == 200
        finally:
            server.stop()
    text = path.read_text()
    assert GOOGLE_KEY not in text and GOOGLE_TOKEN not in text
    first, second, third = [r for _, r in iter_records(path) if isinstance(r, Request)]
    headers = [{k.lower(): v for k, v in r.headers} for r in (first, second)]
    assert headers[0]["x-goog-api-key"] == REDACTED
    assert headers[1]["authorization"] == "Bearer [REDACTED]"
    assert all(h["x-goog-api-client"].startswith("google-genai-sdk/") for h in headers)
    assert third.url.endswith(f":streamGenerateContent?alt=sse&key={REDACTED}")
    # the upstream still got them
    assert upstream.headers[-3]["x-goog-api-key"] == GOOGLE_KEY
    assert upstream.headers[-2]["authorization"] == f"Bearer {GOOGLE_TOKEN}"
    assert upstream.paths[-1].endswith(f"?alt=sse&key={GOOGLE_KEY}")


ARGV_SECRETS = ["sk-argv-s27-abcdefgh", "ghp_s28argvtokenabcdefghijklmnop", "s29-pw", "s30-key"]
ARGV_SECRETS += ["AIzaS36argvgooglekey0123456789", "s37-pass", "s38-db-pwd"]


@pytest.mark.slow
def test_the_header_holds_the_whole_command_line_with_its_secrets_masked(tmp_path, upstream):
    """The recorder's own options (-o, --upstream) are in `argv`, and so is the recorded
    command, each secret it was given masked."""
    path = tmp_path / "argv.jsonl"
    child = (
        "import os, httpx\n"
        "httpx.post(os.environ['OPENAI_BASE_URL'] + '/chat/completions',"
        " json={'model': 'json', 'messages': []})\n"
    )
    secret_args = ["--api-key", ARGV_SECRETS[0], "--token", ARGV_SECRETS[1]]
    secret_args += ["--password", ARGV_SECRETS[2], f"--key={ARGV_SECRETS[3]}"]
    secret_args += ["--api-key", ARGV_SECRETS[4], "--pass", ARGV_SECRETS[5]]
    secret_args += [f"--db-pwd={ARGV_SECRETS[6]}"]
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "record", "-o", str(path), "--upstream"]
        + [upstream.url, "--", sys.executable, "-c", child, *secret_args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    header = next(iter(iter_records(path)))[1]
    assert header.argv == [
        "streamscope",
        "record",
        "-o",
        str(path),
        "--upstream",
        upstream.url,
        "--",
        sys.executable,
        "-c",
        child,
        "--api-key",
        REDACTED,
        "--token",
        REDACTED,
        "--password",
        REDACTED,
        f"--key={REDACTED}",
        "--api-key",
        REDACTED,
        "--pass",
        REDACTED,
        f"--db-pwd={REDACTED}",
    ]
    assert header.masked == 7
    assert not [s for s in ARGV_SECRETS if s in path.read_text()]


def test_a_failed_exchange_is_said_whole(tmp_path, capsys):
    """The recorder's summary says why an exchange failed in full: the terminal wraps it."""
    from streamscope.record.runner import summarize

    path = tmp_path / "failed.jsonl"
    why = "cannot connect to api.openai.com: Name or service not known"
    with RecordingWriter(path, argv=["streamscope", "record"]) as w:
        for _ in range(5):
            x = w.new_exchange()
            w.request(x, "POST", "https://api.openai.com/v1/chat/completions", [], b"{}")
            w.end(x, "upstream-error", why)
    summarize(w)
    said = capsys.readouterr().err
    assert f"streamscope: exchange 1 failed: ended upstream-error: {why}\n" in said
    assert "streamscope: and 2 more exchanges failed (inspect lists them)" in said


def test_why_an_exchange_ended_is_never_cut(tmp_path):
    from streamscope.analysis import analyze

    path = tmp_path / "long.jsonl"
    why = "upstream said: " + " ".join(f"word{i}" for i in range(60))  # past 200 chars
    with RecordingWriter(path, argv=["streamscope", "record"]) as w:
        x = w.new_exchange()
        w.request(x, "POST", "https://api.openai.com/v1/chat/completions", [], b"{}")
        w.end(x, "upstream-error", why)
    assert [f.message for f in analyze(path).failures] == [f"ended upstream-error: {why}"]


def test_a_gzipped_error_echoing_the_key_is_recorded_and_summarized_masked(tmp_path, capsys):
    """An upstream that gzips its 401 (though asked for identity) and echoes the key: the
    body is recorded decoded and masked (no byte of the gzip would match the key), and
    the recorder's summary, read back from it, says the error with the key masked."""
    import gzip

    from click.testing import CliRunner

    from streamscope.cli import main
    from streamscope.record.runner import summarize

    key = "AIzaSyGzipEcho0123456789abcdefghijklmn"
    said = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode()
    packed = gzip.compress(said)
    path = tmp_path / "gz.jsonl"
    url = "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent"
    with RecordingWriter(path, argv=["agent"]) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", url, [("x-goog-api-key", key)], b'{"contents": []}')
        w.response(ex, 401, [("content-type", "application/json"), ("content-encoding", "gzip")])
        w.chunk(ex, packed[:20])
        w.chunk(ex, packed[20:])
        w.end(ex, "complete", f"HTTP 401: {said.decode()}")
        assert key not in w.shown(f"exchange 1 failed: {said.decode()}")
    text = path.read_text()
    assert key not in text and "content-encoding" not in text.lower()
    summarize(w)
    err = capsys.readouterr().err
    assert "exchange 1 failed: HTTP 401" in err and "Incorrect API key provided" in err
    assert key not in err and key[4:20] not in err
    shown = CliRunner().invoke(main, ["inspect", str(path)]).output
    assert "Incorrect API key provided" in shown and key not in shown


@pytest.mark.parametrize("cut", [0, 7, 31], ids=["by-event", "mid-event", "late"])
def test_a_key_echoed_token_by_token_across_events_is_recorded_masked(tmp_path, cut):
    """A model that echoes the key across two deltas ("echo sk", then "-proj-..."): no
    byte run matches it, the assembled content does; the recorder holds the first event
    until the next says, and masks the key in both (every read's length kept)."""
    from .test_secrets_faces import split_echo

    key = "sk-proj-SplitEcho0123456789abcdefghijklmn"
    events = split_echo(key)
    body = b"".join(events)
    bounds = sorted({0, len(events[0]) + cut, len(events[0]) + len(events[1]), len(body)})
    reads = [body[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    path = tmp_path / "split.jsonl"
    chat = "https://api.openai.com/v1/chat/completions"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "POST", chat, [("authorization", f"Bearer {key}")], b"{}")
        w.response(ex, 200, [("content-type", "text/event-stream")])
        for read in reads:
            w.chunk(ex, read)
        w.end(ex, "complete")
    text = path.read_text()
    assert key[2:12] not in text and "echo **" in text
    chunks = [r for _, r in iter_records(path) if r.type == "chunk"]
    assert [len(c.data_bytes) for c in chunks] == [len(r) for r in reads]


def test_a_key_echoed_across_two_websocket_messages_is_recorded_masked(tmp_path):
    """A Realtime model echoing the key across two delta messages ("echo sk", then
    "-proj-..."): the recorder holds the first message until the next says, masks the key
    in both, and keeps every frame's length and order (the client's frames included)."""
    key = "sk-proj-SplitEcho0123456789abcdefghijklmn"
    delta = '{{"type":"response.output_text.delta","delta":"{}"}}'
    frames = [
        ("server", delta.format("echo sk")),
        ("client", '{"type":"input_audio_buffer.append"}'),
        ("server", delta.format(key[2:20])),
        ("server", delta.format(key[20:] + " done")),
    ]
    path = tmp_path / "ws.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(
            ex, "GET", "wss://api.openai.com/v1/realtime", [("authorization", f"Bearer {key}")], b""
        )
        w.response(ex, 101, [("upgrade", "websocket")])
        for sender, text in frames:
            w.message(ex, sender, 1, True, text.encode())
        w.end(ex, "complete")
    text = path.read_text()
    assert key[2:20] not in text and key[20:] not in text and "echo **" in text
    got = [(r.sender, len(r.data or "")) for _, r in iter_records(path) if r.type == "message"]
    assert got == [(s, len(t)) for s, t in frames]
    assert sum(r.masked for _, r in iter_records(path) if r.type == "message") == 1
