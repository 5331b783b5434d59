"""A folder of many recordings for `scan`: the bundled samples (every dialect and input
kind) copied over and over with the provider host and model varied, deterministically.

    .venv/bin/python benchmarks/gen_scan.py DEST N [RUN_FRAMES]
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(HERE), "recordings")
HOSTS = ["gw-a.example.net", "gw-b.example.net", "proxy.example.org", None]  # None: as recorded
MODELS = ["model-small", "model-large", "model-edge", None]


def samples() -> list[str]:
    """The bundled sample files (not the folder's README)."""
    return sorted(
        os.path.join(SAMPLES, n)
        for n in os.listdir(SAMPLES)
        if n.endswith((".jsonl", ".sse")) and not n.startswith("streamscope-")
    )


def varied(data: bytes, host: str | None, model: str | None) -> bytes:
    """A recording with every request's host and model replaced (other inputs as they are)."""
    lines = data.split(b"\n")
    if not lines or b'"type":"header"' not in lines[0]:
        return data
    out = []
    for line in lines:
        if line.startswith(b'{"type":"request"'):
            d = orjson.loads(line)
            if host:
                d["url"] = re.sub(r"^(https?://)[^/]+", rf"\g<1>{host}", d["url"])
            if model:
                d["url"] = re.sub(r"/models/[^/:]+:", f"/models/{model}:", d["url"])
                body = d.get("body")
                if isinstance(body, str) and body.startswith("{"):
                    parsed = orjson.loads(body)
                    if "model" in parsed:
                        parsed["model"] = model
                        d["body"] = orjson.dumps(parsed).decode()
            line = orjson.dumps(d)
        out.append(line)
    return b"\n".join(out)


def runs(frames: int) -> list[tuple[str, bytes]]:
    """Agent runs longer than the samples, one per dialect: 3 exchanges of `frames`
    frames each (what a test's recording holds), written with the real writer."""
    from benchmarks.gen import (
        GEMINI_REQUEST,
        RESPONSES_REQUEST,
        anthropic_events,
        gemini_events,
        interleaved_events,
        write_recording,
    )

    chat = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "w"}]}
    kinds = [
        ("run-chat.jsonl", interleaved_events, "/v1/chat/completions", chat),
        ("run-anthropic.jsonl", anthropic_events, "/v1/messages", chat),
        ("run-responses.jsonl", responses_events_of, "/v1/responses", RESPONSES_REQUEST),
        (
            "run-gemini.jsonl",
            gemini_events,
            "/v1beta/models/bench-model:streamGenerateContent?alt=sse",
            GEMINI_REQUEST,
        ),
    ]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, events, path, request in kinds:
            file = os.path.join(tmp, name)
            url = "https://bench.example.com" + path
            write_recording(file, 3, frames, events(frames), url, request)
            out.append((name, Path(file).read_bytes()))
    return out


def responses_events_of(frames: int) -> list[bytes]:
    from benchmarks.gen import responses_events

    return responses_events(frames)


def make_folder(dest: str, n: int, run_frames: int = 0) -> list[str]:
    """`n` files in `dest` (made if need be), in subfolders of 500, cycling the samples
    and the host/model variations; with `run_frames`, every other file is a longer agent
    run (`runs`) instead."""
    originals = [(os.path.basename(p), Path(p).read_bytes()) for p in samples()]
    longer = runs(run_frames) if run_frames else []
    paths = []
    for i in range(n):
        if longer and i % 2:
            name, data = longer[(i // 2) % len(longer)]
            k = i // (2 * len(longer))
        else:
            j = i // 2 if longer else i
            name, data = originals[j % len(originals)]
            k = j // len(originals)
        host, model = HOSTS[k % len(HOSTS)], MODELS[(k // len(HOSTS)) % len(MODELS)]
        folder = os.path.join(dest, f"batch-{i // 500:03d}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{i:05d}-{name}")
        with open(path, "wb") as f:
            f.write(varied(data, host, model))
        paths.append(path)
    return paths


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    make_folder(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0)
