"""Streams of every dialect whose fields hold values of any JSON type (issue 35 item 1).

A base is a valid recording of one dialect and framing (a bundled sample, or one made
from one: Gemini's JSON array, Claude on Bedrock's invoke stream). A mutation picks one
event (a frame of an HTTP stream, a message of a WebSocket session, or the request's
body) and one place in it (any key at any depth, any list element) and puts there a value
of another JSON type; the stream is written again in its own framing. Shared by
tests/test_any_type_fields.py (bounded) and hunts run by hand:
    python -m tests.anytype 3000 [SEED]
which prints each mutation that makes a face raise.
"""

from __future__ import annotations

import copy
import random
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from streamscope.core.frames import Frame
from streamscope.export.fixtures import FORMATS
from streamscope.framing import rewrite
from streamscope.inputs import ExchangeInfo, open_input
from streamscope.recording.format import RecordingError, text_or_b64

from .fuzzing import FACES, ROOT, _export_as, run_faces
from .hostile import dumps

RECORDINGS = ROOT / "recordings"

# every JSON type, and the shapes a reader is likeliest to trip on
VALUES: list[object] = [
    None,
    True,
    False,
    0,
    -1,
    2.5,
    1e308,
    10**30,
    -(2**63),
    "",
    "x",
    "\x1b]0;pwned\x07",
    "cut \ud83d",  # a lone surrogate (an emoji cut in two): JSON, as Python's json reads it
    "\x85\u202e",  # a C1 control and a bidi override, which JSON writers leave raw
    int("9" * 400),  # past a double: orjson refuses it, Python's json reads it
    [],
    ["x"],
    [1, [2, {"a": None}]],
    {},
    {"a": 1},
    {"type": {"b": [None]}},
]
DELETE = object()  # the key taken away


def _lines(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _dump(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _gemini_array(path: Path) -> bytes:
    """A Gemini recording's SSE stream as the JSON array `:streamGenerateContent` sends
    without `alt=sse`."""
    data = path.read_bytes()
    frames = {n: f for n, (_, f) in _frames(data).items()}
    lines = _lines(data)
    for line in lines:
        if line["type"] == "request":
            line["url"] = line["url"].replace("?alt=sse", "").replace("&alt=sse", "")
        if line["type"] == "response":
            line["headers"] = [
                ["content-type", "application/json"] if k.lower() == "content-type" else [k, v]
                for k, v in line["headers"]
            ]
    return _reframed(_dump(lines), "json-array", frames)


def _bedrock_invoke() -> bytes:
    from .bedrock_invoke import write_recording

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "invoke.jsonl"
        write_recording(str(path), sent_back={"city": "Paris"})
        return path.read_bytes()


def bases() -> dict[str, bytes]:
    """(name, recording) of each dialect and framing."""

    def sample(name: str) -> bytes:
        return (RECORDINGS / name).read_bytes()

    return {
        "chat": sample("openai.jsonl"),
        "chat-sse-body": sample("gemini-no-index.sse"),
        "anthropic": sample("anthropic-tool-use.jsonl"),
        "anthropic-bedrock-invoke": _bedrock_invoke(),
        "responses": sample("responses-interleaved.jsonl"),
        "responses-websocket": sample("codex-websocket.jsonl"),
        "gemini-sse": sample("gemini-streamed-args.jsonl"),
        "gemini-array": _gemini_array(RECORDINGS / "gemini-parallel-signature.jsonl"),
        "ollama": sample("ollama-two-calls.jsonl"),
        "ollama-body": sample("ollama-native-two-calls.ndjson"),
        "bedrock-converse": sample("bedrock-text-without-start.jsonl"),
        "realtime": sample("realtime-two-calls.jsonl"),
    }


# -- a stream's events, and writing them again ------------------------------------------


def _exchanges(data: bytes) -> list[tuple[ExchangeInfo, list[Frame]]]:
    """Each HTTP exchange's facts and frames (sessions and plain bodies left out)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "base.jsonl"
        path.write_bytes(data)
        with open_input(str(path), tolerant=True) as source:
            return [
                (info, list(source.exchange(info.exchange).frames()))
                for info in source.infos()
                if info.framing not in (None, "websocket")
            ]


def _frames(data: bytes) -> dict[int, tuple[str | None, list[Frame]]]:
    """Each HTTP exchange's framing and frames."""
    return {info.exchange: (info.framing, frames) for info, frames in _exchanges(data)}


def streams(data: bytes) -> list[tuple[str | None, list[object] | None, list[Frame]]]:
    """Each HTTP exchange's dialect (None: its events tell), request tools and frames."""
    return [(info.dialect, info.tools, frames) for info, frames in _exchanges(data)]


def _reframed(data: bytes, framing: str, changed: dict[int, list[Frame]] | None = None) -> bytes:
    """The recording with each exchange's chunks written anew in `framing` from its frames
    (`changed`: the frames of some exchanges replaced)."""
    frames = {n: f for n, (_, f) in _frames(data).items()} if changed is None else {}
    frames.update(changed or {})
    out: list[dict[str, Any]] = []
    for line in _lines(data):
        n = line.get("exchange")
        if line["type"] == "chunk" and n in frames:
            continue
        if line["type"] == "end" and n in frames:
            t = line.get("t_ns", 0)
            for raw, _ in rewrite(framing, frames[n], lambda: True):
                key, text = text_or_b64("data", raw)
                out.append({"type": "chunk", "exchange": n, "t_ns": t, key: text})
        out.append(line)
    return _dump(out)


def places(value: object, at: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    """The path of every key at every depth of `value`, and of every list element."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*at, k)
            yield from places(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*at, i)
            yield from places(v, (*at, i))


def _put(doc: Any, path: tuple[object, ...], value: object) -> Any:
    doc = copy.deepcopy(doc)
    holder = doc
    for key in path[:-1]:
        holder = holder[key]
    if value is DELETE:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return doc


class Base:
    """One base recording, read once: the events a mutation may change."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data
        self.is_recording = data.startswith(b'{"type":"header"')
        self.frames = _frames(data) if self.is_recording else {}
        # (what, where): ("frame", (exchange, i)), ("message", line), ("request", line),
        # ("line", line) of a plain NDJSON/SSE body
        self.targets: list[tuple[str, object, object]] = []  # (what, where, the JSON)
        if self.is_recording:
            for i, line in enumerate(_lines(data)):
                if line["type"] == "request" and isinstance(line.get("body"), str):
                    self._target("request", i, line["body"])
                elif line["type"] == "message" and isinstance(line.get("data"), str):
                    self._target("message", i, line["data"])
            for n, (_, frames) in self.frames.items():
                for i, f in enumerate(frames):
                    if isinstance(f.payload, (dict, list)):
                        self.targets.append(("frame", (n, i), f.payload))
        else:
            for i, line in enumerate(data.split(b"\n")):
                text = line.removeprefix(b"data:").strip()
                self._target("line", i, text)

    def _target(self, what: str, where: int, text: str | bytes) -> None:
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            return
        if isinstance(doc, (dict, list)):
            self.targets.append((what, where, doc))

    def mutated(self, target: int, place: int, value: object) -> tuple[bytes, str]:
        """The recording with the place numbered `place` (modulo their count) of target
        `target` holding `value`; and the mutation in words."""
        what, where, doc = self.targets[target % len(self.targets)]
        paths = list(places(doc))
        if not paths:
            return self.data, "nothing to mutate"
        path = paths[place % len(paths)]
        new = _put(doc, path, value)
        said = f"{self.name}: {what} {where} at {list(path)} = {'(deleted)' if value is DELETE else repr(value)[:60]}"
        text = dumps(new).decode()
        if what == "frame":
            n, i = where  # type: ignore[misc]
            framing, frames = self.frames[n]
            frames = list(frames)
            old = frames[i]
            frames[i] = Frame(old.number, text, new, old.time_ns, old.event, headers=old.headers)
            return _reframed(self.data, framing or "sse", {n: frames}), said
        if what == "line":
            lines = self.data.split(b"\n")
            head = b"data: " if lines[where].startswith(b"data:") else b""  # type: ignore[index]
            lines[where] = head + text.encode()  # type: ignore[index]
            return b"\n".join(lines), said
        lines = _lines(self.data)
        lines[where]["body" if what == "request" else "data"] = text  # type: ignore[index]
        return _dump(lines), said


def at(base: Base, what: str, test: str, path: tuple[object, ...], value: object) -> bytes:
    """The recording with `path` of the first `what` target ("frame", "message",
    "request", "line") whose JSON text holds `test` set to `value`."""
    for t, (kind, _, doc) in enumerate(base.targets):
        if kind != what or test not in orjson.dumps(doc).decode():
            continue
        paths = list(places(doc))
        if path in paths:
            return base.mutated(t, paths.index(path), value)[0]
    raise LookupError(f"{base.name}: no {what} holding {test!r} has {list(path)}")


# -- the faces --------------------------------------------------------------------------


def strict_and_scan(path: str) -> None:
    """What `inspect --strict` decides, and scan's rows (an internal error is a bug)."""
    from streamscope.analysis import analyze
    from streamscope.core.verdict import fails
    from streamscope.recording.format import RecordingError
    from streamscope.scan.rows import analyze_file

    try:
        a = analyze(path)
    except RecordingError:
        pass
    else:
        any(fails(x.severity, x.cut_by_client) for s in a.streams for x in s.anomalies)
        any(fails(f.severity) for f in a.contract)
    rows = analyze_file(path)
    assert rows.error is None or "internal error" not in rows.error, rows.error


def every_face(path: str, minimal: bool = True) -> None:
    """inspect (text, --json), export (every format; --minimal with `minimal`), serve,
    replay's model, --strict and scan's rows; anything but a clean refusal raises."""
    if minimal:
        run_faces(path)
    else:  # the same faces but the minimal export (its search reads the stream 1,000 times)
        for face, run in FACES.items():
            if face != "export":
                _refused(run, path, RecordingError)
        for fmt in FORMATS:
            _refused(_export_as, path, (RecordingError, ValueError), fmt)
    strict_and_scan(path)


def _refused(run: Any, path: str, refusals: Any, *more: object) -> None:
    try:
        run(path, *more)
    except refusals as e:
        assert "\n" not in str(e), f"an error of several lines: {e}"


def check(data: bytes, suffix: str = ".jsonl", minimal: bool = True) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"mutated{suffix}"
        path.write_bytes(data)
        every_face(str(path), minimal)


def suffix_of(name: str) -> str:
    return {"chat-sse-body": ".sse", "ollama-body": ".ndjson"}.get(name, ".jsonl")


def hunt(count: int, seed: int = 0, only: str | None = None) -> int:
    rng = random.Random(seed)
    all_bases = [Base(n, d) for n, d in bases().items() if only is None or n == only]
    seen: set[str] = set()
    crashes = 0
    for _ in range(count):
        base = rng.choice(all_bases)
        value = rng.choice([*VALUES, DELETE])
        data, said = base.mutated(rng.randrange(1 << 30), rng.randrange(1 << 30), value)
        crashes += not _tried(data, suffix_of(base.name), said, seen)
    return crashes


def _tried(data: bytes, suffix: str, said: str, seen: set[str], minimal: bool = True) -> bool:
    """Whether every face reads `data` cleanly; the first of each failure printed."""
    try:
        check(data, suffix, minimal)
        return True
    except Exception:
        tb = traceback.format_exc().strip().splitlines()
        where = next((t for t in reversed(tb) if "streamscope/" in t), "")
        if where + tb[-1][:80] not in seen:
            seen.add(where + tb[-1][:80])
            print(f"{said}\n    {where.strip()}\n    {tb[-1][:200]}", flush=True)
        return False


def distinct(base: Base, nth: int = 0) -> list[tuple[int, int, tuple[object, ...]]]:
    """(target, place, its path) of each place once per kind of event: the places of two
    events of one type at the same path (list positions aside) are the same case; the
    `nth` such event's (0: the first; -1: the last), where there are that many."""
    seen: dict[object, list[tuple[int, int, tuple[object, ...]]]] = {}
    for t, (what, _, doc) in enumerate(base.targets):
        kind = doc.get("type") if isinstance(doc, dict) else None
        for p, path in enumerate(places(doc)):
            key = (what, repr(kind), tuple(k if isinstance(k, str) else 0 for k in path))
            seen.setdefault(key, []).append((t, p, path))
    return [found[nth] for found in seen.values() if -len(found) <= nth < len(found)]


KINDS: list[object] = [None, True, 2.5, 10**30, "x", ["x"], {"a": 1}, DELETE]


def sweep(name: str, values: list[object] = KINDS, quick: bool = True, nth: int = 0) -> None:
    """Every distinct place of base `name` (`distinct`) with each kind of value, printing
    what raises."""
    base = Base(name, bases()[name])
    seen: set[str] = set()
    cases = distinct(base, nth)
    print(f"{name}: {len(cases)} places", flush=True)
    for t, p, _ in cases:
        for value in values:
            data, said = base.mutated(t, p, value)
            _tried(data, suffix_of(name), said, seen, minimal=not quick)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    only = sys.argv[3] if len(sys.argv) > 3 else None
    if n == 0:
        for name in only.split(",") if only else bases():
            sweep(name)
        sys.exit()
    print(f"{hunt(n, seed, only)} crashes in {n} mutations")
