"""The `message` line (schema 2): one WebSocket frame of a session, checked like every line."""

from __future__ import annotations

import pytest

from streamscope.recording.format import Message, body_record
from streamscope.recording.migrate import migrate


def test_a_frame_round_trips_with_its_opcode_named():
    m = Message.of(3, 120, "server", 1, True, b'{"type":"response.created"}')
    d = m.to_json()
    assert list(d)[:2] == ["type", "exchange"]  # the index reads a line's prefix
    assert d["opcode"] == "text" and d["from"] == "server" and d["data"].startswith("{")
    back = body_record(d)
    assert back == m and back.data_bytes == b'{"type":"response.created"}'


def test_a_close_payload_that_is_not_utf8_goes_in_base64():
    m = Message.of(1, 5, "client", 8, True, b"\x03\xe8\xffbye")
    d = m.to_json()
    assert "data_b64" in d and d["opcode"] == "close"
    assert body_record(d).data_bytes == b"\x03\xe8\xffbye"


def test_a_reserved_opcode_is_kept_as_its_number():
    m = Message.of(1, 5, "server", 3, True, b"")
    assert m.to_json()["opcode"] == 3 and body_record(m.to_json()).opcode_number == 3


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"from": "proxy"}, "'from'"),
        ({"from": ["client"]}, "'from'"),
        ({"opcode": "shout"}, "'opcode'"),
        ({"opcode": 16}, "'opcode'"),
        ({"opcode": True}, "'opcode'"),
        ({"fin": 1}, "'fin'"),
        ({"compressed": "yes"}, "'compressed'"),
        ({"data": 7}, "'data'"),
    ],
)
def test_a_bad_field_is_named(change, says):
    d = Message.of(1, 5, "server", 1, True, b"x").to_json() | change
    with pytest.raises(ValueError, match=says):
        body_record(d)


def test_version_1_lines_read_as_they_are():
    line = {"type": "chunk", "exchange": 1, "t_ns": 4, "data": "x"}
    assert migrate(line, 1) == line
    header = {"type": "header", "schema_version": 1, "tool": "streamscope"}
    assert migrate(header, 1)["schema_version"] == 2
