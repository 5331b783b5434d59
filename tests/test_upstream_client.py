"""The recorder's upstream client: chunked bodies decode the same however the reads fall."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.record.proxy import FinalEvent
from streamscope.record.upstream import ChunkedDecoder, UpstreamError


def chunked(pieces: list[bytes], extension: bool = False) -> bytes:
    out = b""
    for p in pieces:
        out += f"{len(p):x}{';ext=1' if extension else ''}\r\n".encode() + p + b"\r\n"
    return out + b"0\r\nX-Trailer: 1\r\n\r\n"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=40), max_size=12),
    st.lists(st.integers(min_value=0, max_value=600), max_size=20),
    st.booleans(),
)
def test_any_read_split_decodes_to_the_body(pieces, cuts, extension):
    raw = chunked(pieces, extension)
    decoder, out, last = ChunkedDecoder(), b"", 0
    for cut in sorted({c % (len(raw) + 1) for c in cuts}) + [len(raw)]:
        out += decoder.feed(raw[last:cut])
        last = cut
    assert out == b"".join(pieces)
    assert decoder.done


def test_a_body_cut_short_is_not_done():
    decoder = ChunkedDecoder()
    decoder.feed(chunked([b"hello"])[:-8])
    assert not decoder.done


@pytest.mark.parametrize("raw", [b"zz\r\nabc\r\n", b"3\r\nabcXX", b"-1\r\nx", b"0x3\r\nabc"])
def test_malformed_framing_is_an_upstream_error(raw):
    decoder = ChunkedDecoder()
    body = decoder.feed(raw)
    assert isinstance(decoder.error, UpstreamError)
    assert body == (b"abc" if raw.startswith(b"3") else b"")  # what came before is kept
    assert decoder.feed(b"3\r\nabc\r\n") == b""  # nothing after it


@pytest.mark.parametrize(
    "reads, relayed",
    [
        ([b'data: {"a":1}\n\ndata: [DONE]\n\n'], True),
        ([b"data: {}\n\ndata: [DO", b"NE]\n\n"], True),  # split across two reads
        ([b"data: {}\n\nda", b"ta: [DONE]\r\n\r\n"], True),
        ([b'data: {"content":"say [DONE]\\n"}\n\n'], False),  # inside an event's JSON
        ([b"data: [DONE]"], False),  # the line is not finished yet
    ],
)
def test_the_final_event_is_seen_however_the_reads_fall(reads, relayed):
    final = FinalEvent()
    for data in reads:
        final.seen(data)
    assert final.relayed is relayed
