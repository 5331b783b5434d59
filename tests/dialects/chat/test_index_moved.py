"""A call whose deltas move to another index (Vertex AI's Gemini translator) stays one call;
two calls that reuse an id after the first one's arguments completed stay two."""

from __future__ import annotations

import pytest

from streamscope.dialects.chat.appendix_a import FINISH, calls, chunk, tc
from streamscope.dialects.chat.reference import accumulate

from ...helpers import kinds, run

A = ("call_a", "get_weather", ['{"city": ', '"Paris"}'])
B = ("call_b", "get_time", ['{"tz": ', '"UTC"}'])


def opener(call: tuple, index: int) -> dict:
    return chunk(calls(tc(index, call[0], call[1], "", "function")))


def fragments(call: tuple, index: int, repeat_ids: bool) -> list[dict]:
    """The call's argument fragments under `index`; the id on every one, or on the first only."""
    out = []
    for i, text in enumerate(call[2]):
        if repeat_ids or i == 0:
            out.append(chunk(calls(tc(index, call[0], args=text))))
        else:
            out.append(chunk(calls(tc(index, args=text))))
    return out


def vertex(order: str, repeat_ids: bool, mirror: bool, a_first: bool) -> list[dict]:
    """Two calls that each open at one index and stream their arguments under the other.

    order "open-both": both open, then the arguments; "one-by-one": A opens and streams, then B.
    mirror: the indexes swapped. a_first: A's arguments stream before B's.
    """
    ia, ib = (1, 0) if mirror else (0, 1)
    fa, fb = fragments(A, ib, repeat_ids), fragments(B, ia, repeat_ids)
    if order == "open-both":
        body = fa + fb if a_first else fb + fa
        return [opener(A, ia), opener(B, ib), *body, FINISH]
    return [opener(A, ia), *fa, opener(B, ib), *fb, FINISH]


CASES = [
    pytest.param(order, repeat, mirror, a_first, id=f"{order}-{r}-{m}-{f}")
    for order in ("open-both", "one-by-one")
    for repeat, r in ((True, "ids-repeated"), (False, "id-once"))
    for mirror, m in ((False, "0-then-1"), (True, "1-then-0"))
    for a_first, f in ((True, "a-streams-first"), (False, "b-streams-first"))
    if order == "open-both" or a_first
]


@pytest.mark.parametrize("order, repeat_ids, mirror, a_first", CASES)
def test_two_calls_streamed_under_each_others_index_are_two_calls(
    order: str, repeat_ids: bool, mirror: bool, a_first: bool
) -> None:
    stream = vertex(order, repeat_ids, mirror, a_first)
    got = run(stream)
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [
        ("call_a", "get_weather", '{"city": "Paris"}'),
        ("call_b", "get_time", '{"tz": "UTC"}'),
    ]
    found = kinds(got)
    assert "index-moved" in found
    assert not found & {"id-reused", "id-changed", "name-missing", "args-empty"}
    moved = [a for a in got.anomalies if a.kind == "index-moved"]
    assert len(moved) == 2  # one entry per call, each naming its own id
    assert {m.message.split()[1] for m in moved} == {'"call_a"', '"call_b"'}
    # the exported pytest module's accumulator reads it the same way
    assert [(c["id"], c["name"], c["arguments"]) for c in accumulate(stream)] == [
        (c.id, c.name, c.arguments) for c in got.tool_calls
    ]


@pytest.mark.parametrize("first, second", [(0, 1), (1, 0)], ids=["0-then-1", "1-then-0"])
def test_a_call_moving_before_its_arguments_complete_is_one_call(first: int, second: int):
    stream = [
        chunk(calls(tc(first, "call_a", "get_weather", '{"city": ', "function"))),
        chunk(calls(tc(second, "call_a", args='"Paris"}'))),
        FINISH,
    ]
    got = run(stream)
    assert [(c.id, c.arguments) for c in got.tool_calls] == [("call_a", '{"city": "Paris"}')]
    assert "index-moved" in kinds(got) and "id-reused" not in kinds(got)
    assert accumulate(stream) == [
        {"id": "call_a", "name": "get_weather", "arguments": '{"city": "Paris"}'}
    ]


PARIS, ROME = '{"city": "Paris"}', '{"city": "Rome"}'


@pytest.mark.parametrize("first, second", [(0, 1), (1, 0)], ids=["0-then-1", "1-then-0"])
@pytest.mark.parametrize("name_again", [True, False], ids=["name-again", "no-name"])
def test_an_id_reused_after_the_first_call_completed_is_a_second_call(
    first: int, second: int, name_again: bool
):
    again = tc(second, "call_x", "get_weather" if name_again else None, ROME, "function")
    if not name_again:
        del again["function"]["name"]
    stream = [
        chunk(calls(tc(first, "call_x", "get_weather", PARIS, "function"))),
        chunk(calls(again)),
        FINISH,
    ]
    got = run(stream)
    assert [(c.id, c.arguments) for c in got.tool_calls] == [("call_x", PARIS), ("call_x", ROME)]
    assert "id-reused" in kinds(got) and "index-moved" not in kinds(got)
    assert [c["arguments"] for c in accumulate(stream)] == [PARIS, ROME]


@pytest.mark.parametrize("mirror", [False, True], ids=["0-then-1", "1-then-0"])
def test_an_id_reused_at_an_index_another_complete_call_holds_is_a_new_call(mirror: bool):
    i, j = (1, 0) if mirror else (0, 1)
    stream = [
        chunk(calls(tc(i, "call_x", "get_weather", PARIS, "function"))),
        chunk(calls(tc(j, "call_y", "get_time", '{"tz": "UTC"}', "function"))),
        chunk(calls(tc(j, "call_x", "get_weather", ROME, "function"))),
        FINISH,
    ]
    got = run(stream)
    assert [(c.id, c.arguments) for c in got.tool_calls] == [
        ("call_x", PARIS),
        ("call_y", '{"tz": "UTC"}'),
        ("call_x", ROME),
    ]
    assert {"id-reused", "index-reused"} <= kinds(got) and "index-moved" not in kinds(got)
    assert [c["arguments"] for c in accumulate(stream)] == [PARIS, '{"tz": "UTC"}', ROME]
