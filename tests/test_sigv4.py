"""AWS SigV4 in the recorder: the Authorization value read and masked (what is a
credential and what stays readable), Bedrock's origin from the request's signature, and
the proxy's re-signing, checked by the fake Bedrock runtime's verifier."""

from __future__ import annotations

import base64
import hashlib

import pytest

from streamscope.http import sigv4
from streamscope.providers import AWS, CannotSign, bedrock_origin, side
from streamscope.recording.format import REDACTED
from streamscope.recording.mask import Masking, credentials
from streamscope.recording.redact import redact_argv, redact_header, redact_url

from .fakes import bedrock as fake

SIGNATURE = "f90c3723ff63a6bf1dc152e736f7b095f611fefb888998d8297b362eddd6dcb5"
AUTHORIZATION = (
    f"AWS4-HMAC-SHA256 Credential={fake.ACCESS_KEY}/20261202/us-west-2/bedrock/aws4_request, "
    f"SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature={SIGNATURE}"
)


def test_a_sigv4_value_is_read():
    signed = sigv4.parse(AUTHORIZATION)
    assert signed is not None
    assert (signed.access_key, signed.region, signed.service) == (
        fake.ACCESS_KEY,
        "us-west-2",
        "bedrock",
    )
    assert signed.signed_headers == ("content-type", "host", "x-amz-date", "x-amz-security-token")
    assert signed.signature == SIGNATURE
    for other in ("Bearer abc", "AWS4-HMAC-SHA256 nonsense", "AWS4-HMAC-SHA256 Credential=a/b"):
        assert sigv4.parse(other) is None


def test_the_key_id_and_signature_are_masked_the_scope_and_signed_headers_kept():
    shown = redact_header("Authorization", AUTHORIZATION)
    assert shown == (
        f"AWS4-HMAC-SHA256 Credential={REDACTED}/20261202/us-west-2/bedrock/aws4_request, "
        f"SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature={REDACTED}"
    )
    assert redact_header("X-Amz-Security-Token", fake.SESSION_TOKEN) == REDACTED
    assert redact_header("X-Amz-Date", "20261202T113651Z") == "20261202T113651Z"
    digest = hashlib.sha256(b"{}").hexdigest()  # the body's hash is no credential
    assert redact_header("x-amz-content-sha256", digest) == digest
    # a part it does not know is masked too, whatever it holds
    odd = AUTHORIZATION + ", Extra=s60-unknown"
    assert "s60-unknown" not in redact_header("Authorization", odd)


def test_an_access_key_id_is_key_shaped_everywhere():
    key, temporary = fake.ACCESS_KEY, "ASIAQWERTYUIOPASDFGH"
    assert key not in redact_url(f"https://h/model/x?note={key}")
    assert temporary not in redact_url(f"https://h/path/{temporary}/x")
    assert key not in redact_header("X-Debug", f"signed by {key}")
    assert key not in " ".join(redact_argv(["agent", f"--note={key}", key]))
    # 20 characters exactly: a longer word of capitals is no key id
    assert redact_header("X-Debug", "AKIAIOSFODNN7FAKE1234567") == "AKIAIOSFODNN7FAKE1234567"


def test_a_client_signature_is_masked_in_the_whole_exchange_in_any_encoding():
    """The recorded headers are the re-signed ones; the client's own key id, signature
    and token (`client_headers`) are masked wherever the exchange holds them."""
    masking = Masking()
    client = [("Authorization", AUTHORIZATION), ("X-Amz-Security-Token", fake.SESSION_TOKEN)]
    known = credentials("", client)
    assert {fake.ACCESS_KEY, SIGNATURE, fake.SESSION_TOKEN} <= set(known)
    masking.request(
        1, "https://h/model/m/converse-stream", [("content-type", "application/json")], b"", known
    )
    echoed = (
        b'{"message": "bad signature '
        + SIGNATURE.encode()
        + b" for "
        + base64.b64encode(fake.SESSION_TOKEN.encode())
        + b'"}'
    )
    (_, masked), *_ = masking.chunk(1, 0, echoed) or [(0, echoed)]
    _, error, _ = masking.end(1, f"upstream said: {fake.ACCESS_KEY} {SIGNATURE}")
    assert SIGNATURE.encode() not in masked and fake.SESSION_TOKEN.encode() not in masked
    assert base64.b64encode(fake.SESSION_TOKEN.encode()) not in masked
    assert len(masked) == len(echoed)
    assert error is not None and SIGNATURE not in error and fake.ACCESS_KEY not in error


def test_bedrocks_origin_is_the_region_the_request_is_signed_for(monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    headers = {"authorization": AUTHORIZATION}
    assert bedrock_origin("/model/m/converse", headers) == (
        "https://bedrock-runtime.us-west-2.amazonaws.com"
    )
    # a Bedrock API key (Bearer) names no region: the environment's
    bearer = {"authorization": "Bearer ABSKexample"}
    assert bedrock_origin("/model/m/converse", bearer) == (
        "https://bedrock-runtime.eu-central-1.amazonaws.com"
    )
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert "ap-south-1" in bedrock_origin("/", bearer)
    # the control plane's requests (Claude Code lists inference profiles through the same
    # base URL) go to its endpoint, not the runtime's
    assert bedrock_origin("/inference-profiles", bearer) == (
        "https://bedrock.ap-south-1.amazonaws.com"
    )
    assert bedrock_origin("/guardrail/g/version/1/apply", bearer).startswith(
        "https://bedrock-runtime."
    )
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    with pytest.raises(ValueError, match="no AWS region"):
        bedrock_origin("/", bearer)
    forged = AUTHORIZATION.replace("us-west-2", "evil.example.com#")
    with pytest.raises(ValueError, match="is no AWS region"):
        bedrock_origin("/", {"authorization": forged})


def test_the_bedrock_side_is_a_record_and_its_option_is_generated():
    bedrock = side("bedrock")
    assert AWS.sides == (bedrock,) and bedrock.mount == "/bedrock"
    assert bedrock.env == ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "ANTHROPIC_BEDROCK_BASE_URL")
    assert bedrock.param == "bedrock_upstream" and bedrock.resign is not None
    assert "signed again" in bedrock.help()
    # no upstream given: each request's own region
    assert bedrock.upstream(None, {}) is None
    told = {"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "https://vpce.example"}
    assert bedrock.upstream(None, told) == "https://vpce.example"


def _client_request(host: str, path: str, body: bytes) -> list[tuple[str, str]]:
    """A request as boto3 signs it, for `host`."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(
        method="POST",
        url=f"http://{host}{path}",
        headers={"content-type": "application/json", "user-agent": "Boto3/1.44.8"},
        data=body,
    )
    credentials = Credentials(fake.ACCESS_KEY, fake.SECRET_KEY, fake.SESSION_TOKEN)
    SigV4Auth(credentials, "bedrock", "us-west-2").add_auth(request)
    return list(request.headers.items())


PATH = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
BODY = b'{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}'


def _aws_env(monkeypatch, **credentials: str) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name, value in credentials.items():
        monkeypatch.setenv(name, value)


def test_a_request_signed_for_the_proxy_is_signed_again_for_the_upstream(monkeypatch):
    from streamscope.record.sigv4 import resign

    _aws_env(monkeypatch, **fake.CREDENTIALS)
    upstream = fake.FakeBedrock()  # not started: its verifier alone
    try:
        client = _client_request("127.0.0.1:9999", "/bedrock" + PATH, BODY)
        as_sent = {k.lower(): v for k, v in client}
        assert "does not match" in upstream.verify("POST", PATH, as_sent, BODY)
        forward = [(k, v) for k, v in client if k.lower() != "host"]
        again = resign("POST", upstream.url + PATH, forward, BODY)
        assert again is not None
        headers = {k.lower(): v for k, v in again}
        assert upstream.verify("POST", PATH, headers, BODY) == ""
        # the same signed names and scope as the client's, every other header kept
        signed = sigv4.parse(headers["authorization"])
        assert signed is not None and signed.signed_headers == tuple(
            sorted(sigv4.parse(as_sent["authorization"]).signed_headers)  # type: ignore[union-attr]
        )
        assert headers["user-agent"] == "Boto3/1.44.8"
        assert [k.lower() for k, _ in again][:2] == ["content-type", "user-agent"]
    finally:
        upstream.server.server_close()


def test_a_request_without_sigv4_goes_as_it_came():
    from streamscope.record.sigv4 import resign

    bearer = [("authorization", "Bearer ABSKexample"), ("content-type", "application/json")]
    assert resign("POST", "https://h" + PATH, bearer, BODY) is None


def test_without_credentials_or_botocore_signing_says_what_is_missing(monkeypatch):
    from streamscope.record import sigv4 as resigning

    _aws_env(monkeypatch)
    client = _client_request("127.0.0.1:9999", PATH, BODY)
    with pytest.raises(CannotSign, match="no AWS credentials in the environment"):
        resigning.resign("POST", "https://h" + PATH, client, BODY)
    monkeypatch.setitem(__import__("sys").modules, "botocore.auth", None)
    with pytest.raises(CannotSign, match=r"botocore is not installed .*streamscope\[bedrock\]"):
        resigning.resign("POST", "https://h" + PATH, client, BODY)
