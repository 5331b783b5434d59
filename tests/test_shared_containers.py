"""The containers engine copies share (core/shared.py): whatever writes and copies are
made, in any order, each copy reads exactly as a plain list / dict given the same
operations would, and none sees another's writes."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.shared import ChunkedList, LayeredDict, LayeredSet

# (which copy, what it does, an int argument): indices are taken modulo the sizes
ops = st.lists(
    st.tuples(
        st.integers(0, 7), st.sampled_from(["add", "set", "copy", "many", "assign"]), st.integers()
    ),
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_chunked_list_copies_read_as_lists(steps: list[tuple[int, str, int]]) -> None:
    family: list[tuple[ChunkedList[int], list[int]]] = [(ChunkedList(), [])]
    for who, op, n in steps:
        mine, model = family[who % len(family)]
        if op == "add":
            mine.append(n)
            model.append(n)
        elif op == "many":  # across chunk boundaries
            more = list(range(n % 600))
            mine.extend(more)
            model.extend(more)
        elif op == "set" and model:
            at = n % (2 * len(model)) - len(model)  # negative indices too
            mine[at] = n
            model[at] = n
        elif op == "copy":
            family.append((mine.copy(), list(model)))
        elif op == "assign":  # every item again, as show_dirty takes a list back
            model[:] = [v + n for v in model]
            mine.assign(list(model))
        for chunked, plain in family:
            assert len(chunked) == len(plain)
            assert chunked.tolist() == plain == list(chunked)
    for chunked, plain in family:
        if plain:
            assert chunked[-1] == plain[-1] and chunked[0] == plain[0]
            assert chunked[1:3] == plain[1:3]


def test_chunked_list_says_out_of_range_as_a_list() -> None:
    items = ChunkedList(range(300))
    for bad in (300, -301):
        try:
            items[bad]
        except IndexError:
            pass
        else:
            raise AssertionError(f"{bad} read")


def test_a_copy_holds_the_chunks_not_the_items() -> None:
    """The point of it: a copy of 20,000 items is a list of about 80 chunks, and a
    write copies one chunk."""
    items = ChunkedList(range(20_000))
    copy = items.copy()
    assert len(copy._chunks) == math.ceil(20_000 / 256)
    assert sum(copy._chunks[i] is items._chunks[i] for i in range(len(copy._chunks))) == 79
    copy[5_000] = -1
    shared = sum(copy._chunks[i] is items._chunks[i] for i in range(len(copy._chunks)))
    assert shared == 78 and items[5_000] == 5_000


keys = st.one_of(
    st.integers(-5, 40), st.text(max_size=2), st.tuples(st.integers(0, 2), st.integers(0, 9))
)
dict_ops = st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from(["set", "set", "copy"]), keys, st.integers()),
    max_size=150,
)


@settings(max_examples=150, deadline=None)
@given(dict_ops)
def test_layered_dict_copies_read_as_dicts(steps: list[tuple[int, str, object, int]]) -> None:
    family: list[tuple[LayeredDict[object, int], dict[object, int]]] = [(LayeredDict(), {})]
    for who, op, key, value in steps:
        mine, model = family[who % len(family)]
        if op == "set":
            mine[key] = value
            model[key] = value
        else:
            family.append((mine.copy(), dict(model)))
        for layered, plain in family:
            assert layered.get(key) == plain.get(key)
            assert (key in layered) == (key in plain)
    for layered, plain in family:
        # the order keys were first set in, as a dict's
        assert list(layered) == list(plain)
        assert list(layered.items()) == list(plain.items())
        assert len(layered) == len(plain) and bool(layered) == bool(plain)
        for key, value in plain.items():
            assert layered[key] == value


def test_layers_stay_few_however_many_copies() -> None:
    """A lookup reads every layer: 512 copies of a growing map leave about log2 of its
    entries, not one per copy."""
    live: LayeredDict[int, int] = LayeredDict()
    kept = []
    for n in range(20_000):
        live[n] = n
        if n % 39 == 0:
            kept.append(live.copy())
    assert len(kept) > 500
    assert len(live._layers) <= math.log2(20_000) + 1
    assert all(live[n] == n for n in range(0, 20_000, 97))
    assert kept[100].get(19_999) is None and kept[-1][19_000] == 19_000


def test_missing_key_raises_key_error() -> None:
    d: LayeredDict[str, int] = LayeredDict()
    d["a"] = 1
    d.copy()
    try:
        d["b"]
    except KeyError as e:
        assert e.args == ("b",)
    else:
        raise AssertionError("read a key never set")


def test_layered_set_copies_keep_their_own_members() -> None:
    s: LayeredSet[int] = LayeredSet([1, 2])
    t = s.copy()
    t.add(3)
    s.update([4])
    assert sorted(s) == [1, 2, 4] and sorted(t) == [1, 2, 3]
    assert 3 in t and 3 not in s and len(t) == 3
