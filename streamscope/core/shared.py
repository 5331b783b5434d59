"""Containers whose copies share what neither side changed since: a replay keeps dozens
of copies of an engine, and at 20,000 calls each copy of a plain list or dict of the
calls was 20,000 references made again, walked again by every young and middle pass of
the garbage collector (most of a far jump's time).

`ChunkedList` holds its items in chunks of 256: a copy copies the list of chunks, and a
write copies the one chunk it lands in, once. `LayeredDict` keeps its entries in layers:
a copy freezes the entries written since the last copy into a layer both sides share, and
each side writes to a fresh top; layers merge as they pile up (a layer at least half as
big as the one below it joins it), so a lookup reads a handful of dicts at most.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Generic, TypeVar, overload

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

_SHIFT = 8
_SIZE = 1 << _SHIFT
_MASK = _SIZE - 1
_MISSING = object()


class ChunkedList(Sequence[T]):
    """A list of appends and in-place writes whose `copy()` shares its chunks."""

    __slots__ = ("_chunks", "_mine", "_len")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._chunks: list[list[T]] = []
        self._mine = bytearray()  # per chunk: 1 where this list alone holds it
        self._len = 0
        if items:
            self.extend(items)

    def __len__(self) -> int:
        return self._len

    def _at(self, i: int) -> int:
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("ChunkedList index out of range")
        return i

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if type(i) is not int or not 0 <= i < self._len:  # (the common case first)
            if isinstance(i, slice):
                return self.tolist()[i]
            i = self._at(i)
        return self._chunks[i >> _SHIFT][i & _MASK]

    def __setitem__(self, i: int, value: T) -> None:
        if type(i) is not int or not 0 <= i < self._len:
            i = self._at(i)
        c = i >> _SHIFT
        chunk = self._chunks[c] if self._mine[c] else self._own(c)
        chunk[i & _MASK] = value

    def _own(self, c: int) -> list[T]:
        """Chunk `c`, copied first if it is shared."""
        chunk = self._chunks[c]
        if not self._mine[c]:
            chunk = self._chunks[c] = chunk[:]
            self._mine[c] = 1
        return chunk

    def append(self, value: T) -> None:
        if self._len & _MASK:
            c = self._len >> _SHIFT
            (self._chunks[c] if self._mine[c] else self._own(c)).append(value)
        else:
            self._chunks.append([value])
            self._mine.append(1)
        self._len += 1

    def extend(self, items: Iterable[T]) -> None:
        got = list(items)
        at = 0
        if self._len & _MASK and got:  # the last chunk's room first
            at = _SIZE - (self._len & _MASK)
            self._own(len(self._chunks) - 1).extend(got[:at])
        for i in range(at, len(got), _SIZE):
            self._chunks.append(got[i : i + _SIZE])
            self._mine.append(1)
        self._len += len(got)

    def assign(self, items: list[T]) -> None:
        """Hold `items` (as many as now) instead: for a change to most of the list, made
        on a plain list and taken back whole."""
        self._chunks = [items[i : i + _SIZE] for i in range(0, len(items), _SIZE)]
        self._mine = bytearray(b"\x01" * len(self._chunks))
        self._len = len(items)

    def __iter__(self) -> Iterator[T]:
        return chain.from_iterable(self._chunks)

    def tolist(self) -> list[T]:
        return list(chain.from_iterable(self._chunks))

    def __repr__(self) -> str:
        return f"ChunkedList({self.tolist()!r})"

    def copy(self) -> ChunkedList[T]:
        """A copy sharing every chunk: whichever side writes to one first copies it."""
        new = ChunkedList.__new__(ChunkedList)
        new._chunks = self._chunks[:]
        new._len = self._len
        self._mine = bytearray(len(self._chunks))
        new._mine = bytearray(len(self._chunks))
        return new


class LayeredDict(Generic[K, V]):
    """A dict of gets and sets (no deletes) whose `copy()` shares its entries. Iterates
    in the order keys were first set, as a dict does."""

    __slots__ = ("_top", "_layers")

    def __init__(self) -> None:
        self._top: dict[K, V] = {}  # the entries written since the last copy
        self._layers: tuple[dict[K, V], ...] = ()  # frozen and shared, newest first

    def get(self, key: K, default: V | None = None) -> V | None:
        value = self._top.get(key, _MISSING)
        if value is _MISSING:
            for layer in self._layers:
                value = layer.get(key, _MISSING)
                if value is not _MISSING:
                    return value  # type: ignore[return-value]
            return default
        return value  # type: ignore[return-value]

    def __getitem__(self, key: K) -> V:
        value = self.get(key, _MISSING)  # type: ignore[arg-type]
        if value is _MISSING:
            raise KeyError(key)
        return value  # type: ignore[return-value]

    def __setitem__(self, key: K, value: V) -> None:
        self._top[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._top or any(key in layer for layer in self._layers)

    def _merged(self) -> dict[K, V]:
        if not self._layers:
            return self._top
        out: dict[K, V] = {}
        for layer in reversed(self._layers):
            out.update(layer)
        out.update(self._top)
        return out

    def __len__(self) -> int:
        return len(self._merged())

    def __bool__(self) -> bool:
        return bool(self._top) or any(self._layers)

    def __iter__(self) -> Iterator[K]:
        return iter(self._merged())

    def items(self) -> Iterable[tuple[K, V]]:
        return self._merged().items()

    def __repr__(self) -> str:
        return f"LayeredDict({self._merged()!r})"

    def copy(self) -> LayeredDict[K, V]:
        """A copy sharing every entry: both sides write to a new top from here on."""
        if self._top:
            layers = [self._top, *self._layers]
            # merge while a layer is at least half the size of the one below it: the
            # sizes at least halve going up, so there are about log2(entries) layers
            while len(layers) > 1 and 2 * len(layers[0]) >= len(layers[1]):
                merged = dict(layers[1])
                merged.update(layers[0])
                layers[:2] = [merged]
            self._layers = tuple(layers)
            self._top = {}
        new = LayeredDict.__new__(LayeredDict)
        new._top = {}
        new._layers = self._layers
        return new


class LayeredSet(Generic[K]):
    """A set of adds (no removes) whose `copy()` shares its members (as LayeredDict)."""

    __slots__ = ("_keys",)

    def __init__(self, items: Iterable[K] = ()) -> None:
        self._keys: LayeredDict[K, None] = LayeredDict()
        for key in items:
            self._keys[key] = None

    def add(self, key: K) -> None:
        self._keys[key] = None

    def update(self, items: Iterable[K]) -> None:
        for key in items:
            self._keys[key] = None

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[K]:
        return iter(self._keys)

    def copy(self) -> LayeredSet[K]:
        new = LayeredSet.__new__(LayeredSet)
        new._keys = self._keys.copy()
        return new
