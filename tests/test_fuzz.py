"""Mutated inputs through every face: the only outcomes are a result or one RecordingError.

Truncations, splices, flipped bytes, values of the wrong type and values nested 300 to
1,100 levels deep, applied to the bundled recordings, SSE body, chunk log and HAR files
made from two of them (see
tests/fuzzing.py). Bounded and derandomised so that CI runs the same cases each time;
longer hunts run by hand with `python -m tests.fuzzing N SEED`.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzzing import CASES, bases, mutate, run_faces

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

REGRESSIONS = sorted(p for p in CASES.iterdir() if p.suffix in (".jsonl", ".sse", ".har"))
BASES = bases()


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.name for p in REGRESSIONS])
def test_a_file_that_once_crashed_reads_cleanly(path):
    outcome = run_faces(str(path))
    assert set(outcome.values()) <= {"ok", "RecordingError"}


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(base=st.sampled_from(BASES), seed=st.integers(0, 2**32 - 1), rounds=st.integers(1, 3))
def test_mutated_inputs_give_a_result_or_one_clean_line(tmp_path_factory, base, seed, rounds):
    name, data = base
    rng = random.Random(seed)
    for _ in range(rounds):
        data = mutate(data, rng)
    path = tmp_path_factory.mktemp("fuzz") / f"mutated-{name}"
    path.write_bytes(data)
    run_faces(str(path))  # anything but RecordingError propagates and fails the test
