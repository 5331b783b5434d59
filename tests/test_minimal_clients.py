"""`export --minimal` keeps each client's divergence as `inspect` reads it: a strategy that
builds other calls than robust's still builds other calls on the minimal stream, and one
that raises still raises, the same exception type (the signature's `differs` and
`raises`, core/minimal.py).

The event dialects' judge once opened its engines without saying the frames were a chunk
log's (JSON lines, no SSE names), where `inspect` shows the Anthropic SDK each event under
its type's name: the judge's SDK skipped every unnamed event and raised AssertionError on
every Anthropic chunk log. The target then said `anthropic-sdk` raises, and the minimal
stream of vercel/ai's spliced-message-start (where the real SDK builds
`{"value":"Spark{"}`) began with a `message_start` without `message`, on which the SDK
raises AttributeError instead."""

from __future__ import annotations

import dataclasses
import functools
import glob
import os

import orjson
import pytest

from streamscope.analysis.driver import analyze, frame_source
from streamscope.core.calls import Call
from streamscope.core.engine import value_key
from streamscope.core.frames import Frame, named_by_type
from streamscope.core.minimal import clients
from streamscope.export.fixtures import export
from streamscope.export.session import is_session
from streamscope.export.session_minimal import joined
from streamscope.inputs import open_input
from streamscope.recording import RecordingError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
# vercel/ai's packages/anthropic/src/__fixtures__/spliced-message-start.chunks.txt, copied
# byte for byte (tests/fixtures/anthropic/README.md)
SPLICED = os.path.join(FIXTURES, "anthropic", "vercel-ai-spliced-message-start.jsonl")


NONE: tuple[frozenset, frozenset] = (frozenset(), frozenset())


def _streams() -> list[str]:
    """Every stream file under tests/fixtures (not its notes, scripts or licenses)."""
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*", "*"))):
        if os.path.isfile(path) and not path.endswith((".md", ".py")):
            out.append(os.path.relpath(path, FIXTURES))
    return out


def _divergences(path: str, exchange: int | None = None) -> tuple[frozenset, frozenset]:
    """The first stream's (or `exchange`'s) clients that differ from robust, and those
    that raise, with the exception's type, as `inspect` reads the file (the real SDK run
    where its emulation does not model the shape)."""
    analysis = analyze(path, exchange)
    stream = analysis.streams[0]
    key = value_key if stream.by_value else Call.key
    others = {k: v for k, v in stream.strategies.items() if k != "robust"}
    return clients(stream.tool_calls, others, key)


@functools.cache
def _minimal_data(path: str, fmt: str, exchange: int | None) -> bytes:
    """The minimal export, searched once a worker (the search is most of a test's time)."""
    return export(path, fmt, exchange=exchange, minimal=True).data


def _minimal(path: str, out_dir: str) -> tuple[str | None, int | None]:
    """The minimal export of `path`'s first stream, written where it is read again: a
    recording where the source holds requests (their tools and dialect), else the body
    (None: the minimal body is empty, a stream that shows nothing)."""
    try:
        source = open_input(path, check=True)
    except RecordingError:
        pytest.skip("not a stream (an expected result, a request, a hostile cassette)")
    with source:
        recorded = source.recorded
        first = next((i.exchange for i in source.infos() if i.stream), None)
        if first is None or (recorded and is_session(source.exchange(first))):
            pytest.skip("no HTTP stream")
    data = _minimal_data(path, "recording" if recorded else "sse", first if recorded else None)
    if not data:
        return None, None
    out = os.path.join(out_dir, "minimal.jsonl" if recorded else "minimal.body")
    with open(out, "wb") as f:
        f.write(data)
    return out, (first if recorded else None)


def test_the_spliced_message_start_keeps_the_sdk_building_other_calls(tmp_path):
    original = analyze(SPLICED).streams[0].strategies["anthropic-sdk"]
    assert isinstance(original, list)  # the real SDK: {"value":"Spark{"}, and a second call
    assert [c.arguments for c in original][0] == '{"value":"Spark{"}'
    out, _ = _minimal(SPLICED, str(tmp_path))
    assert out is not None
    stream = analyze(out).streams[0]
    sdk = stream.strategies["anthropic-sdk"]
    assert isinstance(sdk, list), sdk  # builds other calls: does not raise
    assert stream.differs("anthropic-sdk")
    # the message_start the SDK makes its snapshot of keeps the message it needs
    with open(out, "rb") as f:
        first = orjson.loads(f.readline())
    assert first["type"] == "message_start" and isinstance(first["message"], dict)


@pytest.mark.slow  # (the real SDK)
def test_the_real_sdk_is_shown_a_chunk_logs_events_named_as_its_emulation_is(tmp_path):
    """Where the emulation declines a shape (a `_fields_set` key, which pydantic's
    construct binds as a parameter), inspect runs the real SDK: on a chunk log, with each
    event named by its type as the emulation is shown it (it saw no names, skipped every
    event and raised AssertionError)."""
    pytest.importorskip("anthropic")
    with open(SPLICED, "rb") as f:
        lines = f.read().replace(b'"input":{}}}', b'"input":{},"_fields_set":1}}', 1)
    log = tmp_path / "declined.jsonl"
    log.write_bytes(lines)
    sdk = analyze(str(log)).streams[0].strategies["anthropic-sdk"]
    assert isinstance(sdk, list), sdk
    assert [c.arguments for c in sdk] == ['{"value":"Spark{"}', "{}"]


ANTHROPIC = sorted(
    os.path.relpath(p, FIXTURES)
    for p in glob.glob(os.path.join(FIXTURES, "anthropic", "*"))
    if p.endswith((".sse", ".jsonl"))
)


@pytest.mark.slow  # (the real SDK, on every candidate that keeps the key)
@pytest.mark.parametrize("name", ANTHROPIC)
def test_where_the_emulation_declines_the_real_sdks_answer_is_kept(name, tmp_path):
    """A shape the anthropic-sdk emulation declines (a `_fields_set` key in the first
    block, which pydantic's construct binds) is answered by the real SDK, in inspect and
    in the minimiser's judge alike: a minimal stream on which the real SDK raises is not
    one on which it builds other calls, though the emulation declines both."""
    pytest.importorskip("anthropic")
    with open(os.path.join(FIXTURES, name), "rb") as f:
        body = f.read()
    if b'"content_block":{' not in body:
        pytest.skip("no block")
    declined = tmp_path / ("declined" + os.path.splitext(name)[1])
    declined.write_bytes(
        body.replace(b'"content_block":{', b'"content_block":{"_fields_set":1,', 1)
    )
    out, _ = _minimal(str(declined), str(tmp_path))
    want = _divergences(str(declined))
    assert (_divergences(out) if out is not None else NONE) == want


RECORDINGS = os.path.join(os.path.dirname(HERE), "recordings")
SAMPLES = sorted(n for n in os.listdir(RECORDINGS) if n.endswith((".jsonl", ".sse")))


@pytest.mark.slow  # (the real SDK)
@pytest.mark.parametrize("name", SAMPLES)
def test_where_the_openai_emulation_declines_the_real_sdks_answer_is_kept(name, tmp_path):
    """Chat Completions' own search likewise: a sample's first stream as a chunk log, its
    first choice's logprobs `{"content": 5}` (which the emulation declines and the real
    SDK builds past), keeps what the real SDK builds or raises."""
    pytest.importorskip("openai")
    path = os.path.join(RECORDINGS, name)
    analysis = analyze(path)
    if not analysis.streams or analysis.streams[0].dialect != "chat-completions":
        pytest.skip("not a Chat Completions stream")
    chunks = [f.payload for f in frame_source(path, analysis.streams[0].exchange)]
    chunks = [c for c in chunks if isinstance(c, dict)]
    first = next((c for c in chunks if c.get("choices")), None)
    if first is None:
        pytest.skip("no choice")
    first["choices"][0]["logprobs"] = {"content": 5}
    log = tmp_path / "declined.jsonl"
    log.write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in chunks))
    out, _ = _minimal(str(log), str(tmp_path))
    want = _divergences(str(log))
    assert (_divergences(out) if out is not None else NONE) == want


def _declined_session(path):
    """A session of two turns (an answer, then a call), the call's first argument delta
    with a `_fields_set` key, which the openai-sdk emulation declines."""
    from . import responses_stream as rs
    from .ws_session import create, data_of, write_session

    call = data_of(rs.function_call_events())
    at = next(i for i, d in enumerate(call) if b"arguments.delta" in d)
    call[at] = orjson.dumps({**orjson.loads(call[at]), "_fields_set": 1})
    out = [("client", create(model=rs.MODEL, input=rs.QUESTION))]
    out += [("server", d) for d in data_of(rs.answer_events())]
    out.append(("client", create(model=rs.MODEL, input=rs.QUESTION, tools=rs.TOOLS)))
    out += [("server", d) for d in call]
    return write_session(path, out)


@pytest.mark.slow  # (the real SDK)
def test_a_sessions_turn_is_answered_by_the_real_sdk_on_its_own_frames(tmp_path):
    """Where the emulation declines a turn's shape, the real SDK reads that turn's frames
    (the exchange's frames, which the fallback read, are none for a WebSocket session),
    in inspect and in the session's --minimal alike."""
    pytest.importorskip("openai")
    source = _declined_session(tmp_path / "s.jsonl")
    streams = analyze(str(source)).streams
    sdk = streams[1].strategies["openai-sdk"]
    assert isinstance(sdk, list) and [c.name for c in sdk] == ["get_weather"], sdk
    got = export(str(source), "recording", minimal=True)
    out = tmp_path / "min.jsonl"
    out.write_bytes(got.data)
    # a session's signature: its turns' joined (export/session_minimal.py)
    assert _joined(analyze(str(out)).streams) == _joined(streams)


def _joined(streams) -> tuple[frozenset, frozenset]:
    signature = joined(streams, [])
    return signature.differs, signature.raises


def test_a_chunk_logs_frame_named_by_its_type_keeps_every_other_field():
    """named_by_type builds the named frame field by field (a search names every frame
    of every candidate): a field Frame gains must be carried too."""
    values = {f.name: f"<{f.name}>" for f in dataclasses.fields(Frame)}
    frame = Frame(**{**values, "payload": {"type": "content_block_delta"}, "event": None})
    assert named_by_type(frame) == dataclasses.replace(frame, event="content_block_delta")
    assert named_by_type(dataclasses.replace(frame, payload=[1])).event is None
