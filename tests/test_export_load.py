"""export --minimal's load: the frames' datas and payloads, read the quick way."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.core.frames import parse_payload
from streamscope.export.fixtures import _load
from streamscope.inputs import open_input

_TEXTS = st.sampled_from(
    [
        '{"object":"chat.completion.chunk","choices":[]}',
        '{"a":1}',
        "[DONE]",
        "not json",
        "null",
        '{"choices":[{"index":0}]}',
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(_TEXTS, min_size=1, max_size=12),
    log=st.booleans(),
    end=st.sampled_from(["\n\n", "\r\n\r\n", "\n: keep-alive\n\n"]),
)
def test_minimal_load_parses_each_distinct_text_once_to_the_same_payload(tmp_path, texts, log, end):
    """--minimal loads a stream (a plain SSE body split, with one parse per distinct text,
    equal texts sharing it; any other decoded): the same datas as the exact load, each
    payload equal to parse_payload of its text."""
    path = tmp_path / ("s.jsonl" if log else "s.sse")  # (rewritten by each example)
    texts = ['{"object":"chat.completion.chunk","choices":[]}', *texts]  # what sniffing knows
    body = "".join(f"{t}\n" if log else f"data: {t}{end}" for t in texts)
    path.write_text(body)
    with open_input(str(path), check=True) as source:
        plain, minimal = _load(source, None), _load(source, None, payloads=True)
    assert minimal.datas == plain.datas
    assert minimal.payloads == [parse_payload(d) for d in minimal.datas]
    shared = {d: p for d, p in zip(minimal.datas, minimal.payloads, strict=True)}
    if not log and end == "\n\n":
        assert all(p is shared[d] for d, p in zip(minimal.datas, minimal.payloads, strict=True))
