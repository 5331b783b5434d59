"""Test cassettes (vcrpy and pytest-recording, YAML or JSON; go-vcr v1 and v2+) as
recorded exchanges.

A cassette holds `interactions`, each a request (`method`, vcrpy's `uri` or go-vcr's
`url`, `headers` as lists of values, `body`) and its response (vcrpy's `status.code`
or go-vcr's `code` / `status`, `headers`, vcrpy's `body.string` or go-vcr's `body`).
Each interaction a HAR would keep (inputs/har.py: an event stream, or a request a
dialect claims) is one exchange, read by the HAR reader's rules (its headers and URL
masked, its Content-Encoding undone unless the recorder stored the body decoded), so
the whole conversation reads as a recording's and its contract is checked across turns.

A body is text, bytes (YAML `!!binary`), or base64 (`base64_string`, as Ruby's VCR
writes it); pydantic-ai's cassettes keep a JSON body parsed (`parsed_body`): it is read
as that JSON written again, and noted. A cassette keeps no reads and no times: each body is one read, at the
request's time, and the source says so in a note.

A cassette is untrusted input: YAML is loaded with PyYAML's safe loader (no tag builds
an object), after a first pass over its events refuses nesting past `MAX_DEPTH` and
aliases that would expand it past `MAX_ALIASED` nodes or `MAX_ALIASED_CHARS` characters
(a billion-laughs file, a long string referenced thousands of times), in
bounded time and memory. A field of the wrong type is noted (or the interaction skipped
with a note naming it); a file that is no cassette is a one-line RecordingError.
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Iterator
from typing import Any

import orjson

from ..core import jsonio
from ..core.codings import decode_body
from ..recording.copies import readable
from ..recording.format import BOM, RecordingError
from ..text import cut, quote, visible
from .har import Har, _json_rpc, _Skip, _wanted, add, left_out, skip, unread
from .notes import CASSETTE_END as END_NOTE
from .notes import CASSETTE_TIMING as TIMING_NOTE

GENERAL_NOTES = (TIMING_NOTE, END_NOTE)
INSTALL = "pip install 'streamscope[cassettes]'"
MAX_DEPTH = 256  # nesting a cassette never needs (the C composer recurses)
MAX_ALIASED = 100_000  # nodes aliases may add to a YAML cassette (a bomb adds billions)
# characters of text they may add (PyYAML's dumper aliases an object met twice, such as
# a headers list; one long string referenced thousands of times is a bomb too)
MAX_ALIASED_CHARS = 16 * 2**20

_Json = dict[str, object]


def _error(path: str, what: str, line: int | None = None) -> RecordingError:
    where = f" line {line}:" if line is not None else ""
    return RecordingError(f"{path}:{where} {what}", path, line)


def read_cassette(path: str | os.PathLike[str], yaml_text: bool) -> Har:
    """The exchanges of a cassette; RecordingError (one line) when it is none.
    `yaml_text`: the file is YAML (else JSON)."""
    name = os.fspath(path)
    with open(readable(name), "rb") as f:
        raw = f.read()
    if raw.startswith(GZIP):
        raw = _gunzipped(name, raw)
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    doc = _yaml(name, raw) if yaml_text else _json(name, raw)
    interactions = doc.get("interactions") if isinstance(doc, dict) else None
    if not isinstance(interactions, list):
        raise _error(name, 'a cassette is a mapping with an "interactions" list')
    har = Har([], list(GENERAL_NOTES), general=GENERAL_NOTES)
    others = rpc = 0
    for i, interaction in enumerate(interactions):
        at = f"interactions[{i}]"
        try:
            entry = _entry(interaction, at, har.notes)
        except _Skip as why:
            skip(har, at, why)
            continue
        if _json_rpc(entry):
            rpc += 1
        elif not _wanted(entry):
            others += 1
        else:
            add(har, entry, at, 0, (), cut=False)
    left_out(har.notes, others, rpc, "interaction", "interactions")
    if not har.exchanges:
        said = unread(har, "interaction", "interactions", (PARSED_NOTE,))
        raise _error(name, f"the cassette holds no event stream or chat completion to read{said}")
    return har


GZIP = b"\x1f\x8b"
MAX_GUNZIPPED = 256 << 20  # a cassette (a test fixture) is far smaller: past it, a bomb


def _gunzipped(name: str, raw: bytes) -> bytes:
    """A gzip-compressed cassette (langchain keeps its partners' as .yaml.gz), decompressed
    as a compressed body is (every member, a bomb refused before it is built), to at most
    MAX_GUNZIPPED."""
    done = decode_body(["gzip"], raw, MAX_GUNZIPPED)
    failure = done.failure
    if failure is None:
        return done.data
    if failure.cut:
        raise _error(name, f"gzip-compressed, and cut short: its gzip data ends at byte {len(raw)}")
    raise _error(name, f"gzip-compressed, and {failure.reason}")


def _json(name: str, raw: bytes) -> object:
    try:
        return jsonio.loads(raw)
    except orjson.JSONDecodeError as e:
        raise _error(name, f"not valid JSON, so not a JSON cassette: {e.msg}", e.lineno) from None


def _yaml(name: str, raw: bytes) -> object:
    """The YAML document, loaded safely once its events show no bomb."""
    try:
        import yaml
    except ImportError:
        raise _error(name, f"a YAML cassette: reading it needs PyYAML ({INSTALL})") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_events(name, yaml.parse(raw, Loader=loader))
        docs = list(yaml.load_all(raw, Loader=loader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        what = _said(str(e.problem or e.context or "cannot be read"))
        raise _error(name, f"not a YAML cassette streamscope reads: {what}", line) from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as e:
        what = _said(str(e)) or type(e).__name__
        raise _error(name, f"not a YAML cassette streamscope reads: {what}") from None
    if len(docs) != 1:
        raise _error(name, f"a YAML cassette is one document, not {len(docs)}")
    return docs[0]


def _said(text: str) -> str:
    """A YAML error's words on one line, safe to print (a tag it quotes is the file's)."""
    return cut(visible(" ".join(text.split())), 200)


def _check_events(name: str, events: Iterator[Any]) -> None:
    """Refuse a document nested past MAX_DEPTH, or whose aliases would add more than
    MAX_ALIASED nodes or MAX_ALIASED_CHARS characters of scalars once expanded (counted
    as they come: a bomb stops early; one long string referenced many times is one too)."""
    import yaml

    sizes: dict[str, tuple[int, int]] = {}  # anchor -> nodes and characters, expanded
    stack: list[list[Any]] = []  # open collections: [anchor, nodes so far, characters]
    nodes = chars = 0  # what the aliases add
    for event in events:
        size = length = 0
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 1, 0])
            if len(stack) > MAX_DEPTH:
                what = f"nested more than {MAX_DEPTH} deep: refused"
                raise _error(name, what, event.start_mark.line + 1)
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size, length = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size, length = event.anchor, 1, len(event.value)
        elif isinstance(event, yaml.AliasEvent):
            anchor = None
            size, length = sizes.get(event.anchor, (1, 0))
            nodes, chars = nodes + size, chars + length
            if nodes > MAX_ALIASED or chars > MAX_ALIASED_CHARS:
                what = (
                    f"its aliases would expand it past {MAX_ALIASED:,} more nodes or "
                    f"{MAX_ALIASED_CHARS // 2**20} MiB more text (an alias bomb, such as "
                    "billion laughs): refused"
                )
                raise _error(name, what, event.start_mark.line + 1)
        else:
            continue
        if anchor is not None:
            sizes[anchor] = (size, length)
        if stack:
            stack[-1][1] += size
            stack[-1][2] += length


def _entry(interaction: object, at: str, notes: list[str]) -> _Json:
    """An interaction as the HAR entry (inputs/har.py) its reader reads."""
    if not isinstance(interaction, dict):
        raise _Skip(f"it is {quote(interaction, 40)}, not a mapping with a request and a response")
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise _Skip("it has no request or no response mapping")
    url = request.get("uri", request.get("url"))
    method = request.get("method")
    if not isinstance(method, str) or not isinstance(url, str):
        raise _Skip("its request has no method or URI")
    posted = _body_of(request, f"{at}.request", notes)
    body = _body_of(response, f"{at}.response", notes)
    if not body:
        raise _Skip("its response body is empty: nothing was recorded")
    return {
        "request": {
            "method": method,
            "url": url,
            "headers": _headers(request.get("headers"), f"{at}.request.headers", notes),
            "postData": _content(posted),
        },
        "response": {
            "status": _status(response, at),
            "headers": _headers(response.get("headers"), f"{at}.response.headers", notes),
            "content": _content(body),
        },
    }


def _content(data: bytes) -> _Json:
    """A body as a HAR content object (base64: every byte kept)."""
    return {"text": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


PARSED_NOTE = (
    "some bodies are kept parsed (parsed_body, as pydantic-ai's cassettes keep them): "
    "each is read as its JSON, not the bytes that were sent"
)


def _body_of(side: _Json, where: str, notes: list[str]) -> bytes:
    """A request's or response's body: `body`, else pydantic-ai's `parsed_body` (the body
    parsed, its bytes not kept: written again as JSON, and noted once)."""
    if side.get("body") is None and "parsed_body" in side:
        try:
            data = orjson.dumps(side["parsed_body"])
        except TypeError:  # a key that is no string, a number past 64 bits, a tag's type
            raise _Skip(f"{where}.parsed_body cannot be written as JSON") from None
        if PARSED_NOTE not in notes:
            notes.append(PARSED_NOTE)
        return data
    return _body(side.get("body"), f"{where}.body")


def _body(value: object, where: str) -> bytes:
    """A body's bytes: text, bytes (`!!binary`), vcrpy's `{string: ...}`, Ruby VCR's
    `{base64_string: ...}`; none is empty."""
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return value
    if isinstance(value, dict):
        if "string" in value:
            return _body(value["string"], f"{where}.string")
        b64 = value.get("base64_string")
        if isinstance(b64, str):
            try:
                return base64.b64decode("".join(b64.split()), validate=True)
            except ValueError:
                raise _Skip(f"{where}.base64_string is not valid base64") from None
    raise _Skip(f"{where} {quote(value, 40)} is not text or bytes")


def _status(response: _Json, at: str) -> int:
    """vcrpy's `status.code`, go-vcr's `code`, or the number `status` ("200 OK") begins."""
    status, code = response.get("status"), response.get("code")
    if isinstance(status, dict):
        code = status.get("code")
    elif code is None and isinstance(status, str) and status[:3].isdigit():
        code = int(status[:3])
    elif code is None:
        code = status
    if type(code) is not int or not 100 <= code <= 599:  # (as a recording's status is)
        where = f"{at}.response.status.code" if isinstance(status, dict) else f"{at}.response.code"
        raise _Skip(f"{where} {quote(code, 40)} is not a status code")
    return code


def _headers(value: object, where: str, notes: list[str]) -> list[_Json]:
    """A cassette's headers (name -> a list of values, or one) as a HAR's list; a value
    of bytes (`!!binary`, as vcrpy keeps botocore's) is read as UTF-8; what is not text
    is noted and left out."""
    if value is None:
        return []
    if not isinstance(value, dict):
        notes.append(f"{where} {quote(value, 40)} is not a mapping of headers: read as none")
        return []
    out: list[_Json] = []
    for name, values in value.items():
        listed = values if isinstance(values, list) else [values]
        for v in listed:
            if isinstance(v, bytes):
                with contextlib.suppress(UnicodeDecodeError):  # (noted below)
                    v = v.decode("utf-8")
            if isinstance(name, str) and isinstance(v, str):
                out.append({"name": name, "value": v})
            else:
                # (the value is not shown: it may be a credential)
                notes.append(f"{where} {quote(name, 40)}: a value that is not text, left out")
    return out
