"""`record`: a dataclass that costs a fraction of one to define.

`@dataclass` writes the source of `__init__`, `__repr__`, `__eq__` (and `__hash__`,
`__setattr__`, `__delattr__` for a frozen class) and compiles each apart: about 0.2 ms a
class, and streamscope defines 160 of them, so that compiling alone was a third of
every command's start-up. A record is a real dataclass (`fields`, `replace`, `asdict`
work on it), but dataclass writes none of its methods: `record` compiles `__init__`,
`__eq__` and `__hash__` as dataclass would write them, in one compile a class, and every
record shares one `__repr__` (and, frozen, one `__setattr__` and `__delattr__`).

    @record(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0

Parameters: `frozen`, `slots`, `eq` as dataclass takes them (InitVar, `kw_only` and
`order` are dataclass's alone).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError
from typing import TYPE_CHECKING, Any, TypeVar, overload

T = TypeVar("T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # it marks `record` for type checkers alone

    def dataclass_transform(**_: Any) -> Callable[[T], T]:
        return lambda f: f


# Marks an argument left to its default factory (a factory runs once per instance).
_FACTORY = object()


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__record_repr__)
    return f"{type(self).__qualname__}({shown})"


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[Any]:
    # copy and pickle set a slotted object's state with setattr, which a frozen one refuses
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=True):
        object.__setattr__(self, f.name, value)


def _methods(
    cls: type, fields: tuple[Field[Any], ...], frozen: bool, wanted: set[str]
) -> dict[str, Callable[..., Any]]:
    """The `wanted` ones of `__init__`, `__eq__`, `__hash__` as dataclass writes them,
    compiled at once (one compile per class is what `record` saves on)."""
    names: dict[str, Any] = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
    source = []
    if "__init__" in wanted:
        params, body = [], []
        for f in fields:
            name = f.name
            if f.default is not MISSING:
                names[f"_d_{name}"] = f.default
                param, value = f"{name}=_d_{name}", name if f.init else f"_d_{name}"
            elif f.default_factory is not MISSING:
                names[f"_f_{name}"] = f.default_factory
                param = f"{name}=_FACTORY"
                value = f"_f_{name}() if {name} is _FACTORY else {name}"
                value = value if f.init else f"_f_{name}()"
            elif f.init:
                param, value = name, name
            else:
                continue  # no default and not an argument: left unset, as dataclass does
            if f.init:
                params.append(param)
            body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
        if hasattr(cls, "__post_init__"):
            body.append("self.__post_init__()")
        source.append(f"def __init__(self, {', '.join(params)}):")
        source += [f"  {line}" for line in body or ["pass"]]
    compared = [f.name for f in fields if f.compare]
    mine = "".join(f"self.{name}," for name in compared)
    if "__eq__" in wanted:
        theirs = "".join(f"other.{name}," for name in compared)
        source += [
            "def __eq__(self, other):",
            "  if other.__class__ is self.__class__:",
            f"    return ({mine}) == ({theirs})",
            "  return NotImplemented",
        ]
    if "__hash__" in wanted:
        source += ["def __hash__(self):", f"  return hash(({mine}))"]
    exec("\n".join(source), names)  # noqa: S102 - built from the class's own field names
    made = {name: names[name] for name in wanted}
    for name, fn in made.items():
        fn.__qualname__ = f"{cls.__qualname__}.{name}"
    return made


@overload
@dataclass_transform(field_specifiers=(dataclasses.field, Field))
def record(cls: T, /) -> T: ...
@overload
def record(*, frozen: bool = ..., slots: bool = ..., eq: bool = ...) -> Callable[[T], T]: ...


def record(
    cls: T | None = None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True
) -> T | Callable[[T], T]:
    """Make `cls` a dataclass whose methods are shared (the module's docstring)."""

    def wrap(cls: T) -> T:
        own = set(vars(cls))  # methods the class writes itself, which dataclass keeps too
        # Python sets `__hash__ = None` beside a class's own `__eq__`: that one is no choice
        explicit_hash = "__hash__" in own and not (
            vars(cls)["__hash__"] is None and "__eq__" in own
        )
        made = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)  # type: ignore[call-overload]
        fields = dataclasses.fields(made)
        if any("InitVar" in str(f.type) for f in made.__dataclass_fields__.values()):
            raise TypeError(f"{made.__qualname__}: a record takes no InitVar")
        shared: dict[str, Any] = {"__record_repr__": tuple(f.name for f in fields if f.repr)}
        if "__repr__" not in own:
            shared["__repr__"] = _repr
        wanted = {"__init__"} - own
        if eq:
            wanted |= {"__eq__"} - own
            if not explicit_hash:
                # as dataclass: a frozen record hashes its fields, a mutable one is unhashable
                wanted |= {"__hash__"} if frozen else set()
                shared["__hash__"] = None
        shared.update(_methods(made, fields, frozen, wanted))
        if frozen:
            shared.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
            if slots:
                shared.update(__getstate__=_getstate, __setstate__=_setstate)
        for name, value in shared.items():
            setattr(made, name, value)
        return made  # type: ignore[no-any-return]

    return wrap if cls is None else wrap(cls)
