"""The second hostile corpus: mutations aimed at what a file's fields mean, not its bytes.

HAR structure and value types, every recording field with the wrong type or out of range,
duplicated keys, response heads HTTP cannot send, encodings (UTF-8 BOM, UTF-16 LE/BE),
NULs, huge numbers, lone surrogates and very long lines. Shared by the bounded test
(tests/test_hostile_corpus.py) and longer hunts run by hand:
    python -m tests.hostile 2000 [SEED]
which keeps each file that crashes a face in tests/fuzz_cases/ (the regression cases).
tests/fuzzing.py's faces run each file, with the checks the first corpus's do not make:
no control character in the text report, a head that HTTP can send.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import sys

import orjson

# -- values ---------------------------------------------------------------------------

HUGE = [1e308, -1e308, 2**64 - 1, -(2**63), 2**63, 10**30, -1, 0]
TEXTS = [
    "",
    "a\x00b",
    "\x1b]0;pwned\x07",
    "a\r\nx-injected: 1",
    "naïve → ☃",
    "\ud800",  # a lone surrogate: written as a JSON escape
    "C:\\Users\\x",
]
WRONG = [None, True, [], [[]], {}, {"a": 1}, "2", 2.5, *HUGE, *TEXTS]
DATES = [
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59-23:59",
    "2026-11-30T10:00:00",  # naive, beside zoned ones
    "2026-11-30T10:00:00+14:00",
    "not a date",
    "1970-01-01T00:00:00Z",
]
STATUSES = [1, 99, 101, 204, 304, 1000, -1, 2**64 - 1, 599, 600]
HEADER_NAMES = ["x note", "x:note", "", "x\x00", "naïve", "x-note"]


def dumps(obj: object) -> bytes:
    """JSON that may hold lone surrogates (as escapes: orjson refuses to write them)."""
    try:
        return orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(obj).encode()  # ensure_ascii: every surrogate as \\udxxx


def _value(rng: random.Random, big: int) -> object:
    roll = rng.random()
    if roll < 0.05 and big:
        return "x" * big  # a very long line
    return rng.choice(WRONG)


# -- HAR ------------------------------------------------------------------------------

_HAR_FIELDS = [
    ("log", "version"),
    ("log", "entries"),
    ("log", "creator"),
    ("entry",),
    ("entry", "request"),
    ("entry", "response"),
    ("entry", "startedDateTime"),
    ("entry", "timings"),
    ("entry", "timings", "receive"),
    ("entry", "timings", "wait"),
    ("entry", "timings", "send"),
    ("entry", "request", "method"),
    ("entry", "request", "url"),
    ("entry", "request", "headers"),
    ("entry", "request", "postData"),
    ("entry", "request", "postData", "text"),
    ("entry", "request", "postData", "encoding"),
    ("entry", "response", "status"),
    ("entry", "response", "headers"),
    ("entry", "response", "content"),
    ("entry", "response", "content", "text"),
    ("entry", "response", "content", "encoding"),
    ("entry", "response", "content", "mimeType"),
]


def mutate_har(doc: dict, rng: random.Random, big: int = 0) -> dict:
    """One HAR field (of the log or of one entry) given a hostile value."""
    doc = copy.deepcopy(doc)
    log = doc.get("log") if isinstance(doc, dict) else None
    if not isinstance(log, dict):
        return doc
    entries = log.get("entries")
    path = rng.choice(_HAR_FIELDS)
    if not isinstance(entries, list) or not entries:
        path = path[:1] if path[0] == "log" else ("log", "version")
    if path[0] == "log":
        holder, key = log, path[1] if len(path) > 1 else "version"
    else:
        i = rng.randrange(len(entries))
        holder, key = entries, i
        for k in path[1:]:
            node = holder[key] if isinstance(holder, list) else holder.get(key)
            if not isinstance(node, dict):  # (absent, or given another type already)
                return doc
            holder, key = node, k
    value = _value(rng, big)
    if key == "startedDateTime" and rng.random() < 0.7:
        value = rng.choice(DATES)
        if value.endswith("00") and isinstance(entries[0], dict):  # naive and zoned in one file
            entries[0]["startedDateTime"] = "2026-11-30T09:00:00Z"
    elif key == "status" and rng.random() < 0.6:
        value = rng.choice(STATUSES)
    elif key in ("receive", "wait", "send") and rng.random() < 0.7:
        value = rng.choice(HUGE)
    elif key == "text" and rng.random() < 0.6:  # base64 said, text not base64 (or not ASCII)
        holder["encoding"] = "base64"
        value = rng.choice(["ééé", "not base64!", base64.b64encode(b"\xff\x00").decode() + "é"])
    elif key == "headers" and rng.random() < 0.7:
        value = [
            *(holder.get(key) if isinstance(holder.get(key), list) else []),
            {"name": rng.choice(HEADER_NAMES), "value": rng.choice(TEXTS)},
        ]
    holder[key] = value
    return doc


# -- recordings -----------------------------------------------------------------------

_FIELDS = {
    "header": ["created", "argv", "notes", "schema_version", "tool", "tool_version"],
    "request": ["exchange", "t_ns", "method", "url", "headers", "body"],
    "response": ["exchange", "t_ns", "status", "headers"],
    "chunk": ["exchange", "t_ns", "data"],
    "end": ["exchange", "t_ns", "reason", "error"],
}


def mutate_recording(data: bytes, rng: random.Random, big: int = 0) -> bytes:
    """One field of one line of a recording given a hostile value (or its key twice)."""
    from .fuzzing import pick_line

    picked = pick_line(data, rng)
    if picked is None or not isinstance(picked[2], dict):
        return data
    lines, i, d = picked
    kind = d.get("type")
    fields = [k for k in _FIELDS.get(kind, []) if k in d] or list(d) or ["type"]
    key = rng.choice(fields)
    roll = rng.random()
    if roll < 0.1 and "exchange" in d:  # the exchange given twice: the last one counts
        other = rng.choice([2, 0, 2**64 - 1])
        lines[i] = lines[i].replace(b'"exchange":', b'"exchange":%d,"exchange":' % other, 1)
        return b"\n".join(lines)
    if kind == "response" and roll < 0.4:  # a head HTTP cannot send again
        if rng.random() < 0.5:
            d["status"] = rng.choice(STATUSES)
        else:
            headers = d.get("headers") if isinstance(d.get("headers"), list) else []
            d["headers"] = [*headers, [rng.choice(HEADER_NAMES), rng.choice(TEXTS)]]
    elif kind == "chunk" and roll < 0.4 and isinstance(d.get("data"), str):
        d["data"] = _payload_value(d["data"], rng, big)
    elif key == "t_ns" and roll < 0.6:
        d[key] = rng.choice(HUGE)
    else:
        d[key] = _value(rng, big)
    lines[i] = dumps(d)
    return b"\n".join(lines)


def _payload_value(data: str, rng: random.Random, big: int) -> str:
    """An SSE chunk's JSON payload with one string value hostile (a lone surrogate, a NUL,
    an escape, a huge number, a very long text), written back as JSON."""
    start = data.find("{")
    try:
        payload = orjson.loads(data[start:].strip()) if start >= 0 else None
    except orjson.JSONDecodeError:
        return data
    if not isinstance(payload, dict):
        return data
    strings = list(_leaves(payload))
    if not strings:
        return data
    holder, key = rng.choice(strings)
    holder[key] = _value(rng, big) if rng.random() < 0.3 else rng.choice(TEXTS) + str(holder[key])
    return data[:start] + dumps(payload).decode() + "\n\n"


def _leaves(node: object, depth: int = 0):
    """(container, key) of every leaf of a JSON value (a few levels deep)."""
    if depth > 12:
        return
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for k, v in items:
        if isinstance(v, (dict, list)):
            yield from _leaves(v, depth + 1)
        else:
            yield node, k


# -- bytes ----------------------------------------------------------------------------


def encode(data: bytes, rng: random.Random) -> bytes:
    """The file as another tool may have written it: with a UTF-8 BOM, in UTF-16 LE or BE
    (with its BOM), or with NULs inserted."""
    roll = rng.random()
    if roll < 0.25:
        return b"\xef\xbb\xbf" + data
    if roll < 0.6:
        coding = rng.choice(["utf-16-le", "utf-16-be"])
        mark = b"\xff\xfe" if coding.endswith("le") else b"\xfe\xff"
        return mark + data.decode("utf-8", "surrogatepass").encode(coding, "surrogatepass")
    out = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        out.insert(rng.randrange(len(out) + 1), 0)
    return bytes(out)


def mutate(name: str, data: bytes, rng: random.Random, big: int = 0) -> bytes:
    """One or two field mutations of a base input, then maybe another encoding."""
    for _ in range(rng.randrange(1, 3)):
        if name.endswith(".har"):
            try:
                doc = orjson.loads(data)
            except orjson.JSONDecodeError:
                break
            data = dumps(mutate_har(doc, rng, big))
        elif name.endswith(".sse"):
            data = _payload_value(data.decode("utf-8", "replace"), rng, big).encode(
                "utf-8", "surrogatepass"
            )
        else:
            data = mutate_recording(data, rng, big)
    if rng.random() < 0.3:
        data = encode(data, rng)
    return data


def hunt(count: int, seed: int = 0, big: int = 10 << 20) -> int:
    from .fuzzing import hunt_with

    return hunt_with(lambda name, data, rng: mutate(name, data, rng, big), count, seed, "hostile")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    print(f"{hunt(n, seed)} crashes in {n} files")
