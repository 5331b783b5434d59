"""A stream whose dialect was not told is read as Chat Completions and says so; a name no
registered dialect has is a mistake, said as one, never read as Chat."""

from __future__ import annotations

import pytest

from streamscope.analysis import analyze
from streamscope.dialects import (
    DEFAULT,
    DIALECTS,
    UnknownDialect,
    dialect,
    of_frames,
    open_engine,
    sdk_note,
)
from streamscope.framing.sse import SseDecoder


def test_a_registered_name_is_its_dialect():
    for name, record in DIALECTS.items():
        assert dialect(name) is record
        assert "dialect-unknown" not in {a.kind for a in open_engine(name).log.entries()}


def test_not_told_is_read_as_chat_and_says_so():
    assert dialect(None) is DEFAULT
    (entry,) = [a for a in open_engine(None).log.entries() if a.kind == "dialect-unknown"]
    assert "read as Chat Completions" in entry.message


@pytest.mark.parametrize("name", ["", "chat", "Chat-Completions", "anthropic"])
def test_a_name_no_dialect_has_is_an_error(name):
    with pytest.raises(UnknownDialect, match="no dialect is named") as raised:
        dialect(name)
    assert "chat-completions" in str(raised.value)  # it names the dialects there are
    with pytest.raises(UnknownDialect):
        open_engine(name)
    with pytest.raises(UnknownDialect):
        sdk_note([name])


@pytest.mark.parametrize(
    "body, told",
    [
        (b"data: [DONE]\n\n", "chat-completions"),  # a stream whose events were not kept
        (b'data: {"choices": []}\n\ndata: [DONE]\n\n', "chat-completions"),
        # what may be a chunk (a usage-only one, an error) tells nothing, nor bars [DONE]
        (b'data: {"usage": {"total_tokens": 1}}\n\ndata: [DONE]\n\n', "chat-completions"),
        (b'data: {"error": {"message": "rate limited"}}\n\ndata: [DONE]\n\n', "chat-completions"),
        # Gemini's Interactions API ends with [DONE] too: its events are no chunks
        (b'event: step\ndata: {"step": {"type": "function_call"}}\n\ndata: [DONE]\n\n', None),
    ],
)
def test_done_tells_chat_completions_only_when_no_event_came_before_it(tmp_path, body, told):
    path = tmp_path / "stream.sse"
    path.write_bytes(body)
    (stream,) = analyze(str(path)).streams
    unknown = [a for a in stream.anomalies if a.kind == "dialect-unknown"]
    assert bool(unknown) is (told is None) and stream.dialect == "chat-completions"
    assert of_frames(SseDecoder().feed(body)) == told
