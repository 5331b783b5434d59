"""Stable pseudonyms for identifiers (`--pseudonymize-ids`): a session id is no credential
and is kept by default (redact.is_identifier_name); a user who would rather not share it
can have each one replaced by a pseudonym, the same one wherever it stands in a recording,
so exchanges of one session still read as one.

A pseudonym is keyed by a random key that lives as long as the recording's writer and is
never written, so it cannot be undone or matched across recordings. It has the value's
length and the class of each character (a digit for a digit, a hex letter for a hex
letter, another letter for a letter, the rest kept): a UUID stays UUID-shaped, and a
body that holds one keeps its length, as masked bodies do."""

from __future__ import annotations

import os

_CLASSES = ("0123456789", "abcdef", "ghijklmnopqrstuvwxyz", "ABCDEF", "GHIJKLMNOPQRSTUVWXYZ")
_CLASS_OF = {c: chars for chars in _CLASSES for c in chars}


def new_key() -> bytes:
    return os.urandom(32)


def pseudonym(key: bytes, value: str) -> str:
    """`value`'s pseudonym under `key`: the same for the same value, its shape kept."""
    # imported here: hmac and hashlib load OpenSSL (5 ms), and only --pseudonymize-ids asks
    import hashlib
    import hmac

    stream = b""
    block = 0
    while len(stream) < len(value):
        stream += hmac.new(
            key, block.to_bytes(4, "big") + value.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).digest()
        block += 1
    out = []
    for c, b in zip(value, stream, strict=False):
        chars = _CLASS_OF.get(c)
        out.append(chars[b % len(chars)] if chars else c)
    return "".join(out)
