"""Masking one exchange's credentials (recording/mask.py): what the request carried is
found in every form, bodies keep their length and their reads, and a secret split over
reads is masked as if the body had come in one read."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.recording.format import REDACTED
from streamscope.recording.mask import Masking, Secrets, body_mask, credentials
from streamscope.recording.redact import redact_argv, redact_header, redact_url

KEY = "sk-proj-s40echoedkey0123456789"


def test_every_credential_a_request_carries_is_found():
    basic = base64.b64encode(b"alice:s41-basic-password").decode()
    found = credentials(
        "https://bob:s42-url-password@h/v1/x?api_key=s43-query&pwd=s44-pwd&q=plain-word",
        [
            ("Authorization", f"Bearer {KEY}"),
            ("Proxy-Authorization", f"Basic {basic}"),
            ("Cookie", "a=s45-cookie; b=s46-cookie"),
            ("x-api-pass", "s47-api-pass"),
            ("User-Agent", "agent ghp_s48abcdefghijklmnopqrstuv"),
            ("Accept", "text/event-stream"),
        ],
        b'{"model": "m", "api_key": "s49-body-key", "max_tokens": 10}',
    )
    for secret in [KEY, basic, "alice:s41-basic-password", "s41-basic-password"]:
        assert secret in found
    for secret in ["s42-url-password", "s43-query", "s44-pwd", "s45-cookie", "s46-cookie"]:
        assert secret in found
    assert "s47-api-pass" in found and "s49-body-key" in found
    assert "ghp_s48abcdefghijklmnopqrstuv" in found
    assert "plain-word" not in found and "text/event-stream" not in found and "m" not in found


def test_the_bare_secret_of_scheme_parameters_quoted_cookies_and_token_users_is_found():
    """Each credential is learnt as the bare value a body would echo, not only whole."""
    token_user = base64.b64encode(b"s96-token-as-user:").decode()
    found = credentials(
        "https://h/v1/x?q=1;api_key=s97-after-semicolon",
        [
            ("Authorization", 'Token token="s98-rails-token", realm="api"'),
            ("Proxy-Authorization", f"Basic {token_user}"),
            ("Cookie", 'sid="s99-quoted-cookie"; theme=dark'),
        ],
    )
    for secret in ["s96-token-as-user", "s97-after-semicolon", "s98-rails-token"]:
        assert secret in found
    assert "s99-quoted-cookie" in found and "api" not in found
    sigv4 = "AWS4-HMAC-SHA256 Credential=AKIAS100EXAMPLEKEYID/20261130/us-east-1/bedrock/"
    sigv4 += "aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "ab12" * 16
    found = credentials("https://h/", [("authorization", sigv4)])
    assert "AKIAS100EXAMPLEKEYID" in found and "host;x-amz-date" not in found  # names, kept
    assert (
        redact_url("https://h/x?q=1;api_key=s97-k&b=2") == f"https://h/x?q=1;api_key={REDACTED}&b=2"
    )


def test_a_short_value_is_not_looked_for_in_bodies():
    assert credentials("http://h/?pwd=abc", [("x-api-key", "12345")]) == []


def test_the_forms_a_body_may_echo_are_masked_and_lengths_kept():
    secrets = Secrets([KEY, "pa ss/wörd"])
    b64 = base64.b64encode(KEY.encode())
    body = (
        b'{"error": {"message": "Incorrect API key provided: '
        + KEY.encode()
        + b'", "b64": "'
        + b64
        + b'", "url": "'
        + base64.urlsafe_b64encode(KEY.encode()).rstrip(b"=")
        + b'", "pct": "'
        + quote("pa ss/wörd", safe="").encode()
        + b'", "json": "pa ss/w\\u00f6rd"}}'
    )
    masked, n = secrets.body(body)
    assert len(masked) == len(body) and n == 5
    assert KEY.encode() not in masked and b64 not in masked and b"w\\u00f6rd" not in masked
    assert b"[REDACTED" in masked
    assert masked.startswith(b'{"error": {"message": "Incorrect API key provided: [REDACTED*')


@pytest.mark.parametrize(
    "echoed",
    [
        b"tok%2fABC%2bdef%3dghi123",  # percent-encoded in lower case
        b"tok\\/ABC+def=ghi123",  # JSON's escaped slash (PHP, Java)
        b"\\u0074ok/ABC+def=ghi123",  # any character escaped, in one value
    ],
    ids=["lower-percent", "escaped-slash", "escaped-letter"],
)
def test_a_secret_echoed_in_another_escape_is_masked(echoed):
    secret = "tok/ABC+def=ghi123"
    body = b'{"error": {"message": "bad key Bearer ' + echoed + b'"}}'
    masked, n = Secrets([secret]).body(body)
    assert n == 1 and len(masked) == len(body)
    assert b"ghi123" not in masked and b"[REDACTED" in masked
    assert masked.startswith(b'{"error": {"message": "bad key Bearer [REDACTED')


def test_the_mask_keeps_the_length_and_is_safe_in_json_and_sse():
    for n in range(1, 40):
        mask = body_mask(n)
        assert len(mask) == n and mask.isascii()
        assert not set(mask.decode()) & set('"\\\r\n:')


@st.composite
def bodies(draw):
    """A body holding the key (and its base64 form) anywhere, cut into reads anywhere."""
    key = draw(st.sampled_from([KEY, "s50-pass", "aaaaaaa", "sk-ant-api03-xy"]))
    b64 = base64.b64encode(key.encode()).decode()
    parts = draw(st.lists(st.sampled_from([key, b64, "data: ", "\n\n", key[:-1], "a", "é", "[x]"])))
    body = "".join(parts).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=12)))
    reads = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    return key, [r for r in reads if r]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(bodies())
def test_a_secret_split_over_reads_is_masked_as_in_one_read(case):
    key, reads = case
    masking = Masking()
    masking.request(1, "https://h/v1/chat/completions", [("x-api-key", key)], b"")
    out = []
    for t, data in enumerate(reads):
        out += masking.chunk(1, t, data)
    held, _, count = masking.end(1, None)
    out += held
    # every read once, in order, with its own time and length
    assert [t for t, _ in out] == list(range(len(reads)))
    assert [len(d) for _, d in out] == [len(r) for r in reads]
    whole, expected = Secrets([key]).body(b"".join(reads))
    assert b"".join(d for _, d in out) == whole and count == expected
    assert key.encode() not in whole and base64.b64encode(key.encode()) not in whole


def test_an_exchange_without_credentials_writes_its_reads_as_they_come():
    masking = Masking()
    masking.request(1, "http://h/v1/chat/completions", [("accept", "*/*")], b"{}")
    assert masking.chunk(1, 0, b"data: sk-looks-like-a-key-but-none-was-sent\n\n") is None


def test_names_that_say_password_or_pass_are_masked_in_headers_urls_and_argv():
    assert redact_header("x-pwd", "hunter22") == REDACTED
    assert redact_header("x-api-pass", "hunter22") == REDACTED
    assert redact_header("x-passthrough", "yes") == "yes"  # pass, not a word of its own
    url = redact_url("https://h/cb?pwd=a1&pass=b2&code=c3&country_code=fr&passage=ok")
    assert url == (
        f"https://h/cb?pwd={REDACTED}&pass={REDACTED}&code={REDACTED}&country_code=fr&passage=ok"
    )
    argv = ["app", "--pass", "p1", "--db-pwd=p2", "--passthrough", "kept", "--model", "m"]
    argv += [
        "--token",
        "ghp_s51abcdefghijklmnopqrstuv",
        "--key",
        "k3",
        "--api-key",
        "AIza" + "x" * 30,
    ]
    assert redact_argv(argv) == [
        "app",
        "--pass",
        REDACTED,
        f"--db-pwd={REDACTED}",
        "--passthrough",
        "kept",
        "--model",
        "m",
        "--token",
        REDACTED,
        "--key",
        REDACTED,
        "--api-key",
        REDACTED,
    ]


def test_key_shaped_words_are_masked_wherever_they_stand_in_heads_and_argv():
    for key in [
        KEY,
        "sk-ant-api03-s52abcdef",
        "AIzaSyS53abcdefghijklmnopqrstu",
        "ghp_s54abcdefghijklmnopqrstuv",
        "xoxb-s55-abcdefghij",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.s56signature",
    ]:
        assert key not in redact_header("x-note", f"see {key} here"), key
        assert key not in redact_url(f"https://h/p?q={key}"), key
        assert key not in " ".join(redact_argv(["app", f"--note={key}", key])), key


def test_a_key_in_a_url_path_is_masked_and_looked_for_in_the_body():
    masking = Masking()
    url, _, _, n = masking.request(1, f"https://h/v1/keys/{KEY}/usage", [], b"")
    assert url == f"https://h/v1/keys/{REDACTED}/usage" and n == 1
    (ready,) = masking.chunk(1, 0, f'{{"key": "{KEY}"}}'.encode())
    assert KEY.encode() not in ready[1]


def test_odd_credentials_neither_crash_nor_mask_blank_runs():
    body = b'{"password": "\\ud800-lone-surrogate", "api_key": "        ", "secret": 12345678}'
    found = credentials(
        "http://h/", [("x-api-key", "   \t    "), ("authorization", "Basic ?!")], body
    )
    assert "\ud800-lone-surrogate" in found  # its forms made without UnicodeEncodeError
    assert not [v for v in found if not v.strip()]
    masking = Masking()
    masking.request(1, "http://h/", [("x-api-key", "        ")], body)
    ready = masking.chunk(1, 0, b"data:          spaces stay\n\n")
    assert ready == [(0, b"data:          spaces stay\n\n")]


# What Codex and Claude Code name their work by: identifiers, kept as they are.
SESSION = "0195f3a8-6c2e-7d41-9b0a-3f5e8c1d2a47"
ID_HEADERS = [
    ("session_id", SESSION),
    ("session-id", SESSION),
    ("thread-id", "0195f3a8-thread"),
    ("conversation_id", "conv-0195f3a8"),
    ("x-claude-code-session-id", "6a1f0c2e-8b3d-4c18-9e7a-2d5f0b1c3e4a"),
    ("X-Request-Id", "req_5f0c2a9e7b3d4c18"),
    ("Idempotency-Key", "stainless-python-retry-0195f3a8"),
    ("sessionId", "camel-0195f3a8"),
    ("x-session-affinity", "ses_3f5e8c1d2a47opencode"),
]
# Session tokens and keys (and ids a credential word qualifies) authenticate: masked.
SESSION_CREDENTIALS = [
    ("X-Amz-Security-Token", "s60-amz-security-token"),
    ("x-session-token", "s61-session-token"),
    ("AWS_SESSION_TOKEN", "s62-aws-session-token"),
    ("Session-Key", "s63-session-key"),
    ("x-auth-session-id", "s64-auth-session-id"),
    ("x-session-token-id", "s65-session-token-id"),
    ("x-session", "s66-bare-session"),
]


def test_session_thread_conversation_request_and_cache_ids_are_kept_in_headers():
    for name, value in ID_HEADERS:
        assert redact_header(name, value) == value, name
    for name, value in SESSION_CREDENTIALS:
        assert redact_header(name, value) == REDACTED, name
    # an identifier's name does not excuse a key-shaped value
    assert redact_header("session_id", KEY) == REDACTED


def test_a_session_id_is_kept_in_the_query_and_a_session_token_masked():
    url = redact_url(
        f"https://h/v1/responses?session_id={SESSION}&prompt_cache_key={SESSION}"
        "&X-Amz-Security-Token=s67-amz&session_token=s68-st&session=s69-bare"
    )
    assert url == (
        f"https://h/v1/responses?session_id={SESSION}&prompt_cache_key={SESSION}"
        f"&X-Amz-Security-Token={REDACTED}&session_token={REDACTED}&session={REDACTED}"
    )


def test_identifiers_stay_in_the_body_and_the_answer_while_credentials_go():
    """Codex's prompt_cache_key and Claude Code's metadata.user_id hold the session id the
    headers carry: kept everywhere, while the request's credentials are masked in every
    form, a session token among them."""
    user_id = f"user_{'ab' * 32}_account_0195f3a8-acct_session_{SESSION}"
    body = (
        f'{{"model":"m","prompt_cache_key":"{SESSION}","metadata":{{"user_id":"{user_id}"}},'
        '"session_token":"s70-body-session-token","SessionKey":"s71-body-session-key"}'
    ).encode()
    headers = [("Authorization", f"Bearer {KEY}"), *ID_HEADERS, *SESSION_CREDENTIALS]
    masking = Masking()
    url, recorded, masked_body, n = masking.request(
        1, f"https://h/v1/x?session-id={SESSION}", headers, body
    )
    assert url == f"https://h/v1/x?session-id={SESSION}"
    assert recorded[1 : 1 + len(ID_HEADERS)] == ID_HEADERS
    assert [v for _, v in recorded[1 + len(ID_HEADERS) :]] == [REDACTED] * len(SESSION_CREDENTIALS)
    assert f'"prompt_cache_key":"{SESSION}"'.encode() in masked_body
    assert f'"user_id":"{user_id}"'.encode() in masked_body
    assert b"s70-body-session-token" not in masked_body and b"s71-body-session" not in masked_body
    assert len(masked_body) == len(body) and n == 1 + len(SESSION_CREDENTIALS) + 2
    answer = f'{{"session_id":"{SESSION}","echo":"s61-session-token {KEY}"}}'.encode()
    ((_, out),) = masking.chunk(1, 0, answer)
    assert f'"session_id":"{SESSION}"'.encode() in out
    assert b"s61-session-token" not in out and KEY.encode() not in out
    assert (
        base64.b64encode(b"s62-aws-session-token")
        not in masking.chunk(1, 1, b"x " + base64.b64encode(b"s62-aws-session-token") + b" y")[0][1]
    )


def test_headers_and_curl_users_on_a_command_line_are_masked_as_headers_are():
    """curl's -H and -u, httpie's Name:value, and the same inside a shell string: the
    secret part masked (and learnt, so an echo of it is masked too), the rest readable."""
    from streamscope.recording.mask import argv_credentials

    argv = ["curl", "-H", "api-key: s80-k", "-H", "Content-Type: application/json"]
    argv += ["--header", "Authorization: Bearer s81-t", "-Hx-api-key:s82-k", "-u", "al:s83-p"]
    argv += ["--user=s84-t:", "-u", "bob", "https://h/v1", "-sH", "x_api_key: s89-k", "-b"]
    argv += ["sid=s90-c; theme=dark", "--", "http", "h/v1", "x-goog-api-key:s85-k", "Accept:*/*"]
    argv += ["-A", "bearer", "--auth", "s93-token"]
    assert redact_argv(argv) == [
        "curl",
        "-H",
        f"api-key: {REDACTED}",
        "-H",
        "Content-Type: application/json",
        "--header",
        f"Authorization: Bearer {REDACTED}",
        f"-Hx-api-key:{REDACTED}",
        "-u",
        f"al:{REDACTED}",
        f"--user={REDACTED}:",
        "-u",
        "bob",  # curl asks for the password
        "https://h/v1",
        "-sH",
        f"x_api_key: {REDACTED}",
        "-b",
        f"sid={REDACTED}; theme={REDACTED}",
        "--",
        "http",
        "h/v1",
        f"x-goog-api-key:{REDACTED}",
        "Accept:*/*",
        "-A",
        "bearer",
        "--auth",
        REDACTED,
    ]
    learnt = argv_credentials(argv)
    assert {
        "s80-k",
        "s81-t",
        "s82-k",
        "s83-p",
        "s84-t",
        "s85-k",
        "s89-k",
        "s90-c",
        "s93-token",
    } <= set(learnt)
    shell = "docker run -u 1000:1000 img && curl -s -H'api-key: s86-k' "
    shell += '-H "Authorization: Bearer s87-t" -ual:s88-p h; http h api-key:s91-k'
    assert redact_argv(["sh", "-c", shell]) == [
        "sh",
        "-c",
        f"docker run -u 1000:1000 img && curl -s -H'api-key: {REDACTED}' "
        f'-H "Authorization: Bearer {REDACTED}" -ual:{REDACTED} h; http h api-key:{REDACTED}',
    ]
    # other programs' -u is a user id, their host:port words are no header, and words
    # that only mention a secret's name stay
    kept = ["docker", "run", "-u", "1000:1000", "python", "-u", "agent.py", "auth-proxy:8080"]
    kept += ["claude", "-p", "Fix the auth: login fails", "make", "keys:rotate"]
    kept += ["http", "--pretty=all", "h", "curl", "--user-agent", "u:a"]
    kept += ["--cookie-jar", "j.txt", "-H", "x-session-id: s1", "https://h/v1?key=s92;alt=sse"]
    assert redact_argv(kept) == [*kept[:-1], f"https://h/v1?key={REDACTED};alt=sse"]
    assert redact_argv(["http", "--auth-type", "bearer"])[1] == "--auth-type"  # no --auth


def test_a_session_id_option_is_kept_in_argv_a_session_token_masked():
    argv = ["codex", "resume", SESSION, "--session-id", SESSION, "--prompt-cache-key=c1"]
    argv += ["--session-token", "s72-st", "AWS_SESSION_TOKEN=s73-env", "-c", "prompt_cache_key=c2"]
    assert redact_argv(argv) == [
        "codex",
        "resume",
        SESSION,
        "--session-id",
        SESSION,
        "--prompt-cache-key=c1",
        "--session-token",
        REDACTED,
        f"AWS_SESSION_TOKEN={REDACTED}",
        "-c",
        "prompt_cache_key=c2",
    ]
