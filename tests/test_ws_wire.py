"""The recorder's frame parser (framing/ws_wire.py): raw bytes of one direction in, whole
frames out, unmasked and inflated, what breaks RFC 6455 named at its frame."""

from __future__ import annotations

import struct
import zlib

import pytest

from streamscope.framing.websocket import encode
from streamscope.framing.ws_wire import MAX_FRAME, WireParser, deflate_terms

MASK = b"\x0f\xf0\xaa\x55"


def deflated(data: bytes, compressor: zlib._Compress | None = None) -> bytes:
    """A permessage-deflate message's payload (RFC 7692 7.2.1: the sync tail removed)."""
    c = compressor or zlib.compressobj(wbits=-zlib.MAX_WBITS)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


def rsv1(frame: bytes) -> bytes:
    return bytes([frame[0] | 0x40]) + frame[1:]


def test_client_frames_are_unmasked_whatever_the_reads():
    raw = encode(1, b'{"type":"response.create"}', mask=MASK) + encode(9, b"hi", mask=MASK)
    p = WireParser(client=True)
    frames = [f for i in range(len(raw)) for f in p.feed(raw[i : i + 1])]  # byte by byte
    assert [(f.opcode, f.fin, f.payload, f.problem) for f in frames] == [
        (1, True, b'{"type":"response.create"}', None),
        (9, True, b"hi", None),
    ]
    assert [(f.number, f.offset) for f in frames] == [(1, 0), (2, 32)]
    assert p.pending() == 0 and p.offset == len(raw)


def test_a_long_frame_in_many_reads_comes_out_whole():
    payload = bytes(range(256)) * 4096  # 1 MiB
    raw = encode(2, payload, mask=MASK)
    p = WireParser(client=True)
    out = []
    for i in range(0, len(raw), 1000):
        out += p.feed(raw[i : i + 1000])
        assert p.pending() == (i + len(raw[i : i + 1000])) % len(raw)
    [f] = out
    assert f.payload == payload and f.problem is None


@pytest.mark.parametrize(
    ("client", "raw", "says"),
    [
        (True, encode(1, b"x"), "frame 1 (text) at byte 0: the client sent an unmasked frame"),
        (False, encode(1, b"x", mask=MASK), "the server sent a masked frame (RFC 6455 5.1)"),
        (False, encode(5, b""), "frame 1 (opcode 5) at byte 0: opcode 5 is reserved"),
        (False, encode(12, b""), "opcode 12 is reserved (RFC 6455 5.2)"),
        (False, encode(9, b"x" * 126), "a control frame fragmented or over 125 bytes"),
        (False, encode(10, b"", fin=False), "a control frame fragmented or over 125 bytes"),
        (False, encode(0, b"x"), "a continuation frame with no message open"),
        (False, rsv1(encode(1, b"x")), "RSV1 set on a frame of opcode 1 with no extension"),
        (False, bytes([0x81 | 0x20, 0]), "RSV2 or RSV3 set"),
    ],
)
def test_what_breaks_the_protocol_is_named_at_its_frame(client, raw, says):
    [f] = WireParser(client=client).feed(raw)
    assert f.problem is not None and says in f.problem


def test_a_new_message_before_the_last_ones_end_and_a_frame_after_the_close():
    p = WireParser(client=False)
    raw = encode(1, b"a", fin=False) + encode(2, b"b") + encode(8, b"\x03\xe8") + encode(1, b"c")
    frames = p.feed(raw)
    assert frames[0].problem is None
    assert frames[1].problem == (
        "frame 2 (binary) at byte 3: a new message before the final frame of the one frame "
        "1 began (RFC 6455 5.4)"
    )
    assert frames[2].problem is None
    assert "frame 4 (text) at byte 10: a frame after the close frame" in (frames[3].problem or "")


def test_a_message_left_open_is_said():
    p = WireParser(client=False)
    p.feed(encode(1, b"a", fin=False) + encode(9, b"") + encode(0, b"b", fin=False))
    assert p.unfinished() == "the text message begun at frame 1 never got its final frame"
    p.feed(encode(0, b"c"))
    assert p.unfinished() is None


def test_an_impossible_length_stops_the_parser_as_broken():
    p = WireParser(client=False)
    frames = p.feed(encode(1, b"ok") + bytes([0x82, 0x7F]) + struct.pack(">Q", 1 << 63))
    assert [f.payload for f in frames] == [b"ok"]
    assert p.broken and p.dead == (
        "frame 2 at byte 4 gives a length of over 2^63 (RFC 6455 5.2) bytes: nothing after "
        "it is recorded"
    )
    assert p.feed(encode(1, b"more")) == []  # nothing more is read


def test_a_frame_longer_than_the_recorder_holds_stops_it_unbroken():
    p = WireParser(client=False)
    assert p.feed(bytes([0x82, 0x7F]) + struct.pack(">Q", MAX_FRAME + 1)) == []
    assert not p.broken and "more than the recorder holds" in (p.dead or "")


def test_permessage_deflate_is_inflated_with_the_window_kept_between_messages():
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    one, two = deflated(b'{"type":"a"}' * 20, c), deflated(b'{"type":"a"}' * 20, c)
    assert len(two) < len(one)  # the second refers back to the first
    p = WireParser(client=False, deflate=True, takeover=True)
    frames = p.feed(rsv1(encode(1, one)) + rsv1(encode(1, two)))
    assert [(f.payload, f.compressed, f.problem) for f in frames] == [
        (b'{"type":"a"}' * 20, True, None),
        (b'{"type":"a"}' * 20, True, None),
    ]


def test_a_compressed_message_in_two_frames_inflates_frame_by_frame():
    data = deflated(b"hello, fragmented world")
    raw = rsv1(encode(1, data[:5], fin=False, mask=MASK)) + encode(0, data[5:], mask=MASK)
    p = WireParser(client=True, deflate=True, takeover=False)
    frames = p.feed(raw)
    assert [f.compressed for f in frames] == [True, False]  # RSV1 on the first frame only
    assert b"".join(f.payload for f in frames) == b"hello, fragmented world"
    assert all(f.problem is None for f in frames)


def test_without_context_takeover_each_message_starts_afresh():
    one = deflated(b"same text")
    p = WireParser(client=False, deflate=True, takeover=False)
    frames = p.feed(rsv1(encode(1, one)) + rsv1(encode(1, one)))
    assert [f.payload for f in frames] == [b"same text", b"same text"]


def test_a_payload_that_does_not_inflate_is_named():
    p = WireParser(client=False, deflate=True)
    [f] = p.feed(rsv1(encode(1, b"\xff\xff\xff not deflate")))
    assert "does not inflate (permessage-deflate)" in (f.problem or "")


@pytest.mark.parametrize(
    ("header", "terms"),
    [
        (None, (False, True, True)),
        ("permessage-deflate", (True, True, True)),
        (
            "permessage-deflate; server_no_context_takeover; client_max_window_bits=12",
            (True, True, False),
        ),
        ("x-other, permessage-deflate; Client_No_Context_Takeover", (True, False, True)),
    ],
)
def test_deflate_terms_from_the_101(header, terms):
    assert deflate_terms(header) == terms
