"""Fixtures shared by the recorder's test files."""

from __future__ import annotations

import pytest

from .upstream import Upstream as StandIn


@pytest.fixture(scope="session")
def upstream():
    """The stand-in provider on 127.0.0.1, shared by every recorder test."""
    with StandIn() as up:
        yield up
