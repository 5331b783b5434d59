"""The SSE decoder: WHATWG line rules, and any re-splitting of the bytes gives the same frames."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.frames import INVALID
from streamscope.framing.sse import SseDecoder, decode_body


def split_feed(body: bytes, cuts: list[int]) -> tuple[list, object]:
    decoder = SseDecoder()
    frames, last = [], 0
    for cut in sorted(set(cuts)) + [len(body)]:
        frames += decoder.feed(body[last:cut], cut)
        last = cut
    return frames, decoder.finish()


def view(frames):
    return [(f.number, f.data, f.event, f.start, f.end) for f in frames]


def test_line_ends_bom_comments_and_multiline_data():
    body = b'\xef\xbb\xbf: keep-alive\r\ndata: {"a": 1}\r\n\r\nevent: x\rdata: 1\rdata:2\r\rdata: [DONE]\n\n'
    frames, tail = decode_body(body)
    assert [(f.data, f.event) for f in frames] == [
        ('{"a": 1}', None),
        ("1\n2", "x"),
        ("[DONE]", None),
    ]
    assert frames[0].payload == {"a": 1}
    assert frames[1].payload is INVALID and not frames[1].is_done
    assert frames[2].is_done
    assert tail is None


def test_comment_only_events_are_not_frames():
    frames, tail = decode_body(b": ping\n\n: ping\n\ndata: 1\n\n")
    assert [f.data for f in frames] == ["1"]
    assert tail is None


def test_field_without_colon_and_empty_data():
    frames, _ = decode_body(b"data\n\ndata:\ndata:\n\n")
    assert [f.data for f in frames] == ["", "\n"]


def test_unterminated_final_event_is_truncation_not_a_frame():
    frames, tail = decode_body(b"data: 1\n\ndata: [DONE]\n")
    assert [f.data for f in frames] == ["1"]
    assert tail is not None and tail.offset == 9 and "[DONE]" in tail.pending
    assert "ended inside an event" in tail.describe()


def test_read_boundaries_and_times_are_kept():
    decoder = SseDecoder()
    assert decoder.feed(b'data: {"a"', 5) == []
    frames = decoder.feed(b": 1}\n\ndata: 2\n\n", 9)
    assert [(f.first_read, f.last_read, f.time_ns) for f in frames] == [(0, 1, 9), (1, 1, 9)]


def test_invalid_utf8_is_replaced_not_fatal():
    frames, _ = decode_body(b"data: caf\xe9\n\n")
    assert frames[0].data == "caf\ufffd"


LINES = st.sampled_from(
    [
        b'data: {"choices": [{"index": 0, "delta": {"content": "h\xc3\xa9"}}]}',
        b"data: [DONE]",
        b": comment",
        b"event: message",
        b"id: 7",
        b"retry: 100",
        b"data",
        b"data:x",
        b"",
    ]
)
ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.booleans(),
    st.lists(st.tuples(LINES, ENDS), max_size=30),
    st.lists(st.integers(min_value=0, max_value=2000), max_size=40),
)
def test_resplitting_never_changes_the_frames(bom, lines, cuts):
    body = (b"\xef\xbb\xbf" if bom else b"") + b"".join(line + end for line, end in lines)
    whole, whole_tail = decode_body(body)
    parts, parts_tail = split_feed(body, [c % (len(body) + 1) for c in cuts])
    assert view(parts) == view(whole)
    assert (whole_tail is None) == (parts_tail is None)
    if whole_tail is not None:
        assert (whole_tail.offset, whole_tail.pending) == (parts_tail.offset, parts_tail.pending)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=10))
def test_any_bytes_decode_the_same_however_split(body, cuts):
    whole, _ = decode_body(body)
    parts, _ = split_feed(body, [c % (len(body) + 1) for c in cuts])
    assert view(parts) == view(whole)


def test_one_large_event_over_many_reads():
    # a 2 MB event in 4 KiB reads: one frame spanning every read, its text whole; cut
    # before its end, the whole unfinished event is the truncation
    text = '{"choices": [{"index": 0, "delta": {"content": "' + "x" * 2_000_000 + '"}}]}'
    body = b"data: " + text.encode() + b"\n\ndata: [DONE]\n\n"
    reads = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    decoder = SseDecoder()
    frames = [f for r in reads for f in decoder.feed(r)]
    assert [f.data for f in frames] == [text, "[DONE]"]
    first = frames[0]
    assert (first.first_read, first.start, first.end) == (0, 0, len(text) + 8)
    assert first.last_read == (len(text) + 7) // 4096  # the read holding its last LF
    decoder = SseDecoder()
    for r in reads[:-2]:
        assert decoder.feed(r) == []
    tail = decoder.finish()
    assert (
        tail is not None
        and tail.offset == 0
        and tail.pending == body[: 4096 * (len(reads) - 2)].decode()
    )


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.booleans(),
    st.lists(st.tuples(LINES, ENDS), max_size=30),
    st.lists(st.integers(min_value=0, max_value=2000), max_size=20),
    st.integers(min_value=0),
)
def test_a_copied_decoder_goes_on_as_the_original_would(bom, lines, cuts, at):
    # the replay's snapshots: a copy taken between any two reads, fed the reads after it
    # once the original has gone on with them, gives the original's frames and tail
    body = (b"\xef\xbb\xbf" if bom else b"") + b"".join(line + end for line, end in lines)
    bounds = sorted({c % (len(body) + 1) for c in cuts} | {0, len(body)})
    reads = [body[a:b] for a, b in itertools.pairwise(bounds)]
    at %= len(reads) + 1
    decoder = SseDecoder()
    for r in reads[:at]:
        decoder.feed(r, 1)
    snapshot = decoder.copy()
    theirs = [f for r in reads[at:] for f in decoder.feed(r, 2)]
    tail = decoder.finish()
    ours = [f for r in reads[at:] for f in snapshot.feed(r, 2)]
    assert view(ours) == view(theirs)
    mine = snapshot.finish()
    assert (mine and (mine.offset, mine.pending)) == (tail and (tail.offset, tail.pending))


_PIECES = st.sampled_from(
    [b"data: {}", b"data:x", b"data", b"data: \xff", b"", b": c", b"event: e", b"\xef\xbb\xbf"]
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(_PIECES, max_size=10),
    end=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    tail=st.sampled_from([b"", b"data: cut"]),
)
def test_plain_datas_is_the_decoders_datas_or_declines(lines, end, tail):
    """The quick split of a plain body gives exactly the data the decoder dispatches, or
    None (and it never declines the plain form)."""
    from streamscope.framing.sse import plain_datas

    body = end.join(lines) + (end if lines else b"") + tail
    got = plain_datas(body)
    frames, _ = decode_body(body)
    if got is not None:
        assert got == [f.data for f in frames]
    plain = all(line.startswith(b"data:") and line != b"data: \xff" for line in lines[0::2])
    if end == b"\n" and plain and not any(lines[1::2]) and len(lines) % 2 == 0:
        assert got is not None


EVENT_NAMES = st.sampled_from(
    [None, b"message_start", b"content_block_delta", b"", b"a:b", b"caf\xc3\xa9", b"x\xff"]
)
DATAS = st.sampled_from(
    [b'{"type": "ping"}', b"[DONE]", b"", b"not json", b'{"a": "\xc3\xa9"}', b'{"a": "\xff"}']
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(EVENT_NAMES, DATAS), max_size=20))
def test_one_event_per_read_decodes_as_the_whole_body_does(events):
    """The fast path for a read that is exactly one event (`data:`, or Anthropic's
    `event:` line then `data:`) gives the frames the line-by-line path gives."""
    reads = [
        (b"event: " + n + b"\n" if n is not None else b"") + b"data: " + d + b"\n\n"
        for n, d in events
    ]
    whole, _ = decode_body(b"".join(reads))
    cuts = list(itertools.accumulate(len(r) for r in reads))
    parts, _ = split_feed(b"".join(reads), cuts)
    assert view(parts) == view(whole)
    assert [(f.payload, f.bad_utf8) for f in parts] == [(f.payload, f.bad_utf8) for f in whole]
