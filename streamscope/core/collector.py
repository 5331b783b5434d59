"""Work done with Python's cyclic garbage collector paused, then left as it was.

Where streamscope builds many objects that make no reference cycles (a minimiser's
candidates, an engine's copy), a full pass of the collector walks them all and finds
nothing: a tenth of a minimiser's time, and the replay's copies of an engine at 20,000
calls took 30 ms or, when a pass fell in them, 300-550 ms."""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


@contextlib.contextmanager
def paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def collector_paused(work: Callable[P, T]) -> Callable[P, T]:
    """`work` run with the collector paused (`paused`)."""

    @functools.wraps(work)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        with paused():
            return work(*args, **kwargs)

    return run
