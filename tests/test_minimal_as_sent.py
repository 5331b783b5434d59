"""`export --minimal` keeps what `inspect` finds: the same warning and error kinds (a
frame whose bytes are not UTF-8 kept as sent, its `invalid-utf8` with it), and the end
the stream had (a Chat Completions stream's `data: [DONE]`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.analysis.driver import analyze
from streamscope.core.anomalies import SERIOUS
from streamscope.export.fixtures import export

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = sorted(
    p.name for p in (ROOT / "recordings").iterdir() if p.suffix in (".jsonl", ".sse", ".ndjson")
)
SESSIONS = {"codex-websocket.jsonl", "realtime-two-calls.jsonl"}  # (sse: one turn's, --turn)


def _read(path: Path) -> tuple[frozenset[str], str | None]:
    """What inspect finds in the first stream of `path`: its warning and error kinds, and
    how it ended."""
    stream = analyze(str(path)).streams[0]
    return frozenset(a.kind for a in stream.anomalies if a.severity in SERIOUS), stream.ended


def _written(tmp_path: Path, name: str, data: bytes) -> Path:
    out = tmp_path / name
    out.write_bytes(data)
    return out


CHAT = (
    b'data: {"choices":[{"index":0,"delta":{"content":"h\xffi"}}]}\n\n'  # the trial's
    b"data: [DONE]\n\n"
)
ANTHROPIC = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","content":[],"model":"claude","stop_reason":null,'
    b'"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h\xffi"}}\n\n'
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":0}\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    b'"usage":{"output_tokens":2}}\n\n'
    b"event: message_stop\n"
    b'data: {"type":"message_stop"}\n\n'
)
RESPONSES = (
    b"event: response.created\n"
    b'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1",'
    b'"object":"response","status":"in_progress","output":[]}}\n\n'
    b"event: response.output_text.delta\n"
    b'data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1",'
    b'"output_index":0,"content_index":0,"delta":"h\xffi"}\n\n'
    b"event: response.completed\n"
    b'data: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1",'
    b'"object":"response","status":"completed","output":[]}}\n\n'
)
GEMINI = (
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"h\xffi"}]},"index":0}]}\r\n\r\n'
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},'
    b'"finishReason":"STOP","index":0}]}\r\n\r\n'
)
OLLAMA = (
    b'{"model":"llama3","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant",'
    b'"content":"h\xffi"},"done":false}\n'
    b'{"model":"llama3","created_at":"2024-01-01T00:00:01Z","message":{"role":"assistant",'
    b'"content":""},"done":true,"done_reason":"stop"}\n'
)
NOT_UTF8 = {  # a stream of each dialect, one event's text holding a byte that is no UTF-8
    "chat.sse": CHAT,
    "chat.chunks.jsonl": b'{"choices":[{"index":0,"delta":{"content":"h\xffi"}}]}\n',
    "anthropic.sse": ANTHROPIC,
    "responses.sse": RESPONSES,
    "gemini.sse": GEMINI,
    "gemini.json": (  # a JSON array of chunks, as generateContent streams without alt=sse
        b'[{"candidates":[{"content":{"role":"model","parts":[{"text":"h\xffi"}]},"index":0}]},'
        b'{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},'
        b'"finishReason":"STOP","index":0}]}]'
    ),
    "ollama.ndjson": OLLAMA,
}


def test_the_trials_stream_keeps_its_byte_and_its_done(tmp_path):
    """The new-user trial: `2 frames -> 1 frame`, `data: {"choices":[{"delta":{}}]}` alone,
    invalid-utf8 gone and done-missing gained."""
    src = _written(tmp_path, "nonutf8.sse", CHAT)
    out = export(str(src), "sse", minimal=True)
    assert out.data == CHAT  # nothing of it can go: the bytes as sent, [DONE] last
    assert _read(_written(tmp_path, "out.sse", out.data)) == _read(src)
    assert _read(src) == (
        {"invalid-utf8", "chunk-schema-violation", "finish-reason-missing"},
        "done",
    )


@pytest.mark.parametrize("name", sorted(NOT_UTF8))
@pytest.mark.parametrize("fmt", ["sse", "recording", "chunks"])
def test_bytes_that_are_not_utf8_stay_as_sent(tmp_path, name, fmt):
    """Each dialect, each form written: the minimal stream reads as the whole one written
    the same way (its invalid-utf8, its end), the byte that is no UTF-8 as it came."""
    if fmt == "chunks" and not name.startswith("chat"):
        pytest.skip("a chunk log of named events: covered by the SSE forms")
    src = _written(tmp_path, name, NOT_UTF8[name])
    suffix = ".sse" if fmt == "sse" else ".jsonl"
    whole = _read(_written(tmp_path, "whole" + suffix, export(str(src), fmt).data))
    out = export(str(src), fmt, minimal=True)
    assert "invalid-utf8" in _read(src)[0]
    assert _read(_written(tmp_path, "minimal" + suffix, out.data)) == whole
    if fmt != "recording":  # (a recording holds the body in base64)
        assert b"h\xffi" in out.data  # never read as U+FFFD and written as it
        assert "\ufffd".encode() not in out.data


@pytest.mark.slow
@pytest.mark.parametrize("name", RECORDINGS)
@pytest.mark.parametrize("fmt", ["sse", "recording"])
def test_minimal_finds_what_the_export_finds_and_ends_as_it(tmp_path, name, fmt):
    """Every bundled recording: inspect finds the same warning and error kinds in the
    minimal stream as in the whole one written the same way, and reads the same end."""
    if fmt == "sse" and name in SESSIONS:
        pytest.skip("a session's sse is one turn's (--turn)")
    path = str(ROOT / "recordings" / name)
    suffix = ".jsonl" if fmt == "recording" else ".sse"
    whole = _written(tmp_path, "whole" + suffix, export(path, fmt).data)
    small = export(path, fmt, minimal=True).data
    assert _read(_written(tmp_path, "minimal" + suffix, small)) == _read(whole)
    if fmt == "sse" and whole.read_bytes().endswith(b"data: [DONE]\n\n"):
        assert small.endswith(b"data: [DONE]\n\n")
