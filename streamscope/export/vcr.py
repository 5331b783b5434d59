"""`streamscope export --format vcr`: exchanges as a vcrpy / pytest-recording cassette.

The cassette is the YAML vcrpy writes (`version: 1`, `interactions`, each a request's
`method`, `uri`, `headers` as lists of values and `body`, and its response's `status`,
`headers` and `body.string`), so pytest-recording replays it to the real SDK. Which
exchanges: every HTTP exchange of the file, in order (the conversation a cassette is),
or one (`--exchange N`, `FILE#N`; `--frames` and `--minimal` write the stream export
picks, alone, so a test's first request is answered by it).

What it holds is what `--format recording` writes, through the same masking: the
credentials the request carried masked wherever they appear, and its secret headers
(Authorization, x-api-key, ...) left out, as vcrpy's `filter_headers` leaves them. Each
body is its bytes as written to the recording: text as a literal block (an SSE body
reads line by line), bytes that are no UTF-8 (a compressed body, its Content-Encoding
kept) as `!!binary`, as vcrpy stores them; a body YAML would not give back byte for byte
as text is written as bytes too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core import jsonio
from ..inputs import Source, open_input
from ..inputs.cassette import INSTALL
from ..recording.format import Chunk, End, Request, Response
from ..recording.mask import Masking
from ..recording.redact import is_secret_header
from . import fixtures
from .session import is_session

_Json = dict[str, object]
# a cassette's reason phrase, as vcrpy keeps it (http.client's); others: ""
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 429: "Too Many Requests"}


def cassette(
    path: str,
    exchange: int | None = None,
    frames: str | None = None,
    minimal: bool = False,
    keep_fields: bool = False,
) -> fixtures.Export:
    """The cassette of `path`: every HTTP exchange, or the one picked (see the module)."""
    if keep_fields and not minimal:
        raise ValueError("--keep-fields only applies with --minimal")
    try:
        import yaml  # noqa: F401  (the cassettes extra)
    except ImportError:
        raise ValueError(f"--format vcr writes YAML: it needs PyYAML ({INSTALL})") from None
    with open_input(path, check=True) as source:
        if not source.recorded:
            raise ValueError(
                "a saved body holds no request: a cassette needs its method and URI "
                "(export a recording of the exchange, or the HAR or recording it came from)"
            )
        whole = exchange is None and frames is None and not minimal
        interactions, frames_in, frames_out, masked = [], 0, 0, 0
        # an interaction (or HAR entry) the reader skipped is in no cassette: said
        notes = tuple(source.har.skipped) if whole and source.har is not None else ()
        if whole:
            numbers = [i.exchange for i in source.infos() if i.status is not None]
            masking = Masking()
            for n in numbers:
                ex = source.exchange(n)
                if is_session(ex):
                    raise _websocket(n, "--exchange N writes one HTTP exchange; ")
                lines = _exact(source, n, masking)
                interactions.append(_interaction(lines))
                masked += _masked_in(lines)
        else:
            number = fixtures._pick(source, exchange)
            assert number is not None  # (a recording's)
            if is_session(source.exchange(number)):
                raise _websocket(number, "")
            stream = fixtures._load(source, number, minimal)
            done = fixtures._export(stream, "recording", frames, minimal, keep_fields)
            lines = [jsonio.loads(line) for line in done.data.splitlines()][1:]  # (no header)
            interactions.append(_interaction(lines))
            masked, frames_in, frames_out = _masked_in(lines), done.frames_in, done.frames_out
            notes = done.notes  # (what the stream written could not keep)
    if not interactions:
        raise ValueError("it holds no exchange with a response: nothing for a cassette to replay")
    return fixtures.Export(_dump(interactions), frames_in, frames_out, masked, notes=notes)


def _websocket(number: int, hint: str) -> ValueError:
    return ValueError(
        f"exchange {number} is a WebSocket session, and vcrpy records no WebSockets: "
        f"{hint}--format recording, session or pytest writes the session"
    )


def _exact(source: Source, number: int, masking: Masking) -> list[_Json]:
    """Exchange `number` as received (a HAR's or a cassette's body still compressed, if it
    was), through the masking every recording's writer uses (what a HAR or a --no-redact
    recording holds in clear is not exported so)."""
    har = source.har
    if har is not None:  # (its exchange as read is decoded; as received, in the HAR)
        x = har.exchanges[number - 1]
        reads = [(data, x.request.t_ns + t) for data, t in x.reads]
        lines = fixtures._masked(masking, x.request, x.response, reads, x.end, x.secrets)
    else:
        ex = source.exchange(number)
        wire = [(data, t or 0) for data, t in map(ex.wire.read, range(len(ex.wire)))]
        end = ex.end if ex.end is not None else End(number, 0, "complete")
        lines = fixtures._masked(masking, ex.request, ex.response, wire, end)
    return [jsonio.loads(jsonio.dumps(line)) for line in lines]  # (as a recording reads back)


def _masked_in(lines: list[_Json]) -> int:
    return sum(int(line.get("masked", 0) or 0) for line in lines)  # type: ignore[call-overload]


def _interaction(lines: list[_Json]) -> _Json:
    """One exchange's recording lines as a vcrpy interaction."""
    request = next((Request.from_json(d) for d in lines if d["type"] == "request"), None)
    response = next((Response.from_json(d) for d in lines if d["type"] == "response"), None)
    if request is None or response is None:
        raise ValueError("an exchange with no request or no response cannot be replayed")
    body = b"".join(Chunk.from_json(d).data_bytes for d in lines if d["type"] == "chunk")
    sent = request.body_bytes
    # a body the recording keeps decoded goes without the coding it no longer has
    coded = ("content-encoding",) if request.decoded else ()
    asked = [(k, v) for k, v in request.headers if k.lower() not in coded]
    return {
        "request": {
            "body": _body(sent) if sent else None,
            "headers": _headers(_length(asked, len(sent)), drop_secret=True),
            "method": request.method,
            "uri": request.url,
        },
        "response": {
            "body": {"string": _body(body)},
            "headers": _headers(_length(response.headers, len(body))),
            "status": {"code": response.status, "message": _REASONS.get(response.status, "")},
        },
    }


def _length(headers: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    """A Content-Length as the body written has it: a minimal stream is shorter, a body
    rebuilt from pydantic-ai's `parsed_body` or masked is not the length sent, a decoded
    one not the length received."""
    return [(k, str(n) if k.lower() == "content-length" else v) for k, v in headers]


def _headers(pairs: list[tuple[str, str]], drop_secret: bool = False) -> dict[str, list[str]]:
    """Headers as vcrpy keeps them: each name's values in a list, in order; with
    `drop_secret`, those that carry a credential left out (vcrpy's filter_headers)."""
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        if not (drop_secret and is_secret_header(name)):
            out.setdefault(name, []).append(value)
    return out


def _body(data: bytes) -> str | bytes:
    """A body as vcrpy stores it: text where it is UTF-8, else its bytes (`!!binary`);
    `_dump` writes as bytes the text YAML would not give back whole."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


_DUMPER: type | None = None


def _dumper() -> type:
    """PyYAML's safe dumper (libyaml's, when PyYAML has it: a body of megabytes is
    written in a second, not a minute), writing text of several lines as a literal block."""
    global _DUMPER
    if _DUMPER is None:
        import yaml

        class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
            pass

        def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
            style = "|" if "\n" in value else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

        Dumper.add_representer(str, text)
        _DUMPER = Dumper
    return _DUMPER


def _bodies(interactions: list[Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Where each interaction's bodies are: (the mapping, its key)."""
    for interaction in interactions:
        yield interaction["request"], "body"
        yield interaction["response"]["body"], "string"


def _dump(interactions: list[_Json]) -> bytes:
    """The cassette's YAML, read back once (by the loader vcrpy would use) to check each
    text body comes back whole: one that does not is written again as its bytes."""
    import yaml

    doc = {"interactions": interactions, "version": 1}
    while True:
        out = yaml.dump(doc, Dumper=_dumper(), allow_unicode=True, width=1 << 20, sort_keys=False)
        back = yaml.load(out, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        redo = False
        for (mine, key), (theirs, _) in zip(
            _bodies(interactions), _bodies(back["interactions"]), strict=True
        ):
            text = mine[key]
            if isinstance(text, str) and theirs[key] != text:
                mine[key], redo = text.encode("utf-8"), True
        if not redo:
            return out.encode("utf-8")
