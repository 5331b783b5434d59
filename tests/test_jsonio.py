"""The one home of JSON read from a stream and JSON written (streamscope/core/jsonio.py):
what Python's json reads is read (a lone surrogate escape, a long integer), what JSON
forbids stays refused, and whatever was read can be written, a terminal's JSON with its
C1 controls and bidi overrides escaped."""

from __future__ import annotations

import gc
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.frames import INVALID, parse_payload
from streamscope.core.jsonio import REFUSED, JSONDecodeError, dumps, exact, loads
from streamscope.text import CONTROL_IN_JSON


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"\\ud800"', "\ud800"),  # half an emoji, as a model cut it
        ('{"t": "\\udc00x"}', {"t": "\udc00x"}),
        ('["\\ud83d\\ude00"]', ["\U0001f600"]),  # a whole pair: orjson's own reading
        ("1" * 400, int("1" * 400)),  # past a double: orjson refuses it
        ('{"n": -1, "s": "\\ud800"}', {"n": -1, "s": "\ud800"}),
    ],
)
def test_reads_what_pythons_json_reads(text: str, value: object) -> None:
    assert loads(text) == value
    assert loads(text.encode()) == value
    assert parse_payload(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "[NaN]",
        '[Infinity, "\\ud800"]',
        '["\\ud800", -Infinity]',
        "1e400",
        '["\\ud800", 1' + "0" * 400 + ".5]",  # a float that only reads as infinity
        "[" * 1025 + "]" * 1025,  # past orjson's nesting limit
        '["\\ud800", ' + "[" * 1100 + "]" * 1101,  # ... behind a surrogate
        "[DONE]",
        '{"a": "\\ud800"',
        "\ufeff{}",
    ],
)
def test_refuses_what_json_forbids(text: str) -> None:
    with pytest.raises(JSONDecodeError):
        loads(text)
    assert parse_payload(text) is INVALID


def test_a_refusal_leaves_no_reference_cycle() -> None:
    # every stream's `[DONE]` is refused: an engine dropped must go at once (no garbage
    # for the cyclic collector, which the minimiser's hundreds of engines would make)
    gc.collect()
    gc.disable()
    try:
        for text in ("[DONE]", '"\\ud800', "[NaN]", b"\xff", "[" * 1025):
            assert parse_payload(text) is INVALID
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_bytes_are_utf8_or_nothing() -> None:
    # the stdlib would read UTF-16 (and encoded surrogates): orjson does not, nor loads
    with pytest.raises(JSONDecodeError):
        loads('"\\ud800"'.encode("utf-16"))
    with pytest.raises(JSONDecodeError):
        loads(b'"\xed\xa0\x80"')


def test_writes_what_orjson_refuses() -> None:
    doc = {"s": "\ud800", "n": 2**70, "deep": [[[[[]]]]], "nan": float("nan")}
    out = dumps(doc)
    assert out == b'{"s":"\\ud800","n":1180591620717411303424,"deep":[[[[[]]]]],"nan":null}'
    assert json.loads(out) == {**doc, "nan": None}
    deep: list[object] = []
    for _ in range(300):  # past orjson's 255 levels
        deep = [deep]
    assert json.loads(dumps(deep)) == deep
    assert dumps({"s": "é\ud800"}, indent=True) == b'{\n  "s": "\xc3\xa9\\ud800"\n}'
    assert dumps({"b": 1, "a": "\ud800"}, sort_keys=True, newline=True) == (
        b'{"a":"\\ud800","b":1}\n'
    )
    with pytest.raises(TypeError):
        dumps({"x": object()})


def test_orjson_layout_kept() -> None:
    doc = {"a": [1, 2.5, None, True], "b": {"c": "é"}, "d": []}
    assert dumps(doc) == orjson.dumps(doc)
    assert dumps(doc, indent=True) == orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    assert dumps({**doc, "big": 2**70}, indent=True).replace(
        b"1180591620717411303424", b"0"
    ) == orjson.dumps({**doc, "big": 0}, option=orjson.OPT_INDENT_2)


def test_shown_escapes_what_would_reach_a_terminal_raw() -> None:
    value = {"\u202ename": "a\x7fb\x85c\x9f\u202a\u2066\u2069d", "é": "\x1b"}
    out = dumps(value, shown=True)
    assert out == (
        b'{"\\u202ename":"a\\u007fb\\u0085c\\u009f\\u202a\\u2066\\u2069d","\xc3\xa9":"\\u001b"}'
    )
    assert json.loads(out) == value
    assert dumps(value) == orjson.dumps(value)  # a file keeps them raw


# Strings that hold what the helpers must escape or fall back on, among ordinary text.
_AWKWARD = st.sampled_from(
    ["\x7f", "\x80", "\x85", "\x9f", "\u202a", "\u202e", "\u2066", "\u2069", "\ud800", "\udfff"]
)
_TEXT = st.lists(st.one_of(_AWKWARD, st.characters(), st.text(max_size=4))).map("".join)
_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**80), max_value=2**80),
        st.floats(allow_nan=False, allow_infinity=False),
        _TEXT,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)


def _read_back_exactly(value: object) -> bool:
    """Whether JSON can give `value` back: not where a string holds a high surrogate
    right before a low one (two lone halves JSON writes as the one character they make
    together), nor an integer past 64 bits (which orjson reads as a float)."""
    if isinstance(value, str):
        return not any(
            "\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff"
            for a, b in zip(value, value[1:], strict=False)
        )
    if isinstance(value, int) and not isinstance(value, bool):
        return -(2**63) <= value < 2**64
    if isinstance(value, dict):
        return all(_read_back_exactly(k) and _read_back_exactly(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_read_back_exactly(v) for v in value)
    return True


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, indent=st.booleans(), shown=st.booleans())
def test_written_reads_back_the_same(value: object, indent: bool, shown: bool) -> None:
    out = dumps(value, indent=indent, shown=shown)
    text = out.decode("utf-8")  # always UTF-8: no lone surrogate is ever written raw
    assert json.loads(text) == json.loads(json.dumps(value))  # the stdlib's own reading
    if _read_back_exactly(value):
        assert loads(out) == value
    if shown:
        assert CONTROL_IN_JSON.search(text) is None


@given(n=st.integers(min_value=-(10**300), max_value=10**300))
def test_exact_gives_back_a_long_integer_as_sent(n: int) -> None:
    """`exact` is for a number orjson may have rounded: it reads one of 20 digits or
    more as written, and declines (REFUSED) text that holds none."""
    text = json.dumps({"created": n, "id": "call_1"})
    assert exact(text) == ({"created": n, "id": "call_1"} if abs(n) >= 10**19 else REFUSED)
