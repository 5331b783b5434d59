"""`streamscope export`: one stream as a test fixture (SSE body, chunk log, recording, pytest).

Without --minimal the SSE form is byte-exact: the reads as received, or the bytes of
frames A..B. With --minimal the stream is first shrunk (minimize.py) to the fewest frames
and fields on which the same warnings, errors and client divergences still hold.
"""

from __future__ import annotations

import datetime
import json
import os
import pprint
from dataclasses import dataclass

import orjson

from .. import __version__
from ..core.frames import INVALID, parse_payload
from ..core.sse import SseDecoder, plain_datas
from ..dialects.chat.engine import StreamEngine
from ..inputs import CHUNKS, Exchange, Source, open_input
from ..inputs.reads import Reads
from ..recording.format import Chunk, End, Header, RecordingError, Request, Response
from . import reference

FORMATS = ("sse", "chunks", "recording", "pytest")


@dataclass(slots=True)
class Export:
    data: bytes
    frames_in: int  # frames of the stream (or of the selection)
    frames_out: int  # frames in the fixture


@dataclass(slots=True)
class _Stream:
    source: Source
    exchange: Exchange
    datas: list[str]  # every frame's data
    # every frame's byte span in the body, and time: None with --minimal (it writes none)
    spans: list[tuple[int, int]] | None
    times: list[int | None] | None
    payloads: list[object] | None = None  # every frame's parsed data, kept for --minimal

    @property
    def fmt(self) -> str:
        return self.source.kind

    @property
    def reads(self) -> Reads:
        return self.exchange.reads


def _load(source: Source, exchange: int | None, payloads: bool = False) -> _Stream:
    if source.recorded:
        infos = source.infos()
        streams = [i.exchange for i in infos if i.stream and i.status is not None]
        if exchange is None:
            if not streams:
                raise RecordingError(f"{source.path}: no stream to export", source.path)
            exchange = streams[0]
        elif exchange not in streams:
            what = "is not a stream" if exchange in source.numbers() else "does not exist"
            raise RecordingError(
                f"{source.path}: exchange {exchange} {what} "
                f"(streams: {', '.join(map(str, streams)) or 'none'})",
                source.path,
            )
    ex = source.exchange(exchange or 1)
    if payloads:
        return _minimal_load(source, ex)
    datas, spans, times = [], [], []
    for frame in ex.frames():
        datas.append(frame.data)
        spans.append((frame.start, frame.end))
        times.append(frame.time_ns)
    return _Stream(source, ex, datas, spans, times)


def _minimal_load(source: Source, ex: Exchange) -> _Stream:
    """The frames' datas and payloads alone: --minimal writes no byte as received (no
    spans, no times). Most bodies are plain: split, not decoded line by line, and as a
    stream repeats its chunks, each distinct text parsed once, equal ones sharing it (the
    minimiser never changes a payload)."""
    reads = ex.reads
    if isinstance(reads.decoder(), SseDecoder):
        datas = plain_datas(_body(reads))
        if datas is not None:
            known: dict[str, object] = {}
            for data in datas:
                if data not in known:
                    known[data] = parse_payload(data)
            return _Stream(source, ex, datas, None, None, list(map(known.__getitem__, datas)))
    frames = list(reads.frames())
    return _Stream(source, ex, [f.data for f in frames], None, None, [f.payload for f in frames])


def parse_range(text: str | None, total: int) -> tuple[int, int]:
    """ "A-B", "A-" or "A" (1-based, inclusive) within 1..total."""
    if not text:
        return 1, total
    first, _, last = text.partition("-")
    try:
        a = int(first)
        b = int(last) if last else (total if "-" in text else a)
    except ValueError:
        raise ValueError(f"--frames takes A-B (like 3-9), got {text!r}") from None
    if not 1 <= a <= b <= total:
        raise ValueError(f"--frames {text}: the stream has frames 1-{total}")
    return a, b


def export(
    path: str,
    fmt: str = "sse",
    exchange: int | None = None,
    frames: str | None = None,
    minimal: bool = False,
    keep_fields: bool = False,
) -> Export:
    if keep_fields and not minimal:
        raise ValueError("--keep-fields only applies with --minimal")
    with open_input(path, check=True) as source:
        return _export(_load(source, exchange, minimal), fmt, frames, minimal, keep_fields)


def _export(
    stream: _Stream, fmt: str, frames: str | None, minimal: bool, keep_fields: bool
) -> Export:
    a, b = parse_range(frames, len(stream.datas))
    datas = stream.datas[a - 1 : b]
    tools = stream.exchange.info.tools
    if minimal:
        from .minimize import minimize

        # [DONE] goes too when nothing above info depends on it: a client ends at EOF as well
        datas = minimize(
            datas,
            tools,
            keep_fields=keep_fields,
            expect_done=stream.fmt != CHUNKS,
            payloads=stream.payloads[a - 1 : b] if stream.payloads is not None else None,
        )
    exact = not minimal
    if fmt == "sse":
        data = (
            _sse_exact(stream, a, b)
            if exact
            else b"".join(b"data: " + d.encode() + b"\n\n" for d in datas)
        )
    elif fmt == "chunks":
        data = b"".join(d.encode() + b"\n" for d in datas if parse_payload(d) is not INVALID)
    elif fmt == "recording":
        data = _recording(stream, datas, a, b, exact)
    elif fmt == "pytest":
        data = _pytest(stream, datas, a, b, minimal, tools).encode()
    else:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    return Export(data, b - a + 1, len(datas))


def _body(reads: Reads) -> bytes:
    """The body as received: every read, in order."""
    return b"".join(data for data, _ in reads.reads_from(0, len(reads)))


def _sse_exact(stream: _Stream, a: int, b: int) -> bytes:
    body = _body(stream.reads)
    assert stream.spans is not None  # loaded for an exact export
    if a == 1 and b == len(stream.datas):
        return body  # every byte as received, comments and all
    return body[stream.spans[a - 1][0] : stream.spans[b - 1][1]]


def _recording(stream: _Stream, datas: list[str], a: int, b: int, exact: bool) -> bytes:
    header, ex = stream.source.header, stream.exchange
    har = stream.source.har
    if header is not None:  # the same capture: keep its time (and keep exports reproducible)
        created = header.created
    elif har is not None and har.created is not None:  # a HAR: its first entry's start
        created = har.created
    else:
        mtime = datetime.datetime.fromtimestamp(
            os.path.getmtime(stream.source.path), datetime.timezone.utc
        )
        created = mtime.isoformat(timespec="microseconds").replace("+00:00", "Z")
    lines = [Header(created=created, argv=None).to_json()]
    t0 = 0
    if stream.source.recorded:
        if ex.request is not None:
            req = ex.request
            t0 = req.t_ns
            lines.append(
                Request(1, 0, req.method, req.url, req.headers, req.body, req.body_b64).to_json()
            )
        if ex.response is not None:
            resp = ex.response
            lines.append(Response(1, resp.t_ns - t0, resp.status, resp.headers).to_json())
    else:
        lines.append(Response(1, 0, 200, [("content-type", "text/event-stream")]).to_json())
    whole = exact and a == 1 and b == len(stream.datas)
    if whole and stream.source.recorded:
        for i in range(len(stream.reads)):
            data, t = stream.reads.read(i)
            lines.append(Chunk.of(1, t or 0, data).to_json())
    else:
        times: list[int | None] = [None] * len(datas)
        if exact:
            assert stream.times is not None  # loaded for an exact export
            times = stream.times[a - 1 : b]
        for data, t in zip(datas, times, strict=True):
            lines.append(Chunk.of(1, t or 0, b"data: " + data.encode() + b"\n\n").to_json())
    last = lines[-1].get("t_ns", 0)
    lines.append(End(1, last, "complete", None).to_json())
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


PYTEST = '''"""Regression fixture: exported by streamscope {version} from {source}{where}.

{story}
The stream is served through a MockTransport into a real openai.OpenAI client; the
test accumulates the chunks with `accumulate` (streamscope's reading, in a few lines)
and asserts the calls streamscope assembled. Swap `accumulate` for your client's own to
see whether it gets them right. Needs only openai and pytest.
"""

import importlib

import openai

# The HTTP package the installed openai builds its clients with: httpx2 since openai 3.57,
# httpx before. Nothing else is imported, so openai and pytest are all this needs.
_base = next(
    (
        c.__module__.partition(".")[0]
        for c in getattr(openai, "DefaultHttpxClient", object).__mro__[1:]
        if c.__module__.partition(".")[0] in ("httpx2", "httpx")
    ),
    "httpx",
)
http = importlib.import_module(_base)

FRAMES = {frames}

# What streamscope's robust reading assembles from these frames.
EXPECTED = {expected}


# -- swap this for your client's accumulator ----------------------------------------------
{reference}

# ------------------------------------------------------------------------------------------


def _client():
    body = "".join("data: " + frame + "\\n\\n" for frame in FRAMES).encode()

    def handler(request):
        return http.Response(200, headers={{"content-type": "text/event-stream"}}, content=body)

    return openai.OpenAI(
        api_key="sk-fixture",
        base_url="http://streamscope.invalid/v1",
        http_client=http.Client(transport=http.MockTransport(handler)),
    )


def test_the_calls_streamscope_assembled():
    stream = _client().chat.completions.create(
        model="fixture", messages=[{{"role": "user", "content": "replay"}}], stream=True
    )
    chunks = [chunk.to_dict() for chunk in stream]
    assert accumulate(chunks) == EXPECTED
'''


def _pytest(
    stream: _Stream, datas: list[str], a: int, b: int, minimal: bool, tools: list | None
) -> str:
    # What the SDK's stream hands the test: JSON chunks up to [DONE], no error events.
    served = []
    for d in datas:
        if d.startswith("[DONE]"):
            break
        payload = parse_payload(d)
        if isinstance(payload, dict) and not payload.get("error"):
            served.append(d)
    engine = StreamEngine(1, tools)
    from ..core.frames import Frame

    for n, d in enumerate(served, 1):
        engine.feed(Frame(n, d, parse_payload(d)))
    result = engine.finish(expect_done=False)
    expected = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in result.tool_calls]
    kinds = sorted({x.kind for x in result.anomalies if x.severity != "info"})
    story = "What it shows: " + (", ".join(kinds) if kinds else "no warning or error") + "."
    scope: dict = {}
    exec(reference.source(), scope)
    try:
        mine = scope["accumulate"]([json.loads(d) for d in served])
    except Exception:  # it raises on this stream's shapes: so would the exported test
        mine = None
    if mine != expected:  # never claim a green test that is not
        story += (
            "\nNOTE: the small `accumulate` below reads this stream differently from streamscope's"
            "\nrobust reading (see `streamscope inspect` on the source); the test fails until the"
            "\naccumulator you put in its place assembles EXPECTED."
        )
    recorded = stream.source.recorded
    where = f" (exchange {stream.exchange.number}" if recorded else " ("
    where += f"{', ' if recorded else ''}frames {a}-{b}{', minimised' if minimal else ''})"
    frames = "[\n" + "".join(f"    {d!r},\n" for d in served) + "]"
    too_deep = ValueError(
        "the assembled calls nest too deeply to be written as a Python literal; "
        "export this stream as --format sse, chunks or recording"
    )
    try:
        module = PYTEST.format(
            version=__version__,
            source=stream.source.path,
            where=where,
            story=story,
            frames=frames,
            expected=pprint.pformat(expected, width=96, sort_dicts=False),
            reference=reference.source(),
        )
        compile(module, "<exported pytest module>", "exec")  # Python's parser stops at ~200 levels
    except (RecursionError, SyntaxError, MemoryError):
        raise too_deep from None
    return module
