"""Repair of arguments that do not parse: crow-cli's algorithm and the honest `best`."""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.core.repair import (
    Repair,
    RepairResult,
    best_repair,
    crow_repair,
    double_encoded,
    parses,
    repair,
)

FB = "fallback-empty-object"
CB = "closed-brackets"

# (arguments, crow action, crow result, best action, best result, best changed_meaning)
CASES = [
    # truncated string
    ('{"city": "Par', FB, "{}", "closed-string+" + CB, '{"city": "Par"}', True),
    # truncated after colon
    ('{"city": ', FB, "{}", "dropped-dangling-key+" + CB, "{}", True),
    # nested brackets; crow appends '}' before ']' and breaks; the cut number is a guess
    ('{"a": [1, {"b": [2', FB, "{}", CB, '{"a": [1, {"b": [2]}]}', True),
    ('{"a": [1, {"b": [true', FB, "{}", CB, '{"a": [1, {"b": [true]}]}', False),
    # brackets inside a (complete) string: crow counts them, luckily still parses here
    ('{"a": "}{]["', CB, '{"a": "}{]["}', CB, '{"a": "}{]["}', False),
    # ...but not here: the '}' inside the string cancels the unclosed '{'
    ('{"a": "}"', FB, "{}", CB, '{"a": "}"}', False),
    # brackets inside a truncated string
    ('{"a": "}{][', FB, "{}", "closed-string+" + CB, '{"a": "}{]["}', True),
    # escaped quote in a truncated string
    ('{"a": "x\\"', FB, "{}", "closed-string+" + CB, '{"a": "x\\""}', True),
    # dangling backslash
    ('{"a": "x\\', FB, "{}", "closed-string+" + CB, '{"a": "x"}', True),
    # trailing comma
    ('{"a": 1,', FB, "{}", "dropped-trailing-comma+" + CB, '{"a": 1}', False),
    ('{"a": 1,}', FB, "{}", "dropped-trailing-comma", '{"a": 1}', False),
    ("[1, 2,]", FB, "{}", "dropped-trailing-comma", "[1, 2]", False),
    # dangling key
    ('{"a": 1, "b"', FB, "{}", "dropped-dangling-key+" + CB, '{"a": 1}', True),
    ('{"a": 1, "b":', FB, "{}", "dropped-dangling-key+" + CB, '{"a": 1}', True),
    ('{"a": 1, "b', FB, "{}", "dropped-dangling-key+" + CB, '{"a": 1}', True),
    ('{"ci', FB, "{}", "dropped-dangling-key+" + CB, "{}", True),
    # cut literals
    ('{"a": tru', FB, "{}", "dropped-cut-literal+dropped-dangling-key+" + CB, "{}", True),
    (
        '{"a": 1, "b": nul',
        FB,
        "{}",
        "dropped-cut-literal+dropped-dangling-key+" + CB,
        '{"a": 1}',
        True,
    ),
    ('{"a": 1.', FB, "{}", "dropped-cut-literal+dropped-dangling-key+" + CB, "{}", True),
    ('{"a": 1e', FB, "{}", "dropped-cut-literal+dropped-dangling-key+" + CB, "{}", True),
    ("[1, -", FB, "{}", "dropped-cut-literal+dropped-trailing-comma+" + CB, "[1]", True),
    ("[-Inf", FB, "{}", "dropped-cut-literal+" + CB, "[]", True),
    # a number the input ends in may be cut; one ended by whitespace is complete
    ('{"a": 12', CB, '{"a": 12}', CB, '{"a": 12}', True),
    ('{"a": 12 ', CB, '{"a": 12 }', CB, '{"a": 12 }', False),
    ('{"a": true', CB, '{"a": true}', CB, '{"a": true}', False),
    ('{"a": NaN', CB, '{"a": NaN}', CB, '{"a": NaN}', False),
    ('{"a": {"b": "c"', CB, '{"a": {"b": "c"}}', CB, '{"a": {"b": "c"}}', False),
    # crow's negative count appends nothing for ']'
    ('{"a": "]"', CB, '{"a": "]"}', CB, '{"a": "]"}', False),
    # concatenated objects
    ('{"a":1}{"a":1}', FB, "{}", "dropped-duplicate", '{"a":1}', False),
    ('{"a":1} {"a": 1}\n{"a":1}', FB, "{}", "dropped-duplicate", '{"a":1}', False),
    ('{"a":1}{"a":1.0}', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    ('{"a":1}{"a":true}', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    ('{"a":1}{"b":2}', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    ('{"a":1}{"a":', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    ('{"a":1}}', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    ('{"a":1,}{"a":1}', FB, "{}", "dropped-trailing-comma+dropped-duplicate", '{"a":1}', False),
    # empty / whitespace
    ("", FB, "{}", "empty", "{}", False),
    ("  \n\t", FB, "{}", "empty", "{}", False),
    # closing order matters
    ('[{"a": [', FB, "{}", CB, '[{"a": []}]', False),
    # leading prose
    ('Sure! {"a":1}', FB, "{}", FB, "{}", True),
    ('```json\n{"a":1}\n```', FB, "{}", FB, "{}", True),
    # trailing text
    ('{"a":1} thanks', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    ('{"a":1} hope that helps', FB, "{}", "dropped-trailing-data", '{"a":1}', True),
    # cut unicode escapes; a lone high surrogate is half a character
    ('{"a": "\\u00', FB, "{}", "closed-string+" + CB, '{"a": ""}', True),
    ('{"a": "x\\ud83d', FB, "{}", "closed-string+" + CB, '{"a": "x"}', True),
    ('{"a": "x\\ud83d\\ude', FB, "{}", "closed-string+" + CB, '{"a": "x"}', True),
    ('{"a": "\\\\ud83d', FB, "{}", "closed-string+" + CB, '{"a": "\\\\ud83d"}', True),
    # errors inside the value are not truncation: nothing honest to keep
    ('{"a": 1 "b": 2}', FB, "{}", FB, "{}", True),
    ('{"a": "line\nbreak"}', FB, "{}", FB, "{}", True),
    ('{"a": "\\x"}', FB, "{}", FB, "{}", True),
    ('{"a": 01}', FB, "{}", FB, "{}", True),
    # a truncated top-level scalar is not an object to keep
    ('"{\\"city\\": \\"Par', FB, "{}", FB, "{}", True),
]


@pytest.mark.parametrize(
    ("arguments", "crow_action", "crow_result", "best_action", "best_result", "changed"),
    CASES,
    ids=[repr(c[0]) for c in CASES],
)
def test_repair_table(arguments, crow_action, crow_result, best_action, best_result, changed):
    assert not parses(arguments)
    r = repair(arguments)
    assert r is not None
    assert r.crow == RepairResult(crow_action, crow_result, None)
    assert r.best == RepairResult(best_action, best_result, changed)
    assert parses(r.crow.result)
    assert parses(r.best.result)
    assert crow_repair(arguments) == r.crow
    assert best_repair(arguments) == r.best


@pytest.mark.parametrize(
    "arguments", ['{"a": 1}', '{"city": "Paris"}', "[]", " {} ", '{"a": NaN}', "1"]
)
def test_valid_input_returns_none(arguments):
    assert parses(arguments)
    assert repair(arguments) is None
    assert crow_repair(arguments) == RepairResult("none", arguments, None)
    assert best_repair(arguments) == RepairResult("none", arguments, False)


def _double_encoded(arguments: str) -> bool:
    """The definition, parsed in full every time."""
    try:
        outer = json.loads(arguments)
        return isinstance(outer, str) and isinstance(json.loads(outer), dict)
    except (ValueError, RecursionError):
        return False


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=' \t\n\r\ufeff\u00a0"{}[]:,ab1\\', max_size=12),
        st.recursive(
            st.none() | st.integers() | st.text(max_size=4),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        ).map(lambda v: json.dumps(json.dumps(v)) if isinstance(v, dict) else json.dumps(v)),
    ),
    st.sampled_from(["", " ", "\n\t", "\u00a0"]),
)
def test_double_encoded_is_its_definition(text, space):
    """The shortcut (no parse unless the text opens with a quote) answers as the
    definition, whatever whitespace leads."""
    assert double_encoded(space + text) == _double_encoded(space + text)


def test_double_encoded():
    args = '"{\\"city\\": \\"Paris\\"}"'
    assert json.loads(json.loads(args)) == {"city": "Paris"}
    assert repair(args) is None
    assert double_encoded(args)
    assert double_encoded(json.dumps(json.dumps({"a": [1]})))
    assert not double_encoded('{"city": "Paris"}')
    assert not double_encoded('"hello"')
    assert not double_encoded('"[1, 2]"')
    assert not double_encoded('"{\\"city\\": "')
    assert not double_encoded("")


def test_to_json():
    r = repair('{"city": "Par')
    assert isinstance(r, Repair)
    assert r.to_json() == {
        "crow": {"action": "fallback-empty-object", "result": "{}"},
        "best": {
            "action": "closed-string+closed-brackets",
            "result": '{"city": "Par"}',
            "changed_meaning": True,
        },
    }
    json.dumps(r.to_json())


def test_results_are_frozen():
    r = best_repair("{")
    with pytest.raises(AttributeError):
        r.action = "x"  # type: ignore[misc]


@pytest.mark.slow
def test_large_and_deep_inputs_are_fast():
    big = '{"a": "' + "x\\n\\u00e9" * 200_000
    deep = "[" * 50_000
    start = time.perf_counter()
    r = best_repair(big)
    assert r.action == "closed-string+closed-brackets"
    assert r.result == big + '"}'
    assert crow_repair(big).action == "fallback-empty-object"
    # closes fine, but deeper than json.loads accepts: the safety net falls back
    assert best_repair(deep).action == "fallback-empty-object"
    assert crow_repair(deep).action == "fallback-empty-object"
    assert best_repair('{"a": [' + "1, " * 200_000).result.endswith("1]}")
    assert time.perf_counter() - start < 5


# --- properties ----------------------------------------------------------------------

_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
_values = st.recursive(
    _leaves,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
_objects = st.dictionaries(st.text(max_size=4), _values, max_size=4)
_layouts = st.sampled_from(
    [
        {},
        {"ensure_ascii": False},
        {"indent": 1},
        {"separators": (",", ":")},
        {"separators": (",", ":"), "ensure_ascii": False},
    ]
)
# best only ever appends a closing quote and closers to a prefix of the input
_SUFFIX = re.compile(r'"?[\]}]*')


def _extends(full: object, part: object) -> bool:
    """Whether `part` is what an honest cut of `full` can be: every member but the last
    is equal, and the last is itself an honest cut."""
    if isinstance(part, dict):
        if not isinstance(full, dict):
            return False
        keys = list(part)
        if keys != list(full)[: len(keys)]:
            return False
        return all(_same(full[k], part[k]) for k in keys[:-1]) and (
            not keys or _extends(full[keys[-1]], part[keys[-1]])
        )
    if isinstance(part, list):
        if not isinstance(full, list) or len(part) > len(full):
            return False
        return all(_same(f, p) for f, p in zip(full, part[:-1], strict=False)) and (
            not part or _extends(full[len(part) - 1], part[-1])
        )
    return _same(full, part)


def _same(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_objects, _layouts)
def test_every_prefix_repairs_to_json(obj, layout):
    text = json.dumps(obj, **layout)
    assert repair(text) is None
    for k in range(len(text)):
        prefix = text[:k]
        r = repair(prefix)
        assert r is not None, prefix
        assert parses(r.crow.result), prefix
        best = r.best
        assert parses(best.result), prefix
        if not prefix.strip():
            assert best == RepairResult("empty", "{}", False)
            continue
        assert best.action != "fallback-empty-object", prefix
        # the user's own text, cut, plus at most a quote and closers
        common = 0
        limit = min(len(prefix), len(best.result))
        while common < limit and prefix[common] == best.result[common]:
            common += 1
        assert _SUFFIX.fullmatch(best.result, common), (prefix, best)
        if not best.changed_meaning:
            assert _extends(obj, json.loads(best.result)), (prefix, best)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}[]",:\\ u0a1e.-tn') | st.characters(), max_size=40))
def test_any_text_repairs_to_json(text):
    r = repair(text)
    if r is None:
        assert parses(text)
        return
    assert parses(r.crow.result)
    assert parses(r.best.result)
    assert r.crow.changed_meaning is None
    assert isinstance(r.best.changed_meaning, bool)
