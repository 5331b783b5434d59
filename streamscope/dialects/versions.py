"""The SDK releases the SDK strategies' emulations were verified against.

Each emulation (`openai-sdk` for Chat Completions and Responses, `anthropic-sdk`, `parts`)
reproduces one release's accumulation exactly: the differential tests check it against
that release's real class, and the test extra pins these same versions (a test holds the
two together). streamscope installs beside any release of these packages; where the
installed one differs, `inspect` says so in a note (`sdk_note`) rather than refusing.
"""

from __future__ import annotations

# distribution name -> the release the emulations reproduce
VERIFIED: dict[str, str] = {
    "openai": "3.57.0",
    "anthropic": "2.15.0",
    "google-genai": "3.6.1",
    "ollama": "0.6.3",
    # the `strands` strategy: strands-agents' process_stream on the events botocore yields
    "strands-agents": "1.62.0",
}


def installed(package: str) -> str | None:
    """The installed version of distribution `package`, None when it is not installed
    (its metadata read, the package never imported)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None
