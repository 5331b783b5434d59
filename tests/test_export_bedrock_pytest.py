"""`export --format pytest` of Claude on Bedrock's invoke stream (the AWS event stream):
the module replays it as the user's client met it, through anthropic's AnthropicBedrock
on a MockTransport answering in the AWS event stream, and runs in a Python holding only
anthropic[bedrock] and pytest: green for a healthy stream, red where the SDK raises (an
exception message), its story saying so; in a fresh virtualenv too."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import uuid
from base64 import b64encode

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.framing.aws_eventstream import EventStreamDecoder, encode

from .bedrock_invoke import CHUNK_HEADERS, chunk, events_json, exception, write_recording
from .test_export import ROOT, only
from .test_export_bedrock import BODY

pytestmark = pytest.mark.slow  # subprocesses, the real SDK
SDK = "anthropic[bedrock]"
RAISES = "NOTE: the SDK raises on these frames"


def export(source, out, *extra: str) -> str:
    result = CliRunner().invoke(
        main, ["export", str(source), "--format", "pytest", "-o", str(out), "--force", *extra]
    )
    assert result.exit_code == 0, result.output
    return out.read_text()


@pytest.fixture
def healthy(tmp_path) -> str:
    path = str(tmp_path / "bedrock.jsonl")
    write_recording(path, reads=5)
    return path


def _healthy(module, *extra: str) -> None:
    path = str(module.parent / "bedrock.jsonl")
    write_recording(path, reads=5)
    export(path, module, *extra)


def _failing(module, *extra: str) -> None:
    """Events, then Bedrock's modelStreamErrorException."""
    path = str(module.parent / "failing.jsonl")
    write_recording(path, BODY, reads=5)
    export(path, module, *extra)


def _error(module) -> None:
    """`:message-type: error` (an `:error-code` and `:error-message`, no payload)."""
    path = str(module.parent / "error.jsonl")
    error = [
        (":error-code", 7, "InternalFailure"),
        (":error-message", 7, "the model went away"),
        (":message-type", 7, "error"),
    ]
    write_recording(path, b"".join(map(chunk, events_json()[:4])) + encode(error, b""))
    export(path, module)


def _body(module) -> None:
    """The failing stream's saved body, exported in its turn."""
    path = str(module.parent / "failing.jsonl")
    write_recording(path, BODY, reads=5)
    body = module.parent / "body.bin"
    result = CliRunner().invoke(main, ["export", path, "-o", str(body)])
    assert result.exit_code == 0 and body.read_bytes() == BODY
    export(body, module)


BATCH = {
    "healthy": _healthy,
    "healthy-minimal": lambda m: _healthy(m, "--minimal"),
    "failing": _failing,
    "failing-minimal": lambda m: _failing(m, "--minimal"),
    "error": _error,
    "body": _body,
}


def ran(together, key: str):
    """`key`'s module, run with the others by one pytest where only anthropic[bedrock]
    and pytest import."""
    return together.run("only-anthropic-bedrock", BATCH, *only(SDK))[key]


@pytest.mark.parametrize("key", ["healthy", "healthy-minimal"])
def test_a_healthy_invoke_stream_replays_green_through_anthropic_bedrock(together, key):
    done = ran(together, key)
    text = done.module.read_text()
    assert "anthropic.AnthropicBedrock(" in text and "anthropic.Anthropic(" not in text
    assert "/invoke-with-response-stream" in text and "NOTE" not in text
    assert "import streamscope" not in text and "from streamscope" not in text
    assert done.green, done.text


@pytest.mark.parametrize("key", ["failing", "failing-minimal"])
def test_an_exception_message_raises_in_the_sdk_and_the_story_says_so(together, key):
    done = ran(together, key)
    story = done.module.read_text().split('"""')[1]
    assert "provider-error" in story and RAISES in story
    assert "modelStreamErrorException" in story and "the test\nfails there" in story
    assert (done.passed, done.failed, done.errors) == (0, 1, 0), done.text
    assert "APIStatusError" in done.text and "modelStreamErrorException" in done.text


def test_an_error_message_raises_too(together):
    done = ran(together, "error")
    assert RAISES in done.module.read_text()
    assert (done.passed, done.failed, done.errors) == (
        0,
        1,
        0,
    ) and "InternalFailure" in done.text, done.text


def test_a_saved_body_is_replayed_through_the_same_client(together):
    done = ran(together, "body")
    text = done.module.read_text()
    assert "anthropic.AnthropicBedrock(" in text and RAISES in text
    assert (done.passed, done.failed, done.errors) == (0, 1, 0), done.text


def test_the_module_serves_the_messages_as_recorded(tmp_path):
    """The module's own encoder writes each message again (headers of every type as
    recorded, both CRCs right, each event base64 in its chunk): read back by streamscope's
    decoder and by botocore's, they are the recorded ones."""
    headers = [
        *CHUNK_HEADERS,
        ("flag", 0, True),
        ("off", 1, False),
        ("b", 2, -3),
        ("s", 3, 300),
        ("i", 4, -70000),
        ("l", 5, 2**40),
        ("blob", 6, b"\x00\xff"),
        ("t", 8, 1700000000000),
        ("id", 9, uuid.UUID(int=7)),
    ]
    bodies = [orjson.dumps({"bytes": b64encode(e).decode()}) for e in events_json()]
    body = b"".join(encode(headers, b) for b in bodies)
    body += exception("throttlingException", "slow down")
    path = str(tmp_path / "typed.jsonl")
    write_recording(path, body)
    module = tmp_path / "test_typed.py"
    export(path, module)
    scope: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), scope)
    written = b"".join(scope["_messages"]())
    mine, theirs = EventStreamDecoder().feed(written), EventStreamDecoder().feed(body)
    assert [f.invalid for f in mine] == [None] * len(theirs)
    assert [(f.event, f.data, f.headers) for f in mine] == [
        (f.event, f.data, f.headers) for f in theirs
    ]
    eventstream = pytest.importorskip("botocore.eventstream")
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(written)
    assert len(list(buffer)) == len(theirs)  # botocore checks both CRCs


def test_an_api_stream_keeps_the_api_client(tmp_path):
    """The fixture is the framing's: the same dialect over SSE replays through Anthropic."""
    module = tmp_path / "test_api.py"
    text = export(os.path.join(ROOT, "recordings", "anthropic-tool-use.jsonl"), module)
    assert "anthropic.Anthropic(" in text and "AnthropicBedrock" not in text


def _local_indexes() -> list[str] | None:
    """pip's options for the package indexes and folders of this machine's pip config that
    are on disk (file:// URLs, local folders): None when it names none."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout
    urls, links = [], []
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        values = shlex.split(value.strip().strip("'\""))
        if key.endswith(("index-url", "extra-index-url")):
            urls += [v for v in values if v.startswith("file://") and os.path.isdir(v[7:])]
        elif key.endswith("find-links"):
            links += [v for v in values if os.path.isdir(v.removeprefix("file://"))]
    links += [v for v in os.environ.get("PIP_FIND_LINKS", "").split() if os.path.isdir(v)]
    if not urls and not links:
        return None
    options = ["--index-url", urls[0]] if urls else ["--no-index"]
    for url in urls[1:]:
        options += ["--extra-index-url", url]
    for link in dict.fromkeys(links):
        options += ["--find-links", link]
    return options


def test_the_module_runs_green_in_a_fresh_virtualenv_of_anthropic_bedrock(healthy, tmp_path):
    """A virtualenv holding only anthropic[bedrock] and pytest (pip, offline: this
    machine's local indexes alone)."""
    options = _local_indexes()
    if options is None:
        pytest.skip("pip's config names no local package index to install from")
    venv = tmp_path / "venv"
    # without a pip of its own (ensurepip costs seconds): this pip installs into it
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--isolated"]
    installed = subprocess.run(
        # no bytecode up front: the run writes it for what it imports (seconds less)
        [*pip, "--no-compile", *options, SDK, "pytest"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    if installed.returncode != 0:
        pytest.skip(f"the local indexes cannot install {SDK}: {installed.stderr[-300:]}")
    module = tmp_path / "test_bedrock.py"
    export(healthy, module)
    done = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    # where it ran, streamscope is not to be had
    check = [python, "-c", "import importlib.util as u; print(u.find_spec('streamscope'))"]
    found = subprocess.run(check, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert found.stdout.strip() == "None"
