"""`serve` answers every recording with a valid HTTP response: a recorded head HTTP cannot
send is cleaned (and said) or refused with a JSON error, never a cut connection or a bare
500; an exchange numbered 0 is itself; `--strict` explains every mismatch."""

from __future__ import annotations

import copy
import os

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.dialects import DEFAULT
from streamscope.playback.library import Library, Unmatched, answer
from streamscope.playback.serve import ServeServer
from streamscope.recording.format import Chunk

from .helpers import renumber

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
OPENAI = os.path.join(ROOT, "openai.jsonl")
with open(OPENAI, "rb") as f:
    LINES = [orjson.loads(line) for line in f if line.strip()]


def recording(tmp_path, change, name="served.jsonl"):
    lines = copy.deepcopy(LINES)
    change(lines)
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return str(path)


def line(lines, kind, exchange=1):
    return next(x for x in lines if x["type"] == kind and x["exchange"] == exchange)


def body_of(lines, exchange=1) -> bytes:
    return b"".join(
        Chunk.from_json(x).data_bytes
        for x in lines
        if x["type"] == "chunk" and x["exchange"] == exchange
    )


def post(server, exchange=1):
    request = line(LINES, "request", exchange)["body"]
    with httpx.Client(timeout=10) as client:
        return client.post(
            server.base_url + "/chat/completions",
            content=request,
            headers={"content-type": "application/json"},
        )


BAD_HEADERS = {
    "crlf": ("x-note", "a\r\nx-injected: 1"),
    "nul": ("x-note", "a\x00b"),
    "esc": ("x-note", "a\x1b]0;pwned\x07"),
    "name-space": ("x note", "v"),
    "name-colon": ("x:note", "v"),
    "name-empty": ("", "v"),
    "not-latin-1": ("x-note", "naïve → ☃"),
}


@pytest.mark.slow
@pytest.mark.parametrize("header", list(BAD_HEADERS.values()), ids=list(BAD_HEADERS))
def test_a_header_http_cannot_send_is_left_out_and_said(tmp_path, header):
    path = recording(tmp_path, lambda ls: line(ls, "response")["headers"].append(list(header)))
    with ServeServer([path]) as server:
        got = post(server)
        notes = server.library.notes
    assert got.status_code == 200
    assert got.content == body_of(LINES)  # the stream itself, whole
    assert "x-injected" not in got.headers
    assert got.headers.get("x-note") is None
    assert len(notes) == 1 and "left out" in notes[0] and "exchange 1" in notes[0]
    assert not any(ch in notes[0] for ch in "\r\n\x00\x1b")  # said visibly


def test_a_latin_1_value_is_sent_and_spaces_around_a_value_are_not_part_of_it(tmp_path):
    def change(lines):
        line(lines, "response")["headers"] += [["x-city", "Montréal"], ["x-pad", "  v  w \t"]]

    with ServeServer([recording(tmp_path, change)]) as server:
        got = post(server)
        assert server.library.notes == []
    assert got.headers["x-city"].encode("latin-1") == "Montréal".encode("latin-1")
    assert got.headers["x-pad"] == "v  w"


@pytest.mark.slow
@pytest.mark.parametrize("status", [100, 101, 103, 199])  # (outside 100-599: a bad line)
def test_a_status_http_cannot_send_is_refused_with_a_json_error(tmp_path, status):
    path = recording(tmp_path, lambda ls: line(ls, "response").__setitem__("status", status))
    with ServeServer([path]) as server:
        got = post(server)
        notes = server.library.notes
    assert got.status_code == 502
    message = got.json()["error"]["message"]
    assert f"recorded status {status} cannot be sent" in message
    assert "served.jsonl exchange 1" in message
    assert notes == [
        f"{message.split(': ', 1)[1]}: a request it answers gets a 502 JSON error saying so"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("status", [204, 304])
def test_a_bodiless_status_is_sent_without_the_recorded_body_and_said(tmp_path, status):
    path = recording(tmp_path, lambda ls: line(ls, "response").__setitem__("status", status))
    with ServeServer([path]) as server:
        got = post(server)
        notes = server.library.notes
    assert got.status_code == status and got.content == b""
    assert any(f"status {status} carries no body" in n for n in notes)


def test_an_exchange_numbered_0_streams_its_own_body(tmp_path):
    path = recording(tmp_path, renumber(2, 0))
    with ServeServer([path]) as server:
        got = post(server, exchange=2)  # the request recorded for (what is now) exchange 0
        assert server.app.selections[-1].entry.exchange == 0
    assert got.status_code == 200
    assert got.content == body_of(LINES, 2)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
MESSAGES = JSON | st.lists(
    st.fixed_dictionaries({"role": JSON, "content": JSON}) | JSON, max_size=3
)


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(recorded=MESSAGES, requested=MESSAGES, tools=JSON)
def test_strict_explains_every_mismatch(tmp_path_factory, recorded, requested, tools):
    def change(lines):
        request = line(lines, "request")
        body = orjson.loads(request["body"])
        body["messages"] = recorded
        request["body"] = orjson.dumps(body).decode()

    path = recording(tmp_path_factory.mktemp("strict"), change)
    library = Library(path, exchange=1)
    try:
        asked = {"model": "gpt-4o-mini", "messages": requested, "tools": tools, "stream": True}
        got = library.select(orjson.dumps(asked), strict=True, dialect=DEFAULT)
        if isinstance(got, Unmatched):
            assert got.message and "\n" not in got.message
        said = answer(library, "POST", "/v1/chat/completions", orjson.dumps(asked), True, "x")
        if said.selection is None:
            assert said.status == 400
            assert orjson.loads(said.error)["error"]["message"].startswith("x: no recorded")
    finally:
        library.close()
