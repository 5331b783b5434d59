"""Small builders shared by the tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson

from streamscope.core.engine import StreamResult
from streamscope.core.frames import Frame, Truncation, parse_payload
from streamscope.dialects.chat.appendix_a import FINISH, chunk
from streamscope.dialects.chat.engine import StreamEngine


def frames_of(chunks: list) -> list[Frame]:
    """Frames from chunk dicts (or raw data strings)."""
    out = []
    for i, c in enumerate(chunks, 1):
        data = c if isinstance(c, str) else orjson.dumps(c).decode()
        out.append(Frame(i, data, parse_payload(data)))
    return out


def run(chunks: list, tools: list | None = None, done: bool = True, **end) -> StreamResult:
    """Analyse a stream of chunk dicts, with `data: [DONE]` at the end unless done=False."""
    engine = StreamEngine(1, tools)
    for frame in frames_of(chunks + (["[DONE]"] if done else [])):
        engine.feed(frame)
    truncation = end.pop("truncation", None)
    return engine.finish(truncation if isinstance(truncation, Truncation) else None, **end)


def kinds(result: StreamResult) -> set[str]:
    return {a.kind for a in result.anomalies}


def sse_body(chunks: list, done: bool = True) -> bytes:
    parts = [b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks]
    if done:
        parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def tool_def(name: str, strict: bool = False) -> dict:
    fn = {"name": name, "parameters": {"type": "object", "properties": {}}}
    if strict:
        fn["strict"] = True
    return {"type": "function", "function": fn}


def custom_delta(index: int, **fields) -> dict:
    """A tool-call delta with exactly the keys given (`custom=...` for a custom call)."""
    return {"index": index, **fields}


# A custom (freeform) call beside a function call, as openai-node's tests stream them: the
# opener carries `custom: {name, input: ""}`, continuations `custom: {input: fragment}`.
SQL = "SELECT name FROM users WHERE id = {"  # free text, not JSON: must stay as sent
WEATHER_ARGS = '{"city": "Paris"}'
CUSTOM_BESIDE_FUNCTION = [
    chunk(
        {
            "role": "assistant",
            "tool_calls": [
                custom_delta(0, id="call_c", type="custom", custom={"name": "run_sql", "input": ""})
            ],
        }
    ),
    chunk({"tool_calls": [custom_delta(0, custom={"input": SQL[:22]})]}),
    chunk({"tool_calls": [custom_delta(0, custom={"input": SQL[22:]})]}),
    chunk(
        {
            "tool_calls": [
                custom_delta(
                    1,
                    id="call_f",
                    type="function",
                    function={"name": "get_weather", "arguments": ""},
                )
            ]
        }
    ),
    chunk({"tool_calls": [custom_delta(1, function={"arguments": WEATHER_ARGS})]}),
    FINISH,
]


def chat_conversation(exchange: int, body: dict):
    """A Chat Completions request body as the contract reads it."""
    from streamscope.core.contract import Conversation
    from streamscope.dialects.chat.history import history

    return Conversation.of(exchange, history(body))


def chat_sample(path) -> bool:
    """A sample of recordings/ that speaks Chat Completions, as its first stream says
    (`gemini-no-index.sse` is Gemini's OpenAI-compatible endpoint, so Chat Completions;
    `ollama-no-ids.jsonl` is Ollama's)."""
    from streamscope.analysis import analyze

    streams = analyze(path).streams
    return bool(streams) and streams[0].dialect == "chat-completions"


def renumber(old: int, new: int):
    """A change to a recording's parsed lines: exchange `old` becomes `new`."""

    def change(lines: list[dict]) -> None:
        for line in lines:
            if line.get("exchange") == old:
                line["exchange"] = new

    return change


def passes(module) -> None:
    """An exported pytest module, run as a user runs it (its own pytest, in its folder),
    passes (with no plugin but pytest's own: it needs none)."""
    import os
    import subprocess
    import sys

    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        capture_output=True,
        text=True,
        cwd=module.parent,
        timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


def unsourced(report: dict) -> dict:
    """An `inspect --json` report without what names the file it was read from (its
    `source`, each finding's `link`): two files' reports of the same streams compare."""
    report.pop("source", None)
    for s in report.get("streams", []):
        for a in s.get("anomalies", []):
            a.pop("link", None)
    for f in report.get("contract", []):
        f.pop("link", None)
    return report


@contextlib.contextmanager
def serve_command(*paths: str) -> Iterator[tuple[str, list[str]]]:
    """`streamscope serve PATHS` as a user runs it, a child process on a free port:
    (the base URL it prints, the lines it says on stderr: there once the block is left
    and the child stopped)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "serve", *paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), said
    finally:
        proc.terminate()
        try:
            said += proc.communicate(timeout=20)[1].splitlines()
        finally:
            proc.kill()


def run_demo(
    cwd, sample: str, env: dict | None = None, *options: str
) -> subprocess.CompletedProcess:
    """`streamscope demo SAMPLE --no-replay [OPTIONS]` run in `cwd` (its recording lands
    in cwd/recordings), with `env` (default: this one)."""
    return subprocess.run(
        [sys.executable, "-m", "streamscope", "demo", sample, "--no-replay", *options],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env if env is not None else dict(os.environ),
    )


def anthropic_error_sse(folder) -> Path:
    """An Anthropic stream whose `event: error` message spans lines and holds a tab and
    an ESC (the SDK raises it: APIStatusError), as folder/error.sse."""
    start = {"type": "message", "role": "assistant", "content": [], "model": "m"}
    error = {"type": "overloaded_error", "message": "Overloaded\nretry\tlater\x1b[31m"}
    path = Path(folder) / "error.sse"
    path.write_bytes(
        b"event: message_start\ndata: "
        + orjson.dumps({"type": "message_start", "message": {"id": "msg_1", **start}})
        + b"\n\nevent: error\ndata: "
        + orjson.dumps({"type": "error", "error": error})
        + b"\n\n"
    )
    return path
