"""The AWS event stream framing, on hand-made messages: the prelude, every header type,
the payload, both CRCs; a bad CRC, a cut message, an impossible length are findings at
their frame; Bedrock's `chunk` envelopes deliver the event they carry; frames written
again are valid messages (botocore, where installed, is the oracle of that)."""

from __future__ import annotations

import base64
import struct
import uuid
import zlib

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.frames import INVALID, FrameHeader
from streamscope.framing import of_bytes
from streamscope.framing.aws_eventstream import (
    MAX_PAYLOAD,
    CutMessage,
    EventStreamDecoder,
    encode,
    fault,
    write,
)
from streamscope.framing.sse import SseDecoder

from ..anthropic_stream import tool_use_events
from ..bedrock_invoke import CHUNK_HEADERS, chunk, events_json, exception, invoke_body
from .laws import copy_carries_on, read_all, rechunked_alike

ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
EVENT = encode(
    [
        (":message-type", 7, "event"),
        (":event-type", 7, "contentBlockDelta"),
        (":content-type", 7, "application/json"),
    ],
    b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\\"a\\":"}}}',
)
EVERY_TYPE = encode(
    [
        ("t", 0, True),
        ("f", 1, False),
        ("b", 2, -7),
        ("s", 3, 300),
        ("i", 4, -70000),
        ("l", 5, 1 << 40),
        ("ba", 6, b"\x00\xff"),
        ("str", 7, "é"),
        ("ts", 8, 1700000000000),
        ("u", 9, ID),
        (":event-type", 7, "messageStop"),
    ],
    b'{"stopReason":"tool_use"}',
)
EXCEPTION = encode(
    [(":message-type", 7, "exception"), (":exception-type", 7, "throttlingException")],
    b'{"message":"slow down"}',
)
BODY = EVENT + EVERY_TYPE + EXCEPTION


def test_messages_are_frames_with_event_payload_and_typed_headers():
    frames, end = read_all(EventStreamDecoder, [BODY])
    assert end is None
    assert [f.event for f in frames] == ["contentBlockDelta", "messageStop", "throttlingException"]
    assert frames[0].payload == {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a":'}}}
    assert frames[1].headers[:10] == (
        FrameHeader("t", "bool", True),
        FrameHeader("f", "bool", False),
        FrameHeader("b", "byte", -7),
        FrameHeader("s", "short", 300),
        FrameHeader("i", "integer", -70000),
        FrameHeader("l", "long", 1 << 40),
        FrameHeader("ba", "byte_array", b"\x00\xff"),
        FrameHeader("str", "string", "é"),
        FrameHeader("ts", "timestamp", 1700000000000),
        FrameHeader("u", "uuid", ID),
    )
    assert [(f.start, f.end) for f in frames] == [
        (0, len(EVENT)),
        (len(EVENT), len(EVENT) + len(EVERY_TYPE)),
        (len(EVENT) + len(EVERY_TYPE), len(BODY)),
    ]
    assert of_bytes(BODY) == "aws-eventstream"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, len(BODY)), max_size=10))
def test_rechunking_gives_the_same_frames(points):
    rechunked_alike(EventStreamDecoder, BODY, points)
    rechunked_alike(EventStreamDecoder, BODY[:-5], points)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, len(BODY)), max_size=8), st.integers(0, 8))
def test_a_copy_carries_on_as_the_original(points, at):
    copy_carries_on(EventStreamDecoder, BODY, points, at)


def test_a_bad_message_crc_is_said_at_its_frame_and_reading_goes_on():
    bad = EVENT[:-1] + bytes([EVENT[-1] ^ 1])
    frames, end = read_all(EventStreamDecoder, [bad + EXCEPTION])
    assert "message CRC does not match" in frames[0].invalid and frames[0].payload is INVALID
    assert frames[1].event == "throttlingException" and frames[1].invalid is None and end is None


def test_a_bad_prelude_crc_or_an_impossible_length_is_the_last_frame():
    bad = EVENT[:8] + b"\x00\x00\x00\x00" + EVENT[12:]
    frames, end = read_all(EventStreamDecoder, [bad + EXCEPTION])
    assert len(frames) == 1 and "prelude CRC does not match" in frames[0].invalid and end is None
    prelude = struct.pack(">II", 10, 0)
    frames, _ = read_all(
        EventStreamDecoder, [prelude + struct.pack(">I", zlib.crc32(prelude)) + b"x" * 20]
    )
    assert len(frames) == 1 and "impossible length" in frames[0].invalid


def test_a_cut_message_is_truncation():
    frames, end = read_all(EventStreamDecoder, [EVENT + EXCEPTION[:20]])
    assert len(frames) == 1 and isinstance(end, CutMessage) and end.offset == len(EVENT)
    assert "20 bytes of" in end.describe()


def test_headers_that_do_not_read_are_said():
    payload = b"{}"
    head = b"\x01x\x07\x00\x09ab"  # a string said 9 bytes long, 2 there
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    msg = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    msg += struct.pack(">I", zlib.crc32(msg))
    (frame,), _ = read_all(EventStreamDecoder, [msg])
    assert "headers end inside a header" in frame.invalid


# -- Bedrock's InvokeModelWithResponseStream: `chunk` envelopes ------------------------------

INVOKE = invoke_body() + exception()


def test_a_chunk_is_the_event_it_carries_with_its_headers_and_span():
    frames, end = read_all(EventStreamDecoder, [INVOKE])
    events = events_json()
    assert end is None and len(frames) == len(events) + 1
    first = frames[0]
    assert first.data == events[0].decode() and first.payload == orjson.loads(events[0])
    assert first.event == "message_start" and first.invalid is None  # as the SDK names it
    assert [h.value for h in first.headers] == ["chunk", "application/json", "event"]
    assert (first.start, first.end) == (0, len(chunk(events[0])))
    assert [f.event for f in frames[1:3]] == ["content_block_start", "content_block_delta"]
    assert frames[-1].event == "modelStreamErrorException" and frames[-1].end == len(INVOKE)
    assert fault(frames[-1]) == ("modelStreamErrorException", "boom") and fault(first) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(INVOKE)), max_size=10), st.integers(0, 10))
def test_chunks_rechunked_or_copied_read_alike(points, at):
    rechunked_alike(EventStreamDecoder, INVOKE, points)
    copy_carries_on(EventStreamDecoder, INVOKE, points, at)


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (chunk(b"", raw="not base64!"), 'chunk\'s "bytes" are not base64'),
        (encode(CHUNK_HEADERS, b'{"p": "x"}'), 'holds no "bytes" string'),
        (encode(CHUNK_HEADERS, b'{"bytes": 7}'), 'holds no "bytes" string'),
        (encode(CHUNK_HEADERS, b"[1, 2"), "payload is not JSON"),
    ],
)
def test_a_chunk_with_no_base64_bytes_is_invalid_at_its_frame(message, said):
    frames, end = read_all(EventStreamDecoder, [message + invoke_body()])
    assert said in frames[0].invalid and frames[0].payload is INVALID and end is None
    assert frames[1].event == "message_start" and frames[1].invalid is None  # read on


def test_a_chunk_whose_bytes_are_no_json_is_its_data():
    (frame,), _ = read_all(EventStreamDecoder, [chunk(b"Human: hi")])
    assert frame.data == "Human: hi" and frame.payload is INVALID and frame.invalid is None
    assert frame.event is None
    (frame,), _ = read_all(EventStreamDecoder, [chunk(b'{"type": 5}')])
    assert frame.payload == {"type": 5} and frame.event is None  # no name to go by


def test_an_unknown_header_type_is_said_and_its_message_is_no_chunk():
    head = b"\x0b:event-type\x07\x00\x05chunk" + b"\x01z\x0e"  # type 14: no header has it
    payload = orjson.dumps({"bytes": base64.b64encode(events_json()[0]).decode()})
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    msg = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    msg += struct.pack(">I", zlib.crc32(msg))
    frames, end = read_all(EventStreamDecoder, [msg + EVENT])
    assert "'z' has type 14" in frames[0].invalid and frames[0].payload is INVALID
    assert frames[1].event == "contentBlockDelta" and end is None


def test_a_16_mib_payload_reads_and_a_larger_one_is_an_impossible_length():
    size = (MAX_PAYLOAD - len(b'{"bytes":""}')) // 4 * 3  # base64 fills the payload
    inner = b'{"type":"ping","x":"' + b"a" * (size - 22) + b'"}'
    big = chunk(inner, padding=None)
    headers = struct.unpack_from(">I", big, 4)[0]
    assert MAX_PAYLOAD - 4 < len(big) - 16 - headers <= MAX_PAYLOAD
    (frame,), end = read_all(
        EventStreamDecoder, [big[i : i + 65536] for i in range(0, len(big), 65536)]
    )
    assert frame.event == "ping" and frame.invalid is None and end is None
    over = encode([], b"x" * (MAX_PAYLOAD + 1))
    frames, end = read_all(EventStreamDecoder, [over + EVENT])
    assert len(frames) == 1 and "impossible length" in frames[0].invalid and end is None


# -- writing messages (serve, playback and export write frames anew) --------------------------


def test_frames_written_again_read_as_the_same_frames():
    frames, _ = read_all(EventStreamDecoder, [BODY + INVOKE])
    written = b"".join(write(frames, lambda: True))
    again, end = read_all(EventStreamDecoder, [written])
    assert end is None and all(f.invalid is None for f in again)
    assert [(f.event, f.data, f.headers) for f in again] == [
        (f.event, f.data, f.headers) for f in frames
    ]
    # a chunk is written as Bedrock writes one, less its padding
    assert written[len(BODY) : len(BODY) + len(chunk(events_json()[0], padding=None))] == chunk(
        events_json()[0], padding=None
    )


def test_an_event_with_no_headers_is_written_as_a_chunk():
    sse_frames, _ = read_all(SseDecoder, [b"".join(tool_use_events())])
    written = b"".join(write(sse_frames, lambda: True))
    assert written == b"".join(chunk(e, padding=None) for e in events_json())


def test_botocore_reads_the_messages_written():
    eventstream = pytest.importorskip("botocore.eventstream")
    frames, _ = read_all(EventStreamDecoder, [INVOKE])
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(b"".join(write(frames, lambda: True)))
    read = list(buffer)  # botocore checks both CRCs and raises on a bad one
    assert [m.headers.get(":event-type") or m.headers[":exception-type"] for m in read] == [
        *["chunk"] * len(events_json()),
        "modelStreamErrorException",
    ]
    assert base64.b64decode(orjson.loads(read[0].payload)["bytes"]) == events_json()[0]
