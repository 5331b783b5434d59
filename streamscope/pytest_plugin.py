"""The pytest plugin (entry point `pytest11`): installing streamscope is enough to use it.

- `streamscope_playback(path, speed=0)`: an `openai.OpenAI` client answered from a
  recording (or HAR, SSE body, chunk log); `streamscope_async_playback` for AsyncOpenAI.
- `streamscope_gemini_playback(path, speed=0)`: a `google.genai.Client` answered the same
  way (its `.aio` too), for recordings of the Gemini API or Vertex AI.
- `--streamscope-record=DIR`: every test's openai, anthropic and Gemini traffic is
  recorded in-process to `DIR/<test id>-<hash>.jsonl` (a cassette per test), and the run ends
  with one line per recorded test saying what streamscope found in it.

That traffic is told from other HTTP traffic by the headers its clients send (each
provider's SDK headers and `User-Agent`, and the headers only a dialect's clients send:
streamscope/providers.py, `sdk_client`), and a provider's whose paths are its API's alone
by those paths, whatever client calls them (Gemini's methods).
Nothing heavy is imported until a fixture or the option is used: the plugin loads in
every pytest run of the environment. It sits beside `record/` and `playback/`, using both.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

# The fixtures' clients' origin; each provider's base URL is it and its `serve_path`.
ORIGIN = "http://streamscope.playback.invalid"
# What a cassette's readable part keeps: characters every file system takes as they are.
_UNSAFE = re.compile(r"[^A-Za-z0-9._\-\[\]]+")
_READABLE = 60


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamscope", "streamscope: record and play back LLM streams")
    group.addoption(
        "--streamscope-record",
        metavar="DIR",
        default=None,
        help="Record every test's openai, anthropic and Gemini traffic in-process to DIR/<test id>-<hash>.jsonl and "
        "print a one-line summary of anomalies per test at the end of the run.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RECORDED] = {}


_RECORDED = pytest.StashKey[dict[str, str]]()  # test id -> the cassette written


# -- playback ---------------------------------------------------------------------------


def _playback(make_client: Callable[..., Any], http_client: str) -> Iterator[Callable[..., Any]]:
    from .http import clients
    from .playback.library import playback_transport
    from .providers import OPENAI

    package = clients.load(clients.openai_package())
    transports = []

    def factory(path: str | os.PathLike[str], speed: float = 0.0, **options: Any) -> Any:
        transport = playback_transport(path, speed=speed, **options)
        transports.append(transport)
        return make_client(
            api_key="sk-streamscope-playback",
            base_url=ORIGIN + OPENAI.serve_path,
            max_retries=0,
            http_client=getattr(package, http_client)(transport=transport),
        )

    yield factory
    for transport in transports:
        transport.close()


@pytest.fixture
def streamscope_playback() -> Iterator[Callable[..., Any]]:
    """A factory: `streamscope_playback(path, speed=0)` -> an `openai.OpenAI` client whose
    requests are answered from the recording (options as `playback_transport`)."""
    import openai

    yield from _playback(openai.OpenAI, "Client")


@pytest.fixture
def streamscope_async_playback() -> Iterator[Callable[..., Any]]:
    """The same, giving an `openai.AsyncOpenAI` client."""
    import openai

    yield from _playback(openai.AsyncOpenAI, "AsyncClient")


@pytest.fixture
def streamscope_gemini_playback() -> Iterator[Callable[..., Any]]:
    """A factory: `streamscope_gemini_playback(path, speed=0)` -> a `google.genai.Client`
    (Gemini API; `vertexai=True` for a Vertex AI client) whose requests, and its `.aio`
    client's, are answered from the recording (options as `playback_transport`)."""
    from google import genai
    from google.genai import types

    from .playback.library import playback_transport
    from .providers import GOOGLE

    made: list[Any] = []

    def factory(
        path: str | os.PathLike[str], speed: float = 0.0, vertexai: bool = False, **options: Any
    ) -> Any:
        transport = playback_transport(path, speed=speed, **options)
        made.append(transport)
        # The transport goes to the clients google-genai makes itself (httpx2 or httpx,
        # as its release does; a transport of its own keeps aiohttp out of .aio too).
        http = types.HttpOptions(
            base_url=ORIGIN + GOOGLE.serve_path,
            client_args={"transport": transport},
            async_client_args={"transport": transport},
        )
        if vertexai:  # express mode: a key, no project or credentials to look up
            return genai.Client(vertexai=True, api_key="streamscope-playback", http_options=http)
        return genai.Client(api_key="streamscope-playback", http_options=http)

    yield factory
    for transport in made:
        transport.close()


# -- recording --------------------------------------------------------------------------


def cassette_name(nodeid: str) -> str:
    """A short, portable file name for a test id, the same on every run: a readable part
    (ASCII letters, digits, `._-[]`, at most 60 characters) then 12 hex digits of the
    id's SHA-256, so ids that differ only in characters the readable part drops (`a b`,
    `a?b`, `a_b`) or past its end never share a cassette:
    `tests/test_a.py::test_b[x]` -> `tests.test_a.py__test_b[x]-<hash>.jsonl`."""
    readable = _UNSAFE.sub("_", nodeid.replace("::", "__").replace("/", "."))
    readable = readable[:_READABLE].lstrip(".-") or "test"  # never hidden, never an option
    digest = hashlib.sha256(nodeid.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable}-{digest}.jsonl"


def legacy_cassette_name(nodeid: str) -> str:
    """The name a test's cassette had before names carried a hash (ids could share one):
    kept so cassettes recorded then are still found (cassette_path)."""
    name = re.sub(r"[^\w.\-\[\]=]+", "_", nodeid.replace("::", "__").replace("/", "."))
    return name[:200] + ".jsonl"


def cassette_path(folder: str | os.PathLike[str], nodeid: str) -> str:
    """Where a test's cassette is in `folder`: its name (cassette_name), or the name it
    had before the hash when only that file is there. FileNotFoundError naming both
    files when neither is."""
    path = os.path.join(folder, cassette_name(nodeid))
    if os.path.exists(path):
        return path
    legacy = os.path.join(folder, legacy_cassette_name(nodeid))
    if os.path.exists(legacy):
        return legacy
    raise FileNotFoundError(
        f"no cassette for {nodeid!r}: looked for {path} (and {legacy}, its name before "
        "streamscope named cassettes with a hash); record it with --streamscope-record"
    )


def _is_llm_client(request: Any) -> bool:
    """A provider's client's request (module docstring: the headers, the paths of a
    provider's own)."""
    from .providers import owns_path, sdk_client

    headers = {k.lower(): v for k, v in request.headers.items()}
    return sdk_client(headers) or owns_path(request.url.path)


class _Cassette:
    """One test's recording, opened at its first openai, anthropic or Gemini request."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.recorder: Any = None

    def get(self) -> Any:
        if self.recorder is None:
            from .record.transport import Recorder
            from .recording import RecordingWriter

            # (its folders 0700 when made here, the cassette 0600: the writer's rule)
            writer = RecordingWriter(self.path, argv=sys.argv, overwrite=True)
            self.recorder = Recorder(writer)
        return self.recorder

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.writer.close()


@contextmanager
def _recording(cassette: _Cassette) -> Iterator[None]:
    """Route every openai, anthropic and Gemini request through `cassette` while the test
    runs."""
    import importlib

    with ExitStack() as stack:
        for name in ("httpx2", "httpx"):
            try:
                package = importlib.import_module(name)
            except ImportError:
                continue
            stack.enter_context(_patched(package, cassette))
        yield


@contextmanager
def _patched(package: Any, cassette: _Cassette) -> Iterator[None]:
    sync_cls, async_cls = package.HTTPTransport, package.AsyncHTTPTransport
    send, asend = sync_cls.handle_request, async_cls.handle_async_request

    def handle_request(self: Any, request: Any) -> Any:
        if not _is_llm_client(request):
            return send(self, request)
        return cassette.get().send(request, lambda r: send(self, r))

    async def handle_async_request(self: Any, request: Any) -> Any:
        if not _is_llm_client(request):
            return await asend(self, request)
        return await cassette.get().asend(request, lambda r: asend(self, r))

    sync_cls.handle_request, async_cls.handle_async_request = (
        handle_request,
        handle_async_request,
    )
    try:
        yield
    finally:
        sync_cls.handle_request, async_cls.handle_async_request = send, asend


@pytest.fixture(autouse=True)
def _streamscope_record(request: pytest.FixtureRequest) -> Iterator[None]:
    folder = request.config.getoption("streamscope_record")
    if not folder:
        yield
        return
    nodeid = request.node.nodeid
    cassette = _Cassette(os.path.join(folder, cassette_name(nodeid)))
    try:
        with _recording(cassette):
            yield
    finally:
        cassette.close()
        if cassette.recorder is not None:
            request.config.stash[_RECORDED][nodeid] = cassette.path


def summary_line(nodeid: str, path: str) -> str:
    """What streamscope found in one test's cassette, as one line."""
    from collections import Counter

    from .analysis import analyze
    from .recording.format import RecordingError
    from .text import plural, times

    try:
        analysis = analyze(path)
    except RecordingError as e:
        return f"{nodeid}: the cassette cannot be read: {e}"
    kinds: Counter[str] = Counter()
    for stream in analysis.streams:
        for a in stream.anomalies:
            if a.severity != "info":
                kinds[f"{a.severity} {a.kind}"] += a.count
    kinds.update(f"contract {f.kind}" for f in analysis.contract if f.severity != "info")
    kinds.update("failed exchange" for _ in analysis.failures)
    found = ", ".join(times(k, n) for k, n in kinds.most_common()) or "no anomalies"
    streams = plural(len(analysis.streams), "stream")
    return f"{nodeid}: {streams}, {found} -> {path}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    recorded = config.stash.get(_RECORDED, {})
    if not recorded:
        return
    from .text import visible

    terminalreporter.section("streamscope recordings")
    for nodeid, path in recorded.items():
        terminalreporter.write_line(visible(summary_line(nodeid, path)))
