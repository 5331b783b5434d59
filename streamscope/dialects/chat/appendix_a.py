"""The fixture streams of the research notes' Appendix A, as chunk dicts.

Shared by the tests, the differential SDK test and the sample-recording script, so
every face is checked on the same quirks. Keys omitted on the wire are omitted here;
`None` means an explicit JSON null.
"""

from __future__ import annotations

from typing import Any

A1 = '{"city": '
A2 = '"Paris"}'
ARGS = A1 + A2

_OMIT: Any = object()


def chunk(delta: dict[Any, Any] | None = None, finish: str | None = None, **envelope: Any) -> dict:  # type: ignore[type-arg]
    """One chat.completion.chunk with a single choice 0."""
    base = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    base.update(envelope)
    base["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return base


def tc(
    index: Any = _OMIT,
    id: Any = _OMIT,
    name: Any = _OMIT,
    args: Any = _OMIT,
    type: Any = _OMIT,
    function: bool = True,
) -> dict[Any, Any]:
    """A tool-call delta; only the keys given are present."""
    out: dict[str, Any] = {}
    if index is not _OMIT:
        out["index"] = index
    if id is not _OMIT:
        out["id"] = id
    if type is not _OMIT:
        out["type"] = type
    if function:
        fn: dict[str, Any] = {}
        if name is not _OMIT:
            fn["name"] = name
        if args is not _OMIT:
            fn["arguments"] = args
        out["function"] = fn
    return out


def calls(*deltas: dict[Any, Any], role: bool = False, content: Any = _OMIT) -> dict:  # type: ignore[type-arg]
    d: dict[str, Any] = {}
    if role:
        d["role"] = "assistant"
    if content is not _OMIT:
        d["content"] = content
    d["tool_calls"] = list(deltas)
    return d


def _opener(**kw: Any) -> dict[Any, Any]:
    return chunk(calls(tc(0, "call_a", "get_weather", "", "function"), role=True, content=None))


FINISH = chunk({}, "tool_calls")

FIXTURES: dict[str, list[dict[Any, Any]]] = {
    "Q0": [_opener(), chunk(calls(tc(0, args=A1))), chunk(calls(tc(0, args=A2))), FINISH],
    "Q1": [
        _opener(),
        chunk(calls(tc(0, "call_a", "get_weather", A1, "function"))),
        chunk(calls(tc(0, "call_a", "get_weather", A2, "function"))),
        FINISH,
    ],
    "Q2": [
        _opener(),
        chunk(calls(tc(0, "call_a", args=A1))),
        chunk(calls(tc(0, "call_a", args=A2))),
        FINISH,
    ],
    "Q3": [
        _opener(),
        chunk(calls(tc(0, "", args=A1, type="function"))),
        chunk(calls(tc(0, "", args=A2, type="function"))),
        chunk(calls(tc(0, "", args="", type="function"))),
        FINISH,
    ],
    "Q4": [_opener(), chunk(calls(tc(0, "", "", A1))), chunk(calls(tc(0, "", "", A2))), FINISH],
    "Q22": [
        _opener(),
        chunk(calls(tc(0, None, None, A1, None))),
        chunk(calls(tc(0, None, None, A2, None))),
        FINISH,
    ],
    "Q21": [
        _opener(),
        chunk(calls(tc(0, args=A1, type=""))),
        chunk(calls(tc(0, args=A2, type=""))),
        FINISH,
    ],
    "Q5": [
        chunk(calls(tc(id="call_a", name="get_weather", args=ARGS, type="function"), role=True)),
        chunk({}, "stop"),
    ],
    "Q6": [
        chunk(calls(tc(id="call_a", name="get_weather", args=ARGS, type="function"), role=True)),
        chunk(calls(tc(id="call_b", name="get_weather", args='{"city": "Rome"}', type="function"))),
        chunk({}, "stop"),
    ],
    "Q19": [
        chunk(calls(tc(0, "call_a", "get_weather", A1, "function"), role=True)),
        chunk(calls(tc(id="", args=A2, type=""))),
        FINISH,
    ],
    "Q7": [
        _opener(),
        chunk(calls(tc(0, args=A1))),
        chunk(calls(tc(0, args=A2))),
        chunk(calls(tc(0, "call_b", "get_time", "", "function"))),
        chunk(calls(tc(0, args='{"tz": '))),
        chunk(calls(tc(0, args='"UTC"}'))),
        FINISH,
    ],
    "Q8": [
        chunk({"role": "assistant", "content": "Let me check."}),
        chunk(calls(tc(1, "toolu_1", "read_file", "", "function"))),
        chunk(calls(tc(1, args='{"path": '))),
        chunk(calls(tc(1, args='"a.txt"}'))),
        FINISH,
    ],
    "Q20": [
        chunk(calls(tc(0, "call_a", "get_weather", ARGS, "function"), role=True)),
        chunk(calls(tc(2, "call_c", "get_time", '{"tz": "UTC"}', "function"))),
        FINISH,
    ],
    "Q25": [
        chunk(calls(tc(-1, "tooluse_1", "get_weather", "", "function"), role=True)),
        chunk(calls(tc(-1, args=ARGS))),
        chunk(calls(tc(0, "tooluse_2", "get_time", "", "function"))),
        chunk(calls(tc(0, args='{"tz": "UTC"}'))),
        FINISH,
    ],
    "Q12": [
        chunk(
            calls(
                tc(0, "functions.list_files:0", "list_files"),
                tc(0, args=' {"'),
                role=True,
            )
        ),
        chunk(calls(tc(0, args='path": "."}'))),
        FINISH,
    ],
    "Q9": [
        _opener(),
        chunk(calls(tc(0, args=A1))),
        chunk(calls(tc(0, args=A2))),
        chunk(calls(tc(0, "call_a", "get_weather", ARGS, "function"))),
        FINISH,
    ],
    "Q10": [_opener(), chunk(calls(tc(0, args=A1))), chunk(calls(tc(0, args=ARGS))), FINISH],
    "Q11": [
        chunk(calls(tc(0, "call_a", "get_weather", {"city": "Paris"}, "function"), role=True)),
        FINISH,
    ],
    "Q13": [
        chunk(calls(tc(0, name="get_weather", args="", type="function"), role=True)),
        chunk(calls(tc(0, "call_a", args=A1))),
        chunk(calls(tc(0, args=A2))),
        FINISH,
    ],
    "Q14": [
        chunk(calls(tc(0, name="get_weather", args="", type="function"), role=True)),
        chunk(calls(tc(0, args=A1))),
        chunk(calls(tc(0, args=A2))),
        FINISH,
    ],
    "Q23": [
        chunk(calls(tc(0, "", "get_weather", "", "function"), role=True)),
        chunk(calls(tc(0, "", args=A1))),
        chunk(calls(tc(0, "", args=A2))),
        FINISH,
    ],
    "Q24": [
        chunk(calls(tc(0, "call_A", "get_weather", "", "function"), role=True)),
        chunk(calls(tc(0, "call_B", args=A1))),
        chunk(calls(tc(0, "call_B", args=A2))),
        FINISH,
    ],
    "Q15": [
        chunk(calls(tc(0, "call_x", "get_weather", "", "function"), role=True)),
        chunk(calls(tc(1, "call_x", "get_time", "", "function"))),
        chunk(calls(tc(0, args=ARGS))),
        chunk(calls(tc(1, args='{"tz": "UTC"}'))),
        FINISH,
    ],
    "Q16": [
        chunk(calls(tc(0, "call_a", "get_", "", "function"), role=True)),
        chunk(calls(tc(0, name="weather", args=A1))),
        chunk(calls(tc(0, args=A2))),
        FINISH,
    ],
    "Q17": [
        {**c, "object": "chat.completion"}
        for c in [_opener(), chunk(calls(tc(0, args=A1))), chunk(calls(tc(0, args=A2))), FINISH]
    ],
    "Q18": [
        chunk(calls(tc(0, "call_a", type="function", function=False), role=True)),
        chunk(calls(tc(0, name="get_weather", args=A1))),
        chunk(calls(tc(0, args=A2))),
        FINISH,
    ],
    "role-repeated": [
        chunk(calls(tc(0, "call_a", "get_weather", "", "function"), role=True)),
        chunk({"role": "assistant", **calls(tc(0, args=A1))}),
        chunk({"role": "assistant", **calls(tc(0, args=A2))}),
        FINISH,
    ],
}
