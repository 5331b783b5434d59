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


KEY = "sk-proj-msgTESTKEY0123456789abcdefgh"


def session(tmp_path, frames, key: str = KEY) -> list[dict]:
    """The message and end lines a writer records for `frames` (sender, opcode, fin,
    payload) of a session whose handshake carried `key`."""
    import json

    from streamscope.recording import RecordingWriter

    path = tmp_path / "s.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "GET", "http://h/v1/realtime", [("authorization", f"Bearer {key}")], b"")
        w.response(ex, 101, [])
        for sender, opcode, fin, payload in frames:
            w.message(ex, sender, opcode, fin, payload)
        w.end(ex, "complete")
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [d for d in lines if d["type"] in ("message", "end")]


def data(d: dict) -> bytes:
    return body_record(d).data_bytes  # type: ignore[union-attr]


def test_a_key_split_over_two_frames_of_a_message_is_masked_in_both(tmp_path):
    out = session(
        tmp_path,
        [
            ("server", 1, False, b'{"echo":"' + KEY[:9].encode()),
            ("server", 0, True, KEY[9:].encode() + b'"}'),
        ],
    )
    joined = data(out[0]) + data(out[1])
    assert joined == b'{"echo":"' + b"[REDACTED" + b"*" * (len(KEY) - 10) + b']"}'
    assert [d.get("masked", 0) for d in out] == [1, 0, 0]  # counted once, on its first frame
    assert [len(data(d)) for d in out[:2]] == [9 + 9, len(KEY) - 9 + 2]  # lengths kept


def test_a_held_frame_keeps_the_order_of_the_frames_after_it(tmp_path):
    # the client's frame ends with what could begin the key: it waits for its message's
    # next frame, and the server's frames in between wait behind it
    out = session(
        tmp_path,
        [
            ("client", 1, False, b'{"k":"sk-'),
            ("server", 1, True, b'{"type":"one"}'),
            ("server", 9, True, b""),
            ("client", 0, True, b'nothing"}'),
        ],
    )
    said = [(d.get("from"), d.get("opcode")) for d in out]
    assert said == [
        ("client", "text"),
        ("server", "text"),
        ("server", "ping"),
        ("client", "continuation"),
        (None, None),
    ]
    assert data(out[0]) == b'{"k":"sk-' and data(out[3]) == b'nothing"}'  # no key: as sent
    assert [d["t_ns"] for d in out] == sorted(d["t_ns"] for d in out)


def test_a_peers_messages_are_one_body_and_control_frames_stand_alone(tmp_path):
    # the key's halves in a peer's two messages are masked in both (as the readers mask a
    # peer's payloads, as one body: a model may echo a key a message at a time); half a
    # key in a ping is no key; the key whole in a close reason is
    out = session(
        tmp_path,
        [
            ("server", 1, True, KEY[:12].encode()),
            ("server", 1, True, KEY[12:].encode()),
            ("server", 9, True, KEY[:12].encode()),
            ("server", 8, True, b"\x03\xe8" + KEY.encode()),
        ],
    )
    assert KEY[:12].encode() not in data(out[0]) and KEY[12:].encode() not in data(out[1])
    assert [len(data(d)) for d in out[:2]] == [12, len(KEY) - 12]  # (lengths kept)
    assert data(out[2]) == KEY[:12].encode()
    assert data(out[3]).startswith(b"\x03\xe8[REDACTED") and out[3]["masked"] == 1


def test_frames_held_at_the_end_are_written_before_the_end_line(tmp_path):
    out = session(tmp_path, [("server", 1, False, b'{"k":"sk-')])
    assert [d["type"] for d in out] == ["message", "end"] and data(out[0]) == b'{"k":"sk-'


@pytest.mark.parametrize(
    "frame",
    [
        ("client", 1, True, b'{"type":"response.create"}', False),
        ("server", 0, False, b"\xe2\x82", True),  # half a character: base64
        ("server", 8, True, b"\x03\xe8bye", False),
        ("client", 13, True, b"", False),
    ],
)
def test_the_writer_writes_the_line_message_reads(tmp_path, frame):
    import json

    from streamscope.recording import RecordingWriter

    sender, opcode, fin, payload, compressed = frame
    path = tmp_path / "m.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "GET", "http://h/v1/realtime", [], b"")
        w.message(ex, sender, opcode, fin, payload, compressed, t_ns=77)
    line = json.loads(path.read_bytes().splitlines()[-1])
    assert line == Message.of(ex, 77, sender, opcode, fin, payload, compressed).to_json()
    assert body_record(line).data_bytes == payload


_GOOD = b'{"type":"message","exchange":1,"t_ns":9,"from":"server","opcode":"text","fin":true'


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (
            b'{"type":"message","exchange":1,"t_ns":9,"opcode":"text","fin":true,"data":""}',
            "field 'from' is missing from the message line",
        ),
        (_GOOD + b"}", "message line needs exactly one of 'data' or 'data_b64'"),
        (_GOOD + b',"data":"x","data_b64":"eA=="}', "exactly one of 'data' or 'data_b64'"),
        (_GOOD.replace(b'"server"', b'"proxy"') + b',"data":""}', "field 'from' is 'proxy'"),
        (_GOOD.replace(b'"text"', b'"TEXT"') + b',"data":""}', "field 'opcode' is not"),
        (_GOOD.replace(b'"text"', b"99") + b',"data":""}', "field 'opcode' is not"),
        (_GOOD.replace(b"true", b'"yes"') + b',"data":""}', "field 'fin' is not a boolean"),
        (_GOOD + b',"data":""' + b',"compressed":1}', "field 'compressed' is not a boolean"),
        (_GOOD + b',"data":{"a":1}}', "'data'"),
        (_GOOD + b',"data_b64":"!!"}', "not valid base64"),
        (_GOOD + b',"data":"","masked":"2"}', "'masked'"),
    ],
)
def test_a_bad_message_line_is_one_line_naming_line_and_field(tmp_path, bad, what):
    from streamscope.recording import RecordingError, RecordingIndex, RecordingWriter
    from streamscope.recording.reader import iter_records

    path = tmp_path / "s.jsonl"
    with RecordingWriter(path) as w:
        ex = w.new_exchange()
        w.request(ex, "GET", "http://h/v1/realtime", [], b"")
        w.response(ex, 101, [])
        w.message(ex, "client", 1, True, b"{}")
        w.end(ex, "complete")
    lines = path.read_bytes().splitlines(keepends=True)
    offset = len(b"".join(lines[:4]))
    path.write_bytes(b"".join(lines[:4]) + bad + b"\n" + b"".join(lines[4:]))
    with pytest.raises(RecordingError) as err:
        list(iter_records(path))
    msg = str(err.value)
    assert msg.startswith(f"{path}: line 5 (byte {offset}): ") and what in msg, msg
    assert "\n" not in msg
    with pytest.raises(RecordingError, match=r"line 5 \(byte"), RecordingIndex.open(path) as idx:
        list(idx.messages(1))
