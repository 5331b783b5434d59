"""`record` (streamscope/core/record.py) behaves as the dataclass it replaces: the same
`__init__`, repr, equality, hashing, immutability, copies and pickles, for any fields."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
from dataclasses import FrozenInstanceError, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.core.record import record

ROOT = Path(__file__).resolve().parent.parent

values = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.integers(), st.floats(allow_nan=True)),
)
# Fields, in order: some required, then some with a default or a default factory.
specs = st.tuples(st.integers(0, 3), st.lists(st.sampled_from(["default", "factory"]), max_size=3))
options = st.fixed_dictionaries(
    {"frozen": st.booleans(), "slots": st.booleans(), "eq": st.booleans()}
)


def pair(spec: tuple[int, list[str]], opts: dict[str, bool]) -> tuple[type, type]:
    """The same class made by dataclass and by record."""
    required, defaulted = spec
    names = [f"f{i}" for i in range(required + len(defaulted))]

    def made(decorate: Any) -> type:
        body: dict[str, Any] = {"__annotations__": {n: "object" for n in names}}
        for name, how in zip(names[required:], defaulted, strict=True):
            body[name] = 7 if how == "default" else field(default_factory=list)
        return decorate(type("Point", (), body))  # type: ignore[no-any-return]

    return made(dataclasses.dataclass(**opts)), made(record(**opts))


def outcome(do: Any, *args: Any) -> object:
    """What a call returns, or the type of what it raises."""
    try:
        return do(*args)
    except Exception as e:  # noqa: BLE001 - the kind of failure is what is compared
        return type(e)


@given(specs, options, st.data())
def test_a_record_behaves_as_its_dataclass(spec: Any, opts: dict[str, bool], data: Any) -> None:
    made_by_dataclass, made_by_record = pair(spec, opts)
    args = data.draw(st.lists(values, min_size=spec[0], max_size=spec[0] + len(spec[1])))
    other = data.draw(st.lists(values, min_size=spec[0], max_size=spec[0] + len(spec[1])))
    same = [copy.deepcopy(v) for v in args]
    d, r = made_by_dataclass(*args), made_by_record(*same)
    d2, r2 = made_by_dataclass(*other), made_by_record(*copy.deepcopy(other))
    assert repr(r) == repr(d)
    assert repr(dataclasses.asdict(r)) == repr(dataclasses.asdict(d))
    assert (r == r) == (d == d)
    assert (r == r2) == (d == d2)
    assert (r == made_by_record(*copy.deepcopy(args))) == (d == made_by_dataclass(*args))
    assert outcome(lambda: hash(r) == hash(r)) == outcome(lambda: hash(d) == hash(d))
    for copied in (copy.copy(r), copy.deepcopy(r), dataclasses.replace(r)):
        assert repr(copied) == repr(r)
    if args:  # changed in place (a frozen one refuses), each on an instance of its own
        for change in (lambda x: setattr(x, "f0", 1), lambda x: delattr(x, "f0")):
            mine, theirs = made_by_record(*args), made_by_dataclass(*args)
            assert outcome(change, mine) == outcome(change, theirs)
    for k, how in enumerate(spec[1], spec[0]):
        if how == "factory":  # a factory runs for each instance: none shares what it made
            first, again = made_by_record(*args[: spec[0]]), made_by_record(*args[: spec[0]])
            assert getattr(first, f"f{k}") == [] and getattr(first, f"f{k}") is not getattr(
                again, f"f{k}"
            )


@record(frozen=True, slots=True)
class Frozen:
    name: str
    parts: tuple[int, ...] = ()


@record(slots=True)
class Mutable:
    name: str
    parts: list[int] = field(default_factory=list)


def test_records_pickle_and_hash_by_value() -> None:
    a = Frozen("a", (1, 2))
    assert pickle.loads(pickle.dumps(a)) == a
    assert {Frozen("a", (1, 2)): 1}[a] == 1
    b = Mutable("b", [1])
    assert pickle.loads(pickle.dumps(b)) == b
    with pytest.raises(TypeError):
        hash(b)
    with pytest.raises(FrozenInstanceError, match="'name'"):
        a.name = "z"  # type: ignore[misc]


def test_a_record_that_holds_itself_shows_dots() -> None:
    m = Mutable("m")
    m.parts.append(m)  # type: ignore[arg-type]
    assert repr(m) == "Mutable(name='m', parts=[...])"


def test_the_classes_a_user_waits_for_are_records() -> None:
    """A dataclass compiles five methods where a record compiles one: every command's
    start-up pays for each one defined (docs/performance.md)."""
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "streamscope").rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*@(dataclasses\.)?dataclass\b", line)
    ]
    assert found == []
