"""The laws every dialect keeps, run once per registered dialect (streamscope.dialects.DIALECTS):

- the same bytes cut anywhere read alike, and no other dialect's kind appears;
- a copy of the engine taken anywhere carries on as the original;
- the fast path (`Dialect.plain`) reads as every rule does;
- every kind the dialect's rules name is registered, with a severity, a meaning and an
  entry in the anomaly reference, and has a case that triggers it; each case triggers its
  kind at a frame, and its look-alike stays quiet;
- `inspect`'s report on every case reads and never prints a Python None;
- `export --minimal` knows how to shrink its streams (its `Shape`, or a search of its
  own), and the shrunk stream still shows each warning and error its case showed.

A dialect takes part through its adapter, tests/dialects/<package>/laws.py (<package> as
in streamscope/dialects/<package>/), a module holding:

    DIALECT     the registered name ("gemini")
    framing     a callable giving a fresh decoder: feed(bytes, time) -> frames, finish()
    bodies      a hypothesis strategy of random stream bodies, as the wire carries them
    body        events -> the bytes of one case's stream
    run         (events, **extra) -> StreamResult: one engine pass, extra as in CASES
    CASES       kind -> (events that trigger it or None, events like them that must not
                or None, run()'s extra arguments)
    QUIET_EXTRA kind -> run()'s arguments for the quiet case, where they differ
    NOT_HERE    kinds in other dialects' words: never on this dialect's streams
    OWN_TESTS   kinds the dialect's rules name that have a test of their own, not a case

A registered dialect with no adapter fails every law here, by name.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from functools import partial
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.core import anomalies, contract
from streamscope.dialects import ANOMALY_KINDS, DIALECTS
from streamscope.export.fixtures import export

from ..test_registry import _named_kinds
from .reading import (
    copy_carries_on,
    fast_path_reads_alike,
    frames_of,
    kinds,
    named_at_its_frame,
    read,
    report_shows_no_python_none,
    same,
)

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parents[1] / "docs" / "anomalies.md"  # the anomaly reference


def _adapters() -> dict[str, ModuleType]:
    found = {}
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.ispkg and (HERE / info.name / "laws.py").exists():
            module = importlib.import_module(f"{__package__}.{info.name}.laws")
            found[module.DIALECT] = module
    return found


ADAPTERS = _adapters()
NAMES = sorted(DIALECTS)


def adapter(name: str) -> ModuleType:
    if name not in ADAPTERS:
        pytest.fail(f"{name} is registered but has no tests/dialects/<package>/laws.py")
    return ADAPTERS[name]


def package(name: str) -> str:
    """The folder of the dialect's package under streamscope/ ("dialects/gemini")."""
    engine = DIALECTS[name].engine()  # (the record names its engine lazily: ask one)
    return "/".join(type(engine).__module__.split(".")[1:-1])


def _cases(which: int) -> list[tuple[str, str]]:
    return [
        (name, kind)
        for name in NAMES
        for kind, case in sorted(
            getattr(ADAPTERS.get(name), "CASES", {"(no adapter)": [0, 0]}).items()
        )
        if case[which] is not None
    ]


def test_every_registered_dialect_has_an_adapter_in_its_packages_folder():
    assert set(ADAPTERS) == set(DIALECTS)
    for name, module in ADAPTERS.items():
        assert module.__name__.split(".")[-2] == package(name).split("/")[-1], name


def test_every_registered_kind_has_a_case_in_a_dialects_table():
    held = set().union(*(set(a.CASES) | a.OWN_TESTS for a in ADAPTERS.values()))
    assert held == set(ANOMALY_KINDS)


@pytest.mark.parametrize("name", NAMES)
def test_every_kind_the_rules_name_is_registered_documented_and_has_a_case(name):
    laws = adapter(name)
    named = {kind for _, _, kind in _named_kinds((package(name),))}
    assert named  # the scan does see the dialect's rules
    page = REFERENCE.read_text(encoding="utf-8")
    entries = set(re.findall(r"^### `([a-z0-9-]+)`$", page, re.M))
    registry = ANOMALY_KINDS | contract.KINDS
    for kind in named:
        assert kind in registry, kind
        severity, meaning, why = registry[kind]
        assert severity in anomalies.SEVERITY_ORDER and meaning and "\n" not in meaning, kind
        assert why and "\n" not in why, kind
        assert kind in entries, f"{kind}: run scripts/anomaly_reference.py"
    cased = set(laws.CASES) | laws.OWN_TESTS
    assert {k for k in named if k in ANOMALY_KINDS} - cased == set()
    assert not laws.NOT_HERE & set(laws.CASES)


@pytest.mark.parametrize(("name", "kind"), _cases(0))
def test_kind_triggers(name, kind):
    laws = adapter(name)
    events, _, extra = laws.CASES[kind]
    named_at_its_frame(laws.run(events, **extra), kind, name)


@pytest.mark.parametrize(("name", "kind"), _cases(1))
def test_kind_stays_quiet(name, kind):
    laws = adapter(name)
    _, events, extra = laws.CASES[kind]
    result = laws.run(events, **laws.QUIET_EXTRA.get(kind, extra))
    assert kind not in kinds(result), [a.to_json() for a in result.anomalies]


@pytest.mark.parametrize("name", NAMES)
def test_no_report_shows_a_python_none(name, tmp_path):
    laws = adapter(name)
    for kind, (events, _, extra) in laws.CASES.items():
        if events is None or extra:
            continue  # the report reads the plain body
        try:
            report_shows_no_python_none(laws.body(events), tmp_path / "stream.sse")
        except AssertionError as e:
            raise AssertionError(kind) from e


@pytest.mark.parametrize("name", NAMES)
def test_minimal_keeps_every_warning_and_error_a_case_shows(name, tmp_path):
    told = DIALECTS[name]
    assert (told.shape is None) != (told.minimize is None), "a Shape or its own search"
    laws, body = adapter(name), tmp_path / "stream.sse"
    for kind, (events, _, extra) in sorted(laws.CASES.items()):
        if events is None or extra or ANOMALY_KINDS[kind][0] not in ("warning", "error"):
            continue  # (the signature --minimal keeps holds warnings and errors)
        body.write_bytes(laws.body(events))
        shrunk = export(str(body), "sse", minimal=True)
        assert shrunk.frames_out <= shrunk.frames_in, kind
        assert kind in kinds(read(told.engine(), laws.framing, shrunk.data)), kind


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rechunking_never_changes_the_reading_and_no_other_dialects_kind_appears(name, data):
    laws = adapter(name)
    body = data.draw(laws.bodies, "body")
    cuts = data.draw(st.lists(st.integers(1, 60), max_size=12), "cuts")
    engine = DIALECTS[name].engine
    whole = read(engine(), laws.framing, body)
    assert not laws.NOT_HERE & kinds(whole)
    same(read(engine(), laws.framing, body, cuts), whole, strategies=False)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_copy_taken_anywhere_carries_on_as_the_original(name, data):
    laws = adapter(name)
    found = frames_of(laws.framing, data.draw(laws.bodies, "body"))
    copy_carries_on(DIALECTS[name].engine, found, data.draw(st.integers(0, len(found)), "at"))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_fast_path_reads_as_every_rule_does(name, data):
    laws = adapter(name)
    fast_path_reads_alike(DIALECTS[name].engine, frames_of(laws.framing, data.draw(laws.bodies)))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_the_fast_path_reads_a_chunk_log_as_every_rule_does(name, data):
    """A chunk log's events come with no names (JSON lines): the engine opened on one
    takes its fragments as quickly, and reads them as every rule does."""
    laws = adapter(name)
    found = frames_of(laws.framing, data.draw(laws.bodies))
    unnamed = [dataclasses.replace(f, event=None, headers=()) for f in found]
    fast_path_reads_alike(partial(DIALECTS[name].engine, chunk_log=True), unnamed)
