"""The AWS event stream framing, on hand-made messages: the prelude, every header type,
the payload, both CRCs; a bad CRC, a cut message, an impossible length are findings at
their frame. (botocore is not installed here, so it is no oracle in these tests.)"""

from __future__ import annotations

import struct
import uuid
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.frames import INVALID, FrameHeader
from streamscope.framing import of_bytes
from streamscope.framing.aws_eventstream import CutMessage, EventStreamDecoder, encode

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
