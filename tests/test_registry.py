"""Every anomaly and contract kind a rule names is declared in its registry.

A misspelt kind must fail here, not when its rule first fires on a user's stream.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from streamscope.core import anomalies, contract
from streamscope.dialects import ANOMALY_KINDS

PACKAGE = Path(anomalies.__file__).resolve().parents[1]
RULES = ("core", "dialects")  # where rules live: the shared ones and each dialect's
KIND_SHAPE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "analysis-contract.md"


def _named_kinds(tops: tuple[str, ...] = RULES) -> list[tuple[str, int, str]]:
    """(module, line, kind) of every kind-shaped literal passed to an add or discard call
    in the packages `tops` (paths under streamscope/)."""
    return [
        found
        for path in sorted(p for top in tops for p in (PACKAGE / top).rglob("*.py"))
        for found in _named_kinds_in(path)
    ]


def _named_kinds_in(path: Path) -> list[tuple[str, int, str]]:
    found = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("add", "discard"):
            continue
        # the kind is the first argument (AnomalyLog.add, discard), or the second after
        # the exchange number (the contract's add)
        strings = [
            a.value
            for a in node.args[:2]
            if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if strings and KIND_SHAPE.match(strings[0]):
            found.append((path.name, node.lineno, strings[0]))
    return found


def test_every_kind_a_rule_names_is_registered():
    named = _named_kinds()
    assert len(named) > 40  # the scan does see the rules
    registered = set(ANOMALY_KINDS) | set(contract.KINDS)
    unknown = [(m, line, k) for m, line, k in named if k not in registered]
    assert unknown == []


@pytest.mark.slow
def test_every_registered_kind_is_used_by_a_rule():
    used = {k for _, _, k in _named_kinds()}
    assert set(ANOMALY_KINDS) - used == set()
    assert set(contract.KINDS) - used == set()


def test_registries_give_a_severity_a_meaning_and_why_it_has_that_severity():
    for registry in (ANOMALY_KINDS, contract.KINDS):
        for kind, (severity, meaning, why) in registry.items():
            assert severity in anomalies.SEVERITY_ORDER, kind
            assert meaning and "\n" not in meaning, kind
            # the reason is its own words, not the meaning again (docs/anomalies.md says both)
            assert len(why) > 30 and "\n" not in why and why != meaning, kind


def test_each_dialect_states_whose_a_call_id_is_and_its_history_follows_it():
    """The rule docs/anomalies.md states per dialect is the one the contract applies:
    tool-call-id-filled only where the API leaves the id to the client."""
    from streamscope.dialects import DIALECTS

    bodies = {"messages": [], "contents": [], "input": []}
    for d in DIALECTS.values():
        assert len(d.ids.rule) > 40, d.name
        history = d.history(bodies)
        if history is not None:  # a Realtime session has no request history
            assert history.client_ids is d.ids.client, d.name
    assert {d.name for d in DIALECTS.values() if d.ids.client} == {"gemini", "ollama-chat"}


def test_every_kind_of_the_contract_is_registered():
    if not SPEC.exists():  # the shared spec lies beside the checkout
        return
    text = SPEC.read_text()
    table = set(re.findall(r"^\| `([a-z0-9-]+)` \| (?:error|warning|info) \|", text, re.M))
    assert len(table) > 40
    assert table <= set(ANOMALY_KINDS) | set(contract.KINDS)


def test_the_dialect_kinds_of_the_dialects_read_are_registered_as_the_contract_says():
    if not SPEC.exists():
        return
    text = SPEC.read_text()
    # | kind | dialect | severity | when |: the kinds of every dialect streamscope reads
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([a-z, ]+) \| (error|warning|info) \|", text, re.M)
    dialects = ("any", "anthropic", "responses", "gemini")
    read = [(k, sev) for k, where, sev in rows if any(d in where for d in dialects)]
    assert len(read) >= 14
    for kind, sev in read:
        assert ANOMALY_KINDS[kind][0] == sev, kind


def test_a_kind_only_one_dialect_names_is_that_dialects_and_the_core_keeps_the_shared():
    """Each dialect declares its own kinds (its Dialect record, its engine's log); the core
    registry holds the kinds several dialects, or the shared rules, name, and Chat
    Completions' (the contract's first table, which every reading starts from)."""
    from streamscope.dialects import DEFAULT, DIALECTS

    by_package: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "dialects").rglob("*.py")):
        top = path.relative_to(PACKAGE / "dialects").parts
        where = top[0] if len(top) > 1 else "shared"
        for _, _, kind in _named_kinds_in(path):
            by_package.setdefault(kind, set()).add(where)
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        for _, _, kind in _named_kinds_in(path):
            by_package.setdefault(kind, set()).add("shared")
    # (each record names its engine lazily: ask one for its module)
    owned = {
        type(d.engine()).__module__.split(".")[2]: d for d in DIALECTS.values() if d is not DEFAULT
    }
    for kind, packages in by_package.items():
        if kind in contract.KINDS:
            continue
        if len(packages) == 1 and next(iter(packages)) in owned:
            d = owned[next(iter(packages))]
            assert kind in d.kinds and kind not in anomalies.KINDS, kind
            assert kind in d.engine.kinds, kind  # its engine's log may file it
        else:
            assert kind in anomalies.KINDS, (kind, packages)
    for d in DIALECTS.values():
        assert set(d.kinds).isdisjoint(anomalies.KINDS)
        assert ANOMALY_KINDS.keys() >= d.kinds.keys()
