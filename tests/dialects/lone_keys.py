"""Keys pydantic cannot write, for the differential tests of the SDK emulations.

A key holding a lone surrogate (JSON sends it as an escape, "\\ud800": Python's json reads
it, orjson refuses it) goes into the SDK's model as it was sent; the first `to_dict()` of a
model holding it raises UnicodeEncodeError. Each dialect's tests say where its SDK dumps
models; these are the keys and the edits they share."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from streamscope.core.calls import StrategyError

LONE = "\ud800"
# keys for random streams: lone surrogates (alone, among other characters, a run of them)
# and keys that do encode (an emoji's pair, an accent)
KEYS = [LONE, "a\udc00", "\udfff\ud800", "é\ud83d", "\ud83d\ude00", "é"]


def encode_error(key: str = LONE) -> str:
    """The error a strategy reports when pydantic cannot write `key`."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"UnicodeEncodeError: {exc}"
    raise AssertionError(key)


def with_key(d: dict, key: str = LONE) -> dict:
    """`d` with `key` put first (the keys in the order sent decide which one raises)."""
    return {key: 1, **d}


def objects(value: Any, out: list[dict] | None = None) -> list[dict]:
    """Every object in `value`, itself first."""
    out = [] if out is None else out
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            objects(v, out)
    elif isinstance(value, list):
        for v in value:
            objects(v, out)
    return out


def put_key(draw: st.DrawFn, value: Any) -> None:
    """Give one object in `value`, drawn, a key drawn from KEYS, first or last."""
    where = draw(st.sampled_from(objects(value)))
    key = draw(st.sampled_from(KEYS))
    where[key] = draw(st.sampled_from([1, None, "x", {"a": 1}]))
    if draw(st.booleans()):  # first, not last
        value = where.pop(key)
        rest = dict(where)
        where.clear()
        where.update({key: value, **rest})


def says(got: object, frame: int | None) -> None:
    """A strategy's answer `got` is calls (`frame` None), or the error pydantic raises on
    LONE at `frame`."""
    if frame is None:
        assert isinstance(got, list), got
    else:
        assert got == StrategyError(encode_error(), frame)
