"""The framing registry: names, how a response and a saved body's first bytes tell the
framing, and one home for each framing's content type."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamscope.dialects import streams_in
from streamscope.framing import (
    FRAMINGS,
    content_type,
    framing,
    is_stream_type,
    of_bytes,
    of_response,
)

ROOT = Path(__file__).resolve().parents[2] / "streamscope"
GEMINI = "https://g/v1beta/models/m:streamGenerateContent"


def test_the_contract_names():
    assert list(FRAMINGS) == ["sse", "ndjson", "json-array", "aws-eventstream", "websocket"]
    with pytest.raises(ValueError, match="there is no framing 'xml'"):
        framing("xml")


def test_the_dialect_says_which_requests_stream_in_which_framing():
    assert streams_in("gemini", GEMINI, {}) == "json-array"
    assert streams_in("gemini", GEMINI + "?alt=sse&key=k", {}) == "sse"
    assert streams_in("gemini", GEMINI.replace("streamG", "g"), {}) is None
    assert (
        streams_in("chat-completions", "https://x/v1/chat/completions", {"stream": True}) == "sse"
    )
    assert streams_in(None, "https://x/other", {"stream": False}) is None


def test_a_response_tells_its_framing():
    json = [("Content-Type", "application/json; charset=UTF-8")]
    assert of_response(200, json, "json-array") == "json-array"
    assert of_response(400, json, "json-array") is None  # an error is a document
    assert of_response(200, json, None) is None
    assert of_response(200, json, "sse") is None
    assert of_response(200, [("content-type", "text/event-stream")], None) == "sse"
    assert of_response(200, [("content-type", "application/x-ndjson")], None) == "ndjson"
    assert (
        of_response(200, [("content-type", "application/vnd.amazon.eventstream")], None)
        == "aws-eventstream"
    )
    assert of_response(101, [("Upgrade", "websocket")], None) == "websocket"
    assert of_response(200, [], "json-array") == "json-array"
    assert is_stream_type("text/event-stream; charset=utf-8") and not is_stream_type(
        "application/json"
    )
    assert content_type(None) == "text/event-stream"


def test_first_bytes_tell_a_saved_body():
    assert of_bytes(b"  data: {}\n\n") == "sse" and of_bytes(b": ping\n") == "sse"
    assert of_bytes(b'\n[{"candidates": []}]') == "json-array"
    assert of_bytes(b'{"done": false}\n') == "ndjson"
    assert of_bytes(b"\x00\x00") is None


def test_a_content_type_is_spelled_in_one_module():
    spelled: dict[str, list[str]] = {}
    types = [t for r in FRAMINGS.values() if r.typed for t in r.content_types]
    for path in ROOT.rglob("*.py"):
        text = path.read_text()
        for t in types:
            if re.search(re.escape(t), text):
                spelled.setdefault(t, []).append(str(path.relative_to(ROOT)))
    # the dialects' exported pytest modules write the header their SDK reads (their text)
    outside = {t: [p for p in ps if not p.startswith("dialects/")] for t, ps in spelled.items()}
    assert outside == {t: ["framing/__init__.py"] for t in types if t in outside}
