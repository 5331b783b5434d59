"""The NDJSON framing (a chunk log is one): a line a frame, however the reads cut them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.frames import INVALID
from streamscope.framing.ndjson import LineDecoder

from .laws import copy_carries_on, read_all, rechunked_alike

BODY = b'{"message":{"content":"a"},"done":false}\r\n\n[1]\nnot json\n{"done":true}'


def test_a_line_a_frame_and_the_last_line_without_newline():
    frames, end = read_all(LineDecoder, [BODY])
    assert [f.payload for f in frames][:2] == [{"message": {"content": "a"}, "done": False}, [1]]
    assert frames[2].payload is INVALID and frames[3].payload == {"done": True} and end is None


def test_a_line_cut_in_the_middle_is_truncation():
    frames, end = read_all(LineDecoder, [BODY[:-5]])
    assert len(frames) == 3 and end is not None and end.offset == BODY.rindex(b"\n") + 1


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([BODY, BODY[:-5], b"\xef\xbb\xbf{}\n"]),
    st.lists(st.integers(0, 90), max_size=8),
)
def test_rechunking_gives_the_same_frames(body, points):
    rechunked_alike(LineDecoder, body, points)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 90), max_size=6), st.integers(0, 6))
def test_a_copy_carries_on_as_the_original(points, at):
    copy_carries_on(LineDecoder, BODY, points, at)
