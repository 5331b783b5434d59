"""Each client's calls carry the thoughtSignature as that client keeps it: google-genai's
users (`parts`) and the adapters as the stream sent it, `drops-signature` none, so "What
each client builds" and the call table show the client whose next request is the
contract's `thought-signature-dropped`."""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from streamscope.analysis import analyze
from streamscope.analysis.text_report import describe_difference
from streamscope.cli import main

from .events import CLOSING, arg, call, chunk, opening, partial, run

ROOT = Path(__file__).resolve().parents[3]
SIG = "CtQBAVSoXO4="
SIG2 = "CtQBAVSoXO8="
URLSAFE = base64.urlsafe_b64encode(base64.b64decode(SIG)).decode().rstrip("=")  # same bytes


def _signatures(result, name):
    return [c.signature for c in result.strategies[name]]


def test_each_client_keeps_the_signature_its_part_came_with_but_drops_signature():
    events = [
        chunk(call("get_weather", {"city": "Paris"}, sig=SIG), call("get_time", {"tz": "UTC"})),
        chunk(opening("make", sig=SIG2)),  # (a streamed call: its opening part's)
        chunk(partial(arg("$.a", "1"))),
        chunk(CLOSING, finish="STOP"),
    ]
    result = run(events)
    assert [c.signature for c in result.tool_calls] == [SIG, None, SIG2]
    assert _signatures(result, "parts")[:2] == [SIG, None]
    assert _signatures(result, "needs-terminal") == [SIG, None, SIG2]
    assert _signatures(result, "chunk-index")[0] == SIG  # the first of the calls it merged
    assert _signatures(result, "drops-signature") == [None, None, None]
    assert not result.differs("needs-terminal")
    assert result.differs("drops-signature")
    said = describe_difference(result.tool_calls, result.strategies["drops-signature"])
    assert (
        said == f'call 1 signature none (robust "{SIG}"); call 3 signature none (robust "{SIG2}")'
    )


def test_a_signature_spelled_otherwise_is_the_same_signature():
    """base64url, unpadded: the bytes Gemini reads are the same; no client differs for it."""
    result = run([chunk(call("f", {}, sig=SIG)), chunk(call("g", {}, sig=SIG2), finish="STOP")])
    robust = result.tool_calls
    other = [
        dataclasses.replace(c, signature=URLSAFE if c.signature == SIG else c.signature)
        for c in robust
    ]
    assert describe_difference(robust, other) == ""
    assert [c.key() for c in other] == [c.key() for c in robust]
    other[1].signature = SIG  # other bytes
    assert describe_difference(robust, other) == f'call 2 signature "{SIG}" (robust "{SIG2}")'


def test_a_client_that_drops_it_is_the_one_the_contract_finds(tmp_path):
    path = str(ROOT / "recordings" / "gemini-signature-dropped.jsonl")
    analysis = analyze(path)
    (stream,) = analysis.streams
    (finding,) = [f for f in analysis.contract if f.kind == "thought-signature-dropped"]
    assert finding.stream == stream.exchange
    built = {c.name: c.signature for c in stream.strategies["drops-signature"]}
    robust = {c.name: c.signature for c in stream.tool_calls}
    # the call the next request sent back without its signature is the one it builds without
    assert '"get_weather"' in finding.message and robust["get_weather"] and not built["get_weather"]
    said = CliRunner().invoke(main, ["inspect", path]).output
    line = next(x for x in said.splitlines() if x.strip().startswith("drops-signature"))
    assert "differs: call 1 signature none (robust" in line
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", path]).output)
    strategies = doc["streams"][0]["strategies"]
    assert strategies["parts"]["tool_calls"][0]["thought_signature"] == robust["get_weather"]
    assert strategies["parts"]["differs"] is False
    assert "thought_signature" not in strategies["drops-signature"]["tool_calls"][0]
    assert strategies["drops-signature"]["differs"] is True
    # the shape stays the spec's: each strategy its tool_calls and differs, or error and frame
    assert all(
        set(s) in ({"tool_calls", "differs"}, {"error", "frame"}) for s in strategies.values()
    )


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("google.genai") is None, reason="google-genai")
def test_the_real_google_genai_keeps_the_signature_as_its_bytes(tmp_path):
    """A base64url signature the emulation declines: the real client runs, and holds the
    same bytes robust read, so `parts` builds what robust does."""
    events = [chunk(call("f", {"a": 1}, sig=URLSAFE), call("g", {})), chunk(finish="STOP")]
    body = tmp_path / "signed.sse"
    body.write_bytes(b"".join(b"data: " + orjson.dumps(e) + b"\r\n\r\n" for e in events))
    (stream,) = analyze(str(body)).streams
    assert [c.signature for c in stream.tool_calls] == [URLSAFE, None]
    assert [c.signature for c in stream.strategies["parts"]] == [SIG, None]  # re-spelled
    assert not stream.differs("parts") and stream.differs("drops-signature")
