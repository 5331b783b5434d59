"""The JSON-array framing (Gemini without alt=sse): one frame per element, read
incrementally; bad arrays are findings at their frame, never an exception or a hang."""

from __future__ import annotations

import gzip
import itertools
import time

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.frames import INVALID
from streamscope.framing.json_array import ArrayClose, JsonArrayDecoder, Unclosed

from .laws import copy_carries_on, read_all, rechunked_alike

# shaped as Gemini sends it: pretty-printed elements, "\n,\r\n" between, "\n]" at the end
ELEMENTS = [
    {
        "candidates": [
            {
                "content": {"parts": [{"text": 'Hi {there}] "quoted" \\ é'}], "role": "model"},
                "index": 0,
            }
        ]
    },
    {
        "candidates": [
            {
                "content": {
                    "parts": [{"functionCall": {"name": "f", "args": {"a": [1, {"b": "}"}]}}}],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ]
    },
    {"usageMetadata": {"promptTokenCount": 3}, "modelVersion": "gemini-2.0-flash"},
]
BODY = (
    b"[" + b"\n,\r\n".join(orjson.dumps(e, option=orjson.OPT_INDENT_2) for e in ELEMENTS) + b"\n]"
)
ODD = b'[{"a": 1}, 3, "s\\"]", [[]], {"b": tru}, {"c": 2} {"d": 3},, {"e": 4}]] tail'


def test_one_frame_per_element_with_its_byte_span():
    frames, end = read_all(JsonArrayDecoder, [BODY])
    assert [f.payload for f in frames] == ELEMENTS and end is None
    for f in frames:
        assert orjson.loads(BODY[f.start : f.end]) == f.payload and f.invalid is None


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([BODY, ODD, BODY[:-9], b" \xef\xbb\xbf[ ]", b"[1, 2", b'["a\\']),
    st.lists(st.integers(0, 400), max_size=8),
)
def test_rechunking_gives_the_same_frames(body, points):
    rechunked_alike(JsonArrayDecoder, body, points)


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from([BODY, ODD, BODY[:-40]]),
    st.lists(st.integers(0, 400), max_size=6),
    st.integers(0, 6),
)
def test_a_copy_carries_on_as_the_original(body, points, at):
    copy_carries_on(JsonArrayDecoder, body, points, at)


def test_bad_elements_are_frames_that_say_what_is_wrong():
    frames, end = read_all(JsonArrayDecoder, [ODD])
    said = [(f.data, f.invalid) for f in frames]
    assert said[0] == ('{"a": 1}', None)
    assert said[1] == ("3", "the element is a JSON number, not an object")
    assert said[2][1] == "the element is a JSON string, not an object"
    assert said[3][1] == "the element is a JSON array, not an object"
    assert said[4] == ('{"b": tru}', "the element is not JSON")
    assert said[6][1].startswith("no comma before it")
    assert said[7][1].startswith("2 commas before it")
    assert frames[-1].invalid.startswith("6 bytes after the JSON array's closing ]")
    assert all(f.payload is INVALID or not isinstance(f.payload, dict) for f in frames if f.invalid)
    assert end is None


def test_an_array_never_closed_is_truncation():
    frames, end = read_all(JsonArrayDecoder, [BODY[:-2]])
    assert len(frames) == 3 and isinstance(end, Unclosed)
    frames, end = read_all(JsonArrayDecoder, [BODY[:-30]])
    assert len(frames) == 2 and end is not None and not isinstance(end, Unclosed)
    assert end.offset == BODY.index(b"{", frames[-1].end)


def test_many_elements_and_deep_nesting_stay_linear():
    many = b"[" + b",".join([b'{"candidates": []}'] * 100_000) + b"]"
    start = time.perf_counter()
    frames, end = read_all(
        JsonArrayDecoder, [many[k : k + 65536] for k in range(0, len(many), 65536)]
    )
    assert len(frames) == 100_000 and end is None
    deep = (
        b"["
        + b'{"a":' * 10_000
        + b"1"
        + b"}" * 10_000
        + b","
        + b"[" * 10_000
        + b"]" * 10_000
        + b"]"
    )
    frames, end = read_all(JsonArrayDecoder, [deep[k : k + 7] for k in range(0, len(deep), 7)])
    assert len(frames) == 2 and end is None
    assert frames[0].payload is INVALID and frames[0].end - frames[0].start == 60_001
    assert time.perf_counter() - start < 20


def test_a_gzip_body_is_read_after_decompression(tmp_path):
    path = tmp_path / "stream.json.gz"
    path.write_bytes(gzip.compress(BODY))
    from streamscope.analysis import analyze

    (stream,) = analyze(str(path)).streams
    assert stream.dialect == "gemini" and stream.framing == "json-array" and stream.frames == 3


def _close_read(body: bytes, points: list[int]) -> int | None:
    """The read (its index) after which ArrayClose first says the array closed."""
    cuts = sorted({min(p, len(body)) for p in points} | {0, len(body)})
    watch = ArrayClose()
    for k, (a, b) in enumerate(itertools.pairwise(cuts)):
        if watch.closed(body[a:b]):
            return k
    return None


_TEXT = st.text(alphabet='ab[]{}"\\,\n', max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.recursive(
            _TEXT | st.integers(-9, 9),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
            max_leaves=8,
        ).map(lambda v: {"v": v}),
        max_size=4,
    ),
    st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_the_closing_bracket_is_seen_in_the_read_that_brings_it(elements, points):
    """However the reads fall, brackets and quotes inside strings included: closed first
    after the read holding the array's closing ], never before."""
    body = b"[" + b"\n,\r\n".join(orjson.dumps(e) for e in elements) + b"\n]"
    cuts = sorted({min(p, len(body)) for p in points} | {0, len(body)})
    last = len(body) - 1  # the closing ]
    expected = next(k for k, (a, b) in enumerate(itertools.pairwise(cuts)) if a <= last < b)
    assert _close_read(body, points) == expected
    assert _close_read(body[:-1], points) is None  # cut before it: never closed


def test_a_body_that_never_opens_an_array_never_closes():
    assert _close_read(b"", [1]) is None
    assert _close_read(b"  \r\n", [1, 2]) is None
    assert _close_read(BODY, list(range(len(BODY)))) == len(BODY) - 1


def test_an_element_a_read_gives_the_frames_of_one_read():
    """The reads as Gemini sends them (`[{...}`, `\\n,\\r\\n{...}`, ..., `\\n]`: the
    decoder's one-parse path) frame as the body read whole, spans and reads aside."""
    elements = [orjson.dumps(e, option=orjson.OPT_INDENT_2) for e in ELEMENTS]
    reads = [b"[" + elements[0], *(b"\n,\r\n" + e for e in elements[1:]), b"\n]"]
    bad = [*reads[:2], b",\r\n" + elements[2], b"\n,\r\n[1]", b'\n,\r\n{"a": tru}', b"]"]
    for body in (reads, bad):
        frames, end = read_all(JsonArrayDecoder, body)
        whole, whole_end = read_all(JsonArrayDecoder, [b"".join(body)])
        key = [(f.data, f.payload, f.start, f.end, f.invalid) for f in frames]
        assert key == [(f.data, f.payload, f.start, f.end, f.invalid) for f in whole]
        assert end == whole_end
    assert [f.payload for f in read_all(JsonArrayDecoder, reads)[0]] == ELEMENTS
