"""--pseudonymize-ids: identifiers (kept by default) replaced by pseudonyms, the same one
wherever an identifier stands in the recording, its shape and length kept; credentials
masked and counted as without it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.cli import main
from streamscope.recording import RecordingWriter, iter_records, pseudonym
from streamscope.recording.format import End, Request, Response
from streamscope.recording.mask import Masking, body_mask
from streamscope.recording.writer import PSEUDONYMIZED

SESSION = "0195f3a8-6c2e-7d41-9b0a-3f5e8c1d2a47"
KEY = "sk-proj-s90pseudonymkey0123456789"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _write(path, pseudonymize: bool) -> None:
    body = json.dumps(
        {"model": "m", "prompt_cache_key": SESSION, "metadata": {"user_id": f"u_s_{SESSION}"}}
    ).encode()
    with RecordingWriter(path, pseudonymize_ids=pseudonymize) as w:
        for _ in range(2):
            x = w.new_exchange()
            headers = [("session_id", SESSION), ("authorization", f"Bearer {KEY}")]
            w.request(x, "POST", f"https://h/v1/responses?thread-id={SESSION}", headers, body)
            w.response(x, 200, [("x-request-id", "req_5f0c2a9e7b3d4c18")])
            echo = f'data: {{"session":"{SESSION}","error":"bad key {KEY}"}}\n\n'.encode()
            w.chunk(x, echo[:20])  # the id split over two reads
            w.chunk(x, echo[20:])
            w.end(x, "complete")


def test_every_identifier_becomes_one_pseudonym_and_the_keys_stay_masked(tmp_path):
    plain, alias = tmp_path / "plain.jsonl", tmp_path / "alias.jsonl"
    _write(plain, False)
    _write(alias, True)
    text = alias.read_text()
    assert SESSION not in text and KEY not in text and "req_5f0c2a9e7b3d4c18" not in text
    records = [r for _, r in iter_records(alias)]
    assert records[0].notes == [PSEUDONYMIZED]
    requests = [r for r in records if isinstance(r, Request)]
    pseudonym = dict(requests[0].headers)["session_id"]
    assert UUID.fullmatch(pseudonym) and pseudonym != SESSION
    for r in requests:  # the same in both exchanges, in the header, the URL, the body
        assert dict(r.headers)["session_id"] == pseudonym
        assert r.url.endswith(f"?thread-id={pseudonym}")
        doc = json.loads(r.body_bytes)
        assert doc["prompt_cache_key"] == pseudonym
        assert doc["metadata"]["user_id"] == f"u_s_{pseudonym}"
    answers = [dict(r.headers)["x-request-id"] for r in records if isinstance(r, Response)]
    assert answers[0] == answers[1] and len(answers[0]) == len("req_5f0c2a9e7b3d4c18")
    assert pseudonym in text.replace('"data":"', "").replace('","', "")  # a split read too
    # what was masked is masked and counted as without pseudonyms; lengths are kept
    plain_records = [r for _, r in iter_records(plain)]
    assert [getattr(r, "masked", None) for r in records[1:]] == [
        getattr(r, "masked", None) for r in plain_records[1:]
    ]
    assert [e.masked for e in records if isinstance(e, End)] == [1, 1]
    assert [len(r.body_bytes) for r in requests] == [
        len(r.body_bytes) for r in plain_records if isinstance(r, Request)
    ]
    assert SESSION in plain.read_text()  # kept by default


def test_two_recordings_give_an_identifier_different_pseudonyms(tmp_path):
    seen = set()
    for name in ("a.jsonl", "b.jsonl"):
        _write(tmp_path / name, True)
        request = next(r for _, r in iter_records(tmp_path / name) if isinstance(r, Request))
        seen.add(dict(request.headers)["session_id"])
    assert len(seen) == 2


def test_pseudonyms_beside_clear_keys_are_refused(tmp_path):
    with pytest.raises(ValueError, match="pseudonymize_ids needs redact"):
        RecordingWriter(tmp_path / "r.jsonl", redact=False, pseudonymize_ids=True)
    assert not (tmp_path / "r.jsonl").exists()
    done = CliRunner().invoke(main, ["proxy", "--pseudonymize-ids", "--no-redact"])
    assert done.exit_code == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--pseudonymize-ids with --no-redact" in done.stderr


@pytest.mark.slow
def test_record_pseudonymizes_the_ids_and_the_upstream_gets_them_as_sent(tmp_path, upstream):
    path = tmp_path / "ids.jsonl"
    child = (
        "import os, httpx\n"
        "httpx.post(os.environ['OPENAI_BASE_URL'] + '/chat/completions',"
        " json={'model': 'json', 'messages': [], 'prompt_cache_key': os.environ['SID']},"
        " headers={'session_id': os.environ['SID']})\n"
    )  # the id from the environment: argv is recorded as it was (masked, not pseudonymized)
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "record", "--pseudonymize-ids", "-o", str(path)]
        + ["--upstream", upstream.url, "--", sys.executable, "-c", child],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "SID": SESSION},
    )
    assert done.returncode == 0, done.stderr
    assert upstream.headers[-1]["session_id"] == SESSION  # the upstream got it as sent
    assert SESSION not in path.read_text()
    records = [r for _, r in iter_records(path)]
    assert records[0].notes == [PSEUDONYMIZED]
    (request,) = [r for r in records if isinstance(r, Request)]
    pseudonym = dict(request.headers)["session_id"]
    assert UUID.fullmatch(pseudonym)
    assert json.loads(request.body_bytes)["prompt_cache_key"] == pseudonym


@st.composite
def _reads(draw):
    """A body holding an id, its pseudonym's neighbours and a key anywhere, cut anywhere."""
    parts = [SESSION, SESSION[:-1], KEY, KEY[:7], "data: ", "\n\n", "é", "0195"]
    body = "".join(draw(st.lists(st.sampled_from(parts)))).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=12)))
    reads = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    return [r for r in reads if r]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_reads())
def test_an_id_split_over_reads_is_replaced_as_in_one_read(reads):
    masking = Masking(pseudonymize=True)
    headers = [("session_id", SESSION), ("x-api-key", KEY)]
    _, recorded, _, _ = masking.request(1, "https://h/v1/responses", headers, b"")
    alias = dict(recorded)["session_id"]
    out = []
    for t, data in enumerate(reads):
        out += masking.chunk(1, t, data)
    held, _, count = masking.end(1, None)
    out += held
    assert [t for t, _ in out] == list(range(len(reads)))
    assert [len(d) for _, d in out] == [len(r) for r in reads]
    # as the body in one read: each id its pseudonym, each key masked and counted
    body = b"".join(reads)
    expected = body.replace(KEY.encode(), body_mask(len(KEY))).replace(
        SESSION.encode(), alias.encode()
    )
    assert b"".join(d for _, d in out) == expected
    assert count == body.count(KEY.encode())  # the keys counted, the ids not


def test_an_id_in_a_websocket_frame_is_replaced_as_in_the_handshake():
    """Codex's prompt_cache_key in each response.create: the session id its handshake sent."""
    masking = Masking(pseudonymize=True)
    shake = [("session-id", SESSION), ("authorization", f"Bearer {KEY}")]
    _, recorded, _, _ = masking.request(1, "wss://h/v1/responses", shake, b"")
    alias = dict(recorded)["session-id"]
    event = json.dumps({"type": "response.create", "prompt_cache_key": SESSION}).encode()
    cut = event.index(SESSION.encode()) + 10  # the id split over two frames of one message
    first, second = event[:cut], event[cut:]
    assert masking.message(1, "client", 1, False, 0, None, first) == []  # held
    frames = masking.message(1, "client", 0, True, 1, None, second)
    assert [f.t_ns for f in frames] == [0, 1] and [f.masked for f in frames] == [0, 0]
    payload = b"".join(f.payload for f in frames)
    assert json.loads(payload)["prompt_cache_key"] == alias and len(payload) == len(event)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_reads())
def test_an_id_split_over_frames_is_replaced_as_in_one_frame(frames):
    """A message's frames as a body's reads: each id replaced once, even where an id's
    prefix and its pseudonym's first byte spell the id again."""
    masking = Masking(pseudonymize=True)
    headers = [("session_id", SESSION), ("x-api-key", KEY)]
    _, recorded, _, _ = masking.request(1, "wss://h/v1/responses", headers, b"")
    alias = dict(recorded)["session_id"].encode()
    out = []
    for i, data in enumerate(frames):
        fin = i == len(frames) - 1
        ready = masking.message(1, "client", 0 if i else 1, fin, i, None, data)
        out += [(i, data)] if ready is None else [(f.t_ns, f.payload) for f in ready]
    out += [(f.t_ns, f.payload) for f in masking.end_messages(1)]
    assert [t for t, _ in out] == list(range(len(frames)))
    body = b"".join(frames)
    expected = body.replace(KEY.encode(), body_mask(len(KEY))).replace(SESSION.encode(), alias)
    assert b"".join(d for _, d in out) == expected


def test_an_id_is_never_replaced_twice_where_its_pseudonym_spells_it_again(monkeypatch):
    """The id's prefix, then the id: once the id is swapped, the prefix and the pseudonym's
    first byte spell the id again; a read held after it must not swap that one too."""
    key = next(
        bytes([i]) * 32
        for i in range(256)
        if pseudonym.pseudonym(bytes([i]) * 32, SESSION)[0] == SESSION[-1]
    )
    monkeypatch.setattr(pseudonym, "new_key", lambda: key)
    alias = pseudonym.pseudonym(key, SESSION).encode()
    body = SESSION[:-1].encode() + SESSION.encode() + KEY[:7].encode()  # its end held
    reads = [body, KEY[7:].encode()]
    expected = SESSION[:-1].encode() + alias + body_mask(len(KEY))
    masking = Masking(pseudonymize=True)
    masking.request(1, "https://h/v1/responses", [("session_id", SESSION), ("x-api-key", KEY)], b"")
    out = masking.chunk(1, 0, reads[0]) + masking.chunk(1, 1, reads[1]) + masking.end(1, None)[0]
    assert b"".join(d for _, d in out) == expected
    frames = Masking(pseudonymize=True)
    frames.request(1, "wss://h/v1/responses", [("session_id", SESSION), ("x-api-key", KEY)], b"")
    assert frames.message(1, "client", 1, False, 0, None, reads[0]) == []
    done = frames.message(1, "client", 0, True, 1, None, reads[1])
    assert b"".join(f.payload for f in done) == expected
