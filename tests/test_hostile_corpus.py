"""The second hostile corpus through every face: a result or one clean line, never a
traceback, a raw control character in the text report, or a head HTTP cannot send.

Fields of the wrong type or out of range (HAR structure and values, every recording
field, keys given twice, statuses and headers), UTF-8 BOM and UTF-16 encodings, NULs,
huge numbers, lone surrogates and long lines (tests/hostile.py), applied to the bundled
samples and HAR files made from two of them. Bounded and derandomised, lines here are
256 KiB at most; hunts with 10 MB lines run by hand: `python -m tests.hostile N SEED`.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzzing import bases, run_faces
from .hostile import mutate

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

BASES = bases()


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(base=st.sampled_from(BASES), seed=st.integers(0, 2**32 - 1))
def test_hostile_fields_give_a_result_or_one_clean_line(tmp_path_factory, base, seed):
    name, data = base
    data = mutate(name, data, random.Random(seed), big=256 << 10)
    path = tmp_path_factory.mktemp("hostile") / f"mutated-{name}"
    path.write_bytes(data)
    run_faces(str(path))  # anything but a one-line RecordingError propagates and fails
