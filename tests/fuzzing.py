"""Mutations of the bundled inputs, and every command's core path over a file.

Shared by the fuzz test (bounded, in the suite) and by longer hunts run by hand:
    python -m tests.fuzzing 2000
which keeps each file that crashes a face in tests/fuzz_cases/ (the regression cases).
"""

from __future__ import annotations

import io
import os
import random
import re
import sys
import tempfile
import traceback
from pathlib import Path

import h11
import orjson

from streamscope.analysis import analyze
from streamscope.analysis.text_report import render
from streamscope.core import jsonio
from streamscope.core.report import dumps_json, report_json
from streamscope.export.fixtures import FORMATS, export
from streamscope.inputs import CHUNKS, open_input
from streamscope.playback import Library
from streamscope.playback.sessions import Play, Sessions
from streamscope.recording.format import RecordingError
from streamscope.tui.model import StreamModel

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (ROOT / "recordings").iterdir() if p.suffix in (".jsonl", ".sse"))
HARS = ["openai.jsonl", "buggy-agent-uuid.jsonl"]  # made into HAR files, text and base64 bodies


def bases() -> list[tuple[str, bytes]]:
    """(name, bytes) of every input to mutate: the samples, and HAR files made of two."""
    from .test_har import har_of_recording

    out = [(p.name, p.read_bytes()) for p in SAMPLES]
    out.append(("codex-session.jsonl", _session()))
    for name in HARS:
        for b64 in (False, True):
            doc = har_of_recording(str(ROOT / "recordings" / name), b64)
            out.append((f"{name[:-6]}{'-b64' if b64 else ''}.har", orjson.dumps(doc)))
    return out


def _session() -> bytes:
    """A recorded WebSocket session (Codex's two turns), until the samples hold one."""
    from .ws_session import codex_turns, write_session

    with tempfile.TemporaryDirectory() as folder:
        return write_session(Path(folder) / "s.jsonl", codex_turns()).read_bytes()


CASES = Path(__file__).resolve().parent / "fuzz_cases"
# Nesting depths: past orjson's writer (255), near Python's recursion limit (1000), past
# orjson's reader (1024).
DEPTHS = (300, 990, 1100)


# what no text report may hold: a control character (but a newline) or a lone surrogate
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _inspect(path: str) -> None:
    from streamscope.console import Console

    a = analyze(path)
    # as `inspect --json` writes it (orjson, Python's json past orjson's depth)
    written = dumps_json(
        report_json(a.source, a.format, a.streams, a.contract, a.stopped, None, a.notes)
    )
    if isinstance(written, bytes):
        written.decode("utf-8")  # UTF-8 a reader can take (no lone surrogate)
    out = io.StringIO()
    render(a, Console(file=out, width=120))  # as the CLI
    raw = RAW.search(out.getvalue())
    assert raw is None, f"the text report holds {raw.group()!r} raw"


def _export(path: str) -> None:
    for fmt in FORMATS:
        _export_as(path, fmt)
    _export_as(path, "sse", minimal=True)


def _export_as(path: str, fmt: str, minimal: bool = False) -> None:
    """One format; the refusals that are no defect taken as such: `session` of an HTTP
    stream, and a one-stream format of a session of several turns (then its first turn)."""
    try:
        export(path, fmt, minimal=minimal)
    except ValueError as e:
        if "choose it with --turn" in str(e):
            export(path, fmt, minimal=minimal, turn=1)
        elif "writes a WebSocket session" not in str(e):
            raise


STRANGER = orjson.dumps({"model": "x", "messages": [{"role": "user", "content": "?"}]})


def _serve(path: str) -> None:
    library = Library(path)
    try:
        for entry in library.entries:
            reads = [data for data, _ in entry.reads()]
            # the request as a client sends it again (a lone surrogate as its escape)
            library.select(jsonio.dumps(entry.request) if entry.request else b"{}")
            library.select(STRANGER, strict=True)  # --strict explains what differs
            if entry.refusal is None:  # (else a JSON error answers: a head of its own)
                sendable(entry.status, entry.headers, reads)
        for script in Sessions.of(library.sessions, library.notes).scripts:  # WebSocket
            play = Play(script, strict=True)
            for step in script.steps:  # each recorded message asked again, and a stranger
                play.choose("text", b'{"type": "response.create", "input": 5}')
                play.choose("binary", b"\x00")
                for out in step.answer:
                    script.payload(out)
            for out in script.greeting:
                script.payload(out)
    finally:
        library.close()


def sendable(status: int, headers: list[tuple[str, str]], reads: list[bytes]) -> None:
    """The head and body go out as HTTP/1.1 (h11, uvicorn's, raises if they cannot)."""
    server = h11.Connection(h11.SERVER)
    server.receive_data(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n\r\n")
    while not isinstance(server.next_event(), h11.EndOfMessage):
        pass
    head = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    server.send(h11.Response(status_code=status, headers=head))
    for data in reads:
        server.send(h11.Data(data=data))
    server.send(h11.EndOfMessage())


def _replay(path: str) -> None:
    with open_input(path, tolerant=True) as source:
        for info in source.infos():
            ex = source.exchange(info.exchange)
            model = StreamModel(  # as the replay app opens it: in the stream's dialect
                ex.reads,
                info.exchange,
                info.tools,
                info.response_format,
                told=ex.dialect(),
                chunk_log=source.kind == CHUNKS,
            )
            model.build()
            for n in {0, 1, model.total // 2, model.total}:
                state = model.at(n)
                if state.frame is not None:
                    model.raw(state.frame)
                    for e in state.events:
                        e.describe()


FACES = {"inspect": _inspect, "export": _export, "serve": _serve, "replay": _replay}


def run_faces(path: str) -> dict[str, str]:
    """Each face's outcome: "ok" or "RecordingError" (an export may also refuse with a
    ValueError, which the CLI says in one line); anything else propagates."""
    out = {}
    for name, face in FACES.items():
        refused = (RecordingError, ValueError) if name == "export" else RecordingError
        try:
            face(path)
            out[name] = "ok"
        except refused as e:
            assert "\n" not in str(e), f"{name}: an error of several lines: {e}"
            assert RAW.search(str(e)) is None, f"{name}: an error holding a raw control: {e!r}"
            out[name] = type(e).__name__
    return out


# -- mutations ---------------------------------------------------------------------


def _deep(value: object, rng: random.Random) -> object:
    for _ in range(rng.choice(DEPTHS)):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


_VALUES = [1, -1, 2.5, "2", "", None, True, [], [[]], {}, {"a": 1}, "\x1b]0;pwned\x07", 10**30]


def pick_line(data: bytes, rng: random.Random) -> tuple[list[bytes], int, object] | None:
    """The file's lines, the number of one JSON line picked at random, and that line
    parsed; None when there is none."""
    lines = data.split(b"\n")
    candidates = [i for i, line in enumerate(lines) if line.startswith(b"{")]
    if not candidates:
        return None
    i = rng.choice(candidates)
    try:
        return lines, i, orjson.loads(lines[i])
    except orjson.JSONDecodeError:
        return None


def mutate_value(data: bytes, rng: random.Random) -> bytes:
    """Replace one value of one JSON line (a line's field, or a field inside its payload)."""
    picked = pick_line(data, rng)
    if picked is None:
        return data
    lines, i, obj = picked
    # a path into the object, through the chunk's SSE payload when there is one
    holder, key = _pick(obj, rng)
    if holder is None:
        return data
    roll = rng.random()
    if roll < 0.15:
        new = _deep(holder[key], rng)
    elif roll < 0.25:
        depth = rng.choice(DEPTHS)
        new = "[" * depth + "1" + "]" * depth  # a deep JSON text inside a string
    else:
        new = rng.choice(_VALUES)
    holder[key] = new
    lines[i] = _encode(obj)
    return b"\n".join(lines)


def _encode(obj: object) -> bytes:
    """JSON of any depth (orjson stops at 255 levels when writing)."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        import json

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(20_000)  # only while writing the mutated file
        try:
            return json.dumps(obj).encode()
        finally:
            sys.setrecursionlimit(limit)


def _pick(obj: object, rng: random.Random) -> tuple[object, object]:
    """(container, key) of a random place in `obj` (descending into SSE data payloads)."""
    holder, key = None, None
    node = obj
    for _ in range(8):
        if isinstance(node, dict) and node:
            # a chunk's SSE payload, or a request's JSON body: mutate inside the text
            inner = next((k for k in ("data", "body") if isinstance(node.get(k), str)), None)
            if inner is not None and rng.random() < 0.6:
                text = node[inner]
                start = text.find("{")
                try:
                    payload = orjson.loads(text[start:].strip()) if start >= 0 else None
                except orjson.JSONDecodeError:
                    payload = None
                if isinstance(payload, dict):
                    h, k = _pick(payload, rng)
                    if h is not None:
                        h[k] = rng.choice([*_VALUES, _deep(1, rng)])
                        enc = _encode(payload).decode()
                        node[inner] = "data: " + enc + "\n\n" if inner == "data" else enc
                        return None, None
            holder, key = node, rng.choice(list(node))
        elif isinstance(node, list) and node:
            holder, key = node, rng.randrange(len(node))
        else:
            break
        node = holder[key]  # type: ignore[index]
        if rng.random() < 0.35:
            break
    return holder, key


def mutate(data: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    n = len(data)
    if roll < 0.15 and n:  # truncate
        return data[: rng.randrange(n)]
    if roll < 0.3 and n:  # splice: a slice copied elsewhere
        a = rng.randrange(n)
        b = min(n, a + rng.randrange(1, 400))
        at = rng.randrange(n)
        return data[:at] + data[a:b] + data[at:]
    if roll < 0.45 and n:  # flip bytes
        out = bytearray(data)
        for _ in range(rng.randrange(1, 6)):
            out[rng.randrange(n)] = rng.choice(
                [0, 0x1B, 0x80, 0xFF, 0x0A, 0x7B, 0x22, rng.randrange(256)]
            )
        return bytes(out)
    if roll < 0.5:  # a byte order mark, or a very long first line
        return b"\xef\xbb\xbf" + data if rng.random() < 0.5 else data
    return mutate_value(data, rng)


def hunt(count: int, seed: int = 0) -> int:
    """Mutate `count` files; keep every one that crashes a face. Returns the crashes."""

    def mutated(name: str, data: bytes, rng: random.Random) -> bytes:
        for _ in range(rng.randrange(1, 3)):
            data = mutate(data, rng)
        return data

    return hunt_with(mutated, count, seed)


def hunt_with(mutated, count: int, seed: int = 0, prefix: str = "crash") -> int:
    """Make `count` files with `mutated(name, data, rng)` from the bases; keep every one
    that crashes a face (as `{prefix}-{seed}-{i}`). Returns the crashes."""
    rng = random.Random(seed)
    CASES.mkdir(exist_ok=True)
    crashes = 0
    tmp = Path(tempfile.mkdtemp()) / "mutated"
    inputs = bases()
    for i in range(count):
        name, data = rng.choice(inputs)
        data = mutated(name, data, rng)
        tmp.write_bytes(data)
        try:
            run_faces(str(tmp))
        except Exception:
            crashes += 1
            kept = f"{prefix}-{seed}-{i}{os.path.splitext(name)[1]}"
            (CASES / kept).write_bytes(data)
            last = traceback.format_exc().strip().splitlines()[-1]
            print(f"{kept} ({name}): {last}", flush=True)
    tmp.unlink(missing_ok=True)
    tmp.parent.rmdir()
    return crashes


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.environ.setdefault("PYTHONHASHSEED", "0")
    print(f"{hunt(n, seed)} crashes in {n} files")
