"""The minimiser's output, pinned byte for byte on many streams (see minimize_cases.py):
making it faster must not change what it finds."""

from __future__ import annotations

import orjson
import pytest

from streamscope.core.frames import parse_payload
from streamscope.dialects.chat.minimize import minimize

from .minimize_cases import GOLDEN, Case, cases, digest

CASES = list(cases())
PINNED = orjson.loads(GOLDEN.read_bytes())


def test_every_case_is_pinned():
    assert sorted(c.name for c in CASES) == sorted(PINNED)
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_minimal_result_is_unchanged(case: Case):
    assert digest(minimize(case.frames, case.tools, **case.options)) == PINNED[case.name]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES[::6], ids=lambda c: c.name)
def test_parsed_payloads_handed_in_change_nothing(case: Case):
    """export hands the minimiser the payloads its reader parsed (one per distinct text,
    shared by equal ones): the same result."""
    known: dict[str, object] = {}
    payloads = [known.setdefault(f, parse_payload(f)) for f in case.frames]
    got = minimize(case.frames, case.tools, payloads=payloads, **case.options)
    assert digest(got) == PINNED[case.name]
