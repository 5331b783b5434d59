"""A folder of many recordings for `scan`: the bundled samples (every dialect and input
kind) copied over and over with the provider host and model varied, deterministically.

    .venv/bin/python benchmarks/gen_scan.py DEST N
"""

from __future__ import annotations

import os
import re
import sys
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


def make_folder(dest: str, n: int) -> list[str]:
    """`n` files in `dest` (made if need be), in subfolders of 500, cycling the samples
    and the host/model variations."""
    originals = [(os.path.basename(p), Path(p).read_bytes()) for p in samples()]
    paths = []
    for i in range(n):
        name, data = originals[i % len(originals)]
        k = i // len(originals)
        host, model = HOSTS[k % len(HOSTS)], MODELS[(k // len(HOSTS)) % len(MODELS)]
        folder = os.path.join(dest, f"batch-{i // 500:03d}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{i:05d}-{name}")
        with open(path, "wb") as f:
            f.write(varied(data, host, model))
        paths.append(path)
    return paths


if __name__ == "__main__":
    make_folder(sys.argv[1], int(sys.argv[2]))
