"""AWS Signature Version 4 as a request carries it: its Authorization header, read.

    AWS4-HMAC-SHA256 Credential=AKIA.../20261202/us-east-1/bedrock/aws4_request,
    SignedHeaders=content-type;host;x-amz-date, Signature=<64 hex digits>

The access key id and the signature are credentials (masked wherever they appear,
recording/redact.py and mask.py); the scheme, the scope's date, region and service, and
the signed header names are not, and stay readable. Nothing here signs: the recorder's
re-signing is record/sigv4.py's (botocore), and this module imports nothing.
"""

from __future__ import annotations

import re

from ..core.record import record

# SigV4 and SigV4a: what a value must start with to be read here.
SCHEMES = ("AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256")
# An AWS access key id: a long-term one (AKIA) or a temporary one (ASIA), 20 characters.
ACCESS_KEY_ID = r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"
_PART = re.compile(r"\s*([A-Za-z]+)=([^,]*)")


@record(frozen=True, slots=True)
class Signature:
    """A SigV4 Authorization value, read."""

    scheme: str
    access_key: str  # the credential scope's first field: a credential
    scope: tuple[str, ...]  # the rest: date, region, service, aws4_request (SigV4a: no region)
    signed_headers: tuple[str, ...]
    signature: str  # a credential

    @property
    def region(self) -> str | None:
        """The region it was signed for (None: SigV4a, whose scope names none)."""
        return self.scope[1] if self.scheme == SCHEMES[0] and len(self.scope) == 4 else None

    @property
    def service(self) -> str | None:
        return self.scope[-2] if len(self.scope) >= 3 else None


def _parts(value: str) -> tuple[str, list[tuple[str, str]]] | None:
    scheme, sep, rest = value.strip().partition(" ")
    if scheme not in SCHEMES or not sep:
        return None
    parts = []
    for piece in rest.split(","):
        m = _PART.fullmatch(piece)
        if m is None:
            return None
        parts.append((m.group(1), m.group(2).strip()))
    return scheme, parts


def parse(value: str) -> Signature | None:
    """The signature an Authorization value holds (None: it is no whole SigV4 value)."""
    read = _parts(value)
    if read is None:
        return None
    scheme, parts = read
    fields = dict(parts)
    credential = fields.get("Credential", "").split("/")
    names = fields.get("SignedHeaders", "")
    if len(credential) < 4 or not credential[0] or "Signature" not in fields or not names:
        return None
    return Signature(
        scheme,
        credential[0],
        tuple(credential[1:]),
        tuple(names.split(";")),
        fields["Signature"],
    )


def masked(value: str, mask: str) -> str | None:
    """The value with its access key id and signature (and any part it does not know)
    replaced by `mask`, the rest kept; None when it is no SigV4 value."""
    read = _parts(value)
    if read is None:
        return None
    scheme, parts = read
    shown = []
    for name, part in parts:
        if name == "Credential":
            _, slash, scope = part.partition("/")
            part = mask + slash + scope
        elif name != "SignedHeaders":
            part = mask
        shown.append(f"{name}={part}")
    return f"{scheme} " + ", ".join(shown)


def credentials(value: str) -> list[str]:
    """The credentials a SigV4 value carries: its access key id and its signature."""
    read = _parts(value)
    if read is None:
        return []
    found = []
    for name, part in read[1]:
        if name == "Credential":
            found.append(part.partition("/")[0])
        elif name != "SignedHeaders":
            found.append(part)
    return found
