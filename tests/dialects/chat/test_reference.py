"""The accumulator exported pytest modules embed agrees with the robust reading."""

from __future__ import annotations

import pytest

from streamscope.dialects.chat.appendix_a import FIXTURES
from streamscope.dialects.chat.reference import accumulate, source

from ...helpers import run


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_reference_matches_robust_on_every_fixture(name):
    chunks = FIXTURES[name]
    robust = [(c.id, c.name, c.arguments) for c in run(chunks).tool_calls]
    got = [(c["id"], c["name"], c["arguments"]) for c in accumulate(chunks)]
    assert got == robust


def test_the_embedded_source_runs_alone():
    scope: dict = {}
    exec(source(), scope)
    assert scope["accumulate"](FIXTURES["Q3"])[0]["id"] == "call_a"
