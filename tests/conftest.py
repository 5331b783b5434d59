"""Fixtures shared by the recorder's test files."""

from __future__ import annotations

import gc

import pytest

from .upstream import Upstream as StandIn


@pytest.fixture(scope="session")
def upstream():
    """The stand-in provider on 127.0.0.1, shared by every recorder test."""
    with StandIn() as up:
        yield up


@pytest.fixture(scope="session")
def together(tmp_path_factory):
    """Batches of exported modules, each run once a session by one pytest (together.py)."""
    from .together import Together, shared_root

    return Together(shared_root(tmp_path_factory))


def pytest_collection_modifyitems(items) -> None:
    """The slow tests first (in their order, then the rest in theirs). xdist's work
    stealing hands each worker half the list and then moves tests by count, not time: the
    processes, real SDKs and the TUI at the end of the list (test_tui, the recorders) left
    one core running the last giants while the other sat idle. First, they are done while
    the fast tests are still there to balance the two."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish() -> None:
    """Garbage collected once, then what is left frozen: at its end pytest collects five
    times over to report what finalizers raise, and each collection walked every object a
    worker still holds (imported SDKs, cached analyses), 1.4 s a process. The first
    collection here reports as theirs would; what their later ones find (made by
    finalizers) is new, so not frozen."""
    gc.collect()
    gc.freeze()
