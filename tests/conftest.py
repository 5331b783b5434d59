"""Fixtures shared by the recorder's test files."""

from __future__ import annotations

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
