"""The WebSocket framing: the server's frames after a 101, one frame per data message."""

from __future__ import annotations

import struct
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.framing.websocket import NoClose, WebSocketDecoder, encode

from .laws import copy_carries_on, read_all, rechunked_alike

BIG = b'{"type":"response.output_text.delta","delta":"' + b"x" * 70_000 + b'"}'
MID = b'{"type":"a","delta":"' + b"y" * 300 + b'"}'
BODY = (
    encode(1, b'{"type":"response.created"}')
    + encode(1, MID)  # a 16-bit length
    + encode(1, BIG[:10], fin=False)
    + encode(9, b"ping")  # a control frame between the fragments: no message
    + encode(0, BIG[10:])  # continued, with a 64-bit length
    + encode(2, b'{"binary":true}')
    + encode(8, struct.pack(">H", 1000) + b"bye")
)


def test_one_frame_per_message_reassembled():
    decoder = WebSocketDecoder()
    frames = decoder.feed(BODY) + decoder.flush()
    assert [f.payload.get("type", f.payload) for f in frames] == [
        "response.created",
        "a",
        "response.output_text.delta",
        {"binary": True},
    ]
    assert frames[2].data.encode() == BIG and all(f.invalid is None for f in frames)
    assert frames[3].headers[0].value == "binary"
    assert decoder.closed == (1000, "bye") and decoder.finish() is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, len(BODY)), max_size=8))
def test_rechunking_gives_the_same_frames(points):
    rechunked_alike(WebSocketDecoder, BODY, points)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(BODY)), max_size=6), st.integers(0, 6))
def test_a_copy_carries_on_as_the_original(points, at):
    copy_carries_on(WebSocketDecoder, BODY, points, at)


def test_what_a_server_must_not_send_is_said_at_its_frame():
    masked = encode(1, b'{"a":1}', mask=b"\x01\x02\x03\x04")
    lone = encode(0, b'{"b":2}')
    frames, end = read_all(WebSocketDecoder, [masked + lone + encode(3, b"?")])
    assert "masked" in frames[0].invalid and frames[0].data == '{"a":1}'
    assert "no message open" in frames[1].invalid
    assert "reserved" in frames[2].invalid
    assert isinstance(end, NoClose)


def test_an_impossible_length_is_the_last_frame():
    frames, end = read_all(WebSocketDecoder, [b"\x81\x7f" + b"\xff" * 8 + b"rest"])
    assert len(frames) == 1 and "impossible length" in frames[0].invalid and end is None


def test_a_cut_frame_is_truncation():
    frames, end = read_all(WebSocketDecoder, [BODY[:-30]])
    assert isinstance(end, NoClose) and "bytes of a frame" in end.describe()


def test_permessage_deflate_is_inflated():
    c = zlib.compressobj(wbits=-15)
    raw = c.compress(b'{"type":"z"}') + c.flush(zlib.Z_SYNC_FLUSH)
    assert raw.endswith(b"\x00\x00\xff\xff")
    frame = bytes([0x80 | 0x40 | 1, len(raw) - 4]) + raw[:-4]
    (got,), _ = read_all(WebSocketDecoder, [frame])
    assert got.payload == {"type": "z"}
