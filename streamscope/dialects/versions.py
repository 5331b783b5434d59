"""The SDK releases the SDK strategies' emulations were verified against.

Each emulation (`openai-sdk` for Chat Completions and Responses, `anthropic-sdk`, `parts`)
reproduces one release's accumulation exactly: the differential tests check it against
that release's real class, and the test extra pins these same versions (a test holds the
two together). streamscope installs beside any release of these packages; where the
installed one differs, `inspect` says so in a note (`sdk_note`) rather than refusing.
"""

from __future__ import annotations

import os
import re
import sys

# distribution name -> the release the emulations reproduce
VERIFIED: dict[str, str] = {
    "openai": "3.63.0",
    "anthropic": "2.17.0",
    "google-genai": "3.6.1",
    "ollama": "0.6.3",
    # the `strands` strategy: strands-agents' process_stream on the events botocore yields
    "strands-agents": "1.62.0",
}


def installed(package: str) -> str | None:
    """The installed version of distribution `package`, None when it is not installed
    (its metadata read, the package never imported)."""
    return _version_on_path(package)


_SEPARATORS = re.compile(r"[-_.]+")


def _version_on_path(package: str) -> str | None:
    """What `importlib.metadata.version` answers, read from the first `NAME-VERSION.dist-info`
    (or `.egg-info`) on sys.path whose name is `package`'s: importing importlib.metadata
    (and the email parser behind it) is a fifth of a command's start-up."""
    want = _SEPARATORS.sub("_", package).lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip, a missing folder
            continue
        for name in names:
            stem, _, suffix = name.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or "-" not in stem:
                continue
            if _SEPARATORS.sub("_", stem.split("-")[0]).lower() != want:
                continue
            folder = os.path.join(entry, name)
            for file in ("METADATA", "PKG-INFO"):
                found = _version_line(os.path.join(folder, file))
                if found is not None:
                    return found
    return None


def _version_line(path: str) -> str | None:
    """The `Version:` header of a core-metadata file, None when it has none or is absent."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line in ("\n", "\r\n"):  # the headers end at the first blank line
                    return None
                if line[:8].lower() == "version:":
                    return line[8:].strip() or None
    except OSError:
        return None
    return None
