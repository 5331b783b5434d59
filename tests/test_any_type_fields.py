"""Any field of any dialect may hold any JSON type: every face meets it with a finding or
one clean refusal, never an exception (issue 35, item 1).

Each base is a valid stream of one dialect and framing (tests/anytype.py); a case puts a
value of another JSON type (or nothing) at one place of one event or of the request.
The faces run in-process: inspect's text and --json, --strict's verdict, export in every
format (recording, sse, chunks, pytest, session; --minimal in cheap cases: its search
reads the stream a thousand times), serve's playback, replay's model stepped to the end, and
scan's rows.
"""

from __future__ import annotations

import copy

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.cli import main
from streamscope.dialects import of_frames, open_engine
from streamscope.scan import analyze_file

from .anytype import DELETE, VALUES, Base, at, bases, check, streams, suffix_of

BASES = {name: Base(name, data) for name, data in bases().items()}


@pytest.mark.parametrize("name", list(BASES))
@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    target=st.integers(0, 1 << 16),
    place=st.integers(0, 1 << 16),
    value=st.sampled_from([*VALUES, DELETE]),
)
def test_a_field_of_any_type_gives_findings_in_every_face(name, target, place, value):
    base = BASES[name]
    data, _ = base.mutated(target, place, value)
    check(data, suffix_of(name), minimal=False)
    frames_unchanged_by_every_strategy(data)


def frames_unchanged_by_every_strategy(data: bytes) -> None:
    """Every strategy reads the same frames side by side: each exchange's payloads are
    as parsed after its engine has read them to the end."""
    for told, tools, frames in streams(data):
        sent = copy.deepcopy([f.payload for f in frames])
        engine = open_engine(told or of_frames(frames), 1, tools)
        for frame in frames:
            engine.feed(frame)
        engine.end()
        engine.others_at_end()
        assert [f.payload for f in frames] == sent


def test_a_list_of_arguments_grown_by_the_docs_snippet_is_its_own(tmp_path):
    # the snippet's `+=` grew the opener's list in place: every strategy, robust too,
    # then showed [1, 2, 1, 2] where the stream sent [1, 2] once
    where = ("choices", 0, "delta", "tool_calls", 0, "function", "arguments")
    data = at(BASES["chat"], "frame", '"name"', where, [1, 2])
    frames_unchanged_by_every_strategy(data)
    path = tmp_path / "listed-arguments.jsonl"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    assert result.exit_code == 0, result.output
    stream = orjson.loads(result.output)["streams"][0]
    # the contract's `arguments` is always a string: a list sent is its JSON text
    assert stream["tool_calls"][0]["arguments"] == "[1,2]"
    built = {k: v["tool_calls"][0]["arguments"] for k, v in stream["strategies"].items()}
    # the opener's own counted twice, then the later fragments' characters, as in Python
    assert built.pop("openai-docs").startswith('[1,2,1,2,"{"')
    assert all(got == "[1,2]" for got in built.values()), built


# What the sweep (python -m tests.anytype 0) found raising, each fixed where the field is
# read: (base, where, an event holding this text, the path, the value).
FOUND = [
    # a tool call's name that is a list or an object: `name not in declared` hashed it
    ("anthropic", "frame", '"tool_use"', ("content_block", "name"), ["x"]),
    ("anthropic-bedrock-invoke", "frame", '"tool_use"', ("content_block", "name"), {"a": 1}),
    ("bedrock-converse", "frame", '"toolUse"', ("start", "toolUse", "name"), {"a": 1}),
    # held as it came, and hashed where export --minimal dropped the item's done event
    ("responses", "frame", "response.output_item.added", ("item", "name"), ["x"]),
    ("realtime", "message", "response.output_item.added", ("item", "name"), {"a": 1}),
    # an input item whose type is a list: `kind in CLIENT_ITEMS` hashed it
    ("responses", "request", '"input"', ("input", 1, "type"), ["x"]),
]


@pytest.mark.parametrize("name,what,test,path,value", FOUND, ids=[f[0] for f in FOUND])
def test_what_once_raised_reads_cleanly(name, what, test, path, value):
    check(
        at(BASES[name], what, test, path, value),
        suffix_of(name),
        minimal=name in ("anthropic", "realtime"),
    )


def test_inspect_says_a_listed_name_is_no_name(tmp_path):
    path = tmp_path / "name-list.jsonl"
    path.write_bytes(
        at(BASES["anthropic"], "frame", '"tool_use"', ("content_block", "name"), ["x"])
    )
    result = CliRunner().invoke(main, ["inspect", "--strict", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 1
    assert "its name is a JSON array, not a string" in result.output
    assert "ended with no name" in result.output


@pytest.mark.parametrize("sent", ['{"city": "Paris", "n": 2}', "[1, 2]", "7", "true"])
def test_arguments_sent_as_no_string_are_reported_as_their_json_text(tmp_path, sent):
    """The contract's `arguments` is always a string. llama.cpp and MiniMax send an
    object: `inspect --json` gave the object itself (a reader's json.loads raised on it)
    and `scan` counted its arguments as 0 characters. Both give its compact JSON text
    now, while `args-not-string` says what was sent."""
    delta = (
        '{"tool_calls":[{"index":0,"id":"call_1","type":"function",'
        f'"function":{{"name":"get_weather","arguments":{sent}}}}}]}}'
    )
    chunk = (
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        f'"choices":[{{"index":0,"delta":{delta},"finish_reason":"tool_calls"}}]}}'
    )
    path = tmp_path / "object-arguments.sse"
    path.write_text(f"data: {chunk}\n\ndata: [DONE]\n\n")
    result = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    stream = orjson.loads(result.output)["streams"][0]
    text = orjson.dumps(orjson.loads(sent)).decode()  # compact, keys in the order sent
    assert stream["tool_calls"][0]["arguments"] == text
    assert "args-not-string" in {a["kind"] for a in stream["anomalies"]}
    sdk = stream["strategies"]["openai-sdk"]["tool_calls"][0]["arguments"]
    assert sdk == text
    assert analyze_file(path).calls[0].arguments_chars == len(text)
