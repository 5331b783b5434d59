"""The recorder's AWS SigV4 re-signing: a request its client signed for the proxy's host,
signed again for the upstream's, with the credentials of the environment.

An AWS client signs each request for the host and path it was given (the proxy's
`127.0.0.1:PORT/bedrock/...`), which the upstream checks; so the proxy signs it again, as
botocore's SigV4Auth signs (the anthropic SDK's AnthropicBedrock and boto3 both sign with
it), with what the client's own signature says: the same service and region (its
credential scope), the same signed header names (their values as the proxy sends them:
Host the upstream's), the body as sent, byte for byte (a client's x-amz-content-sha256 is
kept and signed as it is). The credentials are botocore's credential chain's, as a boto3
client of the same environment finds them: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN, AWS_PROFILE and the shared files, a container's or instance's role.
The child of `record` runs in this process's environment, so these are its own.

botocore is imported when a request is signed, not before (the `bedrock` extra).
"""

from __future__ import annotations

import functools
import os
from typing import Any
from urllib.parse import urlsplit

from ..http import sigv4
from ..providers import CannotSign

# What a signature is made of: the proxy's own, not the client's.
_MADE = frozenset({"authorization", "x-amz-date", "x-amz-security-token"})


def resign(
    method: str, url: str, headers: list[tuple[str, str]], body: bytes
) -> list[tuple[str, str]] | None:
    """`headers` (sent to `url`, Host and Content-Length but) signed again for `url`'s
    host: the client's Authorization, X-Amz-Date and X-Amz-Security-Token replaced. None
    when the request carries no SigV4 signature (a Bedrock API key, `Bearer`, goes as it
    came). CannotSign, one line, without botocore or credentials."""
    authorization = next((v for k, v in headers if k.lower() == "authorization"), "")
    signed = sigv4.parse(authorization)
    if signed is None:
        return None
    if signed.region is None or signed.service is None:
        raise CannotSign(f"its {signed.scheme} signature names no region (SigV4a is not re-signed)")
    try:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
    except ImportError:
        raise CannotSign("botocore is not installed (pip install 'streamscope[bedrock]')") from None
    credentials = _credentials(_environment())
    if credentials is None:
        raise CannotSign(
            "no AWS credentials in the environment (AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or another source botocore reads)"
        )
    frozen = credentials.get_frozen_credentials()
    names = {n.lower() for n in signed.signed_headers} - _MADE
    chosen: dict[str, list[str]] = {}
    for name, value in headers:
        if name.lower() in names:
            chosen.setdefault(name.lower(), []).append(value)
    to_sign = {name: ",".join(values) for name, values in chosen.items()}
    to_sign["host"] = urlsplit(url).netloc  # as the proxy's upstream client sends it
    if "content-length" in names:
        to_sign["content-length"] = str(len(body))
    request = AWSRequest(method=method, url=url, headers=to_sign, data=body)
    try:
        SigV4Auth(frozen, signed.service, signed.region).add_auth(request)
    except Exception as e:  # botocore's own errors: said, never a traceback
        raise CannotSign(f"botocore could not sign it: {type(e).__name__}: {e}") from None
    made = {k.lower(): (k, v) for k, v in request.headers.items() if k.lower() in _MADE}
    out = []  # each where the client had it, the ones it had not at the end
    for name, value in headers:
        if name.lower() not in _MADE:
            out.append((name, value))
        elif name.lower() in made:
            out.append(made.pop(name.lower()))
    return out + list(made.values())


def _environment() -> tuple[tuple[str, str], ...]:
    """The AWS variables of the environment: the credentials found are theirs."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_")))


@functools.lru_cache(maxsize=8)
def _credentials(environment: tuple[tuple[str, str], ...]) -> Any:
    """botocore's credentials for an environment (None: it finds none), found once: a
    profile that assumes a role asks STS once, and refreshes them as they expire."""
    from botocore.exceptions import BotoCoreError
    from botocore.session import Session

    try:
        return Session().get_credentials()
    except BotoCoreError as e:  # a profile that does not exist, a config that does not read
        raise CannotSign(f"botocore found no usable AWS credentials: {e}") from None
