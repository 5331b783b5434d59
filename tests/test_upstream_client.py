"""The recorder's upstream client: chunked bodies decode the same however the reads fall,
and so is a stream's final event seen."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from streamscope.dialects import DEFAULT, speaker
from streamscope.dialects.anthropic.wire import MessageStop
from streamscope.dialects.base import Watch
from streamscope.dialects.chat.wire import DoneEvent as FinalEvent
from streamscope.dialects.gemini.wire import FinishReason
from streamscope.dialects.gemini.wire import method as gemini_method
from streamscope.dialects.gemini.wire import model as gemini_model
from streamscope.dialects.responses.wire import ResponseEnd
from streamscope.record.upstream import ChunkedDecoder, UpstreamError


def final_event(header_names: list[str], path: str = "") -> Watch:
    """What the recorder waits for on a request with these headers to `path`: its
    dialect told once from the request (else Chat Completions'), then asked."""
    return (speaker(path, b"", header_names) or DEFAULT).final_event(path)


def chunked(pieces: list[bytes], extension: bool = False) -> bytes:
    out = b""
    for p in pieces:
        out += f"{len(p):x}{';ext=1' if extension else ''}\r\n".encode() + p + b"\r\n"
    return out + b"0\r\nX-Trailer: 1\r\n\r\n"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=40), max_size=12),
    st.lists(st.integers(min_value=0, max_value=600), max_size=20),
    st.booleans(),
)
def test_any_read_split_decodes_to_the_body(pieces, cuts, extension):
    raw = chunked(pieces, extension)
    decoder, out, last = ChunkedDecoder(), b"", 0
    for cut in sorted({c % (len(raw) + 1) for c in cuts}) + [len(raw)]:
        out += decoder.feed(raw[last:cut])
        last = cut
    assert out == b"".join(pieces)
    assert decoder.done


# Pieces a fast path could mistake: data that looks like framing, zero sizes, junk.
_TRICKY = st.sampled_from(
    [b"\r\n", b"\r\n1f\r\n", b"\r\n0\r\n", b"0\r\n\r\n", b"5;x=1\r\n", b"zz\r\n", b"\r"]
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.binary(min_size=1, max_size=80), _TRICKY), min_size=1, max_size=4
        ).map(b"".join),
        min_size=3,
        max_size=40,
    ),
    st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
    st.binary(max_size=20),
    st.booleans(),
)
@example([b"a" * 100, b"x\r\n1f\r\n" + b"b" * 50, b"c" * 100], [], b"", True)
@example([b"a" * 100, b"b" * 100, b"c" * 100], [], b"0\r\n\r\n5\r\nextra\r\n", True)
@example([b"a" * 100, b"b" * 100, b"c" * 100], [], b"", False)
@example(
    [b"64\r\n" + b"a" * 100 + b"\r\n"] * 2
    + [b"0\r\n\r\n"]
    + [b"64\r\n" + b"b" * 100 + b"\r\n"] * 3,
    [],
    b"",
    False,
)
def test_the_fast_path_decodes_exactly_as_chunk_by_chunk(pieces, cuts, junk, framed):
    """Bodies of many chunks (the fast path's case), well framed or as raw junk, read in
    any split: the same body, error and end as the one-chunk-at-a-time loop."""
    raw = chunked(pieces) + junk if framed else b"".join(pieces) + junk
    results = []
    for fast in (True, False):
        decoder, out, last = ChunkedDecoder(fast=fast), b"", 0
        for cut in sorted({c % (len(raw) + 1) for c in cuts}) + [len(raw)]:
            out += decoder.feed(raw[last:cut])
            last = cut
        error = None if decoder.error is None else str(decoder.error)
        results.append((out, decoder.done, error))
    assert results[0] == results[1]
    if framed:
        assert results[0] == (b"".join(pieces), True, None)


def test_a_body_cut_short_is_not_done():
    decoder = ChunkedDecoder()
    decoder.feed(chunked([b"hello"])[:-8])
    assert not decoder.done


@pytest.mark.parametrize("raw", [b"zz\r\nabc\r\n", b"3\r\nabcXX", b"-1\r\nx", b"0x3\r\nabc"])
def test_malformed_framing_is_an_upstream_error(raw):
    decoder = ChunkedDecoder()
    body = decoder.feed(raw)
    assert isinstance(decoder.error, UpstreamError)
    assert body == (b"abc" if raw.startswith(b"3") else b"")  # what came before is kept
    assert decoder.feed(b"3\r\nabc\r\n") == b""  # nothing after it


@pytest.mark.parametrize(
    "reads, relayed",
    [
        ([b'data: {"a":1}\n\ndata: [DONE]\n\n'], True),
        ([b"data: {}\n\ndata: [DO", b"NE]\n\n"], True),  # split across two reads
        ([b"data: {}\n\nda", b"ta: [DONE]\r\n\r\n"], True),
        ([b'data: {"content":"say [DONE]\\n"}\n\n'], False),  # inside an event's JSON
        ([b"data: [DONE]"], False),  # the line is not finished yet
    ],
)
def test_the_final_event_is_seen_however_the_reads_fall(reads, relayed):
    final = FinalEvent()
    for data in reads:
        final.seen(data)
    assert final.relayed is relayed


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"[DONE]", b"D", b"[", b"]", b"DONE", b"[D", b"x" * 20, b"\n"])))
@example([b"D"] * 70 + [b"[DONE]"])  # past the D's it looks at one by one
@example([b"D"] * 64 + [b"[DONE]"])
@example([b"[DONE]"] + [b"D"] * 70)
def test_the_final_event_prefilter_is_the_substring_test(parts):
    # _may_end skips the substring search on reads with few D's: it must answer as it would
    from streamscope.dialects.chat.wire import _may_end

    data = b"".join(parts)
    assert _may_end(data) == (b"[DONE]" in data)


STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
DELTA = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"event: message_stop"}}\n\n'


@pytest.mark.parametrize(
    "reads, relayed",
    [
        ([DELTA * 3 + STOP], True),
        ([DELTA, STOP], True),
        ([DELTA + STOP[:11], STOP[11:]], True),  # the event line split across two reads
        ([DELTA + STOP[:20], STOP[20:]], True),  # its data line is the next read
        ([STOP.replace(b"\n", b"\r\n")], True),
        ([b"event:message_stop\n"], True),  # no space after the colon
        ([DELTA * 3], False),  # named inside an event's JSON
        ([b"event: message_stop"], False),  # the line is not finished yet
        ([b"event: message_start\n"], False),
        ([STOP.replace(b"event: ", b"")], False),  # only the data: no event line
    ],
)
def test_anthropic_final_event_is_seen_however_the_reads_fall(reads, relayed):
    final = MessageStop()
    for data in reads:
        final.seen(data)
    assert final.relayed is relayed


def test_each_request_waits_for_its_own_api_final_event():
    assert type(final_event(["Content-Type", "Anthropic-Version"])) is MessageStop
    assert type(final_event(["content-type", "authorization"])) is FinalEvent
    openai_final = final_event([])
    openai_final.seen(STOP)  # [DONE] only: an OpenAI stream does not end at message_stop
    assert not openai_final.relayed


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STOP) + 200), max_size=12))
def test_message_stop_is_seen_once_its_line_is_relayed(cuts):
    from .anthropic_stream import tool_use_events

    body = b"".join(tool_use_events())
    line_end = body.index(b"event: message_stop\n") + len(b"event: message_stop\n")
    final = MessageStop()
    edges = sorted({len(body) - c for c in cuts if 0 < c < len(body)} | {0, len(body)})
    for start, end in pairwise(edges):
        final.seen(body[start:end])
        assert final.relayed is (end >= line_end), (start, end)


# -- OpenAI Responses: relayed once the final event is whole (its line and its empty line)

COMPLETED = (
    b'event: response.completed\ndata: {"type":"response.completed","sequence_number":9,'
    b'"response":{"id":"resp_1","status":"completed","output":[]}}\n\n'
)
TEXT = (
    b"event: response.output_text.delta\ndata: "
    b'{"type":"response.output_text.delta","delta":"\\nevent: response.completed\\n\\n"}\n\n'
)
LINE = len(b"event: response.completed\n")


@pytest.mark.parametrize(
    "reads, relayed",
    [
        ([TEXT * 3 + COMPLETED], True),
        ([TEXT, COMPLETED], True),
        ([COMPLETED], True),  # the stream's first byte starts a line
        ([TEXT + COMPLETED[:11], COMPLETED[11:]], True),  # the event line split
        ([TEXT + b"\n", COMPLETED[1:]], False),  # only a line end: no line starts `vent:`
        ([TEXT + COMPLETED[:LINE], COMPLETED[LINE:]], True),  # its data is the next read
        ([TEXT + COMPLETED[:-1], COMPLETED[-1:]], True),  # its empty line, split
        ([TEXT + COMPLETED[: LINE + 50], COMPLETED[LINE + 50 : -1]], False),  # not whole yet
        ([TEXT + COMPLETED[:LINE]], False),  # the line alone: the response is still to come
        ([TEXT + COMPLETED.replace(b"\n", b"\r\n")], True),
        ([TEXT, COMPLETED.replace(b"\n", b"\r\n")[:-1], b"\n"], True),  # CRLF, \r | \n
        ([COMPLETED.replace(b"event: ", b"event:")], True),  # no space after the colon
        ([COMPLETED.replace(b"completed", b"incomplete")], True),
        ([COMPLETED.replace(b"completed", b"failed")], True),
        ([TEXT * 3], False),  # named inside an event's JSON
        ([COMPLETED.replace(b"response.completed", b"response.created")], False),
        ([COMPLETED.replace(b"response.", b"response.web_search_call.")], False),
        ([COMPLETED.replace(b"response.completed", b"response.mcp_call.failed")], False),
        ([COMPLETED.replace(b"event: response.completed\n", b"")], False),  # no event line
        ([COMPLETED + b"data: [DONE]\n\n"], True),  # a provider's extra end: still whole
        ([b"data: {}\nevent: response.completed\n\n"], True),  # the name after the data
    ],
)
def test_responses_final_event_is_seen_however_the_reads_fall(reads, relayed):
    final = ResponseEnd()
    for data in reads:
        final.seen(data)
    assert final.relayed is relayed


@pytest.mark.parametrize(
    "path, kind",
    [
        ("/v1/responses", ResponseEnd),
        ("/openai/responses/", ResponseEnd),  # Azure's, any prefix
        ("/v1/responses/resp_1", ResponseEnd),  # a stored response streamed again
        ("/v1/responses/resp_1/input_items", FinalEvent),
        ("/v1/chat/completions", FinalEvent),
        ("/responses-gateway/v1/chat/completions", FinalEvent),
    ],
)
def test_a_responses_request_waits_for_the_responses_final_event(path, kind):
    assert type(final_event(["content-type"], path)) is kind
    # the path tells the API where a dialect claims it; else an Anthropic client's header
    claimed = kind is ResponseEnd or path.endswith("/chat/completions")
    assert type(final_event(["anthropic-version"], path)) is (kind if claimed else MessageStop)
    chat = final_event([], "/v1/chat/completions")
    chat.seen(COMPLETED)  # [DONE] only: a chat stream does not end at response.completed
    assert not chat.relayed


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=1800), max_size=12),
    st.sampled_from(["completed", "incomplete", "failed"]),
    st.booleans(),
    st.sampled_from([b"", b": keep-alive\n\n", b"data: [DONE]\n\n"]),
)
@example([1345, 1330], "completed", False, b"")  # the final event line cut in two
@example([1360, 1359, 1], "completed", True, b"")  # its `\r\n` and the empty line cut
def test_the_responses_end_is_seen_once_the_final_event_is_whole(cuts, how, crlf, trailer):
    """Cut anywhere in the last events (the cuts count back from the end): never relayed
    before the final event's empty line, always once it is."""
    from .responses_stream import function_call_events

    if crlf:
        trailer = trailer.replace(b"\n", b"\r\n")
    body = b"".join(function_call_events(how))
    if crlf:
        body = body.replace(b"\n", b"\r\n")  # JSON holds no raw line end
    whole, body = len(body), body + trailer
    final = ResponseEnd()
    edges = sorted({len(body) - c for c in cuts if 0 < c < len(body)} | {0, len(body)})
    for start, end in pairwise(edges):
        final.seen(body[start:end])
        assert final.relayed is (end >= whole), (start, end)


# -- Gemini: no final event; relayed once the event that names finishReason is whole

GEMINI_TEXT = (
    b'data: {"candidates":[{"content":{"parts":[{"text":"say \\"finishReason\\""}]}}]}\r\n\r\n'
)
GEMINI_LAST = (
    b'data: {"candidates":[{"content":{"parts":[{"text":"."}]},"finishReason":"STOP"}],'
    b'"usageMetadata":{"totalTokenCount":9}}\r\n\r\n'
)
NAME_AT = GEMINI_LAST.index(b"finishReason")


@pytest.mark.parametrize(
    "reads, relayed",
    [
        ([GEMINI_TEXT * 3 + GEMINI_LAST], True),
        ([GEMINI_TEXT, GEMINI_LAST], True),
        ([GEMINI_LAST.replace(b"\r\n", b"\n")], True),  # LF lines
        ([GEMINI_TEXT + GEMINI_LAST[: NAME_AT + 3], GEMINI_LAST[NAME_AT + 3 :]], True),  # name cut
        ([GEMINI_TEXT + GEMINI_LAST[:-2], GEMINI_LAST[-2:]], True),  # the empty line cut
        ([GEMINI_TEXT + GEMINI_LAST[:-1], GEMINI_LAST[-1:]], True),
        ([GEMINI_TEXT + GEMINI_LAST[:-2]], False),  # the event is not whole yet
        ([GEMINI_TEXT * 3], False),  # named inside a text: escaped quotes
        ([GEMINI_LAST.replace(b"finishReason", b"finishMessage")], False),
        (
            [b'[{"candidates":[{"finishReason":"STOP"}]}]'],
            False,
        ),  # a JSON array: its end is the body's
    ],
)
def test_a_gemini_stream_ends_after_the_event_that_names_its_finish(reads, relayed):
    final = FinishReason()
    for data in reads:
        final.seen(data)
    assert final.relayed is relayed


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=900), max_size=12), st.booleans())
def test_the_gemini_end_is_seen_once_the_finishing_event_is_whole(cuts, crlf):
    """Cut anywhere in the last events (the cuts count back from the end): never relayed
    before the finishing event's empty line, always once it is."""
    from .gemini_stream import events_for

    vertex = {"toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": True}}}
    body = b"".join(events_for({} if crlf else vertex))
    final = FinishReason()
    edges = sorted({len(body) - c for c in cuts if 0 < c < len(body)} | {0, len(body)})
    for start, end in pairwise(edges):
        final.seen(body[start:end])
        assert final.relayed is (end == len(body)), (start, end)


@pytest.mark.parametrize(
    "path, method, kind",
    [
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            ":streamGenerateContent",
            FinishReason,
        ),
        (
            "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent",
            ":streamGenerateContent",
            FinishReason,
        ),
        # no stream: the whole body is the end
        ("/v1beta/models/gemini-2.5-flash:generateContent", ":generateContent", Watch),
        ("/v1beta/models/gemini-2.5-flash:countTokens", None, Watch),
        ("/v1beta/openai/chat/completions", None, FinalEvent),  # Gemini's OpenAI-compatible API
    ],
)
def test_a_gemini_request_waits_for_the_event_that_finishes(path, method, kind):
    assert gemini_method(path) == method
    assert type(final_event(["x-goog-api-key"], path)) is kind
    if method:
        assert gemini_model(path) == path.rpartition("/")[2].partition(":")[0]
    chat = final_event([], "/v1/chat/completions")
    chat.seen(GEMINI_LAST)  # [DONE] only: a chat stream does not end at a finishReason
    assert not chat.relayed
